// Autocast (Note [Autocast]): the casts, their cache, and ember._C's autocast state
// functions that ember/amp/autocast_mode.py calls.
//
// Note [Autocast]
// torch's CPU autocast casts the floating arguments of listed ops: matmul-like ops and
// convolutions to the autocast dtype, losses/linalg/fft to float32, cat/stack/index_copy
// to their widest dtype. ember declares the policy on the op (`autocast:` in
// declarations/ops/*.yaml) and the generator emits an AutocastArgs in its wrapper, so
// functions, methods and nn.functional all cast, while ops called from C++ (an op's
// body, backward formulas) never do: as in torch, an autocast op's inner ops do not
// autocast again. Ops composed in Python are decorated (ember/_autocast.py), which
// casts and runs the body with CPU autocast off. The cast is `to` through the api::
// layer, so gradients flow back in the parameters' dtype.
#include "python/autocast.h"

#include <unordered_map>

#include "api_decl.h"
#include "autograd/meta.h"
#include "python/binding.h"

namespace ember::python {

namespace {

struct CacheEntry {
  Tensor source;  // held so the key's address is not reused within the block
  Tensor cast;
};
thread_local std::unordered_map<const TensorImpl*, CacheEntry> t_cache;

}  // namespace

bool autocast_eligible(const Tensor& t) {
  return t.defined() && is_floating(t.dtype()) && t.dtype() != ScalarType::Float64 && t.is_cpu() &&
         !t.impl()->wrapped_number;
}

Tensor autocast_cast(const Tensor& t, ScalarType dtype) {
  if (!autocast_eligible(t) || t.dtype() == dtype) return t;
  const autograd::AutogradMeta* m = t.defined() ? autograd::meta(t) : nullptr;
  bool cache = t_autocast.cache_enabled && dtype == t_autocast.dtype[kAutocastCpu] && t.dtype() == ScalarType::Float32 &&
               m && m->requires_grad && !m->grad_fn && !m->base.defined();
  if (cache) {
    auto it = t_cache.find(t.impl());
    if (it != t_cache.end()) return it->second.cast;
  }
  Tensor cast = api::to_dtype(t, dtype, false, false, std::nullopt);
  if (cache) t_cache.emplace(t.impl(), CacheEntry{t, cast});
  return cast;
}

void autocast_clear_cache() { t_cache.clear(); }

const Tensor& AutocastArgs::keep(Tensor t) {
  EMBER_CHECK(kept_ < int(casts_.size()), Runtime, "autocast: too many tensor arguments");
  casts_[kept_] = std::move(t);
  return casts_[kept_++];
}

namespace {

int device_index(PyObject* o) {
  long i = PyLong_AsLong(o);
  if (i == -1 && PyErr_Occurred()) throw PythonError{};
  EMBER_CHECK(i >= 0 && i < kAutocastDeviceTypes, Value, "autocast: bad device type index");
  return int(i);
}

PyObject* f_is_enabled(PyObject*, PyObject* arg) {
  try {
    return PyBool_FromLong(t_autocast.enabled[device_index(arg)]);
  } catch (...) {
    return set_python_error();
  }
}

PyObject* f_cpu_enabled(PyObject*, PyObject*) { return PyBool_FromLong(t_autocast.enabled[kAutocastCpu]); }

PyObject* f_set_enabled(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  try {
    EMBER_CHECK(nargs == 2, Type, "_autocast_set_enabled(device_index, enabled)");
    t_autocast.enabled[device_index(args[0])] = PyObject_IsTrue(args[1]);
    Py_RETURN_NONE;
  } catch (...) {
    return set_python_error();
  }
}

PyObject* f_get_dtype(PyObject*, PyObject* arg) {
  try {
    return wrap(t_autocast.dtype[device_index(arg)]);
  } catch (...) {
    return set_python_error();
  }
}

PyObject* f_set_dtype(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  try {
    EMBER_CHECK(nargs == 2, Type, "_autocast_set_dtype(device_index, dtype)");
    std::optional<ScalarType> d = as_dtype(args[1]);
    EMBER_CHECK(d.has_value(), Type, "autocast: dtype must be an ember.dtype");
    t_autocast.dtype[device_index(args[0])] = *d;
    Py_RETURN_NONE;
  } catch (...) {
    return set_python_error();
  }
}

PyObject* f_cache_enabled(PyObject*, PyObject*) { return PyBool_FromLong(t_autocast.cache_enabled); }

PyObject* f_set_cache_enabled(PyObject*, PyObject* arg) {
  t_autocast.cache_enabled = PyObject_IsTrue(arg);
  Py_RETURN_NONE;
}

PyObject* f_increment_nesting(PyObject*, PyObject*) { return PyLong_FromLong(++t_autocast.nesting); }

PyObject* f_decrement_nesting(PyObject*, PyObject*) { return PyLong_FromLong(--t_autocast.nesting); }

PyObject* f_clear_cache(PyObject*, PyObject*) {
  autocast_clear_cache();
  Py_RETURN_NONE;
}

// _autocast_cast(policy, values): values (a tuple) with each tensor, and each tensor of a
// list or tuple, cast as the policy says; everything else as it was. For ops composed in
// Python (ember/_autocast.py). Call only while CPU autocast is enabled.
PyObject* f_cast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  try {
    EMBER_CHECK(nargs == 2 && PyTuple_Check(args[1]), Type, "_autocast_cast(policy, values: tuple)");
    long policy = PyLong_AsLong(args[0]);
    if (policy == -1 && PyErr_Occurred()) throw PythonError{};
    PyObject* values = args[1];
    Py_ssize_t n = PyTuple_GET_SIZE(values);
    auto is_seq = [](PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); };
    ScalarType dtype = policy == int(AutocastPolicy::fp32) ? ScalarType::Float32 : t_autocast.dtype[kAutocastCpu];
    auto visit = [&](auto&& fn) {
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* v = PyTuple_GET_ITEM(values, i);
        if (is_tensor(v)) fn(unwrap(v));
        else if (is_seq(v))
          for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(v); ++k) {
            PyObject* item = PySequence_Fast_ITEMS(v)[k];
            if (is_tensor(item)) fn(unwrap(item));
          }
      }
    };
    if (policy == int(AutocastPolicy::promote))
      visit([&](const Tensor& t) {
        if (autocast_eligible(t)) dtype = promote_types(dtype, t.dtype());
      });
    auto cast_obj = [&](PyObject* v) -> PyObject* {
      if (!is_tensor(v)) return Py_NewRef(v);
      const Tensor& t = unwrap(v);
      Tensor c = autocast_cast(t, dtype);
      return c.is_same(t) ? Py_NewRef(v) : wrap(std::move(c));
    };
    Owned out(PyTuple_New(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* v = PyTuple_GET_ITEM(values, i);
      PyObject* r;
      if (is_seq(v)) {
        Py_ssize_t m = PySequence_Fast_GET_SIZE(v);
        r = PyList_Check(v) ? PyList_New(m) : PyTuple_New(m);
        if (!r) throw PythonError{};
        for (Py_ssize_t k = 0; k < m; ++k) {
          PyObject* c = cast_obj(PySequence_Fast_ITEMS(v)[k]);
          if (!c) { Py_DECREF(r); throw PythonError{}; }
          if (PyList_Check(r)) PyList_SET_ITEM(r, k, c);
          else PyTuple_SET_ITEM(r, k, c);
        }
      } else {
        r = cast_obj(v);
        if (!r) throw PythonError{};
      }
      PyTuple_SET_ITEM(out.get(), i, r);
    }
    return out.release();
  } catch (...) {
    return set_python_error();
  }
}

PyMethodDef autocast_functions[] = {
    {"_autocast_is_enabled", f_is_enabled, METH_O, "_autocast_is_enabled(device_index): this thread's flag."},
    {"_autocast_cpu_enabled", f_cpu_enabled, METH_NOARGS, "Whether CPU autocast is on in this thread."},
    {"_autocast_set_enabled", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f_set_enabled)),
     METH_FASTCALL, nullptr},
    {"_autocast_get_dtype", f_get_dtype, METH_O, "_autocast_get_dtype(device_index): this thread's dtype."},
    {"_autocast_set_dtype", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f_set_dtype)), METH_FASTCALL,
     nullptr},
    {"_autocast_cache_enabled", f_cache_enabled, METH_NOARGS, nullptr},
    {"_autocast_set_cache_enabled", f_set_cache_enabled, METH_O, nullptr},
    {"_autocast_increment_nesting", f_increment_nesting, METH_NOARGS, nullptr},
    {"_autocast_decrement_nesting", f_decrement_nesting, METH_NOARGS, nullptr},
    {"_autocast_clear_cache", f_clear_cache, METH_NOARGS, "Drops this thread's cached autocast casts."},
    {"_autocast_cast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f_cast)), METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_autocast(PyObject* module) {
  if (PyModule_AddFunctions(module, autocast_functions) < 0) throw PythonError{};
}

}  // namespace ember::python
