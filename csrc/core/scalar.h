// Scalar: a Python number crossing into C++ (bool, int or float), kept exact.
#pragma once
#include <cstdint>
#include "core/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };
  Scalar() : kind_(Kind::Int), i_(0) {}
  Scalar(bool b) : kind_(Kind::Bool), i_(b) {}
  Scalar(int v) : kind_(Kind::Int), i_(v) {}
  Scalar(int64_t v) : kind_(Kind::Int), i_(v) {}
  Scalar(double v) : kind_(Kind::Float), d_(v) {}

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ != Kind::Float; }  // bool included
  bool is_bool() const { return kind_ == Kind::Bool; }
  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int64() const { return kind_ == Kind::Float ? float_to_int<int64_t>(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0 : i_ != 0; }

  // The value as element type T (cast rules of copies between dtypes).
  template <class T>
  T to() const {
    if (kind_ == Kind::Float) return cast<T>(d_);
    if (kind_ == Kind::Bool) return cast<T>(i_ != 0);
    return cast<T>(i_);
  }

  // The dtype torch infers for a tensor made from this value alone.
  ScalarType default_dtype(ScalarType default_float) const {
    return kind_ == Kind::Float ? default_float : kind_ == Kind::Bool ? ScalarType::Bool : ScalarType::Int64;
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace ember
