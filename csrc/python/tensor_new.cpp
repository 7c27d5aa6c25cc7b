// Tensors from Python data: ember.tensor(), the legacy constructors (ember.Tensor(2, 3),
// ember.FloatTensor([1, 2]), ...), and numpy arrays through the array interface.
#include <cstring>
#include <limits>
#include <vector>
#include "ops/internal.h"
#include "ops_decl.h"
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {
namespace {

// Lists and tuples are checked first: a failed attribute lookup costs a microsecond.
bool has_array_interface(PyObject* o) {
  return !PyList_Check(o) && !PyTuple_Check(o) && !is_tensor(o) && !PyLong_CheckExact(o) && !PyFloat_CheckExact(o) &&
         !PyBool_Check(o) && PyObject_HasAttrString(o, "__array_interface__");
}

// The dtype of numpy's array-interface typestr (native byte order only).
std::optional<ScalarType> dtype_of_typestr(const char* ts) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kDTypes[i].typestr && std::strcmp(kDTypes[i].typestr, ts) == 0) return static_cast<ScalarType>(i);
  if (std::strcmp(ts, "=b1") == 0) return ScalarType::Bool;
  return std::nullopt;
}

// numpy's array-interface typestr of o ("<f4", "|b1", ...; empty when o has none), and
// its number of dimensions.
std::string array_typestr(PyObject* o, int64_t* ndim) {
  Owned iface(PyObject_GetAttrString(o, "__array_interface__"));
  if (!iface || !PyDict_Check(iface.get())) {
    PyErr_Clear();
    return {};
  }
  PyObject* shape = PyDict_GetItemString(iface.get(), "shape");
  PyObject* typestr = PyDict_GetItemString(iface.get(), "typestr");
  if (ndim) *ndim = shape && PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : 0;
  const char* ts = typestr ? PyUnicode_AsUTF8(typestr) : nullptr;
  PyErr_Clear();
  return ts ? ts : "";
}

std::optional<ScalarType> array_dtype(PyObject* o, int64_t* ndim) {
  std::string ts = array_typestr(o, ndim);
  if (ts.empty()) return std::nullopt;
  return dtype_of_typestr(ts.c_str());
}

// An array of a dtype ember lacks (uint16 to uint64, complex, ...) that the caller wants
// as one ember has: numpy casts it first, as torch converts it. Anything else: obj itself.
Owned castable_array(PyObject* obj, std::optional<ScalarType> dtype) {
  Py_INCREF(obj);
  Owned same(obj);
  if (!dtype) return same;
  std::string ts = array_typestr(obj, nullptr);
  // only numbers: numpy would also "cast" objects and strings, which torch refuses
  const bool number = ts.size() > 1 && std::strchr("uifc", ts[1]);
  if (!number || ts[0] == '>' || dtype_of_typestr(ts.c_str()) || !PyObject_HasAttrString(obj, "astype")) return same;
  const char* target = info(*dtype).typestr ? info(*dtype).typestr : "<f4";  // bfloat16: numpy has none
  Owned cast(PyObject_CallMethod(obj, "astype", "s", target));
  if (!cast) throw PythonError{};
  return cast;
}

bool is_sequence(PyObject* o) {
  if (PyList_Check(o) || PyTuple_Check(o)) return true;
  if (is_tensor(o)) return unwrap(o).dim() > 0;
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o) ||
      PyComplex_Check(o))
    return false;
  if (has_array_interface(o)) {
    int64_t ndim = 0;
    array_dtype(o, &ndim);
    return ndim > 0;
  }
  return PySequence_Check(o) && !is_scalar_like(o);
}

// The dtype a leaf asks for, as torch infers it: Python numbers give bool, int64 or the
// default float dtype; 0-dim tensors and numpy scalars give their own dtype.
ScalarType leaf_dtype(PyObject* o) {
  if (PyBool_Check(o)) return ScalarType::Bool;
  if (PyLong_CheckExact(o)) return ScalarType::Int64;
  if (PyFloat_CheckExact(o)) return ops::default_dtype();
  if (PyComplex_CheckExact(o)) return to_complex(ops::default_dtype());
  if (is_tensor(o)) return unwrap(o).dtype();
  EMBER_CHECK(!PyUnicode_Check(o), Value, "too many dimensions 'str'");
  if (has_array_interface(o))
    if (auto dt = array_dtype(o, nullptr)) return *dt;
  if (PyLong_Check(o)) return ScalarType::Int64;
  if (PyFloat_Check(o)) return ops::default_dtype();
  if (PyComplex_Check(o)) return to_complex(ops::default_dtype());
  PyNumberMethods* nb = Py_TYPE(o)->tp_as_number;
  if (nb && nb->nb_index) return ScalarType::Int64;
  if (nb && nb->nb_float) return ops::default_dtype();
  fail(ErrorKind::Runtime, "Could not infer dtype of ", Py_TYPE(o)->tp_name);
}

// Nested data deeper than this is refused (it also stops a list that contains itself).
constexpr size_t kMaxDataDepth = 1000;

// The items of a sequence, as a tuple: a snapshot that user code run on the items
// (__index__, __float__, ...) cannot change under us. A length that disagrees with the
// items is an error.
Owned items_of(PyObject* o, size_t depth) {
  Owned seq(PySequence_Tuple(o));
  if (!seq) throw PythonError{};
  if (!PyList_Check(o) && !PyTuple_Check(o)) {
    Py_ssize_t claimed = PyObject_Length(o);
    if (claimed < 0) throw PythonError{};
    EMBER_CHECK(claimed == PySequence_Fast_GET_SIZE(seq.get()), Value, "expected sequence of length ", claimed,
                " at dim ", depth, " (got ", PySequence_Fast_GET_SIZE(seq.get()), ")");
  }
  return seq;
}

// The shape, from the first element at each depth (as torch: a list whose first item
// is itself is "too deep", one that holds itself further on is "self-referential").
Dims shape_of(PyObject* o) {
  Dims shape;
  std::vector<Owned> held;  // keeps each level's snapshot, and so `o`, alive
  while (is_sequence(o) && !(is_tensor(o) && !shape.empty())) {
    EMBER_CHECK(shape.size() < kMaxDataDepth, Value, "too many dimensions: data is nested more than ",
                kMaxDataDepth, " levels deep");
    held.push_back(items_of(o, shape.size()));
    Py_ssize_t n = PyTuple_GET_SIZE(held.back().get());
    shape.push_back(n);
    if (n == 0) break;
    o = PyTuple_GET_ITEM(held.back().get(), 0);
  }
  return shape;
}

// Checks every element against the shape and promotes the dtype over every leaf. `path`
// holds the sequences above this one, to refuse a list that contains itself.
void infer(PyObject* o, const Dims& shape, std::optional<ScalarType>& dtype, std::vector<PyObject*>& path) {
  const size_t depth = path.size();
  if (!is_sequence(o)) {
    ScalarType leaf = leaf_dtype(o);
    dtype = dtype ? promote_types(*dtype, leaf) : leaf;
    return;
  }
  if (is_tensor(o) && depth > 0) {  // a tensor of several elements where a number belongs (torch's errors)
    EMBER_CHECK(!is_integral(unwrap(o).dtype(), true), Type,
                "only integer tensors of a single element can be converted to an index");
    fail(ErrorKind::Value, "only one element tensors can be converted to Python scalars");
  }
  for (PyObject* above : path)
    EMBER_CHECK(above != o, Type, "new(): self-referential lists are incompatible");
  Owned seq = items_of(o, depth);
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  EMBER_CHECK(depth < shape.size(), Type, "expected a number at dim ", depth, " (got a sequence)");
  EMBER_CHECK(n == shape[depth], Value, "expected sequence of length ", shape[depth], " at dim ", depth, " (got ",
              n, ")");
  PyObject** items = PySequence_Fast_ITEMS(seq.get());
  path.push_back(o);
  for (Py_ssize_t i = 0; i < n; ++i) infer(items[i], shape, dtype, path);
  path.pop_back();
}

template <class T>
void store_leaf(PyObject* o, T* p) {
  if constexpr (std::is_same_v<T, double>) {
    if (PyFloat_Check(o)) {
      *p = PyFloat_AS_DOUBLE(o);
      return;
    }
  } else if constexpr (std::is_same_v<T, float>) {
    if (PyFloat_Check(o)) {
      *p = static_cast<float>(PyFloat_AS_DOUBLE(o));
      return;
    }
  }
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(o, &overflow);
    EMBER_CHECK(!overflow, Value, "Overflow when unpacking long long");
  }
  Scalar s = unpack_scalar(o);
  // torch checks integers here; floats round (to inf) as in a cast
  EMBER_CHECK(!std::is_integral_v<T> || fits<T>(s), Runtime, "value cannot be converted to type ", info(DTypeOf<T>::value).name,
              " without overflow");
  *p = s.to<T>();
}

template <class T>
void fill(PyObject* o, const Dims& shape, size_t depth, T*& p) {
  if (depth == shape.size()) {
    EMBER_CHECK(!is_sequence(o), Type, "expected a number at dim ", depth, " (got a sequence)");
    store_leaf<T>(o, p++);
    return;
  }
  EMBER_CHECK(is_sequence(o), Type, "expected sequence of length ", shape[depth], " at dim ", depth,
              " (got a number)");
  Owned seq = items_of(o, depth);
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  EMBER_CHECK(n == shape[depth], Value, "expected sequence of length ", shape[depth], " at dim ", depth, " (got ",
              n, ")");
  PyObject** items = PySequence_Fast_ITEMS(seq.get());
  for (Py_ssize_t i = 0; i < n; ++i) fill(items[i], shape, depth + 1, p);
}

}  // namespace

// A tensor over (share) or copied from an object with numpy's array interface.
Tensor tensor_from_array(PyObject* obj, bool share) {
  Owned iface(PyObject_GetAttrString(obj, "__array_interface__"));
  if (!iface || !PyDict_Check(iface.get())) {
    PyErr_Clear();
    fail(ErrorKind::Type, "expected an object with numpy's __array_interface__, got ", Py_TYPE(obj)->tp_name);
  }
  PyObject* typestr = PyDict_GetItemString(iface.get(), "typestr");
  PyObject* shape_obj = PyDict_GetItemString(iface.get(), "shape");
  PyObject* data = PyDict_GetItemString(iface.get(), "data");
  PyObject* strides_obj = PyDict_GetItemString(iface.get(), "strides");
  EMBER_CHECK(typestr && shape_obj && data && PyTuple_Check(data), Type, "malformed __array_interface__");
  const char* ts = PyUnicode_AsUTF8(typestr);
  if (!ts) throw PythonError{};
  std::optional<ScalarType> dtype = dtype_of_typestr(ts);
  EMBER_CHECK(dtype || ts[0] != '>', Value, "given numpy array has byte order different from the native byte order. "
              "Conversion between byte orders is currently not supported.");
  EMBER_CHECK(dtype, Type, "can't convert np.ndarray of type ", ts,
              ". The only supported types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool.");
  Dims shape;
  EMBER_CHECK(unpack_int_list(shape_obj, shape), Type, "malformed __array_interface__ shape");
  const int64_t item = itemsize(*dtype);
  Dims strides;
  if (strides_obj && strides_obj != Py_None) {
    Dims bytes;
    EMBER_CHECK(unpack_int_list(strides_obj, bytes), Type, "malformed __array_interface__ strides");
    for (int64_t b : bytes) {
      EMBER_CHECK(b >= 0, Value,
                  "At least one stride in the given numpy array is negative, and tensors with negative strides are "
                  "not currently supported. (You can probably work around this by making a copy of your array "
                  "with array.copy().) ");
      EMBER_CHECK(b % item == 0, Value,
                  "given numpy array strides not a multiple of the element byte size. Copy the numpy array to "
                  "reallocate the memory.");
      strides.push_back(b / item);
    }
  } else {
    strides = contiguous_strides(shape);
  }
  void* ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
  if (PyErr_Occurred()) throw PythonError{};
  checked_numel(shape, "from_numpy");  // refuses negative sizes
  int64_t nbytes = storage_bytes_needed(shape, strides, 0, item);
  Py_INCREF(obj);
  Storage storage = make_ref<StorageImpl>(ptr, static_cast<size_t>(nbytes), &release_python_owner, obj);
  Tensor t(make_ref<TensorImpl>(std::move(storage), 0, std::move(shape), std::move(strides), *dtype));
  return share ? t : ops::clone(t, MemoryFormat::Preserve);
}

Tensor tensor_from_data(PyObject* data, std::optional<ScalarType> dtype) {
  EMBER_CHECK(!PyUnicode_Check(data) && !PyBytes_Check(data), Type, "new(): invalid data type '",
              Py_TYPE(data)->tp_name, "'");
  if (is_tensor(data)) {
    const Tensor& src = unwrap(data);
    return ops::to_dtype(src, dtype.value_or(src.dtype()), false, true, MemoryFormat::Contiguous);
  }
  if (has_array_interface(data)) {
    Tensor t = tensor_from_array(castable_array(data, dtype).get(), false);
    return dtype && *dtype != t.dtype() ? ops::to_dtype(t, *dtype, false, false, std::nullopt) : t;
  }
  Dims shape = shape_of(data);
  // With no element to store, torch looks no further than the shape ([[], [1]] is (2, 0)).
  if (checked_numel(shape, "tensor") == 0) return empty_tensor(shape, dtype.value_or(ops::default_dtype()), "tensor");
  std::optional<ScalarType> inferred;
  std::vector<PyObject*> path;
  infer(data, shape, inferred, path);
  ScalarType dt = dtype.value_or(inferred.value_or(ops::default_dtype()));
  Tensor out = empty_tensor(shape, dt, "tensor");
  visit_any_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(out.data());
    fill<T>(data, shape, 0, p);
  });
  return out;
}

// The legacy constructor: Tensor(), Tensor(*sizes), Tensor(size), Tensor(sequence),
// Tensor(storage), Tensor(tensor), with the dtype the class fixes.
PyObject* legacy_new(PyTypeObject* type, ScalarType dtype, bool dtype_fixed, PyObject* args, PyObject* kwargs) {
  return guarded([&]() -> PyObject* {
    if (kwargs) {
      PyObject *key, *value;
      Py_ssize_t pos = 0;
      while (PyDict_Next(kwargs, &pos, &key, &value)) {
        EMBER_CHECK(PyUnicode_CompareWithASCIIString(key, "device") == 0, Type,
                    "new() got an unexpected keyword argument '", PyUnicode_AsUTF8(key), "'");
        if (value != Py_None) {
          Owned text(PyObject_Str(value));
          EMBER_CHECK(text && PyUnicode_CompareWithASCIIString(text.get(), "cpu") == 0, Runtime,
                      "ember runs on the CPU only: that device is not available");
        }
      }
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n == 0) return wrap_as(type, empty_tensor({0}, dtype));
    PyObject* first = PyTuple_GET_ITEM(args, 0);
    if (n == 1 && is_storage(first)) {
      const Storage& s = unwrap_storage(first);
      int64_t len = static_cast<int64_t>(s->nbytes()) / itemsize(dtype);
      return wrap_as(type, Tensor(make_ref<TensorImpl>(s, 0, Dims{len}, Dims{1}, dtype)));
    }
    if (n == 1 && is_tensor(first)) {  // an alias; ember.Tensor takes any dtype, FloatTensor only its own
      const Tensor& src = unwrap(first);
      EMBER_CHECK(!dtype_fixed || src.dtype() == dtype, Type, "expected ", type_name(dtype), " (got ",
                  type_name(src.dtype()), ")");
      return wrap_as(type, make_view(src, Dims(src.sizes()), Dims(src.strides()), src.offset()));
    }
    if (n == 1 && PyObject_TypeCheck(first, &SizeType)) {
      Dims sizes;
      unpack_int_list(first, sizes);
      return wrap_as(type, empty_tensor(sizes, dtype));
    }
    bool all_ints = true;
    for (Py_ssize_t i = 0; i < n; ++i) all_ints &= is_int_like(PyTuple_GET_ITEM(args, i)) && !is_tensor(PyTuple_GET_ITEM(args, i));
    if (all_ints) {
      Dims sizes;
      for (Py_ssize_t i = 0; i < n; ++i) sizes.push_back(unpack_int(PyTuple_GET_ITEM(args, i)));
      return wrap_as(type, empty_tensor(sizes, dtype, "new"));
    }
    // An array (numpy's ndarray, even 0-d; not a numpy scalar, which is no sequence) is
    // data; as in torch, the tensor shares its memory when the dtype already matches.
    const bool array = has_array_interface(first) && PySequence_Check(first);
    EMBER_CHECK(n == 1 && (is_sequence(first) || array), Type, "new(): data must be a sequence (got ",
                Py_TYPE(first)->tp_name, ")");
    if (array) {
      Tensor t = tensor_from_array(castable_array(first, dtype).get(), true);
      return wrap_as(type, t.dtype() == dtype ? t : ops::to_dtype(t, dtype, false, false, std::nullopt));
    }
    return wrap_as(type, tensor_from_data(first, dtype));
  });
}

}  // namespace ember::python
