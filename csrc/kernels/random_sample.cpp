// The gamma, Poisson and binomial samplers and the gamma sample's gradient. See
// kernels/random_sample.h. Each sampler follows the published algorithm named at it.
#include "kernels/random_sample.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include "kernels/special.h"

namespace ember::kernels::random_sample {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double lgamma_(double x) {  // without std::lgamma's global sign (a race between threads)
  int sign;
  return ::lgamma_r(x, &sign);
}

// A uniform draw in (0, 1]: logs and powers of it stay finite.
double open_uniform(GeneratorImpl& gen) { return 1.0 - gen.next_double(); }

// Marsaglia and Tsang, "A simple method for generating gamma variables" (2000): for
// alpha >= 1, d = alpha - 1/3, c = 1/sqrt(9d); x normal, v = (1 + cx)^3; accept d*v when
// v > 0 and log u < x^2/2 + d(1 - v + log v) (the squeeze u < 1 - 0.0331 x^4 first).
// alpha < 1 boosts: Gamma(alpha) = Gamma(alpha + 1) * u^(1/alpha).
double gamma_one(double alpha, GeneratorImpl& gen) {
  if (!(alpha > 0)) return 0;  // NaN too
  if (alpha == kInf) return kInf;
  double boost = 1;
  if (alpha < 1) {
    boost = std::exp(std::log(open_uniform(gen)) / alpha);
    alpha += 1;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = gen.next_normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = open_uniform(gen), x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2 || std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return boost * d * v;
  }
}

// Below rate 10: Knuth's product of uniforms (count the draws while the product stays
// above e^-rate). From 10: Hörmann's transformed rejection with squeeze, PTRS ("The
// transformed rejection method for generating Poisson random variables", 1993).
double poisson_one(double lam, GeneratorImpl& gen) {
  if (lam == 0) return 0;
  if (lam == kInf) return kInf;
  if (lam < 10) {
    const double limit = std::exp(-lam);
    double prod = open_uniform(gen), k = 0;
    while (prod > limit) {
      prod *= open_uniform(gen);
      k += 1;
    }
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = gen.next_double() - 0.5, v = open_uniform(gen);
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -lam + k * loglam - lgamma_(k + 1)) return k;
  }
}

// p <= 1/2 here. n*p below 10: inversion, walking the probabilities up from P(0) = q^n by
// P(k) = P(k - 1) * ((n + 1)/k - 1) * p/q. Otherwise Hörmann's BTRS ("The generation of
// binomial random variables", 1993).
double binomial_low(double n, double p, GeneratorImpl& gen) {
  const double q = 1 - p;
  if (n * p < 10) {
    const double s = p / q, a = (n + 1) * s;
    double r = std::exp(n * std::log1p(-p)), u = gen.next_double(), k = 0;
    while (u > r && k < n) {
      u -= r;
      k += 1;
      r *= a / k - s;
      if (r <= 0) break;
    }
    return k;
  }
  const double spq = std::sqrt(n * p * q);
  const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5;
  const double vr = 0.92 - 4.2 / b, alpha = (2.83 + 5.1 / b) * spq, lpq = std::log(p / q);
  const double m = std::floor((n + 1) * p), h = lgamma_(m + 1) + lgamma_(n - m + 1);
  for (;;) {
    const double u = gen.next_double() - 0.5, v = open_uniform(gen);
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + c);
    if (k < 0 || k > n) continue;
    if (us >= 0.07 && v <= vr) return k;
    if (std::log(v * alpha / (a / (us * us) + b)) <= h - lgamma_(k + 1) - lgamma_(n - k + 1) + (k - m) * lpq) return k;
  }
}

double binomial_one(double n, double p, GeneratorImpl& gen) {
  if (std::isnan(n) || std::isnan(p)) return kNaN;
  n = std::trunc(n);
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1 || n == kInf) return n;
  return p <= 0.5 ? binomial_low(n, p, gen) : n - binomial_low(n, 1 - p, gen);
}

}  // namespace

void standard_gamma(const double* alpha, double* out, int64_t n, double tiny, GeneratorImpl& gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (int64_t i = 0; i < n; ++i) out[i] = std::max(tiny, gamma_one(alpha[i], gen));
}

void poisson(const double* rate, double* out, int64_t n, GeneratorImpl& gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (int64_t i = 0; i < n; ++i) out[i] = poisson_one(rate[i], gen);
}

void binomial(const double* count, const double* prob, double* out, int64_t n, GeneratorImpl& gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (int64_t i = 0; i < n; ++i) out[i] = binomial_one(count[i], prob[i], gen);
}

// Implicit reparameterization: x = F^-1(u; alpha) with u fixed, so
// dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha), F the regularized lower incomplete gamma
// P(alpha, x) and f the density. Both forms below are exact rewritings of that quotient,
// with the density cancelled, each summing terms of one sign:
// - x <= alpha: P = Σ x^(a+k) e^-x / Γ(a+k+1) (DLMF 8.7.1), differentiated term by term:
//   dx/da = -Σ_k c_k (log x - ψ(a+k+1)), c_0 = x/a, c_k = c_(k-1) x/(a+k), and
//   ψ(a+k+1) = ψ(a) + Σ_(j<=k) 1/(a+j); every term is negative, the ratios below 1.
// - x > alpha: from Q = 1 - P = ∫_x^∞ t^(a-1) e^-t dt / Γ(a), with t = x e^u,
//   dx/da = x ∫_0^∞ exp(a u - x (e^u - 1)) (log x - ψ(a) + u) du, a positive integrand
//   (log x > log a > ψ(a)) whose exponent is concave and falls from 0: composite 8-point
//   Gauss-Legendre over [0, U], U where the exponent falls below -46. In u the integrand
//   varies on a scale of at least min(1, 1/(x - a), 1/sqrt(x)), which the panels resolve
//   (in t - x itself it would vary on the scale x near 0 when a < 1).
double standard_gamma_grad(double a, double x) {
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  if (!(a > 0)) return kNaN;
  if (x <= 0) return 0;
  if (a == kInf || x == kInf) return kNaN;
  const double psi = special::digamma_value(a), lx = std::log(x);
  if (x <= a) {
    double c = x / a, h = 1 / a, sum = c * (lx - psi - h);
    for (int k = 1; k < 10000000; ++k) {
      c *= x / (a + k);
      h += 1 / (a + k);
      const double term = c * (lx - psi - h);
      sum += term;
      if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
    }
    return -sum;
  }
  auto exponent = [&](double u) { return a * u - x * std::expm1(u); };
  double hi = 1;
  while (exponent(hi) > -46) hi *= 2;
  double lo = hi / 2;
  if (exponent(lo) <= -46) lo = 0;
  for (int i = 0; i < 60; ++i) {  // the crossing, to about a percent of U
    const double mid = 0.5 * (lo + hi);
    (exponent(mid) > -46 ? lo : hi) = mid;
    if (hi - lo < 0.01 * hi) break;
  }
  static constexpr double node[4] = {0.1834346424956498049, 0.5255324099163289858, 0.7966664774136267396,
                                     0.9602898564975362317};
  static constexpr double weight[4] = {0.3626837833783619830, 0.3137066458778872873, 0.2223810344533744706,
                                       0.1012285362903762591};
  const int panels = 8;  // 1e-11 relative against 400 panels, over alpha in [1e-3, 1e5] (16: 1e-14)
  const double width = hi / panels, d = lx - psi;
  double total = 0;
  for (int p = 0; p < panels; ++p) {
    const double mid = (p + 0.5) * width, half = 0.5 * width;
    for (int j = 0; j < 4; ++j)
      for (double u : {mid - half * node[j], mid + half * node[j]})
        total += weight[j] * half * std::exp(exponent(u)) * (d + u);
  }
  return x * total;
}

}  // namespace ember::kernels::random_sample
