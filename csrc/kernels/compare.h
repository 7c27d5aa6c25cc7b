// Kernel family compare: the entries of the elementwise engine's compare ops (see
// ops/elementwise.h); one per declaration with `kernel: compare.<entry>`.
#pragma once
#include "core/scalar.h"
#include "kernel_ops.h"
#include "kernels/loops.h"

namespace ember::kernels::compare {

template <class T>
struct Kernels {
  static void run(CompareOp op, const Loop& loop, const Scalar* args);
};

}  // namespace ember::kernels::compare
