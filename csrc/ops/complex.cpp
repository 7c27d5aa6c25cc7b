// Complex numbers: the views between a complex tensor and its parts, conj, angle, polar
// and complex (declarations/ops/complex.yaml; Note [Complex dtypes], core/dtype.h).
#include "kernels/complex.h"
#include "kernels/loops.h"
#include "ops/elementwise.h"
#include "ops/geometry.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

// A view of self's storage with another dtype.
Tensor retyped_view(const Tensor& self, ScalarType dtype, Dims sizes, Dims strides, int64_t offset) {
  return Tensor(make_ref<TensorImpl>(self.storage(), offset, std::move(sizes), std::move(strides), dtype));
}

// The real dtype view of a complex tensor with a trailing (real, imag) dim.
Tensor parts_view(const Tensor& self) {
  Dims sizes(self.sizes()), strides(self.strides());
  for (auto& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return retyped_view(self, to_real(self.dtype()), std::move(sizes), std::move(strides), self.offset() * 2);
}

// One part (0 real, 1 imag) of a complex tensor, as a view.
Tensor part_view(const Tensor& self, int part) {
  Dims strides(self.strides());
  for (auto& s : strides) s *= 2;
  return retyped_view(self, to_real(self.dtype()), Dims(self.sizes()), std::move(strides), self.offset() * 2 + part);
}

void check_parts_dtypes(const Tensor& a, const Tensor& b, const char* which) {
  const ScalarType x = a.dtype(), y = b.dtype();
  EMBER_CHECK(is_floating(x) && is_floating(y) && x != ScalarType::BFloat16 && y != ScalarType::BFloat16, Runtime,
              "Expected both inputs to be Half, Float or Double tensors but got ", type_name(x), " and ",
              type_name(y));
  EMBER_CHECK(x == y, Runtime, "Expected object of scalar type ", type_name(x), " but got scalar type ", type_name(y),
              " for second argument");
  EMBER_CHECK(x != ScalarType::Float16, NotImplemented, which,
              ": ember has no complex32 dtype (complex from Half tensors)");
}

// complex(re, im) and polar(r, theta): one broadcast loop from two real tensors.
Tensor from_parts(const Tensor& a, const Tensor& b, const Out& out, bool polar_form, const char* op) {
  check_parts_dtypes(a, b, op);
  const ScalarType dt = to_complex(a.dtype());
  Dims shape = broadcast_shapes(a.sizes(), b.sizes());
  if (out.tensor.defined())
    EMBER_CHECK(out.tensor.dtype() == dt, Runtime, "Expected object of scalar type ", type_name(dt),
                " but got scalar type ", type_name(out.tensor.dtype()), " for argument 'out'");
  Tensor dst = resolve_out(out, shape, dt, op);
  if (dst.numel() == 0) return dst;
  Tensor x = a.sizes() == IntList(shape) ? a : expand(a, shape, false);
  Tensor y = b.sizes() == IntList(shape) ? b : expand(b, shape, false);
  Tensor w = dst.is_contiguous() ? dst : empty_tensor(shape, dt);
  const Tensor* operands[] = {&w, &x, &y};
  kernels::Loop loop = kernels::make_loop(operands, 3);
  visit_complex(dt, [&](auto part) {
    using R = decltype(part);
    if (polar_form) kernels::complex::Kernels<R>::polar(loop);
    else kernels::complex::Kernels<R>::make(loop);
  });
  if (!w.is_same(dst)) copy_(dst, w, false);
  return dst;
}

}  // namespace

Tensor view_as_real(const Tensor& self) {
  EMBER_CHECK(is_complex(self.dtype()), Runtime, "view_as_real is only supported for complex tensors");
  return parts_view(self);
}

Tensor view_as_complex(const Tensor& self) {
  const ScalarType t = self.dtype();
  EMBER_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float16, Runtime,
              "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
              "type: ",
              type_name(t));
  EMBER_CHECK(t != ScalarType::Float16, NotImplemented, "view_as_complex: ember has no complex32 dtype");
  EMBER_CHECK(self.dim() != 0, Runtime, "Input tensor must have one or more dimensions");
  EMBER_CHECK(self.sizes().back() == 2, Runtime, "Tensor must have a last dimension of size 2");
  EMBER_CHECK(self.strides().back() == 1, Runtime, "Tensor must have a last dimension with stride 1");
  Dims sizes(IntList(self.sizes().begin(), self.sizes().size() - 1)), strides;
  for (int64_t d = 0; d + 1 < self.dim(); ++d) {
    EMBER_CHECK(self.strides()[d] % 2 == 0, Runtime, "Tensor must have a stride divisible by 2 for all but last dimension");
    strides.push_back(self.strides()[d] / 2);
  }
  EMBER_CHECK(self.offset() % 2 == 0, Runtime, "Tensor must have a storage_offset divisible by 2");
  return retyped_view(self, to_complex(t), std::move(sizes), std::move(strides), self.offset() / 2);
}

Tensor real(const Tensor& self) { return is_complex(self.dtype()) ? part_view(self, 0) : self; }

Tensor imag(const Tensor& self) {
  EMBER_CHECK(is_complex(self.dtype()), Runtime, "imag is not implemented for tensors with non-complex dtypes.");
  return part_view(self, 1);
}

Tensor conj(const Tensor& self) { return is_complex(self.dtype()) ? conj_physical(self) : self; }

Tensor conj_physical(const Tensor& self, const Out& out) {
  if (!is_complex(self.dtype())) {
    if (out.inplace) return self;
    if (!out.tensor.defined()) return clone(self, std::nullopt);
    Tensor dst = resolve_out(out, self.sizes(), self.dtype(), "conj_physical");
    return copy_(dst, self, false);
  }
  Tensor dst = out.inplace ? self : resolve_out(out, self.sizes(), self.dtype(), "conj_physical", &self);
  EMBER_CHECK(dst.dtype() == self.dtype(), Runtime, "conj_physical: expected an out= of dtype ", type_name(self.dtype()),
              ", got ", type_name(dst.dtype()));
  if (dst.numel() == 0) return dst;
  Tensor src = out.inplace || !out.tensor.defined() ? self : unaliased_source(dst, self, "conj_physical");
  const Tensor* operands[] = {&dst, &src};
  kernels::Loop loop = kernels::make_loop(operands, 2);
  dst.storage()->bump_version();
  visit_complex(self.dtype(), [&](auto part) { kernels::complex::Kernels<decltype(part)>::conj(loop); });
  return dst;
}

Tensor angle(const Tensor& self, const Out& out) {
  if (!is_complex(self.dtype())) {
    // pi where x < 0, nan for nan, else 0 (in the default float dtype for integers)
    const ScalarType dt = is_floating(self.dtype()) ? self.dtype() : default_dtype();
    Tensor x = as_dtype(self, dt);
    Tensor zero = scalar_tensor(Scalar(0.0), dt);
    Tensor r = where_self(lt_Tensor(x, zero), scalar_tensor(Scalar(M_PI), dt), zero);
    r = where_self(isnan(x), x, r);
    if (!out.tensor.defined()) return r;
    EMBER_CHECK(can_cast(dt, out.tensor.dtype()), Runtime, "result type ", type_name(dt),
                " can't be cast to the desired output type ", type_name(out.tensor.dtype()));
    Tensor dst = resolve_out(out, r.sizes(), out.tensor.dtype(), "angle");
    return copy_(dst, r, false);
  }
  const ScalarType dt = to_real(self.dtype());
  if (out.tensor.defined())
    EMBER_CHECK(can_cast(dt, out.tensor.dtype()), Runtime, "result type ", type_name(dt),
                " can't be cast to the desired output type ", type_name(out.tensor.dtype()));
  Tensor dst = resolve_out(out, self.sizes(), out.tensor.defined() ? out.tensor.dtype() : dt, "angle", &self);
  if (dst.numel() == 0) return dst;
  Tensor w = dst.dtype() == dt ? dst : empty_tensor(self.sizes(), dt);
  Tensor src = out.tensor.defined() ? unaliased_source(w, self, "angle") : self;
  const Tensor* operands[] = {&w, &src};
  kernels::Loop loop = kernels::make_loop(operands, 2);
  visit_complex(self.dtype(), [&](auto part) { kernels::complex::Kernels<decltype(part)>::angle(loop); });
  if (!w.is_same(dst)) copy_(dst, w, false);
  return dst;
}

Tensor polar(const Tensor& abs, const Tensor& angle, const Out& out) { return from_parts(abs, angle, out, true, "polar"); }

Tensor complex(const Tensor& real, const Tensor& imag, const Out& out) {
  return from_parts(real, imag, out, false, "complex");
}

}  // namespace ember::ops
