// Kernel family special (kernels/special.cpp): the special functions of torch.special
// (gamma and zeta functions, incomplete gamma, Bessel and Airy functions, the normal
// distribution's functions, orthogonal polynomials) as elementwise entries of one or two
// inputs. A float family: Kernels<float> runs float32, float16 and bfloat16 storage,
// Kernels<double> float64; every function evaluates in double. The declarations'
// `kernel: special.<entry>` list the entries (SpecialOp, kernel_ops.h) and the engine
// call is ops::special_map (ops/elementwise.h).
#pragma once
#include "core/dtype.h"
#include "core/scalar.h"
#include "kernel_ops.h"  // generated: SpecialOp, EMBER_SPECIAL_ENTRIES
#include "kernels/loops.h"

namespace ember::kernels::special {

template <class C>
struct Kernels {
  // storage: the operands' dtype (C itself, or float16/bfloat16 for C = float)
  static void run(SpecialOp op, ScalarType storage, const Loop& loop, const Scalar* args);
};

// ψ(x) of one double, for other kernels (the random family's gamma gradient).
double digamma_value(double x);

// Dispatches a compute dtype already checked to be floating to its Kernels.
void run(SpecialOp op, ScalarType storage, const Loop& loop, const Scalar* args);

}  // namespace ember::kernels::special
