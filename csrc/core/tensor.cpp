#include "core/tensor.h"
#include "autograd/meta.h"

#include <atomic>
#include <sstream>

namespace ember {
namespace {
// TensorImpls alive, for the leak tests (_C._live_objects); counted once made whole.
std::atomic<int64_t> g_live_tensors{0};
}  // namespace

int64_t live_tensor_impls() { return g_live_tensors.load(std::memory_order_relaxed); }

TensorImpl::TensorImpl(Storage storage, int64_t offset, Dims sizes, Dims strides, ScalarType dtype)
    : storage_(std::move(storage)), offset_(offset), sizes_(std::move(sizes)),
      strides_(std::move(strides)), dtype_(dtype) {
  check_in_storage(storage_, sizes_, strides_, offset_, ember::itemsize(dtype_));
  refresh();
  g_live_tensors.fetch_add(1, std::memory_order_relaxed);
}

TensorImpl::TensorImpl(Storage storage, int64_t offset, Dims sizes, Dims strides, ScalarType dtype, Unchecked)
    : storage_(std::move(storage)), offset_(offset), sizes_(std::move(sizes)),
      strides_(std::move(strides)), dtype_(dtype) {
  refresh();
  g_live_tensors.fetch_add(1, std::memory_order_relaxed);
}

// Out of line: AutogradMeta is complete here.
TensorImpl::~TensorImpl() { g_live_tensors.fetch_sub(1, std::memory_order_relaxed); }

void TensorImpl::set(Storage storage, int64_t offset, Dims sizes, Dims strides) {
  set(std::move(storage), offset, std::move(sizes), std::move(strides), dtype_);
}

void TensorImpl::set(Storage storage, int64_t offset, Dims sizes, Dims strides, ScalarType dtype) {
  check_in_storage(storage, sizes, strides, offset, ember::itemsize(dtype));
  dtype_ = dtype;
  storage_ = std::move(storage);
  offset_ = offset;
  set_sizes_strides(std::move(sizes), std::move(strides));
}

void TensorImpl::set_sizes_strides(Dims sizes, Dims strides) {
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  refresh();
}

void TensorImpl::refresh() {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes_) overflow |= __builtin_mul_overflow(n, s, &n);
  EMBER_CHECK(!overflow, Runtime, "numel: integer multiplication overflow for sizes ", sizes_str(sizes_));
  numel_ = n;
  bool contiguous = true;
  if (n != 0) {
    int64_t expected = 1;
    for (size_t i = sizes_.size(); i-- > 0;) {
      if (sizes_[i] == 1) continue;
      if (strides_[i] != expected) { contiguous = false; break; }
      expected *= sizes_[i];
    }
  }
  is_contiguous_ = contiguous;
}

bool bytes_needed(IntList size, IntList stride, int64_t offset, int64_t item, int64_t* out) {
  // The last element reached, with every product checked so huge sizes cannot wrap around.
  int64_t last = offset;
  bool overflow = false;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 0) {
      *out = 0;  // no element: nothing is read
      return true;
    }
    int64_t reach;
    overflow |= __builtin_mul_overflow(size[i] - 1, stride[i], &reach);
    overflow |= __builtin_add_overflow(last, reach, &last);
  }
  overflow |= __builtin_add_overflow(last, 1, &last);
  overflow |= __builtin_mul_overflow(last, item, out);
  return !overflow;
}

void check_in_storage(const Storage& storage, IntList size, IntList stride, int64_t offset, int64_t item) {
  int64_t needed = 0;
  const bool ok = bytes_needed(size, stride, offset, item, &needed);
  if (__builtin_expect(ok && needed <= static_cast<int64_t>(storage->nbytes()), 1)) return;
  fail(ErrorKind::Runtime, "setStorage: sizes ", sizes_str(size), ", strides ", sizes_str(stride),
       ", storage offset ", offset, ", and itemsize ", item, " requiring a storage size of ",
       ok ? std::to_string(needed) : std::string("more than 2**63"), " are out of bounds for storage of size ",
       storage->nbytes());
}

int64_t Tensor::size(int64_t d) const {
  EMBER_CHECK(dim() > 0, Index, "Dimension specified as ", d, " but tensor has no dimensions");
  return sizes()[wrap_dim(d, dim())];
}

int64_t Tensor::stride(int64_t d) const {
  EMBER_CHECK(dim() > 0, Index, "Dimension specified as ", d, " but tensor has no dimensions");
  return strides()[wrap_dim(d, dim())];
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = ndim > 0 ? ndim : 1;
  EMBER_CHECK(dim >= -n && dim < n, Index, "Dimension out of range (expected to be in range of [",
              -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

std::string sizes_str(IntList sizes) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  os << ']';
  return os.str();
}

int64_t checked_numel(IntList sizes, const char* op) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, Runtime, op, "(): Trying to create tensor with negative dimension ", s,
                ": ", sizes_str(sizes));
    overflow |= __builtin_mul_overflow(n, s, &n);
  }
  EMBER_CHECK(!overflow, Runtime, op, "(): Storage size calculation overflowed with sizes=",
              sizes_str(sizes));
  return n;
}

Dims contiguous_strides(IntList sizes) {
  Dims strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

int64_t storage_bytes_needed(IntList sizes, IntList strides, int64_t offset, int64_t itemsize) {
  int64_t needed;
  EMBER_CHECK(bytes_needed(sizes, strides, offset, itemsize, &needed), Runtime,
              "Storage size calculation overflowed with sizes=", sizes_str(sizes), " and strides=", sizes_str(strides));
  return needed;
}

Tensor empty_tensor(IntList sizes, ScalarType dtype, Device device, const char* op) {
  int64_t n = checked_numel(sizes, op);
  int64_t nbytes;
  EMBER_CHECK(!__builtin_mul_overflow(n, itemsize(dtype), &nbytes), Runtime, op,
              "(): Storage size calculation overflowed with sizes=", sizes_str(sizes));
  Storage storage = make_ref<StorageImpl>(static_cast<size_t>(nbytes), device);
  return Tensor(make_ref<TensorImpl>(std::move(storage), 0, Dims(sizes), contiguous_strides(sizes), dtype));
}

Tensor empty_tensor(IntList sizes, ScalarType dtype, const char* op) {
  return empty_tensor(sizes, dtype, t_op.device, op);
}

namespace detail {
Device op_device_of(const char* op, const std::vector<const Tensor*>& tensors) {
  // The first tensor that is not a CPU scalar decides; CPU scalars mix with any device.
  Device found;
  bool have = false;
  for (const Tensor* t : tensors) {
    if (!t->defined() || (t->is_cpu() && t->dim() == 0)) continue;
    const Device d = t->device();
    if (!have) {
      found = d;
      have = true;
    } else if (d != found) {
      fail(ErrorKind::Runtime, "Expected all tensors to be on the same device, but found at least two devices, ",
           device_str(found), " and ", device_str(d), "! (when checking the arguments of ", op, ")");
    }
  }
  return found;  // the CPU when every tensor is a CPU scalar
}
}  // namespace detail

Tensor make_view(const Tensor& base, Dims sizes, Dims strides, int64_t offset) {
  return Tensor(make_ref<TensorImpl>(base.storage(), offset, std::move(sizes), std::move(strides), base.dtype()));
}

}  // namespace ember
