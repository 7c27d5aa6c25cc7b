// ember.device objects <-> core Devices, the default device, and the device= argument
// of factories (Note [The device of an op's results], core/device.h).
#include <cstring>
#include <string>
#include "core/device.h"
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {
namespace {

PyObject* g_device_objects[kNumDeviceTypes][33] = {};  // [type][index + 1], made on first use

// ember.cuda._lazy_init(): loads ember._C_cuda, which registers CUDA's device entry, or
// raises torch's errors (AssertionError when ember was built without CUDA).
void init_device_type(DeviceType type) {
  if (device_interface(type)) return;
  Owned module(PyImport_ImportModule("ember.cuda"));
  if (!module) throw PythonError{};
  Owned r(PyObject_CallMethod(module.get(), "_lazy_init", nullptr));
  if (!r) throw PythonError{};
  EMBER_CHECK(device_interface(type), Runtime, "ember.cuda._lazy_init() did not register the CUDA device");
}

int current_index(DeviceType type) {
  const DeviceInterface& dev = require_device(type);
  int index = 0;
  check_device_status(dev, dev.current_device(&index), "current_device");
  return index;
}

Device from_parts(const char* name, size_t len, int64_t index) {
  auto is = [&](const char* s) { return std::strlen(s) == len && std::strncmp(name, s, len) == 0; };
  if (is("cpu")) return Device();
  if (is("meta")) return Device(DeviceType::Meta);
  if (is("cuda")) {
    init_device_type(DeviceType::CUDA);
    if (index < 0) index = current_index(DeviceType::CUDA);
    int count = 0;
    const DeviceInterface& dev = require_device(DeviceType::CUDA);
    check_device_status(dev, dev.device_count(&count), "device_count");
    EMBER_CHECK(index < count, Runtime, "CUDA error: invalid device ordinal (device cuda:", index, " asked for, ",
                count, " visible)");
    return Device(DeviceType::CUDA, static_cast<int8_t>(index));
  }
  fail(ErrorKind::Runtime, "ember has no '", std::string(name, len),
       "' device (its devices are cpu, meta and, when built with EMBER_CUDA=1, cuda)");
}

}  // namespace

Device parse_device(PyObject* o) {
  if (PyLong_Check(o) && !PyBool_Check(o)) {  // an index: torch's current accelerator, CUDA here
    int64_t index = unpack_int(o);
    EMBER_CHECK(index >= 0, Runtime, "Device index must not be negative");
    return from_parts("cuda", 4, index);
  }
  Owned text(PyUnicode_Check(o) ? (Py_INCREF(o), o) : PyObject_Str(o));
  if (!text) throw PythonError{};
  const char* s = PyUnicode_AsUTF8(text.get());
  if (!s) throw PythonError{};
  const char* colon = std::strchr(s, ':');
  int64_t index = -1;
  if (colon) {
    char* end = nullptr;
    long long v = std::strtoll(colon + 1, &end, 10);
    EMBER_CHECK(colon[1] && *end == '\0' && v >= 0 && v < 32, Runtime, "Invalid device string: '", s, "'");
    index = v;
  }
  return from_parts(s, colon ? size_t(colon - s) : std::strlen(s), index);
}

PyObject* device_object(Device d) {
  PyObject*& slot = g_device_objects[static_cast<int>(d.type)][d.index + 1];
  if (!slot) {
    if (d.is_cpu() && g_cpu_device) {
      slot = g_cpu_device;
    } else {
      slot = d.index >= 0 ? PyObject_CallFunction(g_constants.device_type, "si", device_type_name(d.type), int(d.index))
                          : PyObject_CallFunction(g_constants.device_type, "s", device_type_name(d.type));
      if (!slot) throw PythonError{};
    }
    Py_INCREF(slot);  // kept for the life of the process
  }
  Py_INCREF(slot);
  return slot;
}

ExplicitDevice::ExplicitDevice(const Args& a, int i, bool takes_tensors) {
  if (a.given(i)) set(parse_device(a.obj[i]));
  else if (!takes_tensors) set(t_default_device);  // a factory with no tensor to follow
}

PyObject* f_set_default_device(PyObject*, PyObject* arg) {
  return guarded([&]() -> PyObject* {
    t_default_device = arg == Py_None ? Device() : parse_device(arg);
    Py_RETURN_NONE;
  });
}

PyObject* f_get_default_device(PyObject*, PyObject*) {
  return guarded([&]() -> PyObject* { return device_object(t_default_device); });
}

}  // namespace ember::python
