// Kernel family ternary: the entries of the elementwise engine's ternary ops (see
// ops/elementwise.h); one per declaration with `kernel: ternary.<entry>`.
#pragma once
#include "core/scalar.h"
#include "kernel_ops.h"
#include "kernels/loops.h"

namespace ember::kernels::ternary {

template <class T>
struct Kernels {
  static void run(TernaryOp op, const Loop& loop, const Scalar* args);
};

}  // namespace ember::kernels::ternary
