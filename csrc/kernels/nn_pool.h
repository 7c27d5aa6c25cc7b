// Kernel family nn_pool (ops/nn_pool.cpp): pooling over planes (N * C of them), each
// (in_h, in_w) -> (out_h, out_w); planes are split across threads. T = float or double.
#pragma once
#include <cstdint>

namespace ember::kernels::nn_pool {

struct PoolGeometry {
  int64_t planes;
  int64_t in_h, in_w, out_h, out_w;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

template <class T>
struct Kernels {
  // indices: the flat in-plane position of each maximum (torch's: the first on ties, NaN wins).
  static void max_pool2d(const T* in, T* out, int64_t* indices, const PoolGeometry& g);
  // divisor: 0 for the window's size (counting padding when count_include_pad).
  static void avg_pool2d(const T* in, T* out, const PoolGeometry& g, bool count_include_pad, int64_t divisor);
  static void avg_pool2d_backward(const T* grad, T* gin, const PoolGeometry& g, bool count_include_pad,
                                  int64_t divisor);
  // Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
  static void adaptive_avg_pool2d(const T* in, T* out, const PoolGeometry& g);
  static void adaptive_avg_pool2d_backward(const T* grad, T* gin, const PoolGeometry& g);
  static void adaptive_max_pool2d(const T* in, T* out, int64_t* indices, const PoolGeometry& g);
};

}  // namespace ember::kernels::nn_pool
