// The losses with native kernels or single-expression bodies (declarations/ops/nn_loss.yaml):
// nll_loss over kernels/nn_loss.h, the others composed of elementwise ops. reduction is
// torch's int enum (0 none, 1 mean, 2 sum).
#include "kernels/nn_loss.h"
#include "kernels/nn_softmax.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_loss;
namespace nk_softmax = kernels::nn_softmax;

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

// ctc_loss's operands checked as torch checks them, converted to the kernel's layout.
struct CtcOperands {
  Tensor lp, targets, input_lengths, target_lengths;
  std::vector<int64_t> offset;
  nk::Ctc c;
};

Tensor ctc_lengths(const Tensor& lengths, const char* name, int64_t batch) {
  EMBER_CHECK(is_integral(lengths.dtype(), false), Runtime, name, " must be integral");
  EMBER_CHECK(lengths.dim() <= 1 && lengths.numel() == batch, Runtime, name, " must be of size batch_size");
  return dense(reshape(lengths, {-1}), ScalarType::Int64);
}

CtcOperands check_ctc(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                      const Tensor& target_lengths, int64_t blank) {
  EMBER_CHECK(log_probs.numel() > 0, Runtime, "log_probs tensor must not be empty");
  EMBER_CHECK(log_probs.dtype() == ScalarType::Float32 || log_probs.dtype() == ScalarType::Float64, NotImplemented,
              "\"ctc_loss_cpu\" not implemented for '", type_name(log_probs.dtype()), "'");
  EMBER_CHECK(log_probs.dim() == 3, Runtime, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
              "-dimensional tensor for argument #1 'log_probs' (while checking arguments for ctc_loss)");
  CtcOperands o;
  nk::Ctc& c = o.c;
  c.T = log_probs.sizes()[0], c.N = log_probs.sizes()[1], c.C = log_probs.sizes()[2], c.blank = blank;
  EMBER_CHECK(blank >= 0 && blank < c.C, Runtime, "blank must be in label range");
  o.input_lengths = ctc_lengths(input_lengths, "input_lengths", c.N);
  o.target_lengths = ctc_lengths(target_lengths, "target_lengths", c.N);
  const int64_t* il = ptr<int64_t>(o.input_lengths);
  const int64_t* tl = ptr<int64_t>(o.target_lengths);
  int64_t total = 0;
  c.max_target = 0;
  for (int64_t n = 0; n < c.N; ++n) {
    EMBER_CHECK(il[n] >= 0, Runtime, "Expected input_lengths to have value at least 0, but got value ", il[n],
                " (while checking arguments for ctc_loss)");
    EMBER_CHECK(il[n] <= c.T, Runtime, "Expected input_lengths to have value at most ", c.T, ", but got value ", il[n],
                " (while checking arguments for ctc_loss)");
    EMBER_CHECK(tl[n] >= 0, Runtime, "Expected target_lengths to have value at least 0, but got value ", tl[n],
                " (while checking arguments for ctc_loss)");
    c.max_target = std::max(c.max_target, tl[n]);
    total += tl[n];
  }
  EMBER_CHECK(is_integral(targets.dtype(), false) || is_floating(targets.dtype()), Runtime,
              "ctc_loss: targets must be integral, got ", type_name(targets.dtype()));
  o.offset.resize(size_t(c.N));
  if (targets.dim() == 1) {
    EMBER_CHECK(targets.sizes()[0] == total, Runtime, "Expected tensor to have size ", total,
                " at dimension 0, but got size ", targets.sizes()[0],
                " for argument #2 'targets' (while checking arguments for ctc_loss)");
    for (int64_t n = 0, at = 0; n < c.N; at += tl[n], ++n) o.offset[size_t(n)] = at;
  } else {
    EMBER_CHECK(targets.dim() == 2 && targets.sizes()[0] == c.N, Runtime, "ctc_loss: targets must be (",
                c.N, ", S) padded or 1-D concatenated, got ", sizes_str(targets.sizes()));
    EMBER_CHECK(targets.sizes()[1] >= c.max_target, Runtime, "Expected tensor to have size at least ", c.max_target,
                " at dimension 1, but got size ", targets.sizes()[1],
                " for argument #2 'targets' (while checking arguments for ctc_loss)");
    for (int64_t n = 0; n < c.N; ++n) o.offset[size_t(n)] = n * targets.sizes()[1];
  }
  o.targets = dense(targets, ScalarType::Int64);
  const int64_t* tg = ptr<int64_t>(o.targets);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t k = 0; k < tl[n]; ++k) {
      const int64_t v = tg[o.offset[size_t(n)] + k];
      EMBER_CHECK(v >= 0 && v < c.C, Runtime, "ctc_loss: target ", v, " of sample ", n,
                  " is outside the label range [0, ", c.C, ")");
    }
  o.lp = dense(log_probs, log_probs.dtype());
  c.targets = tg, c.offset = o.offset.data(), c.input_length = il, c.target_length = tl;
  return o;
}

// cross_entropy's operands (Note [Fused cross_entropy], kernels/nn_softmax.cpp): the
// logits as contiguous rows (M * S, C) of the compute dtype ((M, C, S) is transposed once
// when S > 1), the targets int64 and checked, the weights, their sum over all classes, and
// the sum of the targets' weights (the mean's divisor).
struct CeOperands {
  NllShape s;
  ScalarType ct;
  Tensor x, t, w;
  double wsum = 0, target_weights = 0;
};

CeOperands check_ce(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                    int64_t ignore_index, double label_smoothing) {
  CeOperands o;
  o.s = check_nll(self, target, weight, reduction);
  EMBER_CHECK(target.dtype() == ScalarType::Int64, Runtime, "_cross_entropy_loss: expected target dtype Long, but got ",
              type_name(target.dtype()));
  EMBER_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, Runtime,
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  o.ct = compute_dtype(self.dtype());
  if (!runs_kernels()) return o;
  const NllShape& s = o.s;
  Tensor x = self;
  if (s.S > 1) x = transpose(reshape(self, {s.M, s.C, s.S}), 1, 2);
  o.x = dense(x, o.ct);
  o.t = dense(target, ScalarType::Int64);
  o.w = weight.defined() ? dense(weight, o.ct) : Tensor();
  const int64_t* t = ptr<int64_t>(o.t);
  const int64_t rows = s.M * s.S;
  visit_float(o.ct, [&](auto tag) {
    using T = decltype(tag);
    const T* w = ptr<T>(o.w);
    for (int64_t c = 0; w && c < s.C; ++c) o.wsum += double(w[c]);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = t[r];
      if (c == ignore_index) continue;
      EMBER_CHECK(c >= 0 && c < s.C, Index, "Target ", c, " is out of bounds.");
      o.target_weights += w ? double(w[c]) : 1.0;
    }
  });
  return o;
}

}  // namespace

std::tuple<Tensor, Tensor> _cross_entropy_loss(const Tensor& self, const Tensor& target, const Tensor& weight,
                                               int64_t reduction, int64_t ignore_index, double label_smoothing) {
  const CeOperands o = check_ce(self, target, weight, reduction, ignore_index, label_smoothing);
  const Dims loss_sizes = reduction == 0 ? Dims(target.sizes()) : Dims{};
  const int64_t rows = o.s.M * o.s.S;
  if (!runs_kernels()) return {empty_tensor(loss_sizes, self.dtype()), empty_tensor(Dims{rows}, o.ct)};
  Tensor loss = empty_tensor(Dims{rows}, o.ct), lse = empty_tensor(Dims{rows}, o.ct);
  Tensor out;
  {
    PinnedWork work({&o.x, &o.t, &o.w, &loss, &lse}, rows * o.s.C * 4);
    visit_float(o.ct, [&](auto tag) {
      using T = decltype(tag);
      nk_softmax::Kernels<T>::cross_entropy(ptr<T>(o.x), rows, o.s.C, ptr<int64_t>(o.t), ptr<T>(o.w), T(o.wsum),
                                            ignore_index, label_smoothing, ptr<T>(loss), ptr<T>(lse));
    });
  }
  if (reduction == 0) {
    out = reshape(loss, loss_sizes);
  } else {
    visit_float(o.ct, [&](auto tag) {
      using T = decltype(tag);
      const T* l = ptr<T>(loss);
      double total = 0;  // in order: the same sum for any thread count
      for (int64_t r = 0; r < rows; ++r) total += double(l[r]);
      out = scalar_tensor(Scalar(reduction == 1 ? total / o.target_weights : total), o.ct);
    });
  }
  return {as_dtype(out, self.dtype()), lse};
}

Tensor _cross_entropy_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                    const Tensor& weight, int64_t reduction, int64_t ignore_index,
                                    double label_smoothing, const Tensor& lse) {
  const CeOperands o = check_ce(self, target, weight, reduction, ignore_index, label_smoothing);
  if (!runs_kernels()) return empty_tensor(self.sizes(), self.dtype());
  const NllShape& s = o.s;
  const int64_t rows = s.M * s.S;
  EMBER_CHECK(lse.numel() == rows, Runtime, "_cross_entropy_loss_backward: expected lse of ", rows,
              " elements, got ", lse.numel());
  Tensor g = dense(reduction == 0 ? expand(grad_output, target.sizes(), false) : grad_output, o.ct);
  EMBER_CHECK(reduction == 0 || g.numel() == 1, Runtime,
              "_cross_entropy_loss_backward: expected a one-element grad_output");
  Tensor l = dense(lse, o.ct);
  Tensor gx = empty_tensor(Dims{rows, s.C}, o.ct);
  {
    PinnedWork work({&o.x, &o.t, &o.w, &g, &l, &gx}, rows * s.C * 4);
    visit_float(o.ct, [&](auto tag) {
      using T = decltype(tag);
      nk_softmax::Kernels<T>::cross_entropy_backward(ptr<T>(o.x), ptr<T>(l), rows, s.C, ptr<int64_t>(o.t),
                                                     ptr<T>(o.w), T(o.wsum), ignore_index, label_smoothing, ptr<T>(g),
                                                     reduction == 0, T(reduction == 1 ? 1.0 / o.target_weights : 1.0),
                                                     ptr<T>(gx));
    });
  }
  Tensor r = gx;
  if (s.S > 1) r = dense(transpose(reshape(gx, {s.M, s.S, s.C}), 1, 2), o.ct);
  return as_dtype(reshape(r, self.sizes()), self.dtype());
}

Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                   int64_t ignore_index) {
  const NllShape s = check_nll(self, target, weight, reduction);
  if (!runs_kernels()) return empty_tensor(reduction == 0 ? target.sizes() : IntList{}, self.dtype());
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
  if (!runs_kernels()) return empty_tensor(self.sizes(), self.dtype());
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
  const ScalarType t = promote_types(self.dtype(), target.dtype());
  EMBER_CHECK(!is_complex(t), NotImplemented, "\"mse_cpu\" not implemented for '", type_name(t), "'");
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

std::tuple<Tensor, Tensor> _ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                                     const Tensor& target_lengths, int64_t blank, bool zero_infinity) {
  (void)zero_infinity;  // it shapes the gradient only (the caller zeroes infinite losses)
  const CtcOperands o = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  const ScalarType dt = log_probs.dtype();
  Tensor nll = empty_tensor(Dims{o.c.N}, dt);
  Tensor log_alpha = empty_tensor(Dims{o.c.N, o.c.T, 2 * o.c.max_target + 1}, dt);
  PinnedWork work({&o.lp, &o.targets, &nll, &log_alpha}, o.c.N * o.c.T * (2 * o.c.max_target + 1) * 8);
  visit_float(dt, [&](auto tag) {
    using T = decltype(tag);
    nk::Kernels<T>::ctc_loss(o.c, ptr<T>(o.lp), ptr<T>(nll), ptr<T>(log_alpha));
  });
  return {nll, log_alpha};
}

Tensor _ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                          const Tensor& input_lengths, const Tensor& target_lengths, const Tensor& neg_log_likelihood,
                          const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  const CtcOperands o = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  const ScalarType dt = log_probs.dtype();
  const int64_t W = 2 * o.c.max_target + 1;
  EMBER_CHECK(grad.numel() == o.c.N && neg_log_likelihood.numel() == o.c.N, Runtime,
              "_ctc_loss_backward: grad and neg_log_likelihood must have ", o.c.N, " elements");
  EMBER_CHECK(log_alpha.sizes() == IntList(Dims{o.c.N, o.c.T, W}), Runtime, "_ctc_loss_backward: log_alpha of size ",
              sizes_str(log_alpha.sizes()), " does not match");
  const Tensor g = dense(reshape(grad, {-1}), dt), nll = dense(neg_log_likelihood, dt), la = dense(log_alpha, dt);
  Tensor out = empty_tensor(log_probs.sizes(), dt);
  PinnedWork work({&o.lp, &o.targets, &g, &nll, &la, &out}, o.c.N * o.c.T * (W + o.c.C) * 8);
  visit_float(dt, [&](auto tag) {
    using T = decltype(tag);
    nk::Kernels<T>::ctc_loss_backward(o.c, ptr<T>(g), ptr<T>(o.lp), ptr<T>(nll), ptr<T>(la), zero_infinity,
                                      ptr<T>(out));
  });
  return out;
}

}  // namespace ember::ops
