// Elementwise maps over a Loop whose operand 0 is the output: out = f(in1, ...), with
// the inputs read as In and converted to In's compute type (half types compute in
// float), the result stored as Out. Contiguous runs take a plain indexed loop the
// compiler vectorizes; a broadcast second input (stride 0, as in x * 2) is read once.
//
// Note [A local copy of the functor]
// Each run works on a copy of the functor. Read through a reference, a functor's fields
// (masked_fill's value, lerp's weight) might alias the output, so gcc reloads them after
// every store and, where the read is conditional, gives up vectorizing: masked_fill ran
// a branch per element, 4x slower than the copy's vectorized select.
#pragma once
#include <algorithm>
#include <cstring>
#include "core/dtype.h"
#include "core/half.h"
#include "core/scalar.h"
#include "kernels/loops.h"

namespace ember::kernels {

template <class T>
inline T* typed(char* p) {
  return reinterpret_cast<T*>(p);
}

// Note [Half types in blocks]
// A float16/bfloat16 map whose output has the input's type runs over its contiguous runs
// in blocks of kHalfBlock: the inputs converted to float with vector instructions (F16C's
// vcvtph2ps; a 16-bit shift for bfloat16), f over float arrays (the float32 loop), the
// results rounded back to nearest even the same way. Element by element, gcc cannot
// vectorize the scalar conversions and float16 ran 4x slower than float32.
// The blocks' converters read only the m <= kHalfBlock entries written before them, which
// gcc 12 cannot see through the inlining (1056 false -Wmaybe-uninitialized warnings).
// The converters stay out of line (one call per block): inlined at every map's call site
// they were a third of a dtype's binary kernels to compile (bfloat16: 21 -> 15 s).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline constexpr int64_t kHalfBlock = 256;
template <class T>
inline constexpr bool is_half_type_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

[[gnu::noinline]] inline void to_float(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#endif
  for (; i < n; ++i) out[i] = float(in[i]);
}

[[gnu::noinline]] inline void from_float(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) out[i] = Half(in[i]);
}

// The bits move through memcpy: written through a uint32_t pointer, the floats were
// another type's stores to gcc, which then read the buffer before them (strict aliasing;
// a bfloat16 var() gave inf).
[[gnu::noinline]] inline void to_float(const BFloat16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t v = uint32_t(in[i].bits) << 16;
    std::memcpy(out + i, &v, 4);
  }
}

// float_to_bfloat16_bits without a branch, so the loop vectorizes: NaN keeps its sign
// and becomes the quiet 0x7fc0 payload, everything else rounds to nearest even.
[[gnu::noinline]] inline void from_float(const float* in, BFloat16* out, int64_t n) {
  uint16_t* o = reinterpret_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t v;
    std::memcpy(&v, in + i, 4);
    const uint32_t rounded = (v + 0x7fffu + ((v >> 16) & 1u)) >> 16;
    const uint32_t nan = ((v >> 16) & 0x8000u) | 0x7fc0u;
    o[i] = uint16_t((v & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}
// Note [Rare lanes]
// A unary functor with `static constexpr bool rare_lanes = true` computes most inputs
// with a vectorized formula, operator(), but some (`rare(x)`: float sin of |x| > 2^18,
// whose reduction would lose digits) with a scalar one, `slow(x)` (libm). Contiguous
// runs go in blocks of 256: one vectorized pass tells whether any input of the block is
// rare, and only such blocks run element by element. Reading before writing each
// element keeps it right in place.
// A functor may add a middle tier, `wide(x)` (true where operator() would be wrong:
// float sin/cos beyond |x| = 4096) with a vectorized `wide_value(x)` (the double
// reduction, right to 2^18): the same pass tells it, and a block with wide lanes but no
// rare ones runs wide_value vectorized.
template <class F, class = void>
struct has_rare_lanes : std::false_type {};
template <class F>
struct has_rare_lanes<F, std::void_t<decltype(F::rare_lanes)>> : std::bool_constant<F::rare_lanes> {};
template <class F, class = void>
struct has_wide_lanes : std::false_type {};
template <class F>
struct has_wide_lanes<F, std::void_t<decltype(F::wide_lanes)>> : std::bool_constant<F::wide_lanes> {};

// One element of a functor with rare (and maybe wide) lanes, whichever tier it is in.
template <class F, class C>
inline C tiered(const F& f, C x) {
  if (f.rare(x)) return f.slow(x);
  if constexpr (has_wide_lanes<F>::value) {
    if (f.wide(x)) return f.wide_value(x);
  }
  return f(x);
}

template <class Out, class In, class F>
void map1(const Loop& loop, const F& f) {
  using C = compute_t<In>;
  run_loop(loop, [&f_ref = f](char** p, const int64_t* s, int64_t n) {
    const F f = f_ref;  // See Note [A local copy of the functor]
    if constexpr (has_rare_lanes<F>::value) {  // See Note [Rare lanes]
      if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(In))) {
        Out* o = typed<Out>(p[0]);
        const In* a = typed<const In>(p[1]);
        constexpr int64_t kBlock = 256;
        for (int64_t b = 0; b < n; b += kBlock) {
          const int64_t m = n - b < kBlock ? n - b : kBlock;
          Out* ob = o + b;
          const In* ab = a + b;
          int any = 0, wide = 0;
          if constexpr (has_wide_lanes<F>::value) {
            for (int64_t i = 0; i < m; ++i) {
              any |= int(f.rare(C(ab[i])));
              wide |= int(f.wide(C(ab[i])));
            }
          } else {
            for (int64_t i = 0; i < m; ++i) any |= int(f.rare(C(ab[i])));
          }
          if (!any && !wide) {
            for (int64_t i = 0; i < m; ++i) ob[i] = cast<Out>(f(C(ab[i])));
          } else if constexpr (has_wide_lanes<F>::value) {
            if (!any) {
              for (int64_t i = 0; i < m; ++i) ob[i] = cast<Out>(f.wide_value(C(ab[i])));
            } else {
              for (int64_t i = 0; i < m; ++i) ob[i] = cast<Out>(tiered(f, C(ab[i])));
            }
          } else {
            for (int64_t i = 0; i < m; ++i) ob[i] = cast<Out>(tiered(f, C(ab[i])));
          }
        }
      } else {
        for (int64_t i = 0; i < n; ++i)
          at<Out>(p[0], s[0], i) = cast<Out>(tiered(f, C(load<In>(p[1] + i * s[1]))));
      }
      return;
    }
    if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(In)) && !std::is_same_v<In, bool>) {
      Out* o = typed<Out>(p[0]);
      const In* a = typed<const In>(p[1]);
      if constexpr (is_half_type_v<In> && std::is_same_v<Out, In>) {  // Note [Half types in blocks]
        float x[kHalfBlock], r[kHalfBlock];
        for (int64_t i0 = 0; i0 < n; i0 += kHalfBlock) {
          const int64_t m = std::min(kHalfBlock, n - i0);
          to_float(a + i0, x, m);
          for (int64_t i = 0; i < m; ++i) r[i] = float(f(x[i]));
          from_float(r, o + i0, m);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) o[i] = cast<Out>(f(C(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) at<Out>(p[0], s[0], i) = cast<Out>(f(C(load<In>(p[1] + i * s[1]))));
    }
  });
}

template <class Out, class In, class F>
void map2(const Loop& loop, const F& f) {
  using C = compute_t<In>;
  constexpr int64_t so = sizeof(Out), si = sizeof(In);
  run_loop(loop, [&f_ref = f](char** p, const int64_t* s, int64_t n) {
    const F f = f_ref;  // See Note [A local copy of the functor]
    if constexpr (!std::is_same_v<In, bool>) {
      Out* o = typed<Out>(p[0]);
      const In* a = typed<const In>(p[1]);
      const In* b = typed<const In>(p[2]);
      if constexpr (is_half_type_v<In> && std::is_same_v<Out, In>) {  // Note [Half types in blocks]
        if (s[0] == so && (s[1] == si || s[1] == 0) && (s[2] == si || s[2] == 0)) {
          float x[kHalfBlock], y[kHalfBlock], r[kHalfBlock];
          const float x0 = float(*a), y0 = float(*b);
          for (int64_t i0 = 0; i0 < n; i0 += kHalfBlock) {
            const int64_t m = std::min(kHalfBlock, n - i0);
            if (s[1] != 0 && s[2] != 0) {
              to_float(a + i0, x, m);
              to_float(b + i0, y, m);
              for (int64_t i = 0; i < m; ++i) r[i] = float(f(x[i], y[i]));
            } else if (s[1] != 0) {
              to_float(a + i0, x, m);
              for (int64_t i = 0; i < m; ++i) r[i] = float(f(x[i], y0));
            } else if (s[2] != 0) {
              to_float(b + i0, y, m);
              for (int64_t i = 0; i < m; ++i) r[i] = float(f(x0, y[i]));
            } else {
              for (int64_t i = 0; i < m; ++i) r[i] = float(f(x0, y0));
            }
            from_float(r, o + i0, m);
          }
          return;
        }
      } else {  // the blocks above take every run these three would
        if (s[0] == so && s[1] == si && s[2] == si) {
          for (int64_t i = 0; i < n; ++i) o[i] = cast<Out>(f(C(a[i]), C(b[i])));
          return;
        }
        if (s[0] == so && s[1] == si && s[2] == 0) {
          const C y = C(*b);
          for (int64_t i = 0; i < n; ++i) o[i] = cast<Out>(f(C(a[i]), y));
          return;
        }
        if (s[0] == so && s[1] == 0 && s[2] == si) {
          const C x = C(*a);
          for (int64_t i = 0; i < n; ++i) o[i] = cast<Out>(f(x, C(b[i])));
          return;
        }
      }
    }
    for (int64_t i = 0; i < n; ++i)
      at<Out>(p[0], s[0], i) = cast<Out>(f(C(load<In>(p[1] + i * s[1])), C(load<In>(p[2] + i * s[2]))));
  });
}

// A functor with `static constexpr bool condition = true` reads its first input as bool.
template <class F, class = void>
struct has_condition : std::false_type {};
template <class F>
struct has_condition<F, std::void_t<decltype(F::condition)>> : std::bool_constant<F::condition> {};

template <class Out, class In, class F>
void map3(const Loop& loop, const F& f) {
  using C = compute_t<In>;
  using First = std::conditional_t<has_condition<F>::value, bool, In>;
  using C1 = std::conditional_t<has_condition<F>::value, bool, C>;
  run_loop(loop, [&f_ref = f](char** p, const int64_t* s, int64_t n) {
    const F f = f_ref;  // See Note [A local copy of the functor]
    if constexpr (!std::is_same_v<In, bool>) {
      if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(First)) && s[2] == int64_t(sizeof(In)) &&
          s[3] == int64_t(sizeof(In))) {
        Out* o = typed<Out>(p[0]);
        const In* b = typed<const In>(p[2]);
        const In* c = typed<const In>(p[3]);
        if constexpr (has_condition<F>::value) {
          const uint8_t* a = reinterpret_cast<const uint8_t*>(p[1]);  // bool bytes, read as load<bool> does
          for (int64_t i = 0; i < n; ++i) o[i] = cast<Out>(f(a[i] != 0, C(b[i]), C(c[i])));
        } else {
          const In* a = typed<const In>(p[1]);
          for (int64_t i = 0; i < n; ++i) o[i] = cast<Out>(f(C(a[i]), C(b[i]), C(c[i])));
        }
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      at<Out>(p[0], s[0], i) = cast<Out>(f(C1(load<First>(p[1] + i * s[1])), C(load<In>(p[2] + i * s[2])),
                                          C(load<In>(p[3] + i * s[3]))));
  });
}

// Functors of the families are templates over the compute type C, made from the op's
// Scalar arguments (add's alpha); ones that take none need no constructor.
template <class F>
F make_fn(const Scalar* args) {
  if constexpr (std::is_constructible_v<F, const Scalar*>) return F(args);
  else return F{};
}

// Note [Floating-only entries]: an elementwise entry that every op reaching it computes in
// a floating dtype (its ops promote integers to float, or refuse them; none is `manual`)
// comes marked by the generator, X(exp, exp_fn, true), and is not compiled for the integral
// dtypes: the ops cannot reach it there (int32's unary kernels: 53 entries -> 15). Should one
// get there anyway, it raises instead of running.
template <class T, bool floating_only>
inline constexpr bool entry_compiled = !(floating_only && std::is_integral_v<compute_t<T>>);
[[noreturn]] void entry_not_compiled(const char* family, const char* entry, ScalarType dtype);

#pragma GCC diagnostic pop

}  // namespace ember::kernels
