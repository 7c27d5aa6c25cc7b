// Kernel family reduce: folds the elements of `in` into an accumulator tensor `acc`
// restrided to in's shape with stride 0 along the reduced dims (ops/reduce.cpp makes
// it). A Loop over {in, acc} hands the kernel 1-D runs; a run with acc stride 0 is
// folded in registers ("horizontal"), any other is folded element by element into acc
// ("vertical", e.g. a sum over rows). The entries (ReduceOp: sum, amax, all, ...) are
// listed by the generator from the declarations' `kernel: reduce.<entry>` fields; each
// is one Traits specialization in reduce_impl.h.
#pragma once
#include "core/dtype.h"
#include "kernels/loops.h"
#include "kernel_ops.h"  // generated: enum ReduceOp and EMBER_REDUCE_ENTRIES

namespace ember::kernels::reduce {

template <class T>
struct Kernels {
  // The accumulator's dtype (its Traits' Acc): sum/nansum/prod float64 for floating
  // inputs, int64 otherwise; amax/amin the input's compute dtype; all/any bool.
  static ScalarType acc_dtype(ReduceOp op);
  static void init(ReduceOp op, char* acc, int64_t n);  // n accumulators set to the identity
  static void run(ReduceOp op, const Loop& loop, int64_t begin, int64_t end);
  static void combine(ReduceOp op, char* acc, const char* part, int64_t n);  // acc[i] op= part[i]
  // A variance's second pass over a Loop of {in, mean, acc}, mean and acc float64 and
  // restrided like acc: acc += (x - mean)², in float64.
  static void centered_sumsq(const Loop& loop, int64_t begin, int64_t end);
};

}  // namespace ember::kernels::reduce
