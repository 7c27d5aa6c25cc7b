// The loops of one bfloat16 block (kernels/gemm_bf16.h, Block), written once over an ISA
// policy: gemm_bf16_avx512.cpp and gemm_bf16_amx.cpp instantiate them on the intrinsics,
// gemm_bf16.cpp on portable emulations of the same instructions (the "emulated" paths),
// so that every line but the policies' runs on any CPU. Everything here is in an
// anonymous namespace and includes nothing but <cstring>: each unit gets its own copy,
// compiled under its own target (Note [bf16 kernels under target pragmas]).
#pragma once
#include <cstdint>
#include <cstring>
#include "kernels/gemm_bf16.h"

namespace ember::kernels::gemm_bf16 {
namespace {

constexpr int64_t kPanel = 32;   // columns per packed B panel (two vectors / two tiles)
constexpr int kDpRows = 12;      // rows per vdpbf16ps tile: 24 accumulators of 32 registers

// Dp: Vec (16 float32), Pairs (16 columns x 2 bfloat16), zero(), load(const float*),
// store(float*, Vec), load_pairs(const uint16_t*), dp(Vec, uint32_t a_pair, Pairs): the
// vdpbf16ps of one broadcast pair of A against 16 columns of B.
template <class Dp, int R>
void dp_tile(const uint16_t* a, int64_t lda, const uint16_t* b, int64_t pairs, float* c, int64_t ldc,
             bool accumulate) {
  typename Dp::Vec acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) {
    acc0[r] = accumulate ? Dp::load(c + r * ldc) : Dp::zero();
    acc1[r] = accumulate ? Dp::load(c + r * ldc + 16) : Dp::zero();
  }
  for (int64_t p = 0; p < pairs; ++p) {
    const auto b0 = Dp::load_pairs(b + p * 2 * kPanel);
    const auto b1 = Dp::load_pairs(b + p * 2 * kPanel + 32);
    for (int r = 0; r < R; ++r) {
      uint32_t pair;
      std::memcpy(&pair, a + r * lda + 2 * p, 4);
      acc0[r] = Dp::dp(acc0[r], pair, b0);
      acc1[r] = Dp::dp(acc1[r], pair, b1);
    }
  }
  for (int r = 0; r < R; ++r) {
    Dp::store(c + r * ldc, acc0[r]);
    Dp::store(c + r * ldc + 16, acc1[r]);
  }
}

template <class Dp>
void dp_rows(int64_t rows, const uint16_t* a, int64_t lda, const uint16_t* b, int64_t pairs, float* c, int64_t ldc,
             bool accumulate) {
  switch (rows) {
    case 1: return dp_tile<Dp, 1>(a, lda, b, pairs, c, ldc, accumulate);
    case 2: return dp_tile<Dp, 2>(a, lda, b, pairs, c, ldc, accumulate);
    case 3: return dp_tile<Dp, 3>(a, lda, b, pairs, c, ldc, accumulate);
    case 4: return dp_tile<Dp, 4>(a, lda, b, pairs, c, ldc, accumulate);
    case 5: return dp_tile<Dp, 5>(a, lda, b, pairs, c, ldc, accumulate);
    case 6: return dp_tile<Dp, 6>(a, lda, b, pairs, c, ldc, accumulate);
    case 7: return dp_tile<Dp, 7>(a, lda, b, pairs, c, ldc, accumulate);
    case 8: return dp_tile<Dp, 8>(a, lda, b, pairs, c, ldc, accumulate);
    case 9: return dp_tile<Dp, 9>(a, lda, b, pairs, c, ldc, accumulate);
    case 10: return dp_tile<Dp, 10>(a, lda, b, pairs, c, ldc, accumulate);
    case 11: return dp_tile<Dp, 11>(a, lda, b, pairs, c, ldc, accumulate);
    default: return dp_tile<Dp, kDpRows>(a, lda, b, pairs, c, ldc, accumulate);
  }
}

// Each B panel (one L1's worth at the driver's block depth) against every row of A.
template <class Dp>
void dp_block(const Block& blk) {
  for (int64_t j = 0; j < blk.panels; ++j) {
    const uint16_t* b = blk.b + j * blk.panel_stride;
    for (int64_t i = 0; i < blk.rows; i += kDpRows) {
      const int64_t rows = blk.rows - i < kDpRows ? blk.rows - i : kDpRows;
      dp_rows<Dp>(rows, blk.a + i * blk.lda, blk.lda, b, blk.k / 2, blk.c + i * blk.ldc + j * kPanel, blk.ldc,
                  blk.accumulate);
    }
  }
}

// Tiles: configure() (palette 1, eight tiles of 16 rows x 64 bytes), release(),
// zero_c(), load_c(const float* c, ldc) / store_c(float* c, ldc) for the four C tiles of
// a 32 x 32 float32 block (tiles 0-3), step(a, lda, b): A rows 0-15 and 16-31 x 32 k
// (tiles 4, 5), B's 16 k pairs x columns 0-15 and 16-31 (tiles 6, 7; rows 2 * kPanel
// elements apart), then the four tdpbf16ps.
template <class Tiles>
void amx_block(const Block& blk) {
  Tiles::configure();
  for (int64_t j = 0; j < blk.panels; ++j) {
    const uint16_t* b = blk.b + j * blk.panel_stride;
    for (int64_t i = 0; i < blk.rows; i += 32) {  // rows past blk.rows: zeros of A's padding
      float* c = blk.c + i * blk.ldc + j * kPanel;
      if (blk.accumulate) Tiles::load_c(c, blk.ldc);
      else Tiles::zero_c();
      for (int64_t kk = 0; kk < blk.k; kk += 32) Tiles::step(blk.a + i * blk.lda + kk, blk.lda, b + kk * kPanel);
      Tiles::store_c(c, blk.ldc);
    }
  }
  Tiles::release();
}

}  // namespace
}  // namespace ember::kernels::gemm_bf16
