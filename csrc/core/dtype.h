// dtypes: the enum, the per-dtype facts and the one dispatch switch come from the
// generated dtype_list.h (tools/codegen reads declarations/dtypes.yaml); this header adds
// what is written by hand: the compute type of each storage type, casts and promotion.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include "core/half.h"
#include "dtype_list.h"  // generated: ScalarType, kDTypes, CppType, dtype_of, visit_dtype

namespace ember {

inline const DTypeInfo& info(ScalarType t) { return kDTypes[static_cast<int>(t)]; }
inline int64_t itemsize(ScalarType t) { return info(t).itemsize; }
inline bool is_floating(ScalarType t) { return info(t).kind == DTypeKind::Float; }
inline bool is_complex(ScalarType t) { return info(t).kind == DTypeKind::Complex; }
// floating or complex: the dtypes that take gradients and that float ops accept
inline bool is_inexact(ScalarType t) { return is_floating(t) || is_complex(t); }
// Note [Complex dtypes]
// complex64 and complex128 are std::complex<float> and std::complex<double>: (real,
// imag) pairs, as numpy and torch store them. They are opt-in: visit_dtype covers the
// real dtypes and raises NotImplementedError for a complex one, so a kernel written for
// ordered numbers is never instantiated with a complex type; code that handles complex
// calls visit_any_dtype. The element-moving families (copy, fill) are instantiated for
// every dtype; complex arithmetic is the complex family's (kernels/complex.cpp), which
// the elementwise engine calls for the entries it lists. Casts follow torch: to a real
// type the imaginary part is dropped (copy_ warns), from one it is zero.
// The complex dtype whose parts are t (float32 -> complex64); the part type of a complex t.
inline ScalarType to_complex(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::ComplexDouble : is_complex(t) ? t : ScalarType::ComplexFloat;
}
inline ScalarType to_real(ScalarType t) {
  return t == ScalarType::ComplexDouble ? ScalarType::Float64 : t == ScalarType::ComplexFloat ? ScalarType::Float32 : t;
}
template <class T> struct is_complex_type : std::false_type {};
template <class R> struct is_complex_type<std::complex<R>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex_type<T>::value;

inline bool is_integral(ScalarType t, bool include_bool) {
  DTypeKind k = info(t).kind;
  return k == DTypeKind::Signed || k == DTypeKind::Unsigned || (include_bool && k == DTypeKind::Bool);
}
// "Float", "Long", ...: the name torch uses in error messages.
inline const char* type_name(ScalarType t) { return info(t).legacy; }

// The type a kernel computes in (see Note [Half types compute in float]).
template <class T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };
template <class T> using compute_t = typename ComputeType<T>::type;

// Float to integer conversion as x86 (and so torch) does it: out-of-range and NaN give
// the lowest value of the 32- or 64-bit type; narrower integers wrap from int32.
template <class To, class From>
inline To float_to_int(From x) {
  double d = static_cast<double>(x);
  if constexpr (sizeof(To) == 8) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
      return static_cast<To>(std::numeric_limits<int64_t>::min());
    return static_cast<To>(static_cast<int64_t>(d));
  } else {
    int32_t v = (d > -2147483649.0 && d < 2147483648.0) ? static_cast<int32_t>(d)
                                                        : std::numeric_limits<int32_t>::min();
    return static_cast<To>(v);
  }
}

// cast<To>(x): the element conversion every copy between dtypes uses.
template <class To, class From>
inline To cast(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_complex_v<From>) {
    if constexpr (is_complex_v<To>) return To(typename To::value_type(x.real()), typename To::value_type(x.imag()));
    else if constexpr (std::is_same_v<To, bool>) return x.real() != 0 || x.imag() != 0;
    else return cast<To>(x.real());
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    return To(cast<R>(x), R(0));
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(x) != compute_t<From>(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, double>) return To(static_cast<float>(x));
    else return To(static_cast<float>(static_cast<compute_t<From>>(x)));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    return float_to_int<To>(static_cast<compute_t<From>>(x));
  } else {
    return static_cast<To>(static_cast<compute_t<From>>(x));
  }
}

// Reads one element. A bool is read as its byte (any nonzero byte is true): memory
// viewed as bool (view(dtype), uninitialized tensors) may hold other bytes than 0 and 1,
// and loading those as a C++ bool is undefined behaviour.
template <class T>
inline T load(const void* p) {
  if constexpr (std::is_same_v<T, bool>) {
    return *static_cast<const uint8_t*>(p) != 0;
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
}

ScalarType promote_types(ScalarType a, ScalarType b);

}  // namespace ember
