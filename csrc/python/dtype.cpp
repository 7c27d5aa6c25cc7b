// ember.dtype objects (one per entry of the generated dtype table) and ember.Size.
#include <string>
#include "core/dtype.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {

PyTypeObject DTypeType = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject SizeType = {PyVarObject_HEAD_INIT(nullptr, 0)};

namespace {

PyObject* g_dtypes[kNumDTypes];

ScalarType dtype_of(PyObject* self) { return reinterpret_cast<PyDType*>(self)->dtype; }

PyObject* dtype_repr(PyObject* self) {
  return PyUnicode_FromFormat("ember.%s", info(dtype_of(self)).name);
}

// Pickled by name: pickle finds ember.<name> again.
PyObject* dtype_reduce(PyObject* self, PyObject*) { return PyUnicode_FromString(info(dtype_of(self)).name); }

PyObject* dtype_is_floating(PyObject* self, void*) { return PyBool_FromLong(is_floating(dtype_of(self))); }
PyObject* dtype_is_signed(PyObject* self, void*) {
  DTypeKind k = info(dtype_of(self)).kind;
  return PyBool_FromLong(k == DTypeKind::Signed || k == DTypeKind::Float || k == DTypeKind::Complex);
}
PyObject* dtype_is_complex(PyObject* self, void*) { return PyBool_FromLong(is_complex(dtype_of(self))); }
PyObject* dtype_itemsize(PyObject* self, void*) { return PyLong_FromLong(info(dtype_of(self)).itemsize); }
PyObject* dtype_legacy(PyObject* self, void*) { return PyUnicode_FromString(info(dtype_of(self)).legacy); }

PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating, nullptr, nullptr, nullptr},
    {"is_signed", dtype_is_signed, nullptr, nullptr, nullptr},
    {"is_complex", dtype_is_complex, nullptr, nullptr, nullptr},
    {"itemsize", dtype_itemsize, nullptr, nullptr, nullptr},
    {"_legacy_name", dtype_legacy, nullptr, "Float for float32: FloatTensor, FloatStorage", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyObject* new_dtype_ref(ScalarType t) {
  PyObject* o = g_dtypes[static_cast<int>(t)];
  Py_INCREF(o);
  return o;
}

// float32.to_complex() is complex64; complex128.to_real() float64; torch's errors elsewhere.
PyObject* dtype_to_complex(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const ScalarType t = dtype_of(self);
    // float16's complex32 is not an ember dtype; bfloat16 has complex64 in torch
    EMBER_CHECK(is_inexact(t) && t != ScalarType::Float16, Runtime, "Unknown Complex ScalarType for ", type_name(t));
    return new_dtype_ref(to_complex(t));
  });
}
PyObject* dtype_to_real(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* { return new_dtype_ref(to_real(dtype_of(self))); });
}

PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, nullptr},
    {"to_complex", dtype_to_complex, METH_NOARGS, nullptr},
    {"to_real", dtype_to_real, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

// ---- Size: a tuple subclass ----

PyObject* size_repr(PyObject* self) {
  Py_ssize_t n = PyTuple_GET_SIZE(self);
  std::string s = "ember.Size([";
  for (Py_ssize_t i = 0; i < n; ++i) {
    Owned item(PyObject_Repr(PyTuple_GET_ITEM(self, i)));
    const char* text = item ? PyUnicode_AsUTF8(item.get()) : nullptr;
    if (!text) return nullptr;
    s += (i ? ", " : "") + std::string(text);
  }
  return PyUnicode_FromString((s + "])").c_str());
}

PyObject* size_from_tuple(PyObject* tuple) {
  Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  PyObject* out = SizeType.tp_alloc(&SizeType, n);
  if (!out) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(tuple, i);
    Py_INCREF(item);
    PyTuple_SET_ITEM(out, i, item);
  }
  return out;
}

PyObject* size_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  PyObject* seq = nullptr;
  static const char* names[] = {"sizes", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Size", const_cast<char**>(names), &seq)) return nullptr;
  Owned tuple(seq ? PySequence_Tuple(seq) : PyTuple_New(0));
  if (!tuple) return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(tuple.get());
  Owned ints(PyTuple_New(n));
  if (!ints) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(tuple.get(), i);
    PyObject* value = PyIndex_Check(item) ? PyNumber_Index(item) : nullptr;
    if (!value) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "ember.Size() takes an iterable of 'int' (item %zd is '%s')", i,
                   Py_TYPE(item)->tp_name);
      return nullptr;
    }
    PyTuple_SET_ITEM(ints.get(), i, value);
  }
  return size_from_tuple(ints.get());
}

PyObject* size_subscript(PyObject* self, PyObject* key) {
  PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
  if (r && PySlice_Check(key)) {
    Owned plain(r);
    return size_from_tuple(plain.get());
  }
  return r;
}

PyObject* size_numel(PyObject* self, PyObject*) {
  Owned n(PyLong_FromLong(1));  // Python ints: no overflow
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self) && n; ++i)
    n = Owned(PyNumber_Multiply(n.get(), PyTuple_GET_ITEM(self, i)));
  return n.release();
}

PyObject* size_reduce(PyObject* self, PyObject*) {
  Owned plain(PySequence_Tuple(self));
  if (!plain) return nullptr;
  return Py_BuildValue("(O(O))", reinterpret_cast<PyObject*>(&SizeType), plain.get());
}

PyObject* size_concat(PyObject* a, PyObject* b) {
  if (!PyTuple_Check(a) || !PyTuple_Check(b)) Py_RETURN_NOTIMPLEMENTED;
  Owned joined(PySequence_Concat(a, b));
  if (!joined) return nullptr;
  return size_from_tuple(joined.get());
}

PyObject* size_repeat(PyObject* a, PyObject* b) {
  PyObject* seq = PyTuple_Check(a) ? a : b;
  PyObject* count = seq == a ? b : a;
  if (!PyTuple_Check(seq) || !PyIndex_Check(count)) Py_RETURN_NOTIMPLEMENTED;
  Owned repeated(PyNumber_Multiply(Owned(PySequence_Tuple(seq)).get(), count));
  if (!repeated) return nullptr;
  return size_from_tuple(repeated.get());
}

PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "The product of the sizes."},
    {"__reduce__", size_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};
PyMappingMethods size_as_mapping = {};
PyNumberMethods size_as_number = {};

}  // namespace

PyObject* dtype_object(ScalarType t) { return g_dtypes[static_cast<int>(t)]; }

PyObject* wrap(ScalarType t) {
  PyObject* d = dtype_object(t);
  Py_XINCREF(d);
  return d;
}

PyObject* make_size(IntList sizes) {
  PyObject* out = SizeType.tp_alloc(&SizeType, static_cast<Py_ssize_t>(sizes.size()));
  if (!out) return nullptr;
  for (size_t i = 0; i < sizes.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(sizes[i]);
    if (!v) {
      Py_DECREF(out);
      return nullptr;
    }
    PyTuple_SET_ITEM(out, i, v);
  }
  return out;
}

void init_dtypes(PyObject* module) {
  PyTypeObject& t = DTypeType;
  t.tp_name = "ember.dtype";
  t.tp_basicsize = sizeof(PyDType);
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "An element type: ember.float32, ember.int64, ...";
  t.tp_repr = dtype_repr;
  t.tp_getset = dtype_getset;
  t.tp_methods = dtype_methods;
  add_type(module, t, "dtype");
  // One object per dtype, added under its name and aliases; ember/__init__.py re-exports them.
  Owned names(PyList_New(0));
  for (int i = 0; i < kNumDTypes; ++i) {
    auto* d = PyObject_New(PyDType, &DTypeType);
    if (!d) throw PythonError{};
    d->dtype = static_cast<ScalarType>(i);
    g_dtypes[i] = reinterpret_cast<PyObject*>(d);
    const DTypeInfo& di = kDTypes[i];
    Py_INCREF(g_dtypes[i]);
    PyModule_AddObject(module, di.name, g_dtypes[i]);
    PyList_Append(names.get(), Owned(PyUnicode_FromString(di.name)).get());
    for (const char* alias : di.aliases) {
      if (!alias) continue;
      Py_INCREF(g_dtypes[i]);
      PyModule_AddObject(module, alias, g_dtypes[i]);
      PyList_Append(names.get(), Owned(PyUnicode_FromString(alias)).get());
    }
  }
  PyModule_AddObject(module, "_dtype_names", PySequence_Tuple(names.get()));

  size_as_mapping.mp_subscript = size_subscript;
  size_as_mapping.mp_length = PyTuple_Type.tp_as_mapping->mp_length;
  size_as_number.nb_add = size_concat;
  size_as_number.nb_multiply = size_repeat;
  PyTypeObject& s = SizeType;
  s.tp_name = "ember.Size";
  s.tp_base = &PyTuple_Type;
  s.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_TUPLE_SUBCLASS;
  s.tp_doc = "The sizes of a tensor: a tuple of ints.";
  s.tp_new = size_new;
  s.tp_repr = size_repr;
  s.tp_methods = size_methods;
  s.tp_as_mapping = &size_as_mapping;
  s.tp_as_number = &size_as_number;
  add_type(module, s, "Size");
}

}  // namespace ember::python
