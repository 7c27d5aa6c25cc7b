#pragma once
#include <algorithm>
#include "kernels/fill.h"
#include "kernels/loops.h"

namespace ember::kernels::fill {

template <class T>
void Kernels<T>::fill(const Tensor& self, const Scalar& value) {
  const T v = value.to<T>();
  Loop loop = make_loop({&self});
  run_loop(loop, [v](char** p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(T))) {
      std::fill_n(reinterpret_cast<T*>(p[0]), n, v);
    } else {
      for (int64_t i = 0; i < n; ++i) at<T>(p[0], s[0], i) = v;
    }
  });
}

}  // namespace ember::kernels::fill
