// Kernel family nn_conv (ops/nn_conv.cpp): the three products of a convolution, in the
// geometry of a plain (not transposed) convolution: x (N, Cx, Hx, Wx) -> y (N, Cy, Hy, Wy)
// with w (Cy, Cx / groups, kh, kw). A transposed convolution runs conv_backward_input as
// its forward (see ops/nn_conv.cpp). Per sample and group: im2col in column blocks that
// stay in cache, then a gemm (OpenBLAS, one thread each; ember splits the blocks across
// its threads). T = float or double; the inputs are contiguous.
#pragma once
#include <cstdint>

namespace ember::kernels::nn_conv {

struct Conv {
  int64_t N, Cx, Hx, Wx, Cy, Hy, Wy, kh, kw, sh, sw, ph, pw, dh, dw, groups;
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
