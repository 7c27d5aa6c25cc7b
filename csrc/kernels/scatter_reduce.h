// Kernel family scatter_reduce: src folded into self at index along one dim, as the
// gather family's scatter (the op restrides self to the index's shape with stride 0
// along dim; the kernel adds index * dim_stride): {self~, index, src}. Sequential, as
// indices may repeat. amax/amin propagate NaN.
#pragma once
#include "core/dtype.h"
#include "kernels/loops.h"

namespace ember::kernels::scatter_reduce {

enum class ReduceOp : uint8_t { sum, prod, amax, amin };

template <class T>
struct Kernels {
  static void reduce(const Loop& loop, int64_t dim_stride, ReduceOp op);
};

}  // namespace ember::kernels::scatter_reduce
