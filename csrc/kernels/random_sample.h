// The samplers behind torch.distributions' Gamma, Dirichlet, Poisson and Binomial, and the
// gamma sample's gradient (csrc/kernels/random_sample.cpp). Plain double functions over
// contiguous float64 arrays: the ops (ops/random_sample.cpp) convert to and from the
// tensors' dtypes. Each sampler draws under gen's lock, so a seed gives one stream.
#pragma once
#include <cstdint>
#include "core/generator.h"

namespace ember::kernels::random_sample {

// Gamma(alpha, 1) samples, at least `tiny` (the result dtype's smallest normal number, as
// torch: alpha <= 0 and NaN give it too).
void standard_gamma(const double* alpha, double* out, int64_t n, double tiny, GeneratorImpl& gen);
// Poisson(rate) counts; rates are already checked non-negative.
void poisson(const double* rate, double* out, int64_t n, GeneratorImpl& gen);
// Binomial(count, prob) counts (count truncated to an integer; count <= 0 gives 0, prob
// outside [0, 1] clamps).
void binomial(const double* count, const double* prob, double* out, int64_t n, GeneratorImpl& gen);
// d sample / d alpha of a Gamma(alpha, 1) sample x, holding its CDF fixed.
double standard_gamma_grad(double alpha, double x);

}  // namespace ember::kernels::random_sample
