// What the op layer asks of devices: whether kernels run (Note [Kernels run where the
// data is], ops/internal.h) and copies between devices, the one operation that sees two.
#include "core/device.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops {


// Note [Copies between devices]
// A copy between two devices moves contiguous bytes through the device's copy_bytes: the
// CPU side does any conversion (dtype, strides, broadcasting) with its own kernels, on a
// staging tensor when the CPU tensor is not already the contiguous image of the other.
// The device side must be contiguous and of the destination's dtype until the device
// has kernels of its own for strided copies. Meta has no data: a copy into it only
// checks shapes, and a copy out of it raises torch's NotImplementedError.
Tensor copy_between_devices(const Tensor& self, const Tensor& src) {
  const Device to = self.device(), from = src.device();
  const DeviceInterface& dst_dev = require_device(to.type);
  const DeviceInterface& src_dev = require_device(from.type);
  if (!dst_dev.has_data) return self;
  EMBER_CHECK(src_dev.has_data, NotImplemented, "Cannot copy out of meta tensor; no data!");
  EMBER_CHECK(to.is_cpu() || from.is_cpu(), NotImplemented, "copy_(): copies between ", device_str(from), " and ",
              device_str(to), " go through the CPU in this version of ember");
  if (self.numel() == 0) return self;
  DeviceScope cpu("copy_", Device());
  if (from.is_cpu()) {  // host to device
    EMBER_CHECK(self.is_contiguous(), NotImplemented, "copy_(): a ", dst_dev.name,
                " destination must be contiguous in this version of ember");
    Tensor staged = contiguous(as_dtype(src.sizes() == self.sizes() ? src : expand(src, self.sizes(), false),
                                        self.dtype()), MemoryFormat::Contiguous);
    check_bounds(staged);
    check_device_status(dst_dev, dst_dev.copy_bytes(to.index, self.storage()->device_data() + self.offset() * self.itemsize(),
                                                     staged.data(), size_t(self.numel() * self.itemsize()), kHostToDevice),
                        "copy_ (host to device)");
  } else {  // device to host
    EMBER_CHECK(src.is_contiguous() && src.sizes() == self.sizes(), NotImplemented, "copy_(): a ", src_dev.name,
                " source must be contiguous and of the destination's shape in this version of ember");
    Tensor staged = self.is_contiguous() && self.dtype() == src.dtype() ? self : empty_tensor(src.sizes(), src.dtype());
    check_bounds(staged);
    check_device_status(src_dev, src_dev.copy_bytes(from.index, staged.data(),
                                                     src.storage()->device_data() + src.offset() * src.itemsize(),
                                                     size_t(src.numel() * src.itemsize()), kDeviceToHost),
                        "copy_ (device to host)");
    if (!staged.is_same(self)) copy_(self, staged, false);
  }
  self.storage()->bump_version();
  return self;
}

}  // namespace ember::ops
