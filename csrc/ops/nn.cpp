// The nn ops (declarations/ops/nn.yaml): checks, shapes and dtypes, then the kernels of
// kernels/nn.h. The kernels compute in float or double on contiguous memory: inputs are
// made contiguous here and float16/bfloat16 are computed in float32 and rounded back.
// Errors follow torch's (messages and Python exception types). The elementwise
// activations are kernel entries (kernels/activation_impl.h); only the manual ones are here.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include "core/parallel.h"
#include "kernels/nn.h"
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/pinned_work.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

namespace nk = kernels::nn;
using kernels::BinaryOp;
using kernels::UnaryOp;

// ---------------------------------------------------------------- helpers

ScalarType compute_dtype(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 ? ScalarType::Float32 : t;
}

Tensor as_dtype(const Tensor& t, ScalarType dt) {
  return t.dtype() == dt ? t : to_dtype(t, dt, false, false, std::nullopt);
}

// t as a contiguous tensor of dtype dt (the same tensor when it already is one).
Tensor dense(const Tensor& t, ScalarType dt) {
  Tensor r = contiguous(as_dtype(t, dt), MemoryFormat::Contiguous);
  check_bounds(r);
  return r;
}

// Calls f(T{}) with T = float or double for a compute dtype.
template <class F>
void visit_float(ScalarType t, F&& f) {
  if (t == ScalarType::Float64) f(double());
  else f(float());
}

template <class T>
T* ptr(const Tensor& t) {
  return t.defined() ? reinterpret_cast<T*>(t.data()) : nullptr;
}

void check_floating(const Tensor& t, const char* kernel) {
  EMBER_CHECK(is_floating(t.dtype()), NotImplemented, "\"", kernel, "\" not implemented for '", type_name(t.dtype()),
              "'");
}

int64_t product(IntList sizes, size_t from = 0, size_t to = size_t(-1)) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, sizes.size()); ++i) n *= sizes[i];
  return n;
}

// A pooling or convolution list argument: one value for every spatial dim, from one
// value or one per dim; `fallback` when absent (None or empty).
Dims spatial_list(std::optional<IntList> v, int64_t n, IntList fallback, const char* op, const char* name) {
  if (!v || v->empty()) return Dims(fallback);
  EMBER_CHECK(v->size() == 1 || int64_t(v->size()) == n, Runtime, op, ": ", name, " must either be a single int, or a tuple of ",
              n, " ints");
  Dims out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = (*v)[v->size() == 1 ? 0 : i];
  return out;
}

Tensor reduce_loss(const Tensor& loss, int64_t reduction) {
  if (reduction == 0) return loss;
  return reduction == 1 ? mean(loss, std::nullopt) : sum(loss, std::nullopt);
}

void check_reduction(int64_t reduction) {
  EMBER_CHECK(reduction >= 0 && reduction <= 2, Value, reduction, " is not a valid value for reduction");
}

Tensor number(double v) { return wrapped_number(Scalar(v)); }

// ---------------------------------------------------------------- softmax

Tensor softmax_forward(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  Tensor x = dtype ? as_dtype(self, *dtype) : self;
  check_floating(x, log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl");
  const int64_t d = wrap_dim(dim, x.dim());
  const ScalarType ct = compute_dtype(x.dtype());
  Tensor xc = dense(x, ct);
  Tensor out = empty_tensor(x.sizes(), ct);
  if (x.numel() > 0) {
    const int64_t n = x.dim() ? x.sizes()[d] : 1;
    const int64_t outer = x.dim() ? product(x.sizes(), 0, d) : 1, inner = x.dim() ? product(x.sizes(), d + 1) : 1;
    PinnedWork work({&xc, &out}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::softmax<T>(ptr<T>(xc), ptr<T>(out), outer, n, inner, log);
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
      nk::softmax_backward<T>(ptr<T>(g), ptr<T>(y), ptr<T>(gin), outer, n, inner, log);
    });
  }
  return as_dtype(gin, is_floating(input_dtype) ? input_dtype : output.dtype());
}

// ---------------------------------------------------------------- nll_loss

// self as (M, C, S) and target as (M, S): the layout both nll ops walk.
struct NllShape {
  int64_t M, C, S;
};

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

int64_t target_at(const Tensor& target, int64_t i) {
  return target.dtype() == ScalarType::UInt8 ? int64_t(reinterpret_cast<const uint8_t*>(target.data())[i])
                                             : reinterpret_cast<const int64_t*>(target.data())[i];
}

// Visits every (m, s) with its class t (ignored ones skipped) and that class's weight.
template <class T, class F>
void for_targets(const NllShape& s, const Tensor& target, const T* w, int64_t ignore_index, F&& f) {
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t q = 0; q < s.S; ++q) {
      const int64_t i = m * s.S + q;
      const int64_t t = target_at(target, i);
      if (t == ignore_index) continue;
      EMBER_CHECK(t >= 0 && t < s.C, Index, "Target ", t, " is out of bounds.");
      f(m, q, i, t, w ? w[t] : T(1));
    }
}

// ---------------------------------------------------------------- convolution

// The geometry of a convolution call, spatial dims made 2-D (1-D: height 1).
struct ConvCall {
  nk::Conv c;
  bool one_d;
};

Dims expand_param(IntList v, int64_t n, const char* name) {
  EMBER_CHECK(int64_t(v.size()) == n || v.size() == 1, Runtime, "expected ", name, " to be a single integer value or a list of ",
              n, " values to match the convolution dimensions, but got ", name, "=", sizes_str(v));
  Dims out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = v[v.size() == 1 ? 0 : i];
  return out;
}

// x: the input of the plain convolution this call is in the geometry of; y: its output.
ConvCall conv_call(IntList x_sizes, IntList w_sizes, IntList y_sizes, IntList stride, IntList padding,
                   IntList dilation, int64_t groups) {
  const int64_t nd = int64_t(w_sizes.size()) - 2;
  Dims s = expand_param(stride, nd, "stride"), p = expand_param(padding, nd, "padding"),
       d = expand_param(dilation, nd, "dilation");
  ConvCall call;
  call.one_d = nd == 1;
  nk::Conv& c = call.c;
  c.N = x_sizes[0];
  c.Cx = x_sizes[1];
  c.Cy = y_sizes[1];
  c.groups = groups;
  const int64_t o = nd == 1 ? 1 : 0;  // offset into the 2-D fields
  auto at = [&](IntList v, int64_t i) { return i < o ? int64_t(1) : v[2 + i - o]; };
  c.Hx = at(x_sizes, 0), c.Wx = at(x_sizes, 1);
  c.Hy = at(y_sizes, 0), c.Wy = at(y_sizes, 1);
  c.kh = at(w_sizes, 0), c.kw = at(w_sizes, 1);
  c.sh = o ? 1 : s[0], c.sw = s[nd - 1];
  c.ph = o ? 0 : p[0], c.pw = p[nd - 1];
  c.dh = o ? 1 : d[0], c.dw = d[nd - 1];
  return call;
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

void check_conv_dtypes(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(input.dtype() == weight.dtype(), Runtime, "Input type (", type_name(input.dtype()),
              ") and weight type (", type_name(weight.dtype()), ") should be the same");
  EMBER_CHECK(!bias.defined() || bias.dtype() == input.dtype(), Runtime, "Input type (", type_name(input.dtype()),
              ") and bias type (", type_name(bias.dtype()), ") should be the same");
  EMBER_CHECK(is_floating(input.dtype()), NotImplemented, "\"slow_conv2d_cpu\" not implemented for '",
              type_name(input.dtype()), "'");
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
  EMBER_CHECK(weight.size() == 3 || weight.size() == 4, Runtime,
              "convolution: expected a 3-D or 4-D weight (1-D or 2-D convolution), but got weight of size ",
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

// The three products of kernels/nn.h, on (a, b) = (x, w), (y, w) or (x, y) of the call's
// plain-convolution geometry, writing out.
enum class ConvPass { Forward, Input, Weight };

Tensor run_conv(ConvPass pass, const ConvCall& call, ScalarType ct, const Tensor& a, const Tensor& b, Tensor out,
                const Tensor& bias) {
  const nk::Conv& c = call.c;
  const double macs = double(c.N) * double(c.Cy) * double(c.Hy * c.Wy) * double(c.Cx / c.groups) * double(c.kh * c.kw);
  PinnedWork work({&a, &b, &out, &bias}, macs > 1e15 ? int64_t(1e15) : int64_t(macs));
  visit_float(ct, [&](auto tag) {
    using T = decltype(tag);
    switch (pass) {
      case ConvPass::Forward: return nk::conv_forward<T>(c, ptr<T>(a), ptr<T>(b), ptr<T>(bias), ptr<T>(out));
      case ConvPass::Input: return nk::conv_backward_input<T>(c, ptr<T>(a), ptr<T>(b), ptr<T>(bias), ptr<T>(out));
      case ConvPass::Weight: return nk::conv_backward_weight<T>(c, ptr<T>(a), ptr<T>(b), ptr<T>(out));
    }
  });
  return out;
}

// ---------------------------------------------------------------- pooling

Tensor as_planes(const Tensor& self, const char* op) {
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4, Runtime, op,
              "(): Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got: ",
              sizes_str(self.sizes()));
  for (int64_t d = 1; d < self.dim(); ++d)
    EMBER_CHECK(self.sizes()[d] > 0, Runtime, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                sizes_str(self.sizes()), " with dimension ", d, " being empty");
  return self;
}

int64_t pooling_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

nk::PoolGeometry pool_geometry(const Tensor& self, IntList k, IntList s, IntList p, IntList d, bool ceil_mode,
                               const char* op) {
  nk::PoolGeometry g;
  const int64_t nd = self.dim();
  g.planes = product(self.sizes(), 0, nd - 2);
  g.in_h = self.sizes()[nd - 2], g.in_w = self.sizes()[nd - 1];
  g.kh = k[0], g.kw = k[1], g.sh = s[0], g.sw = s[1], g.ph = p[0], g.pw = p[1], g.dh = d[0], g.dw = d[1];
  EMBER_CHECK(g.kh > 0 && g.kw > 0, Runtime, "kernel size should be greater than zero, but got kH: ", g.kh,
              " kW: ", g.kw);
  EMBER_CHECK(g.sh > 0 && g.sw > 0, Runtime, "stride should be greater than zero, but got dH: ", g.sh, " dW: ", g.sw);
  EMBER_CHECK(g.dh > 0 && g.dw > 0, Runtime, "dilation should be greater than zero, but got dilationH: ", g.dh,
              " dilationW: ", g.dw);
  EMBER_CHECK(g.ph >= 0 && g.pw >= 0 && g.ph <= (g.dh * (g.kh - 1) + 1) / 2 && g.pw <= (g.dw * (g.kw - 1) + 1) / 2,
              Runtime, op, ": pad should be at most half of effective kernel size, but got pad=", g.ph,
              ", kernel_size=", g.kh, " and dilation=", g.dh);
  g.out_h = pooling_output_size(g.in_h, g.kh, g.ph, g.sh, g.dh, ceil_mode);
  g.out_w = pooling_output_size(g.in_w, g.kw, g.pw, g.sw, g.dw, ceil_mode);
  EMBER_CHECK(g.out_h >= 1 && g.out_w >= 1, Runtime, "Given input size: (", product(self.sizes(), nd - 3, nd - 2), "x",
              g.in_h, "x", g.in_w, "). Calculated output size: (", product(self.sizes(), nd - 3, nd - 2), "x", g.out_h,
              "x", g.out_w, "). Output size is too small");
  return g;
}

Dims pooled_sizes(const Tensor& self, int64_t oh, int64_t ow) {
  Dims s(self.sizes());
  s[self.dim() - 2] = oh;
  s[self.dim() - 1] = ow;
  return s;
}

struct AvgPoolArgs {
  nk::PoolGeometry g;
  bool count_include_pad;
  int64_t divisor;
};

AvgPoolArgs avg_pool_args(const Tensor& self, IntList kernel_size, std::optional<IntList> stride,
                          std::optional<IntList> padding, bool ceil_mode, bool count_include_pad,
                          std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  as_planes(self, op);
  Dims k = spatial_list(kernel_size, 2, {}, op, "kernel_size");
  EMBER_CHECK(!kernel_size.empty(), Runtime, "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  Dims s = spatial_list(stride, 2, k, op, "stride");
  Dims p = spatial_list(padding, 2, {0, 0}, op, "padding");
  EMBER_CHECK(!divisor_override || *divisor_override != 0, Runtime, "divisor must be not zero");
  EMBER_CHECK(p[0] <= k[0] / 2 && p[1] <= k[1] / 2, Runtime,
              "pad should be smaller than or equal to half of kernel size, but got padW = ", p[1], ", padH = ", p[0],
              ", kW = ", k[1], ", kH = ", k[0]);
  AvgPoolArgs a;
  a.g = pool_geometry(self, k, s, p, {1, 1}, ceil_mode, op);
  a.count_include_pad = count_include_pad;
  a.divisor = divisor_override.value_or(0);
  return a;
}

nk::PoolGeometry adaptive_geometry(const Tensor& self, IntList output_size, const char* op) {
  as_planes(self, op);
  EMBER_CHECK(output_size.size() == 1 || output_size.size() == 2, Runtime, op,
              ": output_size must be 2, but got ", output_size.size());
  nk::PoolGeometry g{};
  const int64_t nd = self.dim();
  g.planes = product(self.sizes(), 0, nd - 2);
  g.in_h = self.sizes()[nd - 2], g.in_w = self.sizes()[nd - 1];
  g.out_h = output_size[0], g.out_w = output_size[output_size.size() - 1];
  EMBER_CHECK(g.out_h >= 0 && g.out_w >= 0, Runtime, op, ": elements of output_size must be greater than or equal to 0 but received {",
              g.out_h, ", ", g.out_w, "}");
  return g;
}

// ---------------------------------------------------------------- normalization

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

// indices flattened to a contiguous int64 tensor, each checked against [0, rows).
Tensor embedding_indices(const Tensor& indices, int64_t rows) {
  Tensor idx = dense(reshape(indices, {-1}), ScalarType::Int64);
  const int64_t* ix = ptr<int64_t>(idx);
  for (int64_t i = 0; i < idx.numel(); ++i)
    EMBER_CHECK(ix[i] >= 0 && ix[i] < rows, Index, "index out of range in self");
  return idx;
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

// ================================================================ softmax

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

// ================================================================ losses

Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                   int64_t ignore_index) {
  const NllShape s = check_nll(self, target, weight, reduction);
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor x = dense(self, ct), t = dense(target, target.dtype()), w = weight.defined() ? dense(weight, ct) : Tensor();
  Tensor out;
  visit_float(ct, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = ptr<T>(x);
    if (reduction == 0) {
      out = zeros(target.sizes(), ct);
      T* o = ptr<T>(out);
      for_targets<T>(s, t, ptr<T>(w), ignore_index, [&](int64_t m, int64_t q, int64_t i, int64_t c, T wc) {
        o[i] = -wc * xp[(m * s.C + c) * s.S + q];
      });
      return;
    }
    double total = 0, weights = 0;
    for_targets<T>(s, t, ptr<T>(w), ignore_index, [&](int64_t m, int64_t q, int64_t, int64_t c, T wc) {
      total -= double(wc) * double(xp[(m * s.C + c) * s.S + q]);
      weights += double(wc);
    });
    out = scalar_tensor(Scalar(reduction == 1 ? total / weights : total), ct);
  });
  return as_dtype(out, self.dtype());
}

Tensor _nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                          int64_t reduction, int64_t ignore_index) {
  const NllShape s = check_nll(self, target, weight, reduction);
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor t = dense(target, target.dtype()), w = weight.defined() ? dense(weight, ct) : Tensor();
  Tensor gin = zeros(self.sizes(), ct);
  Tensor g = dense(reduction == 0 ? expand(grad_output, target.sizes(), false) : grad_output, ct);
  EMBER_CHECK(reduction == 0 || g.numel() == 1, Runtime, "nll_loss backward: expected a one-element grad_output");
  visit_float(ct, [&](auto tag) {
    using T = decltype(tag);
    T* gp = ptr<T>(gin);
    const T* go = ptr<T>(g);
    T scale = T(1);
    if (reduction == 1) {
      double weights = 0;
      for_targets<T>(s, t, ptr<T>(w), ignore_index, [&](int64_t, int64_t, int64_t, int64_t, T wc) { weights += wc; });
      scale = T(1.0 / weights);
    }
    for_targets<T>(s, t, ptr<T>(w), ignore_index, [&](int64_t m, int64_t q, int64_t i, int64_t c, T wc) {
      gp[(m * s.C + c) * s.S + q] = -wc * (reduction == 0 ? go[i] : go[0] * scale);
    });
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

// ================================================================ manual activations

Tensor gelu(const Tensor& self, const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", Runtime,
              "approximate argument must be either none or tanh.");
  return unary(approximate == "tanh" ? UnaryOp::gelu_tanh : UnaryOp::gelu,
               {"GeluKernelImpl", Promote::Same, DTypes::Floating}, self, {}, Out{});
}

Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", Runtime,
              "approximate argument must be either none or tanh.");
  return binary(approximate == "tanh" ? BinaryOp::gelu_tanh_backward : BinaryOp::gelu_backward,
                {"GeluBackwardKernelImpl", Promote::Common, DTypes::Floating}, grad_output, self, {}, Out{});
}

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val, const Out& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, Runtime, "Bool inputs not supported for hardtanh");
  return unary(UnaryOp::hardtanh, {"hardtanh", Promote::Same, DTypes::NoBool}, self, {min_val, max_val}, out);
}

// ================================================================ convolution

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride, IntList padding,
                   IntList dilation, bool transposed, IntList output_padding, int64_t groups) {
  check_conv_dtypes(input, weight, bias);
  const Dims out_sizes =
      conv_output_shape(input.sizes(), weight.sizes(), stride, padding, dilation, transposed, output_padding, groups);
  const int64_t cout = out_sizes[1];
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.sizes()[0] == cout), Runtime, "Given weight of size ",
              sizes_str(weight.sizes()), ", expected bias to be 1-dimensional with ", cout,
              " elements, but got bias of size ", sizes_str(bias.sizes()), " instead");
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor x = dense(input, ct), w = dense(weight, ct), b = bias.defined() ? dense(bias, ct) : Tensor();
  Tensor out = empty_tensor(out_sizes, ct);
  if (transposed) {  // the gradient of a plain convolution's input, from `input` as its output
    ConvCall call = conv_call(out_sizes, weight.sizes(), input.sizes(), stride, padding, dilation, groups);
    run_conv(ConvPass::Input, call, ct, x, w, out, b);
  } else {
    ConvCall call = conv_call(input.sizes(), weight.sizes(), out_sizes, stride, padding, dilation, groups);
    run_conv(ConvPass::Forward, call, ct, x, w, out, b);
  }
  return as_dtype(out, input.dtype());
}

Tensor _convolution_backward_input(const Tensor& grad_output, const Tensor& weight, IntList input_size,
                                   IntList stride, IntList padding, IntList dilation, bool transposed,
                                   IntList output_padding, int64_t groups) {
  check_floating(weight, "_convolution_backward_input");
  check_conv_grad(grad_output, input_size, weight.sizes(), stride, padding, dilation, transposed, output_padding,
                  groups);
  const ScalarType ct = compute_dtype(weight.dtype());
  Tensor g = dense(grad_output, ct), w = dense(weight, ct);
  Tensor out = empty_tensor(input_size, ct);
  if (transposed) {  // a plain convolution of the gradient
    ConvCall call = conv_call(grad_output.sizes(), weight.sizes(), input_size, stride, padding, dilation, groups);
    run_conv(ConvPass::Forward, call, ct, g, w, out, Tensor());
  } else {
    ConvCall call = conv_call(input_size, weight.sizes(), grad_output.sizes(), stride, padding, dilation, groups);
    run_conv(ConvPass::Input, call, ct, g, w, out, Tensor());
  }
  return as_dtype(out, weight.dtype());
}

Tensor _convolution_backward_weight(const Tensor& grad_output, const Tensor& input, IntList weight_size,
                                    IntList stride, IntList padding, IntList dilation, bool transposed,
                                    IntList output_padding, int64_t groups) {
  check_floating(input, "_convolution_backward_weight");
  check_conv_grad(grad_output, input.sizes(), weight_size, stride, padding, dilation, transposed, output_padding,
                  groups);
  const ScalarType ct = compute_dtype(input.dtype());
  Tensor g = dense(grad_output, ct), x = dense(input, ct);
  Tensor out = empty_tensor(weight_size, ct);
  if (transposed) {  // the plain convolution maps grad_output (as x) to input (as y)
    ConvCall call = conv_call(grad_output.sizes(), weight_size, input.sizes(), stride, padding, dilation, groups);
    run_conv(ConvPass::Weight, call, ct, g, x, out, Tensor());
  } else {
    ConvCall call = conv_call(input.sizes(), weight_size, grad_output.sizes(), stride, padding, dilation, groups);
    run_conv(ConvPass::Weight, call, ct, x, g, out, Tensor());
  }
  return as_dtype(out, input.dtype());
}

// ================================================================ pooling

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntList kernel_size,
                                                   std::optional<IntList> stride, std::optional<IntList> padding,
                                                   std::optional<IntList> dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  as_planes(self, op);
  EMBER_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2, Runtime,
              "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  Dims k = spatial_list(kernel_size, 2, {}, op, "kernel_size");
  Dims s = spatial_list(stride, 2, k, op, "stride");
  Dims p = spatial_list(padding, 2, {0, 0}, op, "padding");
  Dims d = spatial_list(dilation, 2, {1, 1}, op, "dilation");
  EMBER_CHECK(self.dtype() != ScalarType::Bool, NotImplemented, "\"max_pool2d\" not implemented for 'Bool'");
  check_floating(self, "max_pool2d");
  const nk::PoolGeometry g = pool_geometry(self, k, s, p, d, ceil_mode, op);
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor x = dense(self, ct);
  Tensor out = empty_tensor(pooled_sizes(self, g.out_h, g.out_w), ct);
  Tensor idx = empty_tensor(out.sizes(), ScalarType::Int64);
  if (out.numel() > 0) {
    PinnedWork work({&x, &out, &idx}, out.numel() * g.kh * g.kw);
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::max_pool2d<T>(ptr<T>(x), ptr<T>(out), ptr<int64_t>(idx), g);
    });
  }
  return {as_dtype(out, self.dtype()), idx};
}

Tensor avg_pool2d(const Tensor& self, IntList kernel_size, std::optional<IntList> stride,
                  std::optional<IntList> padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  const AvgPoolArgs a = avg_pool_args(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_floating(self, "avg_pool2d");
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor x = dense(self, ct);
  Tensor out = empty_tensor(pooled_sizes(self, a.g.out_h, a.g.out_w), ct);
  if (out.numel() > 0) {
    PinnedWork work({&x, &out}, out.numel() * a.g.kh * a.g.kw);
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::avg_pool2d<T>(ptr<T>(x), ptr<T>(out), a.g, a.count_include_pad, a.divisor);
    });
  }
  return as_dtype(out, self.dtype());
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntList kernel_size,
                           std::optional<IntList> stride, std::optional<IntList> padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override) {
  const AvgPoolArgs a = avg_pool_args(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_floating(self, "avg_pool2d_backward");
  const ScalarType ct = compute_dtype(self.dtype());
  EMBER_CHECK(grad_output.sizes() == IntList(pooled_sizes(self, a.g.out_h, a.g.out_w)), Runtime,
              "avg_pool2d_backward: grad_output of size ", sizes_str(grad_output.sizes()),
              " does not match the pooled size");
  Tensor g = dense(grad_output, ct);
  Tensor gin = empty_tensor(self.sizes(), ct);
  if (gin.numel() > 0) {
    PinnedWork work({&g, &gin}, g.numel() * a.g.kh * a.g.kw);
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::avg_pool2d_backward<T>(ptr<T>(g), ptr<T>(gin), a.g, a.count_include_pad, a.divisor);
    });
  }
  return as_dtype(gin, self.dtype());
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntList output_size) {
  const nk::PoolGeometry g = adaptive_geometry(self, output_size, "adaptive_avg_pool2d");
  check_floating(self, "adaptive_avg_pool2d");
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor x = dense(self, ct);
  Tensor out = empty_tensor(pooled_sizes(self, g.out_h, g.out_w), ct);
  if (out.numel() > 0) {
    PinnedWork work({&x, &out}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::adaptive_avg_pool2d<T>(ptr<T>(x), ptr<T>(out), g);
    });
  }
  return as_dtype(out, self.dtype());
}

Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  check_floating(self, "_adaptive_avg_pool2d_backward");
  const int64_t nd = self.dim();
  bool same_planes = grad_output.dim() == nd && nd >= 3;
  for (int64_t d = 0; same_planes && d < nd - 2; ++d) same_planes = grad_output.sizes()[d] == self.sizes()[d];
  EMBER_CHECK(same_planes, Runtime, "_adaptive_avg_pool2d_backward: grad_output of size ",
              sizes_str(grad_output.sizes()), " does not match self of size ", sizes_str(self.sizes()));
  const nk::PoolGeometry g =
      adaptive_geometry(self, {grad_output.sizes()[nd - 2], grad_output.sizes()[nd - 1]}, "adaptive_avg_pool2d");
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor go = dense(grad_output, ct);
  Tensor gin = empty_tensor(self.sizes(), ct);
  if (gin.numel() > 0) {
    PinnedWork work({&go, &gin}, gin.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::adaptive_avg_pool2d_backward<T>(ptr<T>(go), ptr<T>(gin), g);
    });
  }
  return as_dtype(gin, self.dtype());
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntList output_size) {
  const nk::PoolGeometry g = adaptive_geometry(self, output_size, "adaptive_max_pool2d");
  check_floating(self, "adaptive_max_pool2d");
  const ScalarType ct = compute_dtype(self.dtype());
  Tensor x = dense(self, ct);
  Tensor out = empty_tensor(pooled_sizes(self, g.out_h, g.out_w), ct);
  Tensor idx = empty_tensor(out.sizes(), ScalarType::Int64);
  if (out.numel() > 0) {
    PinnedWork work({&x, &out, &idx}, x.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::adaptive_max_pool2d<T>(ptr<T>(x), ptr<T>(out), ptr<int64_t>(idx), g);
    });
  }
  return {as_dtype(out, self.dtype()), idx};
}

// ================================================================ normalization

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
  Tensor x = dense(input, ct), w = weight.defined() ? dense(weight, ct) : Tensor(),
         b = bias.defined() ? dense(bias, ct) : Tensor();
  std::vector<double> mean(C), var(C), invstd(C);
  const bool batch_stats = training || !running_mean.defined() || !running_var.defined();
  if (batch_stats) {
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::channel_moments<T>(ptr<T>(x), N, C, S, mean.data(), var.data());
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
      nk::channel_affine<T>(ptr<T>(x), ptr<T>(out), N, C, S, mean.data(), invstd.data(), ptr<T>(w), ptr<T>(b));
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
  return {as_dtype(out, input.dtype()), as_dtype(save_mean, ct), as_dtype(save_invstd, ct)};
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
      nk::batch_norm_backward<T>(ptr<T>(g), ptr<T>(x), N, C, S, mean.data(), invstd.data(), ptr<T>(w), train,
                                 ptr<T>(gx), ptr<T>(gw), ptr<T>(gb));
    });
  }
  const ScalarType wt = weight.defined() ? weight.dtype() : input.dtype();
  return {as_dtype(gx, input.dtype()), as_dtype(gw, wt), as_dtype(gb, wt)};
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
      nk::layer_norm<T>(ptr<T>(x), ptr<T>(w), ptr<T>(b), ptr<T>(out), ptr<T>(mean), ptr<T>(rstd), rows, n, eps, false);
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
      nk::layer_norm_backward<T>(ptr<T>(g), ptr<T>(x), ptr<T>(m), ptr<T>(r), ptr<T>(w), ptr<T>(gx), ptr<T>(gw),
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
      nk::group_norm<T>(ptr<T>(x), ptr<T>(w), ptr<T>(b), ptr<T>(out), ptr<T>(mean), ptr<T>(rstd), N, C, HxW, group,
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
      nk::group_norm_backward<T>(ptr<T>(g), ptr<T>(x), ptr<T>(m), ptr<T>(r), ptr<T>(w), ptr<T>(gx), ptr<T>(gw),
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
      nk::layer_norm<T>(ptr<T>(x), ptr<T>(w), nullptr, ptr<T>(out), nullptr, ptr<T>(rstd), rows, n,
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
      nk::layer_norm_backward<T>(ptr<T>(g), ptr<T>(x), nullptr, ptr<T>(r), ptr<T>(w), ptr<T>(gx), ptr<T>(gw), nullptr,
                                 rows, n, true);
    });
  }
  return {as_dtype(gx, input.dtype()), gw.defined() ? as_dtype(gw, weight.dtype()) : gw};
}

// ================================================================ embedding

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;  // they shape the gradient only
  EMBER_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32, Runtime,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got ",
              "torch.", type_name(indices.dtype()), "Tensor instead (while checking arguments for embedding)");
  EMBER_CHECK(weight.dim() == 2, Runtime, "'weight' must be 2-D");
  const Tensor idx = embedding_indices(indices, weight.sizes()[0]);
  const int64_t n = idx.numel(), row_bytes = weight.sizes()[1] * weight.itemsize();
  Dims sizes(indices.sizes());
  sizes.push_back(weight.sizes()[1]);
  Tensor out = empty_tensor(sizes, weight.dtype());
  if (out.numel() == 0) return out;
  const Tensor w = dense(weight, weight.dtype());
  const int64_t* ix = ptr<int64_t>(idx);
  const char* src = w.data();
  char* dst = out.data();
  PinnedWork work({&w, &idx, &out}, out.numel());
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize * 4 / std::max<int64_t>(row_bytes, 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * row_bytes, src + ix[i] * row_bytes, size_t(row_bytes));
  });
  return out;
}

Tensor embedding_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse) {
  (void)sparse;  // ember's gradients are dense
  EMBER_CHECK(num_weights >= 0, Runtime, "embedding_backward: num_weights must be non-negative, got ", num_weights);
  check_floating(grad_output, "embedding_backward");
  const Tensor idx = embedding_indices(indices, num_weights);
  const int64_t n = idx.numel();
  const int64_t dim = grad_output.dim() ? grad_output.sizes()[grad_output.dim() - 1] : 1;
  EMBER_CHECK(grad_output.numel() == n * dim, Runtime, "embedding_backward: grad of size ",
              sizes_str(grad_output.sizes()), " does not match ", n, " indices");
  const ScalarType ct = compute_dtype(grad_output.dtype());
  const Tensor g = dense(grad_output, ct);
  Tensor out = zeros({num_weights, dim}, ct);
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(size_t(num_weights), 0);
    for (int64_t i = 0; i < n; ++i) ++counts[size_t(ptr<int64_t>(idx)[i])];
  }
  if (n > 0 && dim > 0) {
    PinnedWork work({&g, &idx, &out}, g.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      const T* gp = ptr<T>(g);
      const int64_t* ix = ptr<int64_t>(idx);
      T* op = ptr<T>(out);
      // Threads take slices of the embedding dim, so rows that repeat never race.
      const int64_t slices =
          n * dim < kGrainSize ? 1 : std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, dim / 16));
      parallel_for(0, slices, 1, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
          const int64_t c0 = dim * s / slices, c1 = dim * (s + 1) / slices;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t r = ix[i];
            if (r == padding_idx) continue;
            const T scale = scale_grad_by_freq ? T(1) / T(counts[size_t(r)]) : T(1);
            const T* gr = gp + i * dim;
            T* orow = op + r * dim;
            for (int64_t c = c0; c < c1; ++c) orow[c] += gr[c] * scale;
          }
        }
      });
    });
  }
  return as_dtype(out, grad_output.dtype());
}

}  // namespace ember::ops
