#pragma once
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>
#include "kernels/math.h"
#include "kernels/rowwise.h"

namespace ember::kernels::rowwise {

// a is "better" than b for argmax: larger, or NaN (the first NaN wins, as in torch).
template <class C, bool Max>
inline bool better(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (b != b) return false;
    if (a != a) return true;
  }
  return Max ? b < a : a < b;
}

// A contiguous row in two passes the compiler vectorizes: the extreme value (and
// whether a NaN occurs), then the first index holding it.
template <class T, bool Max>
int64_t arg_contiguous(const T* a, int64_t n, T* value) {
  T m = a[0];
  bool nan = false;
  for (int64_t i = 1; i < n; ++i) {
    m = (Max ? a[i] > m : a[i] < m) ? a[i] : m;
    if constexpr (std::is_floating_point_v<T>) nan |= a[i] != a[i];
  }
  if constexpr (std::is_floating_point_v<T>) nan |= a[0] != a[0];
  int64_t i = 0;
  if (nan) {
    while (a[i] == a[i]) ++i;
  } else {
    while (a[i] != m) ++i;
  }
  *value = a[i];
  return i;
}

template <class T, bool Max>
void arg_rows(const Rows& r) {
  using C = compute_t<T>;
  const int64_t n = r.length, sv = r.dim_strides[2];
  run_loop(r.loop, [&](char** p, const int64_t* s, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      const char* in = p[2] + k * s[2];
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        if (sv == int64_t(sizeof(T))) {
          T best;
          at<int64_t>(p[1], s[1], k) = arg_contiguous<T, Max>(reinterpret_cast<const T*>(in), n, &best);
          at<T>(p[0], s[0], k) = best;
          continue;
        }
      }
      C best = C(load<T>(in));
      int64_t best_i = 0;
      for (int64_t i = 1; i < n; ++i) {
        C v = C(load<T>(in + i * sv));
        if (better<C, Max>(v, best)) best = v, best_i = i;
      }
      at<T>(p[0], s[0], k) = cast<T>(best);
      at<int64_t>(p[1], s[1], k) = best_i;
    }
  }, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)));
}

// Running maximum/minimum with the index where it was last reached (ties take the later
// index, as torch's cummax does); NaN sticks once seen.
template <class T, bool Max>
void cum_arg_rows(const Rows& r) {
  using C = compute_t<T>;
  const int64_t n = r.length;
  const int64_t so = r.dim_strides[0], si = r.dim_strides[1], sv = r.dim_strides[2];
  run_loop(r.loop, [&](char** p, const int64_t* s, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      char* out = p[0] + k * s[0];
      char* idx = p[1] + k * s[1];
      const char* in = p[2] + k * s[2];
      C best{};
      int64_t best_i = 0;
      for (int64_t i = 0; i < n; ++i) {
        C v = C(load<T>(in + i * sv));
        bool take = i == 0;
        if (!take) {
          if constexpr (std::is_floating_point_v<C>) {
            take = (v != v) || (best == best && (Max ? !(v < best) : !(best < v)));
          } else {
            take = Max ? !(v < best) : !(best < v);
          }
        }
        if (take) best = v, best_i = i;
        *reinterpret_cast<T*>(out + i * so) = cast<T>(best);
        *reinterpret_cast<int64_t*>(idx + i * si) = best_i;
      }
    }
  }, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)));
}

template <class T>
void scan_rows(RowOp op, const Rows& r) {
  using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, compute_t<T>>;
  using Out = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
  const int64_t n = r.length, so = r.dim_strides[0], si = r.dim_strides[1];
  run_loop(r.loop, [&](char** p, const int64_t* s, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      char* out = p[0] + k * s[0];
      const char* in = p[1] + k * s[1];
      if (op == RowOp::logcumsumexp) {
        if constexpr (!std::is_integral_v<T>) {
          Acc acc = -std::numeric_limits<Acc>::infinity();
          for (int64_t i = 0; i < n; ++i) {
            Acc v = Acc(load<T>(in + i * si));
            // log(e^acc + e^v) from the larger term: exact for infinities and NaN
            Acc hi = max_nan(acc, v), lo = min_nan(acc, v);
            acc = (hi != hi || std::isinf(hi)) ? hi : hi + std::log1p(std::exp(lo - hi));
            *reinterpret_cast<Out*>(out + i * so) = cast<Out>(acc);
          }
        }
        continue;
      }
      Acc acc = op == RowOp::cumsum ? Acc(0) : Acc(1);
      for (int64_t i = 0; i < n; ++i) {
        Acc v = Acc(compute_t<T>(load<T>(in + i * si)));
        acc = op == RowOp::cumsum ? add_wrap(acc, v) : mul_wrap(acc, v);
        *reinterpret_cast<Out*>(out + i * so) = cast<Out>(acc);
      }
    }
  }, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)));
}

template <class T>
void sort_rows(const Rows& r) {
  using C = compute_t<T>;
  const int64_t n = r.length;
  const int64_t so = r.dim_strides[0], si = r.dim_strides[1], sv = r.dim_strides[2];
  const bool desc = r.descending;
  run_loop(r.loop, [&](char** p, const int64_t* s, int64_t count) {
    std::vector<std::pair<C, int64_t>> row(n);
    for (int64_t k = 0; k < count; ++k) {
      const char* in = p[2] + k * s[2];
      for (int64_t i = 0; i < n; ++i) row[i] = {C(load<T>(in + i * sv)), i};
      // NaN is larger than everything; ties keep their order
      auto less = [](C a, C b) {
        if constexpr (std::is_floating_point_v<C>) {
          if (b != b) return a == a;
          if (a != a) return false;
        }
        return a < b;
      };
      if (desc) {
        std::stable_sort(row.begin(), row.end(), [&](const auto& a, const auto& b) { return less(b.first, a.first); });
      } else {
        std::stable_sort(row.begin(), row.end(), [&](const auto& a, const auto& b) { return less(a.first, b.first); });
      }
      char* out = p[0] + k * s[0];
      char* idx = p[1] + k * s[1];
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<T*>(out + i * so) = cast<T>(row[i].first);
        *reinterpret_cast<int64_t*>(idx + i * si) = row[i].second;
      }
    }
  }, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1) / 16));
}

template <class T>
void Kernels<T>::run(RowOp op, const Rows& rows) {
  switch (op) {
    case RowOp::argmax: return arg_rows<T, true>(rows);
    case RowOp::argmin: return arg_rows<T, false>(rows);
    case RowOp::cummax: return cum_arg_rows<T, true>(rows);
    case RowOp::cummin: return cum_arg_rows<T, false>(rows);
    case RowOp::cumsum:
    case RowOp::cumprod:
    case RowOp::logcumsumexp: return scan_rows<T>(op, rows);
    case RowOp::sort: return sort_rows<T>(rows);
  }
}

}  // namespace ember::kernels::rowwise
