// bfloat16 products on bfloat16 instructions: the path choice, the packing, the blocking
// and threading, the float32 -> bfloat16 epilogue, and the emulated instructions.
// gemm_bf16_avx512.cpp and gemm_bf16_amx.cpp hold the two hardware blocks.
#include "kernels/gemm_bf16.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "core/parallel.h"
#include "kernels/gemm_bf16_impl.h"

// Note [bf16 kernels under target pragmas]
// One build carries the AVX512-BF16 and AMX kernels whatever -march says (EMBER_MARCH=
// x86-64-v3 included): their two files start with `#pragma GCC target(...)` and the
// choice is made at run time, from cpuid. Those files include only <immintrin.h>, the C
// headers and gemm_bf16.h / gemm_bf16_impl.h, whose code is all static or in an anonymous
// namespace. An inline or template function with external linkage (anything of std::, or
// an ember header's) instantiated there would be compiled with AVX-512 instructions, and
// the linker keeps one copy of such a function for the whole program: possibly that one,
// and then an AVX2 machine dies of SIGILL far from any bfloat16 product. Everything that
// needs the standard library or ember's core (threads, errors, rounding) lives here,
// compiled with the normal flags.

namespace ember::kernels::gemm_bf16 {
namespace {

// ---------------------------------------------------------------- emulated instructions

// The instructions' operand reads and results: denormals are zero, outputs flush to zero,
// each addition rounds to nearest even (a product of two bfloat16 is exact in float32).
float bf16_in(uint16_t h) {
  if ((h & 0x7f80u) == 0) h &= 0x8000u;
  return bfloat16_bits_to_float(h);
}
float flush(float f) { return std::fabs(f) < FLT_MIN ? std::copysign(0.0f, f) : f; }

// vdpbf16ps, per float32 lane j (Intel SDM): acc += a.hi * b[j].hi, then acc += a.lo * b[j].lo.
struct EmulatedDp {
  struct Vec {
    float v[16];
  };
  struct Pairs {
    uint16_t h[32];
  };
  static Vec zero() { return Vec{}; }
  static Vec load(const float* p) {
    Vec r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static void store(float* p, const Vec& v) { std::memcpy(p, v.v, sizeof v.v); }
  static Pairs load_pairs(const uint16_t* p) {
    Pairs r;
    std::memcpy(r.h, p, sizeof r.h);
    return r;
  }
  static Vec dp(Vec acc, uint32_t a_pair, const Pairs& b) {
    const float a_lo = bf16_in(uint16_t(a_pair)), a_hi = bf16_in(uint16_t(a_pair >> 16));
    for (int j = 0; j < 16; ++j) {
      acc.v[j] = flush(acc.v[j] + a_hi * bf16_in(b.h[2 * j + 1]));
      acc.v[j] = flush(acc.v[j] + a_lo * bf16_in(b.h[2 * j]));
    }
    return acc;
  }
};

// Tile registers, as a thread's state: tileloadd / tilestored move `rows` rows of `colsb`
// bytes, `stride` bytes apart in memory; tdpbf16ps follows the SDM's loops.
struct Tile {
  int rows = 0, colsb = 0;
  uint32_t w[256] = {};  // 16 rows x 64 bytes
};
struct TileFile {
  Tile t[8];
};
thread_local TileFile* tmm_file = nullptr;  // between configure() and release(); a pointer:
                                            // 8 KB of thread_local exhausts dlopen's static TLS

void tileloadd(Tile& t, const void* base, int64_t stride) {
  for (int r = 0; r < t.rows; ++r) std::memcpy(t.w + r * 16, static_cast<const char*>(base) + r * stride, t.colsb);
}
void tilestored(const Tile& t, void* base, int64_t stride) {
  for (int r = 0; r < t.rows; ++r) std::memcpy(static_cast<char*>(base) + r * stride, t.w + r * 16, t.colsb);
}
float lane_f32(uint32_t w) {
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
uint32_t f32_lane(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}
// dst[m][n] += a[m][2k] * b[k][2n], then += a[m][2k+1] * b[k][2n+1], for k, then n.
void tdpbf16ps(Tile& dst, const Tile& a, const Tile& b) {
  for (int m = 0; m < dst.rows; ++m) {
    for (int k = 0; k < a.colsb / 4; ++k) {
      const uint32_t ap = a.w[m * 16 + k];
      const float a0 = bf16_in(uint16_t(ap)), a1 = bf16_in(uint16_t(ap >> 16));
      for (int n = 0; n < dst.colsb / 4; ++n) {
        const uint32_t bp = b.w[k * 16 + n];
        float acc = lane_f32(dst.w[m * 16 + n]);
        acc = flush(acc + a0 * bf16_in(uint16_t(bp)));
        acc = flush(acc + a1 * bf16_in(uint16_t(bp >> 16)));
        dst.w[m * 16 + n] = f32_lane(acc);
      }
    }
  }
}

struct EmulatedAmx {
  static void configure() {
    if (!tmm_file) tmm_file = new TileFile;
    for (Tile& t : tmm_file->t) {
      t.rows = 16;
      t.colsb = 64;
    }
  }
  static void release() {
    delete tmm_file;
    tmm_file = nullptr;
  }
  static void zero_c() {
    for (int t = 0; t < 4; ++t) std::fill(std::begin(tmm_file->t[t].w), std::end(tmm_file->t[t].w), 0u);
  }
  static void load_c(const float* c, int64_t ldc) {
    tileloadd(tmm_file->t[0], c, ldc * 4);
    tileloadd(tmm_file->t[1], c + 16, ldc * 4);
    tileloadd(tmm_file->t[2], c + 16 * ldc, ldc * 4);
    tileloadd(tmm_file->t[3], c + 16 * ldc + 16, ldc * 4);
  }
  static void store_c(float* c, int64_t ldc) {
    tilestored(tmm_file->t[0], c, ldc * 4);
    tilestored(tmm_file->t[1], c + 16, ldc * 4);
    tilestored(tmm_file->t[2], c + 16 * ldc, ldc * 4);
    tilestored(tmm_file->t[3], c + 16 * ldc + 16, ldc * 4);
  }
  static void step(const uint16_t* a, int64_t lda, const uint16_t* b) {
    tileloadd(tmm_file->t[4], a, lda * 2);
    tileloadd(tmm_file->t[5], a + 16 * lda, lda * 2);
    tileloadd(tmm_file->t[6], b, kPanel * 4);
    tileloadd(tmm_file->t[7], b + 32, kPanel * 4);
    tdpbf16ps(tmm_file->t[0], tmm_file->t[4], tmm_file->t[6]);
    tdpbf16ps(tmm_file->t[1], tmm_file->t[4], tmm_file->t[7]);
    tdpbf16ps(tmm_file->t[2], tmm_file->t[5], tmm_file->t[6]);
    tdpbf16ps(tmm_file->t[3], tmm_file->t[5], tmm_file->t[7]);
  }
};

void block_emulated(const Block& blk) { dp_block<EmulatedDp>(blk); }
void block_emulated_amx(const Block& blk) { amx_block<EmulatedAmx>(blk); }

// ---------------------------------------------------------------- path choice

const char* const kNames[] = {"convert", "emulated", "emulated_amx", "avx512_bf16", "amx"};

bool has_avx512_bf16() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  return yes;
}

// AMX-BF16 in cpuid, and Linux's permission to use the tile data (once per process).
bool has_amx() {
  static const bool yes = [] {
    if (!has_avx512_bf16() || !__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-bf16"))
      return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return yes;
}

bool available(Path p) {
  if (p == Path::Avx512Bf16) return has_avx512_bf16();
  if (p == Path::Amx) return has_amx();
  return true;
}

int parse(const char* name) {  // -1: automatic, -2: unknown
  const std::string s = name ? name : "";
  if (s.empty() || s == "auto") return -1;
  for (int i = 0; i < 5; ++i)
    if (s == kNames[i]) return i;
  return -2;
}

std::atomic<int> g_forced{-3};  // -3: not read yet; else parse()'s value

int forced() {
  int f = g_forced.load(std::memory_order_acquire);
  if (f == -3) {
    int expected = -3;
    g_forced.compare_exchange_strong(expected, parse(std::getenv("EMBER_BF16_GEMM")));
    f = g_forced.load(std::memory_order_acquire);
  }
  return f;
}

Path automatic() {
  if (has_amx()) return Path::Amx;
  if (has_avx512_bf16()) return Path::Avx512Bf16;
  return Path::Convert;
}

// ---------------------------------------------------------------- the driver

// Note [Pair-interleaved panels]
// B is packed in panels of kPanel = 32 columns; a panel holds, for each pair of k rows
// (k padded with zero rows), its 32 columns as two bfloat16 each (row 2p, then 2p+1),
// columns past n zero. That is vdpbf16ps's operand (16 columns = one zmm) and AMX's B
// tile (16 pairs x 16 columns = 16 rows of 64 bytes). A is packed row-major, k padded
// with zeros (to 32 for AMX, whose A tile is 16 rows x 32 k; its rows to 32 too).
constexpr int64_t kBlockRows = 96;  // C block: 8 vdpbf16ps tiles of 12 rows, 3 x 32 for AMX
constexpr int64_t kBlockCols = 256;  // 8 panels
constexpr int64_t kBlockK = 256;     // a panel's 256 k: 16 KB, in L1 while A's rows pass

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Offsets -> index of the first entry with that offset (expanded batches packed once).
std::vector<int64_t> unique_entries(const int64_t* off, int64_t batch, std::vector<int64_t>& first) {
  std::vector<int64_t> index(static_cast<size_t>(batch));
  std::unordered_map<int64_t, int64_t> seen;
  for (int64_t e = 0; e < batch; ++e) {
    auto it = seen.emplace(off[e], static_cast<int64_t>(first.size()));
    if (it.second) first.push_back(e);
    index[e] = it.first->second;
  }
  return index;
}

// Splits [0, count) over the pool with about `work` multiply-adds per item.
template <class F>
void parallel_items(int64_t count, int64_t work, F&& fn) {
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(work, 1));
  parallel_for(0, count, grain, fn);
}

}  // namespace

Path path() {
  const int f = forced();
  EMBER_CHECK(f != -2, Value, "bfloat16 products: EMBER_BF16_GEMM=", std::getenv("EMBER_BF16_GEMM"),
              " is not one of auto, amx, avx512_bf16, emulated, emulated_amx, convert");
  const Path p = f >= 0 ? static_cast<Path>(f) : automatic();
  EMBER_CHECK(available(p), Runtime, "bfloat16 products: the ", kNames[static_cast<int>(p)],
              " path was forced, but this CPU lacks its instructions (",
              p == Path::Amx ? "AMX-BF16, or Linux's permission for AMX tiles" : "AVX512-BF16", ")");
  return p;
}

void set_path(const char* name) {
  const int f = parse(name);
  EMBER_CHECK(f != -2, Value, "_set_bf16_gemm_path(): expected one of auto, amx, avx512_bf16, emulated, ",
              "emulated_amx, convert, got '", name, "'");
  g_forced.store(f, std::memory_order_release);
}

const char* path_name() {
  const int f = forced();
  if (f == -2) return "invalid";
  return kNames[static_cast<int>(f >= 0 ? static_cast<Path>(f) : automatic())];
}

void gemm(const Args& g, Path p) {
  EMBER_CHECK(p != Path::Convert && available(p), Runtime, "bfloat16 products: no kernel for the ",
              kNames[static_cast<int>(p)], " path here");
  const bool amx = p == Path::Amx || p == Path::EmulatedAmx;
  void (*block)(const Block&) = p == Path::Amx          ? block_amx
                                : p == Path::Avx512Bf16 ? block_avx512_bf16
                                : p == Path::EmulatedAmx ? block_emulated_amx
                                                         : block_emulated;
  const int64_t m = g.m, n = g.n, k = g.k;
  const int64_t kp = round_up(k, amx ? 32 : 2), mp = round_up(m, amx ? 32 : 1);
  const int64_t panels = (n + kPanel - 1) / kPanel, panel_size = kp * kPanel;

  std::vector<int64_t> a_first, b_first;
  const std::vector<int64_t> a_index = unique_entries(g.a_off, g.batch, a_first);
  const std::vector<int64_t> b_index = unique_entries(g.b_off, g.batch, b_first);
  // written whole below (padding included): no zero-initialization first
  const std::unique_ptr<uint16_t[]> pa(new uint16_t[a_first.size() * mp * kp]),
      pb(new uint16_t[b_first.size() * panels * panel_size]);

  // A: rows of kp, zeros past k and past m.
  const int64_t a_rows = static_cast<int64_t>(a_first.size()) * mp;
  parallel_items(a_rows, kp, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t e = r / mp, i = r % mp;
      uint16_t* dst = pa.get() + r * kp;
      std::fill(dst, dst + kp, uint16_t(0));
      if (i >= m) continue;
      const auto* src = reinterpret_cast<const uint16_t*>(g.a + g.a_off[a_first[e]]) + i * g.a_rs;
      if (g.a_cs == 1) std::memcpy(dst, src, static_cast<size_t>(k) * 2);
      else
        for (int64_t x = 0; x < k; ++x) dst[x] = src[x * g.a_cs];
    }
  });
  // B: See Note [Pair-interleaved panels].
  const int64_t b_panels = static_cast<int64_t>(b_first.size()) * panels;
  parallel_items(b_panels, panel_size, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t e = q / panels, j0 = (q % panels) * kPanel, cols = std::min(kPanel, n - j0);
      uint16_t* dst = pb.get() + q * panel_size;
      std::fill(dst, dst + panel_size, uint16_t(0));
      const auto* src = reinterpret_cast<const uint16_t*>(g.b + g.b_off[b_first[e]]) + j0 * g.b_cs;
      for (int64_t x = 0; x < k; ++x) {
        const uint16_t* row = src + x * g.b_rs;
        uint16_t* out = dst + (x / 2) * 2 * kPanel + (x & 1);
        for (int64_t c = 0; c < cols; ++c) out[2 * c] = row[c * g.b_cs];
      }
    }
  });

  // C: blocks of kBlockRows x kBlockCols accumulated in float32 over all of k, then
  // alpha, beta and one rounding (to nearest even), as the float32 path rounds.
  const int64_t row_blocks = (m + kBlockRows - 1) / kBlockRows, col_blocks = (n + kBlockCols - 1) / kBlockCols;
  const bool read_c = g.beta != 0;
  parallel_items(g.batch * row_blocks * col_blocks, kBlockRows * kBlockCols * kp, [&](int64_t t0, int64_t t1) {
    std::vector<float> acc(static_cast<size_t>(kBlockRows * kBlockCols));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t e = t / (row_blocks * col_blocks), i0 = (t / col_blocks) % row_blocks * kBlockRows,
                    j0 = t % col_blocks * kBlockCols;
      const int64_t rows = std::min(kBlockRows, m - i0), cols = std::min(kBlockCols, n - j0);
      Block blk;
      blk.a = pa.get() + (a_index[e] * mp + i0) * kp;
      blk.lda = kp;
      blk.panels = (cols + kPanel - 1) / kPanel;
      blk.panel_stride = panel_size;
      blk.c = acc.data();
      blk.ldc = kBlockCols;
      blk.rows = rows;
      for (int64_t kb = 0; kb < kp; kb += kBlockK) {
        blk.b = pb.get() + (b_index[e] * panels + j0 / kPanel) * panel_size + kb * kPanel;
        blk.k = std::min(kBlockK, kp - kb);
        blk.accumulate = kb > 0;
        block(blk);
        blk.a += kBlockK;
      }
      auto* c = reinterpret_cast<uint16_t*>(g.c + g.c_off[e]) + i0 * g.c_rs + j0 * g.c_cs;
      for (int64_t i = 0; i < rows; ++i) {
        const float* src = acc.data() + i * kBlockCols;
        uint16_t* dst = c + i * g.c_rs;
        for (int64_t j = 0; j < cols; ++j) {
          float v = g.alpha * src[j];
          if (read_c) v += g.beta * bfloat16_bits_to_float(dst[j * g.c_cs]);
          dst[j * g.c_cs] = float_to_bfloat16_bits(v);
        }
      }
    }
  });
}

}  // namespace ember::kernels::gemm_bf16
