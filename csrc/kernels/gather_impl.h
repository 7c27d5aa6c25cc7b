#pragma once
#include <atomic>
#include <cstring>
#include "kernels/gather.h"
#include "kernels/math.h"

namespace ember::kernels::gather {

// Indices are checked as they are read (one pass, no separate min/max scan).
template <class T>
bool Kernels<T>::gather(const Loop& loop, int64_t dim_stride, int64_t size) {
  std::atomic<bool> bad{false};
  run_loop(loop, [dim_stride, size, &bad](char** p, const int64_t* s, int64_t n) {
    bool seen_bad = false;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t idx = load<int64_t>(p[1] + i * s[1]);
      if (static_cast<uint64_t>(idx) >= static_cast<uint64_t>(size)) {
        seen_bad = true;
        continue;
      }
      std::memcpy(p[0] + i * s[0], p[2] + i * s[2] + idx * dim_stride, sizeof(T));
    }
    if (seen_bad) bad.store(true, std::memory_order_relaxed);
  });
  return !bad.load();
}

template <class T>
void Kernels<T>::scatter(const Loop& loop, int64_t dim_stride, bool add) {
  auto body = [dim_stride, add](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t idx = load<int64_t>(p[1] + i * s[1]);
      char* dst = p[0] + i * s[0] + idx * dim_stride;
      T v = load<T>(p[2] + i * s[2]);
      if (add) {
        using C = compute_t<T>;
        v = cast<T>(add_wrap(C(load<T>(dst)), C(v)));
      }
      std::memcpy(dst, &v, sizeof(T));
    }
  };
  LongLoop long_loop(loop);
  loop_range(loop, 0, loop.numel, body);
}

}  // namespace ember::kernels::gather
