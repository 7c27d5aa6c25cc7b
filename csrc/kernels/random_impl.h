#pragma once
#include <mutex>
#include "kernels/loops.h"
#include "kernels/random.h"

namespace ember::kernels::random {

template <class T>
void Kernels<T>::uniform(const Tensor& out, double from, double to, GeneratorImpl& gen) {
  T* o = reinterpret_cast<T*>(out.data());
  const int64_t n = out.numel();
  const double range = to - from;
  std::lock_guard<std::mutex> lock(gen.mutex());
  if constexpr (std::is_same_v<T, double>) {
    for (int64_t i = 0; i < n; ++i) o[i] = from + range * gen.next_double();
  } else {
    for (int64_t i = 0; i < n; ++i) {
      // float draws; a value that rounds up to `to` is folded back to `from`
      float v = static_cast<float>(from + range * gen.next_float());
      T t = cast<T>(v);
      if (static_cast<double>(static_cast<compute_t<T>>(t)) >= to && to > from) t = cast<T>(from);
      o[i] = t;
    }
  }
}

template <class T>
void Kernels<T>::normal(const Tensor& out, double mean, double std, GeneratorImpl& gen) {
  T* o = reinterpret_cast<T*>(out.data());
  const int64_t n = out.numel();
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (int64_t i = 0; i < n; ++i) o[i] = cast<T>(mean + std * gen.next_normal());
}

template <class T>
void Kernels<T>::randint(const Tensor& out, int64_t low, int64_t high, GeneratorImpl& gen) {
  T* o = reinterpret_cast<T*>(out.data());
  const int64_t n = out.numel();
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (int64_t i = 0; i < n; ++i)
    o[i] = cast<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + gen.next_below(range)));
}

template <class T>
void Kernels<T>::bernoulli(const Tensor& out, double p, GeneratorImpl& gen) {
  T* o = reinterpret_cast<T*>(out.data());
  const int64_t n = out.numel();
  const T one = cast<T>(1), zero = cast<T>(0);
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (int64_t i = 0; i < n; ++i) o[i] = gen.next_double() < p ? one : zero;
}

template <class T>
void Kernels<T>::randperm(const Tensor& out, GeneratorImpl& gen) {
  T* o = reinterpret_cast<T*>(out.data());
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = cast<T>(i);
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    int64_t j = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(i) + 1));
    T tmp = o[i];
    o[i] = o[j];
    o[j] = tmp;
  }
}

template <class T>
void Kernels<T>::scale_shift(const Tensor& out, const Tensor& mean, const Tensor& std) {
  using C = compute_t<T>;
  run_loop(make_loop({&out, &mean, &std}), [](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      C z = static_cast<C>(at<T>(p[0], s[0], i));
      C sd = static_cast<C>(at<T>(p[2], s[2], i));
      EMBER_CHECK(sd >= C(0), Runtime, "normal expects all elements of std >= 0.0");
      at<T>(p[0], s[0], i) = cast<T>(static_cast<C>(at<T>(p[1], s[1], i)) + sd * z);
    }
  });
}

}  // namespace ember::kernels::random
