// Scalar: a Python number crossing into C++ (bool, int, float or complex), kept exact.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>
#include "core/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };
  Scalar() : kind_(Kind::Int), i_(0) {}
  Scalar(bool b) : kind_(Kind::Bool), i_(b) {}
  Scalar(int v) : kind_(Kind::Int), i_(v) {}
  Scalar(int64_t v) : kind_(Kind::Int), i_(v) {}
  Scalar(double v) : kind_(Kind::Float), d_(v) {}
  Scalar(std::complex<double> v) : kind_(Kind::Complex), d_(v.real()), imag_(v.imag()) {}

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }
  bool is_integral() const { return kind_ == Kind::Int || kind_ == Kind::Bool; }  // bool included
  bool is_bool() const { return kind_ == Kind::Bool; }
  // A complex value gives its real part to the real conversions (as a cast does).
  double to_double() const { return has_double() ? d_ : static_cast<double>(i_); }
  int64_t to_int64() const { return has_double() ? float_to_int<int64_t>(d_) : i_; }
  bool to_bool() const { return has_double() ? d_ != 0 || (is_complex() && imag_ != 0) : i_ != 0; }
  std::complex<double> to_complex() const { return {to_double(), is_complex() ? imag_ : 0.0}; }

  // The value as element type T (cast rules of copies between dtypes).
  template <class T>
  T to() const {
    if (kind_ == Kind::Complex) return cast<T>(to_complex());
    if (kind_ == Kind::Float) return cast<T>(d_);
    if (kind_ == Kind::Bool) return cast<T>(i_ != 0);
    return cast<T>(i_);
  }

  // The dtype torch infers for a tensor made from this value alone.
  ScalarType default_dtype(ScalarType default_float) const {
    return kind_ == Kind::Complex ? to_complex_dtype(default_float)
           : kind_ == Kind::Float ? default_float
           : kind_ == Kind::Bool  ? ScalarType::Bool
                                  : ScalarType::Int64;
  }

 private:
  bool has_double() const { return kind_ == Kind::Float || kind_ == Kind::Complex; }
  static ScalarType to_complex_dtype(ScalarType t) { return ember::to_complex(t); }
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
  double imag_ = 0;
};

// Whether value can be stored as T without the overflow torch refuses (fill_, full,
// tensor(data, dtype=...)): a finite float must lie within T's largest magnitude (inf
// and nan pass); integers must lie in T's range, except that an unsigned type also takes
// negatives down to -max (they wrap: -1 -> 255).
template <class T>
bool fits(const Scalar& value) {
  if (value.is_complex() && !is_complex_v<T> && value.to_complex().imag() != 0) return false;
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) {
    return true;
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    return fits<float>(Scalar(value.to_double())) && fits<float>(Scalar(value.to_complex().imag()));
  } else if constexpr (!std::is_integral_v<T>) {
    const double largest = std::is_same_v<T, Half> ? 65504.0
                           : std::is_same_v<T, BFloat16> ? 3.3895313892515355e38
                                                         : double(std::numeric_limits<float>::max());
    double v = value.to_double();
    return !(v > largest || v < -largest) || v != v || v == std::numeric_limits<double>::infinity() ||
           v == -std::numeric_limits<double>::infinity();
  } else if (value.is_floating()) {
    double v = value.to_double();
    return v >= double(std::numeric_limits<T>::lowest()) && v <= double(std::numeric_limits<T>::max());
  } else {
    int64_t v = value.to_int64();
    if constexpr (std::is_signed_v<T>) {
      return v >= int64_t(std::numeric_limits<T>::min()) && v <= int64_t(std::numeric_limits<T>::max());
    } else {
      return v >= -int64_t(std::numeric_limits<T>::max()) && v <= int64_t(std::numeric_limits<T>::max());
    }
  }
}

}  // namespace ember
