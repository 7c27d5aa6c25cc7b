// The BLAS and LAPACK drivers of kernels/linalg.h.
#include "kernels/linalg.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include "core/parallel.h"

namespace ember::kernels::linalg {
namespace {

blas_int ld(int64_t rows) { return blas_int(std::max<int64_t>(1, rows)); }

template <class T>
const blas::Lapack<T>& lapack() {
  return blas::routines<T>().lapack;
}

}  // namespace

BlasMat blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols)))
    return BlasMat{true, blas::kNoTrans, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows)))
    return BlasMat{true, blas::kTrans, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  return BlasMat{false, 0, 0};
}

bool fits_blas_int(int64_t v) { return v <= int64_t(std::numeric_limits<blas_int>::max()); }

int64_t saturating_work(int64_t a, int64_t b, int64_t c) {
  const double w = double(a) * double(b) * double(c);
  return w > 1e18 ? int64_t(1e18) : int64_t(w);
}

// Note [ember threads BLAS]
// OpenBLAS runs single-threaded (blas::library() sets it once); ember splits products
// across its own pool, whose workers sleep instead of spinning. With OpenBLAS's threads,
// a product slowed 20-100x while another process kept a core busy (bmm 64x128²: 0.13
// GFLOP/s against torch's 13), and its batch call splits even tiny batches (35 2x3x4
// products: 5 us alone, 150 ms busy). Work items are batch entries, or blocks of rows
// (or columns, whichever are more) when there are fewer entries than threads.
constexpr int64_t kGemmGrainWork = int64_t(1) << 18;  // multiply-adds per work item at least

template <class T>
void Kernels<T>::gemm(const matmul::Gemm& g, int ta, int64_t lda, int tb, int64_t ldb, T alpha, T beta) {
  const auto& r = blas::routines<T>();
  const int64_t per_entry = saturating_work(g.m, g.n, g.k);
  const int64_t threads = get_num_threads();
  int64_t blocks = 1;  // blocks per entry
  if (g.batch() < threads && per_entry >= 2 * kGemmGrainWork)
    blocks = std::min<int64_t>({threads, std::max(g.m, g.n), per_entry / kGemmGrainWork});
  const bool by_rows = g.m >= g.n;
  const int64_t span = by_rows ? g.m : g.n;
  const int64_t items = g.batch() * blocks;
  const int64_t grain = std::max<int64_t>(1, kGemmGrainWork / std::max<int64_t>(1, per_entry / blocks));
  parallel_for(0, items, grain, [&](int64_t begin, int64_t end) {
    for (int64_t it = begin; it < end; ++it) {
      const int64_t e = it / blocks, blk = it % blocks;
      const int64_t lo = span * blk / blocks, hi = span * (blk + 1) / blocks;
      if (hi <= lo) continue;
      const T* pa = reinterpret_cast<const T*>(g.a + g.a_off[e]);
      const T* pb = reinterpret_cast<const T*>(g.b + g.b_off[e]);
      T* pc = reinterpret_cast<T*>(g.c + g.c_off[e]);
      int64_t m = g.m, n = g.n;
      if (by_rows) {  // rows lo..hi of A and C
        pa += ta == blas::kNoTrans ? lo * lda : lo;
        pc += lo * g.c_rs;
        m = hi - lo;
      } else {  // columns lo..hi of B and C
        pb += tb == blas::kNoTrans ? lo : lo * ldb;
        pc += lo;
        n = hi - lo;
      }
      r.gemm(blas::kRowMajor, ta, tb, blas_int(m), blas_int(n), blas_int(g.k), blas::factor(alpha), pa,
             blas_int(lda), pb, blas_int(ldb), blas::factor(beta), pc, blas_int(g.c_rs));
    }
  });
}

template <class T>
std::vector<blas_int> Kernels<T>::lu(T* a, int64_t count, int64_t n, blas_int* pivots) {
  std::vector<blas_int> status(size_t(count), 0);
  for (int64_t e = 0; e < count; ++e)
    status[e] = lapack<T>().getrf(blas::kLapackColMajor, blas_int(n), blas_int(n), a + e * n * n, ld(n), pivots + e * n);
  return status;
}

template <class T>
void Kernels<T>::inverse_from_lu(T* lu, int64_t count, int64_t n, const blas_int* pivots) {
  for (int64_t e = 0; e < count; ++e)
    lapack<T>().getri(blas::kLapackColMajor, blas_int(n), lu + e * n * n, ld(n), pivots + e * n);
}

template <class T>
void Kernels<T>::solve_from_lu(const T* lu, int64_t count, int64_t n, const blas_int* pivots, T* x, int64_t nrhs) {
  for (int64_t e = 0; e < count; ++e)
    lapack<T>().getrs(blas::kLapackColMajor, 'N', blas_int(n), blas_int(nrhs), lu + e * n * n, ld(n), pivots + e * n,
                      x + e * n * nrhs, ld(n));
}

template <class T>
void Kernels<T>::determinants(const T* lu, int64_t count, int64_t n, const blas_int* pivots, T* sign,
                              Real<T>* logabs, T* det) {
  for (int64_t e = 0; e < count; ++e) {
    T sg = 1, prod = 1;
    Real<T> log_sum = 0;
    const T* m = lu + e * n * n;
    for (int64_t i = 0; i < n; ++i) {
      const T d = m[i * n + i];
      const Real<T> mag = std::abs(d);
      if (pivots[e * n + i] != blas_int(i + 1)) sg = -sg;
      if constexpr (blas::kIsComplex<T>) {
        sg = mag == 0 ? T(0) : sg * (d / mag);  // the phase
      } else {
        if (d < 0) sg = -sg;
        if (d == 0) sg = 0;
      }
      log_sum += std::log(mag);
      prod *= d;
    }
    for (int64_t i = 0; i < n; ++i)
      if (pivots[e * n + i] != blas_int(i + 1)) prod = -prod;
    if (sign) sign[e] = sg;
    if (logabs) logabs[e] = log_sum;
    if (det) det[e] = prod;
  }
}

template <class T>
std::vector<blas_int> Kernels<T>::cholesky(T* a, int64_t count, int64_t n, bool upper) {
  std::vector<blas_int> status(size_t(count), 0);
  for (int64_t e = 0; e < count; ++e) {
    T* m = a + e * n * n;
    status[e] = lapack<T>().potrf(blas::kLapackColMajor, upper ? 'U' : 'L', blas_int(n), m, ld(n));
    for (int64_t j = 0; j < n; ++j)  // zero the other triangle (column-major: m[j * n + i] is (i, j))
      for (int64_t i = 0; i < n; ++i)
        if (upper ? i > j : i < j) m[j * n + i] = 0;
  }
  return status;
}

template <class T>
void Kernels<T>::qr(T* w, int64_t count, int64_t m, int64_t n, int64_t wcols, T* r, int64_t rrows, T* q,
                    int64_t qcols) {
  const int64_t k = std::min(m, n);
  std::vector<T> tau(size_t(std::max<int64_t>(k, 1)));
  for (int64_t e = 0; e < count; ++e) {
    T* we = w + e * m * wcols;
    lapack<T>().geqrf(blas::kLapackColMajor, blas_int(m), blas_int(n), we, ld(m), tau.data());
    T* re = r + e * rrows * n;  // R is row-major
    for (int64_t i = 0; i < std::min(rrows, m); ++i)
      for (int64_t j = i; j < n; ++j) re[i * n + j] = we[j * m + i];
    if (!q) continue;
    lapack<T>().orgqr(blas::kLapackColMajor, blas_int(m), blas_int(qcols), blas_int(k), we, ld(m), tau.data());
    std::copy(we, we + m * qcols, q + e * m * qcols);
  }
}

template <class T>
std::vector<blas_int> Kernels<T>::svd(T* a, int64_t count, int64_t m, int64_t n, char jobz, Real<T>* s, T* u, T* vt,
                                      int64_t ucols, int64_t vrows) {
  const int64_t k = std::min(m, n);
  std::vector<blas_int> status(size_t(count), 0);
  for (int64_t e = 0; e < count; ++e)
    status[e] = lapack<T>().gesdd(blas::kLapackColMajor, jobz, blas_int(m), blas_int(n), a + e * m * n, ld(m),
                                  s + e * k, u ? u + e * m * ucols : nullptr, ld(m), vt ? vt + e * vrows * n : nullptr,
                                  ld(vrows));
  return status;
}

template <class T>
std::vector<blas_int> Kernels<T>::eigh(T* a, int64_t count, int64_t n, bool vectors, char uplo, Real<T>* w) {
  std::vector<blas_int> status(size_t(count), 0);
  for (int64_t e = 0; e < count; ++e)
    status[e] = lapack<T>().syevd(blas::kLapackColMajor, vectors ? 'V' : 'N', uplo, blas_int(n), a + e * n * n, ld(n),
                                  w + e * n);
  return status;
}

template <class T>
std::vector<blas_int> Kernels<T>::eig(T* a, int64_t count, int64_t n, std::complex<Real<T>>* w,
                                      std::complex<Real<T>>* v) {
  std::vector<blas_int> status(size_t(count), 0);
  const char jobvr = v ? 'V' : 'N';
  for (int64_t e = 0; e < count; ++e) {
    T* ae = a + e * n * n;
    std::complex<Real<T>>* we = w + e * n;
    std::complex<Real<T>>* ve = v ? v + e * n * n : nullptr;
    if constexpr (blas::kIsComplex<T>) {
      status[e] = lapack<T>().geev(blas::kLapackColMajor, 'N', jobvr, blas_int(n), ae, ld(n), we, nullptr, 1, ve, ld(n));
    } else {
      std::vector<T> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), vr(v ? static_cast<size_t>(n * n) : 0);
      status[e] = lapack<T>().geev(blas::kLapackColMajor, 'N', jobvr, blas_int(n), ae, ld(n), wr.data(), wi.data(),
                                   nullptr, 1, v ? vr.data() : nullptr, ld(n));
      if (status[e] != 0) continue;
      for (int64_t j = 0; j < n; ++j) we[j] = {wr[j], wi[j]};
      if (!v) continue;
      // a complex pair j, j + 1 stores its vector's real part in column j and its
      // imaginary part in column j + 1; the second eigenvector is the first's conjugate
      for (int64_t j = 0; j < n; ++j) {
        const T* re = vr.data() + j * n;
        if (wi[j] == 0 || j + 1 == n) {
          for (int64_t i = 0; i < n; ++i) ve[j * n + i] = re[i];
          continue;
        }
        const T* im = re + n;
        for (int64_t i = 0; i < n; ++i) {
          ve[j * n + i] = {re[i], im[i]};
          ve[(j + 1) * n + i] = {re[i], -im[i]};
        }
        ++j;
      }
    }
  }
  return status;
}

}  // namespace ember::kernels::linalg

#include "kernel_instances_linalg.h"  // generated: Kernels<float>, <double>, <std::complex<...>>
