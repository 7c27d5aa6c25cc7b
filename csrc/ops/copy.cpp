// Copies, conversions and fills. See declarations/ops/copy.yaml.
#include <atomic>
#include <cmath>
#include <limits>
#include "kernels/copy.h"
#include "kernels/fill.h"
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

std::atomic<ScalarType> g_default_dtype{ScalarType::Float32};

// Whether the bytes a and b reach intersect. Addresses, not storages: a storage slice or
// two numpy-backed storages can share memory.
bool may_overlap(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  if (a.device() != b.device()) return false;
  // Device memory has no host pointer, and meta none at all: its storages compare by identity.
  if (!a.is_cpu() && a.storage() != b.storage()) return false;
  auto range = [](const Tensor& t, uintptr_t& lo, uintptr_t& hi) {
    const char* base = t.storage()->device_data();
    lo = reinterpret_cast<uintptr_t>(base) + t.offset() * t.itemsize();
    hi = reinterpret_cast<uintptr_t>(base) + storage_bytes_needed(t.sizes(), t.strides(), t.offset(), t.itemsize());
  };
  uintptr_t alo, ahi, blo, bhi;
  range(a, alo, ahi);
  range(b, blo, bhi);
  return alo < bhi && blo < ahi;
}

bool same_layout(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.dtype() == b.dtype() &&
         a.sizes() == b.sizes() && a.strides() == b.strides();
}

}  // namespace

// Note [Overlapping source and destination]
// torch refuses a write whose source shares memory with the destination only when it can
// tell cheaply: both dense (no gaps, no overlap, any order) and their byte ranges
// intersecting. Other shared sources
// (a row copied into a column of the same matrix) work, so they are copied first here.
Tensor unaliased_source(const Tensor& dst, const Tensor& src, const char* op) {
  if (!may_overlap(dst, src)) return src;
  EMBER_CHECK(!(non_overlapping_and_dense(dst) && non_overlapping_and_dense(src)), Runtime, op,
              "(): unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
              "single memory location. Please clone() the tensor before performing the operation.");
  return clone(src, MemoryFormat::Contiguous);
}

ScalarType default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(ScalarType dtype) {
  EMBER_CHECK(is_floating(dtype), Type, "only floating-point types are supported as the default type");
  g_default_dtype.store(dtype);
}

void check_no_internal_overlap(const Tensor& self, const char* op) {
  if (self.numel() == 0) return;  // nothing is written (an empty channels_last tensor has zero strides)
  for (int64_t d = 0; d < self.dim(); ++d)
    EMBER_CHECK(self.strides()[d] != 0 || self.sizes()[d] <= 1, Runtime, op,
                "(): unsupported operation: more than one element of the written-to tensor refers to a "
                "single memory location. Please clone() the tensor before performing the operation.");
}

Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  (void)non_blocking;  // CPU copies are synchronous
  Dims shape = broadcast_shapes(self.sizes(), src.sizes());
  EMBER_CHECK(IntList(shape) == self.sizes(), Runtime, "copy_(): the source of shape ", sizes_str(src.sizes()),
              " cannot be broadcast to the destination of shape ", sizes_str(self.sizes()));
  if (self.device() != src.device()) [[unlikely]] return copy_between_devices(self, src);
  if (same_layout(self, src) || self.numel() == 0) return self;
  check_no_internal_overlap(self, "copy_");
  Tensor from = unaliased_source(self, src, "copy_");
  if (from.sizes() != self.sizes()) from = expand(from, self.sizes(), false);
  if (is_complex(from.dtype()) && !is_complex(self.dtype()))
    warn("Casting complex values to real discards the imaginary part");
  self.storage()->bump_version();
  launch_any(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::copy::Kernels<T>::copy(self, from);
  });
  return self;
}

Tensor as_dtype(const Tensor& t, ScalarType dt) {
  return t.dtype() == dt ? t : to_dtype(t, dt, false, false, std::nullopt);
}

Tensor empty_like_format(const Tensor& self, ScalarType dtype, MemoryFormat format, Device device) {
  if (format == MemoryFormat::Contiguous) return empty_tensor(self.sizes(), dtype, device, "empty_like");
  Dims strides = format == MemoryFormat::Preserve ? preserved_strides(self) : format_strides(self.sizes(), format);
  Tensor out = empty_tensor(self.sizes(), dtype, device, "empty_like");
  out.impl()->set_sizes_strides(Dims(self.sizes()), std::move(strides));
  return out;
}

Tensor restrided_as(const Tensor& t, MemoryFormat format) {
  Dims strides = format_strides(t.sizes(), format);
  if (t.strides() == IntList(strides)) return t;
  Tensor out = empty_tensor(t.sizes(), t.dtype(), t.device(), "contiguous");
  out.impl()->set_sizes_strides(Dims(t.sizes()), std::move(strides));
  return copy_(out, t, false);
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like_format(self, self.dtype(), memory_format.value_or(MemoryFormat::Preserve), self.device());
  return copy_(out, self, false);
}

Tensor contiguous(const Tensor& self, MemoryFormat memory_format) {
  if (is_contiguous_as(self, memory_format)) return self;
  EMBER_CHECK(memory_format != MemoryFormat::Preserve, Runtime,
              "preserve memory format is unsupported by the contiguous operator");
  return clone(self, memory_format);
}

// Like torch, `to` returns self when nothing changes, and for an explicit format "nothing"
// means the format self's strides suggest: t().to(memory_format=contiguous_format) is t().
Tensor to_dtype(const Tensor& self, ScalarType dtype, bool non_blocking, bool copy,
                std::optional<MemoryFormat> memory_format) {
  MemoryFormat format = memory_format.value_or(MemoryFormat::Preserve);
  bool layout_ok = format == MemoryFormat::Preserve || suggest_memory_format(self) == format;
  if (dtype == self.dtype() && !copy && layout_ok) return self;
  Tensor out = empty_like_format(self, dtype, format, self.device());
  return copy_(out, self, non_blocking);
}

// The target device is the running op's (its wrapper's device=, else self's).
Tensor to_device(const Tensor& self, std::optional<ScalarType> dtype, bool non_blocking, bool copy,
                 std::optional<MemoryFormat> memory_format) {
  ScalarType dt = dtype.value_or(self.dtype());
  if (t_op.device == self.device()) return to_dtype(self, dt, non_blocking, copy, memory_format);
  Tensor out = empty_like_format(self, dt, memory_format.value_or(MemoryFormat::Preserve), t_op.device);
  return copy_(out, self, non_blocking);
}

Tensor to_device_of(const Tensor& t, Device device) {
  DeviceScope scope("to", device);
  return to_device(t, std::nullopt, false, false, std::nullopt);
}

Tensor to_other(const Tensor& self, const Tensor& other, bool non_blocking, bool copy,
                std::optional<MemoryFormat> memory_format) {
  DeviceScope scope("to", other.device());
  return to_device(self, other.dtype(), non_blocking, copy, memory_format);
}

Scalar item(const Tensor& self) {
  EMBER_CHECK(self.numel() == 1, Runtime, "a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  EMBER_CHECK(self.device().type != DeviceType::Meta, Runtime, "Tensor.item() cannot be called on meta tensors");
  if (!self.is_cpu()) return item(to_device_of(self, Device()));  // one element to the host
  check_bounds(self);
  return visit_any_dtype(self.dtype(), [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    const T v = load<T>(self.data());
    if constexpr (is_complex_v<T>) return Scalar(std::complex<double>(v.real(), v.imag()));
    else if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<int64_t>(v));
    else return Scalar(static_cast<double>(static_cast<compute_t<T>>(v)));
  });
}

Tensor scalar_tensor(const Scalar& value, ScalarType dtype) {
  Tensor out = empty_tensor({}, dtype);
  launch_any(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *reinterpret_cast<T*>(out.data()) = value.to<T>();
  });
  return out;
}

const char* cpp_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Float16: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Int64: return "long int";
    case ScalarType::Int32: return "int";
    case ScalarType::Int16: return "short int";
    case ScalarType::Int8: return "signed char";
    case ScalarType::UInt8: return "unsigned char";
    case ScalarType::Bool: return "bool";
    case ScalarType::ComplexFloat: return "c10::complex<float>";
    case ScalarType::ComplexDouble: return "c10::complex<double>";
  }
  return "?";
}

namespace {

// The element type names of torch's overflow message ("uint8_t", "c10::Half").
const char* overflow_name(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8: return "uint8_t";
    case ScalarType::Int8: return "int8_t";
    case ScalarType::Int16: return "int16_t";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "int64_t";
    default: return cpp_name(t);
  }
}

bool number_fits(const Scalar& value, ScalarType dtype) {
  return visit_any_dtype(dtype, [&](auto tag) { return fits<typename decltype(tag)::type>(value); });
}

}  // namespace

std::tuple<Tensor, Tensor> write_outs(std::tuple<Tensor, Tensor> results, const std::vector<Tensor>& outs) {
  EMBER_CHECK(outs.size() == 2, Type, "expected tuple of 2 elements but got ", outs.size());
  const Tensor* rs[] = {&std::get<0>(results), &std::get<1>(results)};
  for (size_t i = 0; i < 2; ++i)
    EMBER_CHECK(outs[i].dtype() == rs[i]->dtype(), Runtime, "Expected out tensor to have dtype ",
                cpp_name(rs[i]->dtype()), ", but got ", cpp_name(outs[i].dtype()), " instead");
  for (size_t i = 0; i < 2; ++i) {
    Tensor dst = resolve_out(Out{outs[i], false}, rs[i]->sizes(), rs[i]->dtype(), "out");
    copy_(dst, *rs[i], false);
  }
  return {outs[0], outs[1]};
}

void check_convertible(const Scalar& value, ScalarType dtype, const char* op) {
  EMBER_CHECK(number_fits(value, dtype), Runtime, op, "(): value cannot be converted to type ", overflow_name(dtype),
              " without overflow");
}

void check_number_fits(const Scalar& value, ScalarType dtype) {
  EMBER_CHECK(number_fits(value, dtype), Runtime, "value cannot be converted to type ", overflow_name(dtype),
              " without overflow");
}

Tensor fill_unchecked(const Tensor& self, const Scalar& value) {
  self.storage()->bump_version();
  launch_any(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::fill::Kernels<T>::fill(self, value);
  });
  return self;
}

Tensor fill_Scalar_(const Tensor& self, const Scalar& value) {
  check_convertible(value, self.dtype(), "fill_");
  return fill_unchecked(self, value);
}

// A 0-dim tensor's value converts like a copy, without torch's overflow check.
Tensor fill_Tensor_(const Tensor& self, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, Runtime, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  return fill_unchecked(self, item(value));
}

Tensor zero_(const Tensor& self) { return fill_Scalar_(self, Scalar(int64_t(0))); }

}  // namespace ember::ops
