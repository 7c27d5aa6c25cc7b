// Devices: where a storage's bytes live. A storage belongs to one device (type and index)
// and was allocated by that device's allocator; a tensor's device is its storage's.
//
// Note [The device table]
// Each device type has one entry, a DeviceInterface: plain C function pointers and flags,
// filled by the device itself. The CPU's is built into _C; the meta device's too (it has
// no data: storages keep their byte count and no memory, and ops compute their results'
// metadata without running a kernel); CUDA's is filled by the separate extension
// ember._C_cuda when ember.cuda loads it, through the capsule `ember._C._device_api`
// (Python loads extensions RTLD_LOCAL, so _C_cuda cannot link _C's symbols; a table of
// C function pointers also keeps C++ exceptions and types from crossing the boundary:
// a device reports failure by a status code and a message, which _C raises).
//
// The op layer never names a device. It computes shapes, dtypes and strides once,
// allocates through empty_tensor (which asks the device of the running op, see
// DeviceScope), and before a kernel asks `runs_kernels` (ops/internal.h): true on the CPU,
// false on a device without data, and for any other device the kernel comes from that
// device's kernel table (part 2 of the devices work adds the families to this struct).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };
constexpr int kNumDeviceTypes = 3;

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // CUDA: the GPU's ordinal; CPU and meta have none (-1)

  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

const char* device_type_name(DeviceType type);  // "cpu", "cuda", "meta"
std::string device_str(Device d);               // "cpu", "meta", "cuda:0"

// The status a device function returns: 0 on success, else one of these, with the text
// from error_message().
enum DeviceStatus : int { kDeviceOk = 0, kDeviceError = 1, kDeviceOutOfMemory = 2 };

// How copy_bytes moves memory.
enum DeviceCopyKind : int { kHostToDevice = 0, kDeviceToHost = 1, kDeviceToDevice = 2 };

struct DeviceInterface {
  int abi_version;       // kDeviceAbiVersion of the headers the device was built with
  const char* name;      // "cuda": the device type's name in device strings
  const char* backend;   // "CUDA": torch's backend name, used in error messages
  bool has_data;         // false for meta: kernels never run, data is never read
  // Memory. alloc writes the pointer (nullptr for 0 bytes); free never fails.
  int (*alloc)(int index, size_t nbytes, void** out);
  void (*free)(int index, void* ptr, size_t nbytes);
  // Copies nbytes of contiguous memory between the host and the device (or within it),
  // finishing before it returns.
  int (*copy_bytes)(int index, void* dst, const void* src, size_t nbytes, int kind);
  int (*device_count)(int* out);  // 0 devices is a success, not an error
  int (*current_device)(int* out);
  int (*synchronize)(int index);
  const char* (*error_message)();  // the last failure's text in this thread
};

constexpr int kDeviceAbiVersion = 1;

// The capsule's contents (`ember._C._device_api`): what a device extension may call.
struct DeviceApi {
  int abi_version;
  // Fills a device type's entry (once; a second call replaces it). Returns 0, or -1 when
  // the interface was built against another ABI version.
  int (*register_device)(int type, const DeviceInterface* iface);
};

// The entry of a device type; nullptr until that device registered (CUDA before
// ember.cuda loaded _C_cuda).
const DeviceInterface* device_interface(DeviceType type);
// The entry, or RuntimeError naming the device type when it is not available.
const DeviceInterface& require_device(DeviceType type);
int register_device(int type, const DeviceInterface* iface);
const DeviceApi* device_api();

// Throws the device's last error as RuntimeError (or OutOfMemory's message) when status
// is not kDeviceOk; `what` names the call.
void check_device_status(const DeviceInterface& dev, int status, const char* what);

}  // namespace ember
