#pragma once
#include <cmath>
#include <limits>
#include "kernels/map.h"
#include "kernels/math.h"
#include "kernels/reduce.h"

namespace ember::kernels::reduce {

// One struct per op: the accumulator type, its identity, how an element enters (lift)
// and how two accumulators combine.
template <class T, ReduceOp op>
struct Traits;

template <class T>
using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

template <class T>
struct Traits<T, ReduceOp::sum> {
  using Acc = wide_t<T>;
  static Acc identity() { return 0; }
  static Acc lift(T x) { return Acc(compute_t<T>(x)); }
  static Acc combine(Acc a, Acc b) { return add_wrap(a, b); }
};
template <class T>
struct Traits<T, ReduceOp::nansum> : Traits<T, ReduceOp::sum> {
  using Acc = wide_t<T>;
  static Acc lift(T x) {
    Acc v = Acc(compute_t<T>(x));
    return v != v ? Acc(0) : v;
  }
};
template <class T>
struct Traits<T, ReduceOp::prod> {
  using Acc = wide_t<T>;
  static Acc identity() { return 1; }
  static Acc lift(T x) { return Acc(compute_t<T>(x)); }
  static Acc combine(Acc a, Acc b) { return mul_wrap(a, b); }
};
template <class T>
struct Traits<T, ReduceOp::amax> {
  using Acc = compute_t<T>;
  static Acc identity() {
    if constexpr (std::is_floating_point_v<Acc>) return -std::numeric_limits<Acc>::infinity();
    else return std::numeric_limits<Acc>::lowest();
  }
  static Acc lift(T x) { return Acc(x); }
  static Acc combine(Acc a, Acc b) { return max_nan(a, b); }
};
template <class T>
struct Traits<T, ReduceOp::amin> {
  using Acc = compute_t<T>;
  static Acc identity() {
    if constexpr (std::is_floating_point_v<Acc>) return std::numeric_limits<Acc>::infinity();
    else return std::numeric_limits<Acc>::max();
  }
  static Acc lift(T x) { return Acc(x); }
  static Acc combine(Acc a, Acc b) { return min_nan(a, b); }
};
// |v|: fabs for floats (so -0.0 gives +0.0), identity for bool and unsigned types.
template <class A>
inline A magnitude(A v) {
  if constexpr (std::is_floating_point_v<A>) return std::fabs(v);
  else if constexpr (std::is_unsigned_v<A> || std::is_same_v<A, bool>) return v;
  else return v < 0 ? A(A(0) - v) : v;
}

// The norms' folds (linalg.vector_norm of ord 2, 1, inf, -inf): the element's square or
// magnitude enters the accumulator directly, one pass over the input where abs(x) and
// x * x were tensors of their own.
template <class T>
struct Traits<T, ReduceOp::sumsq> : Traits<T, ReduceOp::sum> {
  using Acc = wide_t<T>;
  static Acc lift(T x) {
    Acc v = Acc(compute_t<T>(x));
    return mul_wrap(v, v);
  }
};
template <class T>
struct Traits<T, ReduceOp::asum> : Traits<T, ReduceOp::sum> {
  using Acc = wide_t<T>;
  static Acc lift(T x) { return magnitude(Acc(compute_t<T>(x))); }
};
template <class T>
struct Traits<T, ReduceOp::amax_abs> : Traits<T, ReduceOp::amax> {
  using Acc = compute_t<T>;
  static Acc identity() { return Acc(0); }  // |x| >= 0; vector_norm refuses an empty inf norm
  static Acc lift(T x) { return magnitude(Acc(x)); }
};
template <class T>
struct Traits<T, ReduceOp::amin_abs> : Traits<T, ReduceOp::amin> {
  using Acc = compute_t<T>;
  static Acc lift(T x) { return magnitude(Acc(x)); }
};
template <class T>
struct Traits<T, ReduceOp::all> {
  using Acc = bool;
  static Acc identity() { return true; }
  static Acc lift(T x) { return compute_t<T>(x) != compute_t<T>(0); }
  static Acc combine(Acc a, Acc b) { return a && b; }
};
template <class T>
struct Traits<T, ReduceOp::any> {
  using Acc = bool;
  static Acc identity() { return false; }
  static Acc lift(T x) { return compute_t<T>(x) != compute_t<T>(0); }
  static Acc combine(Acc a, Acc b) { return a || b; }
};

// The accumulator as stored in acc's memory (compute_t<Half> is float, but an amax
// accumulator over Half is stored as float too: acc_dtype says so).
//
// Note [Half types in folds]
// A float16/bfloat16 input's contiguous runs are read as in Note [Half types in blocks]
// (kernels/map.h): kHalfBlock elements converted to float with vector instructions, then
// folded as float32's (Traits<float, op>, whose accumulator and lift are the same as the
// half type's: a float16 value is exactly the float it converts to). Converted element by
// element, gcc kept the accumulators on the stack and a bfloat16 sum ran at 3 GB/s.
//
// Note [Float blocks in sums]
// A float32 (or float16/bfloat16) sum of a contiguous run adds rounds of 256 elements
// into 32 float partial sums (four vectors), then each round's partials into the double
// accumulators: a cascade of 8 float terms per partial, then double, so the relative error
// stays below ~8 float eps at any length (torch's cascade: 1.5e-7 to 5e-7 on 0.1 repeated
// 2^17 to 2^24 times, ember's 0.7e-7). Double accumulators for every element ran at
// 12.5-14 GB/s on one core against 18-19 GB/s (the widening doubled the instructions per
// cache line, so fewer lines were in flight; the 2-core EPYC, 64 MB; rounds of 256 and
// 1024 ran alike). Half types are converted 1024 at a time (a call per 256 cost 0.3 ms
// of a 16M sum). A float32 run reads four parts of itself side by side, rounds of 64 per
// part into eight partials each: one core kept more cache lines in flight over four
// streams than over one, 25-28 GB/s against 17 (torch's 16M sum 2.8-3.1 ms, ember's
// 3.4-4.5 ms over one stream, 2.2-2.5 ms over four). nansum and the 1-norm's
// |x| too; not the 2-norm's squares (x * x in float would overflow above 1.8e19, where
// the double fold does not) nor prod.
template <ReduceOp op>
inline constexpr bool kFloatBlocks = op == ReduceOp::sum || op == ReduceOp::nansum || op == ReduceOp::asum;
template <ReduceOp op>
[[gnu::always_inline]] inline float lift_in_float(float x) {
  if constexpr (op == ReduceOp::nansum) return x != x ? 0.0f : x;
  else if constexpr (op == ReduceOp::asum) return std::fabs(x);
  else return x;
}

template <class T, ReduceOp op>
void fold(const Loop& loop, int64_t begin, int64_t end) {
  using Tr = Traits<T, op>;
  using Acc = typename Tr::Acc;
  using TrF = Traits<std::conditional_t<is_half_type_v<T>, float, T>, op>;
  static_assert(std::is_same_v<typename TrF::Acc, Acc>, "a half type folds as float");
  auto rows = [](char** p, const int64_t* s, int64_t n) {
    if (s[1] == 0) {
      // horizontal: independent partial results (four vectors of floating accumulators,
      // eight otherwise) let the compiler vectorize, hide the adds' latency and keep float
      // sums accurate over long runs
      constexpr int K = std::is_floating_point_v<Acc> ? int(128 / sizeof(Acc)) : 8;
      Acc r[K];
      for (int k = 0; k < K; ++k) r[k] = Tr::identity();
      int64_t i = 0;
      if (s[0] == int64_t(sizeof(T)) && !std::is_same_v<T, bool>) {
        const T* a = reinterpret_cast<const T*>(p[0]);
        if constexpr (std::is_integral_v<Acc> && !std::is_same_v<Acc, bool>) {
          // Integer sums are exact in any order, so one chain does. The 8 chains below,
          // widening int8/uint8/int16 into int64, are miscompiled by gcc 12.2's -O3 loop
          // vectorizer (ones(128, dtype=uint8).sum() gave 8).
          for (; i < n; ++i) r[0] = Tr::combine(r[0], Tr::lift(a[i]));
        } else if constexpr ((std::is_same_v<T, float> || is_half_type_v<T>) && kFloatBlocks<op>) {
          // See Note [Float blocks in sums] (and Note [Half types in folds])
          static_assert(32 % K == 0, "the 32 partials fold into r[k % K]");
          constexpr int64_t kBlock = 1024, kRound = 256;  // converted at once; into one set of partials
          constexpr int64_t kStreamRound = 64;  // per stream and round: 8 terms per float partial
          [[maybe_unused]] float x[is_half_type_v<T> ? kBlock : 1];
          double d[32] = {};  // the partials' double sums, in registers (into r[] per round, gcc
                              // spilled r and added one lane at a time)
          if constexpr (std::is_same_v<T, float>) {
            // four streams: the run's first 4 * part elements as four parts read side by side,
            // eight partials each (one core: 17 -> 25-28 GB/s over one stream)
            const int64_t part = (n - i) / (4 * kStreamRound) * kStreamRound;
            const float* s0 = a + i;
            for (int64_t q = 0; q < part; q += kStreamRound) {
              float f[32] = {};
              for (int64_t j = q; j < q + kStreamRound; j += 8)
                for (int k = 0; k < 8; ++k) {
                  f[k] += lift_in_float<op>(s0[j + k]);
                  f[8 + k] += lift_in_float<op>(s0[part + j + k]);
                  f[16 + k] += lift_in_float<op>(s0[2 * part + j + k]);
                  f[24 + k] += lift_in_float<op>(s0[3 * part + j + k]);
                }
              for (int k = 0; k < 32; ++k) d[k] += double(f[k]);
            }
            i += 4 * part;
          }
          while (n - i >= 32) {
            const int64_t m = std::min(kBlock, (n - i) / 32 * 32);
            const float* b;
            if constexpr (is_half_type_v<T>) {
              to_float(a + i, x, m);
              b = x;
            } else {
              b = a + i;
            }
            for (int64_t q = 0; q < m; q += kRound) {
              const int64_t e = std::min(m, q + kRound);
              float f[32] = {};
              for (int64_t j = q; j < e; j += 32)
                for (int k = 0; k < 32; ++k) f[k] += lift_in_float<op>(b[j + k]);
              for (int k = 0; k < 32; ++k) d[k] += double(f[k]);
            }
            i += m;
          }
          for (int k = 0; k < 32; ++k) r[k % K] += d[k];
        } else if constexpr (is_half_type_v<T>) {  // See Note [Half types in folds]
          static_assert(kHalfBlock % K == 0, "blocks of whole rounds of the accumulators");
          float x[kHalfBlock];
          while (n - i >= K) {
            const int64_t m = std::min(kHalfBlock, (n - i) / K * K);
            to_float(a + i, x, m);
            for (int64_t j = 0; j < m; j += K)
              for (int k = 0; k < K; ++k) r[k] = TrF::combine(r[k], TrF::lift(x[j + k]));
            i += m;
          }
        } else {
          for (; i + K <= n; i += K)
            for (int k = 0; k < K; ++k) r[k] = Tr::combine(r[k], Tr::lift(a[i + k]));
        }
      }
      for (; i < n; ++i) r[0] = Tr::combine(r[0], Tr::lift(load<T>(p[0] + i * s[0])));
      Acc total = r[0];
      for (int k = 1; k < K; ++k) total = Tr::combine(total, r[k]);
      Acc* acc = reinterpret_cast<Acc*>(p[1]);
      *acc = Tr::combine(*acc, total);
    } else if (s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(Acc)) && !std::is_same_v<T, bool>) {
      // vertical over contiguous rows (a column sum such as a bias gradient): with the
      // strides known the compiler vectorizes across the accumulators
      const T* a = reinterpret_cast<const T*>(p[0]);
      Acc* acc = reinterpret_cast<Acc*>(p[1]);
      if constexpr (is_half_type_v<T>) {  // See Note [Half types in folds]
        float x[kHalfBlock];
        for (int64_t i0 = 0; i0 < n; i0 += kHalfBlock) {
          const int64_t m = std::min(kHalfBlock, n - i0);
          to_float(a + i0, x, m);
          Acc* ab = acc + i0;
          for (int64_t i = 0; i < m; ++i) ab[i] = TrF::combine(ab[i], TrF::lift(x[i]));
        }
      } else {
        for (int64_t i = 0; i < n; ++i) acc[i] = Tr::combine(acc[i], Tr::lift(a[i]));
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        Acc& acc = at<Acc>(p[1], s[1], i);
        acc = Tr::combine(acc, Tr::lift(load<T>(p[0] + i * s[0])));
      }
    }
  };
  loop_range(loop, begin, end, rows);
}

template <class T>
void Kernels<T>::centered_sumsq(const Loop& loop, int64_t begin, int64_t end) {
  auto rows = [](char** p, const int64_t* s, int64_t n) {
    if (s[1] == 0 && s[2] == 0) {  // horizontal: one mean, sixteen partial sums
      const double m = *reinterpret_cast<const double*>(p[1]);
      constexpr int K = 16;
      double r[K] = {};
      int64_t i = 0;
      if (s[0] == int64_t(sizeof(T)) && !std::is_same_v<T, bool>) {
        const T* a = reinterpret_cast<const T*>(p[0]);
        if constexpr (is_half_type_v<T>) {  // See Note [Half types in folds]
          float x[kHalfBlock];
          while (n - i >= K) {
            const int64_t b = std::min(kHalfBlock, (n - i) / K * K);
            to_float(a + i, x, b);
            for (int64_t j = 0; j < b; j += K)
              for (int k = 0; k < K; ++k) {
                const double d = double(x[j + k]) - m;
                r[k] += d * d;
              }
            i += b;
          }
        } else {
          for (; i + K <= n; i += K)
            for (int k = 0; k < K; ++k) {
              const double d = double(compute_t<T>(a[i + k])) - m;
              r[k] += d * d;
            }
        }
      }
      for (; i < n; ++i) {
        const double d = double(compute_t<T>(load<T>(p[0] + i * s[0]))) - m;
        r[0] += d * d;
      }
      double total = 0;
      for (int k = 0; k < K; ++k) total += r[k];
      *reinterpret_cast<double*>(p[2]) += total;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const double d = double(compute_t<T>(load<T>(p[0] + i * s[0]))) - at<double>(p[1], s[1], i);
        at<double>(p[2], s[2], i) += d * d;
      }
    }
  };
  loop_range(loop, begin, end, rows);
}

template <class T>
ScalarType Kernels<T>::acc_dtype(ReduceOp op) {
  switch (op) {
#define EMBER_CASE(name) \
  case ReduceOp::name: return DTypeOf<typename Traits<T, ReduceOp::name>::Acc>::value;
    EMBER_REDUCE_ENTRIES(EMBER_CASE)
#undef EMBER_CASE
  }
  return DTypeOf<T>::value;
}

template <class T>
void Kernels<T>::init(ReduceOp op, char* acc, int64_t n) {
  switch (op) {
#define EMBER_CASE(name)                                                        \
  case ReduceOp::name: {                                                        \
    using Tr = Traits<T, ReduceOp::name>;                                       \
    auto* a = reinterpret_cast<typename Tr::Acc*>(acc);                         \
    for (int64_t i = 0; i < n; ++i) a[i] = Tr::identity();                      \
    return;                                                                     \
  }
    EMBER_REDUCE_ENTRIES(EMBER_CASE)
#undef EMBER_CASE
  }
}

template <class T>
void Kernels<T>::run(ReduceOp op, const Loop& loop, int64_t begin, int64_t end) {
  switch (op) {
#define EMBER_CASE(name) \
  case ReduceOp::name: return fold<T, ReduceOp::name>(loop, begin, end);
    EMBER_REDUCE_ENTRIES(EMBER_CASE)
#undef EMBER_CASE
  }
}

template <class T>
void Kernels<T>::combine(ReduceOp op, char* acc, const char* part, int64_t n) {
  switch (op) {
#define EMBER_CASE(name)                                                        \
  case ReduceOp::name: {                                                        \
    using Tr = Traits<T, ReduceOp::name>;                                       \
    using Acc = typename Tr::Acc;                                               \
    auto* a = reinterpret_cast<Acc*>(acc);                                      \
    auto* b = reinterpret_cast<const Acc*>(part);                               \
    for (int64_t i = 0; i < n; ++i) a[i] = Tr::combine(a[i], b[i]);             \
    return;                                                                     \
  }
    EMBER_REDUCE_ENTRIES(EMBER_CASE)
#undef EMBER_CASE
  }
}

}  // namespace ember::kernels::reduce
