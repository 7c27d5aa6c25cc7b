// ember._C.StorageBase: bytes that tensors view. The rest of the storage API
// (UntypedStorage, TypedStorage and the legacy FloatStorage, ...) is Python over this:
// ember/storage.py.
#include <cstring>
#include "core/storage.h"
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {

PyTypeObject StorageBaseType = {PyVarObject_HEAD_INIT(nullptr, 0)};

namespace {

const Storage& storage_of(PyObject* self) { return unwrap_storage(self); }

PyObject* wrap_storage_as(PyTypeObject* type, Storage s) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  new (&reinterpret_cast<PyStorage*>(obj)->storage) Storage(std::move(s));
  reinterpret_cast<PyStorage*>(obj)->storage->pyobj = obj;
  return obj;
}

PyTypeObject* g_storage_class = &StorageBaseType;

void storage_dealloc(PyObject* self) {
  auto* s = reinterpret_cast<PyStorage*>(self);
  if (s->storage && s->storage->pyobj == self) s->storage->pyobj = nullptr;
  s->storage.~Storage();
  Py_TYPE(self)->tp_free(self);
}

// StorageBase(nbytes=0): uninitialized bytes.
PyObject* storage_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  Py_ssize_t nbytes = 0;
  static const char* names[] = {"nbytes", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|n", const_cast<char**>(names), &nbytes)) return nullptr;
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(nbytes >= 0, Runtime, "Storage: expected a non-negative size, got ", nbytes);
    return wrap_storage_as(type, make_ref<StorageImpl>(static_cast<size_t>(nbytes)));
  });
}

PyObject* s_nbytes(PyObject* self, PyObject*) { return PyLong_FromSize_t(storage_of(self)->nbytes()); }
PyObject* s_device(PyObject* self, PyObject*) {
  return guarded([&] { return device_object(storage_of(self)->device()); });
}

// The device's address (0 on meta, as torch), never read here.
PyObject* s_data_ptr(PyObject* self, PyObject*) { return PyLong_FromVoidPtr(storage_of(self)->device_data()); }
PyObject* s_resizable(PyObject* self, PyObject*) { return PyBool_FromLong(storage_of(self)->resizable()); }

PyObject* s_resize_(PyObject* self, PyObject* arg) {
  return guarded([&]() -> PyObject* {
    int64_t n = unpack_int(arg);
    EMBER_CHECK(n >= 0, Runtime, "resize_(): expected a non-negative size, got ", n);
    storage_of(self)->resize(static_cast<size_t>(n));
    Py_INCREF(self);
    return self;
  });
}

// _tensor(dtype): a 1-D tensor of dtype over the whole storage (what the Python side
// builds fill_, copy_, tolist, ... on).
PyObject* s_tensor(PyObject* self, PyObject* arg) {
  return guarded([&]() -> PyObject* {
    auto dt = as_dtype(arg);
    EMBER_CHECK(dt.has_value(), Type, "_tensor(): expected a dtype");
    const Storage& s = storage_of(self);
    int64_t n = static_cast<int64_t>(s->nbytes()) / itemsize(*dt);
    return wrap(Tensor(make_ref<TensorImpl>(s, 0, Dims{n}, Dims{1}, *dt)));
  });
}

// _copy_from_buffer(obj, offset): copies bytes from a buffer-protocol object.
PyObject* s_copy_from_buffer(PyObject* self, PyObject* args) {
  PyObject* obj;
  Py_ssize_t offset = 0;
  if (!PyArg_ParseTuple(args, "On", &obj, &offset)) return nullptr;
  Py_buffer view;
  if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return nullptr;
  const Storage& s = storage_of(self);
  bool fits = offset >= 0 && offset <= view.len &&
              static_cast<size_t>(view.len - offset) >= s->nbytes();
  if (!s->device().is_cpu()) {
    PyBuffer_Release(&view);
    PyErr_SetString(PyExc_RuntimeError, "_copy_from_buffer: the storage is not on the CPU");
    return nullptr;
  }
  if (fits && s->nbytes()) std::memcpy(s->data(), static_cast<const char*>(view.buf) + offset, s->nbytes());
  PyBuffer_Release(&view);
  if (!fits) {
    PyErr_Format(PyExc_ValueError, "buffer of %zd bytes from offset %zd is shorter than the %zu bytes needed",
                 view.len, offset, s->nbytes());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* s_to_bytes(PyObject* self, PyObject*) {
  const Storage& s = storage_of(self);
  return guarded([&] { return PyBytes_FromStringAndSize(s->data(), static_cast<Py_ssize_t>(s->nbytes())); });
}

// _from_file(filename, shared, nbytes) (classmethod): a memory-mapped storage.
PyObject* s_from_file(PyObject* cls, PyObject* args) {
  const char* filename;
  int shared;
  Py_ssize_t nbytes;
  if (!PyArg_ParseTuple(args, "spn", &filename, &shared, &nbytes)) return nullptr;
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(nbytes >= 0, Runtime, "from_file(): expected a non-negative size, got ", nbytes);
    Storage s = map_file(filename, shared != 0, static_cast<size_t>(nbytes));
    return wrap_storage_as(reinterpret_cast<PyTypeObject*>(cls), std::move(s));
  });
}

// _from_pointer(address, nbytes, owner) (classmethod): a storage over memory that owner keeps alive.
PyObject* s_from_pointer(PyObject* cls, PyObject* args) {
  PyObject* address;
  Py_ssize_t nbytes;
  PyObject* owner;
  if (!PyArg_ParseTuple(args, "OnO", &address, &nbytes, &owner)) return nullptr;
  void* p = PyLong_AsVoidPtr(address);
  if (PyErr_Occurred()) return nullptr;
  if (nbytes < 0) {
    PyErr_SetString(PyExc_ValueError, "_from_pointer(): negative size");
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    Py_INCREF(owner);
    Storage s = make_ref<StorageImpl>(p, static_cast<size_t>(nbytes), &release_python_owner, owner);
    return wrap_storage_as(reinterpret_cast<PyTypeObject*>(cls), std::move(s));
  });
}

PyObject* s_share_memory_(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    storage_of(self)->share_memory();
    Py_INCREF(self);
    return self;
  });
}

PyObject* s_is_shared(PyObject* self, PyObject*) { return PyBool_FromLong(storage_of(self)->is_shared()); }

// _share_fd_cpu_() -> (fd, nbytes): moves the storage to shared memory (when it is not
// there yet) and returns its memory file's descriptor, still owned by the storage (-1 when
// empty), as torch's file_descriptor strategy does.
PyObject* s_share_fd_cpu_(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const Storage& s = storage_of(self);
    s->share_memory();
    return Py_BuildValue("(in)", s->shared_fd(), static_cast<Py_ssize_t>(s->nbytes()));
  });
}

// _new_shared_fd_cpu(fd, nbytes) (classmethod): maps shared memory received as fd. The
// storage owns a dup of fd; the caller still owns (and closes) fd.
PyObject* s_new_shared_fd_cpu(PyObject* cls, PyObject* args) {
  int fd;
  Py_ssize_t nbytes;
  if (!PyArg_ParseTuple(args, "in", &fd, &nbytes)) return nullptr;
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(nbytes >= 0, Runtime, "_new_shared_fd_cpu(): expected a non-negative size, got ", nbytes);
    Storage s = map_shared_fd(fd, static_cast<size_t>(nbytes));
    return wrap_storage_as(reinterpret_cast<PyTypeObject*>(cls), std::move(s));
  });
}

void release_parent(void* parent, void*, size_t) { static_cast<StorageImpl*>(parent)->release(); }

// _slice(start, stop): a storage over bytes [start, stop) of this one, sharing them.
PyObject* s_slice(PyObject* self, PyObject* args) {
  Py_ssize_t start, stop;
  if (!PyArg_ParseTuple(args, "nn", &start, &stop)) return nullptr;
  return guarded([&]() -> PyObject* {
    const Storage& s = storage_of(self);
    EMBER_CHECK(0 <= start && start <= stop && static_cast<size_t>(stop) <= s->nbytes(), Index,
                "storage slice [", start, ":", stop, "] out of range for storage of size ", s->nbytes());
    s->set_resizable(false);  // the slice holds a pointer into it
    s->retain();              // released by the slice's deleter
    Storage part = make_ref<StorageImpl>(s->data() ? s->data() + start : nullptr, static_cast<size_t>(stop - start),
                                         &release_parent, s.get());
    return wrap_storage_as(Py_TYPE(self), std::move(part));
  });
}

PyObject* s_set_class(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &StorageBaseType)) {
    PyErr_SetString(PyExc_TypeError, "expected a subclass of StorageBase");
    return nullptr;
  }
  Py_INCREF(cls);
  g_storage_class = reinterpret_cast<PyTypeObject*>(cls);
  Py_RETURN_NONE;
}

PyMethodDef storage_methods[] = {
    {"nbytes", s_nbytes, METH_NOARGS, "The size in bytes."},
    {"data_ptr", s_data_ptr, METH_NOARGS, "The address of the first byte."},
    {"_device", s_device, METH_NOARGS, "The device of the bytes."},
    {"resizable", s_resizable, METH_NOARGS, "False for memory owned elsewhere (numpy, a mapped file)."},
    {"resize_", s_resize_, METH_O, "resize_(nbytes): reallocates, keeping the common prefix."},
    {"_tensor", s_tensor, METH_O, "_tensor(dtype): a 1-D tensor of dtype over the whole storage."},
    {"_copy_from_buffer", s_copy_from_buffer, METH_VARARGS, nullptr},
    {"_to_bytes", s_to_bytes, METH_NOARGS, nullptr},
    {"_slice", s_slice, METH_VARARGS, "_slice(start, stop): a storage sharing bytes [start, stop)."},
    {"share_memory_", s_share_memory_, METH_NOARGS,
     "Moves the storage's bytes into shared memory, in place (a no-op when already shared)."},
    {"is_shared", s_is_shared, METH_NOARGS, "True once the bytes live in shared memory."},
    {"_share_fd_cpu_", s_share_fd_cpu_, METH_NOARGS, "_share_fd_cpu_() -> (fd, nbytes); fd stays the storage's."},
    {"_new_shared_fd_cpu", s_new_shared_fd_cpu, METH_VARARGS | METH_CLASS,
     "_new_shared_fd_cpu(fd, nbytes): maps received shared memory (the storage owns a dup of fd)."},
    {"_from_file", s_from_file, METH_VARARGS | METH_CLASS, nullptr},
    {"_from_pointer", s_from_pointer, METH_VARARGS | METH_CLASS, nullptr},
    {"_set_storage_class", s_set_class, METH_O | METH_STATIC, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void release_python_owner(void* owner, void*, size_t) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(owner));
  PyGILState_Release(gil);
}

PyObject* wrap_storage(const Storage& s) {
  auto* existing = static_cast<PyObject*>(s->pyobj);
  if (existing && Py_REFCNT(existing) > 0) {  // 0: being destroyed (see wrap(Tensor))
    Py_INCREF(existing);
    return existing;
  }
  return wrap_storage_as(g_storage_class, s);
}

void init_storage_type(PyObject* module) {
  PyTypeObject& t = StorageBaseType;
  t.tp_name = "ember._C.StorageBase";
  t.tp_basicsize = sizeof(PyStorage);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t.tp_doc = "Bytes that tensors view (the native base of ember.UntypedStorage).";
  t.tp_dealloc = storage_dealloc;
  t.tp_new = storage_new;
  t.tp_methods = storage_methods;
  add_type(module, t, "StorageBase");
}

}  // namespace ember::python
