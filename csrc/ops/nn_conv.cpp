// Convolution and its gradients (declarations/ops/nn_conv.yaml): torch's argument checks,
// the output shape, then the products of kernels/nn_conv.h. A transposed convolution is
// the input gradient of a plain one, and its gradients the plain forward and weight
// gradient.
#include "kernels/nn_conv.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_conv;

Dims expand_param(IntList v, int64_t n, const char* name) {
  EMBER_CHECK(int64_t(v.size()) == n || v.size() == 1, Runtime, "expected ", name, " to be a single integer value or a list of ",
              n, " values to match the convolution dimensions, but got ", name, "=", sizes_str(v));
  Dims out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = v[v.size() == 1 ? 0 : i];
  return out;
}

// The kernels' geometry of a call: x is the input of the plain convolution the call is in
// the geometry of, y its output; 1-d and 2-d spatial dims are put last of the kernels' three.
nk::Conv conv_call(IntList x_sizes, IntList w_sizes, IntList y_sizes, IntList stride, IntList padding,
                   IntList dilation, int64_t groups) {
  const int64_t nd = int64_t(w_sizes.size()) - 2;
  Dims s = expand_param(stride, nd, "stride"), p = expand_param(padding, nd, "padding"),
       d = expand_param(dilation, nd, "dilation");
  nk::Conv c;
  c.N = x_sizes[0];
  c.Cx = x_sizes[1];
  c.Cy = y_sizes[1];
  c.groups = groups;
  const int64_t o = nk::kSpatial - nd;  // leading size-1 dims
  for (int64_t i = 0; i < nk::kSpatial; ++i) {
    const bool pad = i < o;
    c.xs[i] = pad ? 1 : x_sizes[2 + i - o];
    c.ys[i] = pad ? 1 : y_sizes[2 + i - o];
    c.k[i] = pad ? 1 : w_sizes[2 + i - o];
    c.s[i] = pad ? 1 : s[i - o];
    c.p[i] = pad ? 0 : p[i - o];
    c.d[i] = pad ? 1 : d[i - o];
  }
  return c;
}

void check_conv_params(IntList stride, IntList padding, IntList dilation, IntList output_padding, int64_t groups,
                       int64_t nd, bool transposed) {
  EMBER_CHECK(groups > 0, Runtime, "non-positive groups is not supported");
  for (int64_t v : expand_param(stride, nd, "stride")) EMBER_CHECK(v > 0, Runtime, "non-positive stride is not supported");
  for (int64_t v : expand_param(padding, nd, "padding")) EMBER_CHECK(v >= 0, Runtime, "negative padding is not supported");
  for (int64_t v : expand_param(dilation, nd, "dilation"))
    EMBER_CHECK(v > 0, Runtime, "dilation should be greater than zero");
  if (transposed) {
    Dims op = expand_param(output_padding, nd, "output_padding"), s = expand_param(stride, nd, "stride"),
         d = expand_param(dilation, nd, "dilation");
    for (int64_t i = 0; i < nd; ++i) {
      EMBER_CHECK(op[i] >= 0, Runtime, "negative output_padding is not supported");
      EMBER_CHECK(op[i] < s[i] || op[i] < d[i], Runtime,
                  "output padding must be smaller than either stride or dilation, but got output_padding=", op[i],
                  ", stride=", s[i], ", dilation=", d[i]);
    }
  }
}

void check_conv_dtypes(const Tensor& input, const Tensor& weight, const Tensor& bias, bool transposed) {
  EMBER_CHECK(input.dtype() == weight.dtype(), Runtime, "Input type (", type_name(input.dtype()),
              ") and weight type (", type_name(weight.dtype()), ") should be the same");
  EMBER_CHECK(!bias.defined() || bias.dtype() == input.dtype(), Runtime, "Input type (", type_name(input.dtype()),
              ") and bias type (", type_name(bias.dtype()), ") should be the same");
  // torch computes integer convolutions too (wrapping around), its transposed ones for int64 alone
  const bool three_d = weight.dim() == 5;
  const char* kernel = transposed ? (three_d ? "slow_conv_transpose3d_out_cpu" : "slow_conv_transpose2d_out_cpu")
                                  : (three_d ? "compute_columns3d" : "slow_conv2d_cpu");
  const ScalarType t = input.dtype();
  EMBER_CHECK(is_floating(t) || (is_integral(t, false) && (!transposed || t == ScalarType::Int64)), NotImplemented,
              "\"", kernel, "\" not implemented for '", type_name(t), "'");
}

// The kernels' element type: float32 for float16/bfloat16, int64 for the integer dtypes.
ScalarType conv_compute_dtype(ScalarType t) {
  return is_integral(t, false) ? ScalarType::Int64 : compute_dtype(t);
}

// The output spatial sizes of a plain convolution (or the input ones of a transposed one).
Dims conv_output_spatial(IntList in_spatial, IntList kernel, IntList stride, IntList padding, IntList dilation,
                         IntList output_padding, bool transposed) {
  const int64_t nd = int64_t(in_spatial.size());
  Dims s = expand_param(stride, nd, "stride"), p = expand_param(padding, nd, "padding"),
       d = expand_param(dilation, nd, "dilation");
  Dims out(nd);
  for (int64_t i = 0; i < nd; ++i) {
    if (transposed) {
      const int64_t op = expand_param(output_padding, nd, "output_padding")[i];
      out[i] = (in_spatial[i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + op + 1;
    } else {
      out[i] = (in_spatial[i] + 2 * p[i] - d[i] * (kernel[i] - 1) - 1) / s[i] + 1;
    }
  }
  return out;
}

// The output shape of convolution(input, weight, ...) after torch's checks of the
// arguments (dims, parameters, channels and groups, a kernel that fits).
Dims conv_output_shape(IntList input, IntList weight, IntList stride, IntList padding, IntList dilation,
                       bool transposed, IntList output_padding, int64_t groups) {
  EMBER_CHECK(weight.size() >= 3 && weight.size() <= 5, Runtime,
              "convolution: expected a 3-D, 4-D or 5-D weight (1-D, 2-D or 3-D convolution), but got weight of size ",
              sizes_str(weight));
  const int64_t nd = int64_t(weight.size()) - 2;
  EMBER_CHECK(input.size() == weight.size(), Runtime, "Expected ", nd + 2, "-dimensional input for ", nd + 2,
              "-dimensional weight ", sizes_str(weight), ", but got ", input.size(), "-dimensional input of size ",
              sizes_str(input), " instead");
  for (int64_t v : input) EMBER_CHECK(v >= 0, Runtime, "convolution: negative size in input ", sizes_str(input));
  for (int64_t v : weight) EMBER_CHECK(v >= 0, Runtime, "convolution: negative size in weight ", sizes_str(weight));
  for (int64_t i = 2; i < nd + 2; ++i)
    EMBER_CHECK(weight[i] > 0, Runtime, "convolution: weight ", sizes_str(weight), " has an empty kernel");
  check_conv_params(stride, padding, dilation, output_padding, groups, nd, transposed);
  const int64_t cin = input[1];
  IntList ks(weight.data() + 2, size_t(nd)), in_sp(input.data() + 2, size_t(nd));
  EMBER_CHECK(weight[0] % groups == 0, Runtime, "Given groups=", groups, ", expected weight to be divisible by ",
              groups, " at dimension 0, but got weight of size ", sizes_str(weight), " instead");
  int64_t cout;
  if (transposed) {
    EMBER_CHECK(cin == weight[0], Runtime, "Given transposed=1, weight of size ", sizes_str(weight),
                ", expected input", sizes_str(input), " to have ", weight[0], " channels, but got ", cin,
                " channels instead");
    cout = weight[1] * groups;
  } else {
    EMBER_CHECK(cin == weight[1] * groups, Runtime, "Given groups=", groups, ", weight of size ", sizes_str(weight),
                ", expected input", sizes_str(input), " to have ", weight[1] * groups, " channels, but got ", cin,
                " channels instead");
    cout = weight[0];
    Dims p = expand_param(padding, nd, "padding"), d = expand_param(dilation, nd, "dilation");
    bool fits = true;
    std::string padded, kernel;
    for (int64_t i = 0; i < nd; ++i) {
      const int64_t span = in_sp[i] + 2 * p[i], need = d[i] * (ks[i] - 1) + 1;
      fits = fits && span >= need;
      padded += (i ? " x " : "") + std::to_string(span);
      kernel += (i ? " x " : "") + std::to_string(need);
    }
    EMBER_CHECK(fits, Runtime, "Calculated padded input size per channel: (", padded, "). Kernel size: (", kernel,
                "). Kernel size can't be greater than actual input size");
  }
  Dims out{input[0], cout};
  for (int64_t v : conv_output_spatial(in_sp, ks, stride, padding, dilation, output_padding, transposed))
    out.push_back(v);
  for (size_t i = 2; i < out.size(); ++i)
    EMBER_CHECK(out[i] > 0, Runtime, "convolution: the output size ", sizes_str(out), " is too small");
  return out;
}

// The backward ops' arguments describe one convolution: grad_output must have its output's shape.
void check_conv_grad(const Tensor& grad_output, IntList input, IntList weight, IntList stride, IntList padding,
                     IntList dilation, bool transposed, IntList output_padding, int64_t groups) {
  const Dims out =
      conv_output_shape(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  EMBER_CHECK(grad_output.sizes() == IntList(out), Runtime, "convolution backward: expected grad_output of size ",
              sizes_str(out), ", but got ", sizes_str(grad_output.sizes()));
}

// Note [Channels-last convolution]
// A convolution whose activation (the input; the gradient for the input's gradient) is
// channels_last computes in that layout (kernels/nn_conv.h): its operands are made dense
// in it, the weight too ((Cy, *k, Cx / groups) in memory), and the result is allocated in
// it, so a channels_last network pays no layout copies around its convolutions. Other
// calls compute row-major.
MemoryFormat conv_format(const Tensor& activation) {
  return activation.dim() >= 4 ? suggest_memory_format(activation) : MemoryFormat::Contiguous;
}

// The three products of kernels/nn_conv.h, on (a, b) = (x, w), (y, w) or (x, y) of the call's
// plain-convolution geometry, writing out.
enum class ConvPass { Forward, Input, Weight };

Tensor run_conv(ConvPass pass, const nk::Conv& c, ScalarType ct, const Tensor& a, const Tensor& b, Tensor out,
                const Tensor& bias) {
  double macs = double(c.N) * double(c.Cy) * double(c.Cx / c.groups);
  for (int i = 0; i < nk::kSpatial; ++i) macs *= double(c.ys[i]) * double(c.k[i]);
  PinnedWork work({&a, &b, &out, &bias}, macs > 1e15 ? int64_t(1e15) : int64_t(macs));
  auto visit = [&](auto&& f) {
    if (ct == ScalarType::Int64) f(int64_t());
    else visit_float(ct, f);
  };
  visit([&](auto tag) {
    using T = decltype(tag);
    switch (pass) {
      case ConvPass::Forward: return nk::Kernels<T>::conv_forward(c, ptr<T>(a), ptr<T>(b), ptr<T>(bias), ptr<T>(out));
      case ConvPass::Input: return nk::Kernels<T>::conv_backward_input(c, ptr<T>(a), ptr<T>(b), ptr<T>(bias), ptr<T>(out));
      case ConvPass::Weight: return nk::Kernels<T>::conv_backward_weight(c, ptr<T>(a), ptr<T>(b), ptr<T>(out));
    }
  });
  return out;
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride, IntList padding,
                   IntList dilation, bool transposed, IntList output_padding, int64_t groups) {
  check_conv_dtypes(input, weight, bias, transposed);
  const Dims out_sizes =
      conv_output_shape(input.sizes(), weight.sizes(), stride, padding, dilation, transposed, output_padding, groups);
  const int64_t cout = out_sizes[1];
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.sizes()[0] == cout), Runtime, "Given weight of size ",
              sizes_str(weight.sizes()), ", expected bias to be 1-dimensional with ", cout,
              " elements, but got bias of size ", sizes_str(bias.sizes()), " instead");
  const ScalarType ct = conv_compute_dtype(input.dtype());
  const MemoryFormat f = conv_format(input);
  Tensor x = dense_in(input, ct, f), w = dense_in(weight, ct, f), b = bias.defined() ? dense(bias, ct) : Tensor();
  Tensor out = empty_in(out_sizes, ct, f);
  if (transposed) {  // the gradient of a plain convolution's input, from `input` as its output
    nk::Conv call = conv_call(out_sizes, weight.sizes(), input.sizes(), stride, padding, dilation, groups);
    call.channels_last = f != MemoryFormat::Contiguous;
    run_conv(ConvPass::Input, call, ct, x, w, out, b);
  } else {
    nk::Conv call = conv_call(input.sizes(), weight.sizes(), out_sizes, stride, padding, dilation, groups);
    call.channels_last = f != MemoryFormat::Contiguous;
    run_conv(ConvPass::Forward, call, ct, x, w, out, b);
  }
  return in_layout_of(as_dtype(out, input.dtype()), input, weight);
}

Tensor _convolution_backward_input(const Tensor& grad_output, const Tensor& weight, IntList input_size,
                                   IntList stride, IntList padding, IntList dilation, bool transposed,
                                   IntList output_padding, int64_t groups) {
  check_floating(weight, "_convolution_backward_input");
  check_conv_grad(grad_output, input_size, weight.sizes(), stride, padding, dilation, transposed, output_padding,
                  groups);
  const ScalarType ct = compute_dtype(weight.dtype());
  const MemoryFormat f = conv_format(grad_output);
  Tensor g = dense_in(grad_output, ct, f), w = dense_in(weight, ct, f);
  Tensor out = empty_in(input_size, ct, f);
  if (transposed) {  // a plain convolution of the gradient
    nk::Conv call = conv_call(grad_output.sizes(), weight.sizes(), input_size, stride, padding, dilation, groups);
    call.channels_last = f != MemoryFormat::Contiguous;
    run_conv(ConvPass::Forward, call, ct, g, w, out, Tensor());
  } else {
    nk::Conv call = conv_call(input_size, weight.sizes(), grad_output.sizes(), stride, padding, dilation, groups);
    call.channels_last = f != MemoryFormat::Contiguous;
    run_conv(ConvPass::Input, call, ct, g, w, out, Tensor());
  }
  return in_layout_of(as_dtype(out, weight.dtype()), grad_output, weight);
}

Tensor _convolution_backward_weight(const Tensor& grad_output, const Tensor& input, IntList weight_size,
                                    IntList stride, IntList padding, IntList dilation, bool transposed,
                                    IntList output_padding, int64_t groups) {
  check_floating(input, "_convolution_backward_weight");
  check_conv_grad(grad_output, input.sizes(), weight_size, stride, padding, dilation, transposed, output_padding,
                  groups);
  const ScalarType ct = compute_dtype(input.dtype());
  const MemoryFormat f = conv_format(input);
  Tensor g = dense_in(grad_output, ct, f), x = dense_in(input, ct, f);
  Tensor out = empty_in(weight_size, ct, f);
  if (transposed) {  // the plain convolution maps grad_output (as x) to input (as y)
    nk::Conv call = conv_call(grad_output.sizes(), weight_size, input.sizes(), stride, padding, dilation, groups);
    call.channels_last = f != MemoryFormat::Contiguous;
    run_conv(ConvPass::Weight, call, ct, g, x, out, Tensor());
  } else {
    nk::Conv call = conv_call(input.sizes(), weight_size, grad_output.sizes(), stride, padding, dilation, groups);
    call.channels_last = f != MemoryFormat::Contiguous;
    run_conv(ConvPass::Weight, call, ct, x, g, out, Tensor());
  }
  return in_layout_of(as_dtype(out, input.dtype()), input, grad_output);
}

}  // namespace ember::ops
