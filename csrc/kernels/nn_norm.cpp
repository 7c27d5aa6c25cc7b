// The normalizations (see kernels/nn_norm.h). Statistics are two-pass (mean, then the mean
// squared deviation), in the lane sums of nn_math.h; batch norm's per-channel ones in
// double. Sums of the weight and bias gradients over rows go to one partial buffer per
// thread, added up at the end.
#include <algorithm>
#include <cmath>
#include <vector>
#include "core/parallel.h"
#include "kernels/nn_norm.h"
#include "kernels/nn_math.h"

namespace ember::kernels::nn_norm {

using namespace nn;  // nn_math.h
namespace {

// Runs f(slot, begin, end) over [0, items) in at most get_num_threads() slots, each a
// contiguous range, so that per-slot accumulators need no locks.
template <class F>
int64_t for_slots(int64_t items, int64_t work_per_item, F&& f) {
  int64_t slots = std::min<int64_t>(get_num_threads(), items);
  if (items * work_per_item < kGrainSize) slots = 1;
  slots = std::max<int64_t>(slots, 1);
  parallel_for(0, slots, 1, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) f(s, items * s / slots, items * (s + 1) / slots);
  });
  return slots;
}

template <class T>
T row_sq_dev(const T* x, int64_t n, T mean) {
  T acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const T d = x[i + l] - mean;
      acc[l] += d * d;
    }
  T s = 0;
  for (; i < n; ++i) s += (x[i] - mean) * (x[i] - mean);
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

}  // namespace

template <class T>
void Kernels<T>::layer_norm(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, int64_t rows, int64_t n, double eps,
                bool rms) {
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * n;
      T* yr = out + r * n;
      const T m = rms ? T(0) : lane_sum(xr, n) / T(n);
      const T var = rms ? lane_dot(xr, xr, n) / T(n) : row_sq_dev(xr, n, m) / T(n);
      const T rs = T(1) / std::sqrt(var + T(eps));
      if (!rms) mean[r] = m;
      rstd[r] = rs;
      if (w && b) {
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs * w[i] + b[i];
      } else if (w) {
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs * w[i];
      } else if (b) {
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs + b[i];
      } else {
        for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs;
      }
    }
  });
}

// Per row, with xhat = (x - mean) rstd and gw = g * w: gx = rstd (gw - mean(gw) - xhat
// mean(gw xhat)); rms has no mean to subtract: gx = rstd (gw - xhat mean(gw xhat)).
template <class T>
void Kernels<T>::layer_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, T* gw, T* gb,
                         int64_t rows, int64_t n, bool rms) {
  const int64_t threads = std::max<int64_t>(1, get_num_threads());
  std::vector<T> part_w(gw ? threads * n : 0, T(0)), part_b(gb ? threads * n : 0, T(0));
  for_slots(rows, n, [&](int64_t slot, int64_t r0, int64_t r1) {
    std::vector<T> xhat(n), gs(n);
    T* pw = gw ? part_w.data() + slot * n : nullptr;
    T* pb = gb ? part_b.data() + slot * n : nullptr;
    for (int64_t r = r0; r < r1; ++r) {
      const T* gr = g + r * n;
      const T* xr = x + r * n;
      const T m = rms ? T(0) : mean[r], rs = rstd[r];
      for (int64_t i = 0; i < n; ++i) xhat[i] = (xr[i] - m) * rs;
      if (pw)
        for (int64_t i = 0; i < n; ++i) pw[i] += gr[i] * xhat[i];
      if (pb)
        for (int64_t i = 0; i < n; ++i) pb[i] += gr[i];
      if (!gx) continue;
      const T* gsp = gr;
      if (w) {
        for (int64_t i = 0; i < n; ++i) gs[i] = gr[i] * w[i];
        gsp = gs.data();
      }
      const T a = lane_dot(gsp, xhat.data(), n) / T(n);
      T* o = gx + r * n;
      if (rms) {
        for (int64_t i = 0; i < n; ++i) o[i] = rs * (gsp[i] - xhat[i] * a);
      } else {
        const T bm = lane_sum(gsp, n) / T(n);
        for (int64_t i = 0; i < n; ++i) o[i] = rs * (gsp[i] - bm - xhat[i] * a);
      }
    }
  });
  for (int64_t t = 0; t < threads; ++t) {
    if (gw) {
      for (int64_t i = 0; i < n; ++i) gw[i] = (t ? gw[i] : T(0)) + part_w[t * n + i];
    }
    if (gb) {
      for (int64_t i = 0; i < n; ++i) gb[i] = (t ? gb[i] : T(0)) + part_b[t * n + i];
    }
  }
}

template <class T>
void Kernels<T>::channel_moments(const T* x, int64_t N, int64_t C, int64_t S, double* mean, double* var) {
  parallel_for(0, C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * S, 1)), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n) s += double(lane_sum(x + (n * C + c) * S, S));
      const double m = N * S > 0 ? s / double(N * S) : 0.0;
      double q = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T* xr = x + (n * C + c) * S;
        for (int64_t i = 0; i < S; ++i) q += (double(xr[i]) - m) * (double(xr[i]) - m);
      }
      mean[c] = m;
      var[c] = N * S > 0 ? q / double(N * S) : 0.0;
    }
  });
}

template <class T>
void Kernels<T>::channel_affine(const T* x, T* out, int64_t N, int64_t C, int64_t S, const double* mean, const double* invstd,
                    const T* w, const T* b) {
  parallel_for(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(S, 1)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % C;
      const T scale = T(invstd[c] * (w ? double(w[c]) : 1.0));
      const T shift = T((b ? double(b[c]) : 0.0) - mean[c] * invstd[c] * (w ? double(w[c]) : 1.0));
      const T* xr = x + p * S;
      T* yr = out + p * S;
      for (int64_t i = 0; i < S; ++i) yr[i] = xr[i] * scale + shift;
    }
  });
}

template <class T>
void Kernels<T>::batch_norm_backward(const T* g, const T* x, int64_t N, int64_t C, int64_t S, const double* mean,
                         const double* invstd, const T* w, bool train, T* gx, T* gw, T* gb) {
  parallel_for(0, C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * S, 1)), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double sum_g = 0, sum_gx = 0;
      const T m = T(mean[c]);
      for (int64_t n = 0; n < N; ++n) {
        const T* gr = g + (n * C + c) * S;
        const T* xr = x + (n * C + c) * S;
        T acc[kLanes] = {};
        int64_t i = 0;
        for (; i + kLanes <= S; i += kLanes)
          for (int l = 0; l < kLanes; ++l) acc[l] += gr[i + l] * (xr[i + l] - m);
        T s = 0;
        for (; i < S; ++i) s += gr[i] * (xr[i] - m);
        for (int l = 0; l < kLanes; ++l) s += acc[l];
        sum_gx += double(s);
        sum_g += double(lane_sum(gr, S));
      }
      const double is = invstd[c], wc = w ? double(w[c]) : 1.0;
      if (gw) gw[c] = T(sum_gx * is);
      if (gb) gb[c] = T(sum_g);
      if (!gx) continue;
      const double count = double(N * S);
      if (train) {
        const T k = T(is * is * sum_gx / count), gm = T(sum_g / count), scale = T(is * wc);
        for (int64_t n = 0; n < N; ++n) {
          const T* gr = g + (n * C + c) * S;
          const T* xr = x + (n * C + c) * S;
          T* o = gx + (n * C + c) * S;
          for (int64_t i = 0; i < S; ++i) o[i] = (gr[i] - gm - (xr[i] - m) * k) * scale;
        }
      } else {
        const T scale = T(is * wc);
        for (int64_t n = 0; n < N; ++n) {
          const T* gr = g + (n * C + c) * S;
          T* o = gx + (n * C + c) * S;
          for (int64_t i = 0; i < S; ++i) o[i] = gr[i] * scale;
        }
      }
    }
  });
}

template <class T>
void Kernels<T>::group_norm(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, int64_t N, int64_t C, int64_t S,
                int64_t groups, double eps) {
  const int64_t cg = C / groups, len = cg * S;
  parallel_for(0, N * groups, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len, 1)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const T* xr = x + q * len;
      T* yr = out + q * len;
      const T m = len ? lane_sum(xr, len) / T(len) : T(0);
      const T var = len ? row_sq_dev(xr, len, m) / T(len) : T(0);
      const T rs = T(1) / std::sqrt(var + T(eps));
      mean[q] = m;
      rstd[q] = rs;
      const int64_t c0 = (q % groups) * cg;
      for (int64_t k = 0; k < cg; ++k) {
        const T scale = rs * (w ? w[c0 + k] : T(1));
        const T shift = (b ? b[c0 + k] : T(0)) - m * scale;
        const T* xs = xr + k * S;
        T* ys = yr + k * S;
        for (int64_t i = 0; i < S; ++i) ys[i] = xs[i] * scale + shift;
      }
    }
  });
}

// Per (n, group), with gs = g * w[c] and D elements: gx = rstd (gs - mean(gs) - xhat
// mean(gs xhat)); the channel sums of g and g * xhat over n give gw and gb.
template <class T>
void Kernels<T>::group_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, T* gw, T* gb,
                         int64_t N, int64_t C, int64_t S, int64_t groups) {
  const int64_t cg = C / groups, len = cg * S;
  std::vector<T> dsum(N * C), gsum(N * C);  // per (n, c): sum g * xhat, sum g
  parallel_for(0, N * groups, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len, 1)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / groups, c0 = (q % groups) * cg;
      const T m = mean[q], rs = rstd[q];
      T a = 0, bsum = 0;  // sum(gs * xhat), sum(gs)
      for (int64_t k = 0; k < cg; ++k) {
        const T* gr = g + q * len + k * S;
        const T* xr = x + q * len + k * S;
        T acc[kLanes] = {};
        int64_t i = 0;
        for (; i + kLanes <= S; i += kLanes)
          for (int l = 0; l < kLanes; ++l) acc[l] += gr[i + l] * (xr[i + l] - m);
        T s = 0;
        for (; i < S; ++i) s += gr[i] * (xr[i] - m);
        for (int l = 0; l < kLanes; ++l) s += acc[l];
        const T sg = lane_sum(gr, S), sgx = s * rs;
        dsum[n * C + c0 + k] = sgx;
        gsum[n * C + c0 + k] = sg;
        const T wc = w ? w[c0 + k] : T(1);
        a += sgx * wc;
        bsum += sg * wc;
      }
      if (!gx) continue;
      const T am = len ? a / T(len) : T(0), bm = len ? bsum / T(len) : T(0);
      for (int64_t k = 0; k < cg; ++k) {
        const T wc = w ? w[c0 + k] : T(1);
        const T* gr = g + q * len + k * S;
        const T* xr = x + q * len + k * S;
        T* o = gx + q * len + k * S;
        for (int64_t i = 0; i < S; ++i) o[i] = rs * (gr[i] * wc - bm - (xr[i] - m) * rs * am);
      }
    }
  });
  for (int64_t c = 0; c < C; ++c) {
    T sw = 0, sb = 0;
    for (int64_t n = 0; n < N; ++n) sw += dsum[n * C + c], sb += gsum[n * C + c];
    if (gw) gw[c] = sw;
    if (gb) gb[c] = sb;
  }
}


}  // namespace ember::kernels::nn_norm

#include "kernel_instances_nn_norm.h"  // generated: Kernels<float>, Kernels<double>
