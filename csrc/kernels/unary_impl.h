// Kernel family unary: out = f(a) in the compute dtype. Each entry is a functor
// template over the compute type C; the switch in run() comes from the generated list
// of entries (EMBER_UNARY_ENTRIES), so a declared entry without a functor fails to build.
#pragma once
#include <cmath>
#include "kernels/map.h"
#include "kernels/math.h"
#include "kernels/activation_impl.h"  // the entries of nn's activations
#include "kernel_ops.h"  // generated: the family's entries and Kernels<T>

namespace ember::kernels::unary {

// float tanh and sigmoid through nn_math's vectorizable exp (the libm calls ran one
// element at a time); other types as before.
template <class C>
[[gnu::always_inline]] inline auto tanh_of(C x) {
  if constexpr (std::is_same_v<C, float>) return nn::tanh_accurate(x);
  else return std::tanh(x);
}
template <class C>
[[gnu::always_inline]] inline auto sigmoid_of(C x) {
  if constexpr (std::is_same_v<C, float>) return activation::sigmoid(x);
  else return C(1) / (C(1) + std::exp(-x));
}

#define EMBER_UNARY(name, expr)              \
  template <class C>                         \
  struct name##_fn {                         \
    C operator()(C x) const { return expr; } \
  };

template <class C>
inline C float_only(double v) {
  return C(v);
}

EMBER_UNARY(neg, neg_wrap(x))
EMBER_UNARY(abs, (x < C(0) ? neg_wrap(x) : x == C(0) ? C(0) : x))  // abs(-0.0) is +0.0
EMBER_UNARY(sign, (C((C(0) < x)) - C((x < C(0)))))
EMBER_UNARY(square, mul_wrap(x, x))
EMBER_UNARY(relu, (x > C(0) || x != x ? x : C(0)))
EMBER_UNARY(reciprocal, C(1) / x)
EMBER_UNARY(exp, std::exp(x))
EMBER_UNARY(exp2, std::exp2(x))
EMBER_UNARY(expm1, std::expm1(x))
EMBER_UNARY(log, std::log(x))
EMBER_UNARY(log2, std::log2(x))
EMBER_UNARY(log10, std::log10(x))
EMBER_UNARY(log1p, std::log1p(x))
EMBER_UNARY(sqrt, std::sqrt(x))
EMBER_UNARY(rsqrt, C(1) / std::sqrt(x))
EMBER_UNARY(sin, std::sin(x))
EMBER_UNARY(cos, std::cos(x))
EMBER_UNARY(tan, std::tan(x))
EMBER_UNARY(asin, std::asin(x))
EMBER_UNARY(acos, std::acos(x))
EMBER_UNARY(atan, std::atan(x))
EMBER_UNARY(sinh, std::sinh(x))
EMBER_UNARY(cosh, std::cosh(x))
EMBER_UNARY(tanh, tanh_of(x))
EMBER_UNARY(asinh, std::asinh(x))
EMBER_UNARY(acosh, std::acosh(x))
EMBER_UNARY(atanh, std::atanh(x))
EMBER_UNARY(erf, std::erf(x))
EMBER_UNARY(erfc, std::erfc(x))
EMBER_UNARY(sigmoid, sigmoid_of(x))
EMBER_UNARY(floor, std::is_integral_v<C> ? x : C(std::floor(x)))
EMBER_UNARY(ceil, std::is_integral_v<C> ? x : C(std::ceil(x)))
EMBER_UNARY(trunc, std::is_integral_v<C> ? x : C(std::trunc(x)))
EMBER_UNARY(round, std::is_integral_v<C> ? x : C(std::nearbyint(x)))  // halves to even
EMBER_UNARY(frac, x - C(std::trunc(x)))
#undef EMBER_UNARY

template <class C>
struct bitwise_not_fn {
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>) return !x;
    else if constexpr (std::is_integral_v<C>) return C(~x);
    else return x;  // not reached: the op accepts integral dtypes only
  }
};

template <class C>
struct sgn_fn : sign_fn<C> {};

// erfinv: Giles' single-precision-style approximation refined by two Newton steps on
// erf, which brings it to double precision.
template <class C>
struct erfinv_fn {
  C operator()(C y) const {
    double x = y;
    if (!(x > -1 && x < 1)) return x == 1 ? C(INFINITY) : x == -1 ? C(-INFINITY) : C(NAN);
    double w = -std::log((1.0 - x) * (1.0 + x)), p;
    if (w < 5.0) {
      w -= 2.5;
      p = 2.81022636e-08;
      for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                       -0.00417768164, 0.246640727, 1.50140941})
        p = c + p * w;
    } else {
      w = std::sqrt(w) - 3.0;
      p = -0.000200214257;
      for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                       0.00943887047, 1.00167406, 2.83297682})
        p = c + p * w;
    }
    double r = p * x;
    for (int i = 0; i < 2; ++i) r -= (std::erf(r) - x) / (2.0 / std::sqrt(M_PI) * std::exp(-r * r));
    return C(r);
  }
};

// round(x, decimals): x * 10^d rounded half to even, scaled back (negative d divides).
template <class C>
struct round_decimals_fn {
  C ten_pow;
  bool negative;
  explicit round_decimals_fn(const Scalar* a) {
    int64_t d = a[0].to_int64();
    negative = d < 0;
    ten_pow = C(std::pow(10.0, double(negative ? -d : d)));
  }
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x;
    } else {
      return negative ? C(std::nearbyint(x / ten_pow) * ten_pow) : C(std::nearbyint(x * ten_pow) / ten_pow);
    }
  }
};

// logit(x) with inputs clamped to [eps, 1 - eps] when eps >= 0.
template <class C>
struct logit_fn {
  C lo, hi;
  bool clamp;
  explicit logit_fn(const Scalar* a) : lo(C(a[0].to_double())), hi(C(1.0 - a[0].to_double())), clamp(a[0].to_double() >= 0) {}
  C operator()(C x) const {
    if (clamp) x = x < lo ? lo : x > hi ? hi : x;
    return C(std::log(x / (C(1) - x)));
  }
};

template <class C>
struct nan_to_num_fn {
  C nan, posinf, neginf;
  explicit nan_to_num_fn(const Scalar* a) : nan(a[0].to<C>()), posinf(a[1].to<C>()), neginf(a[2].to<C>()) {}
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return nan;
      if (x == C(INFINITY)) return posinf;
      if (x == C(-INFINITY)) return neginf;
    }
    return x;
  }
};

template <class T>
void Kernels<T>::run(UnaryOp op, const Loop& loop, const Scalar* args) {
  using C = compute_t<T>;
  switch (op) {
#define EMBER_ENTRY(name) \
  case UnaryOp::name: return map1<T, T>(loop, make_fn<name##_fn<C>>(args));
    EMBER_UNARY_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

}  // namespace ember::kernels::unary
