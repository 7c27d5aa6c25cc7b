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

// e^x for float, from Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2, a degree-6
// polynomial for e^r, 2^n put in the exponent bits. Relative error about 1e-7; 0 below
// -87.3 (no subnormal results), inf above 88.7, NaN stays NaN. double uses std::exp.
inline float exp_fast(float x) {
  const float hi = 88.7228391f, lo = -87.3365448f;
  float c = x > hi ? hi : x;
  c = c < lo ? lo : c;
  const float fx = std::floor(c * 1.44269504088896341f + 0.5f);
  float r = c - fx * 0.693359375f;
  r = r + fx * 2.12194440e-4f;
  const float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(fx) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  float e = y * scale;
  e = x < lo ? 0.0f : e;
  e = x > hi ? std::numeric_limits<float>::infinity() : e;
  return x != x ? x : e;
}
inline double exp_fast(double x) { return std::exp(x); }

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
