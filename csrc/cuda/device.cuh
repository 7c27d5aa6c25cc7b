// ember._C_cuda's side of the device table: the CUDA entry (see Note [The device table] in
// core/device.h), the per-thread error text its functions report, and the device guard.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "core/device.h"

namespace ember::cuda {

constexpr int kMaxDevices = 128;  // Device::index is an int8_t

// The entry _C_cuda registers for DeviceType::CUDA.
const DeviceInterface* device_interface();
// The entry that replaces it in a child forked after CUDA was initialized (CUDA does not
// survive fork): every call fails with torch's message, and free leaves the parent's
// blocks alone.
const DeviceInterface* forked_device_interface();

// The number of GPUs, asked once: 0 without a driver or a GPU.
int device_count();

// Sets this thread's error text (what DeviceInterface::error_message returns) and returns
// status; cuda_error does so for a failed CUDA call, clearing CUDA's last error.
int device_error(int status, std::string text);
int cuda_error(cudaError_t err);
const char* last_error();

// Makes `index` the calling thread's current device for the guard's lifetime (-1 keeps the
// current one) and restores the previous device at its end.
class DeviceGuard {
 public:
  DeviceGuard() = default;
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (previous_ != index_) cudaSetDevice(previous_);
  }
  cudaError_t set(int index) {
    cudaError_t err = cudaGetDevice(&previous_);
    if (err != cudaSuccess) return err;
    index_ = previous_;
    if (index >= 0 && index != previous_) {
      err = cudaSetDevice(index);
      if (err != cudaSuccess) return err;
      index_ = index;
    }
    return cudaSuccess;
  }
  int index() const { return index_; }

 private:
  int previous_ = -1;
  int index_ = -1;
};

}  // namespace ember::cuda
