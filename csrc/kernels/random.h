// Kernel family random: fills a contiguous tensor from a generator. Draws are
// sequential under the generator's lock so a seed gives one stream whatever the thread
// count (values need not match torch's; see csrc/core/generator.h).
#pragma once
#include "core/generator.h"
#include "core/tensor.h"

namespace ember::kernels::random {

template <class T>
struct Kernels {
  static void uniform(const Tensor& out, double from, double to, GeneratorImpl& gen);
  static void normal(const Tensor& out, double mean, double std, GeneratorImpl& gen);
  static void randint(const Tensor& out, int64_t low, int64_t high, GeneratorImpl& gen);
  static void randperm(const Tensor& out, GeneratorImpl& gen);
  // 1 where a float64 uniform draw is below p, else 0: one pass, the same draws (and so
  // the same values) as uniform_ into a float64 tensor compared with p
  static void bernoulli(const Tensor& out, double p, GeneratorImpl& gen);
  // out = mean + std * out, elementwise; mean and std already have out's dtype and shape.
  static void scale_shift(const Tensor& out, const Tensor& mean, const Tensor& std);
};

}  // namespace ember::kernels::random
