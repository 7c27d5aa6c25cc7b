// The dtype visit of the LAPACK-based ops (ops/linalg.cpp, ops/linalg_factor.cpp).
#pragma once
#include <complex>
#include "ops/internal.h"

namespace ember::ops {

// Calls f(T()) with T the LAPACK element type of dt: float, double or std::complex of
// either (float32/float64/complex64/complex128; the caller has checked dt is one).
template <class F>
void visit_lapack(ScalarType dt, F&& f) {
  if (is_complex(dt)) visit_complex(dt, [&](auto r) { f(std::complex<decltype(r)>()); });
  else visit_float(dt, f);
}

}  // namespace ember::ops
