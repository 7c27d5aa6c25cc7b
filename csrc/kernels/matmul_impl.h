#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include "core/parallel.h"
#include "kernels/loops.h"
#include "kernels/matmul.h"

namespace ember::kernels::matmul {
namespace detail {

// Integers accumulate in uint64_t: wrapping arithmetic, so the low bits are those of
// the exact result (what torch gives on overflow), without signed-overflow UB.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, bool>, bool,
                                 std::conditional_t<std::is_integral_v<T>, uint64_t, compute_t<T>>>;

template <class T>
inline acc_t<T> read(const char* base, int64_t index) {
  const T v = load<T>(base + index * int64_t(sizeof(T)));
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<acc_t<T>>(v);
  }
}

template <class A>
inline void mul_add(A& acc, A x, A y) {
  if constexpr (std::is_same_v<A, bool>) acc = acc || (x && y);
  else acc += x * y;
}

template <class A>
inline A scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<A, bool>) return s.to_bool();
  else if constexpr (std::is_integral_v<A>) return static_cast<uint64_t>(s.to_int64());
  else return static_cast<A>(s.to_double());
}

}  // namespace detail

template <class T>
void Kernels<T>::gemm(const Gemm& g, const Scalar& alpha_s, const Scalar& beta_s) {
  using A = detail::acc_t<T>;
  const A alpha = detail::scalar_as<A>(alpha_s), beta = detail::scalar_as<A>(beta_s);
  const bool read_c = beta_s.to_double() != 0;
  const int64_t rows = g.batch() * g.m;
  const int64_t work_per_row = std::max<int64_t>(1, g.n * std::max<int64_t>(g.k, 1));
  const int64_t grain = std::max<int64_t>(1, kGrainSize / work_per_row);
  parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    std::unique_ptr<A[]> acc(new A[static_cast<size_t>(std::max<int64_t>(g.n, 1))]);  // not vector<bool>
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bi = r / g.m, i = r % g.m;
      const char* a = g.a + g.a_off[bi];
      const char* b = g.b + g.b_off[bi];
      char* c = g.c + g.c_off[bi];
      std::fill(acc.get(), acc.get() + g.n, A(0));
      for (int64_t p = 0; p < g.k; ++p) {
        const A x = detail::read<T>(a, i * g.a_rs + p * g.a_cs);
        if (x == A(0)) continue;
        const int64_t row = p * g.b_rs;
        if (g.b_cs == 1 && !std::is_same_v<T, bool>) {
          const T* brow = reinterpret_cast<const T*>(b) + row;
          for (int64_t j = 0; j < g.n; ++j) detail::mul_add<A>(acc[j], x, detail::read<T>(reinterpret_cast<const char*>(brow), j));
        } else {
          for (int64_t j = 0; j < g.n; ++j) detail::mul_add<A>(acc[j], x, detail::read<T>(b, row + j * g.b_cs));
        }
      }
      for (int64_t j = 0; j < g.n; ++j) {
        T* out = reinterpret_cast<T*>(c + (i * g.c_rs + j * g.c_cs) * int64_t(sizeof(T)));
        A v;
        if constexpr (std::is_same_v<A, bool>) {
          v = (alpha && acc[j]) || (read_c && beta && detail::read<T>(reinterpret_cast<const char*>(out), 0));
        } else {
          v = alpha * acc[j];
          if (read_c) v += beta * detail::read<T>(reinterpret_cast<const char*>(out), 0);
        }
        *out = cast<T>(v);
      }
    }
  });
}

template <class T>
void Kernels<T>::cross(const Tensor& out, const Tensor& a, const Tensor& b, int64_t dim) {
  using C = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, uint64_t, compute_t<T>>;
  const int64_t so = out.strides()[dim] * out.itemsize(), sa = a.strides()[dim] * a.itemsize(),
                sb = b.strides()[dim] * b.itemsize();
  // Iterate over the other dims: the first slice along dim of each operand.
  auto first = [dim](const Tensor& t) {
    Dims sizes(t.sizes()), strides(t.strides());
    sizes[dim] = 1;
    return make_view(t, std::move(sizes), std::move(strides), t.offset());
  };
  Tensor fo = first(out), fa = first(a), fb = first(b);
  Loop loop = make_loop({&fo, &fa, &fb});
  auto rd = [](const char* p) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<C>(static_cast<int64_t>(load<T>(p)));
    else return static_cast<C>(load<T>(p));
  };
  run_loop(loop, [&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      char* po = p[0] + i * s[0];
      const char* pa = p[1] + i * s[1];
      const char* pb = p[2] + i * s[2];
      const C a0 = rd(pa), a1 = rd(pa + sa), a2 = rd(pa + 2 * sa);
      const C b0 = rd(pb), b1 = rd(pb + sb), b2 = rd(pb + 2 * sb);
      *reinterpret_cast<T*>(po) = cast<T>(C(a1 * b2 - a2 * b1));
      *reinterpret_cast<T*>(po + so) = cast<T>(C(a2 * b0 - a0 * b2));
      *reinterpret_cast<T*>(po + 2 * so) = cast<T>(C(a0 * b1 - a1 * b0));
    }
  }, kGrainSize / 8);
}

}  // namespace ember::kernels::matmul
