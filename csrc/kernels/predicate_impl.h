// Kernel family predicate: out (bool) = f(a), a read in its compute type.
#pragma once
#include <cmath>
#include "kernels/map.h"
#include "kernel_ops.h"  // generated: the family's entries and Kernels<T>

namespace ember::kernels::predicate {

template <class C>
constexpr bool is_float_v = std::is_floating_point_v<C>;


template <class C> struct isnan_fn { bool operator()(C x) const { return x != x; } };
template <class C>
struct isinf_fn {
  bool operator()(C x) const { return is_float_v<C> && (x == C(INFINITY) || x == C(-INFINITY)); }
};
template <class C> struct isposinf_fn { bool operator()(C x) const { return is_float_v<C> && x == C(INFINITY); } };
template <class C> struct isneginf_fn { bool operator()(C x) const { return is_float_v<C> && x == C(-INFINITY); } };
template <class C>
struct isfinite_fn {
  bool operator()(C x) const { return !is_float_v<C> || (x == x && x != C(INFINITY) && x != C(-INFINITY)); }
};
template <class C>
struct signbit_fn {
  bool operator()(C x) const { return is_float_v<C> ? std::signbit(double(x)) : x < C(0); }
};
template <class C> struct logical_not_fn { bool operator()(C x) const { return !x; } };

template <class T>
void Kernels<T>::run(PredicateOp op, const Loop& loop, const Scalar* args) {
  using C = compute_t<T>;
  switch (op) {
#define EMBER_ENTRY(name, functor, floating_only) \
  case PredicateOp::name: \
    if constexpr (entry_compiled<T, floating_only>) return map1<bool, T>(loop, make_fn<functor<C>>(args)); \
    else entry_not_compiled("predicate", #name, DTypeOf<T>::value);
    EMBER_PREDICATE_ENTRIES(EMBER_ENTRY)
#undef EMBER_ENTRY
  }
}

}  // namespace ember::kernels::predicate
