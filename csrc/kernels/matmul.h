// Kernel family matmul: the dtypes BLAS lacks (integers, bool, float16, bfloat16) and
// the small products of linalg. float32/float64 products go to OpenBLAS instead (see
// ops/linalg.cpp); this family is their fallback and stays simple: a row of C at a time,
// accumulated in a wide type, rows split across threads.
#pragma once
#include <vector>
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember::kernels::matmul {

// C[b] = beta * C[b] + alpha * A[b] @ B[b] for every batch entry b, with A (m x k),
// B (k x n), C (m x n) at byte offsets a_off[b], b_off[b], c_off[b] from their base
// pointers and with the element strides below. beta == 0 never reads C (as BLAS).
struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  char *a = nullptr, *b = nullptr, *c = nullptr;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, c_rs = 0, c_cs = 0;
  std::vector<int64_t> a_off, b_off, c_off;
  int64_t batch() const { return static_cast<int64_t>(c_off.size()); }
};

template <class T>
struct Kernels {
  static void gemm(const Gemm& g, const Scalar& alpha, const Scalar& beta);
  // out = a x b along dim (size 3 there), all three of one shape.
  static void cross(const Tensor& out, const Tensor& a, const Tensor& b, int64_t dim);
};

}  // namespace ember::kernels::matmul
