// The Python objects of ember._C: tensors, storages, dtypes, generators, and the
// conversions between them and the core's C++ objects.
#pragma once
#include <Python.h>
#include <initializer_list>
#include <tuple>
#include <optional>
#include <vector>
#include "core/generator.h"
#include "core/scalar.h"
#include "core/storage.h"
#include "core/tensor.h"

namespace ember::autograd {
class Node;
}

namespace ember::python {

// Note [One Python object per native object]
// A TensorImpl (or StorageImpl, GeneratorImpl) remembers the Python object wrapping it
// (`pyobj`, not owned), so wrapping the same tensor twice gives the same object: an
// in-place method returns `self`, and attributes set on a tensor survive a round trip
// through C++. The object clears the pointer when it dies; an object whose refcount is
// already 0 (weakref callbacks run before dealloc) is never handed out again. Only
// called with the GIL.

struct PyTensor {
  PyObject_HEAD
  Tensor tensor;
};
struct PyStorage {
  PyObject_HEAD
  Storage storage;
};
struct PyGenerator {
  PyObject_HEAD
  Generator generator;
};
struct PyDType {
  PyObject_HEAD
  ScalarType dtype;
};

extern PyTypeObject TensorBaseType;
extern PyTypeObject StorageBaseType;
extern PyTypeObject GeneratorType;
extern PyTypeObject DTypeType;
extern PyTypeObject SizeType;

inline bool is_tensor(PyObject* o) { return PyObject_TypeCheck(o, &TensorBaseType); }
inline const Tensor& unwrap(PyObject* o) { return reinterpret_cast<PyTensor*>(o)->tensor; }
inline bool is_storage(PyObject* o) { return PyObject_TypeCheck(o, &StorageBaseType); }
inline const Storage& unwrap_storage(PyObject* o) { return reinterpret_cast<PyStorage*>(o)->storage; }

// New references; nullptr with a Python error set on failure.
PyObject* wrap(Tensor t);
PyObject* wrap(std::vector<Tensor> ts);  // a tuple
// torch.return_types.<name>: a named tuple type (a struct sequence), made once per name.
PyTypeObject* named_tuple_type(const char* name, std::initializer_list<const char*> fields);
PyObject* wrap_named(PyTypeObject* type, std::tuple<Tensor, Tensor> values);
PyObject* wrap_named(PyTypeObject* type, std::tuple<Tensor, Tensor, Tensor> values);
PyObject* wrap(std::tuple<Tensor, Tensor> values);  // a plain tuple
PyObject* wrap(std::tuple<Tensor, Tensor, Tensor> values);
PyObject* wrap(std::tuple<Tensor, Tensor, Tensor, Tensor> values);
PyObject* wrap(const Scalar& s);
PyObject* wrap(bool b);
PyObject* wrap(int64_t v);
PyObject* wrap(double v);
PyObject* wrap(ScalarType t);  // the dtype object
PyObject* wrap_storage(const Storage& s);
PyObject* wrap_generator(const Generator& g);
// Wraps into a given Python type (a subclass of TensorBase): the legacy constructors.
PyObject* wrap_as(PyTypeObject* type, Tensor t);
PyObject* dtype_object(ScalarType t);  // borrowed
PyObject* make_size(IntList sizes);    // an ember.Size

// Registered by ember/__init__.py: the Python class every returned tensor has.
extern PyTypeObject* g_tensor_class;
extern PyObject* g_cpu_device;

// PyType_Ready, then module.<name> = type; throws PythonError on failure.
void add_type(PyObject* module, PyTypeObject& type, const char* name);

// Autograd (csrc/python/autograd.cpp): a grad_fn as a Python object (None for null),
// the requires_grad= keyword of factories, and the tensor's autograd attributes.
PyObject* wrap_node(autograd::Node* node);
Tensor with_requires_grad(Tensor t, bool flag);
extern PyGetSetDef tensor_autograd_getset[];
extern PyMethodDef tensor_autograd_methods[];
void init_autograd(PyObject* module);

void init_tensor_type(PyObject* module);
void init_tensor_constructors(PyObject* module);
void init_storage_type(PyObject* module);
void init_generator_type(PyObject* module);
void init_dtypes(PyObject* module);
void init_module_functions(PyObject* module);
void init_linalg(PyObject* module);
void init_dlpack(PyObject* module);  // csrc/python/dlpack.cpp
// The [] operator (csrc/python/indexing.cpp).
PyObject* tensor_getitem(PyObject* self, PyObject* key);
int tensor_setitem(PyObject* self, PyObject* key, PyObject* value);
// A StorageImpl deleter for memory a Python object owns (context: the owner, one reference).
void release_python_owner(void* owner, void* data, size_t nbytes);
// A tensor over (share) or copied from an object with numpy's __array_interface__.
Tensor tensor_from_array(PyObject* obj, bool share);
// The legacy constructor (ember.Tensor(2, 3), ember.FloatTensor([1, 2]), ...).
// dtype_fixed: FloatTensor(...) and friends, which refuse a tensor of another dtype.
PyObject* legacy_new(PyTypeObject* type, ScalarType dtype, bool dtype_fixed, PyObject* args, PyObject* kwargs);
// Builds a tensor from Python data (nested sequences, numbers, tensors).
Tensor tensor_from_data(PyObject* data, std::optional<ScalarType> dtype);

}  // namespace ember::python
