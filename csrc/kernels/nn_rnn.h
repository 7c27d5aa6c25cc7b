// Kernel family nn_rnn (ops/nn_rnn.cpp): the pointwise part of one LSTM or GRU step's backward, for
// the fused recurrent layers. Every matrix is contiguous with n rows; H is the hidden
// size (gates are 4H or 3H wide). Rows are split across ember's threads.
#pragma once
#include <cstdint>

namespace ember::kernels::nn_rnn {

template <class T>
struct Kernels {
  // From the activated gates, c_prev, tanh_cell and dh: dgates (pre-activation) and dc
  // (in: from later steps; out: the gradient of c_prev).
  static void lstm_backward(const T* gates, const T* c_prev, const T* tanh_cell, const T* dh, T* dc, T* dgates,
                            int64_t n, int64_t H);
  // dgates (input side), dgh (hidden side) and dh z into dh_prev.
  static void gru_backward(const T* gates, const T* hidden_gates, const T* h_prev, const T* dh, T* dgates, T* dgh,
                           T* dh_prev, int64_t n, int64_t H);
};

}  // namespace ember::kernels::nn_rnn
