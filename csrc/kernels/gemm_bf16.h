// bfloat16 products on the CPU's bfloat16 instructions (AMX tiles, AVX512-BF16's
// vdpbf16ps), accumulating in float32; see DESIGN.md (autocast and half products) and
// Note [bf16 kernels under target pragmas]. This header is included by the AVX-512 and
// AMX units, so it declares PODs and functions only: no inline code, no other header.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ember::kernels::gemm_bf16 {

// Which instructions compute bfloat16 products. Convert: both operands to float32 and
// sgemm (ops/linalg.cpp). Emulated / EmulatedAmx: the AVX512-BF16 / AMX drivers with
// the instruction replaced by portable code of its exact semantics, to test them on any
// CPU; never chosen automatically.
enum class Path { Convert, Emulated, EmulatedAmx, Avx512Bf16, Amx };

// C[e] = beta * C[e] + alpha * A[e] @ B[e] for e < batch, with A (m x k), B (k x n) and
// C (m x n) bfloat16 at byte offsets a_off[e], b_off[e], c_off[e] from a, b, c, element
// strides below. beta == 0 never reads C. k > 0.
struct Args {
  int64_t m = 0, n = 0, k = 0;
  const char *a = nullptr, *b = nullptr;
  char* c = nullptr;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, c_rs = 0, c_cs = 0;
  const int64_t *a_off = nullptr, *b_off = nullptr, *c_off = nullptr;
  int64_t batch = 0;
  float alpha = 1, beta = 0;
};

// The path products take: EMBER_BF16_GEMM (amx | avx512_bf16 | emulated | emulated_amx
// | convert), else the best the CPU has, read once. RuntimeError when the forced path
// needs instructions this CPU lacks.
Path path();
// Forces a path by name ("" or "auto": back to the environment variable / cpuid);
// ValueError for an unknown name. The name products take (or the forced one).
void set_path(const char* name);
const char* path_name();

// Runs the product on p, path()'s answer (not Convert).
void gemm(const Args& args, Path p);

// One block, the unit the hardware files compute: C (rows x 32 * panels, float32, row
// stride ldc) = (accumulate ? C : 0) + A @ B, where A is `rows` rows of packed bfloat16
// (row stride lda elements, k columns, k even; for AMX k is a multiple of 32 and A's and
// C's rows are read and written up to the next multiple of 32) and B is `panels` panels of 32 columns
// in pairs of k rows (see Note [Pair-interleaved panels], gemm_bf16.cpp), panel_stride
// elements apart, starting at the block's first k pair.
struct Block {
  const uint16_t* a = nullptr;
  int64_t lda = 0;
  const uint16_t* b = nullptr;
  int64_t panels = 0, panel_stride = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  int64_t rows = 0, k = 0;
  bool accumulate = false;
};
void block_avx512_bf16(const Block& blk);  // gemm_bf16_avx512.cpp
void block_amx(const Block& blk);          // gemm_bf16_amx.cpp

}  // namespace ember::kernels::gemm_bf16
