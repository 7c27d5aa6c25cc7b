// Kernel family nn_loss (ops/nn_loss.cpp): the negative log likelihood loss, the one loss
// with a loop of its own (the others compose elementwise ops). The input is viewed as
// (M, C, S) and the targets as (M, S), both contiguous; T = float or double.
#pragma once
#include <cstdint>

namespace ember::kernels::nn_loss {

struct NllShape {
  int64_t M, C, S;
};

// The targets: int64 or uint8 class indices; `ignore_index` ones are skipped, others
// outside [0, C) raise IndexError ("Target 5 is out of bounds.").
struct Targets {
  const void* data;
  bool bytes;  // uint8, else int64
  int64_t ignore_index;
};

template <class T>
struct Kernels {
  // out[i] = -w[t] * x[m, t, s] for each target t = target[i] (reduction none; out is
  // zeroed by the caller, ignored targets stay 0). w null: all weights 1.
  static void nll_loss(const NllShape& s, const T* x, const Targets& t, const T* w, T* out);
  // The sum of those terms (reduction sum and mean); *weights receives the sum of the
  // targets' weights, the mean's divisor.
  static double nll_loss_sum(const NllShape& s, const T* x, const Targets& t, const T* w, double* weights);
  // The sum of the weights of the targets not ignored (their count when w is null).
  static double weight_sum(const NllShape& s, const Targets& t, const T* w);
  // gin (zeroed by the caller) at each target's class: -w[t] * g[i] per target
  // (elementwise), else -w[t] * g[0] * scale.
  static void nll_loss_backward(const NllShape& s, const Targets& t, const T* w, const T* g, bool elementwise,
                                T scale, T* gin);
};

}  // namespace ember::kernels::nn_loss
