// Kernel family binary: out = f(a, b) in the compute dtype.
#pragma once
#include <cmath>
#include "core/error.h"
#include "kernel_ops.h"  // generated: the family's entries and Kernels<T>
#include "kernels/map.h"
#include "kernels/math.h"
#include "kernels/activation_impl.h"  // the entries of nn's activations

namespace ember::kernels::binary {


template <class C> struct mul_fn { [[gnu::always_inline]] C operator()(C x, C y) const { return mul_wrap(x, y); } };
// true division: the engine computes it in a floating dtype
template <class C> struct div_fn { [[gnu::always_inline]] C operator()(C x, C y) const { return x / y; } };
template <class C> struct maximum_fn { [[gnu::always_inline]] C operator()(C x, C y) const { return max_nan(x, y); } };
template <class C> struct minimum_fn { [[gnu::always_inline]] C operator()(C x, C y) const { return min_nan(x, y); } };
template <class C>
struct clamp_min_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const { return (x != x || y != y) ? x + y : (x < y ? y : x); }
};
template <class C>
struct clamp_max_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const { return (x != x || y != y) ? x + y : (y < x ? y : x); }
};
template <class C>
struct fmax_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const { return (y != y || x > y) ? x : (x != x ? y : (x < y ? y : x)); }
};
template <class C>
struct fmin_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const { return (y != y || x < y) ? x : (x != x ? y : (y < x ? y : x)); }
};
template <class C> struct atan2_fn { [[gnu::always_inline]] C operator()(C x, C y) const { return C(std::atan2(x, y)); } };
template <class C> struct hypot_fn { [[gnu::always_inline]] C operator()(C x, C y) const { return C(std::hypot(x, y)); } };
template <class C> struct copysign_fn { [[gnu::always_inline]] C operator()(C x, C y) const { return C(std::copysign(x, y)); } };
template <class C>
struct xlogy_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const { return (x == C(0) && y == y) ? C(0) : C(x * std::log(y)); }
};

// log(e^a + e^b) and log2(2^a + 2^b) from the larger term, in the compute type; equal
// infinities stay.
template <class C>
struct logaddexp_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x == y && std::isinf(x)) return x;
      return max_nan(x, y) + C(std::log1p(std::exp(-std::abs(x - y))));
    } else {
      return x;  // not reached: floating dtypes only
    }
  }
};
template <class C>
struct logaddexp2_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x == y && std::isinf(x)) return x;
      return max_nan(x, y) + C(std::log1p(std::exp2(-std::abs(x - y)))) * C(1.0 / M_LN2);
    } else {
      return x;
    }
  }
};

// a + alpha * b and a - alpha * b (alpha converted to the compute type).
template <class C>
struct add_fn {
  C alpha;
  explicit add_fn(const Scalar* a) : alpha(a[0].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x, C y) const { return add_wrap(x, mul_wrap(alpha, y)); }
};
template <class C>
struct sub_fn {
  C alpha;
  explicit sub_fn(const Scalar* a) : alpha(a[0].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x, C y) const { return sub_wrap(x, mul_wrap(alpha, y)); }
};

template <class C>
struct div_trunc_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return div_trunc_int(x, y);
    else return C(std::trunc(x / y));
  }
};
template <class C>
struct div_floor_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return div_floor_int(x, y);
    else return div_floor_float(x, y);
  }
};
template <class C>
struct remainder_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return mod_floor_int(x, y);
    else return mod_floor_float(x, y);
  }
};
template <class C>
struct fmod_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return mod_trunc_int(x, y);
    else return C(std::fmod(x, y));
  }
};
// float x^y = e^(y log|x|) with log|x| and the exp in double, each only as precise as a
// float result needs (kernels/vec_math.h's log_of_float, exp_to_float: 159 instructions
// per 8 lanes, the full double log and exp took 257; max 0.503 ulp on 4M random
// pairs); the rest in float. y's parity comes from the last bit of
// |y| + 2^23 (a float below 2^23 rounded to an integer), or of |y| itself below 2^24
// (above, every float is even); it moves x's sign bit onto the result for odd integer
// y. NaN for negative x to a fraction; C's special cases x^0 = 1^y = (-1)^(+-inf) = 1 by
// selects, and x^2 exactly as x * x (square calls pow). Everything else (0, inf, NaN)
// falls out of log and exp. Bits and selects only: a bool made from an integer's low
// bit, or a rounding call, keeps gcc from vectorizing the loop (it ran scalar, 40x
// slower, until that was found). double uses std::pow.
[[gnu::always_inline]] inline float pow_float(float x, float y) {
  const float ax = std::fabs(x), ay = std::fabs(y);
  const float r = vmath::exp_to_float(double(y) * vmath::log_of_float(ax));
  const float two23 = 8388608.0f;
  const float t = vmath::sel(ay < two23, ay + two23, ay);
  const bool integer = vmath::sel(ay < two23, t - two23, ay) == ay;
  const uint32_t odd_sign = vmath::bits(vmath::sel(integer & (ay < 2.0f * two23), t, 0.0f)) << 31;
  float v = vmath::from_bits(vmath::bits(r) | (odd_sign & vmath::bits(x)));  // (-0)^odd keeps the sign
  v = vmath::sel((x < 0.0f) & (x != -vmath::kInfF) & !integer & (ay != vmath::kInfF),
                 std::numeric_limits<float>::quiet_NaN(), v);
  v = vmath::sel((y == 0.0f) | (x == 1.0f) | ((x == -1.0f) & (ay == vmath::kInfF)), 1.0f, v);
  v = vmath::sel(y == 2.0f, x * x, v);
  return v;
}
template <class C>
struct pow_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return pow_int(x, y);
    else if constexpr (std::is_same_v<C, float>) return pow_float(x, y);
    else return C(std::pow(x, y));
  }
};

template <class C>
struct bitwise_and_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return x & y;
    else return x;
  }
};
template <class C>
struct bitwise_or_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return x | y;
    else return x;
  }
};
template <class C>
struct bitwise_xor_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) return x ^ y;
    else return x;
  }
};

// Shifts by a negative amount or by the bit width or more give 0 (or -1 for a negative
// value shifted right), as torch's do.
template <class C>
struct bitwise_left_shift_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (is_int_v<C>) {
      if (y < 0 || uint64_t(y) >= sizeof(C) * 8) return 0;
      return C(uint64_t(x) << y);
    } else {
      return x;
    }
  }
};
template <class C>
struct bitwise_right_shift_fn {
  [[gnu::always_inline]] C operator()(C x, C y) const {
    if constexpr (is_int_v<C>) {
      if (y < 0 || uint64_t(y) >= sizeof(C) * 8) return x < 0 ? C(-1) : C(0);
      return C(x >> y);
    } else {
      return x;
    }
  }
};

// lerp with a scalar weight: a + w * (b - a), computed from the nearer end as torch does.
template <class C>
struct lerp_fn {
  C w;
  explicit lerp_fn(const Scalar* a) : w(a[0].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x, C y) const { return std::abs(w) < C(0.5) ? x + w * (y - x) : y - (y - x) * (C(1) - w); }
};

// masked_fill: b is the mask (converted to the compute type), the value an argument.
template <class C>
struct masked_fill_fn {
  C value;
  explicit masked_fill_fn(const Scalar* a) : value(a[0].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x, C m) const { return m != C(0) ? value : x; }
};

// Integer division entries raise on a zero divisor before any element is written.
template <class T>
void check_no_zero_divisor(const Loop& loop) {
  bool zero = false;
  auto scan = [&zero](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n && !zero; ++i) zero = load<T>(p[2] + i * s[2]) == T(0);
  };
  loop_range(loop, 0, loop.numel, scan);
  EMBER_CHECK(!zero, Runtime, "ZeroDivisionError");
}

template <class T>
void Kernels<T>::run(BinaryOp op, const Loop& loop, const Scalar* args) {
  using C = compute_t<T>;
  if constexpr (std::is_integral_v<T>) {
    if (op == BinaryOp::div_trunc || op == BinaryOp::div_floor || op == BinaryOp::remainder ||
        op == BinaryOp::fmod)
      check_no_zero_divisor<T>(loop);
  }
  switch (op) {
#define EMBER_ENTRY(name, functor, floating_only) \
  case BinaryOp::name: \
    if constexpr (entry_compiled<T, floating_only>) return map2<T, T>(loop, make_fn<functor<C>>(args)); \
    else entry_not_compiled("binary", #name, DTypeOf<T>::value);
    EMBER_BINARY_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

}  // namespace ember::kernels::binary
