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

  // cross_entropy with class-index targets over contiguous rows x (rows, C) (Note [Fused
  // cross_entropy], kernels/nn_softmax.cpp): per row, lse[r] = log(sum(e^x)) and loss[r] =
  // (1 - eps) w[t] (lse - x[t]) + (eps / C) sum_c w[c] (lse - x[c]), t = target[r]; a row
  // whose target is ignore_index gets 0 for both. w null: weights 1 (wsum = C). The targets
  // are checked by the caller (in [0, C) or ignore_index).
  static void cross_entropy(const T* x, int64_t rows, int64_t C, const int64_t* target, const T* w, T wsum,
                            int64_t ignore_index, double eps, T* loss, T* lse);
  // Its gradient: gx = gr * ((1 - eps) w[t] + eps wsum / C) e^(x - lse) - gr eps / C w,
  // minus gr (1 - eps) w[t] at the target, gr = g[r] (elementwise) or g[0] * scale; zero
  // rows for ignored targets.
  static void cross_entropy_backward(const T* x, const T* lse, int64_t rows, int64_t C, const int64_t* target,
                                     const T* w, T wsum, int64_t ignore_index, double eps, const T* g,
                                     bool elementwise, T scale, T* gx);
};

}  // namespace ember::kernels::nn_softmax
