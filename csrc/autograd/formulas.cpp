// The helpers of the backward formulas (see formulas.h). Everything here is written
// with ember::api so that it records when run under create_graph.
#include "autograd/formulas.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include "autograd/record.h"
#include "ops/internal.h"

namespace ember::api {
namespace {

const Scalar kOne(int64_t(1));

std::vector<int64_t> reduced_dims(IntList sizes, std::optional<IntList> dim) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  if (!dim || dim->empty()) {
    for (int64_t d = 0; d < n; ++d) dims.push_back(d);
  } else {
    for (int64_t d : *dim) dims.push_back(wrap_dim(d, n));
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

Tensor positions(IntList sizes) {  // arange(numel).view(sizes): where each element sits
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return ops::view(ops::arange(Scalar(n), ScalarType::Int64), sizes);
}

// Zeros of `sizes` plus grad added at the flat positions idx (idx shaped like grad).
Tensor scatter_flat(const Tensor& grad, IntList sizes, const Tensor& idx) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Tensor flat = index_add(zeros_of(IntList{n}, grad.dtype()), 0, ops::reshape(idx, IntList{-1}),
                          reshape(grad, IntList{-1}), kOne);
  return view(flat, sizes);
}

Tensor as_dtype(const Tensor& t, ScalarType dt) {
  return t.dtype() == dt ? t : to_dtype(t, dt, false, false, std::nullopt);
}

}  // namespace

Tensor operator+(const Tensor& a, const Tensor& b) { return add_Tensor(a, b, kOne); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub_Tensor(a, b, kOne); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul_Tensor(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div_Tensor(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator*(const Tensor& a, double s) { return mul_Tensor(a, scalar(s, a)); }
Tensor operator*(double s, const Tensor& a) { return mul_Tensor(a, scalar(s, a)); }
Tensor operator/(const Tensor& a, double s) { return div_Tensor(a, scalar(s, a)); }
Tensor operator+(const Tensor& a, double s) { return add_Tensor(a, scalar(s, a), kOne); }
Tensor operator-(const Tensor& a, double s) { return sub_Tensor(a, scalar(s, a), kOne); }
Tensor operator-(double s, const Tensor& a) { return sub_Tensor(scalar(s, a), a, kOne); }
Tensor operator*(const Tensor& a, const Scalar& s) {
  if (s.is_integral() && !s.is_bool() && s.to_int64() == 1) return a;
  return mul_Tensor(a, ops::wrapped_number(s));
}
Tensor operator/(const Tensor& a, const Scalar& s) { return div_Tensor(a, ops::wrapped_number(s)); }

Tensor scalar(double v, const Tensor& like) {
  return ops::scalar_tensor(Scalar(v), is_inexact(like.dtype()) ? like.dtype() : ScalarType::Float32);
}
Tensor zeros_of(IntList sizes, ScalarType dtype) { return ops::zeros(sizes, dtype); }
Tensor zero_grad_like(const Tensor& grad) { return ops::zeros_like(grad, std::nullopt, std::nullopt); }
Tensor masked_grad(const Tensor& grad, const Tensor& mask) {
  return where_self(mask, grad, scalar(0.0, grad));
}
Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }
Tensor mH(const Tensor& t) { return conj(mT(t)); }

// ---- broadcasting and reductions ----

Tensor sum_to(const Tensor& grad, IntList shape) {
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && grad.sizes()[lead + i] != 1) dims.push_back(lead + static_cast<int64_t>(i));
  if (dims.empty()) return grad.sizes() == shape ? grad : reshape(grad, shape);
  Tensor s = sum_dim_IntList(grad, IntList(dims), true, std::nullopt);
  return reshape(s, shape);
}

Tensor unsqueeze_reduced(const Tensor& t, IntList sizes, std::optional<IntList> dim, bool keepdim) {
  if (keepdim || sizes.empty()) return t;
  Tensor r = t;
  for (int64_t d : reduced_dims(sizes, dim)) r = unsqueeze(r, d);
  return r;
}

Tensor expand_reduced(const Tensor& grad, IntList sizes, std::optional<IntList> dim, bool keepdim) {
  return expand(unsqueeze_reduced(grad, sizes, dim, keepdim), sizes, false);
}

int64_t reduced_numel(IntList sizes, std::optional<IntList> dim) {
  int64_t n = 1;
  for (int64_t d : reduced_dims(sizes, dim)) n *= sizes[d];
  return n;
}

Tensor nanmean_backward(const Tensor& grad, const Tensor& self, std::optional<IntList> dim, bool keepdim) {
  Tensor keep = as_dtype(logical_not(isnan(self)), grad.dtype());
  Tensor count = sum_dim_IntList(keep, dim, true, std::nullopt);
  return expand_reduced(grad, self.sizes(), dim, keepdim) * keep / count;
}

namespace {
// For each element, the product of the others along dim (exact with zeros).
Tensor product_of_others(const Tensor& x, int64_t d) {
  const int64_t n = x.sizes()[d];
  if (n <= 1) return ones_like(x, std::nullopt, std::nullopt);
  Tensor ones = ones_like(narrow(x, d, 0, 1), std::nullopt, std::nullopt);
  Tensor left = cat({ones, cumprod(narrow(x, d, 0, n - 1), d, std::nullopt)}, d);
  Tensor xr = flip(x, IntList{d});
  Tensor right = flip(cat({ones, cumprod(narrow(xr, d, 0, n - 1), d, std::nullopt)}, d), IntList{d});
  return left * right;
}
}  // namespace

Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor&, std::optional<IntList> dim, bool keepdim) {
  if (self.dim() == 0) return grad;
  if (!dim) {
    Tensor flat = reshape(self, IntList{-1});
    return reshape(grad * product_of_others(flat, 0), self.sizes());
  }
  const int64_t d = wrap_dim((*dim)[0], self.dim());
  return expand_reduced(grad, self.sizes(), dim, keepdim) * product_of_others(self, d);
}

Tensor extremum_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<IntList> dim,
                         bool keepdim) {
  Tensor r = unsqueeze_reduced(result, self.sizes(), dim, keepdim);
  Tensor mask = as_dtype(eq_Tensor(self, r), grad.dtype());
  Tensor count = sum_dim_IntList(mask, dim ? dim : std::optional<IntList>(), true, std::nullopt);
  return expand_reduced(grad, self.sizes(), dim, keepdim) * mask / count;
}

Tensor aminmax_backward(const Tensor& gmin, const Tensor& gmax, const Tensor& self, const Tensor& min,
                        const Tensor& max, std::optional<int64_t> dim, bool keepdim) {
  std::vector<int64_t> d;
  if (dim) d.push_back(*dim);
  std::optional<IntList> dims = dim ? std::optional<IntList>(IntList(d)) : std::nullopt;
  return extremum_backward(gmin, self, min, dims, keepdim) + extremum_backward(gmax, self, max, dims, keepdim);
}

Tensor index_backward_dim(const Tensor& grad, IntList sizes, int64_t dim, const Tensor& indices, bool keepdim) {
  if (sizes.empty()) return reshape(grad, sizes);
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  Tensor g = keepdim ? grad : unsqueeze(grad, d);
  Tensor idx = keepdim ? indices : ops::unsqueeze(indices, d);
  return scatter_add(zeros_of(sizes, grad.dtype()), d, idx, g);
}

Tensor var_backward(const Tensor& grad, const Tensor& self, std::optional<IntList> dim, double correction,
                    bool keepdim) {
  const double n = static_cast<double>(reduced_numel(self.sizes(), dim));
  Tensor mean = mean_dim(self, dim, true, std::nullopt);
  return expand_reduced(grad, self.sizes(), dim, keepdim) * (self - mean) * (2.0 / (n - correction));
}

Tensor std_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<IntList> dim,
                    double correction, bool keepdim) {
  Tensor g = masked_fill_Scalar(grad / (result * 2.0), eq_Tensor(result, scalar(0.0, result)), Scalar(0.0));
  return var_backward(g, self, dim, correction, keepdim);
}

Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntList dim, bool keepdim) {
  std::optional<IntList> d(dim);
  return unsqueeze_reduced(grad, self.sizes(), d, keepdim) * exp(self - unsqueeze_reduced(result, self.sizes(), d, keepdim));
}

Tensor norm_backward(const Tensor& grad, const Tensor& self, const Tensor& result, const Scalar& ord,
                     std::optional<IntList> dim, bool keepdim) {
  const double p = ord.to_double();
  Tensor g = unsqueeze_reduced(grad, self.sizes(), dim, keepdim);
  Tensor r = unsqueeze_reduced(result, self.sizes(), dim, keepdim);
  Tensor zero = scalar(0.0, g);
  if (p == 0.0) return zero_grad_like(self);
  // sgn: sign, or z / |z| for a complex input
  if (p == 1.0) return sgn(self) * g;
  if (std::isinf(p)) {
    Tensor mask = as_dtype(eq_Tensor(abs(self), r), g.dtype());
    Tensor count = sum_dim_IntList(mask, dim, true, std::nullopt);
    return sgn(self) * g * mask / count;
  }
  Tensor scale;
  if (p == 2.0) {
    scale = g / r;
  } else {
    scale = g * pow_Tensor(abs(self), scalar(p - 2.0, self)) / pow_Tensor(r, scalar(p - 1.0, r));
  }
  Tensor out = self * scale;
  return masked_fill_Scalar(out, eq_Tensor(r, zero), Scalar(0.0));
}

Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result) {
  if (self.dim() == 0) return grad;
  const int64_t d = wrap_dim(dim, self.dim());
  auto revcumsum = [&](const Tensor& t) { return flip(cumsum(flip(t, IntList{d}), d, std::nullopt), IntList{d}); };
  Tensor is_zero = eq_Tensor(self, scalar(0.0, self));
  Tensor count = cumsum(is_zero, d, ScalarType::Int64);  // zeros up to and including each position
  Tensor none_yet = eq_Tensor(count, ops::scalar_tensor(Scalar(int64_t(0)), ScalarType::Int64));
  Tensor one = scalar(1.0, self);
  // Before the first zero: sum_{j>=i} g_j r_j / x_i.
  Tensor simple = revcumsum(grad * result) / where_self(is_zero, one, self);
  if (!ops::item(ops::any(is_zero, std::nullopt, false)).to_bool()) return simple;
  // At the first zero: sum_{j>=i} g_j * (the product up to j with that zero taken as 1).
  Tensor first = logical_and(is_zero, eq_Tensor(count, ops::scalar_tensor(Scalar(int64_t(1)), ScalarType::Int64)));
  Tensor c = cumprod(where_self(first, one, self), d, std::nullopt);
  Tensor at_first = sum_dim_IntList(masked_grad(grad * c, logical_not(none_yet)), IntList{d}, true, std::nullopt);
  Tensor zero = scalar(0.0, self);
  return where_self(none_yet, simple, where_self(first, expand(at_first, self.sizes(), false), zero));
}

Tensor cummaxmin_backward(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t dim) {
  if (self.dim() == 0) return grad;
  return scatter_add(zeros_of(self.sizes(), grad.dtype()), wrap_dim(dim, self.dim()), indices, grad);
}

Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim) {
  if (self.dim() == 0) return grad;
  const int64_t d = wrap_dim(dim, self.dim());
  auto rev_lcse = [&](const Tensor& t) { return flip(logcumsumexp(flip(t, IntList{d}), d), IntList{d}); };
  // complex: g_i = conj(e^{x_i}) sum_{j>=i} g_j conj(e^{-y_j}) = exp(conj(x_i) + lcse_{j>=i}(log g_j -
  // conj(y_j))), one pass: the complex log carries grad's sign as its phase (log 0 = -inf adds nothing)
  if (is_complex(self.dtype())) {
    const Tensor g = is_complex(grad.dtype()) ? grad : to_dtype(grad, self.dtype(), false, false, std::nullopt);
    return exp(rev_lcse(log(g) - conj(result)) + conj(self));
  }
  Tensor pos = exp(rev_lcse(log(relu(grad)) - result) + self);
  Tensor neg_ = exp(rev_lcse(log(relu(-grad)) - result) + self);
  return pos - neg_;
}

// ---- views ----

Tensor permute_backward(const Tensor& grad, IntList dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inv(n);
  for (int64_t i = 0; i < n; ++i) inv[wrap_dim(dims[i], n)] = i;
  return permute(grad, IntList(inv));
}

// The gradient of a view that reads each element of its base at most once (narrow,
// select, slice, diagonal): zeros of the base with grad written into the view's region.
// A graph being recorded (create_graph) takes the differentiable scatter instead.
template <class Region>
Tensor region_backward(const Tensor& grad, IntList sizes, Region&& region) {
  if (autograd::grad_enabled()) return scatter_flat(grad, sizes, region(positions(sizes)));
  Tensor out = zeros_of(sizes, grad.dtype());
  ops::copy_(region(out), grad, false);
  return out;
}

Tensor narrow_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t start, int64_t length) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  const int64_t d = wrap_dim(dim, n);
  if (start < 0) start += sizes[d];
  return region_backward(grad, sizes, [&](const Tensor& t) { return ops::narrow(t, d, start, length); });
}

Tensor select_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t index) {
  return region_backward(grad, sizes, [&](const Tensor& t) { return ops::select(t, dim, index); });
}

Tensor slice_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  return region_backward(grad, sizes, [&](const Tensor& t) { return ops::slice(t, dim, start, stop, step); });
}

Tensor unfold_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t size, int64_t step) {
  return scatter_flat(grad, sizes, ops::unfold(positions(sizes), dim, size, step));
}

Tensor diagonal_backward(const Tensor& grad, IntList sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  return region_backward(grad, sizes, [&](const Tensor& t) { return ops::diagonal(t, offset, dim1, dim2); });
}

// Only the input's geometry is saved, never the input: a tensor written in place through an
// as_strided view has CopySlices for history, which reaches this node again (a cycle).
Tensor as_strided_backward(const Tensor& grad, IntList self_sizes, IntList self_strides, int64_t self_offset,
                           IntList size, IntList stride, std::optional<int64_t> storage_offset) {
  // Work in the input's storage coordinates, from the smaller of the two offsets.
  const int64_t view_offset = storage_offset.value_or(self_offset);
  const int64_t base = std::min(view_offset, self_offset);
  auto extent = [](IntList sz, IntList st, int64_t off) {
    int64_t e = off + 1;
    for (size_t i = 0; i < sz.size(); ++i) {
      if (sz[i] == 0) return int64_t(0);
      e += (sz[i] - 1) * st[i];
    }
    return e;
  };
  const int64_t n = std::max(extent(size, stride, view_offset - base), extent(self_sizes, self_strides, self_offset - base));
  Tensor storage = ops::arange(Scalar(std::max<int64_t>(n, 1)), ScalarType::Int64);
  Tensor view_pos = ops::as_strided(storage, size, stride, view_offset - base);
  Tensor self_pos = ops::as_strided(storage, self_sizes, self_strides, self_offset - base);
  Tensor flat = scatter_flat(grad, IntList{std::max<int64_t>(n, 1)}, view_pos);
  return reshape(index_select(flat, 0, ops::reshape(self_pos, IntList{-1})), self_sizes);
}

Tensor cat_pieces(const std::vector<Tensor>& grads, IntList sizes, int64_t dim) {
  return cat(grads, wrap_dim(dim, static_cast<int64_t>(sizes.size())));
}

// ---- joining and data movement ----

std::vector<Tensor> split_like(const Tensor& grad, const std::vector<Dims>& sizes, int64_t dim) {
  const int64_t d = wrap_dim(dim, grad.dim());
  std::vector<Tensor> out;
  int64_t pos = 0;
  for (const Dims& s : sizes) {
    if (s.size() == 1 && s[0] == 0 && grad.dim() != 1) {  // legacy empty tensors cat skips
      out.push_back(zeros_of(s, grad.dtype()));
      continue;
    }
    const int64_t len = s.size() == 0 ? 1 : s[static_cast<size_t>(std::min<int64_t>(d, s.size() - 1))];
    out.push_back(reshape(narrow(grad, d, pos, len), s));
    pos += len;
  }
  return out;
}

// vstack/dstack: the inputs were made at least ndim-d (atleast_2d/3d), then joined along dim.
std::vector<Tensor> split_stacked(const Tensor& grad, const std::vector<Dims>& sizes, int64_t dim, size_t ndim) {
  std::vector<Tensor> out;
  int64_t pos = 0;
  for (const Dims& s : sizes) {
    const int64_t len = s.size() >= ndim ? s[static_cast<size_t>(dim)] : 1;
    out.push_back(reshape(narrow(grad, dim, pos, len), s));
    pos += len;
  }
  return out;
}

Tensor roll_backward(const Tensor& grad, IntList shifts, IntList dims) {
  std::vector<int64_t> neg_shifts;
  for (int64_t s : shifts) neg_shifts.push_back(-s);
  return roll(grad, IntList(neg_shifts), dims);
}

Tensor repeat_backward(const Tensor& grad, IntList sizes, IntList repeats) {
  const size_t lead = repeats.size() - sizes.size();
  std::vector<int64_t> shape, sum_dims;
  for (size_t i = 0; i < repeats.size(); ++i) {
    const int64_t s = i < lead ? 1 : sizes[i - lead];
    sum_dims.push_back(static_cast<int64_t>(shape.size()));
    shape.push_back(repeats[i]);
    shape.push_back(s);
  }
  for (int64_t s : shape)
    if (s == 0) return zeros_of(sizes, grad.dtype());
  Tensor g = reshape(grad, IntList(shape));
  return reshape(sum_dim_IntList(g, IntList(sum_dims), false, std::nullopt), sizes);
}

Tensor tile_backward(const Tensor& grad, IntList sizes, IntList reps) {
  std::vector<int64_t> r(reps.begin(), reps.end());
  while (r.size() < sizes.size()) r.insert(r.begin(), 1);
  return repeat_backward(grad, sizes, IntList(r));
}

Tensor masked_select_backward(const Tensor& grad, IntList sizes, const Tensor& mask) {
  // the result came from self and mask broadcast together
  const size_t n = std::max(sizes.size(), static_cast<size_t>(mask.dim()));
  std::vector<int64_t> shape(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = i + sizes.size() >= n ? sizes[i + sizes.size() - n] : 1;
    const int64_t b = i + mask.dim() >= n ? mask.sizes()[i + mask.dim() - n] : 1;
    shape[i] = a == 1 ? b : a;
  }
  return masked_scatter(zeros_of(IntList(shape), grad.dtype()), ops::expand(mask, IntList(shape), false), grad);
}

Tensor take_backward(const Tensor& grad, IntList sizes, const Tensor& index) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Tensor idx = ops::reshape(index, IntList{-1});
  Tensor wrapped = ops::where_self(ops::lt_Tensor(idx, ops::scalar_tensor(Scalar(int64_t(0)), ScalarType::Int64)),
                                   ops::add_Tensor(idx, ops::scalar_tensor(Scalar(n), ScalarType::Int64), kOne), idx);
  return scatter_flat(reshape(grad, IntList{-1}), sizes, wrapped);
}

Tensor index_select_like(const Tensor& grad, int64_t dim, const Tensor& index, IntList source_sizes) {
  Tensor g = index_select(grad, dim, ops::reshape(index, IntList{-1}));
  return source_sizes.empty() || g.dim() == static_cast<int64_t>(source_sizes.size()) ? g : reshape(g, source_sizes);
}

Tensor masked_scatter_source_grad(const Tensor& grad, const Tensor& mask, IntList source_sizes) {
  int64_t n = 1;
  for (int64_t s : source_sizes) n *= s;
  Tensor taken = masked_select(grad, mask);
  const int64_t k = taken.numel();
  if (k < n) taken = cat({taken, zeros_of(IntList{n - k}, grad.dtype())}, 0);
  return reshape(taken, source_sizes);
}

Tensor diag_backward(const Tensor& grad, IntList sizes, int64_t diagonal_) {
  if (sizes.size() == 1) return diagonal(grad, diagonal_, 0, 1);
  return diagonal_backward(grad, sizes, diagonal_, 0, 1);
}

Tensor trace_backward(const Tensor& grad, IntList sizes) {
  Tensor eye = ops::eye_m(sizes[0], sizes[1], grad.dtype());
  return expand(grad, sizes, false) * eye;
}

Tensor repeat_interleave_backward(const Tensor& grad, IntList sizes, int64_t repeats, std::optional<int64_t> dim) {
  if (!dim) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return reshape(sum_dim_IntList(reshape(grad, IntList{n, repeats}), IntList{1}, false, std::nullopt), sizes);
  }
  const int64_t d = wrap_dim(*dim, static_cast<int64_t>(sizes.size()));
  std::vector<int64_t> shape(sizes.begin(), sizes.end());
  shape.insert(shape.begin() + d + 1, repeats);
  return sum_dim_IntList(reshape(grad, IntList(shape)), IntList{d + 1}, false, std::nullopt);
}

Tensor repeat_interleave_tensor_backward(const Tensor& grad, IntList sizes, const Tensor& repeats,
                                        std::optional<int64_t> dim) {
  if (!dim) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    Tensor index = ops::repeat_interleave_self_Tensor(ops::arange(Scalar(n), ScalarType::Int64), repeats, 0,
                                                      std::nullopt);
    return reshape(index_add(zeros_of(IntList{n}, grad.dtype()), 0, index, reshape(grad, IntList{-1}), kOne), sizes);
  }
  const int64_t d = wrap_dim(*dim, static_cast<int64_t>(sizes.size()));
  Tensor index = ops::repeat_interleave_self_Tensor(ops::arange(Scalar(sizes.empty() ? 1 : sizes[d]), ScalarType::Int64),
                                                    repeats, 0, std::nullopt);
  if (sizes.empty()) return reshape(sum(grad, std::nullopt), sizes);
  return index_add(zeros_of(sizes, grad.dtype()), d, index, grad, kOne);
}

Tensor take_along_dim_backward(const Tensor& grad, IntList sizes, const Tensor& indices, std::optional<int64_t> dim) {
  if (!dim) return take_backward(grad, sizes, indices);
  const int64_t d = wrap_dim(*dim, grad.dim());
  std::vector<int64_t> shape(grad.sizes().begin(), grad.sizes().end());
  shape[d] = sizes[d];  // the broadcast shape, with self's length along dim
  Tensor idx = ops::expand(indices, grad.sizes(), false);
  return scatter_add(zeros_of(IntList(shape), grad.dtype()), d, idx, grad);  // summed to self's shape by the engine
}

std::vector<Tensor> meshgrid_backward(const std::vector<Tensor>& grads, const std::vector<Dims>& sizes,
                                      const std::optional<std::string>& indexing) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  const bool xy = indexing && *indexing == "xy" && n >= 2;
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t own = xy && i < 2 ? 1 - i : i;  // the output dim input i varies along
    std::vector<int64_t> others;
    for (int64_t d = 0; d < n; ++d)
      if (d != own) others.push_back(d);
    Tensor g = others.empty() ? grads[i] : sum_dim_IntList(grads[i], IntList(others), false, std::nullopt);
    out.push_back(reshape(g, sizes[i]));
  }
  return out;
}

std::vector<Tensor> cartesian_prod_backward(const Tensor& grad, const std::vector<Dims>& sizes) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  if (n == 1) return {reshape(grad, sizes[0])};
  std::vector<int64_t> lens;
  for (const Dims& s : sizes) lens.push_back(s.size() ? s[0] : 1);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    Tensor g = reshape(select(grad, 1, i), IntList(lens));
    std::vector<int64_t> others;
    for (int64_t d = 0; d < n; ++d)
      if (d != i) others.push_back(d);
    out.push_back(reshape(sum_dim_IntList(g, IntList(others), false, std::nullopt), sizes[i]));
  }
  return out;
}

Tensor scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                               const Tensor& src, const std::string& reduce, bool include_self, const Tensor& result,
                               bool for_self) {
  const int64_t d = self.dim() == 0 ? 0 : wrap_dim(dim, self.dim());
  Tensor zero = scalar(0.0, grad);
  // Positions of self that received no element of src keep self (and its gradient).
  Tensor hit = ops::scatter_value(ops::zeros_like(self, ScalarType::Bool, std::nullopt), d, index, Scalar(true));
  if (reduce == "sum") {
    if (for_self) return include_self ? grad : where_self(hit, zero, grad);
    return gather(grad, d, index, false);
  }
  if (reduce == "mean") {
    Tensor ones = ops::ones_like(src, grad.dtype(), std::nullopt);
    Tensor count = ops::scatter_add(ops::full_like(self, Scalar(include_self ? 1.0 : 0.0), grad.dtype(), std::nullopt),
                                    d, index, ones);
    count = ops::where_self(ops::eq_Tensor(count, ops::scalar_tensor(Scalar(0.0), grad.dtype())),
                            ops::scalar_tensor(Scalar(1.0), grad.dtype()), count);
    Tensor g = grad / count;
    if (for_self) return include_self ? g : where_self(hit, zero, g);
    return gather(g, d, index, false);
  }
  if (reduce == "amax" || reduce == "amin") {
    // Shared evenly among the elements (of self, if included, and of src) equal to the result.
    Tensor src_wins = as_dtype(eq_Tensor(src, gather(result, d, index, false)), grad.dtype());
    Tensor self_wins = as_dtype(eq_Tensor(self, result), grad.dtype());
    if (!include_self) self_wins = where_self(hit, zero, self_wins);
    Tensor count = scatter_add(self_wins, d, index, src_wins);
    Tensor g = grad / where_self(eq_Tensor(count, zero), scalar(1.0, grad), count);
    if (for_self) return g * self_wins;
    return gather(g, d, index, false) * src_wins;
  }
  fail(ErrorKind::NotImplemented, "the derivative for 'scatter_reduce' with reduce='", reduce, "' is not implemented.");
}

// ---- pointwise ----

Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps) {
  Tensor g = grad / (self * (1.0 - self));
  if (eps) {
    Tensor out = logical_or(lt_Tensor(self, scalar(*eps, self)), gt_Tensor(self, scalar(1.0 - *eps, self)));
    return masked_fill_Scalar(g, out, Scalar(0.0));
  }
  Tensor out = logical_or(lt_Tensor(self, scalar(0.0, self)), gt_Tensor(self, scalar(1.0, self)));
  return masked_fill_Scalar(g, out, Scalar(std::numeric_limits<double>::quiet_NaN()));
}

Scalar conj_scalar(const Scalar& s) { return s.is_complex() ? Scalar(std::conj(s.to_complex())) : s; }

// d angle(z): i z / |z|^2 (0 at z = 0); a real input's angle is piecewise constant.
Tensor angle_backward(const Tensor& grad, const Tensor& self) {
  if (!is_complex(self.dtype())) return zeros_like(self, std::nullopt, std::nullopt);
  Tensor i = ops::scalar_tensor(Scalar(std::complex<double>(0, 1)), self.dtype());
  Tensor a = abs(self);
  Tensor g = grad * self * i / (a * a);
  return where_self(eq_Tensor(self, scalar(0.0, self)), scalar(0.0, g), g);
}

// sgn(z) = z / |z|: (grad - s Re(grad conj(s))) / |z| with s = result, 0 at z = 0; a real
// sign's gradient is 0.
Tensor sgn_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  if (!is_complex(self.dtype())) return zero_grad_like(grad);
  Tensor a = abs(self);
  Tensor g = (grad - result * real(grad * conj(result))) / a;
  return where_self(eq_Tensor(a, scalar(0.0, a)), scalar(0.0, g), g);
}

// polar's angle: Re(grad * conj(i out)) = Re(-i grad conj(out)).
Tensor angle_backward_polar(const Tensor& grad, const Tensor& result) {
  Tensor minus_i = ops::scalar_tensor(Scalar(std::complex<double>(0, -1)), result.dtype());
  return real(grad * minus_i * conj(result));
}

Tensor real_part(const Tensor& grad) { return real(grad); }

Tensor imag_of_grad(const Tensor& grad) {
  return is_complex(grad.dtype()) ? imag(grad) : zeros_like(grad, std::nullopt, std::nullopt);
}

Tensor div_other_grad(const Tensor& grad, const Tensor& self, const Tensor& other) {
  return -grad * self / (other * other);
}

Tensor pow_self_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  if (exponent.impl()->wrapped_number && exponent.device().is_cpu() && self.device().is_cpu() &&
      !is_complex(exponent.dtype()) && is_floating(self.dtype())) {
    // a Python-number exponent v: grad v self^(v - 1) with v - 1 a Python number too, so
    // the power takes its special kernels (x ** 3's gradient is 3 x*x, not an exp and log)
    const double v = ops::item(exponent).to_double();
    if (v == 0.0) return zero_grad_like(grad);
    return grad * (pow_Tensor(self, ops::wrapped_number(Scalar(v - 1.0))) * v);
  }
  Tensor e = as_dtype(exponent, grad.dtype());
  Tensor g = grad * conj(e * pow_Tensor(self, e - 1.0));
  return masked_fill_Scalar(g, eq_Tensor(e, scalar(0.0, e)), Scalar(0.0));
}

Tensor pow_exponent_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result) {
  Tensor s = as_dtype(self, grad.dtype());
  Tensor g = grad * conj(result * log(s));
  // 0^w's gradient is 0 for a real w >= 0 (a complex w: imaginary part 0, real part >= 0, as torch)
  const bool cx = is_complex(exponent.dtype());
  const Tensor w = cx ? real(exponent) : exponent;
  Tensor nonneg = ge_Tensor(w, scalar(0.0, w));
  if (cx) nonneg = logical_and(nonneg, eq_Tensor(imag(exponent), scalar(0.0, w)));
  Tensor zero_base = logical_and(eq_Tensor(s, scalar(0.0, s)), nonneg);
  return masked_fill_Scalar(g, zero_base, Scalar(0.0));
}

Tensor copysign_grad(const Tensor& grad, const Tensor& self, const Tensor& result) {
  Tensor ratio = masked_fill_Scalar(result / self, eq_Tensor(self, scalar(0.0, self)), Scalar(0.0));
  return grad * ratio;
}

Tensor xlogy_self_grad(const Tensor& grad, const Tensor& self, const Tensor& other) {
  Tensor g = xlogy(grad, other);
  Tensor zero = logical_and(eq_Tensor(self, scalar(0.0, self)), le_Tensor(other, scalar(0.0, other)));
  return masked_fill_Scalar(g, zero, Scalar(0.0));
}

Tensor maximum_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max, bool for_self) {
  Tensor half = where_self(eq_Tensor(self, other), grad / 2.0, grad);
  // for max: self loses where self < other; other loses where self > other
  const bool self_smaller = is_max == for_self;
  Tensor lose = self_smaller ? lt_Tensor(self, other) : gt_Tensor(self, other);
  return masked_fill_Scalar(half, lose, Scalar(0.0));
}

Tensor fmax_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max, bool for_self) {
  Tensor wins = logical_or(is_max ? ge_Tensor(self, other) : le_Tensor(self, other), isnan(other));
  return masked_fill_Scalar(grad, for_self ? logical_not(wins) : wins, Scalar(0.0));
}

Tensor clamp_grad(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max) {
  Tensor keep;
  if (min) keep = ge_Tensor(self, ops::wrapped_number(*min));
  if (max) {
    Tensor below = le_Tensor(self, ops::wrapped_number(*max));
    keep = keep.defined() ? logical_and(keep, below) : below;
  }
  return keep.defined() ? masked_grad(grad, keep) : grad;
}

Tensor clamp_tensor_grad(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max, int which) {
  if (which == 0) {
    Tensor keep;
    if (min.defined()) keep = ge_Tensor(self, min);
    if (max.defined()) {
      Tensor below = le_Tensor(self, max);
      keep = keep.defined() ? logical_and(keep, below) : below;
    }
    return keep.defined() ? masked_grad(grad, keep) : grad;
  }
  if (which == 1) {
    Tensor m = lt_Tensor(self, min);
    if (max.defined()) m = logical_and(m, lt_Tensor(min, max));
    return masked_grad(grad, m);
  }
  Tensor m = gt_Tensor(self, max);
  if (min.defined()) m = logical_or(m, lt_Tensor(max, min));
  return masked_grad(grad, m);
}

Tensor where_grad(const Tensor& condition, const Tensor& grad, bool take_true) {
  Tensor zero = scalar(0.0, grad);
  return take_true ? where_self(condition, grad, zero) : where_self(condition, zero, grad);
}

// ---- linear algebra ----

namespace {
// A matrix stored column-major: the transpose of a row-major one (a weight used as W.t()),
// by torch's test (so a (n, 1) matrix with strides (1, n) counts too).
bool column_major(const Tensor& t) {
  return t.dim() == 2 && t.strides()[0] == 1 && t.strides()[1] == t.sizes()[0];
}
}  // namespace

// The gradients of mat1 @ mat2, each laid out as its input is: for a column-major input
// the product is computed transposed (BLAS reads either layout at no cost), so W.t()'s
// gradient arrives as a row-major W.grad instead of needing a copy.
// The products' gradients carry torch's conjugates (grad_a = grad @ b^H, grad_b =
// a^H @ grad); conj of a real tensor is the tensor itself.
Tensor mm_mat1_grad(const Tensor& grad, const Tensor& mat1, const Tensor& mat2) {
  if (column_major(mat1)) return mT(mm(conj(mat2), mT(grad)));
  return mm(grad, mH(mat2));
}

Tensor mm_mat2_grad(const Tensor& grad, const Tensor& mat1, const Tensor& mat2) {
  if (column_major(mat2)) return mT(mm(mT(grad), conj(mat1)));
  return mm(mH(mat1), grad);
}

Tensor matmul_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int which) {
  if (which >= 2) {  // inner(): contraction over the last dims
    if (self.dim() == 0 || other.dim() == 0) return which == 2 ? grad * conj(other) : grad * conj(self);
    const int64_t k = self.sizes()[self.dim() - 1];
    Tensor a = reshape(self, IntList{-1, k}), b = reshape(other, IntList{-1, k});
    Tensor g = reshape(grad, IntList{a.sizes()[0], b.sizes()[0]});
    return which == 2 ? reshape(mm(g, conj(b)), self.sizes()) : reshape(mm(mT(g), conj(a)), other.sizes());
  }
  const int64_t da = self.dim(), db = other.dim();
  if (da == 1 && db == 1) return which == 0 ? grad * conj(other) : grad * conj(self);
  if (da == 1 && db == 2) {  // the product is mm of a (1, k) row, as the forward computes it
    const Tensor row = unsqueeze(self, 0), g = unsqueeze(grad, 0);
    return which == 0 ? squeeze_dim(mm_mat1_grad(g, row, other), 0) : mm_mat2_grad(g, row, other);
  }
  if (da == 1) {
    if (which == 0) return squeeze_dim(matmul(unsqueeze(grad, -2), mH(other)), -2);
    return matmul(unsqueeze(conj(self), -1), unsqueeze(grad, -2));
  }
  if (db == 1) {
    if (which == 0) return matmul(unsqueeze(grad, -1), unsqueeze(conj(other), -2));
    return squeeze_dim(matmul(mH(self), unsqueeze(grad, -1)), -1);
  }
  if (da == 2 && db == 2) return which == 0 ? mm_mat1_grad(grad, self, other) : mm_mat2_grad(grad, self, other);
  if (which == 1 && db == 2) {
    // (..., n, k) @ (k, m), folded into one product as the forward is: other's gradient
    // is one (k, rows) @ (rows, m) product instead of a batch of them summed
    const int64_t k = self.sizes()[da - 1], m = other.sizes()[1];
    int64_t rows = 1;
    for (int64_t d = 0; d < da - 1; ++d) rows *= self.sizes()[d];
    return mm_mat2_grad(reshape(grad, IntList{rows, m}), reshape(self, IntList{rows, k}), other);
  }
  return which == 0 ? matmul(grad, mH(other)) : matmul(mH(self), grad);
}

Tensor kron_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int which) {
  const int64_t n = std::max(self.dim(), other.dim());
  std::vector<int64_t> as(n, 1), bs(n, 1), g_shape, a_shape, b_shape, a_dims, b_dims;
  for (int64_t i = 0; i < self.dim(); ++i) as[n - self.dim() + i] = self.sizes()[i];
  for (int64_t i = 0; i < other.dim(); ++i) bs[n - other.dim() + i] = other.sizes()[i];
  for (int64_t i = 0; i < n; ++i) {
    g_shape.push_back(as[i]);
    g_shape.push_back(bs[i]);
    a_shape.push_back(as[i]);
    a_shape.push_back(1);
    b_shape.push_back(1);
    b_shape.push_back(bs[i]);
    a_dims.push_back(2 * i);
    b_dims.push_back(2 * i + 1);
  }
  Tensor g = reshape(grad, IntList(g_shape));
  if (which == 0)
    return reshape(sum_dim_IntList(g * conj(reshape(other, IntList(b_shape))), IntList(b_dims), false, std::nullopt),
                   self.sizes());
  return reshape(sum_dim_IntList(g * conj(reshape(self, IntList(a_shape))), IntList(a_dims), false, std::nullopt),
                 other.sizes());
}

int64_t cross_dim(IntList sizes, std::optional<int64_t> dim) {
  if (dim) return *dim;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 3) return static_cast<int64_t>(i);
  return -1;
}

namespace {
bool vector_rhs(const Tensor& A, const Tensor& B) {
  return B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == IntList(A.sizes().data(), B.dim()));
}
}  // namespace

Tensor solve_backward_B(const Tensor& grad, const Tensor& A, const Tensor& B, bool left) {
  return linalg_solve(mH(A), grad, left);
}

Tensor solve_backward_A(const Tensor& grad, const Tensor& A, const Tensor& B, const Tensor& X, bool left) {
  Tensor gB = solve_backward_B(grad, A, B, left);
  if (left && vector_rhs(A, B)) return -(unsqueeze(gB, -1) * unsqueeze(conj(X), -2));
  return left ? -matmul(gB, mH(X)) : -matmul(mH(X), gB);
}

Tensor det_backward(const Tensor& grad, const Tensor& A, const Tensor& det) {
  return unsqueeze(unsqueeze(grad * conj(det), -1), -1) * mH(linalg_inv(A));
}

// log det = log|det| + i arg(det) is holomorphic with derivative A^-T, so
// gA = g A^-H with g = glogabs + i Im(conj(sign) gsign); a real sign is piecewise constant.
Tensor slogdet_backward(const Tensor& gsign, const Tensor& glogabs, const Tensor& A) {
  const bool phase = is_complex(A.dtype()) && gsign.defined();
  if (!glogabs.defined() && !phase) return zeros_of(A.sizes(), A.dtype());
  Tensor g = glogabs;
  if (phase) {
    Tensor sign = linalg_slogdet(A)[0];
    Tensor p = imag(conj(sign) * gsign) * Scalar(std::complex<double>(0, 1));
    g = g.defined() ? g + p : p;
  }
  return unsqueeze(unsqueeze(g, -1), -1) * mH(linalg_inv(A));
}

// A = L L^H, dL = L Phi(L^-1 dA L^-H) with Phi the lower triangle, its diagonal halved.
// Its adjoint: gA = L^-H Phi*(L^H gL) L^-1, Phi*(X) = (tril(X) + tril(X, -1)^H) / 2, torch's
// (for complex it keeps tril(X)'s complex diagonal, halved: the gradient is Hermitian
// for a real diagonal only, as torch's is).
Tensor cholesky_backward(const Tensor& grad, const Tensor& L_, bool upper) {
  Tensor L = upper ? mH(L_) : L_;
  Tensor gL = upper ? mH(grad) : grad;
  Tensor P = tril(matmul(mH(L), gL), 0);  // tril(L^H triu(gL, 1)) is 0: gL's upper part drops out
  Tensor phi = (P + mH(tril(P, -1))) * 0.5;
  Tensor X = linalg_solve_triangular(mH(L), phi, true, true, false);  // L^-H phi
  return linalg_solve_triangular(L, X, false, false, false);          // ... L^-1
}

Tensor eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& A, const std::string& UPLO) {
  std::vector<Tensor> lv = linalg_eigh(A, UPLO);
  const Tensor& L = lv[0];
  const Tensor& V = lv[1];
  Tensor inner;
  if (gV.defined()) {
    Tensor E = unsqueeze(L, -2) - unsqueeze(L, -1);  // E[i][j] = L[j] - L[i]
    const int64_t n = L.sizes()[L.dim() - 1];
    Tensor eye = ops::eye_m(n, n, ScalarType::Bool);
    E = masked_fill_Scalar(E, eye, Scalar(1.0));
    // V^H gV projected onto the skew-Hermitian matrices (torch's: the tangent space of
    // the unitary group, which keeps V's columns orthonormal)
    Tensor X = matmul(mH(V), gV);
    inner = masked_fill_Scalar((X - mH(X)) * 0.5 / E, eye, Scalar(0.0));
  }
  if (gL.defined()) {
    Tensor d = diag_embed(gL, 0, -2, -1);  // real: a complex V's products want it complex
    if (is_complex(V.dtype())) d = complex(d, zeros_like(d, std::nullopt, std::nullopt));
    inner = inner.defined() ? inner + d : d;
  }
  if (!inner.defined()) return zeros_of(A.sizes(), A.dtype());
  return matmul(matmul(V, inner), mH(V));
}

// The eigenvectors of unit norm are fixed up to a phase each, so only the imaginary part
// of diag(V^H gV) is free of it (torch's gauge; a loss that depends on the phase has no
// gradient):
//   gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(L_j - L_i)) V^H,
// the off-diagonal division only; the real part for a real A.
Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& A) {
  std::vector<Tensor> lv = linalg_eig(A);
  const Tensor& L = lv[0];
  const Tensor& V = lv[1];
  const Tensor Vh = mH(V);
  const int64_t n = L.sizes()[L.dim() - 1];
  Tensor inner;
  if (gV.defined()) {
    Tensor eye = ops::eye_m(n, n, ScalarType::Bool);
    Tensor VhgV = matmul(Vh, gV);
    inner = VhgV - matmul(Vh, V) * unsqueeze(real(diagonal(VhgV, 0, -2, -1)), -2);
    Tensor Lc = conj(L);
    inner = inner / masked_fill_Scalar(unsqueeze(Lc, -2) - unsqueeze(Lc, -1), eye, Scalar(1.0));
  }
  if (gL.defined()) {
    Tensor d = diag_embed(gL, 0, -2, -1);
    inner = inner.defined() ? inner + d : d;
  }
  if (!inner.defined()) return zeros_of(A.sizes(), A.dtype());
  Tensor gA = linalg_solve(Vh, matmul(inner, Vh), true);
  return is_complex(A.dtype()) ? gA : real(gA);
}

Tensor svdvals_backward(const Tensor& gS, const Tensor& A) {
  std::vector<Tensor> usv = linalg_svd(A, false, std::nullopt);
  return matmul(usv[0] * unsqueeze(gS, -2), usv[2]);
}

// A = U S V^H (the reduced SVD, k = min(m, n) singular values, distinct and nonzero):
//   gA = U (J S + S K + diag(gS) + i diag(Im diag(U^H gU) / S)) V^H
//        + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H),
// J = skew(U^H gU) / E, K = skew(V^H gV) / E off the diagonal, E_ij = S_j^2 - S_i^2,
// skew(X) = X - X^H. Complex singular vectors are fixed up to a common phase per pair
// (u_i, v_i) only: a loss that does not depend on it has Im diag(U^H gU) = -Im diag(V^H gV),
// and torch refuses one that does (the same check, tolerance and message).
Tensor svd_backward(const Tensor& gU_, const Tensor& gS, const Tensor& gVh_, const Tensor& A) {
  std::vector<Tensor> usv = linalg_svd(A, false, std::nullopt);
  const Tensor &U = usv[0], &S = usv[1], &Vh = usv[2];
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1], k = S.sizes()[S.dim() - 1];
  const bool cx = is_complex(A.dtype());
  // With full_matrices the extra singular vectors are arbitrary: only the first k count.
  Tensor gU = !gU_.defined() || gU_.sizes()[gU_.dim() - 1] == k ? gU_ : narrow(gU_, -1, 0, k);
  Tensor gVh = !gVh_.defined() || gVh_.sizes()[gVh_.dim() - 2] == k ? gVh_ : narrow(gVh_, -2, 0, k);
  if (!gU.defined()) gU = zeros_of(U.sizes(), U.dtype());
  if (!gVh.defined()) gVh = zeros_of(Vh.sizes(), Vh.dtype());
  Tensor V = mH(Vh), gV = mH(gVh);
  Tensor UhgU = matmul(mH(U), gU), VhgV = matmul(Vh, gV);
  Tensor eye = ops::eye_m(k, k, ScalarType::Bool);
  Tensor imdiag;  // Im diag(U^H gU)
  if (cx) {
    imdiag = imag(diagonal(UhgU, 0, -2, -1));
    EMBER_CHECK(allclose(imdiag, -imag(diagonal(VhgV, 0, -2, -1)), 1e-2, 1e-2, false), Runtime,
                "svd_backward: The singular vectors in the complex case are specified up to multiplication by "
                "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.");
  }
  Tensor S2 = S * S;
  Tensor E = unsqueeze(S2, -2) - unsqueeze(S2, -1);  // E[i][j] = S_j^2 - S_i^2
  E = masked_fill_Scalar(E, eye, Scalar(1.0));
  Tensor J = masked_fill_Scalar((UhgU - mH(UhgU)) / E, eye, Scalar(0.0));
  Tensor K = masked_fill_Scalar((VhgV - mH(VhgV)) / E, eye, Scalar(0.0));
  Tensor inner = J * unsqueeze(S, -2) + unsqueeze(S, -1) * K;
  Tensor d = gS.defined() ? gS : zeros_like(S, std::nullopt, std::nullopt);
  if (cx) d = complex(d, imdiag / S);
  inner = inner + diag_embed(d, 0, -2, -1);
  Tensor gA = matmul(matmul(U, inner), Vh);
  if (m > k) gA = gA + matmul((gU - matmul(U, UhgU)) / unsqueeze(S, -2), Vh);
  if (n > k) gA = gA + matmul(U, (gVh - matmul(matmul(gVh, V), Vh)) / unsqueeze(S, -1));
  return gA;
}

Tensor qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& A, const std::string& mode) {
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1];
  EMBER_CHECK(mode != "r", Runtime, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
              "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  EMBER_CHECK(m >= n && (mode == "reduced" || m == n), NotImplemented,
              "The QR decomposition is not differentiable when mode='complete' and nrows > ncols, or when nrows < "
              "ncols (got a ", m, "x", n, " input with mode='", mode, "').");
  std::vector<Tensor> qr = linalg_qr(A, mode);
  const Tensor &Q = qr[0], &R = qr[1];
  // M = R gR^H - gQ^H Q; its lower triangle mirrored to a Hermitian matrix (LAPACK's R
  // has a real diagonal, so only Re diag(M) counts); gA = (gQ + Q sym) R^-H
  Tensor M = matmul(R, mH(gR)) - matmul(mH(gQ), Q);
  Tensor low = tril(M, -1);
  Tensor dM = diagonal(M, 0, -2, -1);
  if (is_complex(M.dtype())) dM = complex(real(dM), zeros_like(real(dM), std::nullopt, std::nullopt));
  Tensor sym = low + mH(low) + diag_embed(dM, 0, -2, -1);
  Tensor B = gQ + matmul(Q, sym);
  return linalg_solve_triangular(mH(R), B, false, false, false);  // B R^-H
}

}  // namespace ember::api
