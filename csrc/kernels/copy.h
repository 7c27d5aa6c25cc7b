// Kernel family copy: dst = src converted to dst's dtype, element by element, for any
// pair of dtypes and any strides (same sizes: callers broadcast src first).
#pragma once
#include "core/tensor.h"

namespace ember::kernels::copy {

template <class Dst>
struct Kernels {
  static void copy(const Tensor& dst, const Tensor& src);
};

}  // namespace ember::kernels::copy
