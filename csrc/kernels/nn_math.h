// Math the nn kernels share: an exp the compiler vectorizes, and sums and maxima over
// contiguous runs in independent lanes (a plain `s += x[i]` loop stays scalar, since
// reordering float additions needs -ffast-math).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include "kernels/vec_math.h"

namespace ember::kernels::nn {

constexpr int kLanes = 16;

// Note [Vectorizable float math]
// gcc vectorizes a loop only if it can turn its selects (a ? b : c) into blends; without
// -ffast-math it will not when a branch would skip a float-to-int conversion (which may
// trap), nor call std::floor. So these functions convert without clamping first and
// make their late selects with integer masks (blend below); out-of-range lanes compute
// garbage that the masks replace. Integers are rounded by adding 1.5 * 2^23 (2^52) rather
// than converted; a loop needing an int64 -> double conversion (none on AVX2) or
// std::signbit stays scalar, so the exponent goes through bits and signs through masks.
// Conditions combine with & and |, not && and || (whose branches gcc may keep).
// The functions themselves live in kernels/vec_math.h.

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

// e^x and erf, vectorizable (kernels/vec_math.h): float and double e^x within 1 ulp,
// subnormal results included; float erf within 1.2 ulp (double erf is libm's).
// Always inlined: an out-of-line call per element (inlining gives up in the large
// functors of the activations' backward) costs 5x the arithmetic.
[[gnu::always_inline]] inline float exp_fast(float x) { return vmath::exp(x); }
[[gnu::always_inline]] inline double exp_fast(double x) { return vmath::exp(x); }
[[gnu::always_inline]] inline float erf_fast(float x) { return vmath::erf(x); }
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
