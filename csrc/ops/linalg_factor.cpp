// Factorizations and their solvers. See declarations/ops/linalg_factor.yaml.
//
// As in ops/linalg.cpp: each op checks shapes and dtypes, broadcasts the batch dims of
// its operands, copies them column-major (one matrix after another: what LAPACK works on
// in place), then runs kernels/linalg_factor.h (or linalg.h's Cholesky and inverse). The
// results stay column-major, as torch's do. LAPACK's per-matrix info comes back as an
// int32 tensor; the *_ex ops raise only with check_errors, the others through their
// Python wrappers (ember/_linalg_factor.py), each with torch's message.
#include <algorithm>
#include <vector>
#include "core/linalg_error.h"
#include "kernels/linalg.h"
#include "kernels/linalg_factor.h"
#include "ops/geometry.h"
#include "ops/internal.h"
#include "ops/pinned_work.h"
#include "ops/visit_lapack.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

using kernels::linalg::blas_int;
using kernels::linalg::fits_blas_int;
using kernels::linalg::saturating_work;
template <class T>
using Factor = kernels::linalg_factor::Kernels<T>;

int64_t rows(const Tensor& t) { return t.sizes()[t.dim() - 2]; }
int64_t cols(const Tensor& t) { return t.sizes()[t.dim() - 1]; }

std::vector<int64_t> batch_shape(const Tensor& t, int64_t matrix_dims = 2) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - matrix_dims);
}

int64_t numel_of(IntList shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::vector<int64_t> with(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// torch's dtype error for LAPACK kernels: NotImplementedError "lu_cpu" not implemented for 'Long'.
void check_float(const Tensor& t, const char* kernel, bool complex = false) {
  const ScalarType dt = t.dtype();
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64 ||
                  (complex && (dt == ScalarType::ComplexFloat || dt == ScalarType::ComplexDouble)),
              NotImplemented, "\"", kernel, "\" not implemented for '", type_name(dt), "'");
}

void check_matrix(const Tensor& t, const char* fn, const char* name) {
  EMBER_CHECK(t.dim() >= 2, Runtime, fn, ": The input tensor ", name, " must have at least 2 dimensions.");
}

void check_square(const Tensor& t, const char* fn, const char* name = "A") {
  EMBER_CHECK(rows(t) == cols(t), Runtime, fn, ": ", name, " must be batches of square matrices, but they are ",
              rows(t), " by ", cols(t), " matrices");
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* fn, const char* an, const char* bn) {
  EMBER_CHECK(a.dtype() == b.dtype(), Runtime, fn, ": Expected ", an, " and ", bn,
              " to have the same dtype, but found ", an, " of type ", type_name(a.dtype()), " and ", bn, " of type ",
              type_name(b.dtype()), " instead");
}

void check_lapack_size(const Tensor& t, const char* fn) {
  for (int64_t s : t.sizes()) EMBER_CHECK(fits_blas_int(s), Runtime, fn, ": matrix too large for 32-bit LAPACK");
}

// A fresh copy of t whose matrices (last two dims) are column-major, batch entries one
// after another.
Tensor column_major(const Tensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  std::swap(sizes[sizes.size() - 1], sizes[sizes.size() - 2]);
  Tensor buf = transpose(empty_tensor(sizes, t.dtype(), "linalg"), -2, -1);
  if (t.numel() > 0) copy_(buf, t, false);
  return buf;
}

// A fresh contiguous int32 copy of pivots, expanded to `shape`.
Tensor int32_copy(const Tensor& pivots, IntList shape) {
  Tensor p = empty_tensor(shape, ScalarType::Int32, "linalg");
  if (p.numel() > 0) copy_(p, expand(pivots, shape, false), false);
  return p;
}

// Matrices of A and B expanded to their common batch shape (B's named first, as torch's
// broadcast error does), each copied column-major.
std::vector<int64_t> common_batch(const Tensor& A, const Tensor& B) {
  return IntList(broadcast_shapes(IntList(batch_shape(B)), IntList(batch_shape(A)))).vec();
}

Tensor expanded_column_major(const Tensor& t, const std::vector<int64_t>& batch) {
  return column_major(expand(t, with(batch, {rows(t), cols(t)}), false));
}

template <class T>
T* data(const Tensor& t) {
  return reinterpret_cast<T*>(t.data());
}

// "(Batch element 3): " for batched inputs, as in torch's messages.
std::string batch_prefix(int64_t dim, int64_t e) {
  return dim > 2 ? str_cat("(Batch element ", e, "): ") : std::string();
}

// The info tensor (batch shape, int32) from LAPACK's statuses.
Tensor info_tensor(const std::vector<blas_int>& status, IntList batch) {
  Tensor info = zeros(batch, ScalarType::Int32);
  if (!status.empty()) std::copy(status.begin(), status.end(), data<int32_t>(info));
  return info;
}

// The first failing matrix (info > 0), or -1.
int64_t first_failure(const Tensor& info) {
  if (!runs_kernels()) return -1;
  const int32_t* p = data<int32_t>(info);
  for (int64_t e = 0; e < info.numel(); ++e)
    if (p[e] > 0) return e;
  return -1;
}

// LAPACK reads row indices from pivots: out-of-range ones would address memory outside
// the matrix, so they are refused first. ldl's pivots are negative for 2x2 blocks.
void check_pivots(const Tensor& piv, int64_t n, bool signed_blocks, const char* message) {
  if (!runs_kernels()) return;
  const int32_t* p = data<int32_t>(piv);
  for (int64_t i = 0; i < piv.numel(); ++i) {
    const int64_t v = signed_blocks && p[i] < 0 ? -int64_t(p[i]) : int64_t(p[i]);
    EMBER_CHECK(v >= 1 && v <= n, Runtime, message);
  }
}

}  // namespace

// ---------------------------------------------------------------- LU

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  EMBER_CHECK(A.dim() >= 2, Runtime, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: ",
              sizes_str(A.sizes()), " instead");
  check_float(A, "lu_cpu", true);
  EMBER_CHECK(pivot, Runtime, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  check_lapack_size(A, "linalg.lu_factor");
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n);
  const std::vector<int64_t> batch = batch_shape(A);
  const int64_t count = numel_of(batch);
  Tensor LU = column_major(A);
  Tensor pivots = empty_tensor(with(batch, {k}), ScalarType::Int32, "linalg.lu_factor");
  std::vector<blas_int> status;
  if (count > 0 && k > 0) {
    visit_lapack(A.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&LU, &pivots}, saturating_work(count, m * n, k));
      status = Factor<T>::lu(data<T>(LU), count, m, n, data<int32_t>(pivots));
    });
  }
  Tensor info = info_tensor(status, batch);
  if (check_errors) {
    const int64_t e = first_failure(info);
    if (e >= 0) {
      const int32_t i = data<int32_t>(info)[e];
      fail(ErrorKind::Runtime, "torch.linalg.lu_factor_ex: ", batch_prefix(A.dim(), e), "U[", i, ",", i,
                 "] is zero and using it on lu_solve would result in a division by zero. If you still want to "
                 "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
    }
  }
  return {LU, pivots, info};
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  const char* fn = "linalg.lu_solve";
  check_matrix(LU, fn, "LU");
  check_matrix(B, fn, "B");
  check_square(LU, "torch.linalg.lu_solve");
  check_same_dtype(LU, B, fn, "LU", "B");
  check_float(LU, "lu_solve_cpu", true);
  const int64_t n = cols(LU);
  EMBER_CHECK(pivots.dtype() == ScalarType::Int32, Runtime,
              "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
  EMBER_CHECK(pivots.dim() >= 1 && pivots.sizes()[pivots.dim() - 1] == n, Runtime,
              "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix");
  EMBER_CHECK(pivots.dim() == LU.dim() - 1 && batch_shape(pivots, 1) == batch_shape(LU), Runtime,
              "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape ",
              sizes_str(pivots.sizes()), " instead");
  EMBER_CHECK((left ? rows(B) : cols(B)) == n, Runtime, "linalg.lu_solve: Incompatible shapes of A and B for the ",
              "equation ", left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", rows(B), "x", cols(B), ")");
  check_lapack_size(B, fn);
  // X A = B is A^T X^T = B^T: the same solve on B^T with the transpose flag flipped.
  // Complex: op is the conjugate transpose ('C'); X A^H = B is conj(A) X^T = B^T, solved
  // as A conj(X^T) = conj(B^T).
  const bool complex = is_complex(LU.dtype());
  const bool conjugated = complex && !left && adjoint;
  const Tensor b = left ? B : conjugated ? conj(transpose(B, -2, -1)) : transpose(B, -2, -1);
  const bool trans = left ? adjoint : !adjoint;
  const char op = !trans ? 'N' : complex && left ? 'C' : 'T';
  const std::vector<int64_t> batch = common_batch(LU, b);
  Tensor x = expanded_column_major(b, batch);
  const int64_t nrhs = cols(x), count = numel_of(batch);
  if (count > 0 && n > 0 && nrhs > 0) {
    Tensor a = expanded_column_major(LU, batch);
    Tensor piv = int32_copy(pivots, with(batch, {n}));
    check_pivots(piv, n, false, "linalg.lu_solve: pivots must be between 1 and LU.size(-1) inclusive");
    visit_lapack(LU.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&x, &a}, saturating_work(count, n * n, nrhs));
      Factor<T>::lu_solve(data<T>(a), count, n, data<int32_t>(piv), data<T>(x), nrhs, op);
    });
  }
  if (conjugated) x = conj(x);
  return left ? x : transpose(x, -2, -1);
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU_data, const Tensor& LU_pivots, bool unpack_data,
                                             bool unpack_pivots) {
  EMBER_CHECK(LU_data.dim() >= 2, Runtime, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ",
              sizes_str(LU_data.sizes()), " instead");
  const int64_t m = rows(LU_data), n = cols(LU_data), k = std::min(m, n);
  const std::vector<int64_t> batch = batch_shape(LU_data);
  Tensor P = empty_tensor({0}, LU_data.dtype(), "lu_unpack"), L = P, U = P;
  if (unpack_data) {
    L = tril(narrow(LU_data, -1, 0, k), -1, Out());
    if (k > 0) L = add_Tensor(L, expand(eye_m(m, k, LU_data.dtype()), L.sizes(), false), Scalar(1), Out());
    U = triu(narrow(LU_data, -2, 0, k), 0, Out());
  }
  if (unpack_pivots) {
    EMBER_CHECK(LU_pivots.dtype() == ScalarType::Int32, Runtime,
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor");
    EMBER_CHECK(LU_pivots.dim() >= 1 && LU_pivots.sizes()[LU_pivots.dim() - 1] == k &&
                    batch_shape(LU_pivots, 1) == batch,
                Runtime, "torch.lu_unpack: Expected LU_pivots of shape ", sizes_str(IntList(with(batch, {k}))),
                ", but got ", sizes_str(LU_pivots.sizes()));
    Tensor piv = int32_copy(LU_pivots, with(batch, {k}));
    check_pivots(piv, m, false,
                 "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                 "Did you properly pass the result of lu_factor?");
    P = zeros(with(batch, {m, m}), LU_data.dtype());
    const int64_t count = numel_of(batch);
    if (runs_kernels() && count > 0 && m > 0) {
      visit_lapack(LU_data.dtype(), [&](auto zero) {
        using T = decltype(zero);
        std::vector<int64_t> perm(static_cast<size_t>(m));
        for (int64_t e = 0; e < count; ++e) {
          for (int64_t i = 0; i < m; ++i) perm[i] = i;
          const int32_t* p = data<int32_t>(piv) + e * k;
          for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[p[i] - 1]);
          // row i of P^T A = L U is row perm[i] of A: P[perm[i], i] = 1
          T* pe = data<T>(P) + e * m * m;
          for (int64_t i = 0; i < m; ++i) pe[perm[i] * m + i] = T(1);
        }
      });
    }
  }
  return {P, L, U};
}

// ---------------------------------------------------------------- triangular solves

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  const char* fn = "linalg.solve_triangular";
  check_matrix(A, fn, "A");
  check_matrix(B, fn, "B");
  check_square(A, fn);
  check_float(A, "triangular_solve_cpu", true);
  check_same_dtype(A, B, fn, "A", "B");
  const int64_t n = cols(A);
  EMBER_CHECK((left ? rows(B) : cols(B)) == n, Runtime, fn, ": Incompatible shapes of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", rows(B), "x", cols(B), ")");
  check_lapack_size(B, fn);
  const std::vector<int64_t> batch = common_batch(A, B);
  Tensor x = expanded_column_major(B, batch);
  const int64_t m = rows(x), nrhs = cols(x), count = numel_of(batch);
  if (count > 0 && m > 0 && nrhs > 0) {
    Tensor a = expanded_column_major(A, batch);
    visit_lapack(A.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&x, &a}, saturating_work(count, n * n, left ? nrhs : m));
      Factor<T>::triangular_solve(data<T>(a), count, data<T>(x), m, nrhs, left, upper, false, unitriangular);
    });
  }
  return x;
}

// ---------------------------------------------------------------- the *_ex forms

std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  const char* fn = "linalg.cholesky_ex";
  check_matrix(A, fn, "A");
  check_float(A, "cholesky_cpu", true);
  check_square(A, fn);
  check_lapack_size(A, fn);
  const std::vector<int64_t> batch = batch_shape(A);
  const int64_t n = cols(A), count = numel_of(batch);
  Tensor L = column_major(A);
  std::vector<blas_int> status;
  if (count > 0 && n > 0) {
    visit_lapack(A.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&L}, saturating_work(count, n, n * n / 3));
      status = kernels::linalg::Kernels<T>::cholesky(data<T>(L), count, n, upper);
    });
  }
  Tensor info = info_tensor(status, batch);
  if (check_errors) {
    const int64_t e = first_failure(info);
    if (e >= 0)
      throw LinAlgError(str_cat(fn, ": ", batch_prefix(A.dim(), e),
                                "The factorization could not be completed because the input is not positive-definite "
                                "(the leading minor of order ",
                                data<int32_t>(info)[e], " is not positive-definite)."));
  }
  return {L, info};
}

std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor& A, bool check_errors) {
  const char* fn = "linalg.inv_ex";
  check_matrix(A, fn, "A");
  check_float(A, "linalg_inv_cpu", true);
  check_square(A, fn);
  check_lapack_size(A, fn);
  const std::vector<int64_t> batch = batch_shape(A);
  const int64_t n = cols(A), count = numel_of(batch);
  Tensor inv = column_major(A);
  std::vector<blas_int> status;
  if (count > 0 && n > 0) {
    visit_lapack(A.dtype(), [&](auto zero) {
      using T = decltype(zero);
      std::vector<blas_int> piv(size_t(count * n));
      PinnedWork work({&inv}, saturating_work(count, n * n, n));
      status = Factor<T>::lu(data<T>(inv), count, n, n, piv.data());
      kernels::linalg::Kernels<T>::inverse_from_lu(data<T>(inv), count, n, piv.data());
    });
  }
  Tensor info = info_tensor(status, batch);
  if (check_errors) {
    const int64_t e = first_failure(info);
    if (e >= 0)
      throw LinAlgError(str_cat(fn, ": ", batch_prefix(A.dim(), e), "The diagonal element ", data<int32_t>(info)[e],
                                " is zero, the inversion could not be completed because the input matrix is ",
                                "singular."));
  }
  return {inv, info};
}

std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  const char* fn = "linalg.solve";
  check_matrix(A, fn, "A");
  check_float(A, "linalg_solve_cpu", true);
  check_square(A, fn);
  check_same_dtype(A, B, fn, "A", "B");
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    check_matrix(B, fn, "B");
    auto [x, info] = linalg_solve_ex(transpose(A, -2, -1), transpose(B, -2, -1), true, check_errors);
    return {transpose(x, -2, -1), info};
  }
  const int64_t n = cols(A);
  // B is a batch of vectors when it is 1-D or has A's batch shape plus one dim
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && IntList(B.sizes().data(), size_t(B.dim())) ==
                                                                     IntList(A.sizes().data(), size_t(A.dim() - 1)));
  const Tensor b = vector ? unsqueeze(B, -1) : B;
  EMBER_CHECK(rows(b) == n, Runtime, fn, ": Incompatible shapes of A and B for the equation AX = B (", n, "x", n,
              " and ", rows(b), "x", cols(b), ")");
  // info is A's (its batch shape, as torch's): A is factored once, then the solve broadcasts
  auto [LU, pivots, info] = linalg_lu_factor_ex(A, true, false);
  if (check_errors) {
    const int64_t e = first_failure(info);
    if (e >= 0)
      throw LinAlgError(str_cat("torch.linalg.solve_ex: ", batch_prefix(A.dim(), e),
                                "The solver failed because the input matrix is singular."));
  }
  Tensor x = linalg_lu_solve(LU, pivots, b, true, false);
  return {vector ? squeeze_dim(x, -1) : x, info};
}

// ---------------------------------------------------------------- Householder QR

std::tuple<Tensor, Tensor> geqrf(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, Runtime, "torch.geqrf: input must have at least 2 dimensions.");
  check_float(self, "geqrf_cpu", true);
  check_lapack_size(self, "geqrf");
  const int64_t m = rows(self), n = cols(self), k = std::min(m, n);
  const std::vector<int64_t> batch = batch_shape(self);
  const int64_t count = numel_of(batch);
  Tensor a = column_major(self);
  Tensor tau = zeros(with(batch, {k}), self.dtype());
  if (count > 0 && k > 0) {
    visit_lapack(self.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&a, &tau}, saturating_work(count, m * n, k));
      Factor<T>::geqrf(data<T>(a), count, m, n, data<T>(tau));
    });
  }
  return {a, tau};
}

Tensor linalg_householder_product(const Tensor& input, const Tensor& tau) {
  const char* fn = "torch.linalg.householder_product";
  EMBER_CHECK(input.dim() >= 2, Runtime, fn, ": input must have at least 2 dimensions.");
  EMBER_CHECK(rows(input) >= cols(input), Runtime, fn,
              ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  EMBER_CHECK(tau.dim() >= 1 && cols(input) >= tau.sizes()[tau.dim() - 1], Runtime, fn,
              ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  EMBER_CHECK(input.dim() - tau.dim() == 1, Runtime, fn, ": Expected tau to have one dimension less than input, but ",
              "got tau.ndim equal to ", tau.dim(), " and input.ndim is equal to ", input.dim());
  EMBER_CHECK(batch_shape(tau, 1) == batch_shape(input), Runtime, fn,
              ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
              sizes_str(IntList(batch_shape(tau, 1))));
  EMBER_CHECK(tau.dtype() == input.dtype(), Runtime, fn, ": tau dtype ", type_name(tau.dtype()),
              " does not match input dtype ", type_name(input.dtype()));
  check_float(input, "orgqr_cpu", true);
  check_lapack_size(input, fn);
  const int64_t m = rows(input), n = cols(input), k = tau.sizes()[tau.dim() - 1];
  const std::vector<int64_t> batch = batch_shape(input);
  const int64_t count = numel_of(batch);
  Tensor q = column_major(input);
  if (count > 0 && n > 0) {
    Tensor t = contiguous(tau, MemoryFormat::Contiguous);
    visit_lapack(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&q, &t}, saturating_work(count, m * n, k));
      Factor<T>::orgqr(data<T>(q), count, m, n, k, data<T>(t));
    });
  }
  return q;
}

Tensor ormqr(const Tensor& self, const Tensor& input2, const Tensor& input3, bool left, bool transpose_) {
  const char* fn = "torch.ormqr";
  const Tensor &A = self, &tau = input2, &C = input3;
  EMBER_CHECK(A.dim() >= 2, Runtime, fn, ": input must have at least 2 dimensions.");
  EMBER_CHECK(C.dim() >= 2, Runtime, fn, ": other must have at least 2 dimensions.");
  EMBER_CHECK(tau.dim() == A.dim() - 1, Runtime, fn, ": Expected tau to have one dimension less than input, but got ",
              "tau.ndim equal to ", tau.dim(), " and input.ndim is equal to ", A.dim());
  EMBER_CHECK(C.dim() == A.dim(), Runtime, fn, ": Expected other to have the same number of dimensions as input, ",
              "but got other.ndim equal to ", C.dim(), " and input.ndim is equal to ", A.dim());
  const int64_t side_dim = left ? rows(C) : cols(C);
  EMBER_CHECK(side_dim == rows(A), Runtime, fn, ": other.shape[", left ? -2 : -1,
              "] must be equal to input.shape[-2]");
  const int64_t k = tau.sizes()[tau.dim() - 1];
  EMBER_CHECK(k == std::min(side_dim, cols(A)), Runtime, fn, ": tau.shape[-1] must be equal to ",
              "min(other.shape[", left ? -2 : -1, "], input.shape[-1])");
  EMBER_CHECK(batch_shape(tau, 1) == batch_shape(A), Runtime, fn,
              ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
              sizes_str(IntList(batch_shape(tau, 1))));
  EMBER_CHECK(batch_shape(C) == batch_shape(A), Runtime, fn,
              ": Expected batch dimensions of other to be equal to input.shape[:-2], but got ",
              sizes_str(IntList(batch_shape(C))));
  EMBER_CHECK(tau.dtype() == A.dtype(), Runtime, fn, ": Expected input and tau to have the same dtype, but input has ",
              "dtype", type_name(A.dtype()), " and tau has dtype ", type_name(tau.dtype()));
  EMBER_CHECK(C.dtype() == A.dtype(), Runtime, fn, ": Expected input and other to have the same dtype, but input has ",
              "dtype", type_name(A.dtype()), " and other has dtype ", type_name(C.dtype()));
  check_float(A, "ormqr_cpu", true);
  check_lapack_size(C, fn);
  const std::vector<int64_t> batch = batch_shape(A);
  const int64_t count = numel_of(batch), m = rows(C), n = cols(C);
  Tensor c = column_major(C);
  if (count > 0 && m > 0 && n > 0 && k > 0) {
    // the reflectors: the first k columns of A (LAPACK reads rows x k)
    Tensor a = column_major(narrow(A, -1, 0, k));
    Tensor t = contiguous(tau, MemoryFormat::Contiguous);
    visit_lapack(A.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&a, &c, &t}, saturating_work(count, m * n, k));
      Factor<T>::ormqr(data<T>(a), count, rows(A), k, data<T>(t), data<T>(c), m, n, left, transpose_);
    });
  }
  return c;
}

// ---------------------------------------------------------------- LDL

std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex(const Tensor& self, bool hermitian, bool check_errors) {
  const char* fn = "torch.linalg.ldl_factor_ex";
  check_matrix(self, fn, "A");
  check_square(self, fn);
  check_float(self, "ldl_factor_cpu");
  check_lapack_size(self, fn);
  (void)hermitian;  // the same factorization for real matrices
  const std::vector<int64_t> batch = batch_shape(self);
  const int64_t n = cols(self), count = numel_of(batch);
  Tensor LD = column_major(self);
  Tensor pivots = zeros(with(batch, {n}), ScalarType::Int32);
  std::vector<blas_int> status;
  if (count > 0 && n > 0) {
    visit_float(self.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&LD, &pivots}, saturating_work(count, n * n, n));
      status = Factor<T>::ldl(data<T>(LD), count, n, data<int32_t>(pivots));
    });
  }
  Tensor info = info_tensor(status, batch);
  if (check_errors) {
    const int64_t e = first_failure(info);
    if (e >= 0)
      throw LinAlgError(str_cat(fn, ": ", batch_prefix(self.dim(), e), "The factorization could not be completed ",
                                "because the block diagonal matrix D is singular (D[", data<int32_t>(info)[e], ",",
                                data<int32_t>(info)[e], "] is zero)."));
  }
  return {LD, pivots, info};
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  const char* fn = "torch.linalg.ldl_solve";
  check_matrix(LD, fn, "LD");
  check_matrix(B, fn, "B");
  check_square(LD, fn, "LD");
  EMBER_CHECK(B.dtype() == LD.dtype(), Runtime, "Expected b and A to have the same dtype, but found b of type ",
              type_name(B.dtype()), " and A of type ", type_name(LD.dtype()), " instead.");
  check_float(LD, "ldl_solve_cpu");
  EMBER_CHECK(is_integral(pivots.dtype(), false), Runtime, fn, ": Expected pivots to be integers. Got ",
              type_name(pivots.dtype()));
  const int64_t n = cols(LD);
  EMBER_CHECK(pivots.dim() == LD.dim() - 1 && pivots.sizes()[pivots.dim() - 1] == n, Runtime, fn,
              ": Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape ",
              sizes_str(pivots.sizes()), " instead");
  EMBER_CHECK(rows(B) == n, Runtime, fn, ": Incompatible shapes of A and B for the equation AX = B (", n, "x", n,
              " and ", rows(B), "x", cols(B), ")");
  check_lapack_size(B, fn);
  (void)hermitian;
  const std::vector<int64_t> batch = common_batch(LD, B);
  Tensor x = expanded_column_major(B, batch);
  const int64_t nrhs = cols(x), count = numel_of(batch);
  if (count > 0 && n > 0 && nrhs > 0) {
    Tensor a = expanded_column_major(LD, batch);
    Tensor piv = int32_copy(pivots, with(batch, {n}));
    check_pivots(piv, n, true, "torch.linalg.ldl_solve: pivots must be between -n and n, and not 0");
    visit_float(LD.dtype(), [&](auto zero) {
      using T = decltype(zero);
      PinnedWork work({&x, &a}, saturating_work(count, n * n, nrhs));
      Factor<T>::ldl_solve(data<T>(a), count, n, data<int32_t>(piv), data<T>(x), nrhs);
    });
  }
  return x;
}

}  // namespace ember::ops
