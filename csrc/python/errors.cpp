#include "python/errors.h"

#include <exception>
#include <new>
#include "core/error.h"
#include "core/linalg_error.h"

namespace ember::python {

PyObject* set_python_error() {
  try {
    throw;
  } catch (const PythonError&) {
    // already set
  } catch (const LinAlgError& e) {
    PyObject* type = linalg_error_type();
    PyErr_SetString(type ? type : PyExc_RuntimeError, e.what());
  } catch (const Error& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.kind()) {
      case ErrorKind::Index: type = PyExc_IndexError; break;
      case ErrorKind::Type: type = PyExc_TypeError; break;
      case ErrorKind::Value: type = PyExc_ValueError; break;
      case ErrorKind::NotImplemented: type = PyExc_NotImplementedError; break;
      case ErrorKind::Overflow: type = PyExc_OverflowError; break;
      case ErrorKind::Runtime: break;
    }
    PyErr_SetString(type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_RuntimeError, "not enough memory");
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
  return nullptr;
}

int set_python_error_int() {
  set_python_error();
  return -1;
}

}  // namespace ember::python
