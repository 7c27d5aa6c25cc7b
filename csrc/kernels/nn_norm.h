// Kernel family nn_norm (ops/nn_norm.cpp): layer, RMS, batch and group normalization on
// contiguous memory. T = float or double.
#pragma once
#include <cstdint>

namespace ember::kernels::nn_norm {

template <class T>
struct Kernels {
  // Rows of length n (layer_norm, rms_norm): out = (x - mean) * rstd * w + b, with
  // mean/rstd written per row; rms: mean is not used (x * rstd * w). w and b may be null.
  static void layer_norm(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, int64_t rows, int64_t n,
                         double eps, bool rms);
  // gx per row; gw/gb (length n, may be null) summed over the rows.
  static void layer_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, T* gw,
                                  T* gb, int64_t rows, int64_t n, bool rms);
  // Channels of (N, C, S): per-channel statistics over N and S (mean, var biased).
  static void channel_moments(const T* x, int64_t N, int64_t C, int64_t S, double* mean, double* var);
  // out = (x - mean[c]) * invstd[c] * w[c] + b[c] (w, b may be null).
  static void channel_affine(const T* x, T* out, int64_t N, int64_t C, int64_t S, const double* mean,
                             const double* invstd, const T* w, const T* b);
  // Batch norm backward: sums per channel of g and g * (x - mean); then, for train,
  // gx = (g - sum_g / n - (x - mean) invstd^2 sum_gx / n) invstd w, else gx = g invstd w.
  static void batch_norm_backward(const T* g, const T* x, int64_t N, int64_t C, int64_t S, const double* mean,
                                  const double* invstd, const T* w, bool train, T* gx, T* gw, T* gb);
  // Group norm of (N, C, S) with `groups` groups: mean/rstd per (n, group).
  static void group_norm(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, int64_t N, int64_t C,
                         int64_t S, int64_t groups, double eps);
  static void group_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, T* gw,
                                  T* gb, int64_t N, int64_t C, int64_t S, int64_t groups);
};

}  // namespace ember::kernels::nn_norm
