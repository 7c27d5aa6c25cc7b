// Kernel family fft (ops/fft.cpp): discrete Fourier transforms of `howmany` 1-D signals of
// length n over std::complex<R> / R arrays, R = float or double. Signal i's element k is at
// in[i * idist + k * istride] (out likewise with ostride/odist), so a transform along any
// dimension of a strided tensor needs no copy. The forward transform is
// X[k] = scale * sum_j x[j] exp(-2 pi i jk / n); the inverse has exp(+2 pi i jk / n).
// Each call runs on the calling thread (the op layer splits batches across threads); plans
// are built once per (n, R) and cached.
#pragma once
#include <complex>
#include <cstdint>

namespace ember::kernels::fft {

template <class R>
struct Kernels {
  using C = std::complex<R>;
  // Complex to complex. in == out is allowed when the two layouts are the same.
  static void c2c(const C* in, C* out, int64_t n, int64_t howmany, int64_t istride, int64_t idist, int64_t ostride,
                  int64_t odist, bool forward, double scale);
  // Real to complex: the n / 2 + 1 outputs k = 0 .. n / 2 of the transform of a real signal
  // (the rest are their conjugates). forward = false gives the exp(+i) transform.
  static void r2c(const R* in, C* out, int64_t n, int64_t howmany, int64_t istride, int64_t idist, int64_t ostride,
                  int64_t odist, bool forward, double scale);
  // Complex to real: the real signal of length n whose (Hermitian) spectrum has the n / 2 + 1
  // inputs as its first half; the imaginary parts of X[0] (and of X[n / 2], n even) are
  // ignored. forward = false (the usual, irfft) uses exp(+i); forward = true exp(-i).
  static void c2r(const C* in, R* out, int64_t n, int64_t howmany, int64_t istride, int64_t idist, int64_t ostride,
                  int64_t odist, bool forward, double scale);
};

}  // namespace ember::kernels::fft
