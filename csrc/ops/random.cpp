// Random sampling. See declarations/ops/random.yaml.
#include <limits>
#include "kernels/random.h"
#include "ops/internal.h"
#include "ops/shape.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

// torch has no integer kernel for these: NotImplementedError, as there.
void check_floating(ScalarType dtype, const char* op) {
  EMBER_CHECK(is_floating(dtype), NotImplemented, op, "(): not implemented for '", type_name(dtype),
              "' (expected a floating point dtype)");
}

// The largest integer the dtype holds exactly (floats: 2**mantissa bits).
int64_t max_exact(ScalarType dtype) {
  return visit_dtype(dtype, [](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Half>) return int64_t(1) << 11;
    else if constexpr (std::is_same_v<T, BFloat16>) return int64_t(1) << 8;
    else if constexpr (std::is_same_v<T, float>) return int64_t(1) << 24;
    else if constexpr (std::is_same_v<T, double>) return int64_t(1) << 53;
    else if constexpr (std::is_same_v<T, bool>) return 1;
    else return static_cast<int64_t>(std::numeric_limits<T>::max());
  });
}

// Runs a kernel that needs a contiguous output, through a temporary when self is not.
template <class Fill>
Tensor fill_contiguous(const Tensor& self, Fill&& fill) {
  check_bounds(self);
  Tensor target = self.is_contiguous() ? self : empty_tensor(self.sizes(), self.dtype());
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill(kernels::random::Kernels<T>{}, target);
  });
  self.storage()->bump_version();
  if (!target.is_same(self)) copy_(self, target, false);
  return self;
}

}  // namespace

Tensor uniform_(const Tensor& self, double from, double to, GeneratorImpl* generator) {
  check_floating(self.dtype(), "uniform_");
  EMBER_CHECK(from <= to, Runtime, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  check_no_internal_overlap(self, "uniform_");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(self, [&](auto k, const Tensor& t) { k.uniform(t, from, to, gen); });
}

Tensor normal_(const Tensor& self, double mean, double std, GeneratorImpl* generator) {
  check_floating(self.dtype(), "normal_");
  EMBER_CHECK(std >= 0.0, Runtime, "normal expects std >= 0.0, but found std ", std);
  check_no_internal_overlap(self, "normal_");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(self, [&](auto k, const Tensor& t) { k.normal(t, mean, std, gen); });
}

Tensor rand(IntList size, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(default_dtype());
  check_floating(dt, "rand");
  return uniform_(empty_tensor(size, dt, "rand"), 0.0, 1.0, generator);
}

Tensor randn(IntList size, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(default_dtype());
  check_floating(dt, "randn");
  return normal_(empty_tensor(size, dt, "randn"), 0.0, 1.0, generator);
}

Tensor randint_low(int64_t low, int64_t high, IntList size, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  EMBER_CHECK(low < high, Runtime, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  ScalarType dt = dtype.value_or(ScalarType::Int64);
  const int64_t lowest = is_floating(dt) ? -max_exact(dt)
                         : info(dt).kind == DTypeKind::Signed ? -max_exact(dt) - 1 : 0;
  EMBER_CHECK(low >= lowest && high - 1 <= max_exact(dt), Runtime, "random_ expects 'from' and 'to' - 1 within the range of ",
              info(dt).name, ", got from=", low, ", to=", high);
  Tensor out = empty_tensor(size, dt, "randint");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(out, [&](auto k, const Tensor& t) { k.randint(t, low, high, gen); });
}

Tensor randint(int64_t high, IntList size, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  return randint_low(0, high, size, generator, dtype);
}

Tensor randperm(int64_t n, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  EMBER_CHECK(n >= 0, Runtime, "n must be non-negative, got", n);
  ScalarType dt = dtype.value_or(ScalarType::Int64);
  EMBER_CHECK(dt != ScalarType::Bool, NotImplemented, "randperm(): not implemented for 'Bool'");
  EMBER_CHECK(n == 0 || n - 1 <= max_exact(dt), Runtime, "randperm(): n = ", n, " is too large for dtype ",
              info(dt).name);
  Tensor out = empty_tensor({n}, dt, "randperm");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(out, [&](auto k, const Tensor& t) { k.randperm(t, gen); });
}

Tensor rand_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like(self, dtype, memory_format);
  check_floating(out.dtype(), "rand_like");
  return uniform_(out, 0.0, 1.0, nullptr);
}

Tensor randn_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like(self, dtype, memory_format);
  check_floating(out.dtype(), "randn_like");
  return normal_(out, 0.0, 1.0, nullptr);
}

Tensor randint_like_low(const Tensor& self, int64_t low, int64_t high, std::optional<ScalarType> dtype,
                        std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like(self, dtype, memory_format);
  Tensor sample = randint_low(low, high, out.sizes(), nullptr, out.dtype());
  return copy_(out, sample, false);
}

Tensor randint_like(const Tensor& self, int64_t high, std::optional<ScalarType> dtype,
                    std::optional<MemoryFormat> memory_format) {
  return randint_like_low(self, 0, high, dtype, memory_format);
}

Tensor normal_Tensor_Tensor(const Tensor& mean, const Tensor& std, GeneratorImpl* generator) {
  ScalarType dt = promote_types(mean.dtype(), std.dtype());
  check_floating(dt, "normal");
  Dims shape = broadcast_shapes(mean.sizes(), std.sizes());
  Tensor out = normal_(empty_tensor(shape, dt, "normal"), 0.0, 1.0, generator);
  Tensor m = to_dtype(expand(mean, shape, false), dt, false, false, MemoryFormat::Contiguous);
  Tensor s = to_dtype(expand(std, shape, false), dt, false, false, MemoryFormat::Contiguous);
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::random::Kernels<T>::scale_shift(out, m, s);
  });
  return out;
}

Tensor normal_Tensor_float(const Tensor& mean, double std, GeneratorImpl* generator) {
  EMBER_CHECK(std >= 0.0, Runtime, "normal expects std >= 0.0, but found std ", std);
  return normal_Tensor_Tensor(mean, scalar_tensor(Scalar(std), mean.dtype()), generator);
}

Tensor normal_float_Tensor(double mean, const Tensor& std, GeneratorImpl* generator) {
  return normal_Tensor_Tensor(scalar_tensor(Scalar(mean), std.dtype()), std, generator);
}

Tensor normal_float_float(double mean, double std, IntList size, GeneratorImpl* generator,
                          std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(default_dtype());
  check_floating(dt, "normal");
  return normal_(empty_tensor(size, dt, "normal"), mean, std, generator);
}

}  // namespace ember::ops
