// The nn helpers of the backward formulas (see formulas.h, section nn): loss gradients
// and the second derivatives of softmax and the activations, written with ember::api so
// that they record under create_graph as well.
#include <cmath>
#include "autograd/formulas.h"
#include "autograd/meta.h"
#include "autograd/record.h"
#include "ops/geometry.h"
#include "ops/internal.h"

namespace ember::api {
namespace {

// reduction: 0 none, 1 mean, 2 sum (torch's enum). The gradient of a reduced loss is a
// 0-dim tensor; mean spreads it over the `count` pointwise terms.
Tensor reduced_grad(const Tensor& grad, int64_t reduction, int64_t count) {
  return reduction == 1 ? grad / double(count) : grad;
}

Tensor sum_keep(const Tensor& t, int64_t dim) {
  std::vector<int64_t> d{dim};
  return sum_dim_IntList(t, IntList(d), true, std::nullopt);
}

Tensor with_weight(const Tensor& t, const Tensor& weight) { return weight.defined() ? t * weight : t; }

constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi)

}  // namespace

// ---- softmax: y = o * (g - sum(g o)) and y = g - exp(o) sum(g), differentiated ----

Tensor softmax_backward_output_grad(const Tensor& grad, const Tensor& grad_output, const Tensor& output, int64_t dim) {
  Tensor s = sum_keep(grad_output * output, dim);
  return grad * (grad_output - s) - grad_output * sum_keep(grad * output, dim);
}

Tensor log_softmax_backward_grad_grad(const Tensor& grad, const Tensor& output, int64_t dim) {
  return grad - sum_keep(grad * exp(output), dim);
}

Tensor log_softmax_backward_output_grad(const Tensor& grad, const Tensor& grad_output, const Tensor& output,
                                        int64_t dim) {
  return -(grad * exp(output) * sum_keep(grad_output, dim));
}

// ---- losses ----

// _cross_entropy_loss's gradient: its native backward (one pass over the logits, from the
// saved log-sum-exp), or, when it must record (create_graph), log_softmax's backward of
// nll_loss's and the label smoothing term's, all ember::api ops, so double backward and
// forward-mode AD (which transposes this) work. The smoothing term's per-row factor
// (0 for ignored targets; 1 / sum of the targets' weights for the mean) is a constant.
Tensor cross_entropy_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                               int64_t reduction, int64_t ignore_index, double label_smoothing, const Tensor& lse) {
  if (!autograd::needs_record(grad, self, weight))
    return _cross_entropy_loss_backward(grad, self, target, weight, reduction, ignore_index, label_smoothing, lse);
  const int64_t cdim = self.dim() == 1 ? 0 : 1;
  Tensor logp = log_softmax(self, cdim, std::nullopt);
  Tensor dlogp = _nll_loss_backward(grad, logp, target, weight, reduction, ignore_index);
  if (label_smoothing > 0.0) {
    const Tensor t = ops::contiguous(target, MemoryFormat::Contiguous);
    const Tensor w = weight.defined()
                         ? ops::contiguous(ops::as_dtype(autograd::detach(weight), ScalarType::Float64),
                                           MemoryFormat::Contiguous)
                         : Tensor();
    const int64_t* tp = reinterpret_cast<const int64_t*>(t.data());
    const double* wp = w.defined() ? reinterpret_cast<const double*>(w.data()) : nullptr;
    Tensor coef = empty_tensor(target.sizes(), ScalarType::Float64);
    double* cp = reinterpret_cast<double*>(coef.data());
    double total = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const bool kept = tp[i] != ignore_index;
      cp[i] = kept ? 1.0 : 0.0;
      if (kept) total += wp ? wp[tp[i]] : 1.0;
    }
    if (reduction == 1)
      for (int64_t i = 0; i < t.numel(); ++i) cp[i] /= total;
    Tensor gr = grad * ops::as_dtype(coef, grad.dtype());
    if (self.dim() > 1) gr = unsqueeze(gr, cdim);
    Tensor ws = weight;
    if (ws.defined() && self.dim() > 1) {
      Dims shape(size_t(self.dim()), 1);
      shape[1] = self.sizes()[1];
      ws = reshape(ws, IntList(shape));
    }
    const double per = label_smoothing / double(self.sizes()[cdim]);
    Tensor smooth = ws.defined() ? gr * ws * per : gr * per;
    dlogp = dlogp * (1.0 - label_smoothing) - smooth;
  }
  return _log_softmax_backward_data(dlogp, logp, cdim, self.dtype());
}

Tensor mse_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
  Tensor d = self - target;
  return d * (reduced_grad(grad, reduction, d.numel()) * 2.0);
}

Tensor smooth_l1_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                           double beta) {
  Tensor d = self - target;
  Tensor g = reduced_grad(grad, reduction, d.numel());
  if (beta == 0.0) return sign(d) * g;
  return clamp(d / beta, Scalar(-1.0), Scalar(1.0)) * g;
}

Tensor huber_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  Tensor d = self - target;
  return clamp(d, Scalar(-delta), Scalar(delta)) * reduced_grad(grad, reduction, d.numel());
}

// d/dx of -(t log x + (1 - t) log(1 - x)) as torch writes it: (x - t) / max(x (1 - x), 1e-12).
Tensor binary_cross_entropy_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                                 int64_t reduction) {
  Tensor denom = clamp_min(self * (1.0 - self), scalar(1e-12, self));
  Tensor g = reduced_grad(grad, reduction, self.numel());
  return with_weight((self - target) / denom * g, weight);
}

Tensor binary_cross_entropy_target_grad(const Tensor& grad, const Tensor& self, const Tensor& target,
                                        const Tensor& weight, int64_t reduction) {
  Tensor lo = scalar(-100.0, self);
  Tensor d = clamp_min(log1p(-self), lo) - clamp_min(log(self), lo);
  return with_weight(d * reduced_grad(grad, reduction, self.numel()), weight);
}

// loss = (1 - t) x + (1 + (p - 1) t) softplus(-x): d/dx = (1 + (p - 1) t) sigmoid(x) - p t.
Tensor bce_with_logits_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                            const Tensor& pos_weight, int64_t reduction) {
  Tensor d;
  if (pos_weight.defined()) {
    Tensor pt = pos_weight * target;
    d = (pt + 1.0 - target) * sigmoid(self) - pt;
  } else {
    d = sigmoid(self) - target;
  }
  return with_weight(d * reduced_grad(grad, reduction, d.numel()), weight);
}

// d/dt = -x - (p - 1) log(sigmoid(x)).
Tensor bce_with_logits_target_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                                   const Tensor& pos_weight, int64_t reduction) {
  Tensor d = -self;
  if (pos_weight.defined()) d = d - (pos_weight - 1.0) * log_sigmoid(self);
  d = d + zeros_like(target, std::nullopt, std::nullopt);  // the broadcast shape of the loss
  return with_weight(d * reduced_grad(grad, reduction, d.numel()), weight);
}

// ---- activations: grad * grad_output * f''(x) ----

Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            const std::string& approximate) {
  Tensor x2 = self * self;
  if (approximate == "tanh") {
    const double k = 0.7978845608028654, c = 0.044715;  // sqrt(2 / pi)
    Tensor t = tanh((self + x2 * self * c) * k);
    Tensor du = (x2 * (3.0 * c) + 1.0) * k;
    Tensor d2u = self * (6.0 * k * c);
    Tensor sech2 = 1.0 - t * t;
    Tensor f2 = sech2 * (du + self * 0.5 * (d2u - 2.0 * t * du * du));
    return grad * grad_output * f2;
  }
  Tensor pdf = exp(x2 * -0.5) * kInvSqrt2Pi;
  return grad * grad_output * pdf * (2.0 - x2);
}

Tensor silu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = sigmoid(self);
  return grad * grad_output * s * (1.0 - s) * (self * (1.0 - 2.0 * s) + 2.0);
}

Tensor mish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = sigmoid(self);
  Tensor t = tanh(softplus(self, Scalar(1.0), Scalar(20.0)));
  Tensor sech2 = 1.0 - t * t;
  return grad * grad_output * sech2 * s * (self * (1.0 - s) - 2.0 * self * t * s + 2.0);
}

Tensor softplus_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& beta,
                                const Scalar& threshold) {
  const double b = beta.to_double();
  Tensor bx = self * b;
  Tensor s = sigmoid(bx);
  Tensor f2 = s * (1.0 - s) * b;
  return masked_grad(grad * grad_output * f2, le_Tensor(bx, scalar(threshold.to_double(), bx)));
}

Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& alpha,
                           const Scalar& scale, const Scalar& input_scale) {
  const double a = alpha.to_double(), sc = scale.to_double(), is = input_scale.to_double();
  Tensor f2 = exp(self * is) * (a * sc * is * is);
  return masked_grad(grad * grad_output * f2, le_Tensor(self, scalar(0.0, self)));
}

Tensor hardswish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor inside = logical_and(gt_Tensor(self, scalar(-3.0, self)), lt_Tensor(self, scalar(3.0, self)));
  return masked_grad(grad * grad_output / 3.0, inside);
}

Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = sigmoid(self);
  return -(grad * grad_output * s * (1.0 - s));
}

// ---- convolution, pooling, embedding ----

Tensor conv_bias_grad(const Tensor& grad) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < grad.dim(); ++d) dims.push_back(d);
  return sum_dim_IntList(grad, IntList(dims), false, std::nullopt);
}

Tensor pool_backward_by_indices(const Tensor& grad, IntList self_sizes, const Tensor& indices, int64_t spatial) {
  const int64_t nd = static_cast<int64_t>(self_sizes.size());
  if (nd == spatial + 2 && ops::suggest_memory_format(grad) != MemoryFormat::Contiguous &&
      ops::suggest_memory_format(indices) != MemoryFormat::Contiguous) {
    // channels_last (Note [Channels-last pooling]): scatter each sample's (positions, C)
    // rows, channels innermost, and hand back a channels_last gradient
    std::vector<int64_t> to_last{0}, to_first{0, spatial + 1};
    for (int64_t d = 2; d < nd; ++d) to_last.push_back(d);
    to_last.push_back(1);
    for (int64_t d = 1; d <= spatial; ++d) to_first.push_back(d);
    int64_t plane_in = 1, plane_out = 1;
    for (int64_t d = 2; d < nd; ++d) plane_in *= self_sizes[d], plane_out *= grad.sizes()[d];
    const int64_t n = self_sizes[0], c = self_sizes[1];
    Tensor g = reshape(permute(grad, IntList(to_last)), IntList{n, plane_out, c});
    Tensor idx = ops::reshape(ops::permute(indices, IntList(to_last)), IntList{n, plane_out, c});
    Tensor gin = scatter_add(zeros_of(IntList{n, plane_in, c}, grad.dtype()), 1, idx, g);
    Dims last{n};
    for (int64_t d = 2; d < nd; ++d) last.push_back(self_sizes[d]);
    last.push_back(c);
    return permute(reshape(gin, IntList(last)), IntList(to_first));
  }
  Dims flat_in(IntList(self_sizes.data(), static_cast<size_t>(nd - spatial)));
  Dims flat_out(flat_in);
  int64_t plane_in = 1, plane_out = 1;
  for (int64_t d = nd - spatial; d < nd; ++d) plane_in *= self_sizes[d], plane_out *= grad.sizes()[d];
  flat_in.push_back(plane_in);
  flat_out.push_back(plane_out);
  Tensor g = reshape(grad, flat_out);
  Tensor idx = ops::reshape(indices, flat_out);
  return reshape(scatter_add(zeros_of(flat_in, grad.dtype()), nd - spatial, idx, g), self_sizes);
}

// ---- normalization ----

namespace {

std::vector<int64_t> dim_range(int64_t from, int64_t to) {
  std::vector<int64_t> d;
  for (int64_t i = from; i < to; ++i) d.push_back(i);
  return d;
}

Tensor mean_over(const Tensor& t, const std::vector<int64_t>& dims) {
  return mean_dim(t, IntList(dims), true, std::nullopt);
}

// The sum over dims, shaped `shape` (no dims: t itself, where sum would reduce them all).
Tensor sum_over(const Tensor& t, const std::vector<int64_t>& dims, IntList shape) {
  return reshape(dims.empty() ? t : sum_dim_IntList(t, IntList(dims), false, std::nullopt), shape);
}

// With xhat the normalized input, rstd its scale and gs = grad * weight, over the
// normalized dims: rstd (gs - mean(gs) - xhat mean(gs xhat)) (without mean(gs) for RMS).
Tensor normalized_input_grad(const Tensor& gs, const Tensor& xhat, const Tensor& rstd,
                             const std::vector<int64_t>& dims, bool center) {
  Tensor inner = gs - xhat * mean_over(gs * xhat, dims);
  if (center) inner = inner - mean_over(gs, dims);
  return rstd * inner;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> layer_norm_grads(const Tensor& grad, const Tensor& input, IntList normalized_shape,
                                                    const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                                    const Tensor& bias, double eps) {
  if (!autograd::needs_record(grad, input, weight))
    return native_layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, bias);
  const std::vector<int64_t> dims = dim_range(input.dim() - int64_t(normalized_shape.size()), input.dim());
  const std::vector<int64_t> rows = dim_range(0, input.dim() - int64_t(normalized_shape.size()));
  Tensor centered = input - mean_over(input, dims);
  Tensor r = rsqrt(mean_over(centered * centered, dims) + eps);
  Tensor xhat = centered * r;
  Tensor gs = weight.defined() ? grad * weight : grad;
  Tensor gx = normalized_input_grad(gs, xhat, r, dims, true);
  Tensor gw = weight.defined() ? sum_over(grad * xhat, rows, normalized_shape) : Tensor();
  Tensor gb = bias.defined() ? sum_over(grad, rows, normalized_shape) : Tensor();
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor> rms_norm_grads(const Tensor& grad, const Tensor& input, IntList normalized_shape,
                                          const Tensor& rstd, const Tensor& weight, std::optional<double> eps) {
  if (!autograd::needs_record(grad, input, weight))
    return _fused_rms_norm_backward(grad, input, normalized_shape, rstd, weight);
  const std::vector<int64_t> dims = dim_range(input.dim() - int64_t(normalized_shape.size()), input.dim());
  const std::vector<int64_t> rows = dim_range(0, input.dim() - int64_t(normalized_shape.size()));
  const ScalarType t = input.dtype();
  const double e = eps ? *eps
                       : t == ScalarType::Float64    ? 2.220446049250313e-16
                       : t == ScalarType::Float16  ? 0.0009765625
                       : t == ScalarType::BFloat16 ? 0.0078125
                                                   : 1.1920928955078125e-07;  // the dtype's epsilon, as the op
  Tensor r = rsqrt(mean_over(input * input, dims) + e);
  Tensor xhat = input * r;
  Tensor gs = weight.defined() ? grad * weight : grad;
  Tensor gx = normalized_input_grad(gs, xhat, r, dims, false);
  Tensor gw = weight.defined() ? sum_over(grad * xhat, rows, normalized_shape) : Tensor();
  return {gx, gw};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_grads(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                    const Tensor& save_mean, const Tensor& save_invstd, bool training,
                                                    double eps) {
  if (!autograd::needs_record(grad, input, weight))
    return native_batch_norm_backward(grad, input, weight, Tensor(), Tensor(), save_mean, save_invstd, training, eps);
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  Dims channel(input.dim());  // (1, C, 1, ...)
  for (int64_t d = 0; d < input.dim(); ++d) channel[d] = d == 1 ? input.sizes()[1] : 1;
  const Dims c_shape{input.sizes()[1]};
  Tensor w = weight.defined() ? reshape(weight, channel) : Tensor();
  Tensor gs = w.defined() ? grad * w : grad;
  Tensor xhat, gx;
  if (training) {
    Tensor centered = input - mean_over(input, dims);
    Tensor r = rsqrt(mean_over(centered * centered, dims) + eps);
    xhat = centered * r;
    gx = normalized_input_grad(gs, xhat, r, dims, true);
  } else {  // the running statistics are constants
    Tensor r = reshape(autograd::detach(save_invstd), channel);
    xhat = (input - reshape(autograd::detach(save_mean), channel)) * r;
    gx = gs * r;
  }
  return {gx, sum_over(grad * xhat, dims, c_shape), sum_over(grad, dims, c_shape)};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_grads(const Tensor& grad, const Tensor& input, const Tensor& mean,
                                                    const Tensor& rstd, const Tensor& weight, int64_t N, int64_t C,
                                                    int64_t HxW, int64_t group, double eps) {
  if (!autograd::needs_record(grad, input, weight))
    return native_group_norm_backward(grad, input, mean, rstd, weight, N, C, HxW, group);
  const std::vector<int64_t> last{2};
  Tensor x = reshape(input, IntList{N, group, -1});
  Tensor g = reshape(grad, IntList{N, C, HxW});
  Tensor gs = weight.defined() ? g * reshape(weight, IntList{1, C, 1}) : g;
  Tensor centered = x - mean_over(x, last);
  Tensor r = rsqrt(mean_over(centered * centered, last) + eps);
  Tensor xhat = centered * r;
  Tensor gx = normalized_input_grad(reshape(gs, IntList{N, group, -1}), xhat, r, last, true);
  Tensor xhat_c = reshape(xhat, IntList{N, C, HxW});
  const std::vector<int64_t> nd{0, 2};
  return {reshape(gx, input.sizes()), sum_over(g * xhat_c, nd, IntList{C}), sum_over(g, nd, IntList{C})};
}

Dims last_dims(IntList sizes, int64_t n) {
  return Dims(IntList(sizes.data() + sizes.size() - static_cast<size_t>(n), static_cast<size_t>(n)));
}

Tensor embedding_backward_grad_grad(const Tensor& grad, const Tensor& indices, int64_t padding_idx,
                                    bool scale_grad_by_freq) {
  Tensor r = embedding(grad, indices, -1, false, false);
  if (padding_idx >= 0)
    r = masked_fill_Scalar(r, ops::unsqueeze(ops::eq_Tensor(indices, ops::scalar_tensor(Scalar(padding_idx), indices.dtype()), Out{}), -1),
                           Scalar(0.0));
  if (scale_grad_by_freq) {
    Tensor flat = ops::reshape(indices, IntList{-1});
    Tensor counts = ops::index_select(ops::bincount(flat, Tensor(), 0), 0, flat, Out{});
    r = r / unsqueeze(reshape(to_dtype(counts, r.dtype(), false, false, std::nullopt), indices.sizes()), -1);
  }
  return r;
}

}  // namespace ember::api
