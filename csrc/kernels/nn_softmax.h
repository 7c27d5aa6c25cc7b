// Kernel family nn_softmax (ops/nn_softmax.cpp): softmax and log_softmax over the middle
// dim of a contiguous (outer, n, inner) block. Like every nn_* family, a template over
// T = float or double whose instances the generator lists (the ops convert float16 and
// bfloat16 to float32 first); threads are split inside (core/parallel.h).
#pragma once
#include <cstdint>

namespace ember::kernels::nn_softmax {

template <class T>
struct Kernels {
  static void softmax(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool log);
  // The same over contiguous rows of float16 (bf16 false) or bfloat16 bits: each row is
  // converted into a buffer of T and back, so no converted copy of the tensor is made.
  static void softmax_half_rows(const uint16_t* in, uint16_t* out, int64_t rows, int64_t n, bool log, bool bf16);
  // gin = out * (g - sum(g * out)), or for log: g - exp(out) * sum(g).
  static void softmax_backward(const T* grad, const T* out, T* gin, int64_t outer, int64_t n, int64_t inner, bool log);
};

}  // namespace ember::kernels::nn_softmax
