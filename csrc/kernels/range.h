// Kernel family range: arange, linspace and logspace into a fresh contiguous tensor.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember::kernels::range {

template <class T>
struct Kernels {
  static void arange(const Tensor& out, const Scalar& start, const Scalar& step);
  static void linspace(const Tensor& out, double start, double end);
  static void logspace(const Tensor& out, double start, double end, double base);
};

}  // namespace ember::kernels::range
