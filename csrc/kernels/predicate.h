// Kernel family predicate: the entries of the elementwise engine's predicate ops (see
// ops/elementwise.h); one per declaration with `kernel: predicate.<entry>`.
#pragma once
#include "core/scalar.h"
#include "kernel_ops.h"
#include "kernels/loops.h"

namespace ember::kernels::predicate {

template <class T>
struct Kernels {
  static void run(PredicateOp op, const Loop& loop, const Scalar* args);
};

}  // namespace ember::kernels::predicate
