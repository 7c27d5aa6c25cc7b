// Kernel family index: advanced indexing. ops/indexing.cpp lays out an IndexLoop whose
// operand 0 is the gathered output (or the values to put), operand 1 is self restrided
// so the indexed dims have stride 0, and operands 2.. are int64 index tensors; the
// byte offset of each element in self is the sum of index * stride over indexed dims.
#pragma once
#include "core/tensor.h"
#include "kernels/loops.h"

namespace ember::kernels::index {

struct IndexLoop {
  Loop loop;
  int nindex = 0;
  int64_t sizes[kMaxOperands];    // size of each indexed dim of self
  int64_t strides[kMaxOperands];  // its stride in bytes
};

template <class T>
struct Kernels {
  static void gather(const IndexLoop& il);
  static void put(const IndexLoop& il, bool accumulate);
  static Tensor nonzero(const Tensor& self);
};

}  // namespace ember::kernels::index
