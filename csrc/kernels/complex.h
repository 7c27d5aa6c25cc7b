// Kernel family complex: the elementwise entries complex64 and complex128 support (Note
// [Complex dtypes], core/dtype.h). The engine (ops/elementwise.cpp) asks `supports` before
// it makes an output, then runs the entry with R = float or double, the part type.
#pragma once
#include <cmath>
#include <complex>
#include <limits>
#include "core/scalar.h"
#include "kernel_ops.h"  // generated: UnaryOp, BinaryOp, CompareOp, TernaryOp, PredicateOp
#include "kernels/loops.h"

namespace ember::kernels::complex {

bool supports(UnaryOp op);
bool supports(BinaryOp op);
bool supports(CompareOp op);
bool supports(TernaryOp op);
bool supports(PredicateOp op);
// abs and angle of a complex number are real: their outputs have the part dtype.
bool real_result(UnaryOp op);

// log(exp(a) + exp(b)) as torch computes it for complex numbers (logaddexp, and
// logcumsumexp's step): the term with the larger real part, hi, is taken out, hi +
// log1p(exp(lo - hi)); two -inf real parts give lo, two +inf ones log(exp a + exp b), and
// a NaN part NaN. The imaginary part is hi's plus an angle in (-pi, pi], not wrapped.
template <class R>
inline std::complex<R> log_add_exp(std::complex<R> a, std::complex<R> b) {
  if (std::isnan(a.real()) || std::isnan(a.imag()) || std::isnan(b.real()) || std::isnan(b.imag()))
    return {std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN()};
  const bool a_hi = a.real() >= b.real();
  const std::complex<R> hi = a_hi ? a : b, lo = a_hi ? b : a;
  if (std::isinf(lo.real()) && lo.real() == hi.real()) return lo.real() < 0 ? lo : std::log(std::exp(lo) + std::exp(hi));
  // log1p(w), |w| <= 1: for small w, |1 + w|^2 = 1 + (2x + x^2 + y^2) through log1p (w
  // itself where that underflows); else |1 + w| by hypot, exact when 1 + w nearly cancels
  const std::complex<R> w = std::exp(lo - hi);
  const R x = w.real(), y = w.imag(), angle = std::atan2(y, 1 + x);
  R log_abs;
  if (std::abs(w) < R(0.5)) {
    const R r = x * (2 + x) + y * y;
    log_abs = r == 0 ? x : std::log1p(r) / 2;
  } else {
    log_abs = std::log(std::hypot(1 + x, y));
  }
  return {hi.real() + log_abs, hi.imag() + angle};
}

template <class R>
struct Kernels {
  static void unary(UnaryOp op, const Loop& loop, const Scalar* args);
  static void binary(BinaryOp op, const Loop& loop, const Scalar* args);
  static void compare(CompareOp op, const Loop& loop, const Scalar* args);
  static void ternary(TernaryOp op, const Loop& loop, const Scalar* args);
  static void predicate(PredicateOp op, const Loop& loop, const Scalar* args);
  // out (real, with the part dtype) = the angle of a
  static void angle(const Loop& loop);
  // out = conj(a)
  static void conj(const Loop& loop);
  // out = a * (cos b + i sin b) from real a, b (polar), out = a + i b (complex)
  static void polar(const Loop& loop);
  static void make(const Loop& loop);
};

}  // namespace ember::kernels::complex
