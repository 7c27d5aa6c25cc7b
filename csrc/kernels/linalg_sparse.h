// Kernel family linalg_sparse (ops/linalg_sparse.cpp): products with a sparse matrix in
// CSR order. Operands are contiguous; indices are int64 already checked by the op.
#pragma once
#include <cstdint>

namespace ember::kernels::linalg_sparse {

template <class T>
struct Kernels {
  // out (rows x k) = CSR(crow, col, values) @ dense (cols x k); rows split across threads.
  static void csr_mm(const int64_t* crow, const int64_t* col, const T* values, int64_t rows, const T* dense,
                     int64_t k, T* out);
  // out[j] = dot(a[row[j]], b[col[j]]) over rows of length k, for j < nnz.
  static void sampled_dot(const int64_t* row, const int64_t* col, int64_t nnz, const T* a, const T* b, int64_t k,
                          T* out);
};

}  // namespace ember::kernels::linalg_sparse
