// The losses with native kernels or single-expression bodies (declarations/ops/nn_loss.yaml):
// nll_loss over kernels/nn_loss.h, the others composed of elementwise ops. reduction is
// torch's int enum (0 none, 1 mean, 2 sum).
#include "kernels/nn_loss.h"
#include "ops/nn_common.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_loss;

Tensor reduce_loss(const Tensor& loss, int64_t reduction) {
  if (reduction == 0) return loss;
  return reduction == 1 ? mean(loss, std::nullopt) : sum(loss, std::nullopt);
}

void check_reduction(int64_t reduction) {
  EMBER_CHECK(reduction >= 0 && reduction <= 2, Value, reduction, " is not a valid value for reduction");
}

using nk::NllShape;

// self as (M, C, S) and target as (M, S): the layout both nll ops walk.
NllShape check_nll(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  EMBER_CHECK(self.dim() >= 1, Value, "Expected 1 or more dimensions (got ", self.dim(), ")");
  EMBER_CHECK(target.dtype() == ScalarType::Int64 || target.dtype() == ScalarType::UInt8, Runtime,
              "expected target dtype to be Long or Byte, but got ", type_name(target.dtype()));
  check_floating(self, "nll_loss_out_frame");
  check_reduction(reduction);
  NllShape s{1, self.sizes()[self.dim() == 1 ? 0 : 1], 1};
  if (self.dim() == 1) {
    EMBER_CHECK(target.dim() <= 1 && target.numel() == 1, Runtime,
                "0D or 1D target tensor expected, multi-target not supported");
  } else if (self.dim() == 2) {
    EMBER_CHECK(target.dim() <= 1, Runtime, "0D or 1D target tensor expected, multi-target not supported");
    s.M = self.sizes()[0];
    EMBER_CHECK(target.dim() == 1 && target.sizes()[0] == s.M, Value, "Expected input batch_size (", s.M,
                ") to match target batch_size (", target.dim() ? target.sizes()[0] : 1, ").");
  } else {
    s.M = self.sizes()[0];
    EMBER_CHECK(target.dim() >= 1 && target.sizes()[0] == s.M, Value, "Expected input batch_size (", s.M,
                ") to match target batch_size (", target.dim() ? target.sizes()[0] : 1, ").");
    Dims expected{s.M};
    for (int64_t d = 2; d < self.dim(); ++d) expected.push_back(self.sizes()[d]);
    EMBER_CHECK(target.sizes() == IntList(expected), Runtime, "Expected target size ", sizes_str(expected), ", got ",
                sizes_str(target.sizes()));
    s.S = product(self.sizes(), 2);
  }
  if (weight.defined()) {
    EMBER_CHECK(weight.numel() == s.C, Runtime, "weight tensor should be defined either for all ", s.C,
                " classes or no classes but got weight tensor of shape: ", sizes_str(weight.sizes()));
    EMBER_CHECK(weight.dtype() == self.dtype(), Runtime, "expected scalar type ", type_name(self.dtype()),
                " but found ", type_name(weight.dtype()));
  }
  return s;
}

}  // namespace

Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                   int64_t ignore_index) {
  const NllShape s = check_nll(self, target, weight, reduction);
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor x = dense(self, ct), t = dense(target, target.dtype()), w = weight.defined() ? dense(weight, ct) : Tensor();
  const nk::Targets targets{t.data(), t.dtype() == ScalarType::UInt8, ignore_index};
  Tensor out;
  visit_float(ct, [&](auto tag) {
    using T = decltype(tag);
    if (reduction == 0) {
      out = zeros(target.sizes(), ct);
      nk::Kernels<T>::nll_loss(s, ptr<T>(x), targets, ptr<T>(w), ptr<T>(out));
      return;
    }
    double weights = 0;
    const double total = nk::Kernels<T>::nll_loss_sum(s, ptr<T>(x), targets, ptr<T>(w), &weights);
    out = scalar_tensor(Scalar(reduction == 1 ? total / weights : total), ct);
  });
  return as_dtype(out, self.dtype());
}

Tensor _nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                          int64_t reduction, int64_t ignore_index) {
  const NllShape s = check_nll(self, target, weight, reduction);
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor t = dense(target, target.dtype()), w = weight.defined() ? dense(weight, ct) : Tensor();
  const nk::Targets targets{t.data(), t.dtype() == ScalarType::UInt8, ignore_index};
  Tensor gin = zeros(self.sizes(), ct);
  Tensor g = dense(reduction == 0 ? expand(grad_output, target.sizes(), false) : grad_output, ct);
  EMBER_CHECK(reduction == 0 || g.numel() == 1, Runtime, "nll_loss backward: expected a one-element grad_output");
  visit_float(ct, [&](auto tag) {
    using T = decltype(tag);
    T scale = T(1);
    if (reduction == 1) {  // the mean divides by the targets' weight sum
      scale = T(1.0 / nk::Kernels<T>::weight_sum(s, targets, ptr<T>(w)));
    }
    nk::Kernels<T>::nll_loss_backward(s, targets, ptr<T>(w), ptr<T>(g), reduction == 0, scale, ptr<T>(gin));
  });
  return as_dtype(gin, self.dtype());
}

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  Tensor d = sub_Tensor(self, target, Scalar(int64_t(1)), Out{});
  return reduce_loss(mul_Tensor(d, d, Out{}), reduction);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  check_reduction(reduction);
  EMBER_CHECK(beta >= 0, Runtime, "smooth_l1_loss does not support negative values for beta.");
  Tensor d = sub_Tensor(self, target, Scalar(int64_t(1)), Out{});
  Tensor ad = abs(d, Out{});
  if (beta == 0) return reduce_loss(ad, reduction);
  Tensor quad = mul_Tensor(mul_Tensor(d, d, Out{}), number(0.5 / beta), Out{});
  Tensor lin = sub_Tensor(ad, number(0.5 * beta), Scalar(int64_t(1)), Out{});
  return reduce_loss(where_self(lt_Tensor(ad, number(beta), Out{}), quad, lin), reduction);
}

Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  check_reduction(reduction);
  EMBER_CHECK(delta > 0, Runtime, "huber_loss does not support non-positive values for delta.");
  Tensor d = sub_Tensor(self, target, Scalar(int64_t(1)), Out{});
  Tensor ad = abs(d, Out{});
  Tensor quad = mul_Tensor(mul_Tensor(d, d, Out{}), number(0.5), Out{});
  Tensor lin = mul_Tensor(sub_Tensor(ad, number(0.5 * delta), Scalar(int64_t(1)), Out{}), number(delta), Out{});
  return reduce_loss(where_self(lt_Tensor(ad, number(delta), Out{}), quad, lin), reduction);
}

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  check_reduction(reduction);
  check_floating(self, "binary_cross_entropy");
  EMBER_CHECK(self.sizes() == target.sizes(), Value, "Using a target size (", sizes_str(target.sizes()),
              ") that is different to the input size (", sizes_str(self.sizes()), ") is deprecated. ",
              "Please ensure they have the same size.");
  Tensor inside = logical_and(ge_Tensor(self, number(0.0), Out{}), le_Tensor(self, number(1.0), Out{}), Out{});
  EMBER_CHECK(item(all(inside, std::nullopt, false, Out{})).to_bool(), Runtime,
              "all elements of input should be between 0 and 1");
  Tensor lo = number(-100.0);
  Tensor log_x = clamp_min(log(self, Out{}), lo, Out{});
  Tensor log_1mx = clamp_min(log(rsub(self, number(1.0), Scalar(int64_t(1))), Out{}), lo, Out{});
  // -(t log x + (1 - t) log(1 - x)) = (t - 1) log(1 - x) - t log x
  Tensor loss = sub_Tensor(mul_Tensor(sub_Tensor(target, number(1.0), Scalar(int64_t(1)), Out{}), log_1mx, Out{}),
                           mul_Tensor(target, log_x, Out{}), Scalar(int64_t(1)), Out{});
  if (weight.defined()) loss = mul_Tensor(loss, weight, Out{});
  return reduce_loss(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, int64_t reduction) {
  check_reduction(reduction);
  check_floating(self, "binary_cross_entropy_with_logits");
  // (1 - t) x - (1 + (p - 1) t) log_sigmoid(x)
  Tensor ls = log_sigmoid(self);
  Tensor coef = pos_weight.defined()
                    ? add_Tensor(mul_Tensor(sub_Tensor(pos_weight, number(1.0), Scalar(int64_t(1)), Out{}), target, Out{}),
                                 number(1.0), Scalar(int64_t(1)), Out{})
                    : Tensor();
  Tensor first = mul_Tensor(rsub(target, number(1.0), Scalar(int64_t(1))), self, Out{});
  Tensor loss = sub_Tensor(first, coef.defined() ? mul_Tensor(coef, ls, Out{}) : ls, Scalar(int64_t(1)), Out{});
  if (weight.defined()) loss = mul_Tensor(loss, weight, Out{});
  return reduce_loss(loss, reduction);
}

}  // namespace ember::ops
