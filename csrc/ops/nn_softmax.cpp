// softmax and log_softmax and their gradients (declarations/ops/nn_softmax.yaml) over
// kernels/nn_softmax.h: the dim becomes the middle of a contiguous (outer, n, inner) block.
#include "kernels/nn_softmax.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_softmax;

Tensor softmax_forward(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  Tensor x = dtype ? as_dtype(self, *dtype) : self;
  check_floating(x, log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl");
  const int64_t d = wrap_dim(dim, x.dim());
  const ScalarType ct = compute_dtype(x.dtype());
  const bool half = ct != x.dtype();
  if (half && x.numel() > 0 && (x.dim() == 0 || d == x.dim() - 1)) {  // rows converted inside the kernel
    Tensor xh = dense(x, x.dtype());
    Tensor out = empty_tensor(x.sizes(), x.dtype());
    const int64_t n = x.dim() ? x.sizes()[d] : 1;
    PinnedWork work({&xh, &out}, x.numel());
    nk::Kernels<float>::softmax_half_rows(ptr<uint16_t>(xh), ptr<uint16_t>(out), x.numel() / n, n, log,
                                          x.dtype() == ScalarType::BFloat16);
    return out;
  }
  Tensor xc = dense(x, ct);
  Tensor out = empty_tensor(x.sizes(), ct);
  if (x.numel() > 0) {
    const int64_t n = x.dim() ? x.sizes()[d] : 1;
    const int64_t outer = x.dim() ? product(x.sizes(), 0, d) : 1, inner = x.dim() ? product(x.sizes(), d + 1) : 1;
    PinnedWork work({&xc, &out}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::softmax(ptr<T>(xc), ptr<T>(out), outer, n, inner, log);
    });
  }
  return as_dtype(out, x.dtype());
}

Tensor softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, ScalarType input_dtype,
                             bool log) {
  const char* op = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  check_floating(output, op);
  EMBER_CHECK(grad_output.sizes() == output.sizes(), Runtime, op, "(): grad_output of size ",
              sizes_str(grad_output.sizes()), " does not match output of size ", sizes_str(output.sizes()));
  const int64_t d = wrap_dim(dim, output.dim());
  const ScalarType ct = compute_dtype(output.dtype());
  Tensor g = dense(grad_output, ct), y = dense(output, ct);
  Tensor gin = empty_tensor(output.sizes(), ct);
  if (output.numel() > 0) {
    const int64_t n = output.dim() ? output.sizes()[d] : 1;
    const int64_t outer = output.dim() ? product(output.sizes(), 0, d) : 1;
    const int64_t inner = output.dim() ? product(output.sizes(), d + 1) : 1;
    PinnedWork work({&g, &y, &gin}, output.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::softmax_backward(ptr<T>(g), ptr<T>(y), ptr<T>(gin), outer, n, inner, log);
    });
  }
  return as_dtype(gin, is_floating(input_dtype) ? input_dtype : output.dtype());
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_forward(self, dim, dtype, false);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_forward(self, dim, dtype, true);
}

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, ScalarType input_dtype) {
  return softmax_backward_data(grad_output, output, dim, input_dtype, false);
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  ScalarType input_dtype) {
  return softmax_backward_data(grad_output, output, dim, input_dtype, true);
}

}  // namespace ember::ops
