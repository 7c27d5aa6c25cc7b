// Kernels of the nn ops (csrc/ops/nn.cpp): softmax rows, im2col/col2im for convolution,
// pooling windows and the normalizations. Each is a template over T = float or double,
// instantiated in its own translation unit (nn_softmax.cpp, nn_conv.cpp, nn_pool.cpp,
// nn_norm.cpp); the op converts float16/bfloat16 to float32 first. Inputs are
// contiguous (the op makes them so); threads are split inside (core/parallel.h).
#pragma once
#include <cstdint>

namespace ember::kernels::nn {

// ---- softmax over the middle dim of a contiguous (outer, n, inner) block ----
template <class T>
void softmax(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool log);
// gin = out * (g - sum(g * out)), or for log: g - exp(out) * sum(g).
template <class T>
void softmax_backward(const T* grad, const T* out, T* gin, int64_t outer, int64_t n, int64_t inner, bool log);

// ---- convolution: one image (C, H, W) and the column matrix of its windows ----
struct ConvGeometry {
  int64_t channels;             // of the image (per group)
  int64_t height, width;        // image
  int64_t kh, kw;               // kernel
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t out_h, out_w;         // output positions
};
// cols[(c * kh + i) * kw + j][p - p0] = image[c][oy * sh - ph + i * dh][ox * sw - pw + j * dw]
// (0 outside) for output positions p = oy * out_w + ox in [p0, p1); cols has p1 - p0 columns.
template <class T>
void im2col(const T* image, T* cols, const ConvGeometry& g, int64_t p0, int64_t p1);
// The adjoint: image += cols scattered back (image must be zeroed by the caller).
template <class T>
void col2im(const T* cols, T* image, const ConvGeometry& g, int64_t p0, int64_t p1);

// The three products of a convolution, in the geometry of a plain (not transposed)
// convolution: x (N, Cx, Hx, Wx) -> y (N, Cy, Hy, Wy) with w (Cy, Cx / groups, kh, kw).
// A transposed convolution runs conv_backward_input as its forward (see ops/nn.cpp).
// Per sample and group: im2col in column blocks that stay in cache, then a gemm
// (OpenBLAS, one thread each; ember splits the blocks across its threads).
struct Conv {
  int64_t N, Cx, Hx, Wx, Cy, Hy, Wy, kh, kw, sh, sw, ph, pw, dh, dw, groups;
};
// y = conv(x, w) (+ b over Cy; b may be null)
template <class T>
void conv_forward(const Conv& c, const T* x, const T* w, const T* b, T* y);
// x = conv^T(y, w) (+ b over Cx): the gradient of conv's input, every element written.
template <class T>
void conv_backward_input(const Conv& c, const T* y, const T* w, const T* b, T* x);
// w = the gradient of conv's weight for gy = y, every element written.
template <class T>
void conv_backward_weight(const Conv& c, const T* x, const T* y, T* w);

// ---- pooling over planes (N * C of them), each (in_h, in_w) -> (out_h, out_w) ----
struct PoolGeometry {
  int64_t planes;
  int64_t in_h, in_w, out_h, out_w;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};
// indices: the flat in-plane position of each maximum (torch's: the first on ties, NaN wins).
template <class T>
void max_pool2d(const T* in, T* out, int64_t* indices, const PoolGeometry& g);
// divisor: 0 for the window's size (counting padding when count_include_pad).
template <class T>
void avg_pool2d(const T* in, T* out, const PoolGeometry& g, bool count_include_pad, int64_t divisor);
template <class T>
void avg_pool2d_backward(const T* grad, T* gin, const PoolGeometry& g, bool count_include_pad, int64_t divisor);
// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
template <class T>
void adaptive_avg_pool2d(const T* in, T* out, const PoolGeometry& g);
template <class T>
void adaptive_avg_pool2d_backward(const T* grad, T* gin, const PoolGeometry& g);
template <class T>
void adaptive_max_pool2d(const T* in, T* out, int64_t* indices, const PoolGeometry& g);

// ---- normalization ----
// Rows of length n (layer_norm, rms_norm): out = (x - mean) * rstd * w + b, with
// mean/rstd written per row; rms: mean is not used (x * rstd * w). w and b may be null.
template <class T>
void layer_norm(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, int64_t rows, int64_t n, double eps,
                bool rms);
// gx per row; gw/gb (length n, may be null) summed over the rows.
template <class T>
void layer_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, T* gw, T* gb,
                         int64_t rows, int64_t n, bool rms);
// Channels of (N, C, S): per-channel statistics over N and S (mean, var biased).
template <class T>
void channel_moments(const T* x, int64_t N, int64_t C, int64_t S, double* mean, double* var);
// out = (x - mean[c]) * invstd[c] * w[c] + b[c] (w, b may be null).
template <class T>
void channel_affine(const T* x, T* out, int64_t N, int64_t C, int64_t S, const double* mean, const double* invstd,
                    const T* w, const T* b);
// Batch norm backward: sums per channel of g and g * (x - mean); then, for train,
// gx = (g - sum_g / n - (x - mean) invstd^2 sum_gx / n) invstd w, else gx = g invstd w.
template <class T>
void batch_norm_backward(const T* g, const T* x, int64_t N, int64_t C, int64_t S, const double* mean,
                         const double* invstd, const T* w, bool train, T* gx, T* gw, T* gb);
// Group norm of (N, C, S) with `groups` groups: mean/rstd per (n, group).
template <class T>
void group_norm(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, int64_t N, int64_t C, int64_t S,
                int64_t groups, double eps);
template <class T>
void group_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, T* gw, T* gb,
                         int64_t N, int64_t C, int64_t S, int64_t groups);

}  // namespace ember::kernels::nn
