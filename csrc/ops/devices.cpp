// What the op layer asks of devices: whether kernels run (Note [Kernels run where the
// data is], ops/internal.h) and copies between devices, the one operation that sees two.
#include "core/device.h"
#include "ops/geometry.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops {


// Note [Copies between devices]
// A copy between two devices moves contiguous bytes through the device's copy_bytes: the
// CPU side does any conversion (dtype, strides, broadcasting) with its own kernels, on a
// staging tensor when the CPU tensor is not already the contiguous image of the other.
// The device side must be dense (any dim order: a transposed or channels_last tensor is)
// until the device has kernels of its own for strided copies. Meta has no data: a copy into it only
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
  // A dense tensor (any dim order) covers numel elements from its offset: its bytes move as
  // one block into or out of a host tensor of the same sizes and strides.
  auto host_like = [](const Tensor& t, ScalarType dtype) {
    Tensor h = empty_tensor({t.numel()}, dtype);
    h.impl()->set_sizes_strides(Dims(t.sizes()), Dims(t.strides()));
    return h;
  };
  if (from.is_cpu()) {  // host to device
    EMBER_CHECK(non_overlapping_and_dense(self), NotImplemented, "copy_(): a ", dst_dev.name,
                " destination must be dense (no gaps or overlaps) in this version of ember");
    Tensor staged = host_like(self, self.dtype());
    copy_(staged, src, false);  // dtype, strides and broadcasting on the CPU
    check_device_status(dst_dev, dst_dev.copy_bytes(to.index, self.storage()->device_data() + self.offset() * self.itemsize(),
                                                     staged.data(), size_t(self.numel() * self.itemsize()), kHostToDevice),
                        "copy_ (host to device)");
  } else {  // device to host
    EMBER_CHECK(non_overlapping_and_dense(src) && src.sizes() == self.sizes(), NotImplemented, "copy_(): a ",
                src_dev.name, " source must be dense and of the destination's shape in this version of ember");
    const bool direct = self.dtype() == src.dtype() && self.strides() == src.strides();
    Tensor staged = direct ? self : host_like(src, src.dtype());
    check_bounds(staged);
    check_device_status(src_dev, src_dev.copy_bytes(from.index, staged.data(),
                                                     src.storage()->device_data() + src.offset() * src.itemsize(),
                                                     size_t(src.numel() * src.itemsize()), kDeviceToHost),
                        "copy_ (device to host)");
    if (!direct) copy_(self, staged, false);
  }
  self.storage()->bump_version();
  return self;
}

}  // namespace ember::ops
