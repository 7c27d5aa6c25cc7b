// Transposing copies (kernels/transpose.h). The plain tiled loop read its strided side one
// element at a time, and its 64 tile rows, 2^k bytes apart, fell into the same cache sets:
// a 2048x2048 float32 .t().contiguous() took 15.8 ms (torch 7.1). Here a 64x64 tile moves
// as blocks transposed in registers: 8x8 of 2 bytes (SSE2, every x86-64 CPU), 8x8 of 4
// bytes and 4x4 of 8 (AVX2, chosen from cpuid); 1- and 16-byte elements, the tiles' edges
// and CPUs without AVX2 move element by element in 16x16 sub-tiles. A converting copy
// first converts each tile's rows, contiguous, into a buffer of the output type (the
// family's contiguous loop), then moves the buffer the same way.
#include "kernels/transpose.h"

#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include "core/parallel.h"

namespace ember::kernels::transpose {
namespace {

// d[j][i] = s[i][j] for i < rows, j < cols; strides in bytes between rows.
template <size_t N>
void block_scalar(char* d, int64_t ds, const char* s, int64_t ss, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i) std::memcpy(d + j * ds + i * N, s + i * ss + j * N, N);
    }
}

// The parts of a call outside its whole B x B blocks (rb rows and cb columns of them): the
// rows past rb, all columns, and the columns past cb of the first rb rows.
template <size_t N>
void edges(char* d, int64_t ds, const char* s, int64_t ss, int64_t rows, int64_t cols, int64_t rb, int64_t cb) {
  if (rb < rows) block_scalar<N>(d + rb * N, ds, s + rb * ss, ss, rows - rb, cols);
  if (cb < cols) block_scalar<N>(d + cb * ds, ds, s + cb * N, ss, rb, cols - cb);
}

// 2-byte elements in 8x8 blocks of SSE2 registers (every x86-64 CPU has it).
void block_sse2_2(char* d, int64_t ds, const char* s, int64_t ss, int64_t rows, int64_t cols) {
  const int64_t r8 = rows & ~int64_t(7), c8 = cols & ~int64_t(7);
  for (int64_t i = 0; i < r8; i += 8)
    for (int64_t j = 0; j < c8; j += 8) {
      const char* p = s + i * ss + j * 2;
      __m128i a[8], b[8], c[8];
      for (int k = 0; k < 8; ++k) a[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k * ss));
      for (int k = 0; k < 8; k += 2) {
        b[k] = _mm_unpacklo_epi16(a[k], a[k + 1]);
        b[k + 1] = _mm_unpackhi_epi16(a[k], a[k + 1]);
      }
      for (int k = 0; k < 8; k += 4) {
        c[k] = _mm_unpacklo_epi32(b[k], b[k + 2]);
        c[k + 1] = _mm_unpackhi_epi32(b[k], b[k + 2]);
        c[k + 2] = _mm_unpacklo_epi32(b[k + 1], b[k + 3]);
        c[k + 3] = _mm_unpackhi_epi32(b[k + 1], b[k + 3]);
      }
      char* q = d + j * ds + i * 2;
      for (int k = 0; k < 4; ++k) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 2 * k * ds), _mm_unpacklo_epi64(c[k], c[k + 4]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + (2 * k + 1) * ds), _mm_unpackhi_epi64(c[k], c[k + 4]));
      }
    }
  edges<2>(d, ds, s, ss, rows, cols, r8, c8);
}

__attribute__((target("avx2"))) void block_avx2_4(char* d, int64_t ds, const char* s, int64_t ss, int64_t rows,
                                                   int64_t cols) {
  const int64_t r8 = rows & ~int64_t(7), c8 = cols & ~int64_t(7);
  for (int64_t i = 0; i < r8; i += 8)
    for (int64_t j = 0; j < c8; j += 8) {
      const char* p = s + i * ss + j * 4;
      __m256 r[8], t[8], u[8];
      for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(p + k * ss));
      for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
      }
      for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
      }
      char* q = d + j * ds + i * 4;
      for (int k = 0; k < 4; ++k) {
        _mm256_storeu_ps(reinterpret_cast<float*>(q + k * ds), _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
        _mm256_storeu_ps(reinterpret_cast<float*>(q + (k + 4) * ds), _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
      }
    }
  edges<4>(d, ds, s, ss, rows, cols, r8, c8);
}

__attribute__((target("avx2"))) void block_avx2_8(char* d, int64_t ds, const char* s, int64_t ss, int64_t rows,
                                                   int64_t cols) {
  const int64_t r4 = rows & ~int64_t(3), c4 = cols & ~int64_t(3);
  for (int64_t i = 0; i < r4; i += 4)
    for (int64_t j = 0; j < c4; j += 4) {
      const char* p = s + i * ss + j * 8;
      const __m256d r0 = _mm256_loadu_pd(reinterpret_cast<const double*>(p));
      const __m256d r1 = _mm256_loadu_pd(reinterpret_cast<const double*>(p + ss));
      const __m256d r2 = _mm256_loadu_pd(reinterpret_cast<const double*>(p + 2 * ss));
      const __m256d r3 = _mm256_loadu_pd(reinterpret_cast<const double*>(p + 3 * ss));
      const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
      const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      char* q = d + j * ds + i * 8;
      _mm256_storeu_pd(reinterpret_cast<double*>(q), _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(reinterpret_cast<double*>(q + ds), _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(reinterpret_cast<double*>(q + 2 * ds), _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(reinterpret_cast<double*>(q + 3 * ds), _mm256_permute2f128_pd(t1, t3, 0x31));
    }
  edges<8>(d, ds, s, ss, rows, cols, r4, c4);
}

using Block = void (*)(char*, int64_t, const char*, int64_t, int64_t, int64_t);

Block block_for(size_t size) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  switch (size) {
    case 1: return &block_scalar<1>;
    case 2: return &block_sse2_2;
    case 4: return avx2 ? &block_avx2_4 : &block_scalar<4>;
    case 8: return avx2 ? &block_avx2_8 : &block_scalar<8>;
    case 16: return &block_scalar<16>;
    default: return nullptr;
  }
}

}  // namespace

bool copy(const Loop& loop, size_t dst_size, size_t src_size, Convert convert) {
  if (loop.ndim < 2 || (!convert && dst_size != src_size)) return false;
  const int64_t dn = int64_t(dst_size), sn = int64_t(src_size);
  // d[j][i] = s[i][j]: s's rows run along dim `along`, d's along dim `other`; the loop's
  // other dims (a batch of matrices: NCHW -> NHWC, q.transpose(-1, -2)) are looped over
  int along = -1, other = -1;
  if (loop.strides[0][0] == dn && loop.strides[0][1] != 0) {  // d contiguous along dim 0, s along a later
    // one (not a broadcast along dim 0: the plain loop fills those runs)
    other = 0;
    for (int k = 1; k < loop.ndim && along < 0; ++k)
      if (loop.strides[k][1] == sn) along = k;
  } else if (loop.strides[0][1] == sn) {  // s contiguous along dim 0, d along a later one
    along = 0;
    for (int k = 1; k < loop.ndim && other < 0; ++k)
      if (loop.strides[k][0] == dn) other = k;
  }
  if (along < 0 || other < 0) return false;
  constexpr int64_t kTile = 64;
  const Block block = block_for(dst_size);
  if (!block || (convert && dst_size > 8)) return false;  // a tile's buffer: at most 32 KiB
  const int64_t rows = loop.shape[other], cols = loop.shape[along];  // of s
  const int64_t ss = loop.strides[other][1], ds = loop.strides[along][0];
  int batch_dims[kMaxLoopDims];
  int nbatch = 0;
  int64_t batches = 1;
  for (int k = 0; k < loop.ndim; ++k)
    if (k != along && k != other) {
      batch_dims[nbatch++] = k;
      batches *= loop.shape[k];
    }
  const int64_t tiles = (rows + kTile - 1) / kTile;
  LongLoop long_loop(loop);
  parallel_for(0, batches * tiles, std::max<int64_t>(1, kGrainSize / (kTile * cols)), [&](int64_t b, int64_t e) {
    alignas(64) char buffer[kTile * kTile * 8];
    for (int64_t u = b; u < e; ++u) {
      const int64_t t = u % tiles;
      int64_t rest = u / tiles;
      char* d = loop.data[0];
      const char* s = loop.data[1];
      for (int q = 0; q < nbatch; ++q) {  // the batch index, dim by dim
        const int k = batch_dims[q];
        const int64_t at = rest % loop.shape[k];
        rest /= loop.shape[k];
        d += at * loop.strides[k][0];
        s += at * loop.strides[k][1];
      }
      const int64_t i0 = t * kTile, i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        if (!convert) {
          block(d + j0 * ds + i0 * dn, ds, s + i0 * ss + j0 * sn, ss, i1 - i0, j1 - j0);
          continue;
        }
        for (int64_t i = i0; i < i1; ++i) convert(buffer + (i - i0) * kTile * dn, s + i * ss + j0 * sn, j1 - j0);
        block(d + j0 * ds + i0 * dn, ds, buffer, kTile * dn, i1 - i0, j1 - j0);
      }
    }
  });
  return true;
}

}  // namespace ember::kernels::transpose
