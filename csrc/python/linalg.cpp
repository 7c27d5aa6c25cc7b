// What linalg needs from Python: where OpenBLAS is (asked on first use, from
// ember.linalg._blas_library_path, so `import ember` never imports or loads it) and the
// LinAlgError exception type.
#include "kernels/blas.h"
#include "python/binding.h"

namespace ember::python {
namespace {

// Runs on the first BLAS call, from whichever thread makes it.
std::string locate_blas() {
  PyGILState_STATE gil = PyGILState_Ensure();
  std::string path;
  Owned module(PyImport_ImportModule("ember.linalg"));
  Owned result(module ? PyObject_CallMethod(module.get(), "_blas_library_path", nullptr) : nullptr);
  if (result && PyUnicode_Check(result.get())) {
    const char* s = PyUnicode_AsUTF8(result.get());
    if (s) path = s;
  }
  PyErr_Clear();  // not found: blas::library() raises its own error
  PyGILState_Release(gil);
  return path;
}

}  // namespace

PyObject* linalg_error_type() {
  static PyObject* type = PyErr_NewException("ember._C._LinAlgError", PyExc_RuntimeError,
                                             nullptr);  // created under the GIL, never freed
  return type;
}

void init_linalg(PyObject* module) {
  blas::set_locator(locate_blas);
  PyObject* type = check(linalg_error_type());
  Py_INCREF(type);
  if (PyModule_AddObject(module, "_LinAlgError", type) < 0) {
    Py_DECREF(type);
    throw PythonError{};
  }
}

}  // namespace ember::python
