// Kernel family predicate: out (bool) = f(a), a read in its compute type.
#pragma once
#include <cmath>
#include "kernels/map.h"
#include "kernel_ops.h"  // generated: the family's entries and Kernels<T>

namespace ember::kernels::predicate {

template <class C>
constexpr bool is_float_v = std::is_floating_point_v<C>;

#define EMBER_PREDICATE(name, expr)             \
  template <class C>                            \
  struct name##_fn {                            \
    bool operator()(C x) const { return expr; } \
  };

EMBER_PREDICATE(isnan, x != x)
EMBER_PREDICATE(isinf, is_float_v<C> && (x == C(INFINITY) || x == C(-INFINITY)))
EMBER_PREDICATE(isposinf, is_float_v<C> && x == C(INFINITY))
EMBER_PREDICATE(isneginf, is_float_v<C> && x == C(-INFINITY))
EMBER_PREDICATE(isfinite, !is_float_v<C> || (x == x && x != C(INFINITY) && x != C(-INFINITY)))
EMBER_PREDICATE(signbit, is_float_v<C> ? std::signbit(double(x)) : x < C(0))
EMBER_PREDICATE(logical_not, !x)
#undef EMBER_PREDICATE

template <class T>
void Kernels<T>::run(PredicateOp op, const Loop& loop, const Scalar* args) {
  using C = compute_t<T>;
  switch (op) {
#define EMBER_ENTRY(name) \
  case PredicateOp::name: return map1<bool, T>(loop, make_fn<name##_fn<C>>(args));
    EMBER_PREDICATE_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

}  // namespace ember::kernels::predicate
