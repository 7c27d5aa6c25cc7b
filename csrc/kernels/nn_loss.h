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
// ctc_loss's operands: log_probs (T, N, C) contiguous; sample n's targets are
// targets[offset[n] : offset[n] + target_length[n]], int64 in [0, C); its log_alpha is
// (T, 2 * max_target + 1) of the (N, T, 2 * max_target + 1) tensor.
struct Ctc {
  int64_t T, N, C, max_target, blank;
  const int64_t* targets;
  const int64_t* offset;
  const int64_t* input_length;
  const int64_t* target_length;
};

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
  // The negative log likelihood of each sample's targets (nll, N) by the forward
  // (alpha) recursion in log space, keeping its log_alpha; samples split across threads.
  static void ctc_loss(const Ctc& c, const T* lp, T* nll, T* log_alpha);
  // The gradient of nll with respect to log_probs (gin, T x N x C, written whole) as torch
  // computes it, exp(lp) - exp(log(sum of alpha * beta over the label's positions) + nll
  // - lp), times g[n]; zero past each input length, and for a sample whose nll is
  // infinite when zero_infinity.
  static void ctc_loss_backward(const Ctc& c, const T* g, const T* lp, const T* nll, const T* log_alpha,
                                bool zero_infinity, T* gin);
};

}  // namespace ember::kernels::nn_loss
