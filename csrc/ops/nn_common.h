// Helpers of the nn ops (csrc/ops/nn_*.cpp): their kernels (kernels/nn_*.h) compute in
// float or double on contiguous memory, so the ops make their inputs contiguous and
// compute float16/bfloat16 in float32, rounding the result back.
#pragma once
#include <algorithm>
#include "ops/geometry.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops::nn_common {

inline ScalarType compute_dtype(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 ? ScalarType::Float32 : t;
}

// t as a contiguous tensor of dtype dt (the same tensor when it already is one).
inline Tensor dense(const Tensor& t, ScalarType dt) {
  Tensor r = contiguous(as_dtype(t, dt), MemoryFormat::Contiguous);
  check_bounds(r);
  return r;
}

// t dense in memory format f (contiguous when f is), as dtype dt; and an empty tensor laid
// out in f. For the kernels that compute channels_last directly (convolution, pooling).
inline Tensor dense_in(const Tensor& t, ScalarType dt, MemoryFormat f) {
  Tensor r = contiguous(as_dtype(t, dt), f);
  check_bounds(r);
  return r;
}
inline Tensor empty_in(IntList sizes, ScalarType dt, MemoryFormat f) {
  Tensor out = empty_tensor(sizes, dt);
  if (f != MemoryFormat::Contiguous) out.impl()->set_sizes_strides(Dims(sizes), format_strides(sizes, f));
  return out;
}

template <class T>
inline T* ptr(const Tensor& t) {
  return t.defined() ? reinterpret_cast<T*>(t.data()) : nullptr;
}

inline void check_floating(const Tensor& t, const char* kernel) {
  EMBER_CHECK(is_floating(t.dtype()), NotImplemented, "\"", kernel, "\" not implemented for '", type_name(t.dtype()),
              "'");
}

// The product of sizes[from:to].
inline int64_t product(IntList sizes, size_t from = 0, size_t to = size_t(-1)) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, sizes.size()); ++i) n *= sizes[i];
  return n;
}

// result laid out as torch lays out an nn op's result: channels_last (3d) when the
// strides of a (or, failing that, of b: a convolution's weight) suggest it, else as it is.
// The kernels compute row-major, so a channels_last result costs one copy here.
inline Tensor in_layout_of(const Tensor& result, const Tensor& a, const Tensor& b = Tensor()) {
  if (result.dim() != a.dim() || result.dim() < 4) return result;
  MemoryFormat f = suggest_memory_format(a);
  if (f == MemoryFormat::Contiguous && b.defined() && b.dim() == a.dim()) f = suggest_memory_format(b);
  return f == MemoryFormat::Contiguous ? result : restrided_as(result, f);
}

// A Python number as a 0-dim operand of the formulas' arithmetic.
inline Tensor number(double v) { return wrapped_number(Scalar(v)); }

}  // namespace ember::ops::nn_common
