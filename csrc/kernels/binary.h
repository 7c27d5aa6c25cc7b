// Kernel family binary: the entries of the elementwise engine's binary ops (see
// ops/elementwise.h); one per declaration with `kernel: binary.<entry>`.
#pragma once
#include "core/scalar.h"
#include "kernel_ops.h"
#include "kernels/loops.h"

namespace ember::kernels::binary {

template <class T>
struct Kernels {
  static void run(BinaryOp op, const Loop& loop, const Scalar* args);
};

}  // namespace ember::kernels::binary
