// The vdpbf16ps block (AVX512-BF16). Only this policy differs from the emulated path's.
// See Note [bf16 kernels under target pragmas] (gemm_bf16.cpp): nothing here but
// intrinsics, static code and gemm_bf16_impl.h's anonymous templates.
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512bf16")
#include <immintrin.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include "kernels/gemm_bf16.h"
#include "kernels/gemm_bf16_impl.h"

namespace ember::kernels::gemm_bf16 {
namespace {

struct Avx512Bf16 {
  using Vec = __m512;
  using Pairs = __m512bh;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Pairs load_pairs(const uint16_t* p) { return (Pairs)_mm512_loadu_si512(p); }
  static Vec dp(Vec acc, uint32_t a_pair, Pairs b) {
    return _mm512_dpbf16_ps(acc, (Pairs)_mm512_set1_epi32(static_cast<int>(a_pair)), b);
  }
};

}  // namespace

void block_avx512_bf16(const Block& blk) { dp_block<Avx512Bf16>(blk); }

}  // namespace ember::kernels::gemm_bf16
