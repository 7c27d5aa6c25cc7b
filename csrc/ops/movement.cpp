// Joining, reordering and indexed data movement (declarations/ops/movement.yaml).
// Most compose views with copy_; gather/scatter use kernel family gather, sort the
// rowwise family.
#include <algorithm>
#include "kernels/gather.h"
#include "kernels/rowwise.h"
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

Tensor long_range(int64_t start, int64_t stop, int64_t step) {
  return arange_start(Scalar(start), Scalar(stop), Scalar(step), ScalarType::Int64);
}

// index (int64) checked against [0, size) along dim of self (torch's gather/scatter rule).
// index as int64 (gather and scatter take int32 too, as in torch).
Tensor long_index(const Tensor& index, const char* op) {
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, Runtime, op,
              "(): Expected dtype int32/int64 for index");
  return index.dtype() == ScalarType::Int64 ? index : to_dtype(index, ScalarType::Int64, false, false, std::nullopt);
}

// The index's rank and sizes against self (its values: check_index_values).
void check_index_shape(const Tensor& self, int64_t dim, const Tensor& index, const char* op) {
  EMBER_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1), Runtime, op,
              "(): Index tensor must have the same number of dimensions as input tensor");
  if (index.numel() == 0) return;  // an empty index selects nothing, whatever its sizes
  for (int64_t d = 0; d < index.dim(); ++d)
    EMBER_CHECK(d == dim || index.sizes()[d] <= self.sizes()[d], Runtime, op, "(): Size does not match at dimension ",
                d, " expected index ", sizes_str(index.sizes()), " to be no larger than self ",
                sizes_str(self.sizes()), " apart from dimension ", dim);
}

// RuntimeError naming an index outside [0, size) (after a kernel reported one).
[[noreturn]] void index_out_of_bounds(const Tensor& index, int64_t dim, int64_t size, const char* op) {
  auto [lo, hi] = aminmax(index, std::nullopt, false);
  const int64_t l = item(lo).to_int64(), h = item(hi).to_int64();
  fail(ErrorKind::Runtime, op, "(): index ", l < 0 ? l : h, " is out of bounds for dimension ", dim, " with size ", size);
}

void check_index(const Tensor& self, int64_t dim, const Tensor& index, const char* op) {
  check_index_shape(self, dim, index, op);
  if (index.numel() == 0 || !runs_kernels()) return;  // values are checked where they exist
  const int64_t size = self.dim() == 0 ? 1 : self.sizes()[dim];
  auto [lo, hi] = aminmax(index, std::nullopt, false);
  if (item(lo).to_int64() < 0 || item(hi).to_int64() >= size) index_out_of_bounds(index, dim, size, op);
}

// self viewed with index's shape and stride 0 along dim.
Tensor restride_for(const Tensor& self, const Tensor& index, int64_t dim) {
  Dims strides(self.strides());
  if (self.dim() == 0) return self;
  strides[dim] = 0;
  return make_view(self, Dims(index.sizes()), std::move(strides), self.offset());
}

Tensor sorted_rows(const Tensor& self, int64_t dim, bool descending, Tensor* indices) {
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, " Sort does not support complex dtypes on CPU");  // torch's text
  const Tensor src = self.dim() == 0 ? view(self, {1}) : self;
  const int64_t d = wrap_dim(dim, src.dim());
  Tensor values = empty_tensor(src.sizes(), src.dtype()), idx = empty_tensor(src.sizes(), ScalarType::Int64);
  if (src.numel() > 0) {
    kernels::rowwise::Rows rows;
    Tensor firsts[3] = {select(values, d, 0), select(idx, d, 0), select(src, d, 0)};
    const Tensor* ptrs[3] = {&firsts[0], &firsts[1], &firsts[2]};
    rows.loop = kernels::make_loop(ptrs, 3);
    rows.dim_strides[0] = values.strides()[d] * values.itemsize();
    rows.dim_strides[1] = idx.strides()[d] * 8;
    rows.dim_strides[2] = src.strides()[d] * src.itemsize();
    rows.length = src.sizes()[d];
    rows.descending = descending;
    launch(src.dtype(), [&](auto tag) {
      kernels::rowwise::Kernels<typename decltype(tag)::type>::run(kernels::rowwise::RowOp::sort, rows);
    });
  }
  if (self.dim() == 0) {
    values = view(values, {});
    idx = view(idx, {});
  }
  *indices = idx;
  return values;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Out& out) {
  EMBER_CHECK(!tensors.empty(), Value, "torch.cat(): expected a non-empty list of Tensors");
  // legacy rule: 1-D empty tensors are skipped
  std::vector<const Tensor*> parts;
  for (const Tensor& t : tensors)
    if (!(t.dim() == 1 && t.numel() == 0)) parts.push_back(&t);
  if (parts.empty()) parts.push_back(&tensors[0]);
  const Tensor& ref = *parts[0];
  EMBER_CHECK(ref.dim() > 0, Runtime, "zero-dimensional tensor (at position 0) cannot be concatenated");
  const int64_t d = wrap_dim(dim, ref.dim());
  Dims shape(ref.sizes());
  shape[d] = 0;
  std::vector<const Tensor*> all;
  for (const Tensor& t : tensors) all.push_back(&t);
  const ScalarType dtype = result_type(all.data(), static_cast<int>(all.size()));
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = *parts[i];
    EMBER_CHECK(t.dim() == ref.dim(), Runtime, "Tensors must have same number of dimensions: got ", ref.dim(),
                " and ", t.dim());
    for (int64_t k = 0; k < t.dim(); ++k)
      EMBER_CHECK(k == d || t.sizes()[k] == ref.sizes()[k], Runtime, "Sizes of tensors must match except in dimension ",
                  d, ". Expected size ", ref.sizes()[k], " but got size ", t.sizes()[k], " for tensor number ", i,
                  " in the list.");
    shape[d] += t.sizes()[d];
  }
  Tensor result = resolve_out(out, shape, dtype, "cat", &ref);
  int64_t offset = 0;
  for (const Tensor* t : parts) {
    const int64_t n = t->sizes()[d];
    if (n > 0) copy_(narrow(result, d, offset, n), *t, false);
    offset += n;
  }
  return result;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const Out& out) {
  EMBER_CHECK(!tensors.empty(), Runtime, "stack expects a non-empty TensorList");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes() == tensors[0].sizes(), Runtime, "stack expects each tensor to be equal size, but got ",
                sizes_str(tensors[0].sizes()), " at entry 0 and ", sizes_str(tensors[i].sizes()), " at entry ", i);
    parts.push_back(unsqueeze(tensors[i], d));
  }
  return cat(parts, d, out);
}

namespace {
std::vector<Tensor> at_least(const std::vector<Tensor>& ts, int64_t rank) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) {
    Tensor x = t;
    if (rank >= 1 && x.dim() == 0) x = view(x, {1});
    if (rank >= 2 && x.dim() == 1) x = unsqueeze(x, 0);
    if (rank >= 3 && x.dim() == 2) x = unsqueeze(x, 2);
    out.push_back(x);
  }
  return out;
}
}  // namespace

Tensor hstack(const std::vector<Tensor>& tensors, const Out& out) {
  auto ts = at_least(tensors, 1);
  EMBER_CHECK(!ts.empty(), Runtime, "hstack expects a non-empty TensorList");
  return cat(ts, ts[0].dim() == 1 ? 0 : 1, out);
}

Tensor vstack(const std::vector<Tensor>& tensors, const Out& out) { return cat(at_least(tensors, 2), 0, out); }
Tensor dstack(const std::vector<Tensor>& tensors, const Out& out) { return cat(at_least(tensors, 3), 2, out); }

Tensor flip(const Tensor& self, IntList dims) {
  Tensor r = self;
  Dims seen(std::max<int64_t>(self.dim(), 1));  // a 0-dim tensor takes dim 0 (or -1)
  for (int64_t i = 0; i < int64_t(seen.size()); ++i) seen[i] = 0;
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, self.dim());
    EMBER_CHECK(!seen[d], Runtime, "dims has duplicates, original flip dims size=", dims.size(),
                ", but unique flip dims size=", dims.size() - 1);
    seen[d] = 1;
    if (self.dim() == 0 || self.sizes()[d] <= 1) continue;
    r = index_select(r, d, long_range(self.sizes()[d] - 1, -1, -1), Out{});
  }
  return r.is_same(self) ? clone(self, std::nullopt) : r;
}

Tensor fliplr(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, Runtime, "Input must be >= 2-d.");
  int64_t d[] = {1};
  return flip(self, IntList(d, 1));
}

Tensor flipud(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 1, Runtime, "Input must be >= 1-d.");
  int64_t d[] = {0};
  return flip(self, IntList(d, 1));
}

Tensor roll(const Tensor& self, IntList shifts, IntList dims) {
  EMBER_CHECK(!shifts.empty(), Runtime, "`shifts` required");
  if (dims.empty()) {
    EMBER_CHECK(shifts.size() == 1, Runtime, "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
    Tensor flat = reshape(self, {-1});
    int64_t d0[] = {0};
    return view(roll(flat, shifts, IntList(d0, 1)), self.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(), Runtime, "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  EMBER_CHECK(self.dim() > 0, Index, "Dimension specified as ", dims[0], " but tensor has no dimensions");
  if (self.numel() == 0) return clone(self, std::nullopt);  // as torch's: the dims are not checked
  Tensor r = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], self.dim());
    const int64_t n = self.sizes()[d];
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    r = cat({narrow(r, d, n - s, s), narrow(r, d, 0, n - s)}, d, Out{});
  }
  return r.is_same(self) ? clone(self, std::nullopt) : r;
}

Tensor repeat(const Tensor& self, IntList repeats) {
  EMBER_CHECK(int64_t(repeats.size()) >= self.dim(), Runtime,
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  for (int64_t r : repeats) EMBER_CHECK(r >= 0, Runtime, "Trying to create tensor with negative dimension ", r);
  const int64_t lead = int64_t(repeats.size()) - self.dim();
  // view self as [1, s0, 1, s1, ...] with the padded dims, expand to [r0, s0, r1, s1, ...]
  Dims inter, expanded, result;
  for (size_t i = 0; i < repeats.size(); ++i) {
    const int64_t s = int64_t(i) < lead ? 1 : self.sizes()[i - lead];
    inter.push_back(1);
    inter.push_back(s);
    expanded.push_back(repeats[i]);
    expanded.push_back(s);
    result.push_back(repeats[i] * s);
  }
  Tensor x = reshape(contiguous(self, MemoryFormat::Contiguous), inter);
  return reshape(clone(expand(x, expanded, false), MemoryFormat::Contiguous), result);
}

Tensor tile(const Tensor& self, IntList dims) {
  Dims reps;
  for (int64_t i = int64_t(dims.size()); i < self.dim(); ++i) reps.push_back(1);
  for (int64_t r : dims) reps.push_back(r);
  return repeat(self, reps);
}

namespace {
// The mask of elements on or below (lower) / on or above the diagonal offset by k.
Tensor triangle(const Tensor& self, int64_t k, bool lower, const Out& out, const char* op) {
  EMBER_CHECK(self.dim() >= 2, Runtime, op, ": input tensor must have at least 2 dimensions");
  const int64_t rows = self.sizes()[self.dim() - 2], cols = self.sizes()[self.dim() - 1];
  Tensor r = view(long_range(0, rows, 1), {rows, 1});
  Tensor c = view(long_range(0, cols, 1), {1, cols});
  Tensor diff = sub_Tensor(c, r, Scalar(int64_t(1)), Out{});  // column - row
  Tensor keep = lower ? le_Tensor(diff, wrapped_number(Scalar(k)), Out{}) : ge_Tensor(diff, wrapped_number(Scalar(k)), Out{});
  Tensor zero = scalar_tensor(Scalar(int64_t(0)), self.dtype());
  Spec spec{op, Promote::Same};
  spec.condition = true;
  return ternary(kernels::TernaryOp::where, spec, keep, self, zero, {}, out);
}
}  // namespace

Tensor tril(const Tensor& self, int64_t diagonal, const Out& out) { return triangle(self, diagonal, true, out, "tril"); }
Tensor triu(const Tensor& self, int64_t diagonal, const Out& out) { return triangle(self, diagonal, false, out, "triu"); }

// A gather along dim whose index varies along dim only (index expanded over the others).
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Out& out) {
  EMBER_CHECK(index.dim() <= 1, Index, "index_select(): Index is supposed to be a vector");
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, Runtime,
              "index_select(): Expected dtype int32 or int64 for index");
  const int64_t d = wrap_dim(dim, self.dim());
  Tensor idx = index.dim() == 0 ? view(index, {1}) : index;
  if (idx.dtype() != ScalarType::Int64) idx = to_dtype(idx, ScalarType::Int64, false, false, std::nullopt);
  Tensor src = self.dim() == 0 ? view(self, {1}) : self;
  const int64_t size = src.sizes()[d], n = idx.numel();
  Dims shape(src.sizes());
  shape[d] = n;
  Dims along(src.dim());
  for (int64_t k = 0; k < src.dim(); ++k) along[k] = k == d ? n : 1;
  Tensor spread = expand(view(idx, along), shape, false);
  Tensor result = resolve_out(out, self.dim() == 0 ? Dims() : shape, self.dtype(), "index_select");
  if (result.numel() == 0) return result;
  Tensor dst = self.dim() == 0 ? view(result, {1}) : result;
  Tensor from = restride_for(src, spread, d);
  kernels::Loop loop = kernels::make_loop({&dst, &spread, &from});
  const int64_t stride = src.strides()[d] * src.itemsize();
  if (out.tensor.defined()) result.storage()->bump_version();
  bool ok = !runs_kernels() || visit_any_dtype(self.dtype(), [&](auto tag) {
    return kernels::gather::Kernels<typename decltype(tag)::type>::gather(loop, stride, size);
  });
  EMBER_CHECK(ok, Index, "index out of range in self");
  return result;
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, Runtime, "masked_select: expected BoolTensor for mask");
  Dims shape = broadcast_shapes(self.sizes(), mask.sizes());
  return index(expand(self, shape, false), {expand(mask, shape, false)});
}

Tensor take(const Tensor& self, const Tensor& index) {
  EMBER_CHECK(index.dtype() == ScalarType::Int64, Runtime, "take(): Expected a long tensor for index, but got ",
              type_name(index.dtype()));
  const int64_t n = self.numel();
  if (index.numel() > 0 && runs_kernels()) {
    const int64_t lo = item(amin(index, {}, false, Out{})).to_int64(), hi = item(amax(index, {}, false, Out{})).to_int64();
    EMBER_CHECK(lo >= -n && hi < n, Index, "out of range: tried to access index ", lo < -n ? lo : hi,
                " on a tensor of ", n, " elements.");
  }
  Tensor wrapped = remainder_Tensor(index, wrapped_number(Scalar(std::max<int64_t>(n, 1))), Out{});
  return ops::index(reshape(self, {-1}), {wrapped});
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  EMBER_CHECK(indices.dtype() == ScalarType::Int64, Runtime,
              "torch.take_along_dim(): dtype of indices should be Long but got ", type_name(indices.dtype()));
  if (!dim) return gather(reshape(self, {-1}), 0, reshape(indices, {-1}), false, Out{});
  const int64_t d = wrap_dim(*dim, self.dim());
  Dims shape_self(self.sizes()), shape_idx(indices.sizes());
  shape_self[d] = 1;
  shape_idx[d] = 1;
  Dims b = broadcast_shapes(shape_self, shape_idx);
  Dims se(b), ie(b);
  se[d] = self.sizes()[d];
  ie[d] = indices.sizes()[d];
  return gather(expand(self, se, false), d, expand(indices, ie, false), false, Out{});
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index_in, bool sparse_grad, const Out& out) {
  (void)sparse_grad;
  const Tensor index = long_index(index_in, "gather");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  check_index_shape(self, d, index, "gather");
  Tensor result = resolve_out(out, index.sizes(), self.dtype(), "gather");
  if (index.numel() == 0) return result;
  Tensor src = restride_for(self, index, d);
  Tensor idx = index;
  kernels::Loop loop = kernels::make_loop({&result, &idx, &src});
  const int64_t stride = self.dim() == 0 ? 0 : self.strides()[d] * self.itemsize();
  const int64_t size = self.dim() == 0 ? 1 : self.sizes()[d];
  if (out.tensor.defined()) result.storage()->bump_version();
  bool ok = !runs_kernels() || visit_any_dtype(self.dtype(), [&](auto tag) {
    return kernels::gather::Kernels<typename decltype(tag)::type>::gather(loop, stride, size);
  });
  if (!ok) index_out_of_bounds(index, d, size, "gather");
  return result;
}

namespace {
Tensor scatter_into(const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& src, bool add,
                    const char* op) {
  const Tensor index = long_index(index_in, op);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  check_index(self, d, index, op);
  EMBER_CHECK(src.dtype() == self.dtype(), Runtime, op, "(): Expected self.dtype to be equal to src.dtype");
  for (int64_t k = 0; k < index.dim() && src.dim() == index.dim(); ++k)
    EMBER_CHECK(index.sizes()[k] <= src.sizes()[k], Runtime, op, "(): Expected index ", sizes_str(index.sizes()),
                " to be no larger than src ", sizes_str(src.sizes()));
  if (index.numel() == 0) return self;
  check_no_internal_overlap(self, op);
  Tensor dst = restride_for(self, index, d);
  Tensor from = src.dim() == index.dim() ? make_view(src, Dims(index.sizes()), Dims(src.strides()), src.offset())
                                         : expand(src, index.sizes(), false);
  from = unaliased_source(self, from, op);
  Tensor idx = index;
  kernels::Loop loop = kernels::make_loop({&dst, &idx, &from});
  const int64_t stride = self.dim() == 0 ? 0 : self.strides()[d] * self.itemsize();
  self.storage()->bump_version();
  launch_any(self.dtype(), [&](auto tag) {
    kernels::gather::Kernels<typename decltype(tag)::type>::scatter(loop, stride, add);
  });
  return self;
}
}  // namespace

Tensor scatter_src(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Out& out) {
  Tensor dst = out.inplace ? self : clone(self, std::nullopt);
  scatter_into(dst, dim, index, src, false, "scatter");
  return out.tensor.defined() && !out.inplace ? copy_(resolve_out(out, self.sizes(), self.dtype(), "scatter"), dst, false)
                                              : dst;
}

Tensor scatter_value(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, const Out& out) {
  return scatter_src(self, dim, index, expand(scalar_tensor(value, self.dtype()), index.sizes(), false), out);
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Out& out) {
  Tensor dst = out.inplace ? self : clone(self, std::nullopt);
  scatter_into(dst, dim, index, src, true, "scatter_add");
  return out.tensor.defined() && !out.inplace
             ? copy_(resolve_out(out, self.sizes(), self.dtype(), "scatter_add"), dst, false)
             : dst;
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  Tensor idx;
  Tensor values = sorted_rows(self, dim, descending, &idx);
  return {values, idx};
}

std::tuple<Tensor, Tensor> sort_stable(const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending) {
  (void)stable;  // every sort here is stable
  return sort(self, dim, descending);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  (void)stable;
  return std::get<1>(sort(self, dim, descending));
}

Tensor msort(const Tensor& self) { return std::get<0>(sort(self, 0, false)); }

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;
  EMBER_CHECK(self.dtype() != ScalarType::Bool, Runtime, "\"topk_cpu\" not implemented for 'Bool'");
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, " topk does not support complex dtypes on CPU");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(k >= 0 && k <= n, Runtime, "selected index k out of range");
  auto [values, idx] = sort(self, d, largest);
  if (self.dim() == 0) return {values, idx};
  return {narrow(values, d, 0, k), narrow(idx, d, 0, k)};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(self.dtype() != ScalarType::Bool, NotImplemented, "\"kthvalue_cpu\" not implemented for 'Bool'");
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"kthvalue_cpu\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(n > 0, Index, "kthvalue(): Expected reduction dim ", d, " to have non-zero size.");
  EMBER_CHECK(k >= 1 && k <= n, Runtime, "kthvalue(): selected number k out of range for dimension ", d);
  auto [values, idx] = sort(self, d, false);
  if (self.dim() == 0) return {values, idx};
  Tensor v = narrow(values, d, k - 1, 1), i = narrow(idx, d, k - 1, 1);
  if (!keepdim) v = squeeze_dim(v, d), i = squeeze_dim(i, d);
  return {v, i};
}

std::tuple<Tensor, Tensor> median_dim(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"median_out\" not implemented for '", type_name(self.dtype()), "'");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(self.dtype() != ScalarType::Bool, NotImplemented, "\"median_cpu\" not implemented for 'Bool'");
  EMBER_CHECK(n > 0, Index, "median(): Expected reduction dim ", d, " to have non-zero size.");
  // the lower median; a NaN in the row makes it NaN (NaN sorts last: take the first NaN)
  auto [values, idx] = sort(self, d, false);
  if (self.dim() == 0) return {values, idx};
  int64_t dims[] = {d};
  Tensor nan_count = sum_dim_IntList(isnan(self), IntList(dims, 1), true, std::nullopt, Out{});
  Tensor pos = where_self(gt_Tensor(nan_count, wrapped_number(Scalar(int64_t(0))), Out{}),
                          sub_Tensor(wrapped_number(Scalar(n)), nan_count, Scalar(int64_t(1)), Out{}),
                          wrapped_number(Scalar((n - 1) / 2)));
  Tensor v = gather(values, d, pos, false, Out{}), i = gather(idx, d, pos, false, Out{});
  if (!keepdim) v = squeeze_dim(v, d), i = squeeze_dim(i, d);
  return {v, i};
}

Tensor median(const Tensor& self) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"median_cpu\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(self.dtype() != ScalarType::Bool, NotImplemented, "\"median_cpu\" not implemented for 'Bool'");
  if (self.numel() == 0) return scalar_tensor(Scalar(std::nan("")), self.dtype());  // torch: NaN (as the dtype)
  return std::get<0>(median_dim(reshape(self, {-1}), 0, false));
}

}  // namespace ember::ops
