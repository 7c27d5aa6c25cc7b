// Kernel family linalg_factor (ops/linalg_factor.cpp): LAPACK's factorizations and the
// solvers that use them, over batches of column-major matrices laid one after another
// (entry e of a batch of r x c matrices at p + e * r * c). The op layer checks shapes,
// broadcasts and copies; a matrix's failure comes back as its LAPACK info. T = float,
// double or std::complex of either (instances generated: kernel_instances_linalg_factor.h;
// blas.h's Routines<T> holds LAPACK's c/z names).
#pragma once
#include <cstdint>
#include <vector>
#include "kernels/blas.h"

namespace ember::kernels::linalg_factor {

using blas::blas_int;

template <class T>
struct Kernels {
  // LU with partial pivoting of each m x n matrix in place (getrf): min(m, n) pivots each.
  static std::vector<blas_int> lu(T* a, int64_t count, int64_t m, int64_t n, blas_int* pivots);
  // x (n x nrhs each) overwritten by the solution of op(A) x = b, op 'N', 'T' or 'C' (complex), from
  // A's LU (getrs).
  static void lu_solve(const T* lu, int64_t count, int64_t n, const blas_int* pivots, T* x, int64_t nrhs, char trans);
  // b (m x nrhs each) overwritten by the solution of op(A) X = B (left) or X op(A) = B
  // for triangular A (trsm: zeros on the diagonal give inf/nan, not an error).
  static void triangular_solve(const T* a, int64_t count, T* b, int64_t m, int64_t nrhs, bool left, bool upper,
                               bool transpose, bool unit);
  // Householder QR of each m x n matrix in place (geqrf), min(m, n) factors each in tau.
  static void geqrf(T* a, int64_t count, int64_t m, int64_t n, T* tau);
  // The first n columns of the product of the k reflectors of a (m x n each) and tau
  // (k each), in place (orgqr).
  static void orgqr(T* a, int64_t count, int64_t m, int64_t n, int64_t k, const T* tau);
  // c (m x n each) overwritten by op(Q) c (left) or c op(Q), Q from the k reflectors of
  // a (rows x k each) and tau (k each) (ormqr).
  static void ormqr(const T* a, int64_t count, int64_t rows, int64_t k, const T* tau, T* c, int64_t m, int64_t n,
                    bool left, bool transpose);
  // Bunch-Kaufman LDL^T of each symmetric n x n matrix from its lower triangle (sytrf),
  // the strict upper triangle zeroed.
  static std::vector<blas_int> ldl(T* a, int64_t count, int64_t n, blas_int* pivots);
  // x (n x nrhs each) overwritten by the solution of A x = b from A's LDL^T (sytrs).
  static void ldl_solve(const T* ld, int64_t count, int64_t n, const blas_int* pivots, T* x, int64_t nrhs);
};

}  // namespace ember::kernels::linalg_factor
