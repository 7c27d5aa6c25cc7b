// The Python face of the trace hook (see Note [The trace hook]): _trace_start(callback)
// makes every outermost api:: call report to callback(op, names, args, outputs, inplace),
// with the arguments as Python objects; _trace_stop() ends it. ember/onnx is the user.
#include <type_traits>
#include "autograd/trace.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {
namespace {

PyObject* g_callback = nullptr;  // owned while a trace runs

PyObject* to_python(const trace::Arg& a) {
  return std::visit(
      [](const auto& v) -> PyObject* {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          Py_RETURN_NONE;
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          Owned list(check(PyList_New(static_cast<Py_ssize_t>(v.size()))));
          for (size_t i = 0; i < v.size(); ++i)
            PyList_SET_ITEM(list.get(), i, v[i].defined() ? check(wrap(v[i])) : Py_NewRef(Py_None));
          return list.release();
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          Owned tuple(check(PyTuple_New(static_cast<Py_ssize_t>(v.size()))));
          for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(tuple.get(), i, check(PyLong_FromLongLong(v[i])));
          return tuple.release();
        } else if constexpr (std::is_same_v<T, std::string>) {
          return PyUnicode_FromStringAndSize(v.data(), static_cast<Py_ssize_t>(v.size()));
        } else if constexpr (std::is_same_v<T, MemoryFormat>) {
          static const char* const names[] = {"preserve_format", "contiguous_format", "channels_last",
                                              "channels_last_3d"};
          return PyUnicode_FromString(names[static_cast<int>(v)]);
        } else {
          return wrap(v);
        }
      },
      a);
}

void sink(const char* op, const char* names, std::vector<trace::Arg>& args, std::vector<Tensor>& outputs,
          bool inplace) {
  PyGILState_STATE gil = PyGILState_Ensure();
  bool failed = false;
  try {
    if (g_callback) {
      Owned py_args(check(PyTuple_New(static_cast<Py_ssize_t>(args.size()))));
      for (size_t i = 0; i < args.size(); ++i) PyTuple_SET_ITEM(py_args.get(), i, check(to_python(args[i])));
      Owned py_outs(check(PyTuple_New(static_cast<Py_ssize_t>(outputs.size()))));
      for (size_t i = 0; i < outputs.size(); ++i)
        PyTuple_SET_ITEM(py_outs.get(), i, outputs[i].defined() ? check(wrap(outputs[i])) : Py_NewRef(Py_None));
      Owned r(PyObject_CallFunction(g_callback, "ssOOO", op, names, py_args.get(), py_outs.get(),
                                    inplace ? Py_True : Py_False));
      failed = !r;
    }
  } catch (const PythonError&) {
    failed = true;
  }
  PyGILState_Release(gil);
  if (failed) throw PythonError{};  // the callback's exception stays set: the op's caller raises it
}

PyObject* f_trace_start(PyObject*, PyObject* callback) {
  if (g_callback) {
    PyErr_SetString(PyExc_RuntimeError, "_trace_start(): a trace is already running");
    return nullptr;
  }
  if (!PyCallable_Check(callback)) {
    PyErr_SetString(PyExc_TypeError, "_trace_start(): expected a callable");
    return nullptr;
  }
  g_callback = Py_NewRef(callback);
  trace::set_sink(sink);
  Py_RETURN_NONE;
}

PyObject* f_trace_stop(PyObject*, PyObject*) {
  trace::set_sink(nullptr);
  Py_CLEAR(g_callback);
  Py_RETURN_NONE;
}

PyObject* f_trace_active(PyObject*, PyObject*) { return PyBool_FromLong(trace::active()); }

PyMethodDef trace_functions[] = {
    {"_trace_start", f_trace_start, METH_O,
     "_trace_start(callback): report each op call to callback(op, names, args, outputs, inplace)."},
    {"_trace_stop", f_trace_stop, METH_NOARGS, "Ends the trace _trace_start began."},
    {"_trace_active", f_trace_active, METH_NOARGS, "Whether a trace is running."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_trace(PyObject* module) {
  if (PyModule_AddFunctions(module, trace_functions) < 0) throw PythonError{};
}

}  // namespace ember::python
