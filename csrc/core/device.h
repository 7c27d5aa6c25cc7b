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

// Note [The device of an op's results]
// An op allocates its results on the device of its tensor arguments without being told:
// the api:: layer (generated) finds that device once per call (op_device, which also
// raises torch's error when two tensors are on different devices), and sets it for the
// call's duration in this thread-local context, with the op's name for error messages.
// empty_tensor reads it, so every op, and every op it calls, allocates there; a factory's
// wrapper sets it from its device= argument (or the default device). At the top level
// it is the CPU.
struct OpContext {
  Device device;
  const char* name = "";
};
inline thread_local OpContext t_op [[gnu::tls_model("initial-exec")]];

class DeviceScope {
 public:
  DeviceScope(const char* op, Device device) : prev_(t_op) { t_op = OpContext{device, op}; }
  ~DeviceScope() { t_op = prev_; }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  OpContext prev_;
};

// A factory's device= argument, handed by its wrapper to the api:: call (which takes it,
// so calls nested inside see none): see ExplicitDevice, python/arg_parser.h.
struct ExplicitDeviceSlot {
  Device device;
  bool set = false;
};
inline thread_local ExplicitDeviceSlot t_explicit_device [[gnu::tls_model("initial-exec")]];
inline Device take_explicit_device(Device fallback) {
  if (!t_explicit_device.set) return fallback;
  t_explicit_device.set = false;
  return t_explicit_device.device;
}

// Note [Kernels run where the data is]
// Whether the running op's CPU kernels should run. On the CPU, yes. On a device without
// data (meta) the op has already computed its results' metadata and allocated them, so
// the kernel is skipped: ops launch through `launch`/`visit_float` (ops/internal.h), and
// the CPU's loops (kernels/loops.h) are empty there, so a kernel past the check does
// nothing. Any other device has no kernels in the CPU's table: the op raises torch's
// NotImplementedError ("Could not run 'aten::<op>' with arguments from the 'CUDA'
// backend") until that device's table fills the family. The device is the running op's
// (Note [The device of an op's results]); an op called without the api:: layer runs on
// the CPU, where a non-CPU storage's data() raises instead of crashing.
[[gnu::cold]] bool device_runs_kernels(Device device);
inline bool runs_kernels() {
  if (t_op.device.is_cpu()) [[likely]] return true;
  return device_runs_kernels(t_op.device);
}

// The default device of factories given no device= (ember.set_default_device; `with
// ember.device(...)`): thread-local as torch's.
inline thread_local Device t_default_device [[gnu::tls_model("initial-exec")]];

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
