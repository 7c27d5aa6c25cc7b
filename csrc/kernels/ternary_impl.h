// Kernel family ternary: out = f(a, b, c) in the compute dtype. where reads its first
// operand (the condition) as bool: see map3 below.
#pragma once
#include <cmath>
#include "kernels/map.h"
#include "kernels/math.h"
#include "kernel_ops.h"  // generated: the family's entries and Kernels<T>

namespace ember::kernels::ternary {

// a + value * b * c
template <class C>
struct addcmul_fn {
  C value;
  explicit addcmul_fn(const Scalar* a) : value(a[0].to<C>()) {}
  C operator()(C x, C y, C z) const { return add_wrap(x, mul_wrap(value, mul_wrap(y, z))); }
};
// a + value * b / c (floating only)
template <class C>
struct addcdiv_fn {
  C value;
  explicit addcdiv_fn(const Scalar* a) : value(a[0].to<C>()) {}
  C operator()(C x, C y, C z) const { return x + value * (y / z); }
};
// lerp with a tensor weight
template <class C>
struct lerp_fn {
  C operator()(C x, C y, C w) const {
    return std::abs(w) < C(0.5) ? x + w * (y - x) : y - (y - x) * (C(1) - w);
  }
};
// clamp with both bounds: a NaN anywhere gives NaN; min > max gives max.
template <class C>
struct clamp_fn {
  C operator()(C x, C lo, C hi) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x) return x;
      if (lo != lo) return lo;
      if (hi != hi) return hi;
    }
    C r = x < lo ? lo : x;
    return hi < r ? hi : r;
  }
};
// The condition stays bool (the engine does not convert it; see Spec::condition).
template <class C>
struct where_fn {
  static constexpr bool condition = true;
  C operator()(bool cond, C x, C y) const { return cond ? x : y; }
};

template <class T>
void Kernels<T>::run(TernaryOp op, const Loop& loop, const Scalar* args) {
  using C = compute_t<T>;
  switch (op) {
#define EMBER_ENTRY(name, functor, floating_only) \
  case TernaryOp::name: \
    if constexpr (entry_compiled<T, floating_only>) return map3<T, T>(loop, make_fn<functor<C>>(args)); \
    else entry_not_compiled("ternary", #name, DTypeOf<T>::value);
    EMBER_TERNARY_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

}  // namespace ember::kernels::ternary
