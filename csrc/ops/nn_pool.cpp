// Max, average and adaptive pooling and their gradients (declarations/ops/nn_pool.yaml):
// window geometry and torch's checks, then kernels/nn_pool.h over (N * C) planes.
#include "kernels/nn_pool.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_pool;

// A pooling list argument: one value for every spatial dim, from one
// value or one per dim; `fallback` when absent (None or empty).
Dims spatial_list(std::optional<IntList> v, int64_t n, IntList fallback, const char* op, const char* name) {
  if (!v || v->empty()) return Dims(fallback);
  EMBER_CHECK(v->size() == 1 || int64_t(v->size()) == n, Runtime, op, ": ", name, " must either be a single int, or a tuple of ",
              n, " ints");
  Dims out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = (*v)[v->size() == 1 ? 0 : i];
  return out;
}

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

}  // namespace

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
      nk::Kernels<T>::max_pool2d(ptr<T>(x), ptr<T>(out), ptr<int64_t>(idx), g);
    });
  }
  return {in_layout_of(as_dtype(out, self.dtype()), self), in_layout_of(idx, self)};
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
      nk::Kernels<T>::avg_pool2d(ptr<T>(x), ptr<T>(out), a.g, a.count_include_pad, a.divisor);
    });
  }
  return in_layout_of(as_dtype(out, self.dtype()), self);
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
      nk::Kernels<T>::avg_pool2d_backward(ptr<T>(g), ptr<T>(gin), a.g, a.count_include_pad, a.divisor);
    });
  }
  return in_layout_of(as_dtype(gin, self.dtype()), self);
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
      nk::Kernels<T>::adaptive_avg_pool2d(ptr<T>(x), ptr<T>(out), g);
    });
  }
  return in_layout_of(as_dtype(out, self.dtype()), self);
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
      nk::Kernels<T>::adaptive_avg_pool2d_backward(ptr<T>(go), ptr<T>(gin), g);
    });
  }
  return in_layout_of(as_dtype(gin, self.dtype()), self);
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
      nk::Kernels<T>::adaptive_max_pool2d(ptr<T>(x), ptr<T>(out), ptr<int64_t>(idx), g);
    });
  }
  return {in_layout_of(as_dtype(out, self.dtype()), self), in_layout_of(idx, self)};
}

}  // namespace ember::ops
