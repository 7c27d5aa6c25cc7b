// dtypes: the enum, the per-dtype facts and the one dispatch switch come from the
// generated dtype_list.h (tools/codegen reads declarations/dtypes.yaml); this header adds
// what is written by hand: the compute type of each storage type, casts and promotion.
#pragma once
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
