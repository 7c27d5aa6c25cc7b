// Splitting, diagonals, indexed accumulation and grids (declarations/ops/shaping.yaml).
// All compose views, index/index_put_, nonzero and cat, except scatter_reduce, which
// folds with kernel family scatter_reduce.
#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <utility>
#include "kernels/scatter_reduce.h"
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

Tensor long_range(int64_t start, int64_t stop) {
  return arange_start(Scalar(start), Scalar(stop), Scalar(int64_t(1)), ScalarType::Int64);
}

bool is_integral(ScalarType t) { return t != ScalarType::Float64 && t != ScalarType::Float32 &&
                                        t != ScalarType::Float16 && t != ScalarType::BFloat16; }

int64_t min_of(const Tensor& t) { return item(amin(t, {}, false, Out{})).to_int64(); }
int64_t max_of(const Tensor& t) { return item(amax(t, {}, false, Out{})).to_int64(); }

// The result of an out-of-place op whose work happened in `dst` (a fresh clone or self):
// copied into out= when one was given.
Tensor finish(const Tensor& dst, const Out& out, const char* op) {
  if (!out.tensor.defined() || out.inplace) return dst;
  return copy_(resolve_out(out, dst.sizes(), dst.dtype(), op), dst, false);
}

// Split along dim into parts [b[i], b[i+1]) (bounds already clamped and ordered).
std::vector<Tensor> split_at(const Tensor& self, int64_t dim, const Dims& bounds) {
  std::vector<Tensor> parts;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) parts.push_back(narrow(self, dim, bounds[i], bounds[i + 1] - bounds[i]));
  return parts;
}

int64_t split_dim(const Tensor& self, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, Runtime, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
              self.dim(), " dims");
  return wrap_dim(dim, self.dim());
}

// index_add/index_copy/index_fill: the common view of the problem. self, index and
// source are made at least 1-D; index is checked to be a vector within [lo, size).
struct IndexedDim {
  Tensor self, index;
  int64_t dim;
  bool scalar;  // self was 0-dim
};

IndexedDim indexed_dim(const Tensor& self, int64_t dim, const Tensor& index, bool allow_negative, const char* op,
                       ErrorKind range_error = ErrorKind::Index, ErrorKind index_error = ErrorKind::Index) {
  IndexedDim r;
  r.scalar = self.dim() == 0;
  r.self = r.scalar ? view(self, {1}) : self;
  r.dim = wrap_dim(dim, r.self.dim());
  if (index.dim() > 1) fail(index_error, op, "(): Index should have dimension 1 or 0 (got ", index.dim(), ")");
  r.index = index.dim() == 0 ? view(index, {1}) : index;
  if (r.index.dtype() != ScalarType::Int64) r.index = to_dtype(r.index, ScalarType::Int64, false, false, std::nullopt);
  const int64_t size = r.self.sizes()[r.dim];
  if (r.index.numel() > 0 && runs_kernels()) {  // values are checked where they exist
    const int64_t lo = min_of(r.index), hi = max_of(r.index), low = allow_negative ? -size : 0;
    if (lo < low || hi >= size)
      fail(range_error, op, "(): index ", lo < low ? lo : hi, " is out of bounds for dimension ", r.dim, " with size ",
           size);
  }
  return r;
}

// source shaped like self but for index.numel() along dim (RuntimeError otherwise).
Tensor check_source(const IndexedDim& p, const Tensor& source, const char* op) {
  Tensor src = source.dim() == 0 ? view(source, {1}) : source;
  bool ok = src.dim() == p.self.dim() && src.sizes()[p.dim] == p.index.numel() && (!p.scalar || src.numel() == 1);
  for (int64_t d = 0; ok && d < src.dim(); ++d) ok = d == p.dim || src.sizes()[d] == p.self.sizes()[d];
  EMBER_CHECK(ok, Runtime, op, "(): source tensor shape must match self tensor shape, excluding the specified dimension. ",
              "Got self.shape = ", sizes_str(p.self.sizes()), " source.shape = ", sizes_str(source.sizes()));
  EMBER_CHECK(source.dtype() == p.self.dtype(), Runtime, op, "(): self (", type_name(p.self.dtype()), ") and source (",
              type_name(source.dtype()), ") must have the same scalar type");
  return src;
}

// self[..., index, ...] = values along dim (accumulating or not).
void put_along(const IndexedDim& p, const Tensor& values, bool accumulate) {
  std::vector<Tensor> key(p.dim + 1);
  key[p.dim] = p.index;
  index_put_(p.self, key, values, accumulate);
}

Tensor target(const Tensor& self, const Out& out) { return out.inplace ? self : clone(self, std::nullopt); }

}  // namespace

// ----------------------------------------------------------------- tensor_split
std::vector<Tensor> tensor_split_sections(const Tensor& self, int64_t sections, int64_t dim) {
  const int64_t d = split_dim(self, dim);
  EMBER_CHECK(sections > 0, Runtime, "number of sections must be larger than 0, got ", sections);
  const int64_t n = self.sizes()[d], base = n / sections, extra = n % sections;
  Dims bounds{0};
  for (int64_t i = 0; i < sections; ++i) bounds.push_back(bounds.back() + base + (i < extra ? 1 : 0));
  return split_at(self, d, bounds);
}

std::vector<Tensor> tensor_split_indices(const Tensor& self, IntList indices, int64_t dim) {
  const int64_t d = split_dim(self, dim);
  const int64_t n = self.sizes()[d];
  // each part is self[prev:index] with Python's slice rules (negative counts from the end)
  auto clamp = [n](int64_t i) { return std::min(std::max(i < 0 ? i + n : i, int64_t(0)), n); };
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    const int64_t stop = i < indices.size() ? clamp(indices[i]) : n;
    parts.push_back(narrow(self, d, std::min(start, n), std::max<int64_t>(stop - start, 0)));
    start = stop;
  }
  return parts;
}

std::vector<Tensor> tensor_split_tensor_indices_or_sections(const Tensor& self, const Tensor& tensor_indices_or_sections,
                                                            int64_t dim) {
  const Tensor& t = tensor_indices_or_sections;
  EMBER_CHECK(t.dtype() == ScalarType::Int64, Runtime,
              "tensor_split expected tensor_indices_or_sections to have dtype of long, but got ", type_name(t.dtype()));
  EMBER_CHECK(t.dim() <= 1, Runtime,
              "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, "
              "but got a tensor with ", t.dim(), " dims");
  if (t.dim() == 0) return tensor_split_sections(self, item(t).to_int64(), dim);
  Dims indices;
  for (int64_t i = 0; i < t.numel(); ++i) indices.push_back(item(select(t, 0, i)).to_int64());
  return tensor_split_indices(self, indices, dim);
}

// ----------------------------------------------------------------- diagonals
Tensor diag(const Tensor& self, int64_t diagonal, const Out& out) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, Runtime, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  if (self.dim() == 2) {
    Tensor d = ops::diagonal(self, diagonal, 0, 1);
    return copy_(resolve_out(out, d.sizes(), self.dtype(), "diag"), d, false);
  }
  const int64_t n = self.numel() + (diagonal < 0 ? -diagonal : diagonal);
  Tensor result = resolve_out(out, {n, n}, self.dtype(), "diag");
  fill_unchecked(result, Scalar(int64_t(0)));
  copy_(ops::diagonal(result, diagonal, 0, 1), self, false);
  return result;
}

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = self.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, nd), d2 = wrap_dim(dim2, nd);
  EMBER_CHECK(d1 != d2, Runtime, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = self.sizes()[self.dim() - 1] + (offset < 0 ? -offset : offset);
  Dims shape;
  for (int64_t i = 0, k = 0; i < nd; ++i) shape.push_back(i == d1 || i == d2 ? n : self.sizes()[k++]);
  Tensor result = empty_tensor(shape, self.dtype(), "diag_embed");
  fill_unchecked(result, Scalar(int64_t(0)));
  copy_(ops::diagonal(result, offset, d1, d2), self, false);
  return result;
}

Tensor diagflat(const Tensor& self, int64_t offset) { return diag(reshape(self, {-1}), offset, Out{}); }

Tensor trace(const Tensor& self) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, NotImplemented, "\"trace\" not implemented for 'Bool'");
  EMBER_CHECK(self.dim() == 2, Runtime, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return sum(ops::diagonal(self, 0, 0, 1), std::nullopt);
}

// ----------------------------------------------------------------- index_add/copy/fill
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                 const Out& out) {
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, Runtime,
              "index_add_(): Expected dtype int32/int64 for index but got: ", type_name(index.dtype()));
  Tensor dst = target(self, out);
  // as torch's: IndexError for a vector, RuntimeError beyond
  IndexedDim p = indexed_dim(dst, dim, index, false, "index_add_", self.dim() <= 1 ? ErrorKind::Index : ErrorKind::Runtime);
  Tensor src = check_source(p, source, "index_add_");
  const bool unit = alpha.to_double() == 1.0;
  if (!unit) src = mul_Tensor(src, scalar_tensor(alpha, src.dtype()), Out{});
  put_along(p, src, true);
  return finish(dst, out, "index_add");
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Out& out) {
  EMBER_CHECK(index.dtype() == ScalarType::Int64, Runtime, "index_copy_(): Expected a long tensor for index, but got ",
              type_name(index.dtype()));
  Tensor dst = target(self, out);
  IndexedDim p = indexed_dim(dst, dim, index, false, "index_copy_");
  put_along(p, check_source(p, source, "index_copy_"), false);
  return finish(dst, out, "index_copy");
}

Tensor index_fill_int_Tensor(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value, const Out& out) {
  EMBER_CHECK(value.dim() == 0, Runtime, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  EMBER_CHECK(index.dtype() == ScalarType::Int64, Index, "index_fill_(): Expected dtype int64 for index.");
  Tensor dst = target(self, out);
  IndexedDim p = indexed_dim(dst, dim, index, true, "index_fill_", ErrorKind::Index, ErrorKind::Runtime);
  put_along(p, value.dtype() == dst.dtype() ? value : to_dtype(value, dst.dtype(), false, false, std::nullopt), false);
  return dst;
}

Tensor index_fill_int_Scalar(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, const Out& out) {
  return index_fill_int_Tensor(self, dim, index, scalar_tensor(value, self.dtype()), out);
}

// ----------------------------------------------------------------- scatter_reduce
namespace {

// The scatter_reduce family's fold for complex<R> (sum or prod; the family itself is
// instantiated for ordered types only): the same operands {self~, index, src}, sequential.
template <class R>
void complex_scatter_fold(const kernels::Loop& loop, int64_t dim_stride, bool prod) {
  using Cx = std::complex<R>;
  auto body = [dim_stride, prod](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx;
      std::memcpy(&idx, p[1] + i * s[1], sizeof idx);
      char* dst = p[0] + i * s[0] + idx * dim_stride;
      Cx a, v;
      std::memcpy(&a, dst, sizeof a);
      std::memcpy(&v, p[2] + i * s[2], sizeof v);
      const Cx r = prod ? Cx(a.real() * v.real() - a.imag() * v.imag(), a.real() * v.imag() + a.imag() * v.real())
                        : a + v;
      std::memcpy(dst, &r, sizeof r);
    }
  };
  kernels::LongLoop long_loop(loop);
  kernels::loop_range(loop, 0, loop.numel, body);
}

}  // namespace

Tensor scatter_reduce_two(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          const std::string& reduce, bool include_self, const Out& out) {
  using kernels::scatter_reduce::ReduceOp;
  const bool mean = reduce == "mean";
  ReduceOp op = ReduceOp::sum;
  if (reduce == "prod") op = ReduceOp::prod;
  else if (reduce == "amax" || reduce == "max") op = ReduceOp::amax;  // max, min: torch's legacy names
  else if (reduce == "amin" || reduce == "min") op = ReduceOp::amin;
  else EMBER_CHECK(reduce == "sum" || mean, Runtime,
                   "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, Runtime,
              "scatter_reduce(): Expected dtype int32/int64 for index");
  EMBER_CHECK(src.dtype() == self.dtype(), Runtime, "scatter(): Expected self.dtype to be equal to src.dtype");
  EMBER_CHECK(!(mean && self.dtype() == ScalarType::Bool), NotImplemented,
              "\"scatter_reduce\" with reduce='mean' not implemented for 'Bool'");
  EMBER_CHECK(!is_complex(self.dtype()) || op == ReduceOp::sum || op == ReduceOp::prod, NotImplemented,
              "\"scatter_gather_tensor_cpu_reduce_", op == ReduceOp::amax ? "amax" : "amin", "\" not implemented for '",
              type_name(self.dtype()), "'");
  Tensor idx = index.dtype() == ScalarType::Int64 ? index : to_dtype(index, ScalarType::Int64, false, false, std::nullopt);
  Tensor dst = target(self, out);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  // gather checks index against self (rank, bounds, sizes) as scatter would; then src
  gather(dst, d, idx, false, Out{});
  for (int64_t k = 0; k < idx.dim() && src.dim() == idx.dim(); ++k)
    EMBER_CHECK(idx.sizes()[k] <= src.sizes()[k], Runtime, "scatter_reduce(): Expected index ", sizes_str(idx.sizes()),
                " to be no larger than src ", sizes_str(src.sizes()));
  // include_self=False: the written positions start at the reduction's identity (amax,
  // amin: at one of the written values, which folding in again does not change)
  if (idx.numel() == 0) return finish(dst, out, "scatter_reduce");
  if (!include_self) {
    if (op == ReduceOp::amax || op == ReduceOp::amin) scatter_src(dst, d, idx, src, Out{dst, true});
    else scatter_value(dst, d, idx, Scalar(int64_t(op == ReduceOp::prod ? 1 : 0)), Out{dst, true});
  }
  auto fold = [&](const Tensor& into, const Tensor& from, ReduceOp how) {
    Dims strides(into.strides());
    Tensor to = into;
    if (into.dim() > 0) {
      strides[d] = 0;
      to = make_view(into, Dims(idx.sizes()), std::move(strides), into.offset());
    }
    Tensor from_view = from.dim() == idx.dim() ? make_view(from, Dims(idx.sizes()), Dims(from.strides()), from.offset())
                                               : expand(from, idx.sizes(), false);
    from_view = unaliased_source(into, from_view, "scatter_reduce");
    kernels::Loop loop = kernels::make_loop({&to, &idx, &from_view});
    const int64_t stride = into.dim() == 0 ? 0 : into.strides()[d] * into.itemsize();
    into.storage()->bump_version();
    if (is_complex(into.dtype())) {
      visit_complex(into.dtype(), [&](auto part) { complex_scatter_fold<decltype(part)>(loop, stride, how == ReduceOp::prod); });
      return;
    }
    launch(into.dtype(), [&](auto tag) {
      kernels::scatter_reduce::Kernels<typename decltype(tag)::type>::reduce(loop, stride, how);
    });
  };
  check_no_internal_overlap(dst, "scatter_reduce");
  fold(dst, src, op);
  if (mean) {
    Tensor count = include_self ? ones_like(dst, std::nullopt, MemoryFormat::Contiguous)
                                : zeros_like(dst, std::nullopt, MemoryFormat::Contiguous);
    fold(count, ones_like(src, std::nullopt, std::nullopt), ReduceOp::sum);
    count = masked_fill_Scalar(count, eq_Tensor(count, wrapped_number(Scalar(int64_t(0))), Out{}), Scalar(int64_t(1)));
    Tensor q = is_integral(dst.dtype()) ? div_Tensor_mode(dst, count, std::string("floor"), Out{})
                                        : div_Tensor(dst, count, Out{});
    copy_(dst, q, false);
  }
  return finish(dst, out, "scatter_reduce");
}

// ----------------------------------------------------------------- masked_scatter, argwhere
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source, const Out& out) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, Runtime,
              "masked_scatter_ only supports boolean masks, but got mask with dtype ", type_name(mask.dtype()));
  EMBER_CHECK(source.dtype() == self.dtype(), Runtime, "masked_scatter: expected self and source to have same dtypes but got",
              type_name(self.dtype()), " and ", type_name(source.dtype()));
  Tensor dst;
  if (out.inplace) {
    dst = self;
  } else {
    dst = contiguous(expand(self, broadcast_shapes(self.sizes(), mask.sizes()), false), MemoryFormat::Contiguous);
    if (dst.is_same(self)) dst = clone(self, std::nullopt);
  }
  Tensor m = expand(mask, dst.sizes(), false);
  const int64_t n = item(sum(m, ScalarType::Int64)).to_int64();
  EMBER_CHECK(source.numel() >= n, Runtime, "Number of elements of source < number of ones in mask");
  if (n > 0) index_put_(dst, {m}, narrow(reshape(source, {-1}), 0, 0, n), false);
  return dst;
}

Tensor argwhere(const Tensor& self) { return nonzero(self); }

// ----------------------------------------------------------------- repeat_interleave
Tensor repeat_interleave_Tensor(const Tensor& repeats, std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats.dim() == 1, Runtime, "repeat_interleave only accept 1D vector as repeat");
  EMBER_CHECK(repeats.dtype() == ScalarType::Int64 || repeats.dtype() == ScalarType::Int32, NotImplemented,
              "\"repeat_interleave_cpu\" not implemented for '", type_name(repeats.dtype()), "'");
  const int64_t n = repeats.numel();
  EMBER_CHECK(n == 0 || min_of(repeats) >= 0, Runtime, "repeats can not be negative");
  Tensor ends = cumsum(repeats, 0, ScalarType::Int64, Out{});
  const int64_t total = n == 0 ? 0 : item(select(ends, 0, n - 1)).to_int64();
  EMBER_CHECK(!output_size || *output_size == total, Runtime, "repeat_interleave: Invalid output_size, expected ", total,
              " but got ", output_size ? *output_size : 0);
  // Mark where each i starts (i with no repeats share the next one's start), then the
  // index at position p is how many starts are <= p, less one.
  Tensor starts = sub_Tensor(ends, repeats, Scalar(int64_t(1)), Out{});
  starts = masked_select(starts, lt_Tensor(starts, wrapped_number(Scalar(total)), Out{}));
  Tensor marks = zeros({total}, ScalarType::Int64);
  index_put_(marks, {starts}, ones({starts.numel()}, ScalarType::Int64), true);
  Tensor result = sub_Tensor(cumsum(marks, 0, std::nullopt, Out{}), wrapped_number(Scalar(int64_t(1))),
                             Scalar(int64_t(1)), Out{});
  return repeats.dtype() == ScalarType::Int64 ? result : to_dtype(result, repeats.dtype(), false, false, std::nullopt);
}

Tensor repeat_interleave_self_Tensor(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                                     std::optional<int64_t> output_size) {
  EMBER_CHECK(!dim || self.dim() > 0, Index, "Dimension specified as ", dim ? *dim : 0, " but tensor has no dimensions");
  const Tensor input = dim ? self : reshape(self, {-1});
  const int64_t d = dim ? wrap_dim(*dim, input.dim()) : 0;
  const int64_t size = input.sizes()[d];
  Tensor reps = repeats;
  if (reps.dim() == 0 || (reps.dim() == 1 && reps.numel() == 1)) reps = expand(reshape(reps, {1}), {size}, false);
  EMBER_CHECK(reps.dim() != 1 || reps.numel() == size, Runtime,
              "repeats must have the same size as input along dim, but got repeats.size(0) = ", reps.numel(),
              " and input.size(", d, ") = ", size);
  Tensor index = repeat_interleave_Tensor(reps, output_size);
  return index_select(input, d, index, Out{});
}

Tensor repeat_interleave_self_int(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                                  std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats >= 0, Runtime, "Repeats must be non-negative");
  return repeat_interleave_self_Tensor(self, scalar_tensor(Scalar(repeats), ScalarType::Int64), dim, output_size);
}

// ----------------------------------------------------------------- rot90
Tensor rot90(const Tensor& self, int64_t k, IntList dims) {
  static const int64_t plane[] = {0, 1};
  if (dims.empty()) dims = IntList(plane, 2);  // the declared default [] stands for (0, 1)
  EMBER_CHECK(dims.size() == 2, Runtime, "expected total rotation dims == 2, but got dims = ", dims.size());
  EMBER_CHECK(self.dim() >= 2, Runtime, "expected total dims >= 2, but got total dims = ", self.dim());
  const int64_t d0 = wrap_dim(dims[0], self.dim()), d1 = wrap_dim(dims[1], self.dim());
  EMBER_CHECK(d0 != d1, Runtime, "expected rotation dims to be different, but got dim0 = ", d0, " and dim1 = ", d1);
  int64_t one[1];
  switch (((k % 4) + 4) % 4) {
    case 1:
      one[0] = d1;
      return transpose(flip(self, IntList(one, 1)), d0, d1);
    case 2: {
      int64_t both[] = {d0, d1};
      return flip(self, IntList(both, 2));
    }
    case 3:
      one[0] = d0;
      return transpose(flip(self, IntList(one, 1)), d0, d1);
    default:
      return clone(self, std::nullopt);
  }
}

// ----------------------------------------------------------------- grids
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::optional<std::string> indexing) {
  EMBER_CHECK(!tensors.empty(), Runtime, "meshgrid expects a non-empty TensorList");
  const std::string how = indexing ? *indexing : "ij";
  EMBER_CHECK(how == "ij" || how == "xy", Runtime, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ",
              how);
  Dims shape;
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.dim() <= 1, Runtime, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ",
                sizes_str(t.sizes()));
    EMBER_CHECK(t.dtype() == tensors[0].dtype(), Runtime, "meshgrid expects all tensors to have the same dtype");
    shape.push_back(t.numel());
  }
  const size_t n = tensors.size();
  const bool swap = how == "xy" && n >= 2;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> grids;
  for (size_t i = 0; i < n; ++i) {
    const size_t at = swap && i < 2 ? 1 - i : i;  // the grid dim tensor i runs along
    Dims one(n, 1);
    one[at] = shape[at];
    grids.push_back(expand(view(tensors[i], one), shape, false));
  }
  return grids;
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors)
    EMBER_CHECK(t.dim() == 1, Runtime, "Expect a 1D vector, but got shape ", sizes_str(t.sizes()));
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> cols;
  for (const Tensor& g : meshgrid(tensors, std::string("ij"))) cols.push_back(reshape(g, {-1}));
  return stack(cols, 1, Out{});
}

namespace {
Tensor triangle_indices(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype, bool lower,
                        const char* op) {
  EMBER_CHECK(row >= 0, Runtime, "row must be non-negative, got", row);
  EMBER_CHECK(col >= 0, Runtime, "col must be non-negative, got", col);
  const ScalarType dt = dtype ? *dtype : ScalarType::Int64;
  EMBER_CHECK(dt == ScalarType::Int64 || dt == ScalarType::Int32, NotImplemented, "\"", op, "\" not implemented for '",
              type_name(dt), "'");
  Tensor diff = sub_Tensor(view(long_range(0, col), {1, col}), view(long_range(0, row), {row, 1}), Scalar(int64_t(1)),
                           Out{});  // column - row
  Tensor k = wrapped_number(Scalar(offset));
  Tensor keep = lower ? le_Tensor(diff, k, Out{}) : ge_Tensor(diff, k, Out{});
  Tensor coords = contiguous(t(nonzero(keep)), MemoryFormat::Contiguous);
  return dt == ScalarType::Int64 ? coords : to_dtype(coords, dt, false, false, std::nullopt);
}
}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype) {
  return triangle_indices(row, col, offset, dtype, true, "tril_indices");
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype) {
  return triangle_indices(row, col, offset, dtype, false, "triu_indices");
}

}  // namespace ember::ops
