// Elementwise float math that gcc vectorizes: exp, expm1, log, log1p, sin, cos, tan, erf
// (and erfc's tail for gelu) for float, exp and log for double. See Note [Vectorizable
// float math] (kernels/nn_math.h) for the rules these follow; the build's
// -fno-math-errno lets std::sqrt and std::fma vectorize too.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ember::kernels::vmath {

[[gnu::always_inline]] inline uint32_t bits(float x) { uint32_t u; std::memcpy(&u, &x, 4); return u; }
[[gnu::always_inline]] inline uint64_t bits(double x) { uint64_t u; std::memcpy(&u, &x, 8); return u; }
[[gnu::always_inline]] inline float from_bits(uint32_t u) { float x; std::memcpy(&x, &u, 4); return x; }
[[gnu::always_inline]] inline double from_bits(uint64_t u) { double x; std::memcpy(&x, &u, 8); return x; }

// c ? a : b through bit masks (a select gcc always turns into a blend).
[[gnu::always_inline]] inline float sel(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return from_bits((bits(a) & m) | (bits(b) & ~m));
}
[[gnu::always_inline]] inline double sel(bool c, double a, double b) {
  const uint64_t m = uint64_t{0} - static_cast<uint64_t>(c);
  return from_bits((bits(a) & m) | (bits(b) & ~m));
}

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInfD = std::numeric_limits<double>::infinity();

// 2^n for n in the normal range, put into the exponent bits.
[[gnu::always_inline]] inline float pow2i(int32_t n) { return from_bits(static_cast<uint32_t>(n + 127) << 23); }
[[gnu::always_inline]] inline double pow2i(int64_t n) { return from_bits(static_cast<uint64_t>(n + 1023) << 52); }

// ---- exp and expm1 for float -------------------------------------------------------
// x = n ln2 + r, |r| <= ln2 / 2; n is rounded by adding 1.5 * 2^23 (no float-to-int
// conversion, which could trap). e^r = 1 + r + r^2 P(r) with Cephes' expf minimax
// coefficients. 2^n is applied as 2^(n/2) 2^(n - n/2), both normal, so results down to
// the subnormals are right (one rounding) and overflow gives inf by itself.
struct ReducedF {
  float r;
  int32_t n;
};
[[gnu::always_inline]] inline ReducedF reduce_ln2(float x) {
  const float magic = 12582912.0f;  // 1.5 * 2^23
  const float v = std::fma(x, 1.44269504088896341f, magic);
  const float fn = v - magic;
  const int32_t n = static_cast<int32_t>(bits(v) - bits(magic));
  float r = std::fma(fn, -0.693145751953125f, x);  // ln2's first 16 bits: fn * this is exact
  r = std::fma(fn, -1.428606765330187e-06f, r);
  return {r, n};
}
[[gnu::always_inline]] inline float expm1_reduced(float r) {  // e^r - 1, |r| <= 0.35
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  return std::fma(p, r * r, r);
}
[[gnu::always_inline]] inline float exp(float x) {
  const float xc = sel(x < -104.0f, -104.0f, sel(x > 89.0f, 89.0f, x));  // keeps n in range
  const ReducedF k = reduce_ln2(xc);
  const float y = 1.0f + expm1_reduced(k.r);
  const int32_t n1 = k.n >> 1;
  const float e = y * pow2i(n1) * pow2i(k.n - n1);
  return sel(x != x, x, e);
}
// e^x - 1 = 2^n (e^r - 1) + (2^n - 1), written 2 (s em + (s - 1/2)) with s = 2^(n-1)
// so that n = 128 fits; s - 1/2 is exact while it matters (n <= 24).
[[gnu::always_inline]] inline float expm1(float x) {
  const float xc = sel(x < -18.0f, -18.0f, sel(x > 89.0f, 89.0f, x));
  const ReducedF k = reduce_ln2(xc);
  const float em = expm1_reduced(k.r);
  const float s = pow2i(k.n - 1);
  float e = 2.0f * std::fma(s, em, s - 0.5f);
  e = sel(x < -18.0f, -1.0f, e);
  e = sel(x == 0.0f, x, e);  // keeps -0
  return sel(x != x, x, e);
}

// ---- log and log1p for float -------------------------------------------------------
// x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact);
// log(1 + f) = f - f^2 / 2 + f^3 P(f) with Cephes' logf minimax coefficients, e ln2 added
// in two parts. Subnormals are scaled by 2^23 first. e and m come from one integer
// subtraction: t = bits(x) - bits(sqrt(1/2)) has e in its top 9 bits (arithmetic shift),
// and bits(x) - (t's exponent field) is m (5 instructions fewer than masking the mantissa
// and halving m above sqrt 2).
[[gnu::always_inline]] inline float log(float x) {
  const bool sub = x < 1.17549435e-38f;
  const float xs = sel(sub, x * 8388608.0f, x);
  const uint32_t u = bits(xs);
  const uint32_t t = u - 0x3f3504f3u;  // bits(sqrt(1/2))
  const float fe = static_cast<float>(static_cast<int32_t>(t) >> 23) - sel(sub, 23.0f, 0.0f);
  const float f = from_bits(u - (t & 0xff800000u)) - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = std::fma(p, f, -1.1514610310e-1f);
  p = std::fma(p, f, 1.1676998740e-1f);
  p = std::fma(p, f, -1.2420140846e-1f);
  p = std::fma(p, f, 1.4249322787e-1f);
  p = std::fma(p, f, -1.6668057665e-1f);
  p = std::fma(p, f, 2.0000714765e-1f);
  p = std::fma(p, f, -2.4999993993e-1f);
  p = std::fma(p, f, 3.3333331174e-1f);
  float y = f * z * p;
  y = std::fma(fe, -2.12194440e-4f, y);
  y = std::fma(-0.5f, z, y);
  float r = f + y;
  r = std::fma(fe, 0.693359375f, r);
  r = sel(x == 0.0f, -kInfF, r);
  r = sel(x < 0.0f, std::numeric_limits<float>::quiet_NaN(), r);
  r = sel(x == kInfF, x, r);
  return sel(x != x, x, r);
}
// log1p(x) = log(u) - ((u - 1) - x) / u with u = 1 + x rounded: the second term puts
// back what the rounding of u lost.
// One log, and no short-circuit conditions: inlined twice and with `||`, the loops over
// it stayed scalar (16M floats: 934 ms). Where u is inf, 0 or negative (x = inf, -1,
// below -1) log(u) alone is the answer (inf, -inf, NaN); x = ±0 gives x.
[[gnu::always_inline]] inline float log1p(float x) {
  const float u = 1.0f + x;
  const float lu = log(u);
  float r = lu - ((u - 1.0f) - x) / u;
  r = sel(int(x == kInfF) | int(u <= 0.0f), lu, r);
  r = sel(x == 0.0f, x, r);
  return sel(x != x, x, r);
}

// ---- sin, cos, tan for float ---------------------------------------------------------
// Two reductions by pi/2 (n = round(x 2/pi), quadrant n mod 4), in three tiers that the
// unary family picks per block of 256 (Note [Rare lanes], kernels/map.h):
//  - |x| <= 4096 (kTrigFloatRange): sin and cos in float. r = x - n pi/2 with pi/2 as
//    P1 (float(pi/2): x - n P1 is exact in one fma) + P2 (12 bits, so n P2 is exact for
//    n < 2^12) + P3; r1 - n P2 by TwoSum, so r = hi + lo to ~2^-48; Cephes' sinf/cosf
//    polynomials on |r| <= pi/4 with lo put back (sin: hi + (lo + hi z P); cos: 1 - z/2
//    with its rounding error recovered, - hi lo). Max 0.93 ulp on every float in [0, 4096]
//    (sin(-x) = -sin(x) bit for bit), 48 instructions per 8 lanes instead of 74.
//  - |x| <= 2^18 (kTrigFastRange) and tan everywhere up to there: reduced in double with
//    pi/2 in two parts (the first 33 bits, so n pi/2's first part is exact for n < 2^20),
//    Taylor polynomials in double (truncation below 3e-9 relative on |r| <= pi/4), then
//    rounded: within 0.6 ulp (float tan = s/c would reach 2.4 ulp).
//  - beyond (and NaN, inf): libm.
constexpr float kTrigFloatRange = 4096.0f;
constexpr float kTrigFastRange = 262144.0f;
struct TrigF {
  float s, c;  // sin r, cos r
  uint32_t q;  // quadrant
};
[[gnu::always_inline]] inline TrigF trig_reduce_float(float x) {
  const float magic = 12582912.0f;  // 1.5 * 2^23
  const float v = std::fma(x, 0.636619772367581343f, magic);
  const float fn = v - magic;
  const uint32_t q = bits(v) - bits(magic);
  const float r1 = std::fma(fn, -1.57079637050628662109375f, x);  // exact
  const float b = fn * 4.371395334601402e-08f;  // -n P2, exact
  const float hi = r1 + b;  // TwoSum
  const float bb = hi - r1;
  const float lo = std::fma(fn, -2.5633440682570896e-12f, (r1 - (hi - bb)) + (b - bb));
  const float z = hi * hi;
  float ps = -1.9515295891e-4f;
  ps = std::fma(ps, z, 8.3321608736e-3f);
  ps = std::fma(ps, z, -1.6666654611e-1f);
  float pc = 2.443315711809948e-5f;
  pc = std::fma(pc, z, -1.388731625493765e-3f);
  pc = std::fma(pc, z, 4.166664568298827e-2f);
  const float hz = 0.5f * z;
  const float w = 1.0f - hz;
  const float c = w + (((1.0f - w) - hz) + std::fma(z * z, pc, -hi * lo));
  const float s = hi + std::fma(hi * z, ps, lo);
  return {s, c, q};
}
// sin and cos for |x| <= kTrigFloatRange (other lanes get garbage).
[[gnu::always_inline]] inline float sin(float x) {
  const TrigF t = trig_reduce_float(x);
  const float v = sel((t.q & 1) != 0, t.c, t.s);
  return sel(x == 0.0f, x, from_bits(bits(v) ^ ((t.q & 2) << 30)));  // sin(-0) = -0
}
[[gnu::always_inline]] inline float cos(float x) {
  const TrigF t = trig_reduce_float(x);
  const float v = sel((t.q & 1) != 0, t.s, t.c);
  return from_bits(bits(v) ^ (((t.q + 1) & 2) << 30));
}

struct TrigD {
  double s, c;  // sin r, cos r
  uint64_t q;   // quadrant
};
[[gnu::always_inline]] inline TrigD trig_reduce(float x) {
  const double xd = x;
  const double magic = 6755399441055744.0;  // 1.5 * 2^52
  const double v = std::fma(xd, 0.63661977236758134308, magic);
  const double fn = v - magic;
  const uint64_t q = bits(v) - bits(magic);
  double r = std::fma(fn, -1.5707963267341256141662597656, xd);
  r = std::fma(fn, -6.0771005065061922e-11, r);
  const double z = r * r;
  double ps = 2.7557319223985891e-6;  // 1/9!
  ps = std::fma(ps, z, -1.9841269841269841e-4);
  ps = std::fma(ps, z, 8.3333333333333332e-3);
  ps = std::fma(ps, z, -1.6666666666666666e-1);
  const double s = std::fma(ps * z, r, r);
  double pc = -2.7557319223985888e-7;  // -1/10!
  pc = std::fma(pc, z, 2.4801587301587302e-5);
  pc = std::fma(pc, z, -1.3888888888888889e-3);
  pc = std::fma(pc, z, 4.1666666666666664e-2);
  pc = std::fma(pc, z, -0.5);
  const double c = std::fma(pc, z, 1.0);
  return {s, c, q};
}
// sin, cos and tan for |x| <= kTrigFastRange.
[[gnu::always_inline]] inline float sin_wide(float x) {
  const TrigD t = trig_reduce(x);
  double v = sel((t.q & 1) != 0, t.c, t.s);
  v = sel((t.q & 2) != 0, -v, v);
  return sel(x == 0.0f, x, static_cast<float>(v));
}
[[gnu::always_inline]] inline float cos_wide(float x) {
  const TrigD t = trig_reduce(x);
  double v = sel((t.q & 1) != 0, -t.s, t.c);
  v = sel((t.q & 2) != 0, -v, v);
  return static_cast<float>(v);
}
[[gnu::always_inline]] inline float tan(float x) {
  const TrigD t = trig_reduce(x);
  const bool odd = (t.q & 1) != 0;
  const double v = sel(odd, -t.c, t.s) / sel(odd, t.s, t.c);
  return sel(x == 0.0f, x, static_cast<float>(v));
}

// ---- erf for float -------------------------------------------------------------------
// |x| < 0.921875: x + x P(x^2); above: erfc(|x|) = e^(-x^2) Q(1 / (1 + |x| / 2)). Both
// polynomials are least-squares fits (relative, at Chebyshev nodes) made for ember;
// x^2's rounding error is carried into e^(-x^2) (x^2 = hi + lo, e^(-hi) (1 - lo)), so
// erfc's tail stays within a few 1e-7 relative (gelu uses it for negative inputs).
constexpr float kErfSplit = 0.921875f;
[[gnu::always_inline]] inline float erf_small(float a) {  // erf(a) / a - 1 (so erf = a + a Q)
  const float z = a * a;
  float p = 8.411063754e-05f;
  p = std::fma(p, z, -8.153790841e-04f);
  p = std::fma(p, z, 5.202176981e-03f);
  p = std::fma(p, z, -2.685995772e-02f);
  p = std::fma(p, z, 1.128370836e-01f);
  p = std::fma(p, z, -3.761263490e-01f);
  return std::fma(p, z, 1.283791661e-01f);
}
// erfc(a) e^(a^2) for a >= kErfSplit.
[[gnu::always_inline]] inline float erfc_scaled_tail(float a) {
  const float t = 1.0f / std::fma(0.5f, a, 1.0f);
  float q = 1.208054088e-02f;
  q = std::fma(q, t, 7.137572765e-02f);
  q = std::fma(q, t, -3.886352479e-01f);
  q = std::fma(q, t, 4.828376472e-01f);
  q = std::fma(q, t, -5.510548502e-02f);
  q = std::fma(q, t, 3.292571306e-01f);
  q = std::fma(q, t, 2.640782297e-01f);
  q = std::fma(q, t, 2.843239605e-01f);
  return std::fma(q, t, -1.199691324e-04f);
}
// erfc(a) for a >= kErfSplit given a^2 = a2 + a2lo.
[[gnu::always_inline]] inline float erfc_tail(float a, float a2, float a2lo) {
  const float q = erfc_scaled_tail(a);
  const float e = exp(-a2);
  return e * std::fma(-a2lo, q, q);
}
[[gnu::always_inline]] inline float erf(float x) {
  const float a = std::fabs(x);
  const float ac = sel(a > 10.0f, 10.0f, a);  // erf is 1 there; keeps a^2 finite
  const float a2 = ac * ac;
  const float a2lo = std::fma(ac, ac, -a2);
  const float small = std::fma(a, erf_small(a), a);
  const float large = 1.0f - erfc_tail(ac, a2, a2lo);
  return std::copysign(sel(a < kErfSplit, small, large), x);  // NaN passes through both
}
// e^x for x in [-170, 88] (n >= -252: both halves of 2^n normal) or NaN, without exp's
// clamps: for callers whose arguments are bounded already.
[[gnu::always_inline]] inline float exp_bounded(float x) {
  const ReducedF k = reduce_ln2(x);
  const float y = 1.0f + expm1_reduced(k.r);
  const int32_t n1 = k.n >> 1;
  return y * pow2i(n1) * pow2i(k.n - n1);
}
// erfc(a) e^(a^2) = t Q(t) with t = 1 / (1 + a / 2), for every a >= 0 (t in (0, 1]); Q a
// least-squares fit (relative, at Chebyshev nodes) made for ember: 1.2e-8 relative.
[[gnu::always_inline]] inline float erfcx_of_t(float t) {
  float q = 4.3195433357500625e-02f;
  q = std::fma(q, t, -2.3473359328820675e-01f);
  q = std::fma(q, t, 4.936949327974215e-01f);
  q = std::fma(q, t, -4.5497398937000344e-01f);
  q = std::fma(q, t, 1.3217704525294716e-01f);
  q = std::fma(q, t, -5.9211358143432036e-02f);
  q = std::fma(q, t, 9.346243445791257e-02f);
  q = std::fma(q, t, 1.7531597581182995e-01f);
  q = std::fma(q, t, 2.4688457471658015e-01f);
  q = std::fma(q, t, 2.8209375380830337e-01f);
  q = std::fma(q, t, 2.8209479518888514e-01f);
  return q * t;
}
// Phi(x) = erfc(-x / sqrt 2) / 2 = 1 - erfc(x / sqrt 2) / 2, one formula for every x
// (erfcx_of_t: no erf branch evaluated beside the tail's, as before; 59 instructions per
// 8 lanes instead of 75), the lower tail never cancels: gelu's cdf, within 10 ulp of
// gelu on all floats in [-16, 16] (the two-branch form: 450, in the far negative tail).
// Also gives e^(-x^2 / 2) in *gauss (gelu's backward needs both: one exp serves them).
[[gnu::always_inline]] inline float normal_cdf(float x, float* gauss) {
  const float xc = sel(x > 15.0f, 15.0f, sel(x < -15.0f, -15.0f, x));  // Phi is 0 or 1 beyond
  const float a = std::fabs(xc) * 0.70710678118654752f;
  // a^2 = x^2 / 2 from x's exact square, not from a's rounding
  const float x2 = xc * xc;
  const float x2lo = std::fma(xc, xc, -x2);
  const float e = exp_bounded(-0.5f * x2);  // >= -112.5
  const float q = erfcx_of_t(1.0f / std::fma(0.5f, a, 1.0f));
  const float tail = 0.5f * e * std::fma(-0.5f * x2lo, q, q);
  *gauss = e * std::fma(-0.5f, x2lo, 1.0f);  // beyond |x| = 15 it underflows to 0 anyway
  return sel(x < 0.0f, tail, 1.0f - tail);
}
[[gnu::always_inline]] inline float normal_cdf(float x) {
  float gauss;
  return normal_cdf(x, &gauss);
}

// ---- exp and log for double ------------------------------------------------------------
// The same reductions; e^r by its Taylor series to r^13 (truncation 4e-18 on |r| <= ln2/2),
// log(1 + f) = f - (f^2/2 - s (f^2/2 + R(s^2))) with s = f / (2 + f) and R the series of
// 2 atanh(s) / s - 2 from its s^2 term (to s^22: truncation below 1e-18).
[[gnu::always_inline]] inline double exp(double x) {
  const double xc = sel(x < -746.0, -746.0, sel(x > 710.0, 710.0, x));
  const double magic = 6755399441055744.0;
  const double v = std::fma(xc, 1.4426950408889634074, magic);
  const double fn = v - magic;
  const int64_t n = static_cast<int64_t>(bits(v) - bits(magic));
  double r = std::fma(fn, -6.93147180369123816490e-01, xc);
  r = std::fma(fn, -1.90821492927058770002e-10, r);
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = std::fma(p, r, 1.0 / 479001600.0);
  p = std::fma(p, r, 1.0 / 39916800.0);
  p = std::fma(p, r, 1.0 / 3628800.0);
  p = std::fma(p, r, 1.0 / 362880.0);
  p = std::fma(p, r, 1.0 / 40320.0);
  p = std::fma(p, r, 1.0 / 5040.0);
  p = std::fma(p, r, 1.0 / 720.0);
  p = std::fma(p, r, 1.0 / 120.0);
  p = std::fma(p, r, 1.0 / 24.0);
  p = std::fma(p, r, 1.0 / 6.0);
  p = std::fma(p, r, 0.5);
  const double y = 1.0 + std::fma(p, r * r, r);
  const int64_t n1 = n >> 1;
  const double e = y * pow2i(n1) * pow2i(n - n1);
  return sel(x != x, x, e);
}
[[gnu::always_inline]] inline double log(double x) {
  const bool sub = x < 2.2250738585072014e-308;
  const double xs = sel(sub, x * 18014398509481984.0, x);  // 2^54
  const uint64_t u = bits(xs);
  // the exponent as a double through the bits of 2^52 + e (AVX2 has no int64 -> double
  // conversion, and a loop that needs one stays scalar)
  const double biased = from_bits(uint64_t{0x4330000000000000} | ((u >> 52) & 0x7ffu)) - 4503599627370496.0;
  double m = from_bits((u & uint64_t{0x000fffffffffffff}) | uint64_t{0x3ff0000000000000});
  const bool big = m > 1.4142135623730951;
  m = sel(big, m * 0.5, m);
  const double fe = biased - 1023.0 - sel(sub, 54.0, 0.0) + sel(big, 1.0, 0.0);
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double R = 2.0 / 23.0;
  R = std::fma(R, z, 2.0 / 21.0);
  R = std::fma(R, z, 2.0 / 19.0);
  R = std::fma(R, z, 2.0 / 17.0);
  R = std::fma(R, z, 2.0 / 15.0);
  R = std::fma(R, z, 2.0 / 13.0);
  R = std::fma(R, z, 2.0 / 11.0);
  R = std::fma(R, z, 2.0 / 9.0);
  R = std::fma(R, z, 2.0 / 7.0);
  R = std::fma(R, z, 2.0 / 5.0);
  R = std::fma(R, z, 2.0 / 3.0);
  R = R * z;
  const double hfsq = 0.5 * f * f;
  double r = fe * 6.93147180369123816490e-01 + (f - (hfsq - std::fma(s, hfsq + R, fe * 1.90821492927058770002e-10)));
  r = sel(x == 0.0, -kInfD, r);
  r = sel(x < 0.0, std::numeric_limits<double>::quiet_NaN(), r);
  r = sel(x == kInfD, x, r);
  return sel(x != x, x, r);
}

// ---- float pow's parts ---------------------------------------------------------------
// log|x| of a float in double, to ~2^-40 relative: the float log's reduction (m in
// [sqrt(1/2), sqrt 2) from one integer subtraction), then in double 2 atanh(s) with
// s = f / (2 + f), |s| <= 0.1716, to s^13; 0 gives -inf, inf and NaN themselves.
[[gnu::always_inline]] inline double log_of_float(float ax) {
  const bool sub = ax < 1.17549435e-38f;
  const float xs = sel(sub, ax * 8388608.0f, ax);
  const uint32_t u = bits(xs);
  const uint32_t t = u - 0x3f3504f3u;
  const int32_t e = (static_cast<int32_t>(t) >> 23) - (sub ? 23 : 0);
  const double f = double(from_bits(u - (t & 0xff800000u))) - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double R = 2.0 / 13.0;
  R = std::fma(R, z, 2.0 / 11.0);
  R = std::fma(R, z, 2.0 / 9.0);
  R = std::fma(R, z, 2.0 / 7.0);
  R = std::fma(R, z, 2.0 / 5.0);
  R = std::fma(R, z, 2.0 / 3.0);
  const double l = std::fma(double(e), 0.69314718055994530942, std::fma(s * z, R, 2.0 * s));
  const double axd = ax;
  return sel((axd > 0.0) & (axd < kInfD), l, sel(axd == 0.0, -kInfD, axd));
}
// e^w rounded to float, computed in double to ~2^-32 relative (Taylor to r^8); w beyond
// +-200 gives 0 or inf, NaN stays NaN.
[[gnu::always_inline]] inline float exp_to_float(double w) {
  const double wc = sel(w < -200.0, -200.0, sel(w > 200.0, 200.0, w));
  const double magic = 6755399441055744.0;  // 1.5 * 2^52
  const double v = std::fma(wc, 1.4426950408889634074, magic);
  const double fn = v - magic;
  const uint64_t n = bits(v) - bits(magic);
  double r = std::fma(fn, -6.93147180369123816490e-01, wc);
  r = std::fma(fn, -1.90821492927058770002e-10, r);
  double p = 1.0 / 40320.0;
  p = std::fma(p, r, 1.0 / 5040.0);
  p = std::fma(p, r, 1.0 / 720.0);
  p = std::fma(p, r, 1.0 / 120.0);
  p = std::fma(p, r, 1.0 / 24.0);
  p = std::fma(p, r, 1.0 / 6.0);
  p = std::fma(p, r, 0.5);
  p = std::fma(p, r, 1.0);
  p = std::fma(p, r, 1.0);
  return static_cast<float>(p * from_bits((n + 1023) << 52));
}

// double versions of the rest: libm, one element at a time.
inline double expm1(double x) { return std::expm1(x); }
inline double log1p(double x) { return std::log1p(x); }
inline double sin(double x) { return std::sin(x); }
inline double cos(double x) { return std::cos(x); }
inline double tan(double x) { return std::tan(x); }
inline double erf(double x) { return std::erf(x); }
inline double normal_cdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline double normal_cdf(double x, double* gauss) {
  *gauss = exp(-0.5 * x * x);
  return normal_cdf(x);
}

}  // namespace ember::kernels::vmath
