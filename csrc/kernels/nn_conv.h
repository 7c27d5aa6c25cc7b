// Kernel family nn_conv (ops/nn_conv.cpp): the three products of a convolution, in the
// geometry of a plain (not transposed) convolution: x (N, Cx, *xs) -> y (N, Cy, *ys) with
// w (Cy, Cx / groups, *k), the spatial dims always three (depth, height, width): a 1-d or
// 2-d convolution has leading spatial dims of size 1 (kernel 1, stride 1, no padding). A
// transposed convolution runs conv_backward_input as its forward (see ops/nn_conv.cpp).
// Per sample and group: im2col in column blocks that stay in cache, then a gemm (OpenBLAS,
// one thread each; ember splits the blocks across its threads). T = float or double, or
// int64 for the integer convolutions (instantiated in kernels/nn_conv.cpp); the inputs are
// contiguous.
//
// With channels_last, x and y are (N, *xs, Cx) and (N, *ys, Cy) in memory and w is
// (Cy, *k, Cx / groups): a window's column is then kernel-tap runs of channels, each one
// contiguous copy, and the gemms write y's rows directly in that layout (no transposing
// copy of the result, which the row-major path pays for a channels_last result).
#pragma once
#include <cstdint>

namespace ember::kernels::nn_conv {

constexpr int kSpatial = 3;

struct Conv {
  int64_t N, Cx, Cy, groups;
  int64_t xs[kSpatial], ys[kSpatial];               // image and output sizes
  int64_t k[kSpatial], s[kSpatial], p[kSpatial], d[kSpatial];  // kernel, stride, padding, dilation
  bool channels_last = false;  // x, y and w with channels innermost (see above)
};

template <class T>
struct Kernels {
  // y = conv(x, w) (+ b over Cy; b may be null)
  static void conv_forward(const Conv& c, const T* x, const T* w, const T* b, T* y);
  // x = conv^T(y, w) (+ b over Cx): the gradient of conv's input, every element written.
  static void conv_backward_input(const Conv& c, const T* y, const T* w, const T* b, T* x);
  // w = the gradient of conv's weight for gy = y, every element written.
  static void conv_backward_weight(const Conv& c, const T* x, const T* y, T* w);
};

}  // namespace ember::kernels::nn_conv
