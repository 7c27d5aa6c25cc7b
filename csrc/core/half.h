// float16 and bfloat16 storage types. They compute in float32 (see Note [Half types
// compute in float]) and round to nearest even when stored.
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ember {

// Note [Half types compute in float]
// Half and BFloat16 are storage formats only: every kernel reads them as float
// (through compute_t<T>, dtype.h) and writes back with one rounding.

inline uint16_t float_to_half_bits(float f) {
#if defined(__F16C__)
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: inf
  if (ax < 0x38800000u) {  // half subnormal or zero: let the float adder round at 2^-24
    float af;
    std::memcpy(&af, &ax, 4);
    af += 0.5f;
    uint32_t r;
    std::memcpy(&r, &af, 4);
    return sign | (r - 0x3f000000u);
  }
  ax += 0xc8000fffu + ((ax >> 13) & 1u);  // rebias exponent by -112, round to nearest even
  return sign | (ax >> 13);
#endif
}

inline float half_bits_to_float(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0) {
    float f = std::ldexp(float(mant), -24);
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
#endif
}

inline uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t(((x >> 16) & 0x8000u) | 0x7fc0u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

inline float bfloat16_bits_to_float(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float out;
  std::memcpy(&out, &x, 4);
  return out;
}

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(float_to_half_bits(f)) {}
  operator float() const { return half_bits_to_float(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(float_to_bfloat16_bits(f)) {}
  operator float() const { return bfloat16_bits_to_float(bits); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "half types are two bytes");

}  // namespace ember
