// The AMX block (tdpbf16ps on 2 x 2 float32 tiles). Only this policy differs from the
// emulated AMX path's. See Note [bf16 kernels under target pragmas] (gemm_bf16.cpp):
// nothing here but intrinsics, static code and gemm_bf16_impl.h's anonymous templates.
#pragma GCC target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16")
#include <immintrin.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_bf16_impl.h"

namespace ember::kernels::gemm_bf16 {
namespace {

struct TileConfig {  // the 64-byte operand of ldtilecfg
  uint8_t palette = 0, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads 64 bytes");

struct Amx {
  static void configure() {
    alignas(64) TileConfig cfg;
    cfg.palette = 1;
    for (int t = 0; t < 8; ++t) {
      cfg.rows[t] = 16;
      cfg.colsb[t] = 64;
    }
    _tile_loadconfig(&cfg);
  }
  static void release() { _tile_release(); }
  static void zero_c() {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  static void load_c(const float* c, int64_t ldc) {
    _tile_loadd(0, c, ldc * 4);
    _tile_loadd(1, c + 16, ldc * 4);
    _tile_loadd(2, c + 16 * ldc, ldc * 4);
    _tile_loadd(3, c + 16 * ldc + 16, ldc * 4);
  }
  static void store_c(float* c, int64_t ldc) {
    _tile_stored(0, c, ldc * 4);
    _tile_stored(1, c + 16, ldc * 4);
    _tile_stored(2, c + 16 * ldc, ldc * 4);
    _tile_stored(3, c + 16 * ldc + 16, ldc * 4);
  }
  static void step(const uint16_t* a, int64_t lda, const uint16_t* b) {
    _tile_loadd(4, a, lda * 2);
    _tile_loadd(5, a + 16 * lda, lda * 2);
    _tile_loadd(6, b, kPanel * 4);
    _tile_loadd(7, b + 32, kPanel * 4);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
};

}  // namespace

void block_amx(const Block& blk) { amx_block<Amx>(blk); }

}  // namespace ember::kernels::gemm_bf16
