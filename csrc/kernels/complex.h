// Kernel family complex: the elementwise entries complex64 and complex128 support (Note
// [Complex dtypes], core/dtype.h). The engine (ops/elementwise.cpp) asks `supports` before
// it makes an output, then runs the entry with R = float or double, the part type.
#pragma once
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
