// Kernel family rowwise: ops that walk each row along one dim in order. The op passes a
// Loop over the operands with that dim removed (each loop element is a row's first
// element) plus each operand's byte stride along the dim and the row length.
//   argmax/argmin:  operands {values (T), indices (int64), in (T)}; values may be
//                   skipped (argmax alone) by passing indices twice.
//   cumsum/cumprod: {out (Acc), in (T)}: Acc = int64 for integral T, else T.
//   cummax/cummin:  {values (T), indices (int64), in (T)}
//   logcumsumexp:   {out (T), in (T)}, floating T.
//   sort:           {values (T), indices (int64), in (T)}, stable; NaN sorts as largest.
#pragma once
#include "core/dtype.h"
#include "kernels/loops.h"
#include "kernel_ops.h"  // generated: enum RowOp, from the declarations' `kernel: rowwise.<entry>`

namespace ember::kernels::rowwise {

struct Rows {
  Loop loop;                    // over the rows
  int64_t dim_strides[kMaxOperands];  // bytes, along the dim
  int64_t length;               // elements per row
  bool descending = false;      // sort
};

template <class T>
struct Kernels {
  static void run(RowOp op, const Rows& rows);
};

}  // namespace ember::kernels::rowwise
