#include "core/device.h"

#include <atomic>
#include "core/error.h"

namespace ember {
namespace {

// The meta device: storages keep their byte count and no memory.
int meta_alloc(int, size_t, void** out) {
  *out = nullptr;
  return kDeviceOk;
}
void meta_free(int, void*, size_t) {}
int meta_copy(int, void*, const void*, size_t, int) { return kDeviceOk; }
int meta_count(int* out) {
  *out = 1;
  return kDeviceOk;
}
int meta_current(int* out) {
  *out = 0;
  return kDeviceOk;
}
int meta_sync(int) { return kDeviceOk; }
const char* meta_error() { return ""; }

const DeviceInterface kMeta = {kDeviceAbiVersion, "meta", "Meta", false, meta_alloc, meta_free,
                               meta_copy, meta_count, meta_current, meta_sync, meta_error};

// The CPU's entry exists so that every device type answers the same questions; storages
// on the CPU call the allocator directly (core/allocator.h), never through this table.
const DeviceInterface kCpu = {kDeviceAbiVersion, "cpu", "CPU", true, nullptr, nullptr,
                              nullptr, meta_count, meta_current, meta_sync, meta_error};

std::atomic<const DeviceInterface*> g_devices[kNumDeviceTypes] = {&kCpu, nullptr, &kMeta};

const DeviceApi kApi = {kDeviceAbiVersion, register_device};

}  // namespace

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::Meta: return "meta";
  }
  return "?";
}

std::string device_str(Device d) {
  std::string s = device_type_name(d.type);
  if (d.index >= 0) s += ":" + std::to_string(d.index);
  return s;
}

const DeviceInterface* device_interface(DeviceType type) {
  return g_devices[static_cast<int>(type)].load(std::memory_order_acquire);
}

const DeviceInterface& require_device(DeviceType type) {
  const DeviceInterface* dev = device_interface(type);
  EMBER_CHECK(dev, Runtime, "device '", device_type_name(type), "' is not available: ember.",
              device_type_name(type), " has not been initialized");
  return *dev;
}

int register_device(int type, const DeviceInterface* iface) {
  if (type < 0 || type >= kNumDeviceTypes || !iface || iface->abi_version != kDeviceAbiVersion) return -1;
  g_devices[type].store(iface, std::memory_order_release);
  return 0;
}

const DeviceApi* device_api() { return &kApi; }

bool device_runs_kernels(Device device) {
  const DeviceInterface& dev = require_device(device.type);
  if (!dev.has_data) return false;
  fail(ErrorKind::NotImplemented, "Could not run 'aten::", t_op.name, "' with arguments from the '", dev.backend,
       "' backend: ember has no ", dev.name, " kernel for it yet");
}

void check_device_status(const DeviceInterface& dev, int status, const char* what) {
  if (status == kDeviceOk) return;
  const char* msg = dev.error_message ? dev.error_message() : "";
  if (status == kDeviceOutOfMemory) fail(ErrorKind::Runtime, msg);  // the device's own "CUDA out of memory. ..."
  fail(ErrorKind::Runtime, dev.backend, " error in ", what, ": ", msg);
}

}  // namespace ember
