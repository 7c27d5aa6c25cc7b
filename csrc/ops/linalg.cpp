// Matrix products and linear algebra. See declarations/ops/linalg.yaml.
//
// float32/float64 products go to OpenBLAS's gemm (kernels/linalg.h; loaded on first use),
// with transpose flags for any operand that has one unit stride; other layouts are
// copied first. The other dtypes use the matmul kernel family. LAPACK routines work on
// column-major copies (one per batch entry), so their results come out column-major
// as torch's do. Errors the input matrix causes (singular, not positive definite) are
// LinAlgErrors (core/linalg_error.h), which Python sees as ember.linalg.LinAlgError.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>
#include "core/linalg_error.h"
#include "core/parallel.h"
#include "kernels/gemm_bf16.h"
#include "kernels/linalg.h"
#include "kernels/matmul.h"
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/pinned_work.h"
#include "ops/visit_lapack.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

using kernels::linalg::blas_int;
using kernels::linalg::fits_blas_int;
using kernels::linalg::saturating_work;

// ---------------------------------------------------------------- checks and names


void check_not_bool(const Tensor& t, const char* kernel) {
  EMBER_CHECK(t.dtype() != ScalarType::Bool, NotImplemented, "\"", kernel, "\" not implemented for 'Bool'");
}

void check_same_dtype_mm(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), Runtime, "expected m1 and m2 to have the same dtype, but got: ",
              cpp_name(a.dtype()), " != ", cpp_name(b.dtype()));
}

void check_same_dtype_batched(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), Runtime, "expected scalar type ", type_name(a.dtype()), " but found ",
              type_name(b.dtype()));
}

std::string mat_str(const Tensor& t) { return str_cat(t.sizes()[0], "x", t.sizes()[1]); }

// alpha and beta of the add* ops: a float factor makes no sense for integer results.
void check_factors(ScalarType dtype, const Scalar& beta, const Scalar& alpha) {
  if (!is_integral(dtype, true)) return;
  EMBER_CHECK(!beta.is_floating(), Runtime, "For integral input tensors, argument beta must not be a floating point number.");
  EMBER_CHECK(!alpha.is_floating(), Runtime, "For integral input tensors, argument alpha must not be a floating point number.");
}

// ---------------------------------------------------------------- gemm

// Byte offsets of every batch entry (the dims before the last two) of t, in row-major
// order of the batch shape `batch` (t's leading dims, possibly expanded: stride 0).
std::vector<int64_t> batch_offsets(const Tensor& t, IntList batch) {
  const int64_t nb = static_cast<int64_t>(batch.size());
  int64_t count = 1;
  for (int64_t s : batch) count *= s;
  std::vector<int64_t> out(static_cast<size_t>(count));
  std::vector<int64_t> idx(static_cast<size_t>(nb), 0);
  int64_t off = 0;
  const int64_t item = t.itemsize();
  for (int64_t e = 0; e < count; ++e) {
    out[e] = off * item;
    for (int64_t d = nb - 1; d >= 0; --d) {
      off += t.strides()[d];
      if (++idx[d] < batch[d]) break;
      off -= idx[d] * t.strides()[d];
      idx[d] = 0;
    }
  }
  return out;
}

// The fields a product's kernel arguments share (kernels::matmul::Gemm,
// kernels::gemm_bf16::Args): the sizes, data and strides of the last two dims.
template <class G>
void describe_product(G& g, const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t nd = out.dim();
  g.m = out.sizes()[nd - 2];
  g.n = out.sizes()[nd - 1];
  g.k = a.sizes()[nd - 1];
  g.a = a.data();
  g.b = b.data();
  g.c = out.data();
  g.a_rs = a.strides()[nd - 2];
  g.a_cs = a.strides()[nd - 1];
  g.b_rs = b.strides()[nd - 2];
  g.b_cs = b.strides()[nd - 1];
  g.c_rs = out.strides()[nd - 2];
  g.c_cs = out.strides()[nd - 1];
}

// out[..., m, n] = beta * out + alpha * a[..., m, k] @ b[..., k, n]. The three have the
// same batch dims (a and b may be expanded); dtypes are equal and checked by the caller.
// beta == 0 never reads out. out must be row-major in its last two dims (fresh).
void gemm(const Tensor& out, Tensor a, Tensor b, const Scalar& alpha, const Scalar& beta) {
  if (out.numel() == 0 || !runs_kernels()) return;
  const int64_t nd = out.dim();
  const int64_t m = out.sizes()[nd - 2], n = out.sizes()[nd - 1], k = a.sizes()[nd - 1];
  check_bounds(a);
  check_bounds(b);
  check_bounds(out);
  const ScalarType dt = out.dtype();
  const bool floating = dt == ScalarType::Float32 || dt == ScalarType::Float64;
  if (is_complex(dt) && k == 0) {  // no product: beta * out (never read when beta is 0)
    if (!beta.to_bool()) zero_(out);
    else copy_(out, mul_Tensor(out, scalar_tensor(beta, dt)), false);
    return;
  }
  using kernels::gemm_bf16::Path;
  const Path bf16_path = dt == ScalarType::BFloat16 && k > 0 ? kernels::gemm_bf16::path() : Path::Convert;
  if (bf16_path != Path::Convert) {
    // AMX or AVX512-BF16 (or their emulations): float32 accumulators, one rounding.
    const Dims batch(IntList(out.sizes().data(), static_cast<size_t>(nd - 2)));
    const std::vector<int64_t> a_off = batch_offsets(a, batch), b_off = batch_offsets(b, batch),
                               c_off = batch_offsets(out, batch);
    kernels::gemm_bf16::Args g;
    describe_product(g, out, a, b);
    g.a_off = a_off.data();
    g.b_off = b_off.data();
    g.c_off = c_off.data();
    g.batch = static_cast<int64_t>(c_off.size());
    g.alpha = static_cast<float>(alpha.to_double());
    g.beta = static_cast<float>(beta.to_double());
    out.storage()->bump_version();
    PinnedWork work({&a, &b, &out}, saturating_work(g.batch * m, n, k));
    kernels::gemm_bf16::gemm(g, bf16_path);
    return;
  }
  if ((dt == ScalarType::BFloat16 || dt == ScalarType::Float16) && k > 0) {
    // No bfloat16/float16 arithmetic on AVX2: both operands to float32 (bfloat16 is a
    // 16-bit shift, float16 F16C's vcvtph2ps, in the copy kernels), one sgemm, one rounding
    // (to nearest even) of each result: what torch's CPU products give where they
    // accumulate in float32. float16 stays here on every CPU: AVX512-FP16's products
    // accumulate in float16, not torch's semantics.
    const bool read_c = beta.to_double() != 0;
    Tensor c32 = read_c ? to_dtype(out, ScalarType::Float32, false, true, MemoryFormat::Contiguous)
                        : empty_tensor(out.sizes(), ScalarType::Float32, out.device(), "mm");
    gemm(c32, to_dtype(a, ScalarType::Float32, false, false, std::nullopt),
         to_dtype(b, ScalarType::Float32, false, false, std::nullopt), alpha, beta);
    copy_(out, c32, false);
    return;
  }
  const bool use_blas = (floating || is_complex(dt)) && k > 0 && fits_blas_int(m) && fits_blas_int(n) && fits_blas_int(k) &&
                        out.strides()[nd - 1] == 1 && fits_blas_int(out.strides()[nd - 2]);
  kernels::linalg::BlasMat la{}, lb{};
  if (use_blas) {
    auto layout = [nd](const Tensor& t) {
      auto l = kernels::linalg::blas_layout(t.sizes()[nd - 2], t.sizes()[nd - 1], t.strides()[nd - 2], t.strides()[nd - 1]);
      l.ok = l.ok && fits_blas_int(l.ld);
      return l;
    };
    if (!(la = layout(a)).ok) la = layout(a = contiguous(a, MemoryFormat::Contiguous));
    if (!(lb = layout(b)).ok) lb = layout(b = contiguous(b, MemoryFormat::Contiguous));
  }
  const Dims batch(IntList(out.sizes().data(), static_cast<size_t>(nd - 2)));
  kernels::matmul::Gemm g;
  describe_product(g, out, a, b);
  g.a_off = batch_offsets(a, batch);
  g.b_off = batch_offsets(b, batch);
  g.c_off = batch_offsets(out, batch);
  out.storage()->bump_version();
  PinnedWork work({&a, &b, &out}, saturating_work(g.batch() * m, n, k));
  if (use_blas && is_complex(dt)) {
    visit_complex(dt, [&](auto zero) {
      using C = std::complex<decltype(zero)>;
      kernels::linalg::Kernels<C>::gemm(g, la.trans, la.ld, lb.trans, lb.ld, C(alpha.to_complex()), C(beta.to_complex()));
    });
    return;
  }
  if (use_blas) {
    visit_float(dt, [&](auto zero) {
      using T = decltype(zero);
      kernels::linalg::Kernels<T>::gemm(g, la.trans, la.ld, lb.trans, lb.ld, T(alpha.to_double()), T(beta.to_double()));
    });
    return;
  }
  // complex products BLAS cannot take (a dimension past 32 bits) stop in visit_dtype
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::matmul::Kernels<T>::gemm(g, alpha, beta);
  });
}

// A 1-D tensor seen as a column (n x 1) or a row (1 x n): views, no copy.
Tensor as_column(const Tensor& v) {
  return make_view(v, Dims{v.sizes()[0], 1}, Dims{v.strides()[0], 1}, v.offset());
}
Tensor as_row(const Tensor& v) {
  return make_view(v, Dims{1, v.sizes()[0]}, Dims{1, v.strides()[0]}, v.offset());
}

// out = beta * self (broadcast to out's shape) before a gemm with that beta; returns
// false when beta is 0 (self is then ignored, as in torch: its NaNs do not propagate).
bool load_self(const Tensor& out, const Tensor& self, const Scalar& beta) {
  if (!beta.to_bool() || out.numel() == 0) return false;
  if (!self.is_same(out)) copy_(out, expand(self, out.sizes(), false), false);
  return true;
}

// The dtype of an elementwise result of a 0-dim and a dimensioned tensor (torch's rule:
// a 0-dim tensor decides only when its category is higher).
int category(ScalarType t) { return t == ScalarType::Bool ? 0 : is_integral(t, false) ? 1 : 2; }

ScalarType result_type(const Tensor& a, const Tensor& b) {
  const bool a0 = a.dim() == 0, b0 = b.dim() == 0;
  if (a0 == b0) return promote_types(a.dtype(), b.dtype());
  const Tensor& zero = a0 ? a : b;
  const Tensor& dimmed = a0 ? b : a;
  return category(zero.dtype()) > category(dimmed.dtype()) ? zero.dtype() : dimmed.dtype();
}



// ---------------------------------------------------------------- out= and in-place

// Whether two tensors' byte ranges in one storage intersect (a coarse test: strided
// tensors that interleave count as overlapping).
bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0 || a.storage().get() != b.storage().get()) return false;
  auto range = [](const Tensor& t) {
    int64_t lo = 0, hi = 0;
    for (int64_t d = 0; d < t.dim(); ++d) {
      const int64_t span = (t.sizes()[d] - 1) * t.strides()[d];
      (span < 0 ? lo : hi) += span;
    }
    const char* base = t.storage()->device_data() + t.offset() * t.itemsize();  // an address, never read
    return std::pair<const char*, const char*>(base + lo * t.itemsize(), base + (hi + 1) * t.itemsize());
  };
  auto ra = range(a), rb = range(b);
  return ra.first < rb.second && rb.first < ra.second;
}

// torch's exact-dtype rule for the out= of most products.
void check_out_dtype(const Out& out, ScalarType dt) {
  if (!out.tensor.defined() || out.inplace) return;
  EMBER_CHECK(out.tensor.dtype() == dt, Runtime, "Expected out tensor to have dtype ", cpp_name(dt), ", but got ",
              cpp_name(out.tensor.dtype()), " instead");
}

// The in-place forms of the add* products: self must already have the result's shape.
void check_inplace_shape(const Out& out, IntList shape) {
  if (!out.inplace) return;
  EMBER_CHECK(out.tensor.sizes() == shape, Runtime, "Bad in-place call: input tensor size ",
              sizes_str(out.tensor.sizes()), " and output tensor size ", sizes_str(shape), " should match");
}

// Where a product writes: `result` is out.tensor (dtype checked, resized) or a fresh
// tensor; `work` is what gemm writes, result itself when it can (contiguous, of the
// compute dtype, sharing no memory with the inputs gemm reads; `self`, the add* ops'
// input, may be result itself) or else a fresh temporary that done() copies over.
struct Dest {
  Tensor result, work;
  Dest(const Out& out, IntList shape, ScalarType dt, const char* op, std::initializer_list<const Tensor*> inputs,
       const Tensor* self = nullptr) {
    result = resolve_out(out, shape, dt, op);
    work = result;
    if (!out.tensor.defined()) return;
    check_no_internal_overlap(result, op);
    bool direct = result.is_contiguous() && result.dtype() == dt;
    for (const Tensor* t : inputs) direct = direct && !overlaps(*t, result);
    if (self && !self->is_same(result)) direct = direct && !overlaps(*self, result);
    if (!direct) work = empty_tensor(shape, dt, op);
  }
  Tensor done() const {
    if (!work.is_same(result) && result.numel() > 0) copy_(result, work, false);
    return result;
  }
};

// A product computed fresh, delivered into out= when given (already dtype-checked).
Tensor deliver(const Tensor& r, const Out& out, const char* op) {
  if (!out.tensor.defined()) return r;
  Tensor dst = resolve_out(out, r.sizes(), r.dtype(), op);
  check_no_internal_overlap(dst, op);
  if (dst.numel() > 0) copy_(dst, r, false);
  return dst;
}

}  // namespace

// ---------------------------------------------------------------- products

Tensor mm(const Tensor& self, const Tensor& mat2, const Out& out) {
  EMBER_CHECK(self.dim() == 2, Runtime, "self must be a matrix");
  EMBER_CHECK(mat2.dim() == 2, Runtime, "mat2 must be a matrix");
  check_same_dtype_mm(self, mat2);
  EMBER_CHECK(self.sizes()[1] == mat2.sizes()[0], Runtime, "mat1 and mat2 shapes cannot be multiplied (",
              mat_str(self), " and ", mat_str(mat2), ")");
  check_not_bool(self, "addmm_impl_cpu_");
  check_out_dtype(out, self.dtype());
  Dest d(out, {self.sizes()[0], mat2.sizes()[1]}, self.dtype(), "mm", {&self, &mat2});
  gemm(d.work, self, mat2, Scalar(int64_t(1)), Scalar(int64_t(0)));
  return d.done();
}

namespace {

void check_bmm(const Tensor& b1, const Tensor& b2) {
  EMBER_CHECK(b1.dim() == 3, Runtime, "batch1 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, Runtime, "batch2 must be a 3D tensor");
  EMBER_CHECK(b2.sizes()[0] == b1.sizes()[0] && b2.sizes()[1] == b1.sizes()[2], Runtime,
              "Expected size for first two dimensions of batch2 tensor to be: [", b1.sizes()[0], ", ",
              b1.sizes()[2], "] but got: [", b2.sizes()[0], ", ", b2.sizes()[1], "].");
  check_same_dtype_batched(b1, b2);
  check_not_bool(b1, "bmm");
}

// a (..., m, k) @ b (..., k, n) with the batch dims broadcast; both at least 3-D or
// made so by the caller.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  const int64_t m = a.sizes()[da - 2], k = a.sizes()[da - 1], n = b.sizes()[db - 1];
  Dims batch = broadcast_shapes(IntList(a.sizes().data(), size_t(da - 2)), IntList(b.sizes().data(), size_t(db - 2)));
  EMBER_CHECK(b.sizes()[db - 2] == k, Runtime, "Expected size for first two dimensions of batch2 tensor to be: [",
              batch.empty() ? 1 : batch[0], ", ", k, "] but got: [", batch.empty() ? 1 : batch[0], ", ",
              b.sizes()[db - 2], "].");
  check_same_dtype_batched(a, b);
  check_not_bool(a, "bmm");
  std::vector<int64_t> sa = IntList(batch).vec(), sb = IntList(batch).vec(), so = IntList(batch).vec();
  sa.insert(sa.end(), {m, k});
  sb.insert(sb.end(), {k, n});
  so.insert(so.end(), {m, n});
  Tensor out = empty_tensor(so, a.dtype(), "matmul");
  gemm(out, expand(a, sa, false), expand(b, sb, false), Scalar(int64_t(1)), Scalar(int64_t(0)));
  return out;
}

}  // namespace

Tensor bmm(const Tensor& self, const Tensor& mat2, const Out& out) {
  check_bmm(self, mat2);
  check_out_dtype(out, self.dtype());
  Dest d(out, {self.sizes()[0], self.sizes()[1], mat2.sizes()[2]}, self.dtype(), "bmm", {&self, &mat2});
  gemm(d.work, self, mat2, Scalar(int64_t(1)), Scalar(int64_t(0)));
  return d.done();
}

Tensor dot(const Tensor& self, const Tensor& tensor, const Out& out) {
  EMBER_CHECK(self.dim() == 1 && tensor.dim() == 1, Runtime, "1D tensors expected, but got ", self.dim(), "D and ",
              tensor.dim(), "D tensors");
  EMBER_CHECK(self.dtype() == tensor.dtype(), Runtime, "dot : expected both vectors to have same dtype, but found ",
              type_name(self.dtype()), " and ", type_name(tensor.dtype()));
  EMBER_CHECK(self.numel() == tensor.numel(), Runtime, "inconsistent tensor size, expected tensor [", self.numel(),
              "] and src [", tensor.numel(), "] to have the same number of elements, but got ", self.numel(), " and ",
              tensor.numel(), " elements respectively");
  check_not_bool(self, "dot");
  EMBER_CHECK(!out.tensor.defined() || out.tensor.dtype() == self.dtype(), Runtime, "result dtype ",
              type_name(out.tensor.dtype()), " does not match input dtype ", type_name(self.dtype()));
  Dest d(out, {}, self.dtype(), "dot", {&self, &tensor});
  Tensor out2 = make_view(d.work, Dims{1, 1}, Dims{1, 1}, d.work.offset());
  gemm(out2, as_row(self), as_column(tensor), Scalar(int64_t(1)), Scalar(int64_t(0)));
  return d.done();
}

Tensor vdot(const Tensor& self, const Tensor& other, const Out& out) {
  // torch checks the shapes before conjugating
  if (!is_complex(self.dtype()) || self.dim() != 1 || other.dim() != 1 || self.numel() != other.numel())
    return dot(self, other, out);
  return dot(conj(self), other, out);
}

namespace {

// torch checks mv as addmv with an input shaped like the result in vec's dtype, so
// the input is described rather than passed.
void check_mv(int64_t in_dim, int64_t in_size, ScalarType in_dtype, const Tensor& mat, const Tensor& vec) {
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1 && in_dim <= 1, Runtime, "vector + matrix @ vector expected, got ",
              in_dim, ", ", mat.dim(), ", ", vec.dim());
  EMBER_CHECK(mat.sizes()[1] == vec.sizes()[0] && (in_size == mat.sizes()[0] || in_size == 1), Runtime,
              "size mismatch, got input (", in_size, "), mat (", mat_str(mat), "), vec (", vec.sizes()[0], ")");
  EMBER_CHECK(in_dtype == mat.dtype() && mat.dtype() == vec.dtype(), Runtime,
              "addmv input tensors must have the same dtype, but got ", type_name(in_dtype), ", ",
              type_name(mat.dtype()), ", and ", type_name(vec.dtype()));
  check_not_bool(mat, "addmv_impl_cpu");
}

}  // namespace

Tensor mv(const Tensor& self, const Tensor& vec, const Out& out) {
  const int64_t m = self.dim() == 2 ? self.sizes()[0] : 1;
  // torch checks a floating out= as addmv's input, any other through out='s own rule
  const bool float_out = out.tensor.defined() && is_floating(out.tensor.dtype());
  check_mv(1, m, float_out ? out.tensor.dtype() : vec.dtype(), self, vec);
  check_out_dtype(out, self.dtype());
  Dest d(out, {m}, self.dtype(), "mv", {&self, &vec});
  gemm(as_column(d.work), self, as_column(vec), Scalar(int64_t(1)), Scalar(int64_t(0)));
  return d.done();
}

Tensor matmul(const Tensor& self, const Tensor& other, const Out& out) {
  const int64_t d1 = self.dim(), d2 = other.dim();
  EMBER_CHECK(d1 > 0 && d2 > 0, Runtime, "both arguments to matmul need to be at least 1D, but they are ", d1,
              "D and ", d2, "D");
  if (d1 == 1 && d2 == 1) return dot(self, other, out);
  if (out.tensor.defined()) {
    // the product's own checks first (dtypes, shapes), then out='s dtype
    if (self.dtype() == other.dtype()) check_out_dtype(out, self.dtype());
    if (d1 == 2 && d2 == 2) return mm(self, other, out);
    if (d1 == 2 && d2 == 1) return mv(self, other, out);
    return deliver(matmul(self, other, Out{}), out, "matmul");
  }
  if (d1 == 2 && d2 == 1) return mv(self, other, Out{});
  if (d1 == 1 && d2 == 2) return squeeze_dim(mm(unsqueeze(self, 0), other, Out{}), 0);
  if (d1 == 2 && d2 == 2) return mm(self, other, Out{});
  if (d1 >= 3 && d2 <= 2) {
    // Fold the batch into the rows: one big gemm (a copy if self's batch is not viewable).
    const int64_t k = self.sizes()[d1 - 1];
    Dims out_shape(IntList(self.sizes().data(), size_t(d1 - 1)));
    int64_t rows = 1;
    for (int64_t n : out_shape) rows *= n;
    Tensor folded = reshape(self, {rows, k});  // rows spelled out: -1 is ambiguous when k is 0
    if (d2 == 1) return reshape(mv(folded, other, Out{}), out_shape);
    std::vector<int64_t> shape = IntList(out_shape).vec();
    shape.push_back(other.sizes()[1]);
    return reshape(mm(folded, other, Out{}), shape);
  }
  Tensor a = d1 == 1 ? unsqueeze(self, 0) : self;
  Tensor b = d2 == 1 ? unsqueeze(other, 1) : other;
  Tensor r = batched_matmul(a, b);
  if (d1 == 1) r = squeeze_dim(r, -2);
  if (d2 == 1) r = squeeze_dim(r, -1);
  return r;
}

Tensor inner(const Tensor& self, const Tensor& other, const Out& out) {
  if (self.dim() == 0 || other.dim() == 0) {  // a product with a scalar: elementwise out= rules
    const ScalarType dt = result_type(self, other);
    const Tensor& s = self.dim() == 0 ? self : other;
    const Tensor& t = self.dim() == 0 ? other : self;
    Dest d(out, t.sizes(), dt, "inner", {&self, &other});
    if (d.work.numel() == 0) return d.result;
    Tensor flat = reshape(as_dtype(t, dt), {-1, 1});
    gemm(reshape(d.work, {-1, 1}), flat, reshape(as_dtype(s, dt), {1, 1}), Scalar(int64_t(1)), Scalar(int64_t(0)));
    return d.done();
  }
  EMBER_CHECK(self.dtype() == other.dtype(), Runtime, "both inputs should have same dtype");
  EMBER_CHECK(!out.tensor.defined() || out.tensor.dtype() == self.dtype(), Runtime,
              "tensordot: Expected the output tensor to have dtype ", type_name(self.dtype()),
              ", but got an output tensor with dtype ", type_name(out.tensor.dtype()));
  const int64_t k = self.sizes()[self.dim() - 1];
  EMBER_CHECK(other.sizes()[other.dim() - 1] == k, Runtime,
              "inner() the last dimension must match on both input tensors but got shapes ", sizes_str(self.sizes()),
              " and ", sizes_str(other.sizes()));
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 1);
  shape.insert(shape.end(), other.sizes().begin(), other.sizes().end() - 1);
  Tensor r = mm(reshape(self, {-1, k}), t(reshape(other, {-1, k})), Out{});
  return deliver(reshape(r, shape), out, "inner");
}

Tensor outer(const Tensor& self, const Tensor& vec2, const Out& out) {
  EMBER_CHECK(self.dim() == 1, Runtime, "outer: Expected 1-D argument self, but got ", self.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, Runtime, "outer: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  const ScalarType dt = promote_types(self.dtype(), vec2.dtype());
  Dest d(out, {self.sizes()[0], vec2.sizes()[0]}, dt, "outer", {&self, &vec2});
  gemm(d.work, as_column(as_dtype(self, dt)), as_row(as_dtype(vec2, dt)), Scalar(int64_t(1)), Scalar(int64_t(0)));
  return d.done();
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
             const Out& out) {
  EMBER_CHECK(mat1.dim() == 2, Runtime, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  EMBER_CHECK(mat2.dim() == 2, Runtime, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  EMBER_CHECK(mat1.sizes()[1] == mat2.sizes()[0], Runtime, "mat1 and mat2 shapes cannot be multiplied (",
              mat_str(mat1), " and ", mat_str(mat2), ")");
  check_same_dtype_mm(mat1, mat2);
  EMBER_CHECK(self.dtype() == mat2.dtype(), Runtime, "self and mat2 must have the same dtype, but got ",
              type_name(self.dtype()), " and ", type_name(mat2.dtype()));
  check_not_bool(mat1, "addmm_impl_cpu_");
  const Dims shape{mat1.sizes()[0], mat2.sizes()[1]};
  check_inplace_shape(out, shape);
  check_out_dtype(out, mat1.dtype());
  Dest d(out, shape, mat1.dtype(), "addmm", {&mat1, &mat2}, &self);
  const bool with_self = load_self(d.work, self, beta);
  gemm(d.work, mat1, mat2, alpha, with_self ? beta : Scalar(int64_t(0)));
  return d.done();
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
             const Out& out) {
  check_mv(self.dim(), self.dim() == 0 ? 1 : self.sizes()[0], self.dtype(), mat, vec);
  const Dims shape{mat.sizes()[0]};
  check_inplace_shape(out, shape);
  check_out_dtype(out, mat.dtype());
  Dest d(out, shape, mat.dtype(), "addmv", {&mat, &vec}, &self);
  const bool with_self = load_self(d.work, self, beta);
  gemm(as_column(d.work), mat, as_column(vec), alpha, with_self ? beta : Scalar(int64_t(0)));
  return d.done();
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha,
            const Out& out) {
  EMBER_CHECK(vec1.dim() == 1, Runtime, "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, Runtime, "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  const ScalarType dt = promote_types(self.dtype(), promote_types(vec1.dtype(), vec2.dtype()));
  if (dt == ScalarType::Bool) {
    EMBER_CHECK(beta.is_bool() || beta.to_double() == 0 || beta.to_double() == 1, Runtime,
                "Boolean beta only supported for Boolean results.");
  } else {
    check_factors(dt, beta, alpha);
  }
  const Dims shape{vec1.sizes()[0], vec2.sizes()[0]};
  if (out.inplace) {
    EMBER_CHECK(self.dim() == 2, Runtime, "2D tensor expected, got ", self.dim(), "D tensor for input");
    EMBER_CHECK(self.sizes() == shape, Runtime, "size mismatch, input: ", sizes_str(self.sizes()), ", v1: [",
                vec1.sizes()[0], "], v2: [", vec2.sizes()[0], "]");
  }
  Dest d(out, shape, dt, "addr", {&vec1, &vec2}, &self);
  const bool with_self = load_self(d.work, self, beta);
  gemm(d.work, as_column(as_dtype(vec1, dt)), as_row(as_dtype(vec2, dt)), alpha, with_self ? beta : Scalar(int64_t(0)));
  return d.done();
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha, const Out& out) {
  check_bmm(batch1, batch2);
  EMBER_CHECK(self.dtype() == batch1.dtype(), Runtime, "self and batch2 must have the same dtype, but got ",
              type_name(self.dtype()), " and ", type_name(batch2.dtype()));
  const Dims shape{batch1.sizes()[0], batch1.sizes()[1], batch2.sizes()[2]};
  check_inplace_shape(out, shape);
  check_out_dtype(out, batch1.dtype());
  Dest d(out, shape, batch1.dtype(), "baddbmm", {&batch1, &batch2}, &self);
  const bool with_self = load_self(d.work, self, beta);
  gemm(d.work, batch1, batch2, alpha, with_self ? beta : Scalar(int64_t(0)));
  return d.done();
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
              const Scalar& alpha, const Out& out) {
  check_bmm(batch1, batch2);
  EMBER_CHECK(self.dtype() == batch2.dtype(), Runtime, "self and mat2 must have the same dtype, but got ",
              type_name(self.dtype()), " and ", type_name(batch2.dtype()));
  const int64_t nb = batch1.sizes()[0], m = batch1.sizes()[1], k = batch1.sizes()[2], n = batch2.sizes()[2];
  // sum_b batch1[b] @ batch2[b] is one product: (m, nb*k) @ (nb*k, n)
  Tensor a = reshape(permute(batch1, {1, 0, 2}), {m, nb * k});
  Tensor b = reshape(batch2, {nb * k, n});
  // torch's addbmm_ resizes a self of another shape; ember's in-place forms keep self's shape
  check_inplace_shape(out, {m, n});
  EMBER_CHECK(!out.tensor.defined() || out.tensor.dtype() == batch2.dtype(), Runtime,
              "self and mat2 must have the same dtype, but got ", type_name(out.tensor.dtype()), " and ",
              type_name(batch2.dtype()));
  Dest d(out, {m, n}, batch1.dtype(), "addbmm", {&batch1, &batch2}, &self);
  const bool with_self = load_self(d.work, self, beta);
  gemm(d.work, a, b, alpha, with_self ? beta : Scalar(int64_t(0)));
  return d.done();
}

Tensor kron(const Tensor& self, const Tensor& other, const Out& out) {
  const int64_t nd = std::max(self.dim(), other.dim());
  std::vector<int64_t> sa(size_t(nd - self.dim()), 1), sb(size_t(nd - other.dim()), 1);
  sa.insert(sa.end(), self.sizes().begin(), self.sizes().end());
  sb.insert(sb.end(), other.sizes().begin(), other.sizes().end());
  // outer(a, b) viewed as (a0, .., b0, ..), interleaved to (a0, b0, a1, b1, ..)
  Tensor o = outer(reshape(self, {-1}), reshape(other, {-1}), Out{});
  std::vector<int64_t> split = sa, perm, shape;
  split.insert(split.end(), sb.begin(), sb.end());
  for (int64_t d = 0; d < nd; ++d) {
    perm.push_back(d);
    perm.push_back(nd + d);
    shape.push_back(sa[d] * sb[d]);
  }
  return deliver(reshape(permute(reshape(o, split), perm), shape), out, "kron");  // elementwise out= rules
}

namespace {

Tensor cross_impl(const Tensor& self, const Tensor& other, int64_t dim) {
  check_same_dtype_batched(self, other);
  check_not_bool(self, "cross");
  Dims shape = broadcast_shapes(self.sizes(), other.sizes());
  Tensor a = expand(self, shape, false), b = expand(other, shape, false);
  if (is_complex(self.dtype()) && !(a.numel() == 0)) {
    // bilinear: (ar + i ai) x (br + i bi) = ar x br - ai x bi + i (ar x bi + ai x br), four real crosses
    const Tensor ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
    const Scalar one(int64_t(1));
    return complex(sub_Tensor(cross_impl(ar, br, dim), cross_impl(ai, bi, dim), one),
                   add_Tensor(cross_impl(ar, bi, dim), cross_impl(ai, br, dim), one));
  }
  Tensor out = empty_tensor(shape, self.dtype(), "cross");
  if (out.numel() == 0) return out;
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::matmul::Kernels<T>::cross(out, a, b, dim);
  });
  return out;
}

void check_cross_dim(const Tensor& self, const Tensor& other, int64_t dim, int64_t given) {
  EMBER_CHECK(self.dim() == other.dim(), Runtime, "linalg.cross: inputs must have the same number of dimensions.");
  EMBER_CHECK(self.sizes()[dim] == 3 && other.sizes()[dim] == 3, Runtime, "linalg.cross: inputs dimension ", given,
              " must have length 3. Got ", self.sizes()[dim], " and ", other.sizes()[dim]);
}

}  // namespace

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim, const Out& out) {
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  check_cross_dim(self, other, d, dim);
  Tensor r = cross_impl(self, other, d);
  check_out_dtype(out, r.dtype());
  return deliver(r, out, "linalg_cross");
}

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim, const Out& out) {
  if (dim) return linalg_cross(self, other, *dim, out);
  // the first dim of size 3 (torch's deprecated default)
  int64_t d = -1;
  for (int64_t i = 0; i < self.dim() && d < 0; ++i)
    if (self.sizes()[i] == 3) d = i;
  EMBER_CHECK(d >= 0, Runtime, "no dimension of size 3 in input");
  return linalg_cross(self, other, d, out);
}

// ---------------------------------------------------------------- LAPACK

namespace {

// Checks the input of a linalg function: at least 2-D, float32/float64 or complex64/128,
// square if asked.
void check_linalg(const Tensor& a, const char* fn, bool square, const char* name = "A") {
  EMBER_CHECK(a.dim() >= 2, Runtime, fn, ": The input tensor ", name, " must have at least 2 dimensions.");
  const ScalarType dt = a.dtype();
  EMBER_CHECK(dt != ScalarType::Float16 && dt != ScalarType::BFloat16, Runtime, fn,
              ": Low precision dtypes not supported. Got ", type_name(dt));
  EMBER_CHECK(is_floating(dt) || is_complex(dt), Runtime, fn,
              ": Expected a floating point or complex tensor as input. Got ", type_name(dt));
  if (square)
    EMBER_CHECK(a.sizes()[a.dim() - 1] == a.sizes()[a.dim() - 2], Runtime, fn, ": ", name,
                " must be batches of square matrices, but they are ", a.sizes()[a.dim() - 2], " by ",
                a.sizes()[a.dim() - 1], " matrices");
}

// A fresh copy of t whose matrices (last two dims) are column-major, batch entries one
// after another: what LAPACK works on in place.
Tensor column_major(const Tensor& t) {
  const int64_t nd = t.dim();
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  std::swap(sizes[nd - 1], sizes[nd - 2]);
  Tensor buf = transpose(empty_tensor(sizes, t.dtype(), "linalg"), -2, -1);
  if (t.numel() > 0) copy_(buf, t, false);
  return buf;
}

// An uninitialized column-major tensor of this shape.
Tensor empty_column_major(std::vector<int64_t> sizes, ScalarType dt) {
  const size_t nd = sizes.size();
  std::swap(sizes[nd - 1], sizes[nd - 2]);
  return transpose(empty_tensor(sizes, dt, "linalg"), -2, -1);
}

int64_t batch_count(const Tensor& t) {
  int64_t b = 1;
  for (int64_t d = 0; d + 2 < t.dim(); ++d) b *= t.sizes()[d];
  return b;
}

std::vector<int64_t> batch_shape(const Tensor& t) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - 2);
}

// "(Batch element 3): " for batched inputs, as in torch's messages.
std::string batch_prefix(const Tensor& a, int64_t e) {
  return a.dim() > 2 ? str_cat("(Batch element ", e, "): ") : std::string();
}

template <class T>
T* data(const Tensor& t) {
  return reinterpret_cast<T*>(t.data());
}

// The real dtype of a LAPACK result that is real for complex matrices too (singular
// values, Hermitian eigenvalues, log|det|).
ScalarType real_dtype(ScalarType dt) { return is_complex(dt) ? to_real(dt) : dt; }

void check_lapack_size(const Tensor& t, const char* fn) {
  for (int64_t s : t.sizes()) EMBER_CHECK(fits_blas_int(s), Runtime, fn, ": matrix too large for 32-bit LAPACK");
}

// LU factorization in place of each matrix of the column-major lu; pivots per matrix.
// Returns each matrix's info (> 0: U(info, info) is exactly zero).
template <class T>
std::vector<blas_int> lu_batched(const Tensor& lu, std::vector<blas_int>& pivots) {
  const int64_t n = lu.sizes()[lu.dim() - 1], count = batch_count(lu);
  pivots.assign(size_t(count * n), 0);
  PinnedWork work({&lu}, saturating_work(count, n, n * n));
  return kernels::linalg::Kernels<T>::lu(data<T>(lu), count, n, pivots.data());
}

}  // namespace

Tensor linalg_inv(const Tensor& A) {
  check_linalg(A, "linalg.inv", true);
  check_lapack_size(A, "linalg.inv");
  Tensor inv = column_major(A);
  if (inv.numel() == 0) return inv;
  visit_lapack(A.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<blas_int> piv;
    std::vector<blas_int> status = lu_batched<T>(inv, piv);
    const int64_t n = A.sizes()[A.dim() - 1];
    for (size_t e = 0; e < status.size(); ++e)
      if (status[e] > 0)
        throw LinAlgError(str_cat("linalg.inv: ", batch_prefix(A, int64_t(e)), "The diagonal element ", status[e],
                                  " is zero, the inversion could not be completed because the input matrix is singular."));
    PinnedWork work({&inv}, saturating_work(int64_t(status.size()), n, n * n));
    kernels::linalg::Kernels<T>::inverse_from_lu(data<T>(inv), int64_t(status.size()), n, piv.data());
  });
  return inv;
}

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) {
  check_linalg(A, "linalg.solve", true);
  EMBER_CHECK(A.dtype() == B.dtype(), Runtime, "linalg.solve: Expected A and B to have the same dtype, but found A of type ",
              type_name(A.dtype()), " and B of type ", type_name(B.dtype()), " instead");
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    EMBER_CHECK(B.dim() >= 2, Runtime, "linalg.solve: The input tensor B must have at least 2 dimensions.");
    return transpose(linalg_solve(transpose(A, -2, -1), transpose(B, -2, -1), true), -2, -1);
  }
  const int64_t n = A.sizes()[A.dim() - 1];
  // B is a batch of vectors when it is 1-D or has A's batch shape plus one dim
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && IntList(B.sizes().data(), size_t(B.dim())) ==
                                                                     IntList(A.sizes().data(), size_t(A.dim() - 1)));
  Tensor b = vector ? unsqueeze(B, -1) : B;
  EMBER_CHECK(b.sizes()[b.dim() - 2] == n, Runtime, "linalg.solve: Incompatible shapes of A and B for the equation ",
              "AX = B (", A.sizes()[A.dim() - 2], "x", n, " and ", b.sizes()[b.dim() - 2], "x", b.sizes()[b.dim() - 1],
              ")");
  const int64_t nrhs = b.sizes()[b.dim() - 1];
  // torch names B's batch first in the broadcast error
  Dims batch = broadcast_shapes(IntList(b.sizes().data(), size_t(b.dim() - 2)), IntList(A.sizes().data(), size_t(A.dim() - 2)));
  std::vector<int64_t> sa = IntList(batch).vec(), sb = IntList(batch).vec();
  sa.insert(sa.end(), {n, n});
  sb.insert(sb.end(), {n, nrhs});
  Tensor a = column_major(expand(A, sa, false));
  Tensor x = column_major(expand(b, sb, false));
  check_lapack_size(x, "linalg.solve");
  if (x.numel() > 0 && n > 0) {
    visit_lapack(A.dtype(), [&](auto zero) {
      using T = decltype(zero);
      std::vector<blas_int> piv;
      std::vector<blas_int> status = lu_batched<T>(a, piv);
      for (size_t e = 0; e < status.size(); ++e)
        if (status[e] > 0)
          throw LinAlgError(str_cat("torch.linalg.solve: ", batch_prefix(a, int64_t(e)),
                                    "The solver failed because the input matrix is singular."));
      PinnedWork work({&x}, saturating_work(int64_t(status.size()), n, n * nrhs));
      kernels::linalg::Kernels<T>::solve_from_lu(data<T>(a), int64_t(status.size()), n, piv.data(), data<T>(x), nrhs);
    });
  }
  return vector ? squeeze_dim(x, -1) : x;
}

namespace {

// sign, log|det| and det of every matrix of A, from one LU each; any of the three
// outputs may be undefined (not wanted).
void determinants(const Tensor& A, const Tensor& sign, const Tensor& logabs, const Tensor& det) {
  check_lapack_size(A, "linalg.det");
  Tensor lu = column_major(A);
  const int64_t n = A.sizes()[A.dim() - 1], count = batch_count(A);
  visit_lapack(A.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<blas_int> piv;
    if (n > 0 && count > 0) lu_batched<T>(lu, piv);
    using R = kernels::linalg::Real<T>;
    kernels::linalg::Kernels<T>::determinants(data<T>(lu), count, n, piv.data(), sign.defined() ? data<T>(sign) : nullptr,
                                              logabs.defined() ? data<R>(logabs) : nullptr,
                                              det.defined() ? data<T>(det) : nullptr);
  });
}

}  // namespace

std::vector<Tensor> linalg_slogdet(const Tensor& A) {
  check_linalg(A, "linalg.slogdet", true);
  Tensor sign = empty_tensor(batch_shape(A), A.dtype(), "linalg.slogdet");
  Tensor logabs = empty_tensor(batch_shape(A), real_dtype(A.dtype()), "linalg.slogdet");
  determinants(A, sign, logabs, Tensor());
  return {sign, logabs};
}

Tensor linalg_det(const Tensor& A) {
  check_linalg(A, "linalg.det", true);
  Tensor det = empty_tensor(batch_shape(A), A.dtype(), "linalg.det");
  determinants(A, Tensor(), Tensor(), det);
  return det;
}

Tensor linalg_cholesky(const Tensor& A, bool upper) {
  check_linalg(A, "linalg.cholesky", true);
  check_lapack_size(A, "linalg.cholesky");
  Tensor L = column_major(A);
  const int64_t n = A.sizes()[A.dim() - 1], count = batch_count(A);
  if (L.numel() == 0) return L;
  visit_lapack(A.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<blas_int> status;
    {
      PinnedWork work({&L}, saturating_work(count, n, n * n / 3));
      status = kernels::linalg::Kernels<T>::cholesky(data<T>(L), count, n, upper);
    }
    for (int64_t e = 0; e < count; ++e)
      if (status[e] > 0)
        throw LinAlgError(str_cat("linalg.cholesky: ", batch_prefix(A, e),
                                  "The factorization could not be completed because the input is not "
                                  "positive-definite (the leading minor of order ",
                                  status[e], " is not positive-definite)."));
  });
  return L;
}

std::vector<Tensor> linalg_qr(const Tensor& A, const std::string& mode) {
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r", Runtime, "qr received unrecognized mode '",
              mode, "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_linalg(A, "linalg.qr", false);
  check_lapack_size(A, "linalg.qr");
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1], k = std::min(m, n);
  const int64_t count = batch_count(A);
  const int64_t qcols = mode == "complete" ? m : k;  // columns of Q
  std::vector<int64_t> bshape = batch_shape(A);
  // Factor in a buffer wide enough for Q: (m, max(n, qcols)), A in its first n columns.
  std::vector<int64_t> wshape = bshape;
  wshape.insert(wshape.end(), {m, std::max(n, qcols)});
  Tensor work = empty_column_major(wshape, A.dtype());
  // the columns past A's are orgqr's input too: LAPACKE refuses (leaving Q unwritten)
  // when its NaN check finds garbage there
  if (qcols > n) zero_(narrow(work, -1, n, qcols - n));
  if (A.numel() > 0) copy_(narrow(work, -1, 0, n), A, false);
  const int64_t wcols = std::max(n, qcols);
  std::vector<int64_t> rshape = bshape;
  rshape.insert(rshape.end(), {mode == "complete" ? m : k, n});
  Tensor R = zeros(rshape, A.dtype());
  std::vector<int64_t> qshape = bshape;
  qshape.insert(qshape.end(), {m, qcols});
  Tensor Q = mode == "r" ? empty_tensor({0}, A.dtype(), "linalg.qr") : empty_column_major(qshape, A.dtype());
  if (A.numel() == 0) {
    if (mode != "r" && Q.numel() > 0) {  // n == 0: Q is the identity's first columns
      zero_(Q);
      copy_(Q, expand(eye_m(m, qcols, A.dtype()), Q.sizes(), false), false);
    }
    return {Q, R};
  }
  visit_lapack(A.dtype(), [&](auto zero) {
    using T = decltype(zero);
    PinnedWork pw({&work, &R, &Q}, saturating_work(count * m, n + qcols, k));
    kernels::linalg::Kernels<T>::qr(data<T>(work), count, m, n, wcols, data<T>(R), R.sizes()[R.dim() - 2],
                                    mode == "r" ? nullptr : data<T>(Q), qcols);
  });
  return {Q, R};
}

namespace {

// U, S, Vh (jobz 'A' full, 'S' reduced) or S alone (jobz 'N').
std::vector<Tensor> svd_impl(const Tensor& A, char jobz, const char* fn) {
  check_linalg(A, fn, false);
  check_lapack_size(A, fn);
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1], k = std::min(m, n);
  const int64_t count = batch_count(A);
  std::vector<int64_t> bshape = batch_shape(A);
  const int64_t ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  std::vector<int64_t> ushape = bshape, vshape = bshape, sshape = bshape;
  ushape.insert(ushape.end(), {m, ucols});
  vshape.insert(vshape.end(), {vrows, n});
  sshape.push_back(k);
  Tensor S = empty_tensor(sshape, real_dtype(A.dtype()), fn);
  Tensor U = jobz == 'N' ? Tensor() : empty_column_major(ushape, A.dtype());
  Tensor Vh = jobz == 'N' ? Tensor() : empty_column_major(vshape, A.dtype());
  if (A.numel() == 0) {  // no singular values; U and Vh are identities' columns
    if (jobz != 'N') {
      if (U.numel() > 0) copy_(U, expand(eye_m(m, ucols, A.dtype()), U.sizes(), false), false);
      if (Vh.numel() > 0) copy_(Vh, expand(eye_m(vrows, n, A.dtype()), Vh.sizes(), false), false);
    }
    return {U, S, Vh};
  }
  Tensor a = column_major(A);
  visit_lapack(A.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<blas_int> status;
    {
      PinnedWork work({&a, &S, &U, &Vh}, saturating_work(count * m, n, k));
      status = kernels::linalg::Kernels<T>::svd(data<T>(a), count, m, n, jobz, data<kernels::linalg::Real<T>>(S),
                                                jobz == 'N' ? nullptr : data<T>(U), jobz == 'N' ? nullptr : data<T>(Vh),
                                                ucols, vrows);
    }
    for (int64_t e = 0; e < count; ++e)
      if (status[e] > 0)
        throw LinAlgError(str_cat(fn, ": ", batch_prefix(A, e),
                                  "The algorithm failed to converge because the input matrix is ill-conditioned or "
                                  "has too many repeated singular values (error code: ", status[e], ")."));
  });
  return {U, S, Vh};
}

}  // namespace

std::vector<Tensor> linalg_svd(const Tensor& A, bool full_matrices, std::optional<std::string> driver) {
  EMBER_CHECK(!driver, Runtime, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  return svd_impl(A, full_matrices ? 'A' : 'S', "linalg.svd");
}

Tensor linalg_svdvals(const Tensor& A, std::optional<std::string> driver) {
  EMBER_CHECK(!driver, Runtime, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  return svd_impl(A, 'N', "linalg.svd")[1];
}

namespace {

std::vector<Tensor> eigh_impl(const Tensor& A, const std::string& uplo, bool vectors, const char* fn) {
  EMBER_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u", Runtime,
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_linalg(A, fn, true);
  check_lapack_size(A, fn);
  const int64_t n = A.sizes()[A.dim() - 1], count = batch_count(A);
  std::vector<int64_t> wshape = batch_shape(A);
  wshape.push_back(n);
  Tensor w = empty_tensor(wshape, real_dtype(A.dtype()), fn);
  Tensor V = column_major(A);
  if (V.numel() > 0) {
    visit_lapack(A.dtype(), [&](auto zero) {
      using T = decltype(zero);
      std::vector<blas_int> status;
      {
        PinnedWork work({&V, &w}, saturating_work(count, n, n * n));
        status = kernels::linalg::Kernels<T>::eigh(data<T>(V), count, n, vectors, char(std::toupper(uplo[0])),
                                                   data<kernels::linalg::Real<T>>(w));
      }
      for (int64_t e = 0; e < count; ++e)
        if (status[e] > 0)
          throw LinAlgError(str_cat(fn, ": ", batch_prefix(A, e),
                                    "The algorithm failed to converge because the input matrix is ill-conditioned or "
                                    "has too many repeated eigenvalues (error code: ", status[e], ")."));
    });
  }
  return {w, V};
}

}  // namespace

namespace {

// Whether every element of the n x n matrix at p is finite.
template <class T>
bool all_finite(const T* p, int64_t n) {
  for (int64_t i = 0; i < n * n; ++i) {
    if constexpr (blas::kIsComplex<T>) {
      if (!std::isfinite(p[i].real()) || !std::isfinite(p[i].imag())) return false;
    } else if (!std::isfinite(p[i])) {
      return false;
    }
  }
  return true;
}

// Eigenvalues (and with vectors, the right eigenvectors) of general square matrices:
// complex for any input, as torch's. A matrix with a NaN or an infinity is an error with
// vectors and gives NaN eigenvalues without.
std::vector<Tensor> eig_impl(const Tensor& A, bool vectors, const char* fn) {
  const ScalarType dt = A.dtype();
  EMBER_CHECK(dt != ScalarType::Float16 && dt != ScalarType::BFloat16, NotImplemented,
              "\"linalg_eig_out_cpu\" not implemented for '", type_name(dt), "'");
  check_linalg(A, fn, true);
  check_lapack_size(A, fn);
  const int64_t n = A.sizes()[A.dim() - 1], count = batch_count(A);
  const ScalarType ct = is_complex(A.dtype()) ? A.dtype() : to_complex(A.dtype());
  std::vector<int64_t> wshape = batch_shape(A), vshape = batch_shape(A);
  wshape.push_back(n);
  vshape.insert(vshape.end(), {n, n});
  Tensor w = empty_tensor(wshape, ct, fn);
  Tensor V = vectors ? empty_column_major(vshape, ct) : Tensor();
  if (A.numel() == 0) return {w, V};
  Tensor a = column_major(A);
  visit_lapack(A.dtype(), [&](auto zero) {
    using T = decltype(zero);
    using C = std::complex<kernels::linalg::Real<T>>;
    std::vector<bool> finite(static_cast<size_t>(count));
    for (int64_t e = 0; e < count; ++e) {
      T* m = data<T>(a) + e * n * n;
      finite[e] = all_finite(m, n);
      EMBER_CHECK(finite[e] || !vectors, Runtime, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
      if (!finite[e]) std::fill(m, m + n * n, T(0));  // its eigenvalues are NaN below
    }
    std::vector<blas_int> status;
    {
      PinnedWork work({&a, &w, &V}, saturating_work(count, n, 10 * n * n));
      status = kernels::linalg::Kernels<T>::eig(data<T>(a), count, n, data<C>(w), vectors ? data<C>(V) : nullptr);
    }
    for (int64_t e = 0; e < count; ++e) {
      if (status[e] > 0)
        throw LinAlgError(str_cat(fn, ": ", batch_prefix(A, e),
                                  "The algorithm failed to converge because the input matrix is ill-conditioned or "
                                  "has too many repeated eigenvalues (error code: ", status[e], ")."));
      const auto nan = std::numeric_limits<kernels::linalg::Real<T>>::quiet_NaN();
      if (!finite[e]) std::fill(data<C>(w) + e * n, data<C>(w) + (e + 1) * n, C(nan, nan));
    }
  });
  return {w, V};
}

}  // namespace

std::vector<Tensor> linalg_eig(const Tensor& A) { return eig_impl(A, true, "linalg.eig"); }

Tensor linalg_eigvals(const Tensor& A) { return eig_impl(A, false, "linalg.eigvals")[0]; }

std::vector<Tensor> linalg_eigh(const Tensor& A, const std::string& UPLO) {
  return eigh_impl(A, UPLO, true, "linalg.eigh");
}

Tensor linalg_eigvalsh(const Tensor& A, const std::string& UPLO) {
  return eigh_impl(A, UPLO, false, "linalg.eigh")[0];
}

}  // namespace ember::ops
