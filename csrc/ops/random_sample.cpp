// The samplers behind torch.distributions (Gamma, Dirichlet, Poisson, Binomial) and the
// gamma sample's gradient: checks and dtypes here, the draws in kernels/random_sample.cpp
// (in float64; results convert to the input's dtype). See declarations/ops/random.yaml.
#include <cmath>
#include <limits>
#include "core/parallel.h"
#include "kernels/random_sample.h"
#include "ops/geometry.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

namespace rs = kernels::random_sample;

// torch's samplers take float32 and float64 (poisson float16 and bfloat16 too).
void check_float32_64(ScalarType dt, const char* kernel) {
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64, NotImplemented, "\"", kernel,
              "\" not implemented for '", type_name(dt), "'");
}

Tensor as_float64(const Tensor& t) {
  return contiguous(to_dtype(t, ScalarType::Float64, false, false, std::nullopt), MemoryFormat::Contiguous);
}

const double* in_data(const Tensor& t) { return reinterpret_cast<const double*>(t.data()); }
double* out_data(const Tensor& t) { return reinterpret_cast<double*>(t.data()); }

double tiny(ScalarType dt) {
  return dt == ScalarType::Float32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
}

// A second tensor must have the first's dtype (torch's TensorIterator check).
void check_same_dtype(const Tensor& expected, const Tensor& found) {
  EMBER_CHECK(found.dtype() == expected.dtype(), Runtime, "Found dtype ", type_name(found.dtype()),
              " but expected ", type_name(expected.dtype()));
}

}  // namespace

Tensor _standard_gamma(const Tensor& self, GeneratorImpl* generator) {
  check_float32_64(self.dtype(), "gamma_cpu");
  Tensor alpha = as_float64(self);
  Tensor out = empty_tensor(self.sizes(), ScalarType::Float64, "_standard_gamma");
  rs::standard_gamma(in_data(alpha), out_data(out), out.numel(), tiny(self.dtype()), generator_or_default(generator));
  return as_dtype(out, self.dtype());
}

Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output) {
  check_float32_64(self.dtype(), "_standard_gamma_grad_cpu");
  check_same_dtype(self, output);
  Dims shape = broadcast_shapes(self.sizes(), output.sizes());
  Tensor a = as_float64(expand(self, shape, false)), x = as_float64(expand(output, shape, false));
  Tensor out = empty_tensor(shape, ScalarType::Float64, "_standard_gamma_grad");
  const double *pa = in_data(a), *px = in_data(x);
  double* po = out_data(out);
  // about a microsecond an element (a series or a quadrature each): split across threads early
  parallel_for(0, out.numel(), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) po[i] = rs::standard_gamma_grad(pa[i], px[i]);
  });
  return as_dtype(out, self.dtype());
}

Tensor _sample_dirichlet(const Tensor& self, GeneratorImpl* generator) {
  check_float32_64(self.dtype(), "dirichlet");
  Tensor alpha = as_float64(self);
  Tensor out = empty_tensor(self.sizes(), ScalarType::Float64, "_sample_dirichlet");
  const double floor = tiny(self.dtype());
  rs::standard_gamma(in_data(alpha), out_data(out), out.numel(), floor, generator_or_default(generator));
  // each run along the last dim, divided by its sum (at least floor per element, so never 0)
  const int64_t len = self.dim() == 0 ? 1 : self.sizes()[self.dim() - 1];
  double* p = out_data(out);
  for (int64_t row = 0; len > 0 && row < out.numel() / len; ++row) {
    double sum = 0;
    for (int64_t j = 0; j < len; ++j) sum += p[row * len + j];
    for (int64_t j = 0; j < len; ++j) p[row * len + j] = std::max(floor, p[row * len + j] / sum);
  }
  return as_dtype(out, self.dtype());
}

Tensor poisson(const Tensor& self, GeneratorImpl* generator) {
  EMBER_CHECK(is_floating(self.dtype()), NotImplemented, "\"poisson_cpu\" not implemented for '",
              type_name(self.dtype()), "'");
  Tensor rate = as_float64(self);
  const double* r = in_data(rate);
  for (int64_t i = 0; i < rate.numel(); ++i)
    EMBER_CHECK(r[i] >= 0, Runtime, "invalid Poisson rate, expected rate to be non-negative");
  Tensor out = empty_tensor(self.sizes(), ScalarType::Float64, "poisson");
  rs::poisson(r, out_data(out), out.numel(), generator_or_default(generator));
  return as_dtype(out, self.dtype());
}

Tensor binomial(const Tensor& count, const Tensor& prob, GeneratorImpl* generator) {
  EMBER_CHECK(is_floating(count.dtype()), Value, "binomial only supports floating-point dtypes for count, got: ",
              type_name(count.dtype()));
  EMBER_CHECK(is_floating(prob.dtype()), Value, "binomial only supports floating-point dtypes for prob, got: ",
              type_name(prob.dtype()));
  check_float32_64(count.dtype(), "binomial_cpu");
  check_same_dtype(count, prob);
  Dims shape = broadcast_shapes(count.sizes(), prob.sizes());
  Tensor n = as_float64(expand(count, shape, false)), p = as_float64(expand(prob, shape, false));
  Tensor out = empty_tensor(shape, ScalarType::Float64, "binomial");
  rs::binomial(in_data(n), in_data(p), out_data(out), out.numel(), generator_or_default(generator));
  return as_dtype(out, count.dtype());
}

}  // namespace ember::ops
