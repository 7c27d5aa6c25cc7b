// The argument parser behind every generated wrapper. A Signature lists a Python
// overload's parameters; parse_args() matches (args, kwnames) against each overload in
// order, and the typed getters of Args convert the matched objects. Hand-written once;
// the generator only emits Signature tables and getter calls.
#pragma once
#include <Python.h>
#include <optional>
#include <string>
#include <vector>
#include "core/generator.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember::python {

enum class PType : uint8_t {
  Tensor, TensorOrNumber, TensorList, OptionalTensorList, Int, IntList, DimList, Float, Bool, Scalar, DType,
  Device, Generator, Layout, MemoryFormat, String,
};

struct Param {
  const char* name;
  PType type;
  bool optional;     // accepts None
  bool has_default;  // may be omitted
  bool kwonly;
  bool varargs;      // int...: also accepts the ints as separate positional arguments
};

struct Signature {
  const char* name;  // the Python name, for messages
  const char* text;  // "view(int... size)": how error messages show this overload
  const Param* params;
  int nparams;
};

constexpr int kMaxParams = 16;

class Args {
 public:
  // Borrowed references to what the caller passed, by parameter; nullptr when omitted.
  PyObject* obj[kMaxParams];
  // int... given as separate positional arguments: they live here.
  PyObject* const* varargs = nullptr;
  Py_ssize_t nvarargs = 0;
  int varargs_param = -1;

  // A Tensor parameter; a Python number (TensorOrNumber) becomes a wrapped-number tensor.
  const Tensor& tensor(int i) const;
  Tensor tensor_or_undefined(int i) const;
  std::vector<Tensor> tensor_list(int i, bool items_optional) const;
  int64_t to_int(int i) const;
  int64_t to_int(int i, int64_t def) const { return given(i) ? to_int(i) : def; }
  std::optional<int64_t> int_opt(int i) const;
  IntList int_list(int i);
  std::optional<IntList> int_list_opt(int i);
  double to_double(int i) const;
  double to_double(int i, double def) const { return given(i) ? to_double(i) : def; }
  std::optional<double> double_opt(int i) const;
  bool to_bool(int i) const { return obj[i] == Py_True; }
  bool to_bool(int i, bool def) const { return given(i) ? to_bool(i) : def; }
  std::optional<bool> bool_opt(int i) const;
  Scalar scalar(int i) const;
  Scalar scalar(int i, const Scalar& def) const { return given(i) ? scalar(i) : def; }
  std::optional<Scalar> scalar_opt(int i) const;
  ScalarType dtype(int i) const;
  ScalarType dtype(int i, ScalarType def) const { return given(i) ? dtype(i) : def; }
  std::optional<ScalarType> dtype_opt(int i) const;
  GeneratorImpl* generator(int i) const;
  MemoryFormat memory_format(int i) const;
  MemoryFormat memory_format(int i, MemoryFormat def) const { return given(i) ? memory_format(i) : def; }
  std::optional<MemoryFormat> memory_format_opt(int i) const;
  std::string string(int i) const;
  std::string string(int i, const char* def) const { return given(i) ? string(i) : std::string(def); }
  std::optional<std::string> string_opt(int i) const;

  bool given(int i) const { return obj[i] != nullptr && obj[i] != Py_None; }

 private:
  Dims lists_[kMaxParams];
  mutable Tensor numbers_[kMaxParams];
};

// A factory's device= for the api:: call its wrapper makes (Note [The device of an op's
// results], core/device.h): the argument when given; else the default device for a
// factory that has no tensor argument to follow (empty, arange), nothing for one that has
// (empty_like follows self).
class ExplicitDevice {
 public:
  ExplicitDevice(const Args& a, int i, bool takes_tensors);
  ~ExplicitDevice() { t_explicit_device.set = false; }
  ExplicitDevice(const ExplicitDevice&) = delete;
  ExplicitDevice& operator=(const ExplicitDevice&) = delete;

 private:
  void set(Device d) { t_explicit_device = ExplicitDeviceSlot{d, true}; }
};

// A Device from a device argument: a string ("cpu", "meta", "cuda:1"), an ember.device,
// or an index (CUDA's). Asking for CUDA loads ember._C_cuda (ember.cuda._lazy_init), which
// raises torch's errors where CUDA is absent.
Device parse_device(PyObject* o);
// The ember.device object of d (one per device, kept).
PyObject* device_object(Device d);

// Index of the first overload that matches, or -1 with a TypeError set that lists
// what was expected.
int parse_args(const Signature* sigs, int nsigs, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               Args& out);

// Note [Sparse tensors are routed before parsing]
// A sparse COO tensor is an instance of one Python class (ember._sparse.SparseTensor)
// over a shell TensorImpl with its sizes and dtype and no elements, so no dense op may see
// it. Every generated wrapper first asks has_layout_operand() (a type comparison per
// argument, nothing at all before ember._sparse is imported); when it is true,
// route_layout() calls the layout's Python implementation registered under the wrapper's
// Python name (_C._set_layout_ops), or raises torch's NotImplementedError "Could not run
// 'aten::<op>' with arguments from the 'SparseCPU' backend". So the dense path, and the
// (device, dtype) kernel table below it, only ever sees strided tensors: the layout is a
// key picked before the dtype table.
bool has_layout_operand(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
PyObject* route_layout(const char* name, PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
void set_layout_ops(PyTypeObject* type, PyObject* table);

// Conversions shared with hand-written bindings. Each throws ember::Error(Type) when
// the object is of the wrong kind.
bool is_int_like(PyObject* o);
int64_t unpack_int(PyObject* o);
double unpack_double(PyObject* o);
Scalar unpack_scalar(PyObject* o);
bool is_scalar_like(PyObject* o);
// A dtype from an ember dtype object, or Python's float / int / bool types.
std::optional<ScalarType> as_dtype(PyObject* o);
// Fills `out` from a sequence of ints (tuple, list, Size) or returns false.
bool unpack_int_list(PyObject* o, Dims& out);

// Objects the Python package defines and the parser recognizes (ember/_constants.py).
struct PythonConstants {
  PyObject* device_type = nullptr;  // the ember.device class
  PyObject* strided = nullptr;
  PyObject* contiguous_format = nullptr;
  PyObject* preserve_format = nullptr;
  PyObject* channels_last = nullptr;
  PyObject* channels_last_3d = nullptr;
};
extern PythonConstants g_constants;

}  // namespace ember::python
