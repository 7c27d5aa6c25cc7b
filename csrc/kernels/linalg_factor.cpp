// The LAPACK drivers of kernels/linalg_factor.h. Batch entries are independent: they
// run across ember's pool (OpenBLAS itself is single-threaded, Note [ember threads BLAS]
// in kernels/linalg.cpp), a few entries per task when matrices are small.
#include "kernels/linalg_factor.h"
#include <algorithm>
#include <limits>
#include "core/parallel.h"

namespace ember::kernels::linalg_factor {
namespace {

blas_int ld(int64_t rows) { return blas_int(std::max<int64_t>(1, rows)); }

// Loads the library in the calling thread, before any task runs.
template <class T>
const blas::Lapack<T>& lapack() {
  return blas::routines<T>().lapack;
}

// fn(e) for every batch entry e, split across threads when each costs `work` flops or
// the entries together are worth it.
template <class F>
void for_each_entry(int64_t count, int64_t work, F&& fn) {
  constexpr int64_t kGrainWork = int64_t(1) << 16;
  const int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, work));
  parallel_for(0, count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) fn(e);
  });
}

// Note [LAPACKE refuses NaN]
// LAPACKE checks its inputs for NaN and returns a negative info without computing, where
// torch (calling LAPACK directly) lets NaN flow through. Matrices refused that way come
// out all NaN (pivots the identity, info 0), so a NaN input gives NaN results, as torch's.
template <class T>
void nan_fill(T* p, int64_t n) {
  const auto nan = std::numeric_limits<blas::Real<T>>::quiet_NaN();
  if constexpr (blas::kIsComplex<T>) std::fill(p, p + n, T(nan, nan));
  else std::fill(p, p + n, nan);
}

void identity_pivots(blas_int* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = blas_int(i + 1);
}

}  // namespace

template <class T>
std::vector<blas_int> Kernels<T>::lu(T* a, int64_t count, int64_t m, int64_t n, blas_int* pivots) {
  std::vector<blas_int> status(size_t(count), 0);
  const int64_t k = std::min(m, n);
  const auto& lp = lapack<T>();
  for_each_entry(count, m * n * k, [&](int64_t e) {
    status[e] = lp.getrf(blas::kLapackColMajor, blas_int(m), blas_int(n), a + e * m * n, ld(m), pivots + e * k);
    if (status[e] < 0) {  // See Note [LAPACKE refuses NaN]
      nan_fill(a + e * m * n, m * n);
      identity_pivots(pivots + e * k, k);
      status[e] = 0;
    }
  });
  return status;
}

template <class T>
void Kernels<T>::lu_solve(const T* lu, int64_t count, int64_t n, const blas_int* pivots, T* x, int64_t nrhs,
                          char trans) {
  const auto& lp = lapack<T>();
  for_each_entry(count, n * n * nrhs, [&](int64_t e) {
    if (lp.getrs(blas::kLapackColMajor, trans, blas_int(n), blas_int(nrhs), lu + e * n * n, ld(n), pivots + e * n,
                 x + e * n * nrhs, ld(n)) < 0)
      nan_fill(x + e * n * nrhs, n * nrhs);  // See Note [LAPACKE refuses NaN]
  });
}

template <class T>
void Kernels<T>::triangular_solve(const T* a, int64_t count, T* b, int64_t m, int64_t nrhs, bool left, bool upper,
                                  bool transpose, bool unit) {
  const int64_t n = left ? m : nrhs;  // A is n x n
  const auto trsm = blas::routines<T>().trsm;
  const T one(1);
  for_each_entry(count, n * m * nrhs, [&](int64_t e) {
    trsm(blas::kColMajor, left ? blas::kLeft : blas::kRight, upper ? blas::kUpper : blas::kLower,
         transpose ? blas::kTrans : blas::kNoTrans, unit ? blas::kUnit : blas::kNonUnit, blas_int(m), blas_int(nrhs),
         blas::factor(one), a + e * n * n, ld(n), b + e * m * nrhs, ld(m));
  });
}

template <class T>
void Kernels<T>::geqrf(T* a, int64_t count, int64_t m, int64_t n, T* tau) {
  const int64_t k = std::min(m, n);
  const auto& lp = lapack<T>();
  for_each_entry(count, m * n * k, [&](int64_t e) {
    if (lp.geqrf(blas::kLapackColMajor, blas_int(m), blas_int(n), a + e * m * n, ld(m), tau + e * k) < 0) {
      nan_fill(a + e * m * n, m * n);  // See Note [LAPACKE refuses NaN]
      nan_fill(tau + e * k, k);
    }
  });
}

template <class T>
void Kernels<T>::orgqr(T* a, int64_t count, int64_t m, int64_t n, int64_t k, const T* tau) {
  const auto& lp = lapack<T>();
  for_each_entry(count, m * n * k, [&](int64_t e) {
    if (lp.orgqr(blas::kLapackColMajor, blas_int(m), blas_int(n), blas_int(k), a + e * m * n, ld(m), tau + e * k) < 0)
      nan_fill(a + e * m * n, m * n);  // See Note [LAPACKE refuses NaN]
  });
}

template <class T>
void Kernels<T>::ormqr(const T* a, int64_t count, int64_t rows, int64_t k, const T* tau, T* c, int64_t m, int64_t n,
                       bool left, bool transpose) {
  const auto& lp = lapack<T>();
  for_each_entry(count, m * n * k, [&](int64_t e) {
    // complex: unmqr, whose transpose is the conjugate one
    if (lp.ormqr(blas::kLapackColMajor, left ? 'L' : 'R', transpose ? (blas::kIsComplex<T> ? 'C' : 'T') : 'N', blas_int(m), blas_int(n),
                 blas_int(k), a + e * rows * k, ld(rows), tau + e * k, c + e * m * n, ld(m)) < 0)
      nan_fill(c + e * m * n, m * n);  // See Note [LAPACKE refuses NaN]
  });
}

template <class T>
std::vector<blas_int> Kernels<T>::ldl(T* a, int64_t count, int64_t n, blas_int* pivots) {
  std::vector<blas_int> status(size_t(count), 0);
  const auto& lp = lapack<T>();
  for_each_entry(count, n * n * n, [&](int64_t e) {
    T* m = a + e * n * n;
    status[e] = lp.sytrf(blas::kLapackColMajor, 'L', blas_int(n), m, ld(n), pivots + e * n);
    if (status[e] < 0) {  // See Note [LAPACKE refuses NaN]
      nan_fill(m, n * n);
      identity_pivots(pivots + e * n, n);
      status[e] = 0;
    }
    for (int64_t j = 1; j < n; ++j)  // zero the strict upper triangle, which sytrf leaves as it was
      std::fill(m + j * n, m + j * n + j, T(0));
  });
  return status;
}

template <class T>
void Kernels<T>::ldl_solve(const T* ld_, int64_t count, int64_t n, const blas_int* pivots, T* x, int64_t nrhs) {
  const auto& lp = lapack<T>();
  for_each_entry(count, n * n * nrhs, [&](int64_t e) {
    if (lp.sytrs(blas::kLapackColMajor, 'L', blas_int(n), blas_int(nrhs), ld_ + e * n * n, ld(n), pivots + e * n,
                 x + e * n * nrhs, ld(n)) < 0)
      nan_fill(x + e * n * nrhs, n * nrhs);  // See Note [LAPACKE refuses NaN]
  });
}

}  // namespace ember::kernels::linalg_factor

#include "kernel_instances_linalg_factor.h"  // generated: Kernels<float>, <double>, <std::complex<...>>
