// Math the nn kernels share: an exp the compiler vectorizes, and sums and maxima over
// contiguous runs in independent lanes (a plain `s += x[i]` loop stays scalar, since
// reordering float additions needs -ffast-math).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ember::kernels::nn {

constexpr int kLanes = 16;

// Note [Vectorizable float math]
// gcc vectorizes a loop only if it can turn its selects (a ? b : c) into blends; without
// -ffast-math it will not when a branch would skip a float-to-int conversion (which may
// trap), nor call std::floor. So these functions convert without clamping first and
// make their late selects with integer masks (blend below); out-of-range lanes compute
// garbage that the masks replace.

// c ? a : b for floats, as bit masks.
[[gnu::always_inline]] inline float blend(bool c, float a, float b) {
  uint32_t ab, bb;
  std::memcpy(&ab, &a, sizeof ab);
  std::memcpy(&bb, &b, sizeof bb);
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  const uint32_t r = (ab & m) | (bb & ~m);
  float out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}
inline double blend(bool c, double a, double b) { return c ? a : b; }

// e^x for float, from Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2, a degree-6
// polynomial for e^r, 2^(n-1) put in the exponent bits (times 2, so n = 128 fits).
// Relative error below 1e-7; 0 below -86.6 (no subnormal results), inf above 88.72,
// NaN stays NaN. See Note [Vectorizable float math]. double uses std::exp.
// Always inlined: an out-of-line call per element (inlining gives up in the large
// functors of the activations' backward) costs 5x the arithmetic.
[[gnu::always_inline]] inline float exp_fast(float x) {
  const float hi = 88.7228391f, lo = -86.6f;
  const float v = x * 1.44269504088896341f + 0.5f;
  const uint32_t t = static_cast<uint32_t>(static_cast<int32_t>(v));
  const uint32_t n = t - (v < static_cast<float>(static_cast<int32_t>(t)) ? 1u : 0u);  // floor(v)
  const float fx = static_cast<float>(static_cast<int32_t>(n));
  float r = x - fx * 0.693359375f;
  r = r + fx * 2.12194440e-4f;
  const float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  const uint32_t bits = (n + 126u) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  float e = y * scale * 2.0f;
  e = blend(x < lo, 0.0f, e);
  e = blend(x > hi, std::numeric_limits<float>::infinity(), e);
  return blend(x != x, x, e);
}
inline double exp_fast(double x) { return std::exp(x); }

// erf for float: Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), given
// exp(-x^2) (gelu's gradient has it already); double uses std::erf.
[[gnu::always_inline]] inline float erf_with_exp(float x, float exp_neg_x2) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  return std::copysign(1.0f - p * t * exp_neg_x2, x);
}
inline double erf_with_exp(double x, double) { return std::erf(x); }
[[gnu::always_inline]] inline float erf_fast(float x) { return erf_with_exp(x, exp_fast(-x * x)); }
inline double erf_fast(double x) { return std::erf(x); }

// tanh for float as 1 - 2 / (e^2x + 1) (absolute error about 1e-7; exact +-1 far out).
[[gnu::always_inline]] inline float tanh_fast(float x) { return 1.0f - 2.0f / (exp_fast(2.0f * x) + 1.0f); }
inline double tanh_fast(double x) { return std::tanh(x); }

// tanh for float within a few ulp, vectorizable: below |x| = 0.625, where 1 - 2 / (e^2x + 1)
// would cancel, Cephes' odd polynomial x + x^3 P(x^2); above, that form; x's sign on both
// (exactly +-1 far out, NaN stays NaN). double uses std::tanh.
[[gnu::always_inline]] inline float tanh_accurate(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * a + a;
  const float large = 1.0f - 2.0f / (exp_fast(2.0f * a) + 1.0f);
  return std::copysign(blend(a < 0.625f, small, large), x);  // copysign keeps tanh(-0) = -0
}
inline double tanh_accurate(double x) { return std::tanh(x); }

// The accumulation type of sums: float sums in float lanes (as torch's vectorized
// kernels do), double in double.
template <class T>
T lane_sum(const T* x, int64_t n) {
  T acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l];
  T s = 0;
  for (; i < n; ++i) s += x[i];
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

// The largest element; NaN if any element is NaN.
template <class T>
T lane_max(const T* x, int64_t n) {
  T acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = -std::numeric_limits<T>::infinity();
  bool nan = false;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const T v = x[i + l];
      acc[l] = v > acc[l] ? v : acc[l];
      nan |= v != v;
    }
  T m = -std::numeric_limits<T>::infinity();
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    nan |= x[i] != x[i];
  }
  for (int l = 0; l < kLanes; ++l) m = acc[l] > m ? acc[l] : m;
  return nan ? std::numeric_limits<T>::quiet_NaN() : m;
}

// sum(a * b)
template <class T>
T lane_dot(const T* a, const T* b, int64_t n) {
  T acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  T s = 0;
  for (; i < n; ++i) s += a[i] * b[i];
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

}  // namespace ember::kernels::nn
