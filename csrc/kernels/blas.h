// BLAS and LAPACK from OpenBLAS (the scipy-openblas32 package), loaded on first use so
// `import ember` never pays for it (DESIGN.md, BLAS is loaded on first use). The library
// is found by a locator the binding layer installs (it asks ember.linalg for the path);
// EMBER_BLAS_LIBRARY overrides it. Symbols are looked up with the package's `scipy_`
// prefix, then without (any OpenBLAS with 32-bit integers works).
#pragma once
#include <cstdint>
#include <string>

namespace ember::blas {

using blas_int = int32_t;  // scipy-openblas32: 32-bit BLAS and LAPACK integers

// CBLAS enum values and LAPACKE's matrix layout.
constexpr int kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112;
constexpr int kLapackColMajor = 102;

template <class T>
using gemm_fn = void (*)(int, int, int, blas_int, blas_int, blas_int, T, const T*, blas_int, const T*, blas_int, T,
                         T*, blas_int);
template <class T>
using gemv_fn = void (*)(int, int, blas_int, blas_int, T, const T*, blas_int, const T*, blas_int, T, T*, blas_int);
template <class T>
using dot_fn = T (*)(blas_int, const T*, blas_int, const T*, blas_int);

// LAPACKE (high-level interface: it allocates its own workspace).
template <class T>
struct Lapack {
  blas_int (*getrf)(int, blas_int, blas_int, T*, blas_int, blas_int*);
  blas_int (*getri)(int, blas_int, T*, blas_int, const blas_int*);
  blas_int (*getrs)(int, char, blas_int, blas_int, const T*, blas_int, const blas_int*, T*, blas_int);
  blas_int (*potrf)(int, char, blas_int, T*, blas_int);
  blas_int (*geqrf)(int, blas_int, blas_int, T*, blas_int, T*);
  blas_int (*orgqr)(int, blas_int, blas_int, blas_int, T*, blas_int, const T*);
  blas_int (*gesdd)(int, char, blas_int, blas_int, T*, blas_int, T*, T*, blas_int, T*, blas_int);
  blas_int (*syevd)(int, char, char, blas_int, T*, blas_int, T*);
  blas_int (*gelsd)(int, blas_int, blas_int, blas_int, T*, blas_int, T*, blas_int, T*, T, blas_int*);
  // the factorizations' solvers (kernels/linalg_factor.cpp)
  blas_int (*ormqr)(int, char, char, blas_int, blas_int, blas_int, const T*, blas_int, const T*, T*, blas_int);
  blas_int (*sytrf)(int, char, blas_int, T*, blas_int, blas_int*);
  blas_int (*sytrs)(int, char, blas_int, blas_int, const T*, blas_int, const blas_int*, T*, blas_int);
};

// CBLAS's side, uplo and diag values (trsm).
constexpr int kUpper = 121, kLower = 122, kNonUnit = 131, kUnit = 132, kLeft = 141, kRight = 142;
template <class T>
using trsm_fn = void (*)(int, int, int, int, int, blas_int, blas_int, T, const T*, blas_int, T*, blas_int);

template <class T>
struct Routines {
  gemm_fn<T> gemm;
  trsm_fn<T> trsm;
  gemv_fn<T> gemv;
  dot_fn<T> dot;
  Lapack<T> lapack;
};

struct Library {
  Routines<float> f32;
  Routines<double> f64;
  void (*set_num_threads)(int);
};

// The library, loaded once (thread-safe); RuntimeError naming what is missing when it
// cannot be loaded (a later call tries again). OpenBLAS is set to one thread: ember
// splits the work itself (see Note [ember threads BLAS] in kernels/linalg.cpp).
const Library& library();

template <class T>
const Routines<T>& routines() {
  if constexpr (sizeof(T) == 4) return library().f32;
  else return library().f64;
}

// Installed by the binding layer: the path of the shared library ("" when not found).
void set_locator(std::string (*locate)());

}  // namespace ember::blas
