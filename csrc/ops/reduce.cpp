// Reductions and scans (declarations/ops/reductions.yaml). Folds go through fold()
// (kernel family reduce), per-row walks (argmax, cumsum, ...) through rows() (family
// rowwise); statistics (mean, var, norms, logsumexp) compose those with pointwise ops.
#include <cmath>
#include <vector>
#include "core/parallel.h"
#include "kernels/complex_reduce.h"
#include "kernels/reduce.h"
#include "kernels/rowwise.h"
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

using kernels::reduce::ReduceOp;
using kernels::rowwise::RowOp;

// Which dims a reduction folds: the given ones (wrapped, each once), or all of them
// when dims is None or empty (all/any: when None; an empty list folds none).
Dims reduced_mask(const Tensor& self, std::optional<IntList> dims, const char* op, bool empty_folds_all = true) {
  const int64_t nd = self.dim();
  Dims mask(nd);
  for (int64_t d = 0; d < nd; ++d) mask[d] = 0;
  if (!dims || (dims->empty() && empty_folds_all)) {
    for (int64_t d = 0; d < nd; ++d) mask[d] = 1;
    return mask;
  }
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, nd);
    if (nd == 0) continue;
    EMBER_CHECK(!mask[w], Runtime, "dim ", w, " appears multiple times in the list of dims");
    mask[w] = 1;
  }
  (void)op;
  return mask;
}

Dims keep_shape(const Tensor& self, const Dims& mask) {
  Dims shape(self.sizes());
  for (int64_t d = 0; d < self.dim(); ++d)
    if (mask[d]) shape[d] = 1;
  return shape;
}

Dims result_shape(const Tensor& self, const Dims& mask, bool keepdim) {
  if (keepdim) return keep_shape(self, mask);
  Dims shape;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!mask[d]) shape.push_back(self.sizes()[d]);
  return shape;
}

int64_t reduced_count(const Tensor& self, const Dims& mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (mask[d]) n *= self.sizes()[d];
  return n;
}

template <class F>
void visit(ScalarType t, F&& f) {
  launch(t, [&](auto tag) { f(tag); });
}

// The loop planning and threading of a fold of self over mask into acc (keep_shape):
// `init(acc, n)` sets n accumulators to the identity, `run(loop, begin, end)` folds the
// loop's elements [begin, end) into its last operand, the accumulator, and
// `combine(acc, part, n)` folds one thread's private accumulators into acc. `centre`,
// when given, is one more operand of keep_shape read beside self (a variance's mean).
template <class Init, class Run, class Combine>
void fold_planned(const Tensor& self, const Dims& mask, const Tensor& acc, const Tensor* centre, Init&& init,
                  Run&& run, Combine&& combine) {
  const int64_t nout = acc.numel();
  init(acc.data(), nout);
  if (self.numel() == 0) return;
  if (!centre && self.is_contiguous() && nout == 1 && self.numel() < kGrainSize) {
    // a small full reduction: one contiguous run, no views or loop planning
    check_bounds(self);
    kernels::Loop loop;
    loop.nops = 2;
    loop.ndim = 1;
    loop.numel = loop.shape[0] = self.numel();
    loop.strides[0][0] = self.itemsize();
    loop.strides[0][1] = 0;
    loop.data[0] = self.data();
    loop.data[1] = acc.data();
    loop.storages[0] = self.storage().get();
    loop.storages[1] = acc.storage().get();
    run(loop, 0, loop.numel);
    return;
  }
  Dims strides(self.dim());
  int64_t step = 1;
  for (int64_t d = self.dim() - 1; d >= 0; --d) {
    strides[d] = mask[d] ? 0 : step;
    if (!mask[d]) step *= self.sizes()[d];
  }
  Tensor view = make_view(acc, Dims(self.sizes()), Dims(strides), 0);
  Tensor centre_view = centre ? make_view(*centre, Dims(self.sizes()), Dims(strides), 0) : Tensor();
  kernels::Loop loop = centre ? kernels::make_loop({&self, &centre_view, &view}) : kernels::make_loop({&self, &view});
  const int a = loop.nops - 1;  // the accumulator operand
  kernels::LongLoop long_loop(loop);
  const int64_t n = loop.numel;
  const int threads = get_num_threads();
  const int last = loop.ndim - 1;
  if (n < 2 * kGrainSize || threads == 1) {
    run(loop, 0, n);
  } else if (last >= 0 && loop.strides[last][a] != 0 && loop.shape[last] >= threads) {
    // the outermost dim is kept: its slices write disjoint accumulators
    const int64_t inner = n / loop.shape[last];
    parallel_for(0, loop.shape[last], std::max<int64_t>(1, kGrainSize / inner), [&](int64_t b, int64_t e) {
      run(loop, b * inner, e * inner);
    });
  } else if (nout * threads <= n) {
    // few accumulators: each thread folds a chunk into its own copy, combined in order
    const int64_t acc_bytes = nout * acc.itemsize();
    Tensor parts = empty_tensor({threads, nout}, acc.dtype());
    const int64_t chunk = (n + threads - 1) / threads;
    parallel_for(0, threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        kernels::Loop mine = loop;
        mine.data[a] = parts.data() + t * acc_bytes;
        init(mine.data[a], nout);
        run(mine, std::min(n, t * chunk), std::min(n, (t + 1) * chunk));
      }
    });
    for (int t = 0; t < threads; ++t) combine(acc.data(), parts.data() + t * acc_bytes, nout);
  } else {
    run(loop, 0, n);
  }
}

// Runs K's fold of self into acc: the real kernels (kernels::reduce::Kernels<T>) and the
// complex ones (kernels::complex::Reduce<R>) share fold_planned.
template <class K>
void fold_into(ReduceOp op, const Tensor& self, const Dims& mask, const Tensor& acc) {
  fold_planned(
      self, mask, acc, nullptr, [&](char* a, int64_t n) { K::init(op, a, n); },
      [&](const kernels::Loop& loop, int64_t b, int64_t e) { K::run(op, loop, b, e); },
      [&](char* a, const char* part, int64_t n) { K::combine(op, a, part, n); });
}

// The sum of (x - mean)² over mask into float64 accumulators, mean (keep_shape, float64)
// read beside each element: a variance's second pass, reading the input as it is.
Tensor centered_sumsq(const Tensor& self, const Tensor& mean, const Dims& mask) {
  Tensor acc = empty_tensor(keep_shape(self, mask), ScalarType::Float64);
  visit(self.dtype(), [&](auto tag) {
    using K = kernels::reduce::Kernels<typename decltype(tag)::type>;
    fold_planned(
        self, mask, acc, &mean, [](char* a, int64_t n) { std::fill_n(reinterpret_cast<double*>(a), n, 0.0); },
        [](const kernels::Loop& loop, int64_t b, int64_t e) { K::centered_sumsq(loop, b, e); },
        [](char* a, const char* part, int64_t n) {
          auto* x = reinterpret_cast<double*>(a);
          auto* y = reinterpret_cast<const double*>(part);
          for (int64_t i = 0; i < n; ++i) x[i] += y[i];
        });
  });
  return acc;
}

// Folds self over the masked dims into a fresh accumulator of keep_shape (acc dtype:
// see kernels::reduce::Kernels::acc_dtype; complex128 for a complex sum or product).
Tensor fold(ReduceOp op, const Tensor& self, const Dims& mask) {
  if (is_complex(self.dtype())) [[unlikely]] {
    EMBER_CHECK(kernels::complex::folds(op), NotImplemented,
                "ember does not implement this reduction for complex tensors yet");
    Tensor acc = empty_tensor(keep_shape(self, mask), ScalarType::ComplexDouble);
    visit_complex(self.dtype(), [&](auto part) {  // nothing runs where there is no data (meta)
      fold_into<kernels::complex::Reduce<decltype(part)>>(op, self, mask, acc);
    });
    return acc;
  }
  const ScalarType acc_t = visit_dtype(self.dtype(), [&](auto tag) {
    return kernels::reduce::Kernels<typename decltype(tag)::type>::acc_dtype(op);
  });
  Tensor acc = empty_tensor(keep_shape(self, mask), acc_t);
  visit(self.dtype(), [&](auto tag) {  // nothing runs where there is no data (meta)
    fold_into<kernels::reduce::Kernels<typename decltype(tag)::type>>(op, self, mask, acc);
  });
  return acc;
}

// acc (keep_shape) as the op's result: dims dropped unless keepdim, converted to dtype,
// written into out= when given.
Tensor finish(const Tensor& acc, const Tensor& self, const Dims& mask, bool keepdim, ScalarType dtype,
              const Out& out, const char* op) {
  Dims shape = result_shape(self, mask, keepdim);
  Tensor r = keepdim ? acc : make_view(acc, shape, contiguous_strides(shape), 0);
  if (out.tensor.defined()) {
    Tensor dst = resolve_out(out, shape, dtype, op);
    return copy_(dst, r, false);
  }
  if (r.dtype() == dtype) return r;
  if (r.dim() == 0 && r.is_cpu()) return scalar_tensor(item(r), dtype);  // cheaper than a converting copy
  return to_dtype(r, dtype, false, false, std::nullopt);
}

ScalarType sum_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self.dtype(), true) ? ScalarType::Int64 : self.dtype();
}

Tensor as_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  return dtype && *dtype != self.dtype() ? to_dtype(self, *dtype, false, false, std::nullopt) : self;
}

Tensor reduce(ReduceOp op, const Tensor& self, std::optional<IntList> dim, bool keepdim, ScalarType dtype,
              const Out& out, const char* name) {
  if (is_complex(self.dtype()) && (op == ReduceOp::all || op == ReduceOp::any)) {
    // a complex number is true when either part is nonzero
    return reduce(op, ne_Tensor(self, wrapped_number(Scalar(int64_t(0))), Out{}), dim, keepdim, dtype, out, name);
  }
  Dims mask = reduced_mask(self, dim, name, op != ReduceOp::all && op != ReduceOp::any);
  return finish(fold(op, self, mask), self, mask, keepdim, dtype, out, name);
}

void check_float(const Tensor& self, const char* op, std::optional<ScalarType> dtype = std::nullopt) {
  ScalarType t = dtype.value_or(self.dtype());
  EMBER_CHECK(is_inexact(t), Runtime, op,
              "(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: ",
              type_name(t));
}

void check_nonempty(const Tensor& self, const Dims& mask, const char* op) {
  for (int64_t d = 0; d < self.dim(); ++d)
    EMBER_CHECK(!(mask[d] && self.sizes()[d] == 0), Index, op, "(): Expected reduction dim ", d,
                " to have non-zero size.");
}

// amax/amin: no identity, so every folded dim must be nonempty; out= of the input's dtype.
Tensor extremum(ReduceOp op, const Tensor& self, IntList dim, bool keepdim, const Out& out, const char* name) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"", op == ReduceOp::amax ? "max" : "min",
              "_values_cpu\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(!(dim.empty() && self.numel() == 0), Runtime, name,
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
              "'dim' argument.");
  Dims mask = reduced_mask(self, dim, name);
  check_nonempty(self, mask, name);
  EMBER_CHECK(!out.tensor.defined() || out.tensor.dtype() == self.dtype(), Runtime,
              "Expected the dtype for input and out to match, but got ", type_name(self.dtype()),
              " for input's dtype and ", type_name(out.tensor.dtype()), " for out's dtype.");
  return finish(fold(op, self, mask), self, mask, keepdim, self.dtype(), out, name);
}

// sum/prod/cumsum's dtype: with out= and no dtype=, the out's (the input converted to it,
// as torch's); with both, they must agree.
std::optional<ScalarType> with_out_dtype(std::optional<ScalarType> dtype, const Out& out) {
  if (!out.tensor.defined()) return dtype;
  const ScalarType t = out.tensor.dtype();
  EMBER_CHECK(!dtype || *dtype == t, Runtime, "Expected out tensor to have dtype ", cpp_name(*dtype), ", but got ",
              cpp_name(t), " instead");
  return t;
}

// The rows of each tensor along dim: a loop over their first elements.
kernels::rowwise::Rows make_rows(std::initializer_list<const Tensor*> ts, int64_t dim, int64_t length) {
  kernels::rowwise::Rows r;
  std::vector<Tensor> firsts;
  firsts.reserve(ts.size());
  int k = 0;
  for (const Tensor* t : ts) {
    firsts.push_back(select(*t, dim, 0));
    r.dim_strides[k++] = t->strides()[dim] * t->itemsize();
  }
  std::vector<const Tensor*> ptrs;
  for (auto& f : firsts) ptrs.push_back(&f);
  r.loop = kernels::make_loop(ptrs.data(), static_cast<int>(ptrs.size()));
  r.length = length;
  return r;
}

void run_rows(RowOp op, ScalarType t, const kernels::rowwise::Rows& rows) {
  visit(t, [&](auto tag) { kernels::rowwise::Kernels<typename decltype(tag)::type>::run(op, rows); });
}

// max/min/argmax/argmin along one dim: (values, indices) shaped with dim kept as 1.
std::tuple<Tensor, Tensor> arg_reduce(const Tensor& self, int64_t dim, bool keepdim, bool is_max, const char* op) {
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, op, "(): does not support complex input");
  EMBER_CHECK(self.dtype() != ScalarType::Bool || op[0] != 'a', NotImplemented, "\"", op, "_cpu\" not implemented for 'Bool'");
  const int64_t d = wrap_dim(dim, self.dim());
  const Tensor src = self.dim() == 0 ? view(self, {1}) : self;
  EMBER_CHECK(src.sizes()[d] != 0, Index, op, "(): Expected reduction dim ", d, " to have non-zero size.");
  Dims shape(src.sizes());
  shape[d] = 1;
  Tensor values = empty_tensor(shape, src.dtype()), indices = empty_tensor(shape, ScalarType::Int64);
  if (src.numel() > 0) {
    auto rows = make_rows({&values, &indices, &src}, d, src.sizes()[d]);
    run_rows(is_max ? RowOp::argmax : RowOp::argmin, src.dtype(), rows);
  }
  if (!keepdim || self.dim() == 0) {
    values = self.dim() == 0 ? view(values, {}) : squeeze_dim(values, d);
    indices = self.dim() == 0 ? view(indices, {}) : squeeze_dim(indices, d);
  }
  return {values, indices};
}

Tensor arg_all(const Tensor& self, bool keepdim, bool is_max, const char* op) {
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, op, "(): does not support complex input");
  EMBER_CHECK(self.dtype() != ScalarType::Bool, Runtime, op, "(): does not support bool input");
  EMBER_CHECK(self.numel() > 0, Index, op, "(): Expected reduction dim to be specified for input.numel() == 0.");
  Tensor flat = reshape(self, {-1});
  Tensor idx = std::get<1>(arg_reduce(flat, 0, false, is_max, op));
  if (!keepdim) return idx;
  Dims ones(self.dim());
  for (int64_t d = 0; d < self.dim(); ++d) ones[d] = 1;
  return view(idx, ones);
}

// Variance over mask with the given correction, computed in float64 (complex128) from the
// mean. A complex variance is the mean of |x - mean|^2: real, the part dtype.
Tensor variance(const Tensor& self, std::optional<IntList> dim, double correction, bool keepdim, const char* op,
                Tensor* mean_out) {
  check_float(self, op);
  const bool cx = is_complex(self.dtype());
  Dims mask = reduced_mask(self, dim, op);
  const int64_t n = reduced_count(self, mask);
  // Two passes over the input as it is, each folding into float64 accumulators: the sum,
  // then the squared deviations from the mean (a real input; a complex one forms them)
  Tensor mean = div_Tensor(fold(ReduceOp::sum, self, mask), wrapped_number(Scalar(double(n))));
  Tensor var;
  if (cx) {
    Tensor diff = sub_Tensor(self, mean, Scalar(int64_t(1)));
    // |d|^2 = re^2 + im^2: fold the squared (..., 2) real view over mask and its last dim
    Tensor parts = view_as_real(diff);
    Dims parts_mask(mask);
    parts_mask.push_back(1);
    var = view(fold(ReduceOp::sum, mul_Tensor(parts, parts), parts_mask), keep_shape(self, mask));
  } else {
    var = centered_sumsq(self, contiguous(mean, MemoryFormat::Contiguous), mask);
  }
  var = div_Tensor(var, wrapped_number(Scalar(std::max(0.0, double(n) - correction))));
  if (mean_out) *mean_out = finish(mean, self, mask, keepdim, self.dtype(), Out{}, op);
  return finish(var, self, mask, keepdim, to_real(self.dtype()), Out{}, op);
}

double correction_of(std::optional<Scalar> correction, bool unbiased) {
  return correction ? correction->to_double() : unbiased ? 1.0 : 0.0;
}

}  // namespace

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return reduce(ReduceOp::sum, as_dtype(self, dtype), std::nullopt, false, sum_dtype(self, dtype), Out{}, "sum");
}

Tensor sum_dim_IntList(const Tensor& self, std::optional<IntList> dim, bool keepdim, std::optional<ScalarType> dtype,
                       const Out& out) {
  dtype = with_out_dtype(dtype, out);
  return reduce(ReduceOp::sum, as_dtype(self, dtype), dim, keepdim, sum_dtype(self, dtype), out, "sum");
}

Tensor nansum(const Tensor& self, std::optional<IntList> dim, bool keepdim, std::optional<ScalarType> dtype,
              const Out& out) {
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, "nansum on CPU does not support complex inputs");
  dtype = with_out_dtype(dtype, out);
  // torch's kernel for a floating input into an out= of an integral dtype: none
  EMBER_CHECK(!(out.tensor.defined() && is_floating(self.dtype()) && !is_floating(*dtype)), NotImplemented,
              "\"nansum_cpu\" not implemented for '", type_name(*dtype), "'");
  return reduce(ReduceOp::nansum, as_dtype(self, dtype), dim, keepdim, sum_dtype(self, dtype), out, "nansum");
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  return mean_dim(self, std::nullopt, false, dtype, Out{});
}

Tensor mean_dim(const Tensor& self, std::optional<IntList> dim, bool keepdim, std::optional<ScalarType> dtype,
                const Out& out) {
  check_float(self, "mean", dtype);
  Tensor x = as_dtype(self, dtype);
  Dims mask = reduced_mask(x, dim, "mean");
  Tensor acc = fold(ReduceOp::sum, x, mask);
  acc = div_Tensor(acc, wrapped_number(Scalar(double(reduced_count(x, mask)))));
  return finish(acc, x, mask, keepdim, x.dtype(), out, "mean");
}

Tensor nanmean(const Tensor& self, std::optional<IntList> dim, bool keepdim, std::optional<ScalarType> dtype,
               const Out& out) {
  EMBER_CHECK(!is_complex(self.dtype()), Runtime, "nansum on CPU does not support complex inputs");
  EMBER_CHECK(is_floating(self.dtype()), Runtime,
              "nanmean(): expected input to have floating point or complex dtype but got ", type_name(self.dtype()));
  check_float(self, "nanmean", dtype);
  Tensor x = as_dtype(self, dtype);
  Dims mask = reduced_mask(x, dim, "nanmean");
  Tensor total = fold(ReduceOp::nansum, x, mask);
  Tensor count = fold(ReduceOp::sum, logical_not(isnan(x)), mask);
  return finish(div_Tensor(total, count), x, mask, keepdim, x.dtype(), out, "nanmean");
}

Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) {
  return reduce(ReduceOp::prod, as_dtype(self, dtype), std::nullopt, false, sum_dtype(self, dtype), Out{}, "prod");
}

Tensor prod_dim_int(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype, const Out& out) {
  dtype = with_out_dtype(dtype, out);
  int64_t d[] = {dim};
  return reduce(ReduceOp::prod, as_dtype(self, dtype), IntList(d, 1), keepdim, sum_dtype(self, dtype), out, "prod");
}

Tensor amax(const Tensor& self, IntList dim, bool keepdim, const Out& out) {
  return extremum(ReduceOp::amax, self, dim, keepdim, out, "amax");
}

Tensor amin(const Tensor& self, IntList dim, bool keepdim, const Out& out) {
  return extremum(ReduceOp::amin, self, dim, keepdim, out, "amin");
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"aminmax_cpu\" not implemented for '",
              type_name(self.dtype()), "'");
  EMBER_CHECK(self.numel() > 0 || dim, Runtime,
              "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  Dims d;
  if (dim) d.push_back(*dim);
  if (!dim && keepdim) {
    Dims ones(self.dim());
    for (int64_t i = 0; i < self.dim(); ++i) ones[i] = 1;
    return {view(amin(self, {}, false, Out{}), ones), view(amax(self, {}, false, Out{}), ones)};
  }
  return {amin(self, d, keepdim, Out{}), amax(self, d, keepdim, Out{})};
}

Tensor max(const Tensor& self) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"max_all\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(self.numel() > 0, Runtime,
              "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
              "'dim' argument.");
  return amax(self, {}, false, Out{});
}

Tensor min(const Tensor& self) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"min_all\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(self.numel() > 0, Runtime,
              "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
              "'dim' argument.");
  return amin(self, {}, false, Out{});
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return arg_reduce(self, dim, keepdim, true, "max");
}

std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return arg_reduce(self, dim, keepdim, false, "min");
}

Tensor max_other(const Tensor& self, const Tensor& other) { return maximum(self, other, Out{}); }
Tensor min_other(const Tensor& self, const Tensor& other) { return minimum(self, other, Out{}); }

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return arg_all(self, keepdim, true, "argmax");
  return std::get<1>(arg_reduce(self, *dim, keepdim, true, "argmax"));
}

Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return arg_all(self, keepdim, false, "argmin");
  return std::get<1>(arg_reduce(self, *dim, keepdim, false, "argmin"));
}

// all/any return bool, except for uint8 inputs (uint8, as torch keeps for old code).
// out= must be bool (or uint8 for a uint8 input).
ScalarType logical_result(const Tensor& self, const Out& out, const char* op) {
  const ScalarType t = self.dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  if (!out.tensor.defined()) return t;
  const ScalarType o = out.tensor.dtype();
  EMBER_CHECK(o == ScalarType::Bool || o == t, Runtime, op, " only supports bool tensor for result, got: ",
              type_name(o));
  return o;
}

Tensor all(const Tensor& self, std::optional<IntList> dim, bool keepdim, const Out& out) {
  ScalarType t = logical_result(self, out, "all");
  return reduce(ReduceOp::all, self, dim, keepdim, t, out, "all");
}

Tensor any(const Tensor& self, std::optional<IntList> dim, bool keepdim, const Out& out) {
  ScalarType t = logical_result(self, out, "any");
  return reduce(ReduceOp::any, self, dim, keepdim, t, out, "any");
}

Tensor count_nonzero(const Tensor& self, std::optional<IntList> dim) {
  Tensor nz = ne_Tensor(self, wrapped_number(Scalar(int64_t(0))), Out{});
  return reduce(ReduceOp::sum, nz, dim, false, ScalarType::Int64, Out{}, "count_nonzero");
}

Tensor var(const Tensor& self, bool unbiased) {
  return variance(self, std::nullopt, unbiased ? 1 : 0, false, "var", nullptr);
}
Tensor var_dim(const Tensor& self, std::optional<IntList> dim, bool unbiased, bool keepdim) {
  return variance(self, dim, unbiased ? 1 : 0, keepdim, "var", nullptr);
}
Tensor var_correction(const Tensor& self, std::optional<IntList> dim, std::optional<Scalar> correction, bool keepdim) {
  return variance(self, dim, correction_of(correction, true), keepdim, "var", nullptr);
}
Tensor std(const Tensor& self, bool unbiased) { return sqrt(var(self, unbiased), Out{}); }
Tensor std_dim(const Tensor& self, std::optional<IntList> dim, bool unbiased, bool keepdim) {
  return sqrt(var_dim(self, dim, unbiased, keepdim), Out{});
}
Tensor std_correction(const Tensor& self, std::optional<IntList> dim, std::optional<Scalar> correction, bool keepdim) {
  return sqrt(var_correction(self, dim, correction, keepdim), Out{});
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& self, std::optional<IntList> dim, std::optional<Scalar> correction,
                                    bool keepdim) {
  Tensor mean;
  Tensor v = variance(self, dim, correction_of(correction, true), keepdim, "var_mean", &mean);
  return {v, mean};
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& self, std::optional<IntList> dim, std::optional<Scalar> correction,
                                    bool keepdim) {
  Tensor mean;
  Tensor v = variance(self, dim, correction_of(correction, true), keepdim, "std_mean", &mean);
  return {sqrt(v, Out{}), mean};
}

std::tuple<Tensor, Tensor> var_mean_unbiased(const Tensor& self, bool unbiased) {
  return var_mean(self, std::nullopt, Scalar(unbiased ? 1.0 : 0.0), false);
}
std::tuple<Tensor, Tensor> var_mean_dim(const Tensor& self, std::optional<IntList> dim, bool unbiased, bool keepdim) {
  return var_mean(self, dim, Scalar(unbiased ? 1.0 : 0.0), keepdim);
}
std::tuple<Tensor, Tensor> std_mean_unbiased(const Tensor& self, bool unbiased) {
  return std_mean(self, std::nullopt, Scalar(unbiased ? 1.0 : 0.0), false);
}
std::tuple<Tensor, Tensor> std_mean_dim(const Tensor& self, std::optional<IntList> dim, bool unbiased, bool keepdim) {
  return std_mean(self, dim, Scalar(unbiased ? 1.0 : 0.0), keepdim);
}

// log(sum(exp(x))) from the largest element, so large inputs do not overflow.
Tensor logsumexp(const Tensor& self, IntList dim, bool keepdim, const Out& out) {
  Tensor x = is_inexact(self.dtype()) ? self : to_dtype(self, default_dtype(), false, false, std::nullopt);
  Dims mask = reduced_mask(x, dim, "logsumexp");
  if (x.numel() == 0) {
    Tensor r = log(fold(ReduceOp::sum, exp(x, Out{}), mask), Out{});
    return finish(r, x, mask, keepdim, x.dtype(), out, "logsumexp");
  }
  // a complex input shifts by its largest real part (exp(x - m) = exp(re - m) e^(i im))
  Tensor m = fold(ReduceOp::amax, is_complex(x.dtype()) ? real(x) : x, mask);
  m = masked_fill_Scalar(m, isinf(m), Scalar(0.0), Out{});
  Tensor s = fold(ReduceOp::sum, exp(sub_Tensor(x, m, Scalar(int64_t(1))), Out{}), mask);
  return finish(add_Tensor(log(s, Out{}), m, Scalar(int64_t(1))), x, mask, keepdim, x.dtype(), out, "logsumexp");
}

Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord, std::optional<IntList> dim, bool keepdim,
                          std::optional<ScalarType> dtype, const Out& out) {
  EMBER_CHECK(is_inexact(self.dtype()), Runtime,
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
              type_name(self.dtype()));
  if (dtype) {
    EMBER_CHECK(is_complex(*dtype) == is_complex(self.dtype()), Runtime, "linalg.vector_norm: dtype should be ",
                is_complex(self.dtype()) ? "complex for complex" : "real for real", " inputs, but got ",
                type_name(*dtype));
    EMBER_CHECK(is_inexact(*dtype) && promote_types(self.dtype(), *dtype) == *dtype, Runtime,
                "linalg.vector_norm: the dtype of the input (", type_name(self.dtype()),
                ") should be convertible without narrowing to the specified dtype (", type_name(*dtype), ")");
  }
  const ScalarType result_t = to_real(dtype.value_or(self.dtype()));  // a complex input's norm is real
  EMBER_CHECK(!out.tensor.defined() || out.tensor.dtype() == result_t, Runtime,
              "Expected out tensor to have dtype ", cpp_name(result_t), ", but got ", cpp_name(out.tensor.dtype()),
              " instead");
  Tensor x = as_dtype(self, dtype);
  Dims mask = reduced_mask(x, dim, "linalg.vector_norm");
  const double p = ord.to_double();
  // the orders 2, 1 and ±inf fold |x| or x² straight from a real input; a complex one
  // folds its magnitudes
  Tensor a = is_complex(x.dtype()) ? abs(x, Out{}) : x;
  Tensor r;
  if (std::isinf(p)) {
    const char* name = p > 0 ? "inf" : "-inf";
    if (!dim || dim->empty()) {
      EMBER_CHECK(x.numel() > 0, Runtime, "linalg.vector_norm cannot compute the ", name,
                  " norm on an empty tensor because the operation does not have an identity");
    } else {
      for (int64_t d : *dim)  // torch's message names the dim as given, with no space after it
        EMBER_CHECK(x.dim() == 0 || x.sizes()[wrap_dim(d, x.dim())] > 0, Runtime, "linalg.vector_norm cannot compute the ",
                    name, " norm on the dimension ", d,
                    "because this dimension is empty and the operation does not have an identity");
    }
    r = fold(p > 0 ? ReduceOp::amax_abs : ReduceOp::amin_abs, a, mask);
  } else if (p == 0) {
    r = fold(ReduceOp::sum, ne_Tensor(a, wrapped_number(Scalar(int64_t(0))), Out{}), mask);
  } else if (p == 1) {
    r = fold(ReduceOp::asum, a, mask);
  } else if (p == 2) {
    r = sqrt(fold(ReduceOp::sumsq, a, mask), Out{});
  } else {
    a = abs(a, Out{});
    Tensor s = fold(ReduceOp::sum, pow_Tensor(a, wrapped_number(Scalar(p)), Out{}), mask);
    r = pow_Tensor(s, wrapped_number(Scalar(1.0 / p)), Out{});
  }
  return finish(r, x, mask, keepdim, result_t, out, "linalg.vector_norm");
}

Tensor norm_ScalarOpt_dim(const Tensor& self, std::optional<Scalar> p, std::optional<IntList> dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  return linalg_vector_norm(self, p.value_or(Scalar(2.0)), dim, keepdim, dtype, Out{});
}

namespace {

Tensor scan(RowOp op, const Tensor& self, int64_t dim, ScalarType out_dtype, const Out& out, const char* name) {
  const Tensor src = self.dim() == 0 ? view(self, {1}) : self;
  const int64_t d = wrap_dim(dim, src.dim());
  // the kernel writes int64 for integral inputs, the input dtype otherwise
  const ScalarType kernel_t = is_integral(src.dtype(), true) ? ScalarType::Int64 : src.dtype();
  Tensor r = empty_tensor(src.sizes(), kernel_t);
  if (src.numel() > 0) {
    auto rows = make_rows({&r, &src}, d, src.sizes()[d]);
    if (is_complex(src.dtype())) {
      EMBER_CHECK(op == RowOp::cumsum || op == RowOp::cumprod || op == RowOp::logcumsumexp, NotImplemented, "\"",
                  name, "_out_cpu\" not implemented for '", type_name(src.dtype()), "'");
      visit_complex(src.dtype(), [&](auto part) {
        using Reduce = kernels::complex::Reduce<decltype(part)>;
        if (op == RowOp::logcumsumexp) return Reduce::logcumsumexp(rows);
        Reduce::scan(op == RowOp::cumsum ? ReduceOp::sum : ReduceOp::prod, rows);
      });
    } else {
      run_rows(op, src.dtype(), rows);
    }
  }
  if (kernel_t != out_dtype) r = to_dtype(r, out_dtype, false, false, std::nullopt);
  if (self.dim() == 0) r = view(r, {});
  if (!out.tensor.defined()) return r;
  return copy_(resolve_out(out, self.sizes(), out_dtype, name), r, false);
}

std::tuple<Tensor, Tensor> cum_arg(RowOp op, const Tensor& self, int64_t dim) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"", op == RowOp::cummax ? "cummax" : "cummin",
              "_cpu\" not implemented for '", type_name(self.dtype()), "'");
  const Tensor src = self.dim() == 0 ? view(self, {1}) : self;
  const int64_t d = wrap_dim(dim, src.dim());
  Tensor values = empty_tensor(src.sizes(), src.dtype()), indices = empty_tensor(src.sizes(), ScalarType::Int64);
  if (src.numel() > 0) run_rows(op, src.dtype(), make_rows({&values, &indices, &src}, d, src.sizes()[d]));
  if (self.dim() == 0) return {view(values, {}), view(indices, {})};
  return {values, indices};
}

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Out& out) {
  wrap_dim(dim, std::max<int64_t>(self.dim(), 1));  // a bad dim is reported first
  dtype = with_out_dtype(dtype, out);
  EMBER_CHECK(dtype != ScalarType::Bool, NotImplemented, "\"cumsum_out_cpu\" not implemented for 'Bool'");
  Tensor x = as_dtype(self, dtype);
  if (x.dtype() == ScalarType::Bool) x = to_dtype(x, ScalarType::Int64, false, false, std::nullopt);
  return scan(RowOp::cumsum, x, dim, sum_dtype(self, dtype), out, "cumsum");
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Out& out) {
  wrap_dim(dim, std::max<int64_t>(self.dim(), 1));  // a bad dim is reported first
  dtype = with_out_dtype(dtype, out);
  EMBER_CHECK(dtype != ScalarType::Bool, NotImplemented, "\"cumprod_out_cpu\" not implemented for 'Bool'");
  Tensor x = as_dtype(self, dtype);
  if (x.dtype() == ScalarType::Bool) x = to_dtype(x, ScalarType::Int64, false, false, std::nullopt);
  return scan(RowOp::cumprod, x, dim, sum_dtype(self, dtype), out, "cumprod");
}

Tensor logcumsumexp(const Tensor& self, int64_t dim, const Out& out) {
  wrap_dim(dim, std::max<int64_t>(self.dim(), 1));  // a bad dim is reported first
  EMBER_CHECK(is_floating(self.dtype()) || is_complex(self.dtype()), NotImplemented,
              "\"logcumsumexp_out_cpu\" not implemented for '",
              type_name(self.dtype()), "'");
  EMBER_CHECK(!out.tensor.defined() || out.tensor.dtype() == self.dtype(), Runtime, "expected scalar_type ",
              type_name(self.dtype()), " but found ", type_name(out.tensor.dtype()));
  return scan(RowOp::logcumsumexp, self, dim, self.dtype(), out, "logcumsumexp");
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) { return cum_arg(RowOp::cummax, self, dim); }
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) { return cum_arg(RowOp::cummin, self, dim); }

}  // namespace ember::ops
