// im2col / col2im for convolution (see kernels/nn_conv.h). A range of output positions is
// walked output row by output row (a row: one (depth, height) pair of the output); within a
// row, stride 1 makes each kernel tap a contiguous copy of an image row, with zeros where
// the window hangs over the padding. The same walk serves 1-, 2- and 3-d convolutions.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>
#include "core/parallel.h"
#include "kernels/blas.h"
#include "kernels/nn_conv.h"

namespace ember::kernels::nn_conv {
// Named, not anonymous: Kernels<T>'s lambdas capture these types.
namespace detail {

// One image (C, D, H, W) and the column matrix of its windows.
struct ConvGeometry {
  int64_t channels;  // of the image (per group)
  int64_t depth, height, width;  // image
  int64_t kd, kh, kw;  // kernel
  int64_t sd, sh, sw, pd, ph, pw, dd, dh, dw;
  int64_t out_d, out_h, out_w;  // output positions
};

// For output columns ox in [x0, x1) of one output row and one kernel column j: the
// range [lo, hi) of ox whose image column ix = ox * sw - pw + j * dw lies inside the image.
inline void valid_columns(const ConvGeometry& g, int64_t j, int64_t x0, int64_t x1, int64_t* lo, int64_t* hi) {
  const int64_t off = j * g.dw - g.pw;  // ix = ox * sw + off
  // ix >= 0  <=>  ox >= ceil(-off / sw);  ix < width  <=>  ox < ceil((width - off) / sw)
  const int64_t first = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
  const int64_t end = g.width - off <= 0 ? 0 : (g.width - off + g.sw - 1) / g.sw;
  *lo = std::clamp(first, x0, x1);
  *hi = std::clamp(end, *lo, x1);
}

// The image row (iz * height + iy) that kernel tap (t, i) reads for output row r (= oz *
// out_h + oy), or -1 where it falls in the padding.
inline int64_t image_row(const ConvGeometry& g, int64_t r, int64_t t, int64_t i) {
  const int64_t oz = r / g.out_h, oy = r % g.out_h;
  const int64_t iz = oz * g.sd - g.pd + t * g.dd, iy = oy * g.sh - g.ph + i * g.dh;
  if (iz < 0 || iz >= g.depth || iy < 0 || iy >= g.height) return -1;
  return iz * g.height + iy;
}

// cols[((c * kd + t) * kh + i) * kw + j][p - p0] = image[c][oz * sd - pd + t * dd]
// [oy * sh - ph + i * dh][ox * sw - pw + j * dw] (0 outside) for output positions
// p = (oz * out_h + oy) * out_w + ox in [p0, p1); cols has p1 - p0 columns.
template <class T>
void im2col(const T* image, T* cols, const ConvGeometry& g, int64_t p0, int64_t p1) {
  const int64_t width = p1 - p0, plane_size = g.depth * g.height * g.width;
  for (int64_t c = 0; c < g.channels; ++c) {
    const T* plane = image + c * plane_size;
    for (int64_t t = 0; t < g.kd; ++t) {
      for (int64_t i = 0; i < g.kh; ++i) {
        for (int64_t j = 0; j < g.kw; ++j) {
          T* row = cols + (((c * g.kd + t) * g.kh + i) * g.kw + j) * width;
          int64_t p = p0;
          while (p < p1) {
            const int64_t r = p / g.out_w, x0 = p % g.out_w;
            const int64_t x1 = std::min(g.out_w, x0 + (p1 - p));
            T* dst = row + (p - p0) - x0;  // dst[ox] for ox in [x0, x1)
            const int64_t ir = image_row(g, r, t, i);
            if (ir < 0) {
              std::memset(dst + x0, 0, sizeof(T) * (x1 - x0));
            } else {
              int64_t lo, hi;
              valid_columns(g, j, x0, x1, &lo, &hi);
              for (int64_t ox = x0; ox < lo; ++ox) dst[ox] = T(0);
              const T* src = plane + ir * g.width + (j * g.dw - g.pw);  // src[ox * sw]
              if (g.sw == 1) {
                if (hi > lo) std::memcpy(dst + lo, src + lo, sizeof(T) * (hi - lo));
              } else {
                for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = src[ox * g.sw];
              }
              for (int64_t ox = hi; ox < x1; ++ox) dst[ox] = T(0);
            }
            p += x1 - x0;
          }
        }
      }
    }
  }
}

// The adjoint: image += cols scattered back (image must be zeroed by the caller).
template <class T>
void col2im(const T* cols, T* image, const ConvGeometry& g, int64_t p0, int64_t p1) {
  const int64_t width = p1 - p0, plane_size = g.depth * g.height * g.width;
  for (int64_t c = 0; c < g.channels; ++c) {
    T* plane = image + c * plane_size;
    for (int64_t t = 0; t < g.kd; ++t) {
      for (int64_t i = 0; i < g.kh; ++i) {
        for (int64_t j = 0; j < g.kw; ++j) {
          const T* row = cols + (((c * g.kd + t) * g.kh + i) * g.kw + j) * width;
          int64_t p = p0;
          while (p < p1) {
            const int64_t r = p / g.out_w, x0 = p % g.out_w;
            const int64_t x1 = std::min(g.out_w, x0 + (p1 - p));
            const T* src = row + (p - p0) - x0;
            const int64_t ir = image_row(g, r, t, i);
            if (ir >= 0) {
              int64_t lo, hi;
              valid_columns(g, j, x0, x1, &lo, &hi);
              T* dst = plane + ir * g.width + (j * g.dw - g.pw);
              if (g.sw == 1) {
                for (int64_t ox = lo; ox < hi; ++ox) dst[ox] += src[ox];
              } else {
                for (int64_t ox = lo; ox < hi; ++ox) dst[ox * g.sw] += src[ox];
              }
            }
            p += x1 - x0;
          }
        }
      }
    }
  }
}

// Channels last: the column matrix of positions [p0, p1) has a row per position of
// ((t * kh + i) * kw + j) * channels + c entries, image[oz * sd - pd + t * dd][oy * sh - ph +
// i * dh][ox * sw - pw + j * dw][coff + c] (0 outside), the image (D, H, W, ctot) with its
// group's channels at coff: one contiguous run of channels per kernel tap. Calls
// f(run, offset) for each run in order, offset the image element of its first channel or
// -1 in the padding.
template <class F>
void for_tap_runs(const ConvGeometry& g, int64_t ctot, int64_t coff, int64_t p0, int64_t p1, F&& f) {
  const int64_t plane = g.out_h * g.out_w;
  int64_t run = 0;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t oz = p / plane, oy = (p % plane) / g.out_w, ox = p % g.out_w;
    for (int64_t t = 0; t < g.kd; ++t) {
      const int64_t iz = oz * g.sd - g.pd + t * g.dd;
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t iy = oy * g.sh - g.ph + i * g.dh;
        for (int64_t j = 0; j < g.kw; ++j, ++run) {
          const int64_t ix = ox * g.sw - g.pw + j * g.dw;
          const bool outside = iz < 0 || iz >= g.depth || iy < 0 || iy >= g.height || ix < 0 || ix >= g.width;
          f(run * g.channels, outside ? -1 : ((iz * g.height + iy) * g.width + ix) * ctot + coff);
        }
      }
    }
  }
}

template <class T>
void im2col_nhwc(const T* image, T* cols, const ConvGeometry& g, int64_t ctot, int64_t coff, int64_t p0,
                 int64_t p1) {
  for_tap_runs(g, ctot, coff, p0, p1, [&](int64_t run, int64_t at) {
    if (at < 0) std::memset(cols + run, 0, sizeof(T) * g.channels);
    else std::memcpy(cols + run, image + at, sizeof(T) * g.channels);
  });
}

// Its adjoint: image += cols scattered back (image zeroed by the caller).
template <class T>
void col2im_nhwc(const T* cols, T* image, const ConvGeometry& g, int64_t ctot, int64_t coff, int64_t p0,
                 int64_t p1) {
  for_tap_runs(g, ctot, coff, p0, p1, [&](int64_t run, int64_t at) {
    if (at < 0) return;
    for (int64_t c = 0; c < g.channels; ++c) image[at + c] += cols[run + c];
  });
}

// C (m x n, ldc) = op(A) op(B) + beta C (beta 0 or 1), row-major, by plain loops, for the
// integer convolution (int64, wrapping around as torch's does: the arithmetic is unsigned).
inline void gemm_int(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const int64_t* a, int64_t lda,
                     const int64_t* b, int64_t ldb, int64_t beta, int64_t* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    uint64_t* row = reinterpret_cast<uint64_t*>(c + i * ldc);
    if (beta == 0) std::fill(row, row + n, uint64_t(0));
    for (int64_t p = 0; p < k; ++p) {
      const uint64_t av = uint64_t(ta ? a[p * lda + i] : a[i * lda + p]);
      if (tb) {
        for (int64_t j = 0; j < n; ++j) row[j] += av * uint64_t(b[j * ldb + p]);
      } else {
        const int64_t* br = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) row[j] += av * uint64_t(br[j]);
      }
    }
  }
}

// C (m x n, ldc) = alpha op(A) op(B) + beta C, row-major, on OpenBLAS (one thread).
template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
          T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_integral_v<T>) {
    gemm_int(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  } else {
    if (k == 0) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j] * beta;
      return;
    }
    using blas::blas_int;
    blas::routines<T>().gemm(blas::kRowMajor, ta ? blas::kTrans : blas::kNoTrans, tb ? blas::kTrans : blas::kNoTrans,
                             blas_int(m), blas_int(n), blas_int(k), T(1), a, blas_int(lda), b, blas_int(ldb), beta,
                             c, blas_int(ldc));
  }
}

// The column matrix of one block stays under this many bytes (it is written, then read
// at once by the gemm: both from cache).
constexpr int64_t kColumnBytes = int64_t(1) << 19;
constexpr int64_t kWorkPerItem = int64_t(1) << 18;  // multiply-adds: a work item at least

struct Plan {
  int64_t P, K, cxg, cyg;  // output positions, column rows (cxg * kernel taps), channels per group
  int64_t image;           // image elements per channel
  bool direct;             // 1x1, stride 1, no padding: the image is its own column matrix
  int64_t block, blocks;   // positions per block, blocks per sample
  ConvGeometry geometry;
};

template <class T>
Plan plan(const Conv& c) {
  Plan p;
  p.P = 1;
  p.image = 1;
  int64_t taps = 1;
  p.direct = true;
  for (int i = 0; i < kSpatial; ++i) {
    p.P *= c.ys[i];
    p.image *= c.xs[i];
    taps *= c.k[i];
    p.direct = p.direct && c.k[i] == 1 && c.s[i] == 1 && c.p[i] == 0 && c.xs[i] == c.ys[i];
  }
  p.cxg = c.Cx / c.groups;
  p.cyg = c.Cy / c.groups;
  p.K = p.cxg * taps;
  p.block = std::clamp<int64_t>(kColumnBytes / std::max<int64_t>(1, p.K * int64_t(sizeof(T))), 32,
                                std::max<int64_t>(p.P, 1));
  p.blocks = p.P ? (p.P + p.block - 1) / p.block : 0;
  p.geometry = ConvGeometry{p.cxg,   c.xs[0], c.xs[1], c.xs[2], c.k[0],  c.k[1],  c.k[2],  c.s[0],
                            c.s[1],  c.s[2],  c.p[0],  c.p[1],  c.p[2],  c.d[0],  c.d[1],  c.d[2],
                            c.ys[0], c.ys[1], c.ys[2]};
  return p;
}

int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kWorkPerItem / std::max<int64_t>(1, work_per_item));
}

}  // namespace detail

using namespace detail;

// ---- channels last ----

template <class T>
void forward_nhwc(const Conv& c, const Plan& p, const T* x, const T* w, const T* b, T* y) {
  const int64_t items = c.N * p.blocks;
  parallel_for(0, items, grain_for(c.Cy * p.K * p.block), [&](int64_t begin, int64_t end) {
    std::vector<T> cols(p.direct ? 0 : p.K * p.block);
    for (int64_t it = begin; it < end; ++it) {
      const int64_t n = it / p.blocks, p0 = (it % p.blocks) * p.block, p1 = std::min(p.P, p0 + p.block);
      const T* xn = x + n * p.image * c.Cx;
      for (int64_t g = 0; g < c.groups; ++g) {
        const T* A = xn + p0 * c.Cx + g * p.cxg;  // direct: the positions' channels are the columns
        int64_t lda = c.Cx;
        if (!p.direct) {
          im2col_nhwc(xn, cols.data(), p.geometry, c.Cx, g * p.cxg, p0, p1);
          A = cols.data();
          lda = p.K;
        }
        gemm<T>(false, true, p1 - p0, p.cyg, p.K, A, lda, w + g * p.cyg * p.K, p.K, T(0),
                y + (n * p.P + p0) * c.Cy + g * p.cyg, c.Cy);
      }
      if (b)
        for (int64_t q = p0; q < p1; ++q) {
          T* yr = y + (n * p.P + q) * c.Cy;
          for (int64_t co = 0; co < c.Cy; ++co) yr[co] += b[co];
        }
    }
  });
}

template <class T>
void backward_input_nhwc(const Conv& c, const Plan& p, const T* y, const T* w, const T* b, T* x) {
  parallel_for(0, c.N, grain_for(c.groups * p.cyg * p.K * p.P), [&](int64_t begin, int64_t end) {
    std::vector<T> cols(p.direct ? 0 : p.K * p.block);
    for (int64_t n = begin; n < end; ++n) {
      T* xn = x + n * p.image * c.Cx;
      const T* yn = y + n * p.P * c.Cy;
      if (!p.direct) std::fill(xn, xn + p.image * c.Cx, T(0));
      for (int64_t g = 0; g < c.groups; ++g) {
        const T* wg = w + g * p.cyg * p.K;
        if (p.direct) {
          gemm<T>(false, false, p.P, p.cxg, p.cyg, yn + g * p.cyg, c.Cy, wg, p.K, T(0), xn + g * p.cxg, c.Cx);
          continue;
        }
        for (int64_t p0 = 0; p0 < p.P; p0 += p.block) {
          const int64_t p1 = std::min(p.P, p0 + p.block);
          gemm<T>(false, false, p1 - p0, p.K, p.cyg, yn + p0 * c.Cy + g * p.cyg, c.Cy, wg, p.K, T(0), cols.data(),
                  p.K);
          col2im_nhwc(cols.data(), xn, p.geometry, c.Cx, g * p.cxg, p0, p1);
        }
      }
      if (b)
        for (int64_t q = 0; q < p.image; ++q) {
          T* xr = xn + q * c.Cx;
          for (int64_t ci = 0; ci < c.Cx; ++ci) xr[ci] += b[ci];
        }
    }
  });
}

template <class T>
void Kernels<T>::conv_forward(const Conv& c, const T* x, const T* w, const T* b, T* y) {
  const Plan p = plan<T>(c);
  if (c.channels_last) {
    if (c.N > 0 && p.P > 0) forward_nhwc(c, p, x, w, b, y);
    return;
  }
  if (c.N == 0 || p.P == 0) return;
  const int64_t items = c.N * p.blocks;
  parallel_for(0, items, grain_for(c.Cy * p.K * p.block), [&](int64_t begin, int64_t end) {
    std::vector<T> cols(p.direct ? 0 : p.K * p.block);
    for (int64_t it = begin; it < end; ++it) {
      const int64_t n = it / p.blocks, p0 = (it % p.blocks) * p.block, p1 = std::min(p.P, p0 + p.block);
      for (int64_t g = 0; g < c.groups; ++g) {
        const T* xg = x + (n * c.Cx + g * p.cxg) * p.image;
        const T* B = xg + p0;
        int64_t ldb = p.P;
        if (!p.direct) {
          im2col(xg, cols.data(), p.geometry, p0, p1);
          B = cols.data();
          ldb = p1 - p0;
        }
        gemm<T>(false, false, p.cyg, p1 - p0, p.K, w + g * p.cyg * p.K, p.K, B, ldb, T(0),
                y + (n * c.Cy + g * p.cyg) * p.P + p0, p.P);
      }
      if (b)
        for (int64_t co = 0; co < c.Cy; ++co) {
          T* yr = y + (n * c.Cy + co) * p.P;
          for (int64_t q = p0; q < p1; ++q) yr[q] += b[co];
        }
    }
  });
}

template <class T>
void Kernels<T>::conv_backward_input(const Conv& c, const T* y, const T* w, const T* b, T* x) {
  const Plan p = plan<T>(c);
  const int64_t image = p.image;
  if (c.N == 0 || image == 0) return;
  if (c.channels_last) return backward_input_nhwc(c, p, y, w, b, x);
  parallel_for(0, c.N * c.groups, grain_for(p.cyg * p.K * p.P), [&](int64_t begin, int64_t end) {
    std::vector<T> cols(p.direct ? 0 : p.K * p.block);
    for (int64_t it = begin; it < end; ++it) {
      const int64_t n = it / c.groups, g = it % c.groups;
      T* xg = x + (n * c.Cx + g * p.cxg) * image;
      const T* yg = y + (n * c.Cy + g * p.cyg) * p.P;
      const T* wg = w + g * p.cyg * p.K;
      if (p.direct) {
        gemm<T>(true, false, p.K, p.P, p.cyg, wg, p.K, yg, p.P, T(0), xg, p.P);
      } else {
        std::fill(xg, xg + p.cxg * image, T(0));
        for (int64_t p0 = 0; p0 < p.P; p0 += p.block) {
          const int64_t p1 = std::min(p.P, p0 + p.block);
          gemm<T>(true, false, p.K, p1 - p0, p.cyg, wg, p.K, yg + p0, p.P, T(0), cols.data(), p1 - p0);
          col2im(cols.data(), xg, p.geometry, p0, p1);
        }
      }
      if (b)
        for (int64_t k = 0; k < p.cxg; ++k) {
          T* xr = xg + k * image;
          const T v = b[g * p.cxg + k];
          for (int64_t q = 0; q < image; ++q) xr[q] += v;
        }
    }
  });
}

// w = the sum over the (sample, position block) items of add(acc, n, p0, p1, cols), which
// adds one item's product into acc: the items are split across threads, each adding into
// a partial of its own (slot 0 into w itself), summed at the end.
template <class T, class Add>
void sum_weight_grad(const Conv& c, const Plan& p, T* w, const Add& add) {
  const int64_t size = c.Cy * p.K;
  std::fill(w, w + size, T(0));
  const int64_t items = c.N * p.blocks;
  if (items == 0) return;
  const int64_t per_item = c.Cy * p.K * p.block;
  int64_t slots = std::min<int64_t>(get_num_threads(), items);
  if (items * per_item < 2 * kWorkPerItem) slots = 1;
  std::vector<T> partial(size_t(slots - 1) * size, T(0));
  parallel_for(0, slots, 1, [&](int64_t s0, int64_t s1) {
    std::vector<T> cols(p.direct ? 0 : p.K * p.block);
    for (int64_t s = s0; s < s1; ++s) {
      T* acc = s == 0 ? w : partial.data() + (s - 1) * size;
      for (int64_t it = items * s / slots; it < items * (s + 1) / slots; ++it) {
        const int64_t n = it / p.blocks, p0 = (it % p.blocks) * p.block, p1 = std::min(p.P, p0 + p.block);
        add(acc, n, p0, p1, cols.data());
      }
    }
  });
  for (int64_t s = 1; s < slots; ++s) {
    const T* part = partial.data() + (s - 1) * size;
    for (int64_t i = 0; i < size; ++i) w[i] += part[i];
  }
}

template <class T>
void Kernels<T>::conv_backward_weight(const Conv& c, const T* x, const T* y, T* w) {
  const Plan p = plan<T>(c);
  if (c.channels_last) {
    sum_weight_grad<T>(c, p, w, [&](T* acc, int64_t n, int64_t p0, int64_t p1, T* cols) {
      const T* xn = x + n * p.image * c.Cx;
      for (int64_t g = 0; g < c.groups; ++g) {
        const T* A = xn + p0 * c.Cx + g * p.cxg;
        int64_t lda = c.Cx;
        if (!p.direct) {
          im2col_nhwc(xn, cols, p.geometry, c.Cx, g * p.cxg, p0, p1);
          A = cols;
          lda = p.K;
        }
        gemm<T>(true, false, p.cyg, p.K, p1 - p0, y + (n * p.P + p0) * c.Cy + g * p.cyg, c.Cy, A, lda, T(1),
                acc + g * p.cyg * p.K, p.K);
      }
    });
    return;
  }
  sum_weight_grad<T>(c, p, w, [&](T* acc, int64_t n, int64_t p0, int64_t p1, T* cols) {
    for (int64_t g = 0; g < c.groups; ++g) {
      const T* xg = x + (n * c.Cx + g * p.cxg) * p.image;
      const T* B = xg + p0;
      int64_t ldb = p.P;
      if (!p.direct) {
        im2col(xg, cols, p.geometry, p0, p1);
        B = cols;
        ldb = p1 - p0;
      }
      gemm<T>(false, true, p.cyg, p.K, p1 - p0, y + (n * c.Cy + g * p.cyg) * p.P + p0, p.P, B, ldb, T(1),
              acc + g * p.cyg * p.K, p.K);
    }
  });
}


}  // namespace ember::kernels::nn_conv

#include "kernel_instances_nn_conv.h"  // generated: Kernels<float>, Kernels<double>
// integer convolutions compute in int64 (ops/nn_conv.cpp)
template struct ember::kernels::nn_conv::Kernels<int64_t>;
