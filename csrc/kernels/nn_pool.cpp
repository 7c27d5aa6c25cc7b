// Pooling windows over (planes, D, H, W) (see kernels/nn_pool.h); planes are split across threads.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>
#include "core/parallel.h"
#include "kernels/nn_pool.h"

namespace ember::kernels::nn_pool {
namespace {

template <class F>
void for_planes(const PoolGeometry& g, int64_t work_per_plane, F&& f) {
  parallel_for(0, g.planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work_per_plane, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) f(p);
               });
}

int64_t plane_in(const PoolGeometry& g) { return g.in[0] * g.in[1] * g.in[2]; }
int64_t plane_out(const PoolGeometry& g) { return g.out[0] * g.out[1] * g.out[2]; }
int64_t window_size(const PoolGeometry& g) { return g.k[0] * g.k[1] * g.k[2]; }

// One output's window: positions lo, lo + step, ... below hi along each of (D, H, W).
struct Box {
  int64_t lo[3], hi[3], step[3];
  int64_t divisor;  // average pools only
  bool empty() const { return lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]; }
};

// Calls f(output position, its window) for every output of a plane, in order.
template <class WindowOf, class F>
void for_windows(const PoolGeometry& g, WindowOf&& window_of, F&& f) {
  int64_t o = 0;
  for (int64_t oz = 0; oz < g.out[0]; ++oz)
    for (int64_t oy = 0; oy < g.out[1]; ++oy)
      for (int64_t ox = 0; ox < g.out[2]; ++ox) f(o++, window_of(oz, oy, ox));
}

// Calls f(flat in-plane position) for every element of a window, in order.
template <class F>
void for_box(const PoolGeometry& g, const Box& b, F&& f) {
  for (int64_t z = b.lo[0]; z < b.hi[0]; z += b.step[0])
    for (int64_t y = b.lo[1]; y < b.hi[1]; y += b.step[1])
      for (int64_t x = b.lo[2]; x < b.hi[2]; x += b.step[2]) f((z * g.in[1] + y) * g.in[2] + x);
}

// Max pooling's dilated window, its padded start stepped into the image.
Box max_window(const PoolGeometry& g, const int64_t (&o)[3]) {
  Box b;
  for (int i = 0; i < 3; ++i) {
    int64_t lo = o[i] * g.s[i] - g.p[i];
    b.hi[i] = std::min(lo + (g.k[i] - 1) * g.d[i] + 1, g.in[i]);
    while (lo < 0) lo += g.d[i];
    b.lo[i] = lo, b.step[i] = g.d[i];
  }
  return b;
}

// Average pooling's window clipped to the image, and the divisor torch uses.
Box avg_window(const PoolGeometry& g, const int64_t (&o)[3], bool count_include_pad, int64_t divisor) {
  Box b;
  int64_t padded = 1, inside = 1;
  for (int i = 0; i < 3; ++i) {
    const int64_t lo = o[i] * g.s[i] - g.p[i], hi = std::min(lo + g.k[i], g.in[i] + g.p[i]);
    padded *= hi - lo;
    b.lo[i] = std::max<int64_t>(lo, 0), b.hi[i] = std::min(hi, g.in[i]), b.step[i] = 1;
    inside *= std::max<int64_t>(b.hi[i] - b.lo[i], 0);
  }
  b.divisor = divisor ? divisor : count_include_pad ? padded : inside;
  return b;
}

Box adaptive_window(const PoolGeometry& g, const int64_t (&o)[3]) {
  Box b;
  b.divisor = 1;
  for (int i = 0; i < 3; ++i) {
    b.lo[i] = (o[i] * g.in[i]) / g.out[i];
    b.hi[i] = ((o[i] + 1) * g.in[i] + g.out[i] - 1) / g.out[i];
    b.step[i] = 1;
    b.divisor *= b.hi[i] - b.lo[i];
  }
  return b;
}

// Integers sum in uint64_t so that overflow wraps (see Note in kernels/math.h's spirit:
// integer arithmetic wraps, never traps) and divide as int64_t, truncating.
template <class T>
using Sum = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;

template <class T>
T mean_of(Sum<T> s, int64_t n) {
  if constexpr (std::is_integral_v<T>)
    return T(static_cast<int64_t>(s) / n);
  else
    return s / T(n);
}

// The best of a window as torch's CPU kernels pick it: strictly larger values replace,
// a NaN always does; the index starts at the window's first element.
template <class T>
struct Best {
  T value = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  int64_t index;
  void see(T v, int64_t i) {
    if (v > value || v != v) value = v, index = i;
  }
};

template <class T, class WindowOf>
void max_over_windows(const T* in, T* out, int64_t* indices, const PoolGeometry& g, int64_t work_per_plane,
                      WindowOf window_of) {
  for_planes(g, work_per_plane, [&](int64_t p) {
    const T* x = in + p * plane_in(g);
    T* y = out + p * plane_out(g);
    int64_t* idx = indices + p * plane_out(g);
    for_windows(g, window_of, [&](int64_t o, const Box& b) {
      Best<T> best;
      best.index = (b.lo[0] * g.in[1] + b.lo[1]) * g.in[2] + b.lo[2];
      for_box(g, b, [&](int64_t i) { best.see(x[i], i); });
      y[o] = best.value;
      idx[o] = best.index;
    });
  });
}

template <class T, class WindowOf>
void mean_over_windows(const T* in, T* out, const PoolGeometry& g, int64_t work_per_plane, WindowOf window_of) {
  for_planes(g, work_per_plane, [&](int64_t p) {
    const T* x = in + p * plane_in(g);
    T* y = out + p * plane_out(g);
    for_windows(g, window_of, [&](int64_t o, const Box& b) {
      if (b.empty()) {
        y[o] = T(0);
        return;
      }
      Sum<T> s = 0;
      for_box(g, b, [&](int64_t i) { s += static_cast<Sum<T>>(x[i]); });
      y[o] = mean_of<T>(s, b.divisor);
    });
  });
}

// The adjoint of mean_over_windows: each output's gradient spread evenly over its window.
template <class T, class WindowOf>
void spread_over_windows(const T* grad, T* gin, const PoolGeometry& g, int64_t work_per_plane, WindowOf window_of) {
  for_planes(g, work_per_plane, [&](int64_t p) {
    const T* gy = grad + p * plane_out(g);
    T* gx = gin + p * plane_in(g);
    std::fill(gx, gx + plane_in(g), T(0));
    for_windows(g, window_of, [&](int64_t o, const Box& b) {
      if (b.empty()) return;
      const T v = gy[o] / T(b.divisor);
      for_box(g, b, [&](int64_t i) { gx[i] += v; });
    });
  });
}

// ---- channels last: planes are samples of `channels` innermost channels ----

// The running maxima (and their positions) of C channels, updated with position i's run
// of values: selects, not branches, so that the loop vectorizes.
template <class T>
void best_of_run(const T* __restrict xi, int64_t i, T* __restrict yo, int64_t* __restrict io, int64_t C) {
  for (int64_t c = 0; c < C; ++c) {
    const T v = xi[c];
    const bool take = v > yo[c] || v != v;
    yo[c] = take ? v : yo[c];
    io[c] = take ? i : io[c];
  }
}

template <class T, class WindowOf>
void max_over_windows_cl(const T* in, T* out, int64_t* indices, const PoolGeometry& g, int64_t work_per_plane,
                         WindowOf window_of) {
  const int64_t C = g.channels;
  for_planes(g, work_per_plane * C, [&](int64_t p) {
    const T* x = in + p * plane_in(g) * C;
    T* y = out + p * plane_out(g) * C;
    int64_t* idx = indices + p * plane_out(g) * C;
    for_windows(g, window_of, [&](int64_t o, const Box& b) {
      T* yo = y + o * C;
      int64_t* io = idx + o * C;
      std::fill(yo, yo + C, Best<T>().value);
      std::fill(io, io + C, (b.lo[0] * g.in[1] + b.lo[1]) * g.in[2] + b.lo[2]);
      for_box(g, b, [&](int64_t i) { best_of_run(x + i * C, i, yo, io, C); });
    });
  });
}

template <class T, class WindowOf>
void mean_over_windows_cl(const T* in, T* out, const PoolGeometry& g, int64_t work_per_plane, WindowOf window_of) {
  const int64_t C = g.channels;
  for_planes(g, work_per_plane * C, [&](int64_t p) {
    const T* x = in + p * plane_in(g) * C;
    T* y = out + p * plane_out(g) * C;
    std::vector<Sum<T>> s(static_cast<size_t>(C));
    for_windows(g, window_of, [&](int64_t o, const Box& b) {
      T* yo = y + o * C;
      if (b.empty()) {
        std::fill(yo, yo + C, T(0));
        return;
      }
      std::fill(s.begin(), s.end(), Sum<T>(0));
      for_box(g, b, [&](int64_t i) {
        const T* xi = x + i * C;
        for (int64_t c = 0; c < C; ++c) s[c] += static_cast<Sum<T>>(xi[c]);
      });
      for (int64_t c = 0; c < C; ++c) yo[c] = mean_of<T>(s[c], b.divisor);
    });
  });
}

template <class T, class WindowOf>
void spread_over_windows_cl(const T* grad, T* gin, const PoolGeometry& g, int64_t work_per_plane,
                            WindowOf window_of) {
  const int64_t C = g.channels;
  for_planes(g, work_per_plane * C, [&](int64_t p) {
    const T* gy = grad + p * plane_out(g) * C;
    T* gx = gin + p * plane_in(g) * C;
    std::fill(gx, gx + plane_in(g) * C, T(0));
    std::vector<T> v(static_cast<size_t>(C));
    for_windows(g, window_of, [&](int64_t o, const Box& b) {
      if (b.empty()) return;
      for (int64_t c = 0; c < C; ++c) v[c] = gy[o * C + c] / T(b.divisor);
      for_box(g, b, [&](int64_t i) {
        T* xi = gx + i * C;
        for (int64_t c = 0; c < C; ++c) xi[c] += v[c];
      });
    });
  });
}

// The kernels below pick the layout's walk.
template <class T, class WindowOf>
void max_pool_any(const T* in, T* out, int64_t* indices, const PoolGeometry& g, int64_t work, WindowOf w) {
  if (g.channels_last) max_over_windows_cl(in, out, indices, g, work, w);
  else max_over_windows(in, out, indices, g, work, w);
}
template <class T, class WindowOf>
void mean_any(const T* in, T* out, const PoolGeometry& g, int64_t work, WindowOf w) {
  if (g.channels_last) mean_over_windows_cl(in, out, g, work, w);
  else mean_over_windows(in, out, g, work, w);
}
template <class T, class WindowOf>
void spread_any(const T* grad, T* gin, const PoolGeometry& g, int64_t work, WindowOf w) {
  if (g.channels_last) spread_over_windows_cl(grad, gin, g, work, w);
  else spread_over_windows(grad, gin, g, work, w);
}

}  // namespace

template <class T>
void Kernels<T>::max_pool(const T* in, T* out, int64_t* indices, const PoolGeometry& g) {
  max_pool_any(in, out, indices, g, plane_out(g) * window_size(g),
                   [&](int64_t z, int64_t y, int64_t x) { return max_window(g, {z, y, x}); });
}

template <class T>
void Kernels<T>::avg_pool(const T* in, T* out, const PoolGeometry& g, bool count_include_pad, int64_t divisor) {
  mean_any(in, out, g, plane_out(g) * window_size(g), [&](int64_t z, int64_t y, int64_t x) {
    return avg_window(g, {z, y, x}, count_include_pad, divisor);
  });
}

template <class T>
void Kernels<T>::avg_pool_backward(const T* grad, T* gin, const PoolGeometry& g, bool count_include_pad,
                                   int64_t divisor) {
  spread_any(grad, gin, g, plane_out(g) * window_size(g), [&](int64_t z, int64_t y, int64_t x) {
    return avg_window(g, {z, y, x}, count_include_pad, divisor);
  });
}

template <class T>
void Kernels<T>::adaptive_avg_pool(const T* in, T* out, const PoolGeometry& g) {
  mean_any(in, out, g, plane_in(g) + plane_out(g),
                    [&](int64_t z, int64_t y, int64_t x) { return adaptive_window(g, {z, y, x}); });
}

template <class T>
void Kernels<T>::adaptive_avg_pool_backward(const T* grad, T* gin, const PoolGeometry& g) {
  spread_any(grad, gin, g, plane_in(g) + plane_out(g),
                      [&](int64_t z, int64_t y, int64_t x) { return adaptive_window(g, {z, y, x}); });
}

template <class T>
void Kernels<T>::adaptive_max_pool(const T* in, T* out, int64_t* indices, const PoolGeometry& g) {
  max_pool_any(in, out, indices, g, plane_in(g) + plane_out(g),
                   [&](int64_t z, int64_t y, int64_t x) { return adaptive_window(g, {z, y, x}); });
}

// torch max-pools every integer type and average-pools int64 (ops/nn_pool.cpp decides
// which op takes which); the float family's generated list gives float and double.
template struct Kernels<int64_t>;
template struct Kernels<int32_t>;
template struct Kernels<int16_t>;
template struct Kernels<int8_t>;
template struct Kernels<uint8_t>;

}  // namespace ember::kernels::nn_pool

#include "kernel_instances_nn_pool.h"  // generated: Kernels<float>, Kernels<double>
