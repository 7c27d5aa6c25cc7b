// Pooling windows over (planes, H, W) (see kernels/nn_pool.h); planes are split across threads.
#include <algorithm>
#include <cmath>
#include <limits>
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

inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// The best of a window as torch's CPU kernels pick it: strictly larger values replace,
// a NaN always does; the index starts at the window's first element.
template <class T>
struct Best {
  T value = -std::numeric_limits<T>::infinity();
  int64_t index;
  void see(T v, int64_t i) {
    if (v > value || v != v) value = v, index = i;
  }
};

}  // namespace

template <class T>
void Kernels<T>::max_pool2d(const T* in, T* out, int64_t* indices, const PoolGeometry& g) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  for_planes(g, plane_out * g.kh * g.kw, [&](int64_t p) {
    const T* x = in + p * plane_in;
    T* y = out + p * plane_out;
    int64_t* idx = indices + p * plane_out;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      int64_t y0 = oy * g.sh - g.ph;
      const int64_t y1 = std::min(y0 + (g.kh - 1) * g.dh + 1, g.in_h);
      while (y0 < 0) y0 += g.dh;
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        int64_t x0 = ox * g.sw - g.pw;
        const int64_t x1 = std::min(x0 + (g.kw - 1) * g.dw + 1, g.in_w);
        while (x0 < 0) x0 += g.dw;
        Best<T> best;
        best.index = y0 * g.in_w + x0;
        for (int64_t iy = y0; iy < y1; iy += g.dh)
          for (int64_t ix = x0; ix < x1; ix += g.dw) best.see(x[iy * g.in_w + ix], iy * g.in_w + ix);
        y[oy * g.out_w + ox] = best.value;
        idx[oy * g.out_w + ox] = best.index;
      }
    }
  });
}

// The window of output (oy, ox) clipped to the image, and the divisor torch uses.
struct AvgWindow {
  int64_t y0, y1, x0, x1, divisor;
};

inline AvgWindow avg_window(const PoolGeometry& g, int64_t oy, int64_t ox, bool count_include_pad, int64_t divisor) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t y1 = std::min(y0 + g.kh, g.in_h + g.ph), x1 = std::min(x0 + g.kw, g.in_w + g.pw);
  const int64_t padded = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, g.in_h), x1 = std::min(x1, g.in_w);
  int64_t d = divisor ? divisor : count_include_pad ? padded : (y1 - y0) * (x1 - x0);
  return {y0, y1, x0, x1, d};
}

template <class T>
void Kernels<T>::avg_pool2d(const T* in, T* out, const PoolGeometry& g, bool count_include_pad, int64_t divisor) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  for_planes(g, plane_out * g.kh * g.kw, [&](int64_t p) {
    const T* x = in + p * plane_in;
    T* y = out + p * plane_out;
    for (int64_t oy = 0; oy < g.out_h; ++oy)
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        const AvgWindow w = avg_window(g, oy, ox, count_include_pad, divisor);
        if (w.y0 >= w.y1 || w.x0 >= w.x1) {
          y[oy * g.out_w + ox] = T(0);
          continue;
        }
        T s = 0;
        for (int64_t iy = w.y0; iy < w.y1; ++iy)
          for (int64_t ix = w.x0; ix < w.x1; ++ix) s += x[iy * g.in_w + ix];
        y[oy * g.out_w + ox] = s / T(w.divisor);
      }
  });
}

template <class T>
void Kernels<T>::avg_pool2d_backward(const T* grad, T* gin, const PoolGeometry& g, bool count_include_pad, int64_t divisor) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  for_planes(g, plane_out * g.kh * g.kw, [&](int64_t p) {
    const T* gy = grad + p * plane_out;
    T* gx = gin + p * plane_in;
    std::fill(gx, gx + plane_in, T(0));
    for (int64_t oy = 0; oy < g.out_h; ++oy)
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        const AvgWindow w = avg_window(g, oy, ox, count_include_pad, divisor);
        if (w.y0 >= w.y1 || w.x0 >= w.x1) continue;
        const T v = gy[oy * g.out_w + ox] / T(w.divisor);
        for (int64_t iy = w.y0; iy < w.y1; ++iy)
          for (int64_t ix = w.x0; ix < w.x1; ++ix) gx[iy * g.in_w + ix] += v;
      }
  });
}

template <class T>
void Kernels<T>::adaptive_avg_pool2d(const T* in, T* out, const PoolGeometry& g) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  for_planes(g, plane_in + plane_out, [&](int64_t p) {
    const T* x = in + p * plane_in;
    T* y = out + p * plane_out;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t y0 = adaptive_start(oy, g.in_h, g.out_h), y1 = adaptive_end(oy, g.in_h, g.out_h);
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        const int64_t x0 = adaptive_start(ox, g.in_w, g.out_w), x1 = adaptive_end(ox, g.in_w, g.out_w);
        T s = 0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) s += x[iy * g.in_w + ix];
        y[oy * g.out_w + ox] = s / T((y1 - y0) * (x1 - x0));
      }
    }
  });
}

template <class T>
void Kernels<T>::adaptive_avg_pool2d_backward(const T* grad, T* gin, const PoolGeometry& g) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  for_planes(g, plane_in + plane_out, [&](int64_t p) {
    const T* gy = grad + p * plane_out;
    T* gx = gin + p * plane_in;
    std::fill(gx, gx + plane_in, T(0));
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t y0 = adaptive_start(oy, g.in_h, g.out_h), y1 = adaptive_end(oy, g.in_h, g.out_h);
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        const int64_t x0 = adaptive_start(ox, g.in_w, g.out_w), x1 = adaptive_end(ox, g.in_w, g.out_w);
        const T v = gy[oy * g.out_w + ox] / T((y1 - y0) * (x1 - x0));
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) gx[iy * g.in_w + ix] += v;
      }
    }
  });
}

template <class T>
void Kernels<T>::adaptive_max_pool2d(const T* in, T* out, int64_t* indices, const PoolGeometry& g) {
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  for_planes(g, plane_in + plane_out, [&](int64_t p) {
    const T* x = in + p * plane_in;
    T* y = out + p * plane_out;
    int64_t* idx = indices + p * plane_out;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t y0 = adaptive_start(oy, g.in_h, g.out_h), y1 = adaptive_end(oy, g.in_h, g.out_h);
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        const int64_t x0 = adaptive_start(ox, g.in_w, g.out_w), x1 = adaptive_end(ox, g.in_w, g.out_w);
        Best<T> best;
        best.index = y0 * g.in_w + x0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) best.see(x[iy * g.in_w + ix], iy * g.in_w + ix);
        y[oy * g.out_w + ox] = best.value;
        idx[oy * g.out_w + ox] = best.index;
      }
    }
  });
}


}  // namespace ember::kernels::nn_pool

#include "kernel_instances_nn_pool.h"  // generated: Kernels<float>, Kernels<double>
