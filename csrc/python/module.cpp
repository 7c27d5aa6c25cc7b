// PyInit__C: registers every type and function of ember._C, from one list.
#include <Python.h>
#include <xmmintrin.h>
#include <cstring>
#include <iterator>
#include "core/allocator.h"
#include "core/device.h"
#include "core/parallel.h"
#include "kernels/gemm_bf16.h"
#include "ops/internal.h"
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"
#include "python_tables.h"  // generated

#ifndef EMBER_BUILD_FLAGS
#define EMBER_BUILD_FLAGS "unknown"
#endif

namespace ember::python {
PyObject* f_set_default_device(PyObject*, PyObject* arg);  // python/device.cpp
PyObject* f_get_default_device(PyObject*, PyObject*);

namespace {

PyObject* f_set_tensor_class(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &TensorBaseType)) {
    PyErr_SetString(PyExc_TypeError, "_set_tensor_class(): expected a subclass of TensorBase");
    return nullptr;
  }
  Py_INCREF(cls);
  g_tensor_class = reinterpret_cast<PyTypeObject*>(cls);
  Py_RETURN_NONE;
}

// _set_constants(cpu_device, device_type, strided, contiguous_format, preserve_format, channels_last,
//                channels_last_3d)
PyObject* f_set_constants(PyObject*, PyObject* args) {
  PythonConstants c;
  PyObject* cpu;
  if (!PyArg_ParseTuple(args, "OOOOOOO", &cpu, &c.device_type, &c.strided, &c.contiguous_format,
                        &c.preserve_format, &c.channels_last, &c.channels_last_3d))
    return nullptr;
  for (PyObject* o : {cpu, c.device_type, c.strided, c.contiguous_format, c.preserve_format, c.channels_last,
                      c.channels_last_3d})
    Py_INCREF(o);  // kept for the life of the process
  g_cpu_device = cpu;
  g_constants = c;
  Py_RETURN_NONE;
}

PyObject* f_tensor(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const Param params[] = {{"dtype", PType::DType, true, true, true, false},
                                 {"device", PType::Device, true, true, true, false},
                                 {"requires_grad", PType::Bool, false, true, true, false},
                                 {"pin_memory", PType::Bool, false, true, true, false}};
  static const Signature sig{"tensor", "tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False)",
                             params, 4};
  return guarded([&]() -> PyObject* {
    if (nargs != 1) {
      PyErr_Format(PyExc_TypeError, "tensor() takes 1 positional argument but %zd were given", nargs);
      return nullptr;
    }
    // data is any Python object; only the keywords go through the parser
    Args a;
    if (parse_args(&sig, 1, args + 1, 0, kwnames, a) < 0) return nullptr;
    const Device device = a.given(1) ? parse_device(a.obj[1]) : t_default_device;
    const Tensor t = ops::to_device_of(tensor_from_data(args[0], a.dtype_opt(0)), device);
    return wrap(with_requires_grad(t, a.to_bool(2, false)));
  });
}

PyObject* f_legacy_new(PyObject*, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) < 1) {
    PyErr_SetString(PyExc_TypeError, "_legacy_new(dtype, *args)");
    return nullptr;
  }
  auto dt = as_dtype(PyTuple_GET_ITEM(args, 0));
  if (!dt) {
    PyErr_SetString(PyExc_TypeError, "_legacy_new(): expected a dtype first");
    return nullptr;
  }
  Owned rest(PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args)));
  return legacy_new(g_tensor_class, *dt, true, rest.get(), kwargs);
}

PyObject* f_from_array(PyObject*, PyObject* args) {
  PyObject* obj;
  int share;
  if (!PyArg_ParseTuple(args, "Op", &obj, &share)) return nullptr;
  return guarded([&]() -> PyObject* {
    return wrap(tensor_from_array(obj, share != 0));
  });
}

PyObject* f_get_num_threads(PyObject*, PyObject*) { return PyLong_FromLong(get_num_threads()); }

PyObject* f_set_num_threads(PyObject*, PyObject* arg) {
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(PyLong_Check(arg), Type, "set_num_threads expected an int, got ", Py_TYPE(arg)->tp_name);
    int64_t n = unpack_int(arg);
    EMBER_CHECK(n >= 1 && n <= 4096, Runtime, "set_num_threads(): expected a number of threads in [1, 4096], got ", n);
    set_num_threads(static_cast<int>(n));
    Py_RETURN_NONE;
  });
}

PyObject* f_get_default_dtype(PyObject*, PyObject*) {
  PyObject* d = dtype_object(ops::default_dtype());
  Py_INCREF(d);
  return d;
}

PyObject* f_set_default_dtype(PyObject*, PyObject* arg) {
  return guarded([&]() -> PyObject* {
    auto dt = as_dtype(arg);
    EMBER_CHECK(dt && PyObject_TypeCheck(arg, &DTypeType), Type, "set_default_dtype(): expected an ember.dtype, got ",
                Py_TYPE(arg)->tp_name);
    EMBER_CHECK(*dt == ScalarType::Float32 || *dt == ScalarType::Float64 || *dt == ScalarType::Float16 ||
                    *dt == ScalarType::BFloat16,
                Type, "only floating-point types are supported as the default type");
    ops::set_default_dtype(*dt);
    Py_RETURN_NONE;
  });
}

// Flush-to-zero and denormals-are-zero on this thread's SSE unit; True when supported.
PyObject* f_set_flush_denormal(PyObject*, PyObject* arg) {
  int on = PyObject_IsTrue(arg);
  if (on < 0) return nullptr;
  unsigned csr = _mm_getcsr();
  const unsigned bits = 0x8040;  // FTZ | DAZ
  _mm_setcsr(on ? (csr | bits) : (csr & ~bits));
  Py_RETURN_TRUE;
}

PyObject* f_build_config(PyObject*, PyObject*) {
  return Py_BuildValue("{s:s,s:s,s:i}", "compiler_flags", EMBER_BUILD_FLAGS, "compiler", __VERSION__,
                       "cpp_standard", static_cast<int>(__cplusplus));
}

// ember.return_types.<name> (ember/return_types.py): the type an op's named tuple has.
PyObject* f_return_type(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "_return_type(): expected a str");
    return nullptr;
  }
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return nullptr;
  return guarded([&]() -> PyObject* {
    for (const NamedReturn& r : kNamedReturns)
      if (std::strcmp(r.name, name) == 0) return Py_NewRef(reinterpret_cast<PyObject*>(named_tuple_type(r.name, r.fields)));
    PyErr_Format(PyExc_AttributeError, "module 'ember.return_types' has no attribute '%s'", name);
    return nullptr;
  });
}

PyObject* f_return_types(PyObject*, PyObject*) {
  Owned names(PyTuple_New(std::size(kNamedReturns)));
  if (!names) return nullptr;
  Py_ssize_t k = 0;
  for (const NamedReturn& r : kNamedReturns) {
    PyObject* s = PyUnicode_FromString(r.name);
    if (!s) return nullptr;
    PyTuple_SET_ITEM(names.get(), k++, s);
  }
  return names.release();
}

PyObject* f_live_objects(PyObject*, PyObject*) {
  return Py_BuildValue("(LL)", static_cast<long long>(live_tensor_impls()),
                       static_cast<long long>(live_storage_impls()));
}

// _set_bf16_gemm_path(name) / _bf16_gemm_path(): which instructions bfloat16 products use
// (kernels/gemm_bf16.h), for the tests and the benchmark runner.
PyObject* f_set_bf16_gemm_path(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) return PyErr_Format(PyExc_TypeError, "_set_bf16_gemm_path(): expected a str");
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return nullptr;
  return guarded([&]() -> PyObject* {
    kernels::gemm_bf16::set_path(name);
    Py_RETURN_NONE;
  });
}

PyObject* f_bf16_gemm_path(PyObject*, PyObject*) { return PyUnicode_FromString(kernels::gemm_bf16::path_name()); }

// _set_layout_ops(cls, dict): the class of sparse tensors and the Python implementations of
// the ops that take them; see Note [Sparse tensors are routed before parsing] (python/arg_parser.h).
PyObject* f_set_layout_ops(PyObject*, PyObject* args) {
  PyObject *cls, *table;
  if (!PyArg_ParseTuple(args, "OO", &cls, &table)) return nullptr;
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &TensorBaseType) ||
      !PyDict_Check(table))
    return PyErr_Format(PyExc_TypeError, "_set_layout_ops: expected a Tensor subclass and a dict");
  set_layout_ops(reinterpret_cast<PyTypeObject*>(cls), table);
  Py_RETURN_NONE;
}

// _sparse_shell(cls, size, dtype): an instance of cls (a Tensor subclass) over a
// TensorImpl of that size and dtype owning no elements: strides 0 over an empty storage.
PyObject* f_sparse_shell(PyObject*, PyObject* args) {
  return guarded([&]() -> PyObject* {
    PyObject *cls, *size, *dtype_obj;
    if (!PyArg_ParseTuple(args, "OOO", &cls, &size, &dtype_obj)) return nullptr;
    if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &TensorBaseType))
      return PyErr_Format(PyExc_TypeError, "_sparse_shell: expected a Tensor subclass");
    Dims sizes;
    if (!unpack_int_list(size, sizes)) return PyErr_Format(PyExc_TypeError, "_sparse_shell: expected a size");
    for (int64_t s : sizes) EMBER_CHECK(s >= 0, Value, "negative dimensions are not allowed");
    const std::optional<ScalarType> dtype = as_dtype(dtype_obj);
    if (!dtype) return PyErr_Format(PyExc_TypeError, "_sparse_shell: expected a dtype");
    const Tensor none = empty_tensor({0}, *dtype);
    Dims strides(sizes.size(), 0);
    // Unchecked: the shell has no elements to check against; nothing reads them.
    Tensor shell(make_ref<TensorImpl>(none.storage(), 0, sizes, strides, *dtype, TensorImpl::Unchecked{}));
    return wrap_as(reinterpret_cast<PyTypeObject*>(cls), std::move(shell));
  });
}

PyObject* f_release_cached_blocks(PyObject*, PyObject*) {
  release_cached_blocks();
  Py_RETURN_NONE;
}

}  // namespace

void add_type(PyObject* module, PyTypeObject& type, const char* name) {
  if (PyType_Ready(&type) < 0) throw PythonError{};
  Py_INCREF(&type);
  if (PyModule_AddObject(module, name, reinterpret_cast<PyObject*>(&type)) < 0) {
    Py_DECREF(&type);
    throw PythonError{};
  }
}

namespace {

void* gil_release() { return PyGILState_Check() ? static_cast<void*>(PyEval_SaveThread()) : nullptr; }
void gil_reacquire(void* token) { PyEval_RestoreThread(static_cast<PyThreadState*>(token)); }

// ember::warn: ops run with the GIL held.
void warning_handler(const std::string& message) {
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw PythonError{};
}

#define EMBER_FASTCALL(f) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f))

PyMethodDef module_functions[] = {
    {"_set_tensor_class", f_set_tensor_class, METH_O, nullptr},
    {"_set_constants", f_set_constants, METH_VARARGS, nullptr},
    {"_set_layout_ops", f_set_layout_ops, METH_VARARGS, nullptr},
    {"_set_default_device", f_set_default_device, METH_O, "Sets this thread's default device (None: the CPU)."},
    {"_get_default_device", f_get_default_device, METH_NOARGS, "This thread's default device."},
    {"_sparse_shell", f_sparse_shell, METH_VARARGS, nullptr},
    {"_legacy_new", EMBER_FASTCALL(f_legacy_new), METH_VARARGS | METH_KEYWORDS, nullptr},
    {"_from_array", f_from_array, METH_VARARGS, nullptr},
    {"_build_config", f_build_config, METH_NOARGS, nullptr},
    {"_return_type", f_return_type, METH_O, "The named tuple type of ember.return_types.<name>."},
    {"_return_types", f_return_types, METH_NOARGS, "The names in ember.return_types."},
    {"_live_objects", f_live_objects, METH_NOARGS,
     "(TensorImpls, StorageImpls) alive in the process: what the leak tests watch."},
    {"_set_bf16_gemm_path", f_set_bf16_gemm_path, METH_O,
     "Forces the path of bfloat16 products: amx, avx512_bf16, emulated, emulated_amx, convert, or auto."},
    {"_bf16_gemm_path", f_bf16_gemm_path, METH_NOARGS, "The path bfloat16 products take (or the forced one)."},
    {"_release_cached_blocks", f_release_cached_blocks, METH_NOARGS,
     "Returns the allocator's cache of large freed blocks to the system."},
    {"tensor", EMBER_FASTCALL(f_tensor), METH_FASTCALL | METH_KEYWORDS,
     "tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor\n\nA new tensor holding a copy of data (nested "
     "sequences of numbers, a tensor, or a numpy array). The dtype is inferred as torch does: bool, int64, or the "
     "default float dtype.\n>>> ember.tensor([[1, 2], [3, 4]]).dtype\nember.int64"},
    {"get_num_threads", f_get_num_threads, METH_NOARGS, "The number of threads used for intra-op parallelism."},
    {"set_num_threads", f_set_num_threads, METH_O, "set_num_threads(n): threads used for intra-op parallelism."},
    {"get_default_dtype", f_get_default_dtype, METH_NOARGS, "The dtype of float tensors made from Python floats."},
    {"set_default_dtype", f_set_default_dtype, METH_O, "set_default_dtype(d): d must be a floating point dtype."},
    {"set_flush_denormal", f_set_flush_denormal, METH_O,
     "set_flush_denormal(mode): treat denormal floats as zero on this thread; returns True (supported)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "ember._C", "ember's native core.", -1, nullptr};

}  // namespace

void init_module_functions(PyObject* module) {
  if (PyModule_AddFunctions(module, module_functions) < 0) throw PythonError{};
  Owned names(PyList_New(0));
  for (PyMethodDef* table : kGeneratedFunctions) {
    if (PyModule_AddFunctions(module, table) < 0) throw PythonError{};
    for (PyMethodDef* m = table; m->ml_name; ++m) PyList_Append(names.get(), Owned(PyUnicode_FromString(m->ml_name)).get());
  }
  // ember/__init__.py re-exports these: the generated functions are listed once, here.
  PyModule_AddObject(module, "_function_names", PySequence_Tuple(names.get()));
  set_gil_hooks(GilHooks{gil_release, gil_reacquire});
  set_warning_handler(warning_handler);
  // Device extensions (ember._C_cuda) register their entry of the device table through
  // this capsule: see Note [The device table] in core/device.h.
  Owned api(PyCapsule_New(const_cast<DeviceApi*>(device_api()), "ember._C._device_api", nullptr));
  if (!api || PyModule_AddObject(module, "_device_api", api.get()) < 0) throw PythonError{};
  api.release();
}

}  // namespace ember::python

namespace ember::python {
void init_trace(PyObject* module);  // csrc/python/trace.cpp
void init_autocast(PyObject* module);  // csrc/python/autocast.cpp
}

PyMODINIT_FUNC PyInit__C() {
  using namespace ember::python;
  PyObject* module = PyModule_Create(&module_def);
  if (!module) return nullptr;
  try {
    for (auto init : {init_dtypes, init_tensor_type, init_storage_type, init_generator_type, init_module_functions,
                      init_linalg, init_autograd, init_trace, init_dlpack, init_autocast})
      init(module);
  } catch (...) {
    Py_DECREF(module);
    return set_python_error();
  }
  return module;
}
