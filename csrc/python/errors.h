// Translating C++ errors into Python exceptions: every generated entry point ends in
// `catch (...) { return set_python_error(); }`, and hand-written ones run their body in
// guarded(), which does the same.
#pragma once
#include <Python.h>
#include <utility>

namespace ember::python {

// Thrown when a CPython call failed and left its exception set: pass it through.
struct PythonError {};

// Sets the Python exception for the in-flight C++ exception; returns nullptr.
PyObject* set_python_error();
// ember._C._LinAlgError (ember.linalg.LinAlgError), raised for C++ LinAlgErrors.
PyObject* linalg_error_type();
// The same for slots returning int.
int set_python_error_int();

// body(), or nullptr with the Python exception set when it throws: the frame of a
// hand-written entry point, `return guarded([&]() -> PyObject* { ... });`.
template <class F>
PyObject* guarded(F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return set_python_error();
  }
}
// The same for slots returning int (-1 with the exception set).
template <class F>
int guarded_int(F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return set_python_error_int();
  }
}

// Throws PythonError when a CPython call returned null.
inline PyObject* check(PyObject* o) {
  if (!o) throw PythonError{};
  return o;
}

// An owned reference, released on scope exit.
class Owned {
 public:
  Owned() = default;
  explicit Owned(PyObject* o) : o_(o) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& other) noexcept : o_(other.o_) { other.o_ = nullptr; }
  Owned& operator=(Owned&& other) noexcept {
    std::swap(o_, other.o_);
    return *this;
  }
  ~Owned() { Py_XDECREF(o_); }
  PyObject* get() const { return o_; }
  PyObject* release() {
    PyObject* o = o_;
    o_ = nullptr;
    return o;
  }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  PyObject* o_ = nullptr;
};

}  // namespace ember::python
