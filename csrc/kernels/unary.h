// Kernel family unary: the entries of the elementwise engine's unary ops (see
// ops/elementwise.h); one per declaration with `kernel: unary.<entry>`.
#pragma once
#include "core/scalar.h"
#include "kernel_ops.h"
#include "kernels/loops.h"

namespace ember::kernels::unary {

template <class T>
struct Kernels {
  static void run(UnaryOp op, const Loop& loop, const Scalar* args);
};

}  // namespace ember::kernels::unary
