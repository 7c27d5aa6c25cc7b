// Tensor factories. See declarations/ops/factories.yaml.
#include <cmath>
#include <complex>
#include "kernels/range.h"
#include "ops/geometry.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

Tensor filled(IntList size, ScalarType dtype, const Scalar& value) {
  return fill_Scalar_(empty_tensor(size, dtype), value);
}

Tensor filled_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> format,
                   const Scalar& value) {
  Tensor out = empty_like_format(self, dtype.value_or(self.dtype()), format.value_or(MemoryFormat::Preserve), t_op.device);
  return fill_Scalar_(out, value);
}

}  // namespace

Tensor empty(IntList size, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  MemoryFormat format = memory_format.value_or(MemoryFormat::Contiguous);
  EMBER_CHECK(format != MemoryFormat::Preserve, Runtime, "unsupported memory format Preserve");
  Tensor out = empty_tensor(size, dtype.value_or(default_dtype()));
  if (format != MemoryFormat::Contiguous) out.impl()->set_sizes_strides(Dims(size), format_strides(size, format));
  return out;
}

Tensor zeros(IntList size, std::optional<ScalarType> dtype) {
  return filled(size, dtype.value_or(default_dtype()), Scalar(int64_t(0)));
}

Tensor ones(IntList size, std::optional<ScalarType> dtype) {
  return filled(size, dtype.value_or(default_dtype()), Scalar(int64_t(1)));
}

Tensor full(IntList size, const Scalar& fill_value, std::optional<ScalarType> dtype) {
  return filled(size, dtype.value_or(fill_value.default_dtype(default_dtype())), fill_value);
}

Tensor empty_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  return empty_like_format(self, dtype.value_or(self.dtype()), memory_format.value_or(MemoryFormat::Preserve),
                           t_op.device);
}

Tensor zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  return filled_like(self, dtype, memory_format, Scalar(int64_t(0)));
}

Tensor ones_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  return filled_like(self, dtype, memory_format, Scalar(int64_t(1)));
}

Tensor full_like(const Tensor& self, const Scalar& fill_value, std::optional<ScalarType> dtype,
                 std::optional<MemoryFormat> memory_format) {
  return filled_like(self, dtype, memory_format, fill_value);
}

Tensor arange_start(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<ScalarType> dtype) {
  const bool integral = start.is_integral() && end.is_integral() && step.is_integral();
  ScalarType dt = dtype.value_or(integral ? ScalarType::Int64 : default_dtype());
  EMBER_CHECK(dt != ScalarType::Bool, NotImplemented, "arange(): not implemented for 'Bool'");
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), Runtime, "unsupported range: ", s, " -> ", e);
  EMBER_CHECK(st != 0, Runtime, "step must be nonzero");
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), Runtime,
              "upper bound and larger bound inconsistent with step sign");
  int64_t n;
  if (integral) {  // in 128 bits: end - start may not fit in int64
    const __int128 a = start.to_int64(), b = end.to_int64(), c = step.to_int64();
    __int128 count = c > 0 ? (b - a + c - 1) / c : (a - b - c - 1) / -c;
    n = static_cast<int64_t>(count);
  } else {
    double len = std::ceil((e - s) / st);
    EMBER_CHECK(len >= 0 && len < 9.2e18, Runtime, "invalid size, possible overflow?");
    n = static_cast<int64_t>(len);
  }
  Tensor out = empty_tensor({n}, dt, "arange");
  launch(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::range::Kernels<T>::arange(out, start, step);
  });
  return out;
}

Tensor arange(const Scalar& end, std::optional<ScalarType> dtype) {
  return arange_start(Scalar(int64_t(0)), end, Scalar(int64_t(1)), dtype);
}

// A complex endpoint makes the default dtype's complex twin; a complex range is the
// real range of each part (the parts of start + k (end - start) / (steps - 1)).
static ScalarType range_dtype(const Scalar& start, const Scalar& end, std::optional<ScalarType> dtype) {
  return dtype.value_or(start.is_complex() || end.is_complex() ? to_complex(default_dtype()) : default_dtype());
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, std::optional<ScalarType> dtype) {
  EMBER_CHECK(steps >= 0, Runtime, "number of steps must be non-negative");
  ScalarType dt = range_dtype(start, end, dtype);
  if (is_complex(dt)) {
    const std::complex<double> a = start.to_complex(), b = end.to_complex();
    return complex(linspace(Scalar(a.real()), Scalar(b.real()), steps, to_real(dt)),
                   linspace(Scalar(a.imag()), Scalar(b.imag()), steps, to_real(dt)), Out{});
  }
  Tensor out = empty_tensor({steps}, dt, "linspace");
  launch(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::range::Kernels<T>::linspace(out, start.to_double(), end.to_double());
  });
  return out;
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, std::optional<ScalarType> dtype) {
  EMBER_CHECK(steps >= 0, Runtime, "number of steps must be non-negative");
  ScalarType dt = range_dtype(start, end, dtype);
  if (is_complex(dt))  // base ** the complex range
    return pow_Tensor(scalar_tensor(Scalar(base), dt), linspace(start, end, steps, dt), Out{});
  Tensor out = empty_tensor({steps}, dt, "logspace");
  launch(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::range::Kernels<T>::logspace(out, start.to_double(), end.to_double(), base);
  });
  return out;
}

Tensor eye_m(int64_t n, int64_t m, std::optional<ScalarType> dtype) {
  EMBER_CHECK(n >= 0, Runtime, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, Runtime, "m must be greater or equal to 0, got ", m);
  Tensor out = zeros({n, m}, dtype);
  if (n > 0 && m > 0) fill_Scalar_(diagonal(out, 0, 0, 1), Scalar(int64_t(1)));
  return out;
}

Tensor eye(int64_t n, std::optional<ScalarType> dtype) { return eye_m(n, n, dtype); }

Tensor empty_strided(IntList size, IntList stride, std::optional<ScalarType> dtype) {
  EMBER_CHECK(size.size() == stride.size(), Runtime, "mismatch in length of strides and shape");
  ScalarType dt = dtype.value_or(default_dtype());
  checked_numel(size, "empty_strided");
  for (int64_t s : stride)
    EMBER_CHECK(s >= 0, Runtime, "empty_strided: negative strides are not supported, got ", sizes_str(stride));
  Tensor base = empty_tensor({0}, dt, "empty_strided");
  int64_t nbytes = storage_bytes_needed(size, stride, 0, itemsize(dt));
  base.storage()->resize(static_cast<size_t>(nbytes));
  return make_view(base, Dims(size), Dims(stride), 0);
}

}  // namespace ember::ops

namespace ember::ops {

Tensor new_empty(const Tensor& self, IntList size, std::optional<ScalarType> dtype) {
  return empty(size, dtype.value_or(self.dtype()), std::nullopt);
}

Tensor new_zeros(const Tensor& self, IntList size, std::optional<ScalarType> dtype) {
  return zeros(size, dtype.value_or(self.dtype()));
}

Tensor new_ones(const Tensor& self, IntList size, std::optional<ScalarType> dtype) {
  return ones(size, dtype.value_or(self.dtype()));
}

Tensor new_full(const Tensor& self, IntList size, const Scalar& fill_value, std::optional<ScalarType> dtype) {
  return full(size, fill_value, dtype.value_or(self.dtype()));
}

}  // namespace ember::ops
