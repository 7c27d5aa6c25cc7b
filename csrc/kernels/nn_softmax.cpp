// softmax and log_softmax along the middle dim of (outer, n, inner). See kernels/nn_softmax.h.
// Rows (inner == 1) run as contiguous vectors; otherwise `inner` columns advance
// together, a block of them at a time.
#include <algorithm>
#include <cmath>
#include <vector>
#include "core/parallel.h"
#include "kernels/nn_softmax.h"
#include "kernels/nn_math.h"

namespace ember::kernels::nn_softmax {

using namespace nn;  // nn_math.h
namespace {

template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log) {
  const T m = lane_max(x, n);
  for (int64_t i = 0; i < n; ++i) y[i] = exp_fast(x[i] - m);  // simple loops vectorize best
  const T s = lane_sum(y, n);
  if (log) {
    const T log_sum = std::log(s);  // (x - m) - log_sum: m + log_sum would round away digits of x - m
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) - log_sum;
  } else {
    const T inv = T(1) / s;
    for (int64_t k = 0; k < n; ++k) y[k] *= inv;
  }
}

template <class T>
void softmax_backward_row(const T* g, const T* y, T* gx, int64_t n, bool log) {
  if (log) {
    const T s = lane_sum(g, n);
    for (int64_t k = 0; k < n; ++k) gx[k] = g[k] - exp_fast(y[k]) * s;
  } else {
    const T s = lane_dot(g, y, n);
    for (int64_t k = 0; k < n; ++k) gx[k] = y[k] * (g[k] - s);
  }
}

constexpr int64_t kColumnBlock = 256;

// Columns j0..j0+w of one outer slice: x[i * inner + j].
template <class T>
void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t w, bool log, T* m, T* s) {
  for (int64_t j = 0; j < w; ++j) m[j] = -std::numeric_limits<T>::infinity(), s[j] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    for (int64_t j = 0; j < w; ++j) m[j] = blend((r[j] > m[j]) | (r[j] != r[j]), r[j], m[j]);  // NaN sticks
  }
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    T* o = y + i * inner;
    for (int64_t j = 0; j < w; ++j) {
      const T e = exp_fast(r[j] - m[j]);
      s[j] += e;
      if (!log) o[j] = e;
    }
  }
  for (int64_t j = 0; j < w; ++j) s[j] = log ? std::log(s[j]) : T(1) / s[j];
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    T* o = y + i * inner;
    if (log) {
      for (int64_t j = 0; j < w; ++j) o[j] = (r[j] - m[j]) - s[j];
    } else {
      for (int64_t j = 0; j < w; ++j) o[j] *= s[j];
    }
  }
}

template <class T>
void softmax_backward_columns(const T* g, const T* y, T* gx, int64_t n, int64_t inner, int64_t w, bool log, T* s) {
  for (int64_t j = 0; j < w; ++j) s[j] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T* gr = g + i * inner;
    const T* yr = y + i * inner;
    if (log) {
      for (int64_t j = 0; j < w; ++j) s[j] += gr[j];
    } else {
      for (int64_t j = 0; j < w; ++j) s[j] += gr[j] * yr[j];
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    const T* gr = g + i * inner;
    const T* yr = y + i * inner;
    T* o = gx + i * inner;
    if (log) {
      for (int64_t j = 0; j < w; ++j) o[j] = gr[j] - exp_fast(yr[j]) * s[j];
    } else {
      for (int64_t j = 0; j < w; ++j) o[j] = yr[j] * (gr[j] - s[j]);
    }
  }
}

// Work items: rows, or (outer slice, column block) pairs; a grain of about kGrainSize elements.
template <class F>
void for_blocks(int64_t outer, int64_t n, int64_t inner, F&& f) {
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) f(r * n, int64_t(1), int64_t(1));
    });
    return;
  }
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t per_item = n * std::min(inner, kColumnBlock);
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(per_item, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t it = b; it < e; ++it) {
                   const int64_t o = it / blocks, j0 = (it % blocks) * kColumnBlock;
                   f(o * n * inner + j0, inner, std::min(kColumnBlock, inner - j0));
                 }
               });
}

}  // namespace

template <class T>
void Kernels<T>::softmax(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool log) {
  for_blocks(outer, n, inner, [&](int64_t off, int64_t stride, int64_t w) {
    if (stride == 1) {
      softmax_row(in + off, out + off, n, log);
    } else {
      T m[kColumnBlock], s[kColumnBlock];
      softmax_columns(in + off, out + off, n, stride, w, log, m, s);
    }
  });
}

template <class T>
void Kernels<T>::softmax_backward(const T* grad, const T* out, T* gin, int64_t outer, int64_t n, int64_t inner, bool log) {
  for_blocks(outer, n, inner, [&](int64_t off, int64_t stride, int64_t w) {
    if (stride == 1) {
      softmax_backward_row(grad + off, out + off, gin + off, n, log);
    } else {
      T s[kColumnBlock];
      softmax_backward_columns(grad + off, out + off, gin + off, n, stride, w, log, s);
    }
  });
}


}  // namespace ember::kernels::nn_softmax

#include "kernel_instances_nn_softmax.h"  // generated: Kernels<float>, Kernels<double>
