// Products with a sparse matrix in CSR order (declarations/ops/linalg_sparse.yaml) over
// kernels/linalg_sparse.h. ember/_sparse.py sorts a COO tensor's entries into rows.
#include "kernels/linalg_sparse.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace sk = kernels::linalg_sparse;

// idx as contiguous int64, each checked against [0, bound).
Tensor checked_indices(const Tensor& idx, int64_t bound, const char* op, const char* what) {
  EMBER_CHECK(idx.dim() == 1 && idx.dtype() == ScalarType::Int64, Runtime, op, ": expected ", what,
              " to be a 1-D int64 tensor");
  Tensor r = dense(idx, ScalarType::Int64);
  const int64_t* p = ptr<int64_t>(r);
  for (int64_t i = 0; i < r.numel(); ++i)
    EMBER_CHECK(p[i] >= 0 && p[i] < bound, Index, op, ": ", what, " ", p[i], " is out of bounds for size ", bound);
  return r;
}

void check_operands(const Tensor& values, const Tensor& mat, const char* op) {
  EMBER_CHECK(is_floating(values.dtype()), NotImplemented, "\"", op, "\" not implemented for '",
              type_name(values.dtype()), "'");
  EMBER_CHECK(values.dtype() == mat.dtype(), Runtime, op, ": expected values and the dense matrix to have the same ",
              "dtype, got ", type_name(values.dtype()), " and ", type_name(mat.dtype()));
  EMBER_CHECK(mat.dim() == 2, Runtime, op, ": expected a 2-D dense matrix, got ", mat.dim(), "-D");
}

}  // namespace

Tensor _sparse_csr_mm(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values,
                      const Tensor& dense_mat) {
  const char* op = "_sparse_csr_mm";
  check_operands(values, dense_mat, op);
  const int64_t nnz = values.numel(), cols = dense_mat.sizes()[0], k = dense_mat.sizes()[1];
  EMBER_CHECK(values.dim() == 1 && col_indices.dim() == 1 && col_indices.numel() == nnz, Runtime, op,
              ": expected 1-D values and col_indices of the same length");
  EMBER_CHECK(crow_indices.dim() == 1 && crow_indices.numel() >= 1 && crow_indices.dtype() == ScalarType::Int64,
              Runtime, op, ": expected crow_indices to be a non-empty 1-D int64 tensor");
  const Tensor crow = dense(crow_indices, ScalarType::Int64);
  const int64_t rows = crow.numel() - 1;
  const int64_t* c = ptr<int64_t>(crow);
  EMBER_CHECK(c[0] == 0 && c[rows] == nnz, Runtime, op, ": crow_indices must start at 0 and end at nnz");
  for (int64_t r = 0; r < rows; ++r)
    EMBER_CHECK(c[r] <= c[r + 1], Runtime, op, ": crow_indices must be non-decreasing");
  const Tensor col = checked_indices(col_indices, cols, op, "column index");
  const ScalarType ct = compute_dtype(values.dtype());
  const Tensor v = dense(values, ct), d = dense(dense_mat, ct);
  Tensor out = empty_tensor({rows, k}, ct);
  if (out.numel() > 0) {
    PinnedWork work({&crow, &col, &v, &d, &out}, nnz * k + out.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      sk::Kernels<T>::csr_mm(c, ptr<int64_t>(col), ptr<T>(v), rows, ptr<T>(d), k, ptr<T>(out));
    });
  }
  return as_dtype(out, values.dtype());
}

Tensor _sparse_sampled_dot(const Tensor& row_indices, const Tensor& col_indices, const Tensor& a, const Tensor& b) {
  const char* op = "_sparse_sampled_dot";
  check_operands(a, b, op);
  EMBER_CHECK(a.dim() == 2 && a.sizes()[1] == b.sizes()[1], Runtime, op,
              ": expected 2-D a and b with rows of the same length");
  const int64_t nnz = row_indices.numel(), k = a.sizes()[1];
  EMBER_CHECK(col_indices.numel() == nnz, Runtime, op, ": expected row_indices and col_indices of the same length");
  const Tensor row = checked_indices(row_indices, a.sizes()[0], op, "row index");
  const Tensor col = checked_indices(col_indices, b.sizes()[0], op, "column index");
  const ScalarType ct = compute_dtype(a.dtype());
  const Tensor x = dense(a, ct), y = dense(b, ct);
  Tensor out = empty_tensor({nnz}, ct);
  if (nnz > 0) {
    PinnedWork work({&row, &col, &x, &y, &out}, nnz * k);
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      sk::Kernels<T>::sampled_dot(ptr<int64_t>(row), ptr<int64_t>(col), nnz, ptr<T>(x), ptr<T>(y), k, ptr<T>(out));
    });
  }
  return as_dtype(out, a.dtype());
}

}  // namespace ember::ops
