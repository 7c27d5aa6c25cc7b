// The fused recurrent layers' step ops (declarations/ops/nn_rnn.yaml) over
// kernels/nn_rnn.h: check that every matrix is a contiguous one of the expected shape and
// dtype (float32/float64; the packed product float32 only), then run the kernel in place.
#include "kernels/nn_rnn.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace rk = kernels::nn_rnn;

// Every tensor contiguous, 2-D, of gates's dtype (float32 or float64) and device, with
// n rows and width times H columns (H from gates's width over gates_width).
int64_t check_step(const char* op, const Tensor& gates, int64_t gates_width, std::initializer_list<const Tensor*> states,
                   std::initializer_list<const Tensor*> gate_likes = {}) {
  EMBER_CHECK(gates.dtype() == ScalarType::Float32 || gates.dtype() == ScalarType::Float64, NotImplemented, "\"", op,
              "\" not implemented for '", type_name(gates.dtype()), "'");
  EMBER_CHECK(gates.dim() == 2 && gates.sizes()[1] % gates_width == 0, Runtime, op, ": gates must be (n, ",
              gates_width, " * hidden), got ", sizes_str(gates.sizes()));
  const int64_t n = gates.sizes()[0], H = gates.sizes()[1] / gates_width;
  auto check = [&](const Tensor& t, int64_t width) {
    EMBER_CHECK(t.dtype() == gates.dtype(), Runtime, op, ": expected ", type_name(gates.dtype()), ", got ",
                type_name(t.dtype()));
    EMBER_CHECK(t.device() == gates.device(), Runtime, op, ": all tensors must be on one device");
    EMBER_CHECK(t.dim() == 2 && t.sizes()[0] == n && t.sizes()[1] == width, Runtime, op, ": expected a (", n, ", ",
                width, ") matrix, got ", sizes_str(t.sizes()));
    EMBER_CHECK(t.is_contiguous(), Runtime, op, ": every matrix must be contiguous");
  };
  check(gates, gates_width * H);
  for (const Tensor* t : states) check(*t, H);
  for (const Tensor* t : gate_likes) check(*t, gates_width * H);
  return H;
}

}  // namespace

Tensor _lstm_cell_forward(const Tensor& gates, const Tensor& c_prev, const Tensor& cell, const Tensor& tanh_cell,
                          const Tensor& hidden) {
  const int64_t H = check_step("_lstm_cell_forward", gates, 4, {&c_prev, &cell, &tanh_cell, &hidden});
  const int64_t n = gates.sizes()[0];
  PinnedWork work({&gates, &c_prev, &cell, &tanh_cell, &hidden}, n * H * 32);
  visit_float(gates.dtype(), [&](auto tag) {
    using T = decltype(tag);
    rk::Kernels<T>::lstm_forward(ptr<T>(gates), ptr<T>(c_prev), ptr<T>(cell), ptr<T>(tanh_cell), ptr<T>(hidden), n,
                                 H);
  });
  return gates;
}

Tensor _rnn_packed_mm(const Tensor& input, const Tensor& packed, const Tensor& dest, bool accumulate) {
  const char* op = "_rnn_packed_mm";
  for (const Tensor* t : {&input, &packed, &dest}) {
    EMBER_CHECK(t->dtype() == ScalarType::Float32, NotImplemented, "\"", op, "\" not implemented for '",
                type_name(t->dtype()), "'");
    EMBER_CHECK(t->device() == input.device(), Runtime, op, ": all tensors must be on one device");
    EMBER_CHECK(t->is_contiguous(), Runtime, op, ": every tensor must be contiguous");
  }
  EMBER_CHECK(input.dim() == 2, Runtime, op, ": input must be a matrix, got ", sizes_str(input.sizes()));
  const int64_t m = input.sizes()[0], k = input.sizes()[1];
  EMBER_CHECK(packed.dim() == 3 && packed.sizes()[1] == k && packed.sizes()[2] == rk::kPanel, Runtime, op,
              ": packed must be (panels, ", k, ", ", rk::kPanel, "), got ", sizes_str(packed.sizes()));
  EMBER_CHECK(dest.dim() == 2 && dest.sizes()[0] == m, Runtime, op, ": dest must have ", m, " rows, got ",
              sizes_str(dest.sizes()));
  const int64_t n = dest.sizes()[1];
  EMBER_CHECK((n + rk::kPanel - 1) / rk::kPanel == packed.sizes()[0], Runtime, op, ": ", packed.sizes()[0],
              " panels of ", rk::kPanel, " columns do not make ", n, " columns");
  PinnedWork work({&input, &packed, &dest}, m * n * k);
  rk::packed_mm(ptr<float>(input), k, ptr<float>(packed), ptr<float>(dest), n, m, n, k, accumulate);
  return dest;
}

Tensor _lstm_cell_backward(const Tensor& gates, const Tensor& c_prev, const Tensor& tanh_cell, const Tensor& grad_hidden,
                           const Tensor& grad_cell, const Tensor& grad_gates) {
  const int64_t H = check_step("_lstm_cell_backward", gates, 4, {&c_prev, &tanh_cell, &grad_hidden, &grad_cell},
                               {&grad_gates});
  const int64_t n = gates.sizes()[0];
  PinnedWork work({&gates, &c_prev, &tanh_cell, &grad_hidden, &grad_cell, &grad_gates}, n * H * 16);
  visit_float(gates.dtype(), [&](auto tag) {
    using T = decltype(tag);
    rk::Kernels<T>::lstm_backward(ptr<T>(gates), ptr<T>(c_prev), ptr<T>(tanh_cell), ptr<T>(grad_hidden),
                                  ptr<T>(grad_cell), ptr<T>(grad_gates), n, H);
  });
  return grad_gates;
}

Tensor _gru_cell_backward(const Tensor& gates, const Tensor& hidden_gates, const Tensor& h_prev,
                          const Tensor& grad_hidden, const Tensor& grad_gates, const Tensor& grad_hidden_gates,
                          const Tensor& grad_h_prev) {
  const int64_t H = check_step("_gru_cell_backward", gates, 3, {&h_prev, &grad_hidden, &grad_h_prev},
                               {&hidden_gates, &grad_gates, &grad_hidden_gates});
  const int64_t n = gates.sizes()[0];
  PinnedWork work({&gates, &hidden_gates, &h_prev, &grad_hidden, &grad_gates, &grad_hidden_gates, &grad_h_prev},
                  n * H * 12);
  visit_float(gates.dtype(), [&](auto tag) {
    using T = decltype(tag);
    rk::Kernels<T>::gru_backward(ptr<T>(gates), ptr<T>(hidden_gates), ptr<T>(h_prev), ptr<T>(grad_hidden),
                                 ptr<T>(grad_gates), ptr<T>(grad_hidden_gates), ptr<T>(grad_h_prev), n, H);
  });
  return grad_gates;
}

}  // namespace ember::ops
