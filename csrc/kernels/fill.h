// Kernel family fill: every element of a (strided) tensor set to one value.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember::kernels::fill {

template <class T>
struct Kernels {
  static void fill(const Tensor& self, const Scalar& value);
};

}  // namespace ember::kernels::fill
