// The special functions (kernels/special.h). Each is a plain double function written from
// the published series, asymptotic expansions, recurrences and integrals named at it
// (mostly DLMF, dlmf.nist.gov), and an entry functor that evaluates it for float (and
// through float, float16/bfloat16) or double. Values follow torch.special's conventions at
// poles, outside the domain and at the infinities.
#include "kernels/special.h"
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include "kernels/map.h"

namespace ember::kernels::special {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kEuler = 0.57721566490153286061;  // Euler's constant
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kLogPi = 1.14472988584940017414;
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_int(double x) { return x == std::floor(x); }

// ---- Gamma, digamma, polygamma, Hurwitz zeta ---------------------------------------------

// log|Γ(x)| without the sign that std::lgamma writes to a global (a race between threads).
double lgamma_(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

// sin(πx), with x reduced to [-1/2, 1/2] first so that large x keep their digits.
double sin_pi(double x) {
  const double r = x - 2 * std::round(x / 2);  // exact; in [-1, 1]
  if (r > 0.5) return std::sin(kPi * (1 - r));
  if (r < -0.5) return -std::sin(kPi * (1 + r));
  return std::sin(kPi * r);
}

// ψ(x): shifted up to x >= 10 by ψ(x) = ψ(x + 1) - 1/x, then the asymptotic series
// ψ(x) ~ ln x - 1/(2x) - Σ B_2k / (2k x^2k) (DLMF 5.11.2); below 0 the reflection
// ψ(x) = ψ(1 - x) - π cot(πx) (DLMF 5.5.4).
double digamma(double x) {
  if (std::isnan(x) || x == kInf) return x;
  if (x == -kInf) return kNaN;
  if (x == 0) return std::copysign(kInf, -x);
  if (x < 0) {
    if (is_int(x)) return kNaN;
    const double r = x - std::round(x);  // π cot(πx) = π cot(πr)
    return digamma(1 - x) - kPi / std::tan(kPi * r);
  }
  double acc = 0;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  const double z = 1 / (x * x);
  const double tail =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return acc + std::log(x) - 0.5 / x - tail;
}

// ψ'(x): shifted up by ψ'(x) = ψ'(x + 1) + 1/x², then
// ψ'(x) ~ 1/x + 1/(2x²) + Σ B_2k / x^(2k+1) (DLMF 5.15.8); below 1/2 the reflection
// ψ'(1 - x) + ψ'(x) = π² / sin²(πx) (DLMF 5.15.6).
double trigamma(double x) {
  if (std::isnan(x) || x == kInf) return std::isnan(x) ? x : 0.0;
  if (x == -kInf) return kNaN;
  if (x <= 0 && is_int(x)) return kInf;
  if (x < 0.5) {
    const double s = sin_pi(x);
    return -trigamma(1 - x) + kPi * kPi / (s * s);
  }
  double acc = 0;
  while (x < 10) {
    acc += 1 / (x * x);
    x += 1;
  }
  const double z = 1 / (x * x);
  const double tail =
      z * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66 - z * (691.0 / 2730 - z * 7.0 / 6))))));
  return acc + 1 / x + 0.5 * z + tail / x;
}

// ζ(s, q) = Σ (q + k)^-s by Euler–Maclaurin summation (DLMF 25.11.5 with 2.10.1): the
// first N terms, then the integral and the Bernoulli corrections at a = q + N.
// The domain checks come in torch's order (zeta(NaN, 0) is inf), and q = inf gives NaN as there.
double zeta(double s, double q) {
  if (s == 1) return kInf;
  if (s < 1) return kNaN;
  if (q <= 0) {
    if (is_int(q)) return kInf;
    if (!is_int(s)) return kNaN;  // a negative base to a fractional power
  }
  if (std::isnan(s) || std::isnan(q) || q == kInf) return kNaN;
  // B_2j / (2j)!
  static constexpr double kB[] = {1.0 / 12,
                                  -1.0 / 720,
                                  1.0 / 30240,
                                  -1.0 / 1209600,
                                  1.0 / 47900160,
                                  -691.0 / 1307674368000.0,
                                  7.0 / (6 * 87178291200.0),
                                  -3617.0 / (510 * 20922789888000.0),
                                  43867.0 / (798 * 6402373705728000.0),
                                  -174611.0 / (330 * 2432902008176640000.0)};
  double n = 9;
  if (q < 0) n += std::ceil(-q);
  double sum = 0;
  for (double k = 0; k < n; ++k) {
    sum += std::pow(q + k, -s);
    if (q >= 0 && std::fabs(std::pow(q + k, -s)) < kEps * std::fabs(sum)) return sum;
  }
  const double a = q + n;
  double tail = std::pow(a, 1 - s) / (s - 1) + 0.5 * std::pow(a, -s);
  double rising = s, apow = std::pow(a, -s - 1);  // s (s+1) ... (s+2j-2), a^(-s-2j+1)
  for (int j = 0; j < 10; ++j) {
    const double term = kB[j] * rising * apow;
    tail += term;
    if (std::fabs(term) < kEps * std::fabs(sum + tail)) break;
    rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
    apow /= a * a;
  }
  return sum + tail;
}

// ψ^(n)(x) = (-1)^(n+1) n! ζ(n + 1, x) (DLMF 25.11.12) for n >= 2.
double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  const double sign = n % 2 ? 1.0 : -1.0;
  return sign * std::exp(lgamma_(double(n) + 1)) * zeta(double(n) + 1, x);
}

// ---- Incomplete gamma ---------------------------------------------------------------------

// The regularized lower P(a, x) and upper Q(a, x): the series
// P = x^a e^-x / Γ(a+1) Σ x^k / ((a+1)...(a+k)) (DLMF 8.7.1) for x < a + 1, else Legendre's
// continued fraction for Q (DLMF 8.9.2) by the modified Lentz method.
double igamma_impl(double a, double x, bool upper) {
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  if (a < 0 || x < 0) return kNaN;
  if (a == 0) {
    if (x > 0) return upper ? 0.0 : 1.0;
    return kNaN;
  }
  if (x == 0) return upper ? 1.0 : 0.0;
  if (a == kInf) return x == kInf ? kNaN : (upper ? 1.0 : 0.0);
  if (x == kInf) return upper ? 0.0 : 1.0;
  const double log_xa = a * std::log(x) - x;
  if (x < a + 1) {
    double term = 1, sum = 1;
    for (int k = 1; k < 100000; ++k) {
      term *= x / (a + k);
      sum += term;
      if (term < kEps * sum) break;
    }
    const double p = std::exp(log_xa - lgamma_(a + 1)) * sum;
    return upper ? 1 - p : p;
  }
  constexpr double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < kEps) break;
  }
  const double q = std::exp(log_xa - lgamma_(a)) * h;
  return upper ? q : 1 - q;
}

// ---- The normal distribution ----------------------------------------------------------------

// erfcx(x) = e^(x²) erfc(x): the product with x² split exactly (fma) for x < 26, the
// asymptotic series 1/(x√π) Σ (-1)^k (2k-1)!! / (2x²)^k (DLMF 7.12.1) beyond, and
// 2e^(x²) - erfcx(-x) for x < 0.
double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    const double p = x * x, e = std::fma(x, x, -p);
    return 2 * std::exp(p) * (1 + e) - erfcx(-x);
  }
  if (x < 26) {
    const double p = x * x, e = std::fma(x, x, -p);
    return std::exp(p) * (1 + e) * std::erfc(x);
  }
  if (x == kInf) return 0;
  const double z = 1 / (2 * x * x);
  double term = 1, sum = 1;
  for (int k = 1; k < 12; ++k) {
    term *= -(2 * k - 1) * z;
    sum += term;
  }
  return sum / (x * kSqrtPi);
}

// Φ(x) = erfc(-x/√2) / 2.
double ndtr(double x) { return 0.5 * std::erfc(-x / kSqrt2); }

// log Φ(x): log1p(-Φ(-x)) above 0, and through erfcx below, where Φ underflows:
// Φ(x) = erfcx(-x/√2) e^(-x²/2) / 2.
double log_ndtr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return std::log1p(-0.5 * std::erfc(x / kSqrt2));
  if (x == -kInf) return -kInf;
  return std::log(0.5 * erfcx(-x / kSqrt2)) - 0.5 * x * x;
}

// Φ^-1(p): Abramowitz & Stegun 26.2.23 as a start (error < 4.5e-4), then Halley steps
// (Φ'' / Φ' = -x) on Φ(x) = p, with the Newton step (Φ(x) - p) / φ(x) written through
// erfcx, log Φ and the Mills ratio so that p down to the smallest denormal converges;
// p > 1/2 by Φ^-1(p) = -Φ^-1(1 - p).
double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0;
  if (p > 0.5) return -ndtri(1 - p);
  const double t = std::sqrt(-2 * std::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double log_p = std::log(p);
  for (int i = 0; i < 10 && x < 0; ++i) {
    // Φ(x) = erfcx(-x/√2) e^(-x²/2) / 2 for x <= 0; (Φ - p) / φ = (Φ / φ) (1 - p / Φ)
    const double e = erfcx(-x / kSqrt2);
    const double mills = 0.5 * std::sqrt(2 * kPi) * e;
    const double newton = mills * -std::expm1(log_p - (std::log(0.5 * e) - 0.5 * x * x));
    const double step = newton / (1 + 0.5 * x * newton);
    x -= step;
    if (std::fabs(step) <= 4 * kEps * std::fabs(x)) break;
  }
  return x;
}

// ---- Bessel functions -----------------------------------------------------------------------

// I_ν(x) for ν = 0, 1 and 0 <= x < 30 by its power series (DLMF 10.25.2).
double bessel_i_series(int nu, double x) {
  const double q = x * x / 4;
  double term = nu ? x / 2 : 1.0, sum = term;
  for (int k = 1; k < 500; ++k) {
    term *= q / (k * double(k + nu));
    sum += term;
    if (term < kEps * sum) break;
  }
  return sum;
}

// I_ν(x) e^-x for x >= 30 by the asymptotic expansion (DLMF 10.40.1).
double bessel_i_asymptotic_scaled(int nu, double x) {
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    term *= -(mu - double(2 * k - 1) * (2 * k - 1)) / (8.0 * k * x);
    sum += term;
    if (std::fabs(term) < kEps * std::fabs(sum)) break;
  }
  return sum / std::sqrt(2 * kPi * x);
}

// I_ν(|x|), scaled by e^-|x| or not.
double bessel_i_abs(int nu, double x, bool scaled) {
  const double ax = std::fabs(x);
  if (ax == kInf) return scaled ? 0.0 : kNaN;  // torch's NaN for the unscaled
  if (ax < 30) return scaled ? bessel_i_series(nu, ax) * std::exp(-ax) : bessel_i_series(nu, ax);
  const double s = bessel_i_asymptotic_scaled(nu, ax);
  return scaled ? s : s * std::exp(ax / 2) * std::exp(ax / 2);  // halves: e^ax overflows before I_ν
}

double i0(double x) { return std::isnan(x) ? x : bessel_i_abs(0, x, false); }
double i0e(double x) { return std::isnan(x) ? x : bessel_i_abs(0, x, true); }
double i1(double x) { return std::isnan(x) ? x : std::copysign(bessel_i_abs(1, x, false), x); }
double i1e(double x) { return std::isnan(x) ? x : std::copysign(bessel_i_abs(1, x, true), x); }

// K_ν(x) e^x = ∫_0^∞ e^(-x (cosh t - 1)) cosh(νt) dt (DLMF 10.32.9) by the trapezoidal
// rule, which converges exponentially for this analytic, fast-decaying integrand; the
// step shrinks as 1/√x with the integrand's width, so some twenty nodes serve every x >= 1.
// e^(νt) advances by one product per node (cosh(νt) = (v + 1/v) / 2 cancels nothing).
double bessel_k_integral_scaled(double nu, double x) {
  const double h = std::fmin(0.2, 0.5 / std::sqrt(x));
  const double step_nu = std::exp(nu * h);
  double v = 1, sum = 0.5;
  for (int k = 1; k < 100000; ++k) {
    v *= step_nu;
    const double s = std::sinh(0.5 * k * h);  // cosh t - 1 = 2 sinh²(t/2)
    const double f = std::exp(-2 * x * s * s) * 0.5 * (v + 1 / v);
    sum += f;
    if (f < 1e-17 * sum) break;
  }
  return h * sum;
}

// K_0 and K_1 for 0 < x <= 1 by their series (DLMF 10.31.1).
double bessel_k0_series(double x) {
  const double q = x * x / 4;
  double term = 1, harmonic = 0, sum = 0;
  for (int k = 1; k < 100; ++k) {
    term *= q / (double(k) * k);
    harmonic += 1.0 / k;
    sum += term * harmonic;
    if (term * harmonic < kEps * sum) break;
  }
  return -(std::log(x / 2) + kEuler) * bessel_i_series(0, x) + sum;
}

double bessel_k1_series(double x) {
  const double q = x * x / 4;
  // ψ(k+1) + ψ(k+2) = -2γ + H_k + H_(k+1)
  double term = 1, hk = 0, sum = -2 * kEuler + 1;
  for (int k = 1; k < 100; ++k) {
    term *= q / (double(k) * (k + 1));
    hk += 1.0 / k;
    const double add = term * (-2 * kEuler + 2 * hk + 1.0 / (k + 1));
    sum += add;
    if (std::fabs(add) < kEps * std::fabs(sum)) break;
  }
  return 1 / x + std::log(x / 2) * bessel_i_series(1, x) - x / 4 * sum;
}

double bessel_k(int nu, double x, bool scaled) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x == kInf) return 0;
  if (x <= 1) {
    const double k = nu ? bessel_k1_series(x) : bessel_k0_series(x);
    return scaled ? k * std::exp(x) : k;
  }
  const double s = bessel_k_integral_scaled(nu, x);
  return scaled ? s : s * std::exp(-x);
}

// J_0, J_1, Y_0, Y_1 for 0 < x <= 25 from one backward (Miller) recurrence
// J_(k-1) = (2k/x) J_k - J_(k+1), normalized by J_0 + 2 Σ J_2k = 1 (DLMF 10.12.4), and
// the Neumann series Y_0 = (2/π)(ln(x/2) + γ) J_0 - (4/π) Σ (-1)^k J_2k / k (DLMF 10.8.2)
// with its derivative for Y_1 = -Y_0'.
struct BesselJY {
  double j0, j1, y0, y1;
};

BesselJY bessel_jy_small(double x) {
  constexpr int kMax = 160;
  double j[kMax + 2];
  int m = 2 * int((x + 26 + 4 * std::cbrt(x)) / 2);  // far enough that J_m(x) is negligible
  if (m > kMax) m = kMax;
  j[m + 1] = 0;
  j[m] = 1e-30;
  for (int k = m; k >= 1; --k) {
    j[k - 1] = (2.0 * k / x) * j[k] - j[k + 1];
    if (std::fabs(j[k - 1]) > 1e250)
      for (int i = k - 1; i <= m + 1; ++i) j[i] *= 1e-250;
  }
  double norm = j[0];
  for (int k = 2; k <= m; k += 2) norm += 2 * j[k];
  for (int k = 0; k <= m + 1; ++k) j[k] /= norm;
  double s0 = 0, s1 = 0;
  for (int k = 1; 2 * k + 1 <= m + 1; ++k) {
    const double sign = k % 2 ? -1.0 : 1.0;
    s0 += sign * j[2 * k] / k;
    s1 += sign * (j[2 * k - 1] - j[2 * k + 1]) / k;
  }
  const double l = std::log(x / 2) + kEuler;
  BesselJY r;
  r.j0 = j[0];
  r.j1 = j[1];
  r.y0 = 2 / kPi * (l * j[0] - 2 * s0);
  r.y1 = 2 / kPi * (l * j[1] - j[0] / x + s1);
  return r;
}

// Hankel's expansion for x > 25 (DLMF 10.17.3-4): J_ν = √(2/(πx)) (P cos χ - Q sin χ),
// Y_ν = √(2/(πx)) (P sin χ + Q cos χ), χ = x - (ν/2 + 1/4)π, with cos χ and sin χ taken
// from sin x and cos x so that no multiple of π is subtracted from a large x.
BesselJY bessel_jy_large(double x) {
  BesselJY r;
  const double sx = std::sin(x), cx = std::cos(x), amp = std::sqrt(2 / (kPi * x));
  for (int nu = 0; nu < 2; ++nu) {
    const double mu = 4.0 * nu * nu;
    double term = 1, p = 1, q = 0;
    for (int k = 1; k < 60; ++k) {
      term *= (mu - double(2 * k - 1) * (2 * k - 1)) / (8.0 * k * x);
      const int r4 = k % 4;  // terms k: +P, +Q, -P, -Q, ...
      if (r4 == 1) q += term;
      else if (r4 == 2) p -= term;
      else if (r4 == 3) q -= term;
      else p += term;
      if (std::fabs(term) < 1e-17) break;
    }
    double c, s;
    if (nu == 0) {
      c = (cx + sx) / kSqrt2;
      s = (sx - cx) / kSqrt2;
    } else {
      c = (sx - cx) / kSqrt2;
      s = -(sx + cx) / kSqrt2;
    }
    const double jv = amp * (p * c - q * s), yv = amp * (p * s + q * c);
    if (nu == 0) {
      r.j0 = jv;
      r.y0 = yv;
    } else {
      r.j1 = jv;
      r.y1 = yv;
    }
  }
  return r;
}

BesselJY bessel_jy(double ax) { return ax <= 25 ? bessel_jy_small(ax) : bessel_jy_large(ax); }

// At ±inf J and Y are NaN, as torch's.
double bessel_j0(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  if (ax == kInf) return kNaN;
  if (ax < 1e-8) return 1 - ax * ax / 4;
  return bessel_jy(ax).j0;
}

double bessel_j1(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  if (ax == kInf) return kNaN;
  if (ax < 1e-8) return x / 2;
  const double j1 = bessel_jy(ax).j1;
  return x < 0 ? -j1 : j1;
}

double bessel_y(int nu, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (x == kInf) return kNaN;
  if (x < 1e-8) {
    const double l = std::log(x / 2) + kEuler;
    return nu ? -2 / (kPi * x) + x / kPi * (l - 0.5) : 2 / kPi * l;
  }
  const BesselJY r = bessel_jy(x);
  return nu ? r.y1 : r.y0;
}

// j_0(x) = sin x / x.
double spherical_bessel_j0(double x) {
  if (std::isnan(x)) return x;
  if (std::fabs(x) == kInf) return 0;
  if (std::fabs(x) < 1e-4) return 1 - x * x / 6;
  return std::sin(x) / x;
}

// Ai(x): the Maclaurin series Ai = Ai(0) f - |Ai'(0)| g (DLMF 9.4.1) on [-7, 1];
// Ai(x) = √(x/3) K_(1/3)(ζ) / π, ζ = 2x^(3/2)/3 (DLMF 9.6.1) above, with K by the
// integral; and the oscillating asymptotic expansion (DLMF 9.7.9) below -7.
double airy_ai(double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;  // NaN at ±inf, as torch's
  constexpr double ai0 = 0.355028053887817239260, aip0 = 0.258819403792806798405;
  if (x > 1) {
    const double zeta = 2.0 / 3 * x * std::sqrt(x);
    if (zeta > 745) return 0;
    return std::sqrt(x / 3) / kPi * bessel_k_integral_scaled(1.0 / 3, zeta) * std::exp(-zeta);
  }
  if (x >= -7) {
    const double z3 = x * x * x;
    double f = 1, g = x, tf = 1, tg = x;
    for (int k = 1; k < 200; ++k) {
      tf *= z3 / ((3.0 * k - 1) * (3.0 * k));
      tg *= z3 / ((3.0 * k) * (3.0 * k + 1));
      f += tf;
      g += tg;
      if (std::fabs(tf) + std::fabs(tg) < 1e-18 * (std::fabs(f) + std::fabs(g))) break;
    }
    return ai0 * f - aip0 * g;
  }
  const double ax = -x, zeta = 2.0 / 3 * ax * std::sqrt(ax);
  // u_k = (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) u_(k-1) (DLMF 9.7.2); the terms u_k / ζ^k
  double term = 1, p = 1, q = 0;
  for (int k = 1; k < 40; ++k) {
    term *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k) / zeta;
    const int r4 = k % 4;
    if (r4 == 1) q += term;
    else if (r4 == 2) p -= term;
    else if (r4 == 3) q -= term;
    else p += term;
    if (std::fabs(term) < 1e-17) break;
  }
  const double angle = zeta + kPi / 4;
  return (std::sin(angle) * p - std::cos(angle) * q) / (kSqrtPi * std::sqrt(std::sqrt(ax)));
}

// ---- Orthogonal polynomials (DLMF 18.9.1, 18.9.3), by three-term recurrences --------------
// The degree n arrives as a float and is truncated to an integer, as torch does; n < 0
// gives 0. A recurrence that has neither ended nor overflowed after kMaxSteps steps (a
// bounded polynomial of a huge degree) gives NaN rather than running for hours.

constexpr int64_t kMaxSteps = int64_t(1) << 24;

int64_t degree(double n) {
  if (!(n > -1)) return -1;  // also NaN
  if (n > 9.2e18) return int64_t(9.2e18);
  return int64_t(n);
}

// The shared recurrence p_(k+1) = 2x p_k - p_(k-1) of the four Chebyshev kinds, from
// p_0 = 1 and p_1.
double chebyshev_recurrence(double x, int64_t n, double p1) {
  if (n == 0) return 1;
  double a = 1, b = p1;
  for (int64_t k = 1; k < n; ++k) {
    if (k == kMaxSteps) return kNaN;
    const double c = 2 * x * b - a;
    a = b;
    b = c;
    if (!std::isfinite(b)) break;
  }
  return b;
}

double chebyshev_t(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (std::fabs(x) == 1) return x > 0 || n % 2 == 0 ? 1.0 : -1.0;
  if (n > 6 && std::fabs(x) < 1) return std::cos(double(n) * std::acos(x));
  return chebyshev_recurrence(x, n, x);
}

double chebyshev_u(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (std::fabs(x) == 1) return x > 0 || n % 2 == 0 ? double(n + 1) : -double(n + 1);
  if (n > 8 && std::fabs(x) < 1) {
    const double t = std::acos(x);
    return std::sin(double(n + 1) * t) / std::sin(t);
  }
  return chebyshev_recurrence(x, n, 2 * x);
}

double chebyshev_v(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (x == 1) return 1;
  if (x == -1) return n % 2 == 0 ? double(2 * n + 1) : -double(2 * n + 1);
  if (n > 8 && std::fabs(x) < 1) {
    const double t = std::acos(x);
    return std::cos((double(n) + 0.5) * t) / std::cos(t / 2);
  }
  return chebyshev_recurrence(x, n, 2 * x - 1);
}

double chebyshev_w(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (x == 1) return double(2 * n + 1);
  if (x == -1) return n % 2 == 0 ? 1.0 : -1.0;
  if (n > 8 && std::fabs(x) < 1) {
    const double t = std::acos(x);
    return std::sin((double(n) + 0.5) * t) / std::sin(t / 2);
  }
  return chebyshev_recurrence(x, n, 2 * x + 1);
}

double hermite_h(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (n == 0) return 1;
  double a = 1, b = 2 * x;
  for (int64_t k = 1; k < n; ++k) {
    if (k == kMaxSteps) return kNaN;
    const double c = 2 * x * b - 2 * double(k) * a;
    a = b;
    b = c;
    if (!std::isfinite(b)) break;
  }
  return b;
}

double hermite_he(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (n == 0) return 1;
  double a = 1, b = x;
  for (int64_t k = 1; k < n; ++k) {
    if (k == kMaxSteps) return kNaN;
    const double c = x * b - double(k) * a;
    a = b;
    b = c;
    if (!std::isfinite(b)) break;
  }
  return b;
}

double laguerre_l(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (n == 0 || x == 0) return 1;
  double a = 1, b = 1 - x;
  for (int64_t k = 1; k < n; ++k) {
    if (k == kMaxSteps) return kNaN;
    const double c = ((2 * double(k) + 1 - x) * b - double(k) * a) / double(k + 1);
    a = b;
    b = c;
    if (!std::isfinite(b)) break;
  }
  return b;
}

double legendre_p(double x, double nf) {
  const int64_t n = degree(nf);
  if (n < 0) return 0;
  if (std::isnan(x)) return x;
  if (std::fabs(x) == 1) return x > 0 || n % 2 == 0 ? 1.0 : -1.0;
  if (n == 0) return 1;
  double a = 1, b = x;
  for (int64_t k = 1; k < n; ++k) {
    if (k == kMaxSteps) return kNaN;
    const double c = ((2 * double(k) + 1) * x * b - double(k) * a) / double(k + 1);
    a = b;
    b = c;
    if (!std::isfinite(b)) break;
  }
  return b;
}

// ---- The rest ----------------------------------------------------------------------------

double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  if (x == 0) return 0;
  return -kInf;
}

double sinc(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return 1;
  return sin_pi(x) / (kPi * x);  // NaN at ±inf, as torch's
}

double xlog1py(double x, double y) {
  if (std::isnan(y)) return y;
  if (x == 0) return 0;
  return x * std::log1p(y);
}

double mvlgamma(double x, int64_t p) {
  double sum = 0.25 * double(p) * double(p - 1) * kLogPi;
  for (int64_t i = 0; i < p; ++i) sum += lgamma_(x - 0.5 * double(i));
  return sum;
}

}  // namespace

// ---- Entry functors ----------------------------------------------------------------------
//
// A plain entry is one double function, named by a functor that carries its address: all
// plain entries of one storage type run through the same loop, which calls the function by
// pointer. The functions are scalar code (branches, series, libm calls) that no loop
// vectorizes, so the call costs little beside them (timed over 2^18 floats: within ±10% of
// inlining, either way), and the unit compiles 8 shared loops (and polygamma's and
// mvlgamma's own 8) instead of 168: 29.5 -> 3.4 s.
// Not so for std::complex's functions (kernels/complex.cpp): called by pointer, complex64
// exp and sqrt ran 2.5-3.5x slower, so they stay inlined.

#define EMBER_SPECIAL_UNARY(functor, expr)                            \
  static double functor##_value(double x) { return expr; }           \
  template <class C>                                                 \
  struct functor {                                                   \
    static constexpr double (*value)(double) = functor##_value;     \
  };
#define EMBER_SPECIAL_BINARY(functor, expr)                           \
  static double functor##_value(double x, double y) { return expr; } \
  template <class C>                                                 \
  struct functor {                                                   \
    static constexpr double (*value)(double, double) = functor##_value; \
  };

EMBER_SPECIAL_UNARY(lgamma_fn, lgamma_(x))
EMBER_SPECIAL_UNARY(digamma_fn, digamma(x))
EMBER_SPECIAL_UNARY(i0_fn, i0(x))
EMBER_SPECIAL_UNARY(i0e_fn, i0e(x))
EMBER_SPECIAL_UNARY(i1_fn, i1(x))
EMBER_SPECIAL_UNARY(i1e_fn, i1e(x))
EMBER_SPECIAL_UNARY(erfcx_fn, erfcx(x))
EMBER_SPECIAL_UNARY(ndtr_fn, ndtr(x))
EMBER_SPECIAL_UNARY(ndtri_fn, ndtri(x))
EMBER_SPECIAL_UNARY(log_ndtr_fn, log_ndtr(x))
EMBER_SPECIAL_UNARY(entr_fn, entr(x))
EMBER_SPECIAL_UNARY(sinc_fn, sinc(x))
EMBER_SPECIAL_UNARY(bessel_j0_fn, bessel_j0(x))
EMBER_SPECIAL_UNARY(bessel_j1_fn, bessel_j1(x))
EMBER_SPECIAL_UNARY(bessel_y0_fn, bessel_y(0, x))
EMBER_SPECIAL_UNARY(bessel_y1_fn, bessel_y(1, x))
EMBER_SPECIAL_UNARY(modified_bessel_i0_fn, i0(x))
EMBER_SPECIAL_UNARY(modified_bessel_i1_fn, i1(x))
EMBER_SPECIAL_UNARY(modified_bessel_k0_fn, bessel_k(0, x, false))
EMBER_SPECIAL_UNARY(modified_bessel_k1_fn, bessel_k(1, x, false))
EMBER_SPECIAL_UNARY(scaled_modified_bessel_k0_fn, bessel_k(0, x, true))
EMBER_SPECIAL_UNARY(scaled_modified_bessel_k1_fn, bessel_k(1, x, true))
EMBER_SPECIAL_UNARY(spherical_bessel_j0_fn, spherical_bessel_j0(x))
EMBER_SPECIAL_UNARY(airy_ai_fn, airy_ai(x))
EMBER_SPECIAL_BINARY(igamma_fn, igamma_impl(x, y, false))
EMBER_SPECIAL_BINARY(igammac_fn, igamma_impl(x, y, true))
EMBER_SPECIAL_BINARY(zeta_fn, zeta(x, y))
EMBER_SPECIAL_BINARY(xlog1py_fn, xlog1py(x, y))
EMBER_SPECIAL_BINARY(chebyshev_t_fn, chebyshev_t(x, y))
EMBER_SPECIAL_BINARY(chebyshev_u_fn, chebyshev_u(x, y))
EMBER_SPECIAL_BINARY(chebyshev_v_fn, chebyshev_v(x, y))
EMBER_SPECIAL_BINARY(chebyshev_w_fn, chebyshev_w(x, y))
EMBER_SPECIAL_BINARY(shifted_chebyshev_t_fn, chebyshev_t(2 * x - 1, y))
EMBER_SPECIAL_BINARY(shifted_chebyshev_u_fn, chebyshev_u(2 * x - 1, y))
EMBER_SPECIAL_BINARY(shifted_chebyshev_v_fn, chebyshev_v(2 * x - 1, y))
EMBER_SPECIAL_BINARY(shifted_chebyshev_w_fn, chebyshev_w(2 * x - 1, y))
EMBER_SPECIAL_BINARY(hermite_h_fn, hermite_h(x, y))
EMBER_SPECIAL_BINARY(hermite_he_fn, hermite_he(x, y))
EMBER_SPECIAL_BINARY(laguerre_l_fn, laguerre_l(x, y))
EMBER_SPECIAL_BINARY(legendre_p_fn, legendre_p(x, y))
#undef EMBER_SPECIAL_UNARY
#undef EMBER_SPECIAL_BINARY

// The entries with an int argument (polygamma's n, mvlgamma's p) read it from the op's Scalars.
template <class C>
struct polygamma_fn {
  int64_t n;
  explicit polygamma_fn(const Scalar* args) : n(args[0].to_int64()) {}
  C operator()(C x) const { return C(polygamma(n, double(x))); }
};
template <class C>
struct mvlgamma_fn {
  int64_t p;
  explicit mvlgamma_fn(const Scalar* args) : p(args[0].to_int64()) {}
  C operator()(C x) const { return C(mvlgamma(double(x), p)); }
};

namespace {

// A plain entry's function, called by pointer from one loop per storage type.
template <class C>
struct unary_value {
  double (*f)(double);
  C operator()(C x) const { return C(f(double(x))); }
};
template <class C>
struct binary_value {
  double (*f)(double, double);
  C operator()(C x, C y) const { return C(f(double(x), double(y))); }
};

template <class T, class = void>
struct is_plain : std::false_type {};
template <class T>
struct is_plain<T, std::void_t<decltype(T::value)>> : std::true_type {};

// Runs f over its storage type S (C, or float16/bfloat16 computing in float).
template <class C, class G>
void over_storage(ScalarType storage, const G& go) {
  if constexpr (std::is_same_v<C, float>) {
    if (storage == ScalarType::Float16) return go(TypeTag<Half>{});
    if (storage == ScalarType::BFloat16) return go(TypeTag<BFloat16>{});
  }
  go(TypeTag<C>{});
}

template <class C>
[[gnu::noinline]] void apply_unary(ScalarType storage, const Loop& loop, double (*f)(double)) {
  over_storage<C>(storage, [&](auto tag) {
    using S = typename decltype(tag)::type;
    map1<S, S>(loop, unary_value<C>{f});
  });
}
template <class C>
[[gnu::noinline]] void apply_binary(ScalarType storage, const Loop& loop,
                                    double (*f)(double, double)) {
  over_storage<C>(storage, [&](auto tag) {
    using S = typename decltype(tag)::type;
    map2<S, S>(loop, binary_value<C>{f});
  });
}

// One entry: a plain one through the shared loops, one with arguments through its own.
template <template <class> class F, class C>
void apply(ScalarType storage, const Loop& loop, const Scalar* args) {
  if constexpr (is_plain<F<C>>::value) {
    if constexpr (std::is_invocable_v<decltype(F<C>::value), double, double>)
      apply_binary<C>(storage, loop, F<C>::value);
    else
      apply_unary<C>(storage, loop, F<C>::value);
  } else {
    const F<C> f = make_fn<F<C>>(args);
    over_storage<C>(storage, [&](auto tag) {
      using S = typename decltype(tag)::type;
      map1<S, S>(loop, f);
    });
  }
}

}  // namespace

template <class C>
void Kernels<C>::run(SpecialOp op, ScalarType storage, const Loop& loop, const Scalar* args) {
  switch (op) {
#define EMBER_ENTRY(name, functor) \
  case SpecialOp::name: return apply<functor, C>(storage, loop, args);
    EMBER_SPECIAL_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

double digamma_value(double x) { return digamma(x); }

void run(SpecialOp op, ScalarType storage, const Loop& loop, const Scalar* args) {
  if (storage == ScalarType::Float64) Kernels<double>::run(op, storage, loop, args);
  else Kernels<float>::run(op, storage, loop, args);
}

}  // namespace ember::kernels::special

#include "kernel_instances_special.h"  // generated: Kernels<float>, Kernels<double>
