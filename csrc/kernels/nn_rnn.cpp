// The fused recurrent layers' step kernels (see kernels/nn_rnn.h): the pointwise parts,
// whose row loops run over H contiguous elements (`ivdep`: the rows never overlap, so gcc
// vectorizes them without alias checks), and the per-step product with a packed weight.
#include "kernels/nn_rnn.h"
#include <algorithm>
#include <cmath>
#include "core/parallel.h"
#include "kernels/nn_math.h"
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace ember::kernels::nn_rnn {
namespace {

// Rows [0, n) in chunks of at least kGrainSize elements' work.
template <class F>
void for_rows(int64_t n, int64_t width, F&& f) {
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 8 * width)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) f(r);
  });
}

// The activations as the sigmoid and tanh ops compute them (kernels/activation_impl.h,
// unary_impl.h), so the fused forward matches the composed one.
template <class T>
[[gnu::always_inline]] inline T sigmoid(T x) {
  return T(1) / (T(1) + nn::exp_fast(-x));
}
template <class T>
[[gnu::always_inline]] inline T tanh_(T x) {
  return nn::tanh_accurate(x);
}

}  // namespace

template <class T>
void Kernels<T>::lstm_forward(T* gates, const T* c_prev, T* cell, T* tanh_cell, T* hidden, int64_t n, int64_t H) {
  for_rows(n, 4 * H, [&](int64_t r) {
    T* i = gates + r * 4 * H;
    T* f = i + H;
    T* g = f + H;
    T* o = g + H;
    const T* cp = c_prev + r * H;
    T* c = cell + r * H;
    T* tc = tanh_cell + r * H;
    T* h = hidden + r * H;
#pragma GCC ivdep
    for (int64_t j = 0; j < H; ++j) {
      const T iv = sigmoid(i[j]), fv = sigmoid(f[j]), gv = tanh_(g[j]), ov = sigmoid(o[j]);
      const T cv = fv * cp[j] + iv * gv;
      const T t = tanh_(cv);
      i[j] = iv;
      f[j] = fv;
      g[j] = gv;
      o[j] = ov;
      c[j] = cv;
      tc[j] = t;
      h[j] = ov * t;
    }
  });
}

template <class T>
void Kernels<T>::lstm_backward(const T* gates, const T* c_prev, const T* tanh_cell, const T* dh, T* dc, T* dgates,
                               int64_t n, int64_t H) {
  for_rows(n, H, [&](int64_t r) {
    const T* i = gates + r * 4 * H;
    const T* f = i + H;
    const T* g = f + H;
    const T* o = g + H;
    const T* cp = c_prev + r * H;
    const T* tc = tanh_cell + r * H;
    const T* d = dh + r * H;
    T* dcr = dc + r * H;
    T* di = dgates + r * 4 * H;
    T* df = di + H;
    T* dg = df + H;
    T* dout = dg + H;
#pragma GCC ivdep
    for (int64_t j = 0; j < H; ++j) {
      const T t = tc[j], ov = o[j], iv = i[j], fv = f[j], gv = g[j];
      const T dcv = dcr[j] + d[j] * ov * (T(1) - t * t);
      dout[j] = d[j] * t * ov * (T(1) - ov);
      di[j] = dcv * gv * iv * (T(1) - iv);
      df[j] = dcv * cp[j] * fv * (T(1) - fv);
      dg[j] = dcv * iv * (T(1) - gv * gv);
      dcr[j] = dcv * fv;
    }
  });
}

template <class T>
void Kernels<T>::gru_backward(const T* gates, const T* hidden_gates, const T* h_prev, const T* dh, T* dgates,
                              T* dgh, T* dh_prev, int64_t n, int64_t H) {
  for_rows(n, H, [&](int64_t r) {
    const T* rr = gates + r * 3 * H;
    const T* zz = rr + H;
    const T* nn_ = zz + H;
    const T* hn = hidden_gates + r * 3 * H + 2 * H;
    const T* hp = h_prev + r * H;
    const T* d = dh + r * H;
    T* dr = dgates + r * 3 * H;
    T* dz = dr + H;
    T* dn = dz + H;
    T* hdr = dgh + r * 3 * H;
    T* hdz = hdr + H;
    T* hdn = hdz + H;
    T* dp = dh_prev + r * H;
#pragma GCC ivdep
    for (int64_t j = 0; j < H; ++j) {
      const T rv = rr[j], zv = zz[j], nv = nn_[j], dv = d[j];
      const T dnv = dv * (T(1) - zv) * (T(1) - nv * nv);
      const T dzv = dv * (hp[j] - nv) * zv * (T(1) - zv);
      const T drv = dnv * hn[j] * rv * (T(1) - rv);
      dr[j] = drv;
      dz[j] = dzv;
      dn[j] = dnv;
      hdr[j] = drv;
      hdz[j] = dzv;
      hdn[j] = dnv * rv;
      dp[j] = dv * zv;
    }
  });
}

// ---- the per-step product with a packed weight ----
//
// OpenBLAS packs both operands on every call: for a step's (32, 512) x (512, 2048) that is
// the whole 4 MB weight copied each time, a quarter of the call. Here the weight is packed
// once per layer (kPanel-column panels) and each call runs, per panel, over blocks of kKc
// of its rows (in L2), every 4-row block of a against them: a 4 x 24 tile of the result in
// 12 ymm accumulators, 3 loads of the panel and 4 broadcasts of a per k. Panels are split
// across ember's threads. On one core of the 2-core AMD EPYC (shared), a (32, 512) x
// (512, 2048) step into rows not in cache: ~73 GFLOP/s against OpenBLAS's ~55-65 (kKc 128,
// 256, 512 or 2048 measured alike within the noise).
namespace {

constexpr int64_t kKc = 512;  // panel rows per block (24 x 512 floats: 48 KB, L2)

#if defined(__AVX2__) && defined(__FMA__)
static_assert(kPanel == 24, "the tile below is 3 ymm wide");

// c[0:R, 0:cols] (+)= a[0:R, 0:kc] b[0:kc, 0:24]; cols <= 24 (the last panel's).
template <int R>
void tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, bool add, int64_t cols) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
  __m256 c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
  const float* a0 = a;
  const float* a1 = a + lda;
  const float* a2 = a + 2 * lda;
  const float* a3 = a + 3 * lda;
  if (add)  // the tile of c comes from memory (a step's rows of the input projection): ask early
    for (int r = 0; r < R; ++r) {
      _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kPanel - 1), _MM_HINT_T0);
    }
  for (int64_t k = 0; k < kc; ++k, b += kPanel) {
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), b2 = _mm256_loadu_ps(b + 16);
    // in registers: folded into each FMA as a memory operand, the panel is loaded R
    // times per k and the loads, not the FMAs, bound the loop (measured 45 GFLOP/s against 95)
    asm("" : "+x"(b0), "+x"(b1), "+x"(b2));
    __m256 v = _mm256_broadcast_ss(a0 + k);
    c00 = _mm256_fmadd_ps(v, b0, c00);
    c01 = _mm256_fmadd_ps(v, b1, c01);
    c02 = _mm256_fmadd_ps(v, b2, c02);
    if constexpr (R > 1) {
      v = _mm256_broadcast_ss(a1 + k);
      c10 = _mm256_fmadd_ps(v, b0, c10);
      c11 = _mm256_fmadd_ps(v, b1, c11);
      c12 = _mm256_fmadd_ps(v, b2, c12);
    }
    if constexpr (R > 2) {
      v = _mm256_broadcast_ss(a2 + k);
      c20 = _mm256_fmadd_ps(v, b0, c20);
      c21 = _mm256_fmadd_ps(v, b1, c21);
      c22 = _mm256_fmadd_ps(v, b2, c22);
    }
    if constexpr (R > 3) {
      v = _mm256_broadcast_ss(a3 + k);
      c30 = _mm256_fmadd_ps(v, b0, c30);
      c31 = _mm256_fmadd_ps(v, b1, c31);
      c32 = _mm256_fmadd_ps(v, b2, c32);
    }
  }
  alignas(32) float acc[4][kPanel];
  const __m256 rows[4][3] = {{c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32}};
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 3; ++j) _mm256_store_ps(acc[r] + 8 * j, rows[r][j]);
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
    if (cols == kPanel) {
      for (int j = 0; j < kPanel; j += 8) {
        const __m256 v = _mm256_load_ps(acc[r] + j);
        _mm256_storeu_ps(cr + j, add ? _mm256_add_ps(_mm256_loadu_ps(cr + j), v) : v);
      }
    } else {
      for (int64_t j = 0; j < cols; ++j) cr[j] = add ? cr[j] + acc[r][j] : acc[r][j];
    }
  }
}
#else
template <int R>
void tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, bool add, int64_t cols) {
  float acc[4][kPanel] = {};
  for (int64_t k = 0; k < kc; ++k, b += kPanel)
    for (int r = 0; r < R; ++r)
      for (int64_t j = 0; j < kPanel; ++j) acc[r][j] += a[r * lda + k] * b[j];
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = add ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}
#endif

}  // namespace

void packed_mm(const float* a, int64_t lda, const float* packed, float* c, int64_t ldc, int64_t m, int64_t n,
               int64_t k, bool accumulate) {
  const int64_t panels = (n + kPanel - 1) / kPanel;
  if (m == 0 || panels == 0) return;
  if (k == 0) {  // an empty sum
    if (!accumulate)
      for (int64_t r = 0; r < m; ++r) std::fill(c + r * ldc, c + r * ldc + n, 0.0f);
    return;
  }
  // a panel is m * k * kPanel multiply-adds; hand out at least ~2^17 of them at a time
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 17) / std::max<int64_t>(1, m * k * kPanel));
  parallel_for(0, panels, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t cols = std::min(kPanel, n - p * kPanel);
      for (int64_t kb = 0; kb < k; kb += kKc) {
        const int64_t kc = std::min(kKc, k - kb);
        const bool add = accumulate || kb > 0;
        const float* b = packed + (p * k + kb) * kPanel;
        float* cp = c + p * kPanel;
        int64_t i = 0;
        for (; i + 4 <= m; i += 4) tile<4>(kc, a + i * lda + kb, lda, b, cp + i * ldc, ldc, add, cols);
        const float* ai = a + i * lda + kb;
        float* ci = cp + i * ldc;
        switch (m - i) {
          case 3: tile<3>(kc, ai, lda, b, ci, ldc, add, cols); break;
          case 2: tile<2>(kc, ai, lda, b, ci, ldc, add, cols); break;
          case 1: tile<1>(kc, ai, lda, b, ci, ldc, add, cols); break;
          default: break;
        }
      }
    }
  });
}

}  // namespace ember::kernels::nn_rnn

#include "kernel_instances_nn_rnn.h"  // generated: Kernels<float>, Kernels<double>
