// ember._C.TensorBase: the C type under ember.Tensor. Properties and the methods that
// answer questions about a tensor are here; ops come from the generated tables.
#include <cstring>
#include <vector>
#include "ops/geometry.h"
#include "ops/internal.h"
#include "api_decl.h"
#include "autograd/meta.h"
#include <cstring>
#include <map>
#include <string>
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"
#include "python_tables.h"  // generated

namespace ember::python {

PyTypeObject TensorBaseType = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject* g_tensor_class = &TensorBaseType;
PyObject* g_cpu_device = nullptr;

PyObject* wrap_as(PyTypeObject* type, Tensor t) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  new (&reinterpret_cast<PyTensor*>(obj)->tensor) Tensor(std::move(t));
  reinterpret_cast<PyTensor*>(obj)->tensor.impl()->pyobj = obj;
  return obj;
}

// Note [Fresh results start at version 0]
// Factories and many ops fill their result in place (zeros is empty + fill_, a
// conversion is empty + copy_), which bumps the storage's version counter. When the
// result reaches Python as the only reference to its TensorImpl, and that TensorImpl as
// the only user of its storage, nothing else (no view, no saved variable, no Python
// object) can have seen the counter, so it is reset: torch's fresh tensors have
// _version 0. An op returning one of its inputs, or a view of one, fails the test.
PyObject* wrap(Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  auto* existing = static_cast<PyObject*>(t.impl()->pyobj);
  if (existing && Py_REFCNT(existing) > 0) {  // 0: it is being destroyed (weakref callbacks run first)
    Py_INCREF(existing);
    return existing;
  }
  const Storage& storage = t.storage();
  if (t.impl()->use_count() == 1 && storage && storage->use_count() == 1) {
    if (storage->version() != 0) storage->reset_version();
    if (autograd::t_inference_mode) storage->inference = true;  // a fresh result of inference mode
  }
  return wrap_as(g_tensor_class, std::move(t));
}

PyObject* wrap(std::vector<Tensor> ts) {
  Owned tuple(PyTuple_New(static_cast<Py_ssize_t>(ts.size())));
  if (!tuple) return nullptr;
  for (size_t i = 0; i < ts.size(); ++i) {
    PyObject* item = wrap(std::move(ts[i]));
    if (!item) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), i, item);
  }
  return tuple.release();
}

PyTypeObject* named_tuple_type(const char* name, std::initializer_list<const char*> fields) {
  // The types, and the descriptions they were made from, live as long as the module; the
  // descriptions are kept here so that the leak checker sees them reachable.
  struct Made {
    PyTypeObject* type;
    std::unique_ptr<PyStructSequence_Field[]> members;
    std::unique_ptr<PyStructSequence_Desc> desc;
    std::string qualname;
  };
  static std::map<std::string, Made> types;
  auto it = types.find(name);
  if (it != types.end()) return it->second.type;
  Made made{nullptr, std::make_unique<PyStructSequence_Field[]>(fields.size() + 1), nullptr,
            std::string("ember.return_types.") + name};
  int k = 0;
  for (const char* f : fields) made.members[k++] = {f, nullptr};
  made.desc.reset(new PyStructSequence_Desc{made.qualname.c_str(), nullptr, made.members.get(),
                                            static_cast<int>(fields.size())});
  made.type = PyStructSequence_NewType(made.desc.get());
  if (!made.type) throw PythonError{};
  return types.emplace(name, std::move(made)).first->second.type;
}

PyObject* wrap_named(PyTypeObject* type, std::tuple<Tensor, Tensor> values) {
  Owned result(PyStructSequence_New(type));
  if (!result) return nullptr;
  PyObject* a = wrap(std::move(std::get<0>(values)));
  if (!a) return nullptr;
  PyStructSequence_SET_ITEM(result.get(), 0, a);
  PyObject* b = wrap(std::move(std::get<1>(values)));
  if (!b) return nullptr;
  PyStructSequence_SET_ITEM(result.get(), 1, b);
  return result.release();
}

PyObject* wrap(std::tuple<Tensor, Tensor> values) {
  return wrap(std::vector<Tensor>{std::move(std::get<0>(values)), std::move(std::get<1>(values))});
}

PyObject* wrap(std::tuple<Tensor, Tensor, Tensor> values) {
  return wrap(std::vector<Tensor>{std::move(std::get<0>(values)), std::move(std::get<1>(values)),
                                  std::move(std::get<2>(values))});
}

PyObject* wrap(std::tuple<Tensor, Tensor, Tensor, Tensor> values) {
  return wrap(std::vector<Tensor>{std::move(std::get<0>(values)), std::move(std::get<1>(values)),
                                  std::move(std::get<2>(values)), std::move(std::get<3>(values))});
}

PyObject* wrap(const Scalar& s) {
  if (s.is_bool()) return PyBool_FromLong(s.to_bool());
  if (s.is_floating()) return PyFloat_FromDouble(s.to_double());
  if (s.is_complex()) return PyComplex_FromDoubles(s.to_complex().real(), s.to_complex().imag());
  return PyLong_FromLongLong(s.to_int64());
}
PyObject* wrap(bool b) { return PyBool_FromLong(b); }
PyObject* wrap(int64_t v) { return PyLong_FromLongLong(v); }
PyObject* wrap(double v) { return PyFloat_FromDouble(v); }

namespace {

void tensor_dealloc(PyObject* self) {
  auto* t = reinterpret_cast<PyTensor*>(self);
  if (t->tensor.defined() && t->tensor.impl()->pyobj == self) t->tensor.impl()->pyobj = nullptr;
  t->tensor.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

const Tensor& self_of(PyObject* self) { return unwrap(self); }

// One element at p as a Python number.
PyObject* element_to_python(const char* p, ScalarType dtype) {
  return visit_any_dtype(dtype, [&](auto tag) -> PyObject* {
    using T = typename decltype(tag)::type;
    const T v = load<T>(p);
    if constexpr (is_complex_v<T>) return PyComplex_FromDoubles(v.real(), v.imag());
    else if constexpr (std::is_same_v<T, bool>) return PyBool_FromLong(v);
    else if constexpr (std::is_integral_v<T>) return PyLong_FromLongLong(static_cast<long long>(v));
    else return PyFloat_FromDouble(static_cast<double>(static_cast<compute_t<T>>(v)));
  });
}

PyObject* tolist_rec(const Tensor& t, int64_t dim, const char* p) {
  if (dim == t.dim()) return element_to_python(p, t.dtype());
  const int64_t n = t.sizes()[dim], step = t.strides()[dim] * t.itemsize();
  Owned list(PyList_New(n));
  if (!list) return nullptr;
  for (int64_t i = 0; i < n; ++i) {
    PyObject* item = tolist_rec(t, dim + 1, p + i * step);
    if (!item) return nullptr;
    PyList_SET_ITEM(list.get(), i, item);
  }
  return list.release();
}

// ---- properties ----

PyObject* get_shape(PyObject* self, void*) { return make_size(self_of(self).sizes()); }
PyObject* get_dtype(PyObject* self, void*) {
  PyObject* d = dtype_object(self_of(self).dtype());
  Py_INCREF(d);
  return d;
}
PyObject* get_device(PyObject* self, void*) {
  return guarded([&] { return device_object(self_of(self).device()); });
}
PyObject* get_is_cpu(PyObject* self, void*) { return PyBool_FromLong(self_of(self).is_cpu()); }
PyObject* get_is_cuda(PyObject* self, void*) {
  return PyBool_FromLong(self_of(self).device().type == DeviceType::CUDA);
}
PyObject* get_is_meta(PyObject* self, void*) {
  return PyBool_FromLong(self_of(self).device().type == DeviceType::Meta);
}
PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLongLong(self_of(self).dim()); }
PyObject* get_itemsize(PyObject* self, void*) { return PyLong_FromLongLong(self_of(self).itemsize()); }
PyObject* get_nbytes(PyObject* self, void*) {
  return PyLong_FromLongLong(self_of(self).numel() * self_of(self).itemsize());
}
PyObject* get_false(PyObject*, void*) { Py_RETURN_FALSE; }
PyObject* get_layout(PyObject*, void*) {
  if (!g_constants.strided) Py_RETURN_NONE;
  Py_INCREF(g_constants.strided);
  return g_constants.strided;
}

PyObject* get_T(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    Dims order(t.dim());
    for (int64_t i = 0; i < t.dim(); ++i) order[i] = t.dim() - 1 - i;
    return wrap(api::permute(t, order));
  });
}

PyObject* get_mT(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    EMBER_CHECK(t.dim() >= 2, Runtime, "tensor.mT is only supported on matrices or batches of matrices. Got ",
                t.dim(), "-D tensor.");
    return wrap(api::transpose(t, -2, -1));
  });
}

// .data: a new tensor over the same memory, without autograd history.
PyObject* get_data(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    return wrap(make_view(t, Dims(t.sizes()), Dims(t.strides()), t.offset()));
  });
}

int set_data(PyObject* self, PyObject* value, void*) {
  if (!value || !is_tensor(value)) {
    PyErr_SetString(PyExc_TypeError, "Tensor.data must be set to a Tensor");
    return -1;
  }
  return guarded_int([&]() -> int {
    const Tensor& src = unwrap(value);
    EMBER_CHECK(is_floating(src.dtype()) || !autograd::requires_grad(self_of(self)), Runtime,
                "data set to a tensor that requires gradients must be floating point (got ", type_name(src.dtype()),
                ")");
    self_of(self).impl()->set(src.storage(), src.offset(), Dims(src.sizes()), Dims(src.strides()), src.dtype());
    return 0;
  });
}

PyObject* get_array_interface(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    const char* typestr = info(t.dtype()).typestr;
    EMBER_CHECK(typestr, Type, "Got unsupported ScalarType ", type_name(t.dtype()));
    check_bounds(t);
    t.storage()->set_resizable(false);  // numpy now holds a raw pointer into it
    Owned shape(make_size(t.sizes()));
    Owned strides(PyTuple_New(t.dim()));
    if (!shape || !strides) return nullptr;
    for (int64_t i = 0; i < t.dim(); ++i)
      PyTuple_SET_ITEM(strides.get(), i, PyLong_FromLongLong(t.strides()[i] * t.itemsize()));
    // numpy wants a non-null pointer even for empty arrays
    void* ptr = t.numel() ? static_cast<void*>(t.data()) : static_cast<void*>(t.storage()->data());
    return Py_BuildValue("{s:N,s:s,s:(N,O),s:N,s:i}", "shape", PySequence_Tuple(shape.get()), "typestr", typestr,
                         "data", PyLong_FromVoidPtr(ptr), Py_False, "strides", strides.release(), "version", 3);
  });
}

PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, nullptr, "The sizes, as an ember.Size.", nullptr},
    {"dtype", get_dtype, nullptr, "The element type.", nullptr},
    {"device", get_device, nullptr, "The device of the tensor's storage.", nullptr},
    {"ndim", get_ndim, nullptr, "The number of dims.", nullptr},
    {"itemsize", get_itemsize, nullptr, "Bytes per element.", nullptr},
    {"nbytes", get_nbytes, nullptr, "Bytes of the elements (numel * itemsize).", nullptr},
    {"is_cpu", get_is_cpu, nullptr, nullptr, nullptr},
    {"is_cuda", get_is_cuda, nullptr, nullptr, nullptr},
    {"is_sparse", get_false, nullptr, nullptr, nullptr},
    {"is_quantized", get_false, nullptr, nullptr, nullptr},
    {"is_meta", get_is_meta, nullptr, nullptr, nullptr},
    {"layout", get_layout, nullptr, "Always ember.strided.", nullptr},
    {"T", get_T, nullptr, "The dims in reverse order (a view).", nullptr},
    {"mT", get_mT, nullptr, "The last two dims swapped (a view).", nullptr},
    {"data", get_data, set_data, "A tensor sharing this one's memory.", nullptr},
    {"_array_interface", get_array_interface, nullptr,
     "numpy's array interface of this tensor (see Tensor.__array__, which keeps the storage alive).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- methods (hand-written: they return Python values or take Python objects) ----

PyObject* optional_dim_query(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                             const char* name, bool strides) {
  static const Param params[] = {{"dim", PType::Int, true, true, false, false}};
  Signature sig{name, name, params, 1};
  return guarded([&]() -> PyObject* {
    Args a;
    if (parse_args(&sig, 1, args, nargs, kwnames, a) < 0) return nullptr;
    const Tensor& t = self_of(self);
    IntList values = strides ? t.strides() : t.sizes();
    if (!a.given(0)) {
      if (!strides) return make_size(values);
      Owned tuple(PyTuple_New(values.size()));
      for (size_t i = 0; i < values.size(); ++i) PyTuple_SET_ITEM(tuple.get(), i, PyLong_FromLongLong(values[i]));
      return tuple.release();
    }
    int64_t d = a.to_int(0);
    EMBER_CHECK(t.dim() > 0, Index, "Dimension specified as ", d, " but tensor has no dimensions");
    return PyLong_FromLongLong(values[wrap_dim(d, t.dim())]);
  });
}

PyObject* m_size(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return optional_dim_query(self, args, nargs, kwnames, "size", false);
}
PyObject* m_stride(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return optional_dim_query(self, args, nargs, kwnames, "stride", true);
}
PyObject* m_dim(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_of(self).dim()); }
PyObject* m_numel(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_of(self).numel()); }
PyObject* m_storage_offset(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_of(self).offset()); }
PyObject* m_element_size(PyObject* self, PyObject*) { return PyLong_FromLongLong(self_of(self).itemsize()); }
PyObject* m_data_ptr(PyObject* self, PyObject*) {  // a device address (0 on meta, as torch), never read here
  const Tensor& t = self_of(self);
  char* base = t.storage()->device_data();
  return PyLong_FromVoidPtr(base ? base + t.offset() * t.itemsize() : nullptr);
}
PyObject* m_is_floating_point(PyObject* self, PyObject*) { return PyBool_FromLong(is_floating(self_of(self).dtype())); }
PyObject* m_is_signed(PyObject* self, PyObject*) {
  DTypeKind k = info(self_of(self).dtype()).kind;
  return PyBool_FromLong(k == DTypeKind::Signed || k == DTypeKind::Float || k == DTypeKind::Complex);
}
PyObject* m_untyped_storage(PyObject* self, PyObject*) { return wrap_storage(self_of(self).storage()); }

PyObject* m_is_contiguous(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const Param params[] = {{"memory_format", PType::MemoryFormat, false, true, true, false}};
  static const Signature sig{"is_contiguous", "is_contiguous(*, memory_format=ember.contiguous_format)", params, 1};
  return guarded([&]() -> PyObject* {
    Args a;
    if (parse_args(&sig, 1, args, nargs, kwnames, a) < 0) return nullptr;
    const Tensor& t = self_of(self);
    return PyBool_FromLong(a.given(0) ? ops::is_contiguous_as(t, a.memory_format(0)) : t.is_contiguous());
  });
}

PyObject* m_item(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    return wrap(ops::item(self_of(self)));
  });
}

PyObject* m_tolist(PyObject* self, PyObject*) {
  const Tensor& t = self_of(self);
  return guarded([&]() -> PyObject* {
    if (t.device().type == DeviceType::CUDA) {  // the values come to the host first
      const Tensor host = ops::to_device_of(t, Device());
      return tolist_rec(host, 0, host.data());
    }
    check_bounds(t);
    return tolist_rec(t, 0, t.data());
  });
}

// set_(): point at a storage (or another tensor's memory).
PyObject* m_set_(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const Param p_none[] = {{"source", PType::Tensor, true, true, false, false}};
  static const Param p_storage[] = {{"source", PType::Tensor, false, false, false, false},
                                    {"storage_offset", PType::Int, false, true, false, false},
                                    {"size", PType::IntList, false, true, false, false},
                                    {"stride", PType::IntList, true, true, false, false}};
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    if (nargs >= 1 && is_storage(args[0])) {
      // (Storage source, int storage_offset=0, int[] size=whole, int[]? stride=None)
      static const Signature sig{"set_", "set_(Storage source, int storage_offset=0, tuple of ints size, tuple of ints stride=None)", p_storage + 1, 3};
      Args a;
      if (parse_args(&sig, 1, args + 1, nargs - 1, kwnames, a) < 0) return nullptr;
      const Storage& storage = unwrap_storage(args[0]);
      int64_t offset = a.to_int(0, 0);
      Dims size = a.given(1) ? Dims(a.int_list(1)) : Dims{static_cast<int64_t>(storage->nbytes()) / t.itemsize()};
      Dims stride = a.given(2) ? Dims(a.int_list(2)) : contiguous_strides(size);
      EMBER_CHECK(size.size() == stride.size(), Runtime, "set_(): mismatch in length of sizes and strides");
      for (int64_t s : size) EMBER_CHECK(s >= 0, Runtime, "set_(): negative size ", s);
      for (int64_t s : stride) EMBER_CHECK(s >= 0, Runtime, "set_(): negative stride ", s);
      EMBER_CHECK(offset >= 0, Runtime, "set_(): negative storage offset ", offset);
      int64_t needed = storage_bytes_needed(size, stride, offset, t.itemsize());
      if (needed > static_cast<int64_t>(storage->nbytes()) && storage->resizable())
        storage->resize(static_cast<size_t>(needed));  // torch grows the storage to fit
      t.impl()->set(storage, offset, std::move(size), std::move(stride));
    } else {
      static const Signature sig{"set_", "set_(Tensor source=None)", p_none, 1};
      Args a;
      if (parse_args(&sig, 1, args, nargs, kwnames, a) < 0) return nullptr;
      if (a.given(0)) {
        const Tensor& src = a.tensor(0);
        EMBER_CHECK(src.dtype() == t.dtype(), Runtime, "set_(): expected a source of dtype ", type_name(t.dtype()),
                    ", got ", type_name(src.dtype()));
        t.impl()->set(src.storage(), src.offset(), Dims(src.sizes()), Dims(src.strides()));
      } else {
        t.impl()->set(make_ref<StorageImpl>(0), 0, Dims{0}, Dims{1});
      }
    }
    Py_INCREF(self);
    return self;
  });
}

#define EMBER_FASTCALL(f) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f))

PyMethodDef tensor_methods[] = {
    {"size", EMBER_FASTCALL(m_size), METH_FASTCALL | METH_KEYWORDS, "size(dim=None): the sizes, or one of them."},
    {"stride", EMBER_FASTCALL(m_stride), METH_FASTCALL | METH_KEYWORDS, "stride(dim=None): the strides, or one of them."},
    {"dim", m_dim, METH_NOARGS, "The number of dims."},
    {"ndimension", m_dim, METH_NOARGS, "The number of dims."},
    {"numel", m_numel, METH_NOARGS, "The number of elements."},
    {"nelement", m_numel, METH_NOARGS, "The number of elements."},
    {"storage_offset", m_storage_offset, METH_NOARGS, "The offset into the storage, in elements."},
    {"element_size", m_element_size, METH_NOARGS, "Bytes per element."},
    {"data_ptr", m_data_ptr, METH_NOARGS, "The address of the first element."},
    {"is_floating_point", m_is_floating_point, METH_NOARGS, "Whether the dtype is a floating point type."},
    {"is_signed", m_is_signed, METH_NOARGS, "Whether the dtype is signed."},
    {"is_contiguous", EMBER_FASTCALL(m_is_contiguous), METH_FASTCALL | METH_KEYWORDS, "Whether the elements are laid out row-major without gaps."},
    {"item", m_item, METH_NOARGS, "The value of a one-element tensor as a Python number."},
    {"tolist", m_tolist, METH_NOARGS, "The values as nested Python lists (a number for a 0-dim tensor)."},
    {"untyped_storage", m_untyped_storage, METH_NOARGS, "The storage (bytes) this tensor views."},
    {"set_", EMBER_FASTCALL(m_set_), METH_FASTCALL | METH_KEYWORDS, "Points this tensor at a storage, or at another tensor's memory."},
    {nullptr, nullptr, 0, nullptr}};

// ---- number and mapping protocols ----

Py_ssize_t tensor_length(PyObject* self) {
  const Tensor& t = self_of(self);
  if (t.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return static_cast<Py_ssize_t>(t.sizes()[0]);
}

int tensor_bool(PyObject* self) {
  return guarded_int([&]() -> int {
    const Tensor& t = self_of(self);
    EMBER_CHECK(t.numel() > 0, Runtime, "Boolean value of Tensor with no values is ambiguous");
    EMBER_CHECK(t.numel() == 1, Runtime, "Boolean value of Tensor with more than one value is ambiguous");
    return ops::item(t).to_bool() ? 1 : 0;
  });
}

PyObject* tensor_float(PyObject* self) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    EMBER_CHECK(t.numel() == 1, Value, "only one element tensors can be converted to Python scalars");
    return PyFloat_FromDouble(ops::item(t).to_double());
  });
}

PyObject* tensor_int(PyObject* self) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    EMBER_CHECK(t.numel() == 1, Value, "only one element tensors can be converted to Python scalars");
    Scalar s = ops::item(t);
    if (s.is_floating()) {  // like int(float): truncates, and refuses nan/inf
      double v = s.to_double();
      return PyLong_FromDouble(v);
    }
    return PyLong_FromLongLong(s.to_int64());
  });
}

PyObject* tensor_index(PyObject* self) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_of(self);
    EMBER_CHECK(t.numel() == 1 && is_integral(t.dtype(), true), Type,
                "only integer tensors of a single element can be converted to an index");
    return PyLong_FromLongLong(ops::item(t).to_int64());
  });
}

PyNumberMethods tensor_as_number = {};
PyMappingMethods tensor_as_mapping = {};

}  // namespace

namespace {
PyObject* tensor_tp_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  return legacy_new(type, ops::default_dtype(), false, args, kwargs);
}

std::vector<PyMethodDef>& all_methods() {
  static std::vector<PyMethodDef> methods;
  return methods;
}
}  // namespace

void init_tensor_type(PyObject* module) {
  std::vector<PyMethodDef>& methods = all_methods();
  for (PyMethodDef* m = tensor_methods; m->ml_name; ++m) methods.push_back(*m);
  for (PyMethodDef* m = tensor_autograd_methods; m->ml_name; ++m) methods.push_back(*m);
  for (PyMethodDef* table : kGeneratedMethods)
    for (PyMethodDef* m = table; m->ml_name; ++m) methods.push_back(*m);
  methods.push_back({nullptr, nullptr, 0, nullptr});

  tensor_as_number.nb_bool = tensor_bool;
  tensor_as_number.nb_float = tensor_float;
  tensor_as_number.nb_int = tensor_int;
  tensor_as_number.nb_index = tensor_index;
  tensor_as_mapping.mp_length = tensor_length;
  tensor_as_mapping.mp_subscript = tensor_getitem;
  tensor_as_mapping.mp_ass_subscript = tensor_setitem;

  PyTypeObject& t = TensorBaseType;
  t.tp_name = "ember._C.TensorBase";
  t.tp_basicsize = sizeof(PyTensor);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t.tp_doc = "The native base of ember.Tensor.";
  t.tp_dealloc = tensor_dealloc;
  t.tp_new = tensor_tp_new;
  t.tp_methods = methods.data();
  static std::vector<PyGetSetDef> getset;
  for (PyGetSetDef* g = tensor_getset; g->name; ++g) getset.push_back(*g);
  for (PyGetSetDef* g = tensor_autograd_getset; g->name; ++g) getset.push_back(*g);
  getset.push_back({nullptr, nullptr, nullptr, nullptr, nullptr});
  t.tp_getset = getset.data();
  t.tp_as_number = &tensor_as_number;
  t.tp_as_mapping = &tensor_as_mapping;
  add_type(module, t, "TensorBase");
}

}  // namespace ember::python
