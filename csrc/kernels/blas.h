// BLAS and LAPACK from OpenBLAS (the scipy-openblas32 package), loaded on first use so
// `import ember` never pays for it (DESIGN.md, BLAS is loaded on first use). The library
// is found by a locator the binding layer installs (it asks ember.linalg for the path);
// EMBER_BLAS_LIBRARY overrides it. Symbols are looked up with the package's `scipy_`
// prefix, then without (any OpenBLAS with 32-bit integers works).
#pragma once
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ember::blas {

using blas_int = int32_t;  // scipy-openblas32: 32-bit BLAS and LAPACK integers

// CBLAS enum values and LAPACKE's matrix layout.
constexpr int kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113;
constexpr int kLapackColMajor = 102;

// The element types: float, double and std::complex of either (the c and z routines;
// std::complex has the layout of LAPACK's complex types). Real<T> is the part type:
// singular values, Hermitian eigenvalues and log|det| are real for complex matrices too.
template <class T>
struct RealOf {
  using type = T;
};
template <class T>
struct RealOf<std::complex<T>> {
  using type = T;
};
template <class T>
using Real = typename RealOf<T>::type;
template <class T>
constexpr bool kIsComplex = !std::is_same_v<T, Real<T>>;
// CBLAS takes a complex alpha or beta by pointer, a real one by value.
template <class T>
using Factor = std::conditional_t<kIsComplex<T>, const T*, T>;
template <class T>
Factor<T> factor(const T& v) {
  if constexpr (kIsComplex<T>) return &v;
  else return v;
}

template <class T>
using gemm_fn = void (*)(int, int, int, blas_int, blas_int, blas_int, Factor<T>, const T*, blas_int, const T*,
                         blas_int, Factor<T>, T*, blas_int);

// LAPACKE (high-level interface: it allocates its own workspace).
template <class T>
struct Lapack {
  blas_int (*getrf)(int, blas_int, blas_int, T*, blas_int, blas_int*);
  blas_int (*getri)(int, blas_int, T*, blas_int, const blas_int*);
  blas_int (*getrs)(int, char, blas_int, blas_int, const T*, blas_int, const blas_int*, T*, blas_int);
  blas_int (*potrf)(int, char, blas_int, T*, blas_int);
  blas_int (*geqrf)(int, blas_int, blas_int, T*, blas_int, T*);
  blas_int (*orgqr)(int, blas_int, blas_int, blas_int, T*, blas_int, const T*);
  blas_int (*gesdd)(int, char, blas_int, blas_int, T*, blas_int, Real<T>*, T*, blas_int, T*, blas_int);
  blas_int (*syevd)(int, char, char, blas_int, T*, blas_int, Real<T>*);  // complex: heevd
  blas_int (*gelsd)(int, blas_int, blas_int, blas_int, T*, blas_int, T*, blas_int, Real<T>*, Real<T>, blas_int*);
  // eigenvalues of a general matrix: real ones in two arrays (wr, wi), complex in one
  std::conditional_t<kIsComplex<T>,
                     blas_int (*)(int, char, char, blas_int, T*, blas_int, T*, T*, blas_int, T*, blas_int),
                     blas_int (*)(int, char, char, blas_int, T*, blas_int, T*, T*, T*, blas_int, T*, blas_int)>
      geev;
  // the factorizations' solvers (kernels/linalg_factor.cpp); complex: orgqr and ormqr
  // are ungqr and unmqr (ormqr's 'T' is then 'C')
  blas_int (*ormqr)(int, char, char, blas_int, blas_int, blas_int, const T*, blas_int, const T*, T*, blas_int);
  blas_int (*sytrf)(int, char, blas_int, T*, blas_int, blas_int*);
  blas_int (*sytrs)(int, char, blas_int, blas_int, const T*, blas_int, const blas_int*, T*, blas_int);
};

// CBLAS's side, uplo and diag values (trsm).
constexpr int kUpper = 121, kLower = 122, kNonUnit = 131, kUnit = 132, kLeft = 141, kRight = 142;
template <class T>
using trsm_fn = void (*)(int, int, int, int, int, blas_int, blas_int, Factor<T>, const T*, blas_int, T*, blas_int);

template <class T>
struct Routines {
  gemm_fn<T> gemm;
  trsm_fn<T> trsm;
  Lapack<T> lapack;
};

struct Library {
  Routines<float> f32;
  Routines<double> f64;
  Routines<std::complex<float>> c64;
  Routines<std::complex<double>> c128;
  void (*set_num_threads)(int);
};

// The library, loaded once (thread-safe); RuntimeError naming what is missing when it
// cannot be loaded (a later call tries again). OpenBLAS is set to one thread: ember
// splits the work itself (see Note [ember threads BLAS] in kernels/linalg.cpp).
const Library& library();

template <class T>
const Routines<T>& routines() {
  if constexpr (std::is_same_v<T, float>) return library().f32;
  else if constexpr (std::is_same_v<T, double>) return library().f64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return library().c64;
  else return library().c128;
}

// Installed by the binding layer: the path of the shared library ("" when not found).
void set_locator(std::string (*locate)());

}  // namespace ember::blas
