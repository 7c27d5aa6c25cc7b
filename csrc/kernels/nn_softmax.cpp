// softmax and log_softmax along the middle dim of (outer, n, inner). See kernels/nn_softmax.h.
// Rows (inner == 1) run as contiguous vectors; otherwise `inner` columns advance
// together, a block of them at a time.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>
#include "core/parallel.h"
#include "kernels/nn_softmax.h"
#include "kernels/nn_math.h"
#include "core/half.h"

namespace ember::kernels::nn_softmax {

using namespace nn;  // nn_math.h
namespace {

// Note [Softmax in one read pass]
// A row is read once: block by block (kBlock elements, in L1), the block's maximum raises
// the running maximum m, the lane sums are rescaled by e^(m_old - m), and e^(x - m) is
// summed (and for softmax stored, with the m it used in mb). The write pass then scales
// each stored block by e^(mb - m) / sum, or writes (x - m) - log(sum). So exp runs once per
// element, and the memory stream of x overlaps the exp arithmetic instead of feeding a
// separate max pass (measured: 1024x4096 float32, 1 thread, 6.2 -> 4.7 ms; torch 5.5).
// NaN needs no test of its own: its exp makes the sum NaN, hence every output. A row
// whose maximum is -inf gives NaN (0 / 0), as torch's.
constexpr int64_t kBlock = 512;

// e^x for x <= 0 (x - max, log-probabilities, x - lse): vmath::exp's reduction and
// polynomial times one power of two, with results below 2^-125.5 (x < -87) flushed to 0,
// an absolute error under 1.2e-38, where vmath::exp clamps x and applies 2^n in two halves
// to keep the subnormals. For x in [-87, 0], n is in [-126, 0] (n = -126 only with r > 0),
// so 2^n and the product are normal. x = -inf (or any x < -87) gives garbage n and r that
// the final select replaces; a NaN x makes y NaN, and NaN times 2^n stays NaN.
[[gnu::always_inline]] inline float exp_nonpos(float x) {
  const vmath::ReducedF k = vmath::reduce_ln2(x);
  const float y = 1.0f + vmath::expm1_reduced(k.r);
  return vmath::sel(x < -87.0f, 0.0f, y * vmath::pow2i(k.n));
}
[[gnu::always_inline]] inline double exp_nonpos(double x) { return exp_fast(x); }

// The largest element, through the order-preserving map of float bits to int32 (gcc
// vectorizes an int max reduction; a float one it keeps scalar without -ffast-math).
inline int32_t ordered_bits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i ^ ((i >> 31) & 0x7fffffff);
}
inline float row_max(const float* x, int64_t n) {
  int32_t m = ordered_bits(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; ++i) m = std::max(m, ordered_bits(x[i]));
  m ^= (m >> 31) & 0x7fffffff;
  float f;
  std::memcpy(&f, &m, sizeof f);
  return f;
}
inline double row_max(const double* x, int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// sum(e^(x - m)) over one block into the lanes, storing the terms in y when Store.
template <bool Store, class T>
void exp_sum_block(const T* x, T* y, int64_t len, T m, T* acc) {
  int64_t k = 0;
  for (; k + kLanes <= len; k += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const T e = exp_nonpos(x[k + l] - m);
      if (Store) y[k + l] = e;
      acc[l] += e;
    }
  if (k == len) return;
  // The last partial run of lanes, padded with -inf (e = 0), so that it too runs as vectors:
  // with one scalar exp per leftover element, rows of 65 took 1.3x torch's time.
  T xt[kLanes], et[kLanes];
  std::fill(xt, xt + kLanes, -std::numeric_limits<T>::infinity());
  std::copy(x + k, x + len, xt);
  for (int l = 0; l < kLanes; ++l) {
    et[l] = exp_nonpos(xt[l] - m);
    acc[l] += et[l];
  }
  if (Store) std::copy(et, et + (len - k), y + k);
}

// The read pass of Note [Softmax in one read pass]: returns sum(e^(x - m)), m the row max;
// with Store, y holds each block's e^(x - mb[b]).
template <bool Store, class T>
T online_exp_sum(const T* x, T* y, int64_t n, T* mb, T& m) {
  T acc[kLanes] = {};
  m = -std::numeric_limits<T>::infinity();
  for (int64_t b = 0, i = 0; i < n; ++b, i += kBlock) {
    const int64_t len = std::min(kBlock, n - i);
    const T bm = row_max(x + i, len);
    if (bm > m) {
      // From -inf, the lanes hold zeros (or NaN): times 0 keeps them, where e^(-inf - bm) is NaN.
      const T r = m == -std::numeric_limits<T>::infinity() ? T(0) : exp_fast(m - bm);
      for (int l = 0; l < kLanes; ++l) acc[l] *= r;
      m = bm;
    }
    const T base = m == -std::numeric_limits<T>::infinity() ? T(0) : m;  // all -inf so far: e = 0
    if (Store) mb[b] = m;
    exp_sum_block<Store>(x + i, Store ? y + i : nullptr, len, base, acc);
  }
  T sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += acc[l];
  return sum;
}

template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log, T* mb) {
  T m;
  if (log) {
    const T log_sum = std::log(online_exp_sum<false>(x, y, n, mb, m));
    for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) - log_sum;  // m + log_sum would round away digits of x - m
    return;
  }
  const T inv = T(1) / online_exp_sum<true>(x, y, n, mb, m);
  for (int64_t b = 0, i = 0; i < n; ++b, i += kBlock) {
    const T scale = mb[b] == m ? inv : exp_fast(mb[b] - m) * inv;
    T* yb = y + i;
    const int64_t len = std::min(kBlock, n - i);
    for (int64_t k = 0; k < len; ++k) yb[k] *= scale;
  }
}

// Half rows to and from T. bfloat16 rounds to nearest even without a branch (NaN kept
// quiet), so gcc vectorizes both directions; float16 takes F16C's 8-wide conversions (gcc
// does not vectorize the scalar ones).
template <class T>
void half_row_to(const uint16_t* h, T* f, int64_t n, bool bf16) {
  if (bf16) {
    for (int64_t i = 0; i < n; ++i) f[i] = T(bfloat16_bits_to_float(h[i]));
  } else {
    int64_t i = 0;
#if defined(__F16C__)
    if constexpr (std::is_same_v<T, float>)
      for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
#endif
    for (; i < n; ++i) f[i] = T(half_bits_to_float(h[i]));
  }
}
template <class T>
void half_row_from(const T* f, uint16_t* h, int64_t n, bool bf16, T scale) {
  if (bf16) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = float(f[i] * scale);
      uint32_t x;
      std::memcpy(&x, &v, sizeof x);
      const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
      const uint32_t quiet = (x >> 16) | 0x40u;
      h[i] = uint16_t((x & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
    }
  } else {
    int64_t i = 0;
#if defined(__F16C__)
    if constexpr (std::is_same_v<T, float>) {
      const __m256 s = _mm256_set1_ps(scale);
      for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i),
                         _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(f + i), s), _MM_FROUND_TO_NEAREST_INT));
    }
#endif
    for (; i < n; ++i) h[i] = float_to_half_bits(float(f[i] * scale));
  }
}

// softmax_row for a half row already converted to x: the write pass scales each block and
// rounds it straight into h, so the scaled floats are never stored and read back.
template <class T>
void softmax_row_to_half(const T* x, T* e, uint16_t* h, int64_t n, bool log, bool bf16, T* mb) {
  T m;
  if (log) {
    const T log_sum = std::log(online_exp_sum<false>(x, e, n, mb, m));
    for (int64_t i = 0; i < n; i += kBlock) {
      const int64_t len = std::min(kBlock, n - i);
      for (int64_t k = 0; k < len; ++k) e[k] = (x[i + k] - m) - log_sum;  // one block of e, in L1
      half_row_from(e, h + i, len, bf16, T(1));
    }
    return;
  }
  const T inv = T(1) / online_exp_sum<true>(x, e, n, mb, m);
  for (int64_t b = 0, i = 0; i < n; ++b, i += kBlock)
    half_row_from(e + i, h + i, std::min(kBlock, n - i), bf16, mb[b] == m ? inv : exp_fast(mb[b] - m) * inv);
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

constexpr int64_t kColumnBlock = 1024;

// Columns j0..j0+w of one outer slice: x[i * inner + j]. Three passes (max, exp and sum,
// write), each a loop across the w columns of one row at a time.
template <bool Log, class T>
void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t w, T* m, T* s) {
  for (int64_t j = 0; j < w; ++j) m[j] = -std::numeric_limits<T>::infinity(), s[j] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    for (int64_t j = 0; j < w; ++j) m[j] = blend((r[j] > m[j]) | (r[j] != r[j]), r[j], m[j]);  // NaN sticks
  }
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    T* o = y + i * inner;
    if (Log) {
      for (int64_t j = 0; j < w; ++j) s[j] += exp_fast(r[j] - m[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) {
        const T e = exp_fast(r[j] - m[j]);
        s[j] += e;
        o[j] = e;
      }
    }
  }
  for (int64_t j = 0; j < w; ++j) s[j] = Log ? std::log(s[j]) : T(1) / s[j];
  for (int64_t i = 0; i < n; ++i) {
    const T* r = x + i * inner;
    T* o = y + i * inner;
    if (Log) {
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

// Columns per work item: long runs across a row are what make the column passes fast (a
// block of 16 columns took 3x as long as one of 1024: per-row overhead, short strided
// streams), but an outer slice narrower than the threads is split so that each gets some.
int64_t column_width(int64_t outer, int64_t inner) {
  int64_t w = std::min(inner, kColumnBlock);
  const int64_t threads = get_num_threads();
  if (outer < threads) {
    const int64_t parts = (threads + outer - 1) / outer;
    w = std::min(w, std::max<int64_t>(16, ((inner + parts - 1) / parts + 15) / 16 * 16));
  }
  return w;
}

// Work items: rows, or (outer slice, column block of `width`) pairs; a grain of about
// kGrainSize elements.
template <class F>
void for_blocks(int64_t outer, int64_t n, int64_t inner, int64_t width, F&& f) {
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) f(r * n, int64_t(1), int64_t(1));
    });
    return;
  }
  const int64_t blocks = (inner + width - 1) / width;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * width, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t it = b; it < e; ++it) {
                   const int64_t o = it / blocks, j0 = (it % blocks) * width;
                   f(o * n * inner + j0, inner, std::min(width, inner - j0));
                 }
               });
}

}  // namespace

template <class T>
void Kernels<T>::softmax(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool log) {
  for_blocks(outer, n, inner, column_width(outer, inner), [&](int64_t off, int64_t stride, int64_t w) {
    if (stride == 1) {
      const int64_t blocks = (n + kBlock - 1) / kBlock;  // the maxima each block's exps used
      T mb_small[64];
      std::vector<T> mb_large(blocks > 64 ? blocks : 0);
      softmax_row(in + off, out + off, n, log, blocks > 64 ? mb_large.data() : mb_small);
    } else {
      T m[kColumnBlock], s[kColumnBlock];
      if (log) {
        softmax_columns<true>(in + off, out + off, n, stride, w, m, s);
      } else {
        softmax_columns<false>(in + off, out + off, n, stride, w, m, s);
      }
    }
  });
}

template <class T>
void Kernels<T>::softmax_half_rows(const uint16_t* in, uint16_t* out, int64_t rows, int64_t n, bool log, bool bf16) {
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<T> buf(size_t(2 * n)), mb(size_t((n + kBlock - 1) / kBlock));
    for (int64_t r = r0; r < r1; ++r) {
      half_row_to(in + r * n, buf.data(), n, bf16);
      softmax_row_to_half(buf.data(), buf.data() + n, out + r * n, n, log, bf16, mb.data());
    }
  });
}

template <class T>
void Kernels<T>::softmax_backward(const T* grad, const T* out, T* gin, int64_t outer, int64_t n, int64_t inner, bool log) {
  for_blocks(outer, n, inner, column_width(outer, inner), [&](int64_t off, int64_t stride, int64_t w) {
    if (stride == 1) {
      softmax_backward_row(grad + off, out + off, gin + off, n, log);
    } else {
      T s[kColumnBlock];
      softmax_backward_columns(grad + off, out + off, gin + off, n, stride, w, log, s);
    }
  });
}

namespace {

// log(sum(e^x)) of a row: a row of one block is read twice (its maximum, then the sum
// with 8 lanes and a scalar tail), which for short rows costs half of online_exp_sum's
// per-block work (8192 rows of 65: 0.71 against 1.30 ms); longer rows take the one read
// pass.
template <class T>
T row_log_sum_exp(const T* x, int64_t n) {
  T m;
  if (n > kBlock) {
    const T s = online_exp_sum<false>(x, static_cast<T*>(nullptr), n, static_cast<T*>(nullptr), m);
    return m + std::log(s);
  }
  m = row_max(x, n);
  const T base = m == -std::numeric_limits<T>::infinity() ? T(0) : m;  // all -inf: sum 0, log -inf
  constexpr int kShort = 8;
  T acc[kShort] = {};
  int64_t k = 0;
  for (; k + kShort <= n; k += kShort)
    for (int l = 0; l < kShort; ++l) acc[l] += exp_nonpos(x[k + l] - base);
  T s = 0;
  for (; k < n; ++k) s += exp_nonpos(x[k] - base);
  for (int l = 0; l < kShort; ++l) s += acc[l];
  return m + std::log(s);
}

}  // namespace

// Note [Fused cross_entropy]
// cross_entropy of class-index targets as one op (ops/nn_loss.cpp, _cross_entropy_loss),
// in place of log_softmax then nll_loss: the forward reads each row once (the online
// maximum and sum of Note [Softmax in one read pass]) and keeps only the row's
// log-sum-exp, not the (rows, C) log-probabilities; the backward reads the row once more
// and writes its gradient, recomputing e^(x - lse). With label smoothing the loss adds
// (eps / C) sum_c w[c] (lse - x[c]), a second read of a row still in L1. Row losses go to
// loss[] and the caller sums them in order, so a reduced loss does not depend on the
// thread count.
template <class T>
void Kernels<T>::cross_entropy(const T* x, int64_t rows, int64_t C, const int64_t* target, const T* w, T,
                               int64_t ignore_index, double eps, T* loss, T* lse) {
  const T keep = T(1.0 - eps), per = T(eps / double(C));
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t t = target[r];
      if (t == ignore_index) {
        loss[r] = T(0), lse[r] = T(0);
        continue;
      }
      const T* row = x + r * C;
      const T ls = row_log_sum_exp(row, C);
      lse[r] = ls;
      const T wt = w ? w[t] : T(1);
      T v = keep * wt * (ls - row[t]);
      if (eps > 0) {
        T acc[kLanes] = {};
        int64_t c = 0;
        if (w) {
          for (; c + kLanes <= C; c += kLanes)
            for (int q = 0; q < kLanes; ++q) acc[q] += w[c + q] * (ls - row[c + q]);
          for (; c < C; ++c) acc[0] += w[c] * (ls - row[c]);
        } else {
          for (; c + kLanes <= C; c += kLanes)
            for (int q = 0; q < kLanes; ++q) acc[q] += ls - row[c + q];
          for (; c < C; ++c) acc[0] += ls - row[c];
        }
        T smooth = 0;
        for (int q = 0; q < kLanes; ++q) smooth += acc[q];
        v += per * smooth;
      }
      loss[r] = v;
    }
  });
}

template <class T>
void Kernels<T>::cross_entropy_backward(const T* x, const T* lse, int64_t rows, int64_t C, const int64_t* target,
                                        const T* w, T wsum, int64_t ignore_index, double eps, const T* g,
                                        bool elementwise, T scale, T* gx) {
  const T keep = T(1.0 - eps), per = T(eps / double(C));
  const T total = w ? wsum : T(C);
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* o = gx + r * C;
      const int64_t t = target[r];
      if (t == ignore_index) {
        std::fill(o, o + C, T(0));
        continue;
      }
      const T* row = x + r * C;
      const T gr = elementwise ? g[r] : g[0] * scale;
      const T wt = w ? w[t] : T(1);
      const T a = gr * (keep * wt + per * total), b = gr * per, l = lse[r];
      if (w && eps > 0) {
        for (int64_t c = 0; c < C; ++c) o[c] = a * exp_nonpos(row[c] - l) - b * w[c];
      } else if (eps > 0) {
        for (int64_t c = 0; c < C; ++c) o[c] = a * exp_nonpos(row[c] - l) - b;
      } else {
        for (int64_t c = 0; c < C; ++c) o[c] = a * exp_nonpos(row[c] - l);
      }
      o[t] -= gr * keep * wt;
    }
  });
}


}  // namespace ember::kernels::nn_softmax

#include "kernel_instances_nn_softmax.h"  // generated: Kernels<float>, Kernels<double>
