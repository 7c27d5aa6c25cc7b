// TensorImpl: a strided view of a storage (offset, sizes, strides, dtype), and Tensor,
// the reference-counted handle every C++ layer passes around.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>
#include "core/dims.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/storage.h"

namespace ember {
namespace autograd {
struct AutogradMeta;
}

// How a fresh tensor is laid out: like its source when that is dense (Preserve),
// row-major (Contiguous), or with the channels innermost (ChannelsLast: NHWC order of a
// 4-d NCHW tensor; ChannelsLast3d: NDHWC of a 5-d one). See ops/geometry.h.
enum class MemoryFormat : uint8_t { Preserve, Contiguous, ChannelsLast, ChannelsLast3d };

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, int64_t offset, Dims sizes, Dims strides, ScalarType dtype);
  // Skips the storage-bounds check: only for a kernel's internal operand that is never
  // read as a whole (the index kernel's restrided self; see ops/indexing.cpp).
  struct Unchecked {};
  TensorImpl(Storage storage, int64_t offset, Dims sizes, Dims strides, ScalarType dtype, Unchecked);
  ~TensorImpl() override;

  const Storage& storage() const { return storage_; }
  int64_t offset() const { return offset_; }
  IntList sizes() const { return sizes_; }
  IntList strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return is_contiguous_; }
  char* data() const {
    char* base = storage_->data();
    return base ? base + offset_ * itemsize(dtype_) : nullptr;  // empty storages have no memory
  }

  // set_(): point at another storage or another region of the same one.
  void set(Storage storage, int64_t offset, Dims sizes, Dims strides);
  // `x.data = y` may change the dtype too.
  void set(Storage storage, int64_t offset, Dims sizes, Dims strides, ScalarType dtype);
  void set_sizes_strides(Dims sizes, Dims strides);

  // A Python number the binding layer turned into a 0-dim tensor (x + 2): type promotion
  // ranks it below tensors (see ops/elementwise.cpp).
  bool wrapped_number = false;

  // The Python object wrapping this tensor, if any (not owned); see
  // Note [One Python object per native object] in csrc/python/objects.h.
  void* pyobj = nullptr;

  // Autograd's record (csrc/autograd/meta.h): null for tensors that take no part in
  // autograd, so plain tensors stay small and ops check one pointer.
  std::unique_ptr<autograd::AutogradMeta> autograd;

 private:
  void refresh();  // recompute numel_ and is_contiguous_ after sizes/strides change

  Storage storage_;
  int64_t offset_;
  Dims sizes_, strides_;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool is_contiguous_ = true;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return bool(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const Ref<TensorImpl>& ref() const { return impl_; }

  IntList sizes() const { return impl_->sizes(); }
  IntList strides() const { return impl_->strides(); }
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  ScalarType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  bool is_cpu() const { return impl_->storage()->device().is_cpu(); }
  int64_t offset() const { return impl_->offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  const Storage& storage() const { return impl_->storage(); }
  char* data() const { return impl_->data(); }
  int64_t itemsize() const { return ember::itemsize(dtype()); }
  int64_t size(int64_t d) const;    // d may be negative
  int64_t stride(int64_t d) const;
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  Ref<TensorImpl> impl_;
};

// Where an op with in-place or out= variants writes (its trailing argument): a fresh
// tensor when `tensor` is undefined, the out= tensor (resized to fit), or, in place,
// self, whose shape and dtype then may not change.
struct Out {
  Tensor tensor;
  bool inplace = false;
};

// Wraps a possibly negative dim into [0, ndim); IndexError names the valid range.
// A 0-dim tensor accepts dims -1 and 0 as torch does.
int64_t wrap_dim(int64_t dim, int64_t ndim);

// numel of sizes with every size checked non-negative and the product checked for
// overflow (RuntimeError names the sizes).
int64_t checked_numel(IntList sizes, const char* op);
Dims contiguous_strides(IntList sizes);
// The bytes from the storage's start to the end of the last element a tensor of these
// sizes, strides and offset reaches (0 without elements): false on int64 overflow;
// storage_bytes_needed throws RuntimeError instead.
bool bytes_needed(IntList sizes, IntList strides, int64_t offset, int64_t itemsize, int64_t* out);
int64_t storage_bytes_needed(IntList sizes, IntList strides, int64_t offset, int64_t itemsize);
std::string sizes_str(IntList sizes);  // "[2, 3]"

// RuntimeError unless a tensor of these sizes/strides/offset fits in the storage, with
// every product checked for overflow. Every TensorImpl is checked when made; kernels and
// element reads check again (check_bounds), since a storage can shrink under its views.
void check_in_storage(const Storage& storage, IntList size, IntList stride, int64_t offset, int64_t itemsize);
inline void check_bounds(const Tensor& t) {
  check_in_storage(t.storage(), t.sizes(), t.strides(), t.offset(), t.itemsize());
}
// A fresh contiguous tensor (uninitialized memory) on the running op's device (Note [The
// device of an op's results], core/device.h), or on `device`.
Tensor empty_tensor(IntList sizes, ScalarType dtype, const char* op = "empty");
Tensor empty_tensor(IntList sizes, ScalarType dtype, Device device, const char* op);

// The device an op's tensor arguments share (undefined tensors and lists of tensors
// allowed): a CPU tensor of 0 dims counts only when nothing else is there, as torch lets
// CPU scalars mix with any device. RuntimeError "Expected all tensors to be on the same
// device, ..." when two differ. The all-CPU case is a few loads, inline.
inline bool on_cpu(const Tensor& t) { return !t.defined() || t.is_cpu(); }
inline bool on_cpu(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (!on_cpu(t)) return false;
  return true;
}
namespace detail {
inline void collect(std::vector<const Tensor*>& out, const Tensor& t) { out.push_back(&t); }
inline void collect(std::vector<const Tensor*>& out, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) out.push_back(&t);
}
Device op_device_of(const char* op, const std::vector<const Tensor*>& tensors);
}  // namespace detail
template <class... Ts>
inline Device op_device(const char* op, const Ts&... ts) {
  if ((on_cpu(ts) && ...)) [[likely]] return Device();
  std::vector<const Tensor*> tensors;
  (detail::collect(tensors, ts), ...);
  return detail::op_device_of(op, tensors);
}
// The number of TensorImpls alive in the process (a leak test's probe).
int64_t live_tensor_impls();
// A tensor viewing `base`'s storage.
Tensor make_view(const Tensor& base, Dims sizes, Dims strides, int64_t offset);

}  // namespace ember
