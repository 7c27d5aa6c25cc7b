// The CUDA entry of the device table (Note [The device table] in core/device.h): plain
// functions that report failure by status and a per-thread text, never by exception.
#include "cuda/device.cuh"

#include "cuda/allocator.cuh"

namespace ember::cuda {
namespace {

thread_local std::string t_error;

int copy_bytes(int index, void* dst, const void* src, size_t nbytes, int kind) {
  if (nbytes == 0) return kDeviceOk;
  cudaMemcpyKind how;
  switch (kind) {
    case kHostToDevice: how = cudaMemcpyHostToDevice; break;
    case kDeviceToHost: how = cudaMemcpyDeviceToHost; break;
    case kDeviceToDevice: how = cudaMemcpyDeviceToDevice; break;
    default: return device_error(kDeviceError, "copy_bytes: unknown copy kind " + std::to_string(kind));
  }
  DeviceGuard guard;
  cudaError_t err = guard.set(index);
  if (err == cudaSuccess) err = cudaMemcpy(dst, src, nbytes, how);
  // cudaMemcpy returns before a device-to-device copy ends; the interface promises it ended
  if (err == cudaSuccess && kind == kDeviceToDevice) err = cudaStreamSynchronize(nullptr);
  return err == cudaSuccess ? kDeviceOk : cuda_error(err);
}

int count_devices(int* out) {
  *out = device_count();
  return kDeviceOk;
}

int current_device(int* out) {
  cudaError_t err = cudaGetDevice(out);
  return err == cudaSuccess ? kDeviceOk : cuda_error(err);
}

int synchronize(int index) {
  DeviceGuard guard;
  cudaError_t err = guard.set(index);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  return err == cudaSuccess ? kDeviceOk : cuda_error(err);
}

const DeviceInterface kCuda = {kDeviceAbiVersion, "cuda",         "CUDA",         true,
                               cached_alloc,      cached_free,    copy_bytes,     count_devices,
                               current_device,    synchronize,    last_error};

constexpr const char* kForked =
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' "
    "start method";

int forked_alloc(int, size_t, void** out) {
  *out = nullptr;
  return device_error(kDeviceError, kForked);
}
void forked_free(int, void*, size_t) {}
int forked_copy(int, void*, const void*, size_t, int) { return device_error(kDeviceError, kForked); }
int forked_current(int* out) {
  *out = 0;
  return device_error(kDeviceError, kForked);
}
int forked_synchronize(int) { return device_error(kDeviceError, kForked); }

const DeviceInterface kForkedCuda = {kDeviceAbiVersion, "cuda",         "CUDA",         true,
                                     forked_alloc,      forked_free,    forked_copy,    count_devices,
                                     forked_current,    forked_synchronize, last_error};

}  // namespace

const DeviceInterface* device_interface() { return &kCuda; }
const DeviceInterface* forked_device_interface() { return &kForkedCuda; }

int device_count() {
  static int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {  // no driver, or no GPU: none
      cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

int device_error(int status, std::string text) {
  t_error = std::move(text);
  return status;
}

int cuda_error(cudaError_t err) {
  cudaGetLastError();  // clears a non-sticky error so that the next call does not see it
  return device_error(err == cudaErrorMemoryAllocation ? kDeviceOutOfMemory : kDeviceError, cudaGetErrorString(err));
}

const char* last_error() { return t_error.c_str(); }

}  // namespace ember::cuda
