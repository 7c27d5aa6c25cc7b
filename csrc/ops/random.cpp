// Random sampling. See declarations/ops/random.yaml.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include "kernels/random.h"
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

// torch has no integer kernel for these: NotImplementedError, as there.
void check_floating(ScalarType dtype, const char* op) {
  EMBER_CHECK(is_floating(dtype), NotImplemented, op, "(): not implemented for '", type_name(dtype),
              "' (expected a floating point dtype)");
}

// rand/randn/normal take complex dtypes too (each part drawn as a real): see uniform_/normal_.
void check_inexact(ScalarType dtype, const char* op) {
  EMBER_CHECK(is_inexact(dtype), NotImplemented, op, "(): not implemented for '", type_name(dtype),
              "' (expected a floating point dtype)");
}

// torch's refusal of integer draws into a complex dtype (randint, randint_like).
void check_random_bounds(ScalarType dtype) {
  EMBER_CHECK(!is_complex(dtype), Runtime,
              "check_random_bounds handles only integral, floating-point and boolean types");
}

// torch's refusals of the other distributions on a complex tensor: its kernel's name.
void check_not_complex(const Tensor& self, const char* kernel) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"", kernel, "\" not implemented for '",
              type_name(self.dtype()), "'");
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
  launch(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill(kernels::random::Kernels<T>{}, target);
  });
  self.storage()->bump_version();
  if (!target.is_same(self)) copy_(self, target, false);
  return self;
}

}  // namespace

// A complex tensor draws its (..., 2) real view: both parts uniform on [from, to), and the
// same numbers as torch's from the same seed.
Tensor uniform_(const Tensor& self, double from, double to, GeneratorImpl* generator) {
  if (is_complex(self.dtype())) {
    uniform_(view_as_real(self), from, to, generator);
    return self;
  }
  check_floating(self.dtype(), "uniform_");
  EMBER_CHECK(from <= to, Runtime, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  check_no_internal_overlap(self, "uniform_");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(self, [&](auto k, const Tensor& t) { k.uniform(t, from, to, gen); });
}

// A complex tensor draws its (..., 2) real view with std / sqrt(2) per part, so that
// E|z - mean|^2 = std^2 (torch's convention; each part's mean is `mean`).
Tensor normal_(const Tensor& self, double mean, double std, GeneratorImpl* generator) {
  EMBER_CHECK(std >= 0.0, Runtime, "normal expects std >= 0.0, but found std ", std);
  if (is_complex(self.dtype())) {
    normal_(view_as_real(self), mean, std / std::sqrt(2.0), generator);
    return self;
  }
  check_floating(self.dtype(), "normal_");
  check_no_internal_overlap(self, "normal_");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(self, [&](auto k, const Tensor& t) { k.normal(t, mean, std, gen); });
}

Tensor rand(IntList size, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(default_dtype());
  check_inexact(dt, "rand");
  return uniform_(empty_tensor(size, dt, "rand"), 0.0, 1.0, generator);
}

Tensor randn(IntList size, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(default_dtype());
  check_inexact(dt, "randn");
  return normal_(empty_tensor(size, dt, "randn"), 0.0, 1.0, generator);
}

Tensor randint_low(int64_t low, int64_t high, IntList size, GeneratorImpl* generator, std::optional<ScalarType> dtype) {
  EMBER_CHECK(low < high, Runtime, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  ScalarType dt = dtype.value_or(ScalarType::Int64);
  check_random_bounds(dt);
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
  EMBER_CHECK(!is_complex(dt), NotImplemented, "\"randperm\" not implemented for '", type_name(dt), "'");
  EMBER_CHECK(n == 0 || n - 1 <= max_exact(dt), Runtime, "randperm(): n = ", n, " is too large for dtype ",
              info(dt).name);
  Tensor out = empty_tensor({n}, dt, "randperm");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(out, [&](auto k, const Tensor& t) { k.randperm(t, gen); });
}

Tensor rand_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like(self, dtype, memory_format);
  check_inexact(out.dtype(), "rand_like");
  return uniform_(out, 0.0, 1.0, nullptr);
}

Tensor randn_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like(self, dtype, memory_format);
  check_inexact(out.dtype(), "randn_like");
  return normal_(out, 0.0, 1.0, nullptr);
}

Tensor randint_like_low(const Tensor& self, int64_t low, int64_t high, std::optional<ScalarType> dtype,
                        std::optional<MemoryFormat> memory_format) {
  Tensor out = empty_like(self, dtype, memory_format);
  check_random_bounds(out.dtype());
  Tensor sample = randint_low(low, high, out.sizes(), nullptr, out.dtype());
  return copy_(out, sample, false);
}

Tensor randint_like(const Tensor& self, int64_t high, std::optional<ScalarType> dtype,
                    std::optional<MemoryFormat> memory_format) {
  return randint_like_low(self, 0, high, dtype, memory_format);
}

Tensor normal_Tensor_Tensor(const Tensor& mean, const Tensor& std, GeneratorImpl* generator) {
  EMBER_CHECK(!is_complex(std.dtype()), Runtime, "normal expects standard deviation to be non-complex");
  ScalarType dt = promote_types(mean.dtype(), std.dtype());
  check_inexact(dt, "normal");
  Dims shape = broadcast_shapes(mean.sizes(), std.sizes());
  if (is_complex(dt)) {  // a complex normal scaled by std and shifted by mean
    Tensor z = normal_(empty_tensor(shape, dt, "normal"), 0.0, 1.0, generator);
    return add_Tensor(mul_Tensor(z, std, Out{}), mean, Scalar(int64_t(1)), Out{});
  }
  Tensor out = normal_(empty_tensor(shape, dt, "normal"), 0.0, 1.0, generator);
  Tensor m = contiguous(as_dtype(expand(mean, shape, false), dt), MemoryFormat::Contiguous);
  Tensor s = contiguous(as_dtype(expand(std, shape, false), dt), MemoryFormat::Contiguous);
  launch(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::random::Kernels<T>::scale_shift(out, m, s);
  });
  return out;
}

Tensor normal_Tensor_float(const Tensor& mean, double std, GeneratorImpl* generator) {
  EMBER_CHECK(std >= 0.0, Runtime, "normal expects std >= 0.0, but found std ", std);
  return normal_Tensor_Tensor(mean, scalar_tensor(Scalar(std), to_real(mean.dtype())), generator);
}

Tensor normal_float_Tensor(double mean, const Tensor& std, GeneratorImpl* generator) {
  return normal_Tensor_Tensor(scalar_tensor(Scalar(mean), std.dtype()), std, generator);
}

Tensor normal_float_float(double mean, double std, IntList size, GeneratorImpl* generator,
                          std::optional<ScalarType> dtype) {
  ScalarType dt = dtype.value_or(default_dtype());
  check_inexact(dt, "normal");
  return normal_(empty_tensor(size, dt, "normal"), mean, std, generator);
}

}  // namespace ember::ops

// The distributions below transform uniform samples drawn in float64 (elementwise ops
// of the engine), then convert to self's dtype.
namespace ember::ops {
namespace {

Tensor uniform_like(const Tensor& self, GeneratorImpl* generator) {
  return uniform_(empty_tensor(self.sizes(), ScalarType::Float64), 0.0, 1.0, generator);
}

Tensor number(double v) { return wrapped_number(Scalar(v)); }

Tensor write(const Tensor& self, const Tensor& values) {
  check_no_internal_overlap(self, "random");
  return copy_(self, values, false);
}

void check_probability(double p, const char* op) {
  EMBER_CHECK(p >= 0 && p <= 1, Runtime, op, " expects 0 <= p <= 1, but got p=", p);
}

}  // namespace

Tensor bernoulli_float_(const Tensor& self, double p, GeneratorImpl* generator) {
  check_not_complex(self, "bernoulli_scalar_cpu_");
  check_probability(p, "bernoulli_");
  check_no_internal_overlap(self, "random");
  GeneratorImpl& gen = generator_or_default(generator);
  return fill_contiguous(self, [&](auto k, const Tensor& t) { k.bernoulli(t, p, gen); });
}

Tensor bernoulli_Tensor_(const Tensor& self, const Tensor& p, GeneratorImpl* generator) {
  check_not_complex(self, "bernoulli_tensor_cpu_self_");
  EMBER_CHECK(is_floating(p.dtype()), Runtime, "bernoulli_: expected a floating point probability tensor, got ",
              type_name(p.dtype()));
  if (p.numel() > 0) {
    const double lo = item(amin(p, {}, false, Out{})).to_double(), hi = item(amax(p, {}, false, Out{})).to_double();
    EMBER_CHECK(lo >= 0 && hi <= 1, Runtime, "bernoulli_: expected all probabilities in [0, 1]");
  }
  return write(self, lt_Tensor(uniform_like(self, generator), p, Out{}));
}

Tensor bernoulli(const Tensor& self, GeneratorImpl* generator) {
  check_not_complex(self, "bernoulli_tensor_cpu_self_");
  check_floating(self.dtype(), "bernoulli");
  return bernoulli_Tensor_(empty_tensor(self.sizes(), self.dtype()), self, generator);
}

Tensor bernoulli_p(const Tensor& self, double p, GeneratorImpl* generator) {
  check_not_complex(self, "bernoulli_scalar_cpu_");
  check_floating(self.dtype(), "bernoulli");
  return bernoulli_float_(empty_tensor(self.sizes(), self.dtype()), p, generator);
}

Tensor random_from_(const Tensor& self, int64_t from, std::optional<int64_t> to, GeneratorImpl* generator) {
  check_random_bounds(self.dtype());
  const int64_t limit = max_exact(self.dtype());
  const int64_t hi = to ? *to : limit == std::numeric_limits<int64_t>::max() ? limit : limit + 1;
  Tensor draw = randint_low(from, hi, self.sizes(), generator, ScalarType::Int64);
  return write(self, draw);
}

Tensor random_to_(const Tensor& self, int64_t to, GeneratorImpl* generator) {
  return random_from_(self, 0, to, generator);
}

Tensor random_(const Tensor& self, GeneratorImpl* generator) {
  check_not_complex(self, "random_kernel_cpu");
  return random_from_(self, 0, std::nullopt, generator);
}

Tensor exponential_(const Tensor& self, double lambd, GeneratorImpl* generator) {
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, "Exponential distribution is a continuous probability distribution. "
              "dtype must be a floating point but you specified ", type_name(self.dtype()));
  check_floating(self.dtype(), "exponential_");
  EMBER_CHECK(lambd > 0, Runtime, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  // -log(1 - u) / lambda, with u in [0, 1)
  Tensor u = uniform_like(self, generator);
  return write(self, div_Tensor(neg(log1p(neg(u, Out{}), Out{}), Out{}), number(lambd), Out{}));
}

Tensor geometric_(const Tensor& self, double p, GeneratorImpl* generator) {
  check_not_complex(self, "geometric_cpu");
  EMBER_CHECK(p > 0 && p <= 1, Runtime, "geometric_ expects p to be in (0, 1], but got p=", p);
  if (p == 1) return fill_Scalar_(self, Scalar(int64_t(1)));
  // ceil(log(1 - u) / log(1 - p)), at least 1
  Tensor u = uniform_like(self, generator);
  Tensor k = ceil(div_Tensor(log1p(neg(u, Out{}), Out{}), number(std::log1p(-p)), Out{}), Out{});
  return write(self, clamp_min(k, number(1.0), Out{}));
}

Tensor cauchy_(const Tensor& self, double median, double sigma, GeneratorImpl* generator) {
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, "Cauchy distribution is a continuous probability distribution. "
              "dtype must be a floating point but you specified ", cpp_name(self.dtype()));
  check_floating(self.dtype(), "cauchy_");
  EMBER_CHECK(sigma > 0, Runtime, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  // median + sigma * tan(pi * (u - 1/2))
  Tensor u = sub_Tensor(uniform_like(self, generator), number(0.5), Scalar(int64_t(1)), Out{});
  Tensor t = tan(mul_Tensor(u, number(M_PI), Out{}), Out{});
  return write(self, add_Tensor(mul_Tensor(t, number(sigma), Out{}), number(median), Scalar(int64_t(1)), Out{}));
}

Tensor log_normal_(const Tensor& self, double mean, double std, GeneratorImpl* generator) {
  check_not_complex(self, "log_normal_cpu");
  check_floating(self.dtype(), "log_normal_");
  EMBER_CHECK(std > 0, Runtime, "log_normal_ expects std > 0.0, but found std=", std);
  Tensor n = normal_(empty_tensor(self.sizes(), ScalarType::Float64), mean, std, generator);
  return write(self, exp(n, Out{}));
}

// Without replacement: the num_samples smallest of -log(u) / w (an exponential race, which
// picks in proportion to w, one at a time). With replacement: u * total searched in the
// running sums of each row.
Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, GeneratorImpl* generator) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, Runtime, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, "multinomial only supports floating-point dtypes for input, got: ",
              type_name(self.dtype()));
  check_floating(self.dtype(), "multinomial");
  EMBER_CHECK(num_samples > 0, Runtime, "cannot sample n_sample <= 0 samples");
  const int64_t categories = self.sizes()[self.dim() - 1];
  EMBER_CHECK(replacement || num_samples <= categories, Runtime,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  Tensor w = to_dtype(self.dim() == 1 ? unsqueeze(self, 0) : self, ScalarType::Float64, false, true, std::nullopt);
  w = contiguous(w, MemoryFormat::Contiguous);
  const int64_t rows = w.sizes()[0];
  const double* p = reinterpret_cast<const double*>(w.data());
  for (int64_t i = 0; i < w.numel(); ++i)
    EMBER_CHECK(std::isfinite(p[i]) && p[i] >= 0, Runtime,
                "probability tensor contains either `inf`, `nan` or element < 0");
  for (int64_t r = 0; r < rows; ++r) {
    // (without replacement, torch 2.13 draws zero-weight categories last once the others run out)
    double total = 0;
    for (int64_t c = 0; c < categories; ++c) total += p[r * categories + c];
    EMBER_CHECK(total > 0, Runtime, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  Tensor out = empty_tensor({rows, num_samples}, ScalarType::Int64);
  int64_t* o = reinterpret_cast<int64_t*>(out.data());
  if (replacement) {
    Tensor u = uniform_(empty_tensor({rows, num_samples}, ScalarType::Float64), 0.0, 1.0, generator);
    const double* uu = reinterpret_cast<const double*>(u.data());
    std::vector<double> running(categories);
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (int64_t c = 0; c < categories; ++c) running[c] = acc += p[r * categories + c];
      for (int64_t s = 0; s < num_samples; ++s) {
        const double target = uu[r * num_samples + s] * acc;
        int64_t c = std::upper_bound(running.begin(), running.end(), target) - running.begin();
        while (c > 0 && (c >= categories || p[r * categories + c] == 0)) --c;  // never a zero-weight category
        o[r * num_samples + s] = c;
      }
    }
  } else {
    Tensor u = uniform_(empty_tensor({rows, categories}, ScalarType::Float64), 0.0, 1.0, generator);
    Tensor keys = div_Tensor(neg(log1p(neg(u, Out{}), Out{}), Out{}), w, Out{});  // inf for zero weights
    Tensor order = argsort(keys, -1, false, true);
    copy_(out, narrow(order, 1, 0, num_samples), false);
  }
  return self.dim() == 1 ? view(out, {num_samples}) : out;
}

}  // namespace ember::ops
