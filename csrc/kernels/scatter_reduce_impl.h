#pragma once
#include "kernels/math.h"
#include "kernels/scatter_reduce.h"

namespace ember::kernels::scatter_reduce {

template <class C>
inline C fold(ReduceOp op, C acc, C v) {
  switch (op) {
    case ReduceOp::sum: return add_wrap(acc, v);
    case ReduceOp::prod: return mul_wrap(acc, v);
    case ReduceOp::amax: return (acc != acc || v < acc) ? acc : v;  // NaN stays, then larger
    case ReduceOp::amin: return (acc != acc || v > acc) ? acc : v;
  }
  return acc;
}

template <class T>
void Kernels<T>::reduce(const Loop& loop, int64_t dim_stride, ReduceOp op) {
  using C = compute_t<T>;
  auto body = [dim_stride, op](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t idx = load<int64_t>(p[1] + i * s[1]);
      char* dst = p[0] + i * s[0] + idx * dim_stride;
      T v = cast<T>(fold(op, C(load<T>(dst)), C(load<T>(p[2] + i * s[2]))));
      std::memcpy(dst, &v, sizeof(T));
    }
  };
  LongLoop long_loop(loop);
  loop_range(loop, 0, loop.numel, body);
}

}  // namespace ember::kernels::scatter_reduce
