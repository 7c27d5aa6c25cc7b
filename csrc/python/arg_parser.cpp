#include "python/arg_parser.h"

#include <cstring>
#include "ops/internal.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {

PythonConstants g_constants;

namespace {

const char* type_label(PyObject* o) {
  if (o == Py_None) return "NoneType";
  if (is_tensor(o)) return "Tensor";
  return Py_TYPE(o)->tp_name;
}

bool is_zero_dim_tensor(PyObject* o) { return is_tensor(o) && unwrap(o).dim() == 0; }

bool is_generator(PyObject* o) { return PyObject_TypeCheck(o, &GeneratorType); }

bool accepts_int_list(PyObject* o, bool varargs) {
  if (varargs && is_int_like(o)) return true;
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!is_int_like(items[i])) return false;
  return true;
}

bool accepts_tensor_list(PyObject* o, bool items_optional) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!is_tensor(items[i]) && !(items_optional && items[i] == Py_None)) return false;
  return true;
}

bool accepts(const Param& p, PyObject* o, bool first) {
  if (o == Py_None) return p.optional;
  switch (p.type) {
    case PType::Tensor: return is_tensor(o);
    case PType::TensorOrNumber: return is_tensor(o) || is_scalar_like(o);
    case PType::TensorList: return accepts_tensor_list(o, false);
    case PType::OptionalTensorList: return accepts_tensor_list(o, true);
    case PType::Int: return is_int_like(o);
    case PType::IntList: return accepts_int_list(o, p.varargs && first);
    case PType::DimList: return accepts_int_list(o, true);
    case PType::Float: return PyFloat_Check(o) || is_int_like(o) || is_scalar_like(o);
    case PType::Bool: return PyBool_Check(o);
    case PType::Scalar: return is_scalar_like(o);
    case PType::DType: return as_dtype(o).has_value();
    case PType::Device:
      return PyUnicode_Check(o) || (PyLong_Check(o) && !PyBool_Check(o)) || (g_constants.device_type && PyObject_TypeCheck(o, (PyTypeObject*)g_constants.device_type));
    case PType::Generator: return is_generator(o);
    case PType::Layout: return o == g_constants.strided;
    case PType::MemoryFormat:
      return o == g_constants.contiguous_format || o == g_constants.preserve_format || o == g_constants.channels_last ||
             o == g_constants.channels_last_3d;
    case PType::String: return PyUnicode_Check(o);
  }
  return false;
}

const char* expected_label(const Param& p) {
  switch (p.type) {
    case PType::Tensor: return "Tensor";
    case PType::TensorOrNumber: return "Tensor";
    case PType::TensorList: return "tuple of Tensors";
    case PType::OptionalTensorList: return "tuple of Tensors or None";
    case PType::Int: return "int";
    case PType::IntList: return "tuple of ints";
    case PType::DimList: return "tuple of ints";
    case PType::Float: return "float";
    case PType::Bool: return "bool";
    case PType::Scalar: return "Number";
    case PType::DType: return "ember.dtype";
    case PType::Device: return "ember.device";
    case PType::Generator: return "ember.Generator";
    case PType::Layout: return "ember.layout";
    case PType::MemoryFormat: return "ember.memory_format";
    case PType::String: return "str";
  }
  return "?";
}

// The text of a str for a message; `fallback` when it is not valid UTF-8.
const char* utf8_or(PyObject* s, const char* fallback) {
  const char* text = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : nullptr;
  if (!text) PyErr_Clear();
  return text ? text : fallback;
}

bool name_is(PyObject* key, const char* name) {
  return PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, name) == 0;
}

// Matches one overload. On failure, writes the reason into *why when why is non-null.
bool try_match(const Signature& sig, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, Args& out,
               std::string* why) {
  const int np = sig.nparams;
  for (int i = 0; i < np; ++i) out.obj[i] = nullptr;
  out.varargs = nullptr;
  out.nvarargs = 0;
  out.varargs_param = -1;

  Py_ssize_t pos = 0;
  int npositional = 0;
  for (int i = 0; i < np; ++i) {
    const Param& p = sig.params[i];
    if (p.kwonly) break;
    ++npositional;
    if (pos >= nargs) continue;
    // int... : x.view(2, 3) passes the sizes as separate arguments
    if (p.varargs && pos == 0 && is_int_like(args[pos]) && (nargs > 1 || !accepts_int_list(args[pos], false))) {
      for (Py_ssize_t k = pos; k < nargs; ++k) {
        if (!is_int_like(args[k])) {
          if (why) *why = std::string(sig.name) + "(): argument '" + p.name + "' must be tuple of ints, but found element of type " + type_label(args[k]) + " at pos " + std::to_string(k - pos);
          return false;
        }
      }
      out.obj[i] = Py_None;  // placeholder: the list lives in varargs
      out.varargs = args + pos;
      out.nvarargs = nargs - pos;
      out.varargs_param = i;
      pos = nargs;
      continue;
    }
    if (!accepts(p, args[pos], pos == 0)) {
      if (why) *why = std::string(sig.name) + "(): argument '" + p.name + "' (position " + std::to_string(pos + 1) + ") must be " + expected_label(p) + ", not " + type_label(args[pos]);
      return false;
    }
    out.obj[i] = args[pos++];
  }
  if (pos < nargs) {
    if (why) *why = std::string(sig.name) + "() takes " + std::to_string(npositional) + " positional argument" + (npositional == 1 ? "" : "s") + " but " + std::to_string(nargs) + " were given";
    return false;
  }
  if (kwnames) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      PyObject* value = args[nargs + k];
      int found = -1;
      for (int i = 0; i < np; ++i)
        if (name_is(key, sig.params[i].name)) { found = i; break; }
      if (found < 0) {  // numpy's names that torch accepts too
        const char* alias = name_is(key, "axis") ? "dim" : name_is(key, "keepdims") ? "keepdim" : nullptr;
        for (int i = 0; alias && i < np; ++i)
          if (std::strcmp(sig.params[i].name, alias) == 0) { found = i; break; }
      }
      if (found < 0) {
        if (why) *why = std::string(sig.name) + "() got an unexpected keyword argument '" + utf8_or(key, "?") + "'";
        return false;
      }
      if (out.obj[found]) {
        if (why) *why = std::string(sig.name) + "() got multiple values for argument '" + sig.params[found].name + "'";
        return false;
      }
      const Param& p = sig.params[found];
      if (!accepts(p, value, false)) {
        if (why) *why = std::string(sig.name) + "(): argument '" + p.name + "' must be " + expected_label(p) + ", not " + type_label(value);
        return false;
      }
      out.obj[found] = value;
    }
  }
  for (int i = 0; i < np; ++i) {
    if (!out.obj[i] && !sig.params[i].has_default) {
      if (why) *why = std::string(sig.name) + "() missing 1 required positional argument: \"" + sig.params[i].name + "\"";
      return false;
    }
  }
  return true;
}

std::string got_text(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  std::string s = "(";
  for (Py_ssize_t i = 0; i < nargs; ++i) s += std::string(i ? ", " : "") + type_label(args[i]);
  if (kwnames) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
      s += std::string(nargs + k ? ", " : "") + utf8_or(PyTuple_GET_ITEM(kwnames, k), "?") + "=" +
           type_label(args[nargs + k]);
    }
  }
  return s + ")";
}

}  // namespace

int parse_args(const Signature* sigs, int nsigs, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               Args& out) {
  for (int i = 0; i < nsigs; ++i)
    if (try_match(sigs[i], args, nargs, kwnames, out, nullptr)) return i;
  std::string msg;
  if (nsigs == 1) {
    try_match(sigs[0], args, nargs, kwnames, out, &msg);
  } else {
    msg = std::string(sigs[0].name) + "() received an invalid combination of arguments - got " +
          got_text(args, nargs, kwnames) + ", but expected one of:";
    for (int i = 0; i < nsigs; ++i) msg += std::string("\n * ") + sigs[i].text;
  }
  PyErr_SetString(PyExc_TypeError, msg.c_str());
  return -1;
}

// ---- layouts: Note [Sparse tensors are routed before parsing] ----

namespace {

PyObject* g_layout_ops = nullptr;         // dict: Python name -> callable (owned for the process)
PyTypeObject* g_layout_type = nullptr;  // the class of sparse tensors (ember._sparse.SparseTensor)

bool is_layout_tensor(PyObject* o) { return Py_TYPE(o) == g_layout_type; }

bool holds_layout_tensor(PyObject* o) {
  if (is_layout_tensor(o)) return true;
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (is_layout_tensor(items[i])) return true;
  return false;
}

// torch's operator name: x.__radd__ and x.__iadd__ report 'aten::add'.
std::string aten_name(const char* name) {
  static const char* const binary[] = {"add", "sub", "mul", "truediv", "floordiv", "matmul", "pow", "mod",
                                       "and", "or", "xor", "lshift", "rshift"};
  std::string s(name);
  if (s.size() > 4 && s.compare(0, 2, "__") == 0 && s.compare(s.size() - 2, 2, "__") == 0) {
    s = s.substr(2, s.size() - 4);
    for (const char* b : binary)
      if ((s[0] == 'r' || s[0] == 'i') && s.compare(1, std::string::npos, b) == 0) s = b;
    if (s == "truediv") s = "div";
  }
  return "aten::" + s;
}

}  // namespace

bool has_layout_operand(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (!g_layout_type) return false;  // no sparse tensor can exist yet
  if (self && is_layout_tensor(self)) return true;
  const Py_ssize_t n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (holds_layout_tensor(args[i])) return true;
  return false;
}

void set_layout_ops(PyTypeObject* type, PyObject* table) {
  Py_INCREF(type);
  Py_INCREF(table);
  Py_XDECREF(g_layout_ops);
  Py_XDECREF(reinterpret_cast<PyObject*>(g_layout_type));
  g_layout_ops = table;
  g_layout_type = type;
}

PyObject* route_layout(const char* name, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  PyObject* fn = g_layout_ops ? PyDict_GetItemString(g_layout_ops, name) : nullptr;  // borrowed
  if (!fn && std::strncmp(name, "__", 2) == 0) {
    // An operator whose other operand is no tensor or number (s == None) lets Python try
    // the reflected one, as a dense tensor's does.
    for (Py_ssize_t i = 0; i < nargs; ++i)
      if (!is_tensor(args[i]) && !is_scalar_like(args[i])) Py_RETURN_NOTIMPLEMENTED;
  }
  if (!fn) {
    const std::string op = aten_name(name);
    PyErr_Format(PyExc_NotImplementedError,
                 "Could not run '%s' with arguments from the 'SparseCPU' backend. This could be because the "
                 "operator doesn't exist for this backend, or was omitted during the selective/custom build "
                 "process (if using custom build).",
                 op.c_str());
    return nullptr;
  }
  // A method passes its object first; a function's self is the module.
  const bool method = self && is_tensor(self);
  const Py_ssize_t npos = nargs + (method ? 1 : 0);
  Owned pos(PyTuple_New(npos));
  if (!pos) return nullptr;
  Py_ssize_t k = 0;
  if (method) {
    Py_INCREF(self);
    PyTuple_SET_ITEM(pos.get(), k++, self);
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(pos.get(), k++, args[i]);
  }
  Owned kw(kwnames ? PyDict_New() : nullptr);
  if (kwnames) {
    if (!kw) return nullptr;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i)
      if (PyDict_SetItem(kw.get(), PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) return nullptr;
  }
  return PyObject_Call(fn, pos.get(), kw.get());
}

// ---- conversions ----

namespace {
// numpy's ndarray has __index__ and __float__ whatever its shape and dtype. As in torch,
// an array is never a number, but a 0-d array of integers is an int (a size, an index).
enum class ArrayKind { NotArray, IntScalar, Other };
ArrayKind array_kind(PyObject* o) {
  if (!PySequence_Check(o)) return ArrayKind::NotArray;  // numpy's scalars are no sequences
  Owned ndim(PyObject_GetAttrString(o, "ndim"));
  Owned dtype(ndim ? PyObject_GetAttrString(o, "dtype") : nullptr);
  Owned kind(dtype ? PyObject_GetAttrString(dtype.get(), "kind") : nullptr);
  if (!kind) {
    PyErr_Clear();
    return ArrayKind::NotArray;
  }
  const bool zero_dim = PyLong_Check(ndim.get()) && PyLong_AsLong(ndim.get()) == 0;
  const bool integral = PyUnicode_Check(kind.get()) && (PyUnicode_CompareWithASCIIString(kind.get(), "i") == 0 ||
                                                       PyUnicode_CompareWithASCIIString(kind.get(), "u") == 0);
  PyErr_Clear();
  return zero_dim && integral ? ArrayKind::IntScalar : ArrayKind::Other;
}
}  // namespace

bool is_int_like(PyObject* o) {
  if (PyLong_Check(o)) return !PyBool_Check(o);
  if (is_tensor(o)) return unwrap(o).dim() == 0 && is_integral(unwrap(o).dtype(), false);
  if (PyFloat_Check(o)) return false;
  return Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_index && !PyBool_Check(o) &&
         array_kind(o) != ArrayKind::Other;
}

int64_t unpack_int(PyObject* o) {
  if (is_tensor(o)) return ops::item(unwrap(o)).to_int64();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) fail(ErrorKind::Value, "Overflow when unpacking long long");
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    Owned idx(PyNumber_Index(o));
    if (!idx) throw PythonError{};
    v = PyLong_AsLongLongAndOverflow(idx.get(), &overflow);
    if (overflow) fail(ErrorKind::Value, "Overflow when unpacking long long");
    if (v == -1 && PyErr_Occurred()) throw PythonError{};
  }
  return v;
}

double unpack_double(PyObject* o) {
  if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);
  if (is_tensor(o)) return ops::item(unwrap(o)).to_double();
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) throw PythonError{};
  return v;
}

bool is_scalar_like(PyObject* o) {
  if (PyFloat_Check(o) || PyLong_Check(o) || PyComplex_Check(o)) return true;
  if (is_tensor(o)) return unwrap(o).numel() == 1 && unwrap(o).dim() == 0;
  PyNumberMethods* nb = Py_TYPE(o)->tp_as_number;
  return nb && (nb->nb_float || nb->nb_index) && !PyUnicode_Check(o) &&
         array_kind(o) == ArrayKind::NotArray;
}

Scalar unpack_scalar(PyObject* o) {
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyComplex_Check(o)) return Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow > 0 && PyLong_AsUnsignedLongLong(o) != static_cast<unsigned long long>(-1)) {
      fail(ErrorKind::Runtime, "value cannot be converted to type int64 without overflow");
    }
    PyErr_Clear();
    if (overflow) fail(ErrorKind::Overflow, "int too big to convert");
    return Scalar(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (is_tensor(o)) return ops::item(unwrap(o));
  // numpy's complex scalars (which convert to float with only a warning) through __complex__
  if (PyObject_HasAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__complex__")) {
    Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) throw PythonError{};
    return Scalar(std::complex<double>(c.real, c.imag));
  }
  PyNumberMethods* nb = Py_TYPE(o)->tp_as_number;
  if (nb && nb->nb_index && !nb->nb_float) return Scalar(unpack_int(o));
  // numpy scalars: integers have nb_index, booleans are neither float nor index
  if (nb && nb->nb_index) return Scalar(unpack_int(o));
  return Scalar(unpack_double(o));
}

std::optional<ScalarType> as_dtype(PyObject* o) {
  if (PyObject_TypeCheck(o, &DTypeType)) return reinterpret_cast<PyDType*>(o)->dtype;
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ScalarType::Float64;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return ScalarType::Int64;
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return ScalarType::Bool;
  if (o == reinterpret_cast<PyObject*>(&PyComplex_Type)) return ScalarType::ComplexDouble;
  return std::nullopt;
}

namespace {
// An int inside a size list: overflow is torch's TypeError ("failed to unpack").
int64_t unpack_list_item(PyObject* o, Py_ssize_t pos) {
  try {
    return unpack_int(o);
  } catch (const Error& e) {
    fail(ErrorKind::Type, "failed to unpack the object at pos ", pos + 1, " with error \"", e.what(), "\"");
  }
}
}  // namespace

bool unpack_int_list(PyObject* o, Dims& out) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Owned snapshot(PySequence_Tuple(o));  // __index__ of an item may change a list
  if (!snapshot) throw PythonError{};
  Py_ssize_t n = PyTuple_GET_SIZE(snapshot.get());
  PyObject** items = &PyTuple_GET_ITEM(snapshot.get(), 0);
  out.resize(0);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!is_int_like(items[i])) return false;
    out.push_back(unpack_list_item(items[i], i));
  }
  return true;
}

// ---- Args getters ----

const Tensor& Args::tensor(int i) const {
  if (is_tensor(obj[i])) return unwrap(obj[i]);
  numbers_[i] = ops::wrapped_number(unpack_scalar(obj[i]));
  return numbers_[i];
}

Tensor Args::tensor_or_undefined(int i) const { return given(i) ? tensor(i) : Tensor(); }

std::vector<Tensor> Args::tensor_list(int i, bool items_optional) const {
  (void)items_optional;  // checked by accepts(); None items become undefined tensors
  std::vector<Tensor> out;
  PyObject* o = obj[i];
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t k = 0; k < n; ++k) out.push_back(items[k] == Py_None ? Tensor() : unwrap(items[k]));
  return out;
}

int64_t Args::to_int(int i) const { return unpack_int(obj[i]); }

std::optional<int64_t> Args::int_opt(int i) const {
  if (!given(i)) return std::nullopt;
  return unpack_int(obj[i]);
}

IntList Args::int_list(int i) {
  Dims& d = lists_[i];
  d.resize(0);
  if (i == varargs_param) {
    for (Py_ssize_t k = 0; k < nvarargs; ++k) d.push_back(unpack_list_item(varargs[k], k));
  } else if (given(i)) {
    if (is_int_like(obj[i])) d.push_back(unpack_list_item(obj[i], 0));
    else EMBER_CHECK(unpack_int_list(obj[i], d), Type, "expected a tuple of ints");
  }
  return d;
}

std::optional<IntList> Args::int_list_opt(int i) {
  if (!given(i) && i != varargs_param) return std::nullopt;
  return int_list(i);
}

double Args::to_double(int i) const { return unpack_double(obj[i]); }

std::optional<double> Args::double_opt(int i) const {
  if (!given(i)) return std::nullopt;
  return unpack_double(obj[i]);
}

std::optional<bool> Args::bool_opt(int i) const {
  if (!given(i)) return std::nullopt;
  return obj[i] == Py_True;
}

Scalar Args::scalar(int i) const { return unpack_scalar(obj[i]); }

std::optional<Scalar> Args::scalar_opt(int i) const {
  if (!given(i)) return std::nullopt;
  return unpack_scalar(obj[i]);
}

ScalarType Args::dtype(int i) const { return *as_dtype(obj[i]); }

std::optional<ScalarType> Args::dtype_opt(int i) const {
  if (!given(i)) return std::nullopt;
  return as_dtype(obj[i]);
}

GeneratorImpl* Args::generator(int i) const {
  if (!given(i)) return nullptr;
  return reinterpret_cast<PyGenerator*>(obj[i])->generator.get();
}

MemoryFormat Args::memory_format(int i) const {
  PyObject* o = obj[i];
  if (o == g_constants.channels_last) return MemoryFormat::ChannelsLast;
  if (o == g_constants.channels_last_3d) return MemoryFormat::ChannelsLast3d;
  return o == g_constants.contiguous_format ? MemoryFormat::Contiguous : MemoryFormat::Preserve;
}

std::optional<MemoryFormat> Args::memory_format_opt(int i) const {
  if (!given(i)) return std::nullopt;
  return memory_format(i);
}

std::string Args::string(int i) const { return PyUnicode_AsUTF8(obj[i]); }

std::optional<std::string> Args::string_opt(int i) const {
  if (!given(i)) return std::nullopt;
  return string(i);
}


}  // namespace ember::python
