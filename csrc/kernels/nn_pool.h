// Kernel family nn_pool (ops/nn_pool.cpp): pooling over planes (N * C of them), each
// (in D, H, W) -> (out D, H, W); a 2-d pool is a 3-d one of depth 1 (kernel 1, stride 1,
// padding 0). Planes are split across threads. With channels_last, a plane is a sample
// (D, H, W, channels) whose channels are innermost: each window is walked once for all
// of them, a contiguous run per position; indices stay flat in-plane positions (torch's). T = float or double; the max and average
// kernels are also instantiated for the integer types torch pools (see nn_pool.cpp).
#pragma once
#include <cstdint>

namespace ember::kernels::nn_pool {

struct PoolGeometry {
  int64_t planes;
  int64_t in[3], out[3];  // (D, H, W)
  int64_t k[3], s[3], p[3], d[3];
  bool channels_last = false;
  int64_t channels = 1;  // with channels_last: per plane, innermost
};

template <class T>
struct Kernels {
  // indices: the flat in-plane position of each maximum (torch's: the first on ties, NaN wins).
  static void max_pool(const T* in, T* out, int64_t* indices, const PoolGeometry& g);
  // divisor: 0 for the window's size (counting padding when count_include_pad). Integers
  // sum with wrapping and divide truncating, as torch's int64 average does.
  static void avg_pool(const T* in, T* out, const PoolGeometry& g, bool count_include_pad, int64_t divisor);
  static void avg_pool_backward(const T* grad, T* gin, const PoolGeometry& g, bool count_include_pad,
                                int64_t divisor);
  // Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
  static void adaptive_avg_pool(const T* in, T* out, const PoolGeometry& g);
  static void adaptive_avg_pool_backward(const T* grad, T* gin, const PoolGeometry& g);
  static void adaptive_max_pool(const T* in, T* out, int64_t* indices, const PoolGeometry& g);
};

}  // namespace ember::kernels::nn_pool
