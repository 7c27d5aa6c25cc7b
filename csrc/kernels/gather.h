// Kernel family gather: indexed reads and writes along one dim. The op restrides the
// indexed tensor to the index's shape with stride 0 along dim, so a Loop over
// {a, index, b} yields matching elements; the kernel adds index * dim_stride.
//   gather:  {out, index, self~}:  out = self~[index]
//   scatter: {self~, index, src}:  self~[index] = src (or += with add); sequential, as
//            indices may repeat.
#pragma once
#include "core/dtype.h"
#include "kernels/loops.h"

namespace ember::kernels::gather {

template <class T>
struct Kernels {
  // false when an index lies outside [0, size) (that element is skipped; the op raises)
  static bool gather(const Loop& loop, int64_t dim_stride, int64_t size);
  static void scatter(const Loop& loop, int64_t dim_stride, bool add);
};

}  // namespace ember::kernels::gather
