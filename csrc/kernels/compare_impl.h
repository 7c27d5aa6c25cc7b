// Kernel family compare: out (bool) = f(a, b), both read in the compute type.
#pragma once
#include <cmath>
#include "kernel_ops.h"  // generated: the family's entries and Kernels<T>
#include "kernels/map.h"

namespace ember::kernels::compare {


template <class C> struct eq_fn { bool operator()(C x, C y) const { return x == y; } };
template <class C> struct ne_fn { bool operator()(C x, C y) const { return x != y; } };
template <class C> struct lt_fn { bool operator()(C x, C y) const { return x < y; } };
template <class C> struct le_fn { bool operator()(C x, C y) const { return x <= y; } };
template <class C> struct gt_fn { bool operator()(C x, C y) const { return x > y; } };
template <class C> struct ge_fn { bool operator()(C x, C y) const { return x >= y; } };
template <class C> struct logical_and_fn { bool operator()(C x, C y) const { return bool(x) && bool(y); } };
template <class C> struct logical_or_fn { bool operator()(C x, C y) const { return bool(x) || bool(y); } };
template <class C> struct logical_xor_fn { bool operator()(C x, C y) const { return bool(x) != bool(y); } };

// |x - y| <= atol + rtol * |y|, with equal infinities close and NaNs close to each
// other only under equal_nan.
template <class C>
struct isclose_fn {
  double rtol, atol;
  bool equal_nan;
  explicit isclose_fn(const Scalar* a) : rtol(a[0].to_double()), atol(a[1].to_double()), equal_nan(a[2].to_bool()) {}
  bool operator()(C x, C y) const {
    if (x == y) return true;
    if constexpr (std::is_floating_point_v<C>) {
      if (x != x || y != y) return equal_nan && x != x && y != y;
      if (std::isinf(x) || std::isinf(y)) return false;
    }
    double dx = double(x), dy = double(y);
    return std::fabs(dx - dy) <= atol + rtol * std::fabs(dy);
  }
};

template <class T>
void Kernels<T>::run(CompareOp op, const Loop& loop, const Scalar* args) {
  using C = compute_t<T>;
  switch (op) {
#define EMBER_ENTRY(name, functor, floating_only) \
  case CompareOp::name: \
    if constexpr (entry_compiled<T, floating_only>) return map2<bool, T>(loop, make_fn<functor<C>>(args)); \
    else entry_not_compiled("compare", #name, DTypeOf<T>::value);
    EMBER_COMPARE_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

}  // namespace ember::kernels::compare
