// Complex folds (sum, prod) and scans (cumsum, cumprod, logcumsumexp) for ops/reduce.cpp: the accumulator is complex128 whatever
// the input (complex64 or complex128), as the real sums accumulate in float64. The
// runs are those of kernels/reduce.h: acc stride 0 folds in registers ("horizontal"),
// any other folds element by element into acc ("vertical").
#pragma once
#include "kernel_ops.h"  // generated: ReduceOp
#include "kernels/loops.h"
#include "kernels/rowwise.h"

namespace ember::kernels::complex {

using reduce::ReduceOp;

bool folds(ReduceOp op);  // the ReduceOps with a complex fold: sum, prod

template <class R>  // R = float or double, the part type
struct Reduce {
  static void init(ReduceOp op, char* acc, int64_t n);
  static void run(ReduceOp op, const Loop& loop, int64_t begin, int64_t end);
  static void combine(ReduceOp op, char* acc, const char* part, int64_t n);
  // cumsum (op sum) or cumprod (op prod) along rows: operands {out, in}, both complex<R>
  static void scan(ReduceOp op, const rowwise::Rows& rows);
  // logcumsumexp along rows, each step complex::log_add_exp in complex128: {out, in}
  static void logcumsumexp(const rowwise::Rows& rows);
};

}  // namespace ember::kernels::complex
