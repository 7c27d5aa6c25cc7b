#pragma once
#include <algorithm>
#include <cstring>
#include "kernels/copy.h"
#include "kernels/loops.h"
#include "kernels/transpose.h"

namespace ember::kernels::copy {

// A 2-D loop where one operand walks memory against the other's order (a transpose):
// copy it in square tiles so both sides stay in cache.
template <class Dst, class Src>
void copy_tiled(const Loop& loop) {
  constexpr int64_t kTile = 64;
  const int64_t cols = loop.shape[0], rows = loop.shape[1];
  const int64_t ds0 = loop.strides[0][0], ds1 = loop.strides[1][0];
  const int64_t ss0 = loop.strides[0][1], ss1 = loop.strides[1][1];
  char* const dst = loop.data[0];
  const char* const src = loop.data[1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  LongLoop long_loop(loop);
  parallel_for(0, row_tiles, std::max<int64_t>(1, kGrainSize / (kTile * cols)), [&](int64_t b, int64_t e) {
    for (int64_t rt = b; rt < e; ++rt) {
      const int64_t r0 = rt * kTile, r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          char* d = dst + r * ds1;
          const char* s = src + r * ss1;
          for (int64_t c = c0; c < c1; ++c)
            *reinterpret_cast<Dst*>(d + c * ds0) = cast<Dst>(load<Src>(s + c * ss0));
        }
      }
    }
  });
}

// n contiguous elements of Src converted to Dst: the contiguous runs' loop, and the
// converting transposes' (kernels/transpose.cpp) for each tile row.
template <class Dst, class Src>
[[gnu::noinline]] void convert_bytes(char* out, const char* in, int64_t n) {
  auto* d = reinterpret_cast<Dst*>(out);
  auto* x = reinterpret_cast<const Src*>(in);
  if constexpr (std::is_same_v<Dst, Src>) {
    std::memcpy(d, x, n * sizeof(Dst));
  } else if constexpr (std::is_same_v<Src, bool>) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(x);
    for (int64_t i = 0; i < n; ++i) d[i] = cast<Dst>(bytes[i] != 0);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = cast<Dst>(x[i]);
  }
}

template <class Dst, class Src>
void copy_typed(const Tensor& dst, const Tensor& src) {
  Loop loop = make_loop({&dst, &src});
  const bool transposing = loop.ndim >= 2 && loop.numel >= 4096 &&
                           (loop.strides[0][0] != int64_t(sizeof(Dst)) || loop.strides[0][1] != int64_t(sizeof(Src)));
  if (transposing) {  // one side along dim 0, the other along a later one: kernels/transpose.cpp
    const transpose::Convert convert = std::is_same_v<Dst, Src> ? nullptr : &convert_bytes<Dst, Src>;
    if (transpose::copy(loop, sizeof(Dst), sizeof(Src), convert)) return;
    if (loop.ndim == 2) return copy_tiled<Dst, Src>(loop);
  }
  run_loop(loop, [](char** p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(Dst)) && s[1] == int64_t(sizeof(Src))) {
      convert_bytes<Dst, Src>(p[0], p[1], n);
    } else if (s[1] == 0) {  // a broadcast scalar
      Dst v = cast<Dst>(load<Src>(p[1]));
      for (int64_t i = 0; i < n; ++i) at<Dst>(p[0], s[0], i) = v;
    } else {
      for (int64_t i = 0; i < n; ++i) at<Dst>(p[0], s[0], i) = cast<Dst>(load<Src>(p[1] + i * s[1]));
    }
  });
}

template <class Dst>
void Kernels<Dst>::copy(const Tensor& dst, const Tensor& src) {
  visit_any_dtype(src.dtype(), [&](auto tag) {
    using Src = typename decltype(tag)::type;
    copy_typed<Dst, Src>(dst, src);
  });
}

}  // namespace ember::kernels::copy
