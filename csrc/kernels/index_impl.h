#pragma once
#include <vector>
#include "kernels/index.h"

namespace ember::kernels::index {

inline int64_t element_offset(const IndexLoop& il, char* const* p, const int64_t* s, int64_t i) {
  int64_t off = 0;
  for (int k = 0; k < il.nindex; ++k) {
    int64_t v = at<int64_t>(p[2 + k], s[2 + k], i);
    const int64_t size = il.sizes[k];
    EMBER_CHECK(v >= -size && v < size, Index, "index ", v, " is out of bounds for dimension with size ", size);
    if (v < 0) v += size;
    off += v * il.strides[k];
  }
  return off;
}

template <class T>
void Kernels<T>::gather(const IndexLoop& il) {
  run_loop(il.loop, [&il](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = element_offset(il, p, s, i);
      at<T>(p[0], s[0], i) = *reinterpret_cast<const T*>(p[1] + i * s[1] + off);
    }
  });
}

template <class T>
void Kernels<T>::put(const IndexLoop& il, bool accumulate) {
  auto body = [&il, accumulate](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = element_offset(il, p, s, i);
      T& dst = *reinterpret_cast<T*>(p[1] + i * s[1] + off);
      if (accumulate) {
        using C = compute_t<T>;
        if constexpr (std::is_same_v<T, bool>) dst = dst || at<T>(p[0], s[0], i);
        else dst = cast<T>(static_cast<C>(dst) + static_cast<C>(at<T>(p[0], s[0], i)));
      } else {
        dst = at<T>(p[0], s[0], i);
      }
    }
  };
  // Repeated indices add up one after another: no threads when accumulating.
  run_loop(il.loop, body, accumulate ? il.loop.numel : kGrainSize);
}

template <class T>
Tensor Kernels<T>::nonzero(const Tensor& self) {
  // Row-major order over the logical indices, whatever the strides.
  const int64_t nd = self.dim(), total = self.numel();
  std::vector<int64_t> coords;
  std::vector<int64_t> idx(nd, 0);
  const char* base = self.data();
  const int64_t isz = sizeof(T);
  for (int64_t e = 0; e < total; ++e) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd; ++d) off += idx[d] * self.strides()[d];
    const T v = *reinterpret_cast<const T*>(base + off * isz);
    if (static_cast<compute_t<T>>(v) != compute_t<T>(0)) coords.insert(coords.end(), idx.begin(), idx.end());
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < self.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  int64_t rows;
  if (nd == 0) {  // a 0-dim tensor: one row of no coordinates when it is nonzero
    const T v = *reinterpret_cast<const T*>(base);
    rows = static_cast<compute_t<T>>(v) != compute_t<T>(0) ? 1 : 0;
  } else {
    rows = static_cast<int64_t>(coords.size()) / nd;
  }
  Tensor out = empty_tensor({rows, nd}, ScalarType::Int64, "nonzero");
  if (!coords.empty()) std::copy(coords.begin(), coords.end(), reinterpret_cast<int64_t*>(out.data()));
  return out;
}

}  // namespace ember::kernels::index
