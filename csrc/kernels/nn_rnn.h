// Kernel family nn_rnn (ops/nn_rnn.cpp), for the fused recurrent layers: the pointwise part
// of one LSTM step's forward and of one LSTM or GRU step's backward, and the per-step
// product with a pre-packed weight. Every matrix is contiguous with n rows; H is the
// hidden size (gates are 4H or 3H wide). Rows (panels for the product) are split across
// ember's threads.
#pragma once
#include <cstdint>

namespace ember::kernels::nn_rnn {

template <class T>
struct Kernels {
  // Activates the gates (n, 4H) in place (sigmoid of i, f, o; tanh of g) and writes
  // cell = f c_prev + i g, tanh_cell and hidden = o tanh_cell.
  static void lstm_forward(T* gates, const T* c_prev, T* cell, T* tanh_cell, T* hidden, int64_t n, int64_t H);
  // From the activated gates, c_prev, tanh_cell and dh: dgates (pre-activation) and dc
  // (in: from later steps; out: the gradient of c_prev).
  static void lstm_backward(const T* gates, const T* c_prev, const T* tanh_cell, const T* dh, T* dc, T* dgates,
                            int64_t n, int64_t H);
  // dgates (input side), dgh (hidden side) and dh z into dh_prev.
  static void gru_backward(const T* gates, const T* hidden_gates, const T* h_prev, const T* dh, T* dgates, T* dgh,
                           T* dh_prev, int64_t n, int64_t H);
};

// The weight of the per-step products, packed: panels of kPanel columns, each (K, kPanel)
// row-major (the last one padded with zeros), so one panel's rows are read in order.
constexpr int64_t kPanel = 24;

// c (m, n) = a (m, k) packed (+ c when accumulate); a's and c's rows are lda / ldc apart.
// Made for few rows (a batch): each panel's block of rows stays in L1 while every
// 4-row block of a passes over it.
void packed_mm(const float* a, int64_t lda, const float* packed, float* c, int64_t ldc, int64_t m, int64_t n,
               int64_t k, bool accumulate);

}  // namespace ember::kernels::nn_rnn
