// Kernel family unary: out = f(a) in the compute dtype. Each entry is a functor
// template over the compute type C; the switch in run() comes from the generated list
// of entries (EMBER_UNARY_ENTRIES), so a declared entry without a functor fails to build;
// the float-only entries are compiled for the floating dtypes alone (Note [Floating-only
// entries], kernels/map.h).
#pragma once
#include <cmath>
#include "kernels/map.h"
#include "kernels/math.h"
#include "kernels/activation_impl.h"  // the entries of nn's activations
#include "kernel_ops.h"  // generated: the family's entries and Kernels<T>

namespace ember::kernels::unary {

// float tanh and float/double sigmoid through the vectorizable exp (the libm calls ran
// one element at a time); other types as before.
template <class C>
[[gnu::always_inline]] inline auto tanh_of(C x) {
  if constexpr (std::is_same_v<C, float>) return nn::tanh_accurate(x);
  else return std::tanh(x);
}
template <class C>
[[gnu::always_inline]] inline auto sigmoid_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return activation::sigmoid(x);
  else return C(1) / (C(1) + std::exp(-x));
}

// float and double (the compute types of the floating dtypes) through kernels/vec_math.h,
// which vectorizes where it has a formula and calls libm otherwise; the integral
// instantiations (never reached: the ops promote integers first) through libm.
template <class C>
[[gnu::always_inline]] inline auto exp_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::exp(x);
  else return std::exp(x);
}
template <class C>
[[gnu::always_inline]] inline auto expm1_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::expm1(x);
  else return std::expm1(x);
}
template <class C>
[[gnu::always_inline]] inline auto log_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::log(x);
  else return std::log(x);
}
template <class C>
[[gnu::always_inline]] inline auto log1p_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::log1p(x);
  else return std::log1p(x);
}
template <class C>
[[gnu::always_inline]] inline auto sin_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::sin(x);
  else return std::sin(x);
}
template <class C>
[[gnu::always_inline]] inline auto cos_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::cos(x);
  else return std::cos(x);
}
template <class C>
[[gnu::always_inline]] inline auto tan_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::tan(x);
  else return std::tan(x);
}
template <class C>
[[gnu::always_inline]] inline auto erf_of(C x) {
  if constexpr (std::is_floating_point_v<C>) return vmath::erf(x);
  else return std::erf(x);
}

// float sin, cos and tan: lanes beyond the vectorized reduction's range (and NaN, inf)
// go to libm; see Note [Rare lanes] (kernels/map.h).
template <class C>
struct trig_rare_lanes {
  static constexpr bool rare_lanes = std::is_same_v<C, float>;
  static bool rare(C x) {
    if constexpr (rare_lanes) return !(std::fabs(x) <= vmath::kTrigFastRange);
    else return false;
  }
};
// float sin and cos compute in float up to |x| = 4096 and through the double reduction
// (vmath::sin_wide) from there to 2^18; see vmath's trig comment.
template <class C>
struct trig_wide_lanes : trig_rare_lanes<C> {
  static constexpr bool wide_lanes = std::is_same_v<C, float>;
  static bool wide(C x) {
    if constexpr (wide_lanes) return std::fabs(x) > vmath::kTrigFloatRange;
    else return false;
  }
};


template <class C>
inline C float_only(double v) {
  return C(v);
}

template <class C> struct neg_fn { [[gnu::always_inline]] C operator()(C x) const { return neg_wrap(x); } };
// abs(-0.0) is +0.0
template <class C>
struct abs_fn {
  [[gnu::always_inline]] C operator()(C x) const { return (x < C(0) ? neg_wrap(x) : x == C(0) ? C(0) : x); }
};
template <class C> struct sign_fn { [[gnu::always_inline]] C operator()(C x) const { return (C((C(0) < x)) - C((x < C(0)))); } };
template <class C> struct square_fn { [[gnu::always_inline]] C operator()(C x) const { return mul_wrap(x, x); } };
template <class C> struct relu_fn { [[gnu::always_inline]] C operator()(C x) const { return (x > C(0) || x != x ? x : C(0)); } };
template <class C> struct reciprocal_fn { [[gnu::always_inline]] C operator()(C x) const { return C(1) / x; } };
template <class C> struct exp_fn { [[gnu::always_inline]] C operator()(C x) const { return exp_of(x); } };
template <class C> struct exp2_fn { [[gnu::always_inline]] C operator()(C x) const { return std::exp2(x); } };
template <class C> struct expm1_fn { [[gnu::always_inline]] C operator()(C x) const { return expm1_of(x); } };
template <class C> struct log_fn { [[gnu::always_inline]] C operator()(C x) const { return log_of(x); } };
template <class C> struct log2_fn { [[gnu::always_inline]] C operator()(C x) const { return std::log2(x); } };
template <class C> struct log10_fn { [[gnu::always_inline]] C operator()(C x) const { return std::log10(x); } };
template <class C> struct log1p_fn { [[gnu::always_inline]] C operator()(C x) const { return log1p_of(x); } };
template <class C> struct sqrt_fn { [[gnu::always_inline]] C operator()(C x) const { return std::sqrt(x); } };
template <class C> struct rsqrt_fn { [[gnu::always_inline]] C operator()(C x) const { return C(1) / std::sqrt(x); } };
template <class C>
struct sin_fn : trig_wide_lanes<C> {
  [[gnu::always_inline]] C operator()(C x) const { return sin_of(x); }
  [[gnu::always_inline]] static C wide_value(C x) {
    if constexpr (std::is_same_v<C, float>) return vmath::sin_wide(x);
    else return sin_of(x);
  }
  static C slow(C x) { return std::sin(x); }
};
template <class C>
struct cos_fn : trig_wide_lanes<C> {
  [[gnu::always_inline]] C operator()(C x) const { return cos_of(x); }
  [[gnu::always_inline]] static C wide_value(C x) {
    if constexpr (std::is_same_v<C, float>) return vmath::cos_wide(x);
    else return cos_of(x);
  }
  static C slow(C x) { return std::cos(x); }
};
template <class C>
struct tan_fn : trig_rare_lanes<C> {
  [[gnu::always_inline]] C operator()(C x) const { return tan_of(x); }
  static C slow(C x) { return std::tan(x); }
};
template <class C> struct asin_fn { [[gnu::always_inline]] C operator()(C x) const { return std::asin(x); } };
template <class C> struct acos_fn { [[gnu::always_inline]] C operator()(C x) const { return std::acos(x); } };
template <class C> struct atan_fn { [[gnu::always_inline]] C operator()(C x) const { return std::atan(x); } };
template <class C> struct sinh_fn { [[gnu::always_inline]] C operator()(C x) const { return std::sinh(x); } };
template <class C> struct cosh_fn { [[gnu::always_inline]] C operator()(C x) const { return std::cosh(x); } };
template <class C> struct tanh_fn { [[gnu::always_inline]] C operator()(C x) const { return tanh_of(x); } };
template <class C> struct asinh_fn { [[gnu::always_inline]] C operator()(C x) const { return std::asinh(x); } };
template <class C> struct acosh_fn { [[gnu::always_inline]] C operator()(C x) const { return std::acosh(x); } };
template <class C> struct atanh_fn { [[gnu::always_inline]] C operator()(C x) const { return std::atanh(x); } };
template <class C> struct erf_fn { [[gnu::always_inline]] C operator()(C x) const { return erf_of(x); } };
template <class C> struct erfc_fn { [[gnu::always_inline]] C operator()(C x) const { return std::erfc(x); } };
template <class C> struct sigmoid_fn { [[gnu::always_inline]] C operator()(C x) const { return sigmoid_of(x); } };
template <class C> struct floor_fn { [[gnu::always_inline]] C operator()(C x) const { return std::is_integral_v<C> ? x : C(std::floor(x)); } };
template <class C> struct ceil_fn { [[gnu::always_inline]] C operator()(C x) const { return std::is_integral_v<C> ? x : C(std::ceil(x)); } };
template <class C> struct trunc_fn { [[gnu::always_inline]] C operator()(C x) const { return std::is_integral_v<C> ? x : C(std::trunc(x)); } };
// halves to even
template <class C>
struct round_fn {
  [[gnu::always_inline]] C operator()(C x) const { return std::is_integral_v<C> ? x : C(std::nearbyint(x)); }
};
template <class C> struct frac_fn { [[gnu::always_inline]] C operator()(C x) const { return x - C(std::trunc(x)); } };

template <class C>
struct bitwise_not_fn {
  [[gnu::always_inline]] C operator()(C x) const {
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
  [[gnu::always_inline]] C operator()(C y) const {
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
  [[gnu::always_inline]] C operator()(C x) const {
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
  [[gnu::always_inline]] C operator()(C x) const {
    if (clamp) x = x < lo ? lo : x > hi ? hi : x;
    return C(std::log(x / (C(1) - x)));
  }
};

template <class C>
struct nan_to_num_fn {
  C nan, posinf, neginf;
  explicit nan_to_num_fn(const Scalar* a) : nan(a[0].to<C>()), posinf(a[1].to<C>()), neginf(a[2].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x) const {
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
#define EMBER_ENTRY(name, functor, floating_only) \
  case UnaryOp::name: \
    if constexpr (entry_compiled<T, floating_only>) return map1<T, T>(loop, make_fn<functor<C>>(args)); \
    else entry_not_compiled("unary", #name, DTypeOf<T>::value);
    EMBER_UNARY_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

}  // namespace ember::kernels::unary
