// ember.Generator: a random stream (csrc/core/generator.h), and ember._C.default_generator.
#include <cstring>
#include "core/generator.h"
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {

PyTypeObject GeneratorType = {PyVarObject_HEAD_INIT(nullptr, 0)};

namespace {

GeneratorImpl& gen_of(PyObject* self) { return *reinterpret_cast<PyGenerator*>(self)->generator; }

PyObject* wrap_generator_as(PyTypeObject* type, Generator g) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  new (&reinterpret_cast<PyGenerator*>(obj)->generator) Generator(std::move(g));
  reinterpret_cast<PyGenerator*>(obj)->generator->pyobj = obj;
  return obj;
}

void generator_dealloc(PyObject* self) {
  auto* g = reinterpret_cast<PyGenerator*>(self);
  if (g->generator && g->generator->pyobj == self) g->generator->pyobj = nullptr;
  g->generator.~Generator();
  Py_TYPE(self)->tp_free(self);
}

PyObject* generator_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* device = nullptr;
  static const char* names[] = {"device", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", const_cast<char**>(names), &device)) return nullptr;
  if (device && device != Py_None) {
    Owned text(PyObject_Str(device));
    if (!text) return nullptr;
    if (PyUnicode_CompareWithASCIIString(text.get(), "cpu") != 0) {
      PyErr_Format(PyExc_RuntimeError, "ember runs on the CPU only: device '%U' is not available", text.get());
      return nullptr;
    }
  }
  return wrap_generator_as(type, make_ref<GeneratorImpl>());
}

// Seeds in [-2**63, 2**64) are taken modulo 2**64, as torch does.
PyObject* g_manual_seed(PyObject* self, PyObject* seed) {
  if (!PyLong_Check(seed)) {
    PyErr_Format(PyExc_RuntimeError, "manual_seed expected a long, but got %s", Py_TYPE(seed)->tp_name);
    return nullptr;
  }
  unsigned long long value;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(seed, &overflow);
  if (overflow > 0) {
    value = PyLong_AsUnsignedLongLong(seed);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
      return nullptr;
    }
  } else if (overflow < 0) {
    PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
    return nullptr;
  } else {
    value = static_cast<unsigned long long>(v);
  }
  gen_of(self).manual_seed(value);
  Py_INCREF(self);
  return self;
}

PyObject* g_seed(PyObject* self, PyObject*) {
  // std::random_device may throw
  return guarded([&]() -> PyObject* { return PyLong_FromUnsignedLongLong(gen_of(self).seed()); });
}
PyObject* g_initial_seed(PyObject* self, PyObject*) {
  return PyLong_FromUnsignedLongLong(gen_of(self).initial_seed());
}

PyObject* g_get_state(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    std::vector<uint8_t> bytes = gen_of(self).get_state();
    Tensor t = empty_tensor({static_cast<int64_t>(bytes.size())}, ScalarType::UInt8);
    std::memcpy(t.data(), bytes.data(), bytes.size());
    return wrap(t);
  });
}

PyObject* g_set_state(PyObject* self, PyObject* state) {
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(is_tensor(state) && unwrap(state).dtype() == ScalarType::UInt8, Type,
                "expected a torch.ByteTensor, but got ", is_tensor(state) ? type_name(unwrap(state).dtype()) : Py_TYPE(state)->tp_name);
    const Tensor& t = unwrap(state);
    EMBER_CHECK(t.is_contiguous(), Runtime, "set_state(): expected a contiguous ByteTensor");
    check_bounds(t);
    gen_of(self).set_state(reinterpret_cast<const uint8_t*>(t.data()), static_cast<size_t>(t.numel()));
    Py_INCREF(self);
    return self;
  });
}

PyObject* g_device(PyObject*, void*) {
  if (!g_cpu_device) Py_RETURN_NONE;
  Py_INCREF(g_cpu_device);
  return g_cpu_device;
}

PyMethodDef generator_methods[] = {
    {"manual_seed", g_manual_seed, METH_O, "manual_seed(seed): restarts the stream from seed; returns self."},
    {"seed", g_seed, METH_NOARGS, "Seeds from the system's entropy and returns the seed."},
    {"initial_seed", g_initial_seed, METH_NOARGS, "The seed the stream started from."},
    {"get_state", g_get_state, METH_NOARGS, "The state as a ByteTensor."},
    {"set_state", g_set_state, METH_O, "set_state(state): restores a state from get_state(); returns self."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef generator_getset[] = {{"device", g_device, nullptr, nullptr, nullptr},
                                  {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

PyObject* wrap_generator(const Generator& g) {
  auto* existing = static_cast<PyObject*>(g->pyobj);
  if (existing && Py_REFCNT(existing) > 0) {  // 0: being destroyed (see wrap(Tensor))
    Py_INCREF(existing);
    return existing;
  }
  return wrap_generator_as(&GeneratorType, g);
}

void init_generator_type(PyObject* module) {
  PyTypeObject& t = GeneratorType;
  t.tp_name = "ember.Generator";
  t.tp_basicsize = sizeof(PyGenerator);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t.tp_doc = "Generator(device='cpu'): a seeded stream of random numbers for ops' generator= argument.";
  t.tp_dealloc = generator_dealloc;
  t.tp_new = generator_new;
  t.tp_methods = generator_methods;
  t.tp_getset = generator_getset;
  add_type(module, t, "Generator");
  // the default generator lives as long as the process: one extra reference for the core
  Generator def(&default_generator());
  PyModule_AddObject(module, "default_generator", wrap_generator(def));
}

}  // namespace ember::python
