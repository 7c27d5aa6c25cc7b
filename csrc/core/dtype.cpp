#include "core/dtype.h"

namespace ember {

void fail_complex_dtype(ScalarType t) {
  fail(ErrorKind::NotImplemented, "ember does not implement this operation for complex tensors yet (dtype ",
       type_name(t), ")");
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  const DTypeInfo &ia = info(a), &ib = info(b);
  if (ia.kind == DTypeKind::Bool) return b;
  if (ib.kind == DTypeKind::Bool) return a;
  // complex wins; its part type is the promotion of the parts (complex64 + float64 is complex128)
  if (ia.kind == DTypeKind::Complex || ib.kind == DTypeKind::Complex)
    return to_complex(promote_types(to_real(a), to_real(b)));
  bool fa = ia.kind == DTypeKind::Float, fb = ib.kind == DTypeKind::Float;
  if (fa != fb) return fa ? a : b;
  if (fa) {  // two different floats: the wider; float16 with bfloat16 meet at float32
    if (ia.itemsize == ib.itemsize) return ScalarType::Float32;
    return ia.itemsize > ib.itemsize ? a : b;
  }
  // two different integers: uint8 is the only unsigned type
  if (ia.kind == DTypeKind::Unsigned || ib.kind == DTypeKind::Unsigned) {
    ScalarType s = ia.kind == DTypeKind::Unsigned ? b : a;
    return s == ScalarType::Int8 ? ScalarType::Int16 : s;
  }
  return ia.itemsize > ib.itemsize ? a : b;
}

}  // namespace ember
