// Batch, layer, group and RMS normalization and their gradients
// (declarations/ops/nn_norm.yaml) over kernels/nn_norm.h.
#include "kernels/nn_norm.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_norm;

// (rows, n) of a layer or RMS norm, after torch's shape checks.
std::pair<int64_t, int64_t> norm_rows(const Tensor& input, IntList normalized_shape, const Tensor& weight,
                                      const Tensor& bias) {
  const int64_t k = int64_t(normalized_shape.size()), nd = input.dim();
  EMBER_CHECK(k >= 1, Runtime, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = ",
              sizes_str(normalized_shape));
  EMBER_CHECK(!weight.defined() || weight.sizes() == normalized_shape, Runtime,
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              sizes_str(weight.sizes()), " and normalized_shape = ", sizes_str(normalized_shape));
  EMBER_CHECK(!bias.defined() || bias.sizes() == normalized_shape, Runtime,
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ", sizes_str(bias.sizes()),
              " and normalized_shape = ", sizes_str(normalized_shape));
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.sizes()[nd - k + i] == normalized_shape[i];
  if (!ok) {
    std::string expected = "[*";
    for (int64_t v : normalized_shape) expected += ", " + std::to_string(v);
    EMBER_CHECK(false, Runtime, "Given normalized_shape=", sizes_str(normalized_shape), ", expected input with shape ",
                expected, "], but got input of size", sizes_str(input.sizes()));
  }
  return {product(input.sizes(), 0, nd - k), product(input.sizes(), nd - k)};
}

Dims stat_sizes(const Tensor& input, int64_t k) {  // (*, 1, ..., 1)
  Dims s(input.sizes());
  for (int64_t i = input.dim() - k; i < input.dim(); ++i) s[i] = 1;
  return s;
}

void check_same_size(const Tensor& grad, const Tensor& input, const char* op) {
  EMBER_CHECK(grad.sizes() == input.sizes(), Runtime, op, ": expected grad_out of size ", sizes_str(input.sizes()),
              ", but got ", sizes_str(grad.sizes()));
}

void check_stat(const Tensor& t, int64_t n, const char* op) {
  EMBER_CHECK(t.numel() == n, Runtime, op, ": expected a statistic of ", n, " elements, but got size ",
              sizes_str(t.sizes()));
}

// N * C * HxW must be input's element count (each non-negative; no overflow).
void check_group_sizes(const Tensor& input, int64_t N, int64_t C, int64_t HxW) {
  const int64_t sizes[] = {N, C, HxW};
  bool ok = N >= 0 && C >= 0 && HxW >= 0;
  if (ok) ok = checked_numel(IntList(sizes, 3), "native_group_norm") == input.numel();
  EMBER_CHECK(ok, Runtime, "Expected the input to have N * C * HxW = ", N, " * ", C, " * ", HxW,
              " elements, but got input of size ", sizes_str(input.sizes()));
}


double dtype_epsilon(ScalarType t) {
  switch (t) {
    case ScalarType::Float64: return std::numeric_limits<double>::epsilon();
    case ScalarType::Float16: return 0.0009765625;
    case ScalarType::BFloat16: return 0.0078125;
    default: return std::numeric_limits<float>::epsilon();
  }
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps) {
  EMBER_CHECK(input.dim() >= 2, Runtime, "batch_norm: expected input with at least 2 dims (N, C, ...), but got ",
              sizes_str(input.sizes()));
  check_floating(input, "batch_norm");
  const int64_t N = input.sizes()[0], C = input.sizes()[1], S = product(input.sizes(), 2);
  for (const Tensor* t : {&weight, &bias, &running_mean, &running_var})
    EMBER_CHECK(!t->defined() || t->numel() == C, Runtime, "running_mean should contain ", C,
                " elements not ", t->numel());
  const ScalarType ct = compute_dtype(input.dtype());
  if (!runs_kernels())  // no data: the results' metadata (the running statistics stay as they are)
    return {in_layout_of(empty_tensor(input.sizes(), input.dtype()), input), empty_tensor({C}, ct),
            empty_tensor({C}, ct)};
  Tensor x = dense(input, ct), w = weight.defined() ? dense(weight, ct) : Tensor(),
         b = bias.defined() ? dense(bias, ct) : Tensor();
  std::vector<double> mean(C), var(C), invstd(C);
  const bool batch_stats = training || !running_mean.defined() || !running_var.defined();
  if (batch_stats) {
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::channel_moments(ptr<T>(x), N, C, S, mean.data(), var.data());
    });
  } else {
    Tensor rm = dense(running_mean, ScalarType::Float64), rv = dense(running_var, ScalarType::Float64);
    for (int64_t c = 0; c < C; ++c) mean[c] = ptr<double>(rm)[c], var[c] = ptr<double>(rv)[c];
  }
  for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + eps);
  Tensor out = empty_tensor(input.sizes(), ct);
  if (out.numel() > 0) {
    PinnedWork work({&x, &out}, out.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::channel_affine(ptr<T>(x), ptr<T>(out), N, C, S, mean.data(), invstd.data(), ptr<T>(w), ptr<T>(b));
    });
  }
  Tensor save_mean = empty_tensor({C}, ScalarType::Float64), save_invstd = empty_tensor({C}, ScalarType::Float64);
  for (int64_t c = 0; c < C; ++c) ptr<double>(save_mean)[c] = mean[c], ptr<double>(save_invstd)[c] = invstd[c];
  if (training) {
    const double n = double(N * S);
    if (running_mean.defined())
      copy_(running_mean,
            add_Tensor(mul_Tensor(running_mean, number(1.0 - momentum), Out{}),
                       as_dtype(mul_Tensor(save_mean, number(momentum), Out{}), running_mean.dtype()),
                       Scalar(int64_t(1)), Out{}),
            false);
    if (running_var.defined()) {
      Tensor unbiased = empty_tensor({C}, ScalarType::Float64);
      for (int64_t c = 0; c < C; ++c) ptr<double>(unbiased)[c] = n > 1 ? var[c] * n / (n - 1) : INFINITY;
      copy_(running_var,
            add_Tensor(mul_Tensor(running_var, number(1.0 - momentum), Out{}),
                       as_dtype(mul_Tensor(unbiased, number(momentum), Out{}), running_var.dtype()),
                       Scalar(int64_t(1)), Out{}),
            false);
    }
  }
  return {in_layout_of(as_dtype(out, input.dtype()), input), as_dtype(save_mean, ct), as_dtype(save_invstd, ct)};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& weight, const Tensor& running_mean,
                                                              const Tensor& running_var, const Tensor& save_mean,
                                                              const Tensor& save_invstd, bool train, double eps) {
  EMBER_CHECK(input.dim() >= 2, Runtime, "batch_norm: expected input with at least 2 dims (N, C, ...), but got ",
              sizes_str(input.sizes()));
  check_floating(input, "batch_norm_backward");
  check_same_size(grad_out, input, "native_batch_norm_backward");
  const int64_t N = input.sizes()[0], C = input.sizes()[1], S = product(input.sizes(), 2);
  for (const Tensor* t : {&weight, &running_mean, &running_var, &save_mean, &save_invstd})
    EMBER_CHECK(!t->defined() || t->numel() == C, Runtime, "native_batch_norm_backward: expected ", C,
                " elements per statistic and weight, but got ", t->numel());
  const ScalarType ct = compute_dtype(input.dtype());
  if (!runs_kernels()) {
    const ScalarType wt = weight.defined() ? weight.dtype() : input.dtype();
    return {in_layout_of(empty_tensor(input.sizes(), input.dtype()), input), empty_tensor({C}, wt),
            empty_tensor({C}, wt)};
  }
  Tensor g = dense(grad_out, ct), x = dense(input, ct), w = weight.defined() ? dense(weight, ct) : Tensor();
  std::vector<double> mean(C), invstd(C);
  if (save_mean.defined() && save_invstd.defined()) {
    Tensor m = dense(save_mean, ScalarType::Float64), is = dense(save_invstd, ScalarType::Float64);
    for (int64_t c = 0; c < C; ++c) mean[c] = ptr<double>(m)[c], invstd[c] = ptr<double>(is)[c];
  } else {
    EMBER_CHECK(running_mean.defined() && running_var.defined(), Runtime,
                "native_batch_norm_backward: needs save_mean and save_invstd, or the running statistics");
    Tensor m = dense(running_mean, ScalarType::Float64), v = dense(running_var, ScalarType::Float64);
    for (int64_t c = 0; c < C; ++c) mean[c] = ptr<double>(m)[c], invstd[c] = 1.0 / std::sqrt(ptr<double>(v)[c] + eps);
  }
  Tensor gx = empty_tensor(input.sizes(), ct);
  Tensor gw = empty_tensor({C}, ct), gb = empty_tensor({C}, ct);  // bias may be given without weight
  {
    PinnedWork work({&g, &x, &gx}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::batch_norm_backward(ptr<T>(g), ptr<T>(x), N, C, S, mean.data(), invstd.data(), ptr<T>(w), train,
                                 ptr<T>(gx), ptr<T>(gw), ptr<T>(gb));
    });
  }
  const ScalarType wt = weight.defined() ? weight.dtype() : input.dtype();
  return {in_layout_of(as_dtype(gx, input.dtype()), input), as_dtype(gw, wt), as_dtype(gb, wt)};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntList normalized_shape,
                                                     const Tensor& weight, const Tensor& bias, double eps) {
  check_floating(input, "LayerNormKernelImpl");
  auto [rows, n] = norm_rows(input, normalized_shape, weight, bias);
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor x = dense(input, ct), w = weight.defined() ? dense(weight, ct) : Tensor(),
         b = bias.defined() ? dense(bias, ct) : Tensor();
  Tensor out = empty_tensor(input.sizes(), ct);
  const Dims ss = stat_sizes(input, int64_t(normalized_shape.size()));
  Tensor mean = empty_tensor(ss, ct), rstd = empty_tensor(ss, ct);
  if (x.numel() > 0) {
    PinnedWork work({&x, &out}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::layer_norm(ptr<T>(x), ptr<T>(w), ptr<T>(b), ptr<T>(out), ptr<T>(mean), ptr<T>(rstd), rows, n, eps, false);
    });
  } else if (mean.numel() > 0) {  // rows of no elements: torch's NaN statistics
    fill_unchecked(mean, Scalar(NAN));
    fill_unchecked(rstd, Scalar(NAN));
  }
  return {as_dtype(out, input.dtype()), mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntList normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const Tensor& weight,
                                                              const Tensor& bias) {
  check_floating(input, "native_layer_norm_backward");
  auto [rows, n] = norm_rows(input, normalized_shape, weight, bias);
  check_same_size(grad_out, input, "native_layer_norm_backward");
  check_stat(mean, rows, "native_layer_norm_backward");
  check_stat(rstd, rows, "native_layer_norm_backward");
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor g = dense(grad_out, ct), x = dense(input, ct), m = dense(mean, ct), r = dense(rstd, ct),
         w = weight.defined() ? dense(weight, ct) : Tensor();
  Tensor gx = empty_tensor(input.sizes(), ct);
  Tensor gw = weight.defined() ? zeros(weight.sizes(), ct) : Tensor();
  Tensor gb = bias.defined() ? zeros(bias.sizes(), ct) : Tensor();
  if (x.numel() > 0) {
    PinnedWork work({&g, &x, &gx}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::layer_norm_backward(ptr<T>(g), ptr<T>(x), ptr<T>(m), ptr<T>(r), ptr<T>(w), ptr<T>(gx), ptr<T>(gw),
                                 ptr<T>(gb), rows, n, false);
    });
  }
  return {as_dtype(gx, input.dtype()), gw.defined() ? as_dtype(gw, weight.dtype()) : gw,
          gb.defined() ? as_dtype(gb, bias.dtype()) : gb};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  check_floating(input, "GroupNormKernelImpl");
  EMBER_CHECK(group > 0 && C % group == 0, Runtime, "Expected number of channels in input to be divisible by ",
              "num_groups, but got input of shape ", sizes_str(input.sizes()), " and num_groups=", group);
  check_group_sizes(input, N, C, HxW);
  for (const Tensor* t : {&weight, &bias})
    EMBER_CHECK(!t->defined() || t->numel() == C, Runtime, "Expected weight to be a vector of size equal to the ",
                "number of channels in input, but got weight of shape ", sizes_str(t->sizes()),
                " and input of shape ", sizes_str(input.sizes()));
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor x = dense(input, ct), w = weight.defined() ? dense(weight, ct) : Tensor(),
         b = bias.defined() ? dense(bias, ct) : Tensor();
  Tensor out = empty_tensor(input.sizes(), ct);
  Tensor mean = empty_tensor({N, group}, ct), rstd = empty_tensor({N, group}, ct);
  {
    PinnedWork work({&x, &out}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::group_norm(ptr<T>(x), ptr<T>(w), ptr<T>(b), ptr<T>(out), ptr<T>(mean), ptr<T>(rstd), N, C, HxW, group,
                        eps);
    });
  }
  return {as_dtype(out, input.dtype()), mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const Tensor& weight, int64_t N, int64_t C, int64_t HxW,
                                                              int64_t group) {
  check_floating(input, "native_group_norm_backward");
  EMBER_CHECK(group > 0 && C % group == 0, Runtime, "native_group_norm_backward: ", C,
              " channels do not split into ", group, " groups");
  check_group_sizes(input, N, C, HxW);
  check_same_size(grad_out, input, "native_group_norm_backward");
  check_stat(mean, N * group, "native_group_norm_backward");
  check_stat(rstd, N * group, "native_group_norm_backward");
  EMBER_CHECK(!weight.defined() || weight.numel() == C, Runtime, "native_group_norm_backward: expected a weight of ",
              C, " elements, but got ", weight.numel());
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor g = dense(grad_out, ct), x = dense(input, ct), m = dense(mean, ct), r = dense(rstd, ct),
         w = weight.defined() ? dense(weight, ct) : Tensor();
  Tensor gx = empty_tensor(input.sizes(), ct);
  Tensor gw = empty_tensor({C}, ct), gb = empty_tensor({C}, ct);  // bias may be given without weight
  {
    PinnedWork work({&g, &x, &gx}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::group_norm_backward(ptr<T>(g), ptr<T>(x), ptr<T>(m), ptr<T>(r), ptr<T>(w), ptr<T>(gx), ptr<T>(gw),
                                 ptr<T>(gb), N, C, HxW, group);
    });
  }
  const ScalarType wt = weight.defined() ? weight.dtype() : input.dtype();
  return {as_dtype(gx, input.dtype()), as_dtype(gw, wt), as_dtype(gb, wt)};
}

std::tuple<Tensor, Tensor> _fused_rms_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight,
                                           std::optional<double> eps) {
  check_floating(input, "rms_norm");
  auto [rows, n] = norm_rows(input, normalized_shape, weight, Tensor());
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor x = dense(input, ct), w = weight.defined() ? dense(weight, ct) : Tensor();
  Tensor out = empty_tensor(input.sizes(), ct);
  Tensor rstd = empty_tensor(stat_sizes(input, int64_t(normalized_shape.size())), ct);
  if (x.numel() > 0) {
    PinnedWork work({&x, &out}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::layer_norm(ptr<T>(x), ptr<T>(w), nullptr, ptr<T>(out), nullptr, ptr<T>(rstd), rows, n,
                        eps.value_or(dtype_epsilon(input.dtype())), true);
    });
  }
  return {as_dtype(out, input.dtype()), rstd};
}

std::tuple<Tensor, Tensor> _fused_rms_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                    IntList normalized_shape, const Tensor& rstd,
                                                    const Tensor& weight) {
  check_floating(input, "_fused_rms_norm_backward");
  auto [rows, n] = norm_rows(input, normalized_shape, weight, Tensor());
  check_same_size(grad_out, input, "_fused_rms_norm_backward");
  check_stat(rstd, rows, "_fused_rms_norm_backward");
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor g = dense(grad_out, ct), x = dense(input, ct), r = dense(rstd, ct),
         w = weight.defined() ? dense(weight, ct) : Tensor();
  Tensor gx = empty_tensor(input.sizes(), ct);
  Tensor gw = weight.defined() ? zeros(weight.sizes(), ct) : Tensor();
  if (x.numel() > 0) {
    PinnedWork work({&g, &x, &gx}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::layer_norm_backward(ptr<T>(g), ptr<T>(x), nullptr, ptr<T>(r), ptr<T>(w), ptr<T>(gx), ptr<T>(gw), nullptr,
                                 rows, n, true);
    });
  }
  return {as_dtype(gx, input.dtype()), gw.defined() ? as_dtype(gw, weight.dtype()) : gw};
}

}  // namespace ember::ops
