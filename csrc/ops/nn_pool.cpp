// Max, average and adaptive pooling over 2 or 3 spatial dims and their gradients
// (declarations/ops/nn_pool.yaml): window geometry and torch's checks, then
// kernels/nn_pool.h over (N * C) planes, a 2-d pool being a 3-d one of depth 1.
#include <type_traits>
#include "kernels/nn_pool.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_pool;

// Calls f(T{}) with T the element type of compute dtype t: float, double or an integer
// type (the ops refuse the dtypes torch refuses before they get here).
template <class F>
void visit_pooled(ScalarType t, F&& f) {
  launch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      fail(ErrorKind::Runtime, "pooling: no kernel for ", type_name(t));
    else
      f(T());
  });
}

void refuse_dtype(const Tensor& self, const char* kernel) {
  fail(ErrorKind::NotImplemented, "\"", kernel, "\" not implemented for '", type_name(self.dtype()), "'");
}

// A pooling list argument: one value for every spatial dim, from one
// value or one per dim; `fallback` when absent (None or empty).
Dims spatial_list(std::optional<IntList> v, int64_t n, IntList fallback, const char* op, const char* name) {
  if (!v || v->empty()) return Dims(fallback);
  EMBER_CHECK(v->size() == 1 || int64_t(v->size()) == n, Runtime, op, ": ", name,
              " must either be a single int, or a tuple of ", n == 2 ? "two" : "three", " ints");
  Dims out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = (*v)[v->size() == 1 ? 0 : i];
  return out;
}

// The input of a windowed (max or average) pool over n spatial dims: (N, C, *) or (C, *).
void check_window_input(const Tensor& self, int64_t n, const char* op) {
  if (n == 2) {
    EMBER_CHECK(self.dim() == 3 || self.dim() == 4, Runtime, op,
                "(): Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got: ",
                sizes_str(self.sizes()));
    for (int64_t d = 1; d < self.dim(); ++d)
      EMBER_CHECK(self.sizes()[d] > 0, Runtime, op,
                  "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                  sizes_str(self.sizes()), " with dimension ", d, " being empty");
    return;
  }
  EMBER_CHECK(self.dim() == 4 || self.dim() == 5, Runtime, "non-empty 4D or 5D (batch mode) tensor expected for input");
  for (int64_t d = self.dim() - 4; d < self.dim(); ++d)
    EMBER_CHECK(self.sizes()[d] > 0, Runtime, op,
                "(): Expected input's non-batch dimensions to have positive length, but input has a shape of ",
                sizes_str(self.sizes()), " and non-batch dimension ", d - (self.dim() - 4), " has length zero!");
}

void check_adaptive_input(const Tensor& self, int64_t n, const char* op) {
  EMBER_CHECK(self.dim() == n + 1 || self.dim() == n + 2, Runtime, op, "(): Expected ", n + 1, "D or ", n + 2,
              "D tensor, but got", std::string_view(op).find("max") != std::string_view::npos ? ": " : " ",
              sizes_str(self.sizes()));
  for (int64_t d = 1; d < self.dim(); ++d)
    EMBER_CHECK(self.sizes()[d] > 0, Runtime, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                sizes_str(self.sizes()), " with dimension ", d, " being empty");
}

int64_t pooling_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// The planes and the (D, H, W) sizes of self's last n dims, a 2-d input of depth 1.
nk::PoolGeometry planes_of(const Tensor& self, int64_t n) {
  nk::PoolGeometry g{};
  const int64_t nd = self.dim();
  g.planes = product(self.sizes(), 0, nd - n);
  for (int i = 0; i < 3; ++i) {
    g.in[i] = g.out[i] = g.k[i] = g.s[i] = g.d[i] = 1;
    g.p[i] = 0;
  }
  for (int64_t i = 0; i < n; ++i) g.in[3 - n + i] = self.sizes()[nd - n + i];
  return g;
}

std::string joined(const int64_t* v, int64_t n) {
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += (i ? "x" : "") + std::to_string(v[i]);
  return s;
}

nk::PoolGeometry window_geometry(const Tensor& self, int64_t n, IntList k, IntList s, IntList p, IntList d,
                                 bool ceil_mode, const char* op) {
  nk::PoolGeometry g = planes_of(self, n);
  const int64_t first = 3 - n;
  for (int64_t i = 0; i < n; ++i)
    g.k[first + i] = k[i], g.s[first + i] = s[i], g.p[first + i] = p[i], g.d[first + i] = d[i];
  if (n == 2) {
    EMBER_CHECK(g.k[1] > 0 && g.k[2] > 0, Runtime, "kernel size should be greater than zero, but got kH: ", g.k[1],
                " kW: ", g.k[2]);
    EMBER_CHECK(g.s[1] > 0 && g.s[2] > 0, Runtime, "stride should be greater than zero, but got dH: ", g.s[1],
                " dW: ", g.s[2]);
    EMBER_CHECK(g.d[1] > 0 && g.d[2] > 0, Runtime, "dilation should be greater than zero, but got dilationH: ",
                g.d[1], " dilationW: ", g.d[2]);
  } else {
    EMBER_CHECK(g.k[0] > 0 && g.k[1] > 0 && g.k[2] > 0, Runtime, "kernel size should be greater than zero, but got kT: ",
                g.k[0], " kH: ", g.k[1], " kW: ", g.k[2]);
    EMBER_CHECK(g.s[0] > 0 && g.s[1] > 0 && g.s[2] > 0, Runtime, "stride should not be zero");
    EMBER_CHECK(g.d[0] > 0 && g.d[1] > 0 && g.d[2] > 0, Runtime,
                "dilation should be greater than zero, but got dilationT: ", g.d[0], " dilationH: ", g.d[1],
                " dilationW: ", g.d[2]);
  }
  for (int i = first; i < 3; ++i)
    EMBER_CHECK(g.p[i] >= 0 && g.p[i] <= (g.d[i] * (g.k[i] - 1) + 1) / 2, Runtime, n == 2 ? op : "",
                n == 2 ? ": " : "", "pad should be at most half of effective kernel size, but got pad=", g.p[i],
                ", kernel_size=", g.k[i], " and dilation=", g.d[i]);
  bool ok = true;
  for (int i = first; i < 3; ++i) {
    g.out[i] = pooling_output_size(g.in[i], g.k[i], g.p[i], g.s[i], g.d[i], ceil_mode);
    ok = ok && g.out[i] >= 1;
  }
  const int64_t channels = self.sizes()[self.dim() - n - 1];
  EMBER_CHECK(ok, Runtime, "Given input size: (", channels, "x", joined(g.in + first, n),
              "). Calculated output size: (", channels, "x", joined(g.out + first, n), "). Output size is too small");
  return g;
}

Dims pooled_sizes(const Tensor& self, int64_t n, const nk::PoolGeometry& g) {
  Dims s(self.sizes());
  for (int64_t i = 0; i < n; ++i) s[self.dim() - n + i] = g.out[3 - n + i];
  return s;
}

// Note [Channels-last pooling]
// A batched input (N, C, *spatial) in channels_last pools in that layout: the kernels'
// planes become the samples, with the C channels innermost (kernels/nn_pool.h), so each
// window is read as contiguous runs of channels and no layout copies are made. The
// geometry the kernels get says so; the layout of the result (and gradient) is the
// input's. Unbatched and row-major inputs pool plane by plane.
MemoryFormat pool_format(const Tensor& self, int64_t n) {
  return self.dim() == n + 2 ? suggest_memory_format(self) : MemoryFormat::Contiguous;
}

nk::PoolGeometry in_format(nk::PoolGeometry g, const Tensor& self, MemoryFormat f) {
  if (f != MemoryFormat::Contiguous) {
    g.channels_last = true;
    g.channels = self.sizes()[1];
    g.planes = self.sizes()[0];
  }
  return g;
}

// The computed (output, indices) of a max pool, or the output of an average one:
// run(x, y, indices, kernels, geometry). Without keep_layout the results are contiguous
// whatever the input's layout (torch's avg_pool3d and the adaptive 3-d pools).
template <class Run>
Tensor pooled(const Tensor& self, int64_t n, const nk::PoolGeometry& g, Tensor* indices, int64_t work, Run run,
              bool keep_layout = true) {
  const ScalarType ct = compute_dtype(self.dtype());
  const MemoryFormat f = pool_format(self, n);
  const nk::PoolGeometry geometry = in_format(g, self, f);
  Tensor x = dense_in(self, ct, f);
  Tensor out = empty_in(pooled_sizes(self, n, g), ct, f);
  if (indices) *indices = empty_in(out.sizes(), ScalarType::Int64, f);
  if (out.numel() > 0) {
    const Tensor none;
    PinnedWork pin({&x, &out, indices ? indices : &none}, work);
    visit_pooled(ct, [&](auto tag) {
      using T = decltype(tag);
      run(ptr<T>(x), ptr<T>(out), indices ? ptr<int64_t>(*indices) : nullptr, nk::Kernels<T>(), geometry);
    });
  }
  if (!keep_layout) {
    if (indices) *indices = contiguous(*indices, MemoryFormat::Contiguous);
    return contiguous(as_dtype(out, self.dtype()), MemoryFormat::Contiguous);
  }
  if (indices) *indices = in_layout_of(*indices, self);
  return in_layout_of(as_dtype(out, self.dtype()), self);
}

std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& self, int64_t n, IntList kernel_size,
                                                 std::optional<IntList> stride, std::optional<IntList> padding,
                                                 std::optional<IntList> dilation, bool ceil_mode) {
  const char* op = n == 2 ? "max_pool2d" : "max_pool3d";
  check_window_input(self, n, n == 2 ? op : "max_pool3d_with_indices_out_cpu_template");
  EMBER_CHECK(kernel_size.size() == 1 || int64_t(kernel_size.size()) == n, Runtime, op,
              ": kernel_size must either be a single int, or a tuple of ", n == 2 ? "two" : "three", " ints");
  Dims k = spatial_list(kernel_size, n, {}, op, "kernel_size");
  Dims s = spatial_list(stride, n, k, op, "stride");
  Dims p = spatial_list(padding, n, Dims(n, 0), op, "padding");
  Dims d = spatial_list(dilation, n, Dims(n, 1), op, "dilation");
  if (self.dtype() == ScalarType::Bool) refuse_dtype(self, op);
  const nk::PoolGeometry g = window_geometry(self, n, k, s, p, d, ceil_mode, op);
  Tensor idx;
  Tensor out = pooled(self, n, g, &idx, product(pooled_sizes(self, n, g)) * g.k[0] * g.k[1] * g.k[2],
                      [&](auto* x, auto* y, int64_t* i, auto kernels, const nk::PoolGeometry& pg) {
                        kernels.max_pool(x, y, i, pg);
                      });
  return {out, idx};
}

struct AvgPoolArgs {
  nk::PoolGeometry g;
  bool count_include_pad;
  int64_t divisor;
};

AvgPoolArgs avg_pool_args(const Tensor& self, int64_t n, IntList kernel_size, std::optional<IntList> stride,
                          std::optional<IntList> padding, bool ceil_mode, bool count_include_pad,
                          std::optional<int64_t> divisor_override) {
  const char* op = n == 2 ? "avg_pool2d" : "avg_pool3d";
  check_window_input(self, n, op);
  EMBER_CHECK(!kernel_size.empty(), Runtime, op, ": kernel_size must either be a single int, or a tuple of ",
              n == 2 ? "two" : "three", " ints");
  Dims k = spatial_list(kernel_size, n, {}, op, "kernel_size");
  Dims s = spatial_list(stride, n, k, op, "stride");
  Dims p = spatial_list(padding, n, Dims(n, 0), op, "padding");
  EMBER_CHECK(!divisor_override || *divisor_override != 0, Runtime, "divisor must be not zero");
  if (n == 2) {
    EMBER_CHECK(p[0] <= k[0] / 2 && p[1] <= k[1] / 2, Runtime,
                "pad should be smaller than or equal to half of kernel size, but got padW = ", p[1], ", padH = ", p[0],
                ", kW = ", k[1], ", kH = ", k[0]);
  } else {
    const int64_t nd = self.dim();
    const int64_t t = self.sizes()[nd - 3], h = self.sizes()[nd - 2], w = self.sizes()[nd - 1];
    EMBER_CHECK(k[0] > 0 && k[1] > 0 && k[2] > 0, Runtime, "kernel size should be greater than zero, but got kT: ",
                k[0], " kH: ", k[1], " kW: ", k[2]);
    EMBER_CHECK(t >= k[0] && h >= k[1] && w >= k[2], Runtime, "input image (T: ", t, " H: ", h, " W: ", w,
                ") smaller than kernel size (kT: ", k[0], " kH: ", k[1], " kW: ", k[2], ")");
  }
  AvgPoolArgs a;
  a.g = window_geometry(self, n, k, s, p, Dims(n, 1), ceil_mode, op);
  a.count_include_pad = count_include_pad;
  a.divisor = divisor_override.value_or(0);
  return a;
}

// torch averages floats and int64 (avg_pool3d: not float16/bfloat16).
void check_avg_dtype(const Tensor& self, int64_t n) {
  const ScalarType t = self.dtype();
  const bool half = t == ScalarType::Float16 || t == ScalarType::BFloat16;
  if (n == 3 && half) refuse_dtype(self, "avg_pool3d_out_frame");
  if (!is_floating(t) && t != ScalarType::Int64) refuse_dtype(self, n == 2 ? "avg_pool2d" : "avg_pool3d_out_frame");
}

Tensor avg_pool(const Tensor& self, int64_t n, IntList kernel_size, std::optional<IntList> stride,
                std::optional<IntList> padding, bool ceil_mode, bool count_include_pad,
                std::optional<int64_t> divisor_override) {
  const AvgPoolArgs a =
      avg_pool_args(self, n, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_avg_dtype(self, n);
  return pooled(self, n, a.g, nullptr, product(pooled_sizes(self, n, a.g)) * a.g.k[0] * a.g.k[1] * a.g.k[2],
                [&](auto* x, auto* y, int64_t*, auto kernels, const nk::PoolGeometry& pg) {
                  kernels.avg_pool(x, y, pg, a.count_include_pad, a.divisor);
                }, n == 2);
}

Tensor avg_pool_backward(const Tensor& grad_output, const Tensor& self, int64_t n, IntList kernel_size,
                         std::optional<IntList> stride, std::optional<IntList> padding, bool ceil_mode,
                         bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = n == 2 ? "avg_pool2d_backward" : "avg_pool3d_backward";
  const AvgPoolArgs a =
      avg_pool_args(self, n, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_floating(self, op);
  EMBER_CHECK(grad_output.sizes() == IntList(pooled_sizes(self, n, a.g)), Runtime, op, ": grad_output of size ",
              sizes_str(grad_output.sizes()), " does not match the pooled size");
  const ScalarType ct = compute_dtype(self.dtype());
  const MemoryFormat f = pool_format(self, n);
  const nk::PoolGeometry geometry = in_format(a.g, self, f);
  Tensor g = dense_in(grad_output, ct, f);
  Tensor gin = empty_in(self.sizes(), ct, f);
  if (gin.numel() > 0) {
    PinnedWork work({&g, &gin}, g.numel() * a.g.k[0] * a.g.k[1] * a.g.k[2]);
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::avg_pool_backward(ptr<T>(g), ptr<T>(gin), geometry, a.count_include_pad, a.divisor);
    });
  }
  return in_layout_of(as_dtype(gin, self.dtype()), self);
}

nk::PoolGeometry adaptive_geometry(const Tensor& self, int64_t n, IntList output_size, const char* op) {
  check_adaptive_input(self, n, op);
  if (n == 2)
    EMBER_CHECK(output_size.size() == 1 || output_size.size() == 2, Runtime, op, ": output_size must be 2, but got ",
                output_size.size());
  else
    EMBER_CHECK(output_size.size() == 3, Runtime, op, ": output_size must be 3");
  nk::PoolGeometry g = planes_of(self, n);
  for (int64_t i = 0; i < n; ++i) g.out[3 - n + i] = output_size[output_size.size() == 1 ? 0 : i];
  bool ok = true;
  std::string shown;
  for (int64_t i = 0; i < n; ++i) {
    ok = ok && g.out[3 - n + i] >= 0;
    shown += (i == 0 ? "" : i == 2 ? "," : ", ") + std::to_string(g.out[3 - n + i]);  // torch's spacing
  }
  EMBER_CHECK(ok, Runtime, op, ": elements of output_size must be greater than or equal to 0 but received {", shown,
              "}");
  return g;
}

Tensor adaptive_avg_pool(const Tensor& self, int64_t n, IntList output_size) {
  const char* op = n == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  const nk::PoolGeometry g = adaptive_geometry(self, n, output_size, op);
  if (!is_floating(self.dtype())) refuse_dtype(self, n == 2 ? op : "adaptive_avg_pool3d_cpu");
  return pooled(self, n, g, nullptr, self.numel(),
                [&](auto* x, auto* y, int64_t*, auto kernels, const nk::PoolGeometry& pg) {
                  kernels.adaptive_avg_pool(x, y, pg);
                }, n == 2);
}

Tensor adaptive_avg_pool_backward(const Tensor& grad_output, const Tensor& self, int64_t n) {
  const char* op = n == 2 ? "_adaptive_avg_pool2d_backward" : "_adaptive_avg_pool3d_backward";
  check_floating(self, op);
  const int64_t nd = self.dim();
  bool same_planes = grad_output.dim() == nd && nd > n;
  for (int64_t d = 0; same_planes && d < nd - n; ++d) same_planes = grad_output.sizes()[d] == self.sizes()[d];
  EMBER_CHECK(same_planes, Runtime, op, ": grad_output of size ", sizes_str(grad_output.sizes()),
              " does not match self of size ", sizes_str(self.sizes()));
  const nk::PoolGeometry g =
      adaptive_geometry(self, n, IntList(grad_output.sizes().data() + nd - n, size_t(n)),
                        n == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d");
  const ScalarType ct = compute_dtype(self.dtype());
  const MemoryFormat f = pool_format(self, n);
  const nk::PoolGeometry geometry = in_format(g, self, f);
  Tensor go = dense_in(grad_output, ct, f);
  Tensor gin = empty_in(self.sizes(), ct, f);
  if (gin.numel() > 0) {
    PinnedWork work({&go, &gin}, gin.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::adaptive_avg_pool_backward(ptr<T>(go), ptr<T>(gin), geometry);
    });
  }
  return in_layout_of(as_dtype(gin, self.dtype()), self);
}

std::tuple<Tensor, Tensor> adaptive_max_pool(const Tensor& self, int64_t n, IntList output_size) {
  const char* op = n == 2 ? "adaptive_max_pool2d" : "adaptive_max_pool3d";
  if (n == 3 && output_size.size() != 3) {
    check_adaptive_input(self, n, op);
    fail(ErrorKind::Runtime, "adaptive_max_pool3d(): internal error: output_size.size() must be 3");
  }
  const nk::PoolGeometry g = adaptive_geometry(self, n, output_size, op);
  if (!is_floating(self.dtype())) refuse_dtype(self, n == 2 ? op : "adaptive_max_pool3d_cpu");
  Tensor idx;
  Tensor out = pooled(self, n, g, &idx, self.numel(),
                      [&](auto* x, auto* y, int64_t* i, auto kernels, const nk::PoolGeometry& pg) {
                        kernels.adaptive_max_pool(x, y, i, pg);
                      }, n == 2);
  return {out, idx};
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntList kernel_size,
                                                   std::optional<IntList> stride, std::optional<IntList> padding,
                                                   std::optional<IntList> dilation, bool ceil_mode) {
  return max_pool_with_indices(self, 2, kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntList kernel_size,
                                                   std::optional<IntList> stride, std::optional<IntList> padding,
                                                   std::optional<IntList> dilation, bool ceil_mode) {
  return max_pool_with_indices(self, 3, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool2d(const Tensor& self, IntList kernel_size, std::optional<IntList> stride,
                  std::optional<IntList> padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return avg_pool(self, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

Tensor avg_pool3d(const Tensor& self, IntList kernel_size, std::optional<IntList> stride,
                  std::optional<IntList> padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return avg_pool(self, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntList kernel_size,
                           std::optional<IntList> stride, std::optional<IntList> padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_backward(grad_output, self, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override);
}

Tensor avg_pool3d_backward(const Tensor& grad_output, const Tensor& self, IntList kernel_size,
                           std::optional<IntList> stride, std::optional<IntList> padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_backward(grad_output, self, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntList output_size) { return adaptive_avg_pool(self, 2, output_size); }
Tensor adaptive_avg_pool3d(const Tensor& self, IntList output_size) { return adaptive_avg_pool(self, 3, output_size); }

Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  return adaptive_avg_pool_backward(grad_output, self, 2);
}
Tensor _adaptive_avg_pool3d_backward(const Tensor& grad_output, const Tensor& self) {
  return adaptive_avg_pool_backward(grad_output, self, 3);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntList output_size) {
  return adaptive_max_pool(self, 2, output_size);
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntList output_size) {
  return adaptive_max_pool(self, 3, output_size);
}

}  // namespace ember::ops
