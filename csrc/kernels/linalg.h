// Kernel family linalg (ops/linalg.cpp): the float32/float64 matrix products on OpenBLAS's
// gemm, threaded by ember (Note [ember threads BLAS], linalg.cpp), and LAPACK over batches
// of column-major matrices. The op layer checks shapes and dtypes, lays the operands out
// and turns a matrix's failure (the `info` these return per matrix, > 0) into torch's
// LinAlgError. T = float, double or std::complex of either (the c and z routines); instances
// generated (kernel_instances_linalg.h).
#pragma once
#include <cstdint>
#include <vector>
#include "kernels/blas.h"
#include "kernels/matmul.h"

namespace ember::kernels::linalg {

using blas::blas_int;
using blas::Real;

// How BLAS sees a rows x cols matrix with these element strides: row-major as is
// (NoTrans) or as the transpose of a row-major matrix (Trans); nullopt-like `ok = false`
// when neither stride is 1 (or the other is too small), and the caller copies.
struct BlasMat {
  bool ok;
  int trans;
  int64_t ld;
};
BlasMat blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs);
bool fits_blas_int(int64_t v);
// a * b * c multiply-adds, saturating at 1e18 (a work estimate for threads and GIL release).
int64_t saturating_work(int64_t a, int64_t b, int64_t c);

template <class T>
struct Kernels {
  // c = beta * c + alpha * op(a) @ op(b) for every batch entry of g, with the layouts
  // blas_layout gave for a and b (g's c is row-major in its last two dims).
  static void gemm(const matmul::Gemm& g, int ta, int64_t lda, int tb, int64_t ldb, T alpha, T beta);

  // Each of `count` n x n matrices at a + e * n * n, column-major:
  // LU in place (getrf), pivots n per matrix.
  static std::vector<blas_int> lu(T* a, int64_t count, int64_t n, blas_int* pivots);
  // The inverse from the LU in place (getri).
  static void inverse_from_lu(T* lu, int64_t count, int64_t n, const blas_int* pivots);
  // x (n x nrhs each, column-major) overwritten by the solution of A x = b from A's LU (getrs).
  static void solve_from_lu(const T* lu, int64_t count, int64_t n, const blas_int* pivots, T* x, int64_t nrhs);
  // sign (complex: det / |det|), log|det| and det of each matrix from its LU; any of the
  // three may be null.
  static void determinants(const T* lu, int64_t count, int64_t n, const blas_int* pivots, T* sign, Real<T>* logabs,
                           T* det);
  // The Cholesky factor in place (potrf), the other triangle zeroed.
  static std::vector<blas_int> cholesky(T* a, int64_t count, int64_t n, bool upper);
  // QR of each m x n matrix held in the first n columns of w (m x wcols, column-major):
  // R (rrows x n each, row-major) written to r; Q's first qcols columns (column-major,
  // m x qcols each) to q unless q is null.
  static void qr(T* w, int64_t count, int64_t m, int64_t n, int64_t wcols, T* r, int64_t rrows, T* q, int64_t qcols);
  // The SVD of each m x n matrix of a (destroyed; gesdd): s (min(m, n) each); with
  // jobz 'A' or 'S' also u (m x ucols, column-major) and vt (vrows x n).
  static std::vector<blas_int> svd(T* a, int64_t count, int64_t m, int64_t n, char jobz, Real<T>* s, T* u, T* vt,
                                   int64_t ucols, int64_t vrows);
  // Eigenvalues (ascending, n each, into w) of the symmetric (Hermitian) n x n matrices of
  // a, using its `uplo` triangle; with vectors, a is overwritten by the eigenvectors
  // (syevd, heevd).
  static std::vector<blas_int> eigh(T* a, int64_t count, int64_t n, bool vectors, char uplo, Real<T>* w);
  // Eigenvalues (n each, into w) of the general n x n matrices of a (destroyed; geev),
  // and unless v is null the right eigenvectors (columns of unit norm, column-major
  // n x n each): a real matrix's complex pairs come out as conjugate pairs.
  static std::vector<blas_int> eig(T* a, int64_t count, int64_t n, std::complex<Real<T>>* w,
                                   std::complex<Real<T>>* v);
};

}  // namespace ember::kernels::linalg
