#pragma once
#include <cmath>
#include "kernels/loops.h"
#include "kernels/range.h"

namespace ember::kernels::range {

template <class T>
void Kernels<T>::arange(const Tensor& out, const Scalar& start, const Scalar& step) {
  T* o = reinterpret_cast<T*>(out.data());
  const bool exact = start.is_integral() && step.is_integral() && !is_floating(out.dtype());
  const int64_t i0 = start.to_int64(), is = step.to_int64();
  const double d0 = start.to_double(), ds = step.to_double();
  parallel_for(0, out.numel(), kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (exact) o[i] = cast<T>(static_cast<int64_t>(i0 + static_cast<__int128>(i) * is));
      else o[i] = cast<T>(d0 + static_cast<double>(i) * ds);
    }
  });
}

// Values from both ends towards the middle, so that start and end come out exact.
inline double linspace_value(double start, double end, int64_t steps, int64_t i) {
  if (steps == 1) return start;
  const double step = (end - start) / static_cast<double>(steps - 1);
  return i < steps / 2 ? start + step * static_cast<double>(i)
                       : end - step * static_cast<double>(steps - 1 - i);
}

template <class T>
void Kernels<T>::linspace(const Tensor& out, double start, double end) {
  T* o = reinterpret_cast<T*>(out.data());
  const int64_t steps = out.numel();
  parallel_for(0, steps, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = cast<T>(linspace_value(start, end, steps, i));
  });
}

template <class T>
void Kernels<T>::logspace(const Tensor& out, double start, double end, double base) {
  T* o = reinterpret_cast<T*>(out.data());
  const int64_t steps = out.numel();
  parallel_for(0, steps, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = cast<T>(std::pow(base, linspace_value(start, end, steps, i)));
  });
}

}  // namespace ember::kernels::range
