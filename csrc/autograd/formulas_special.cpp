// Backward helpers of the special functions (declarations/derivatives.yaml, "special
// functions"), written with the autograd-aware API like autograd/formulas.cpp.
#include <cmath>
#include "autograd/formulas.h"
#include "core/error.h"

namespace ember::api {

// i1' = i0 - i1 / x, and for i1e = e^-|x| i1: i0e - i1e (sgn x + 1 / x); 1/2 at 0.
Tensor special_i1_grad(const Tensor& grad, const Tensor& self, const Tensor& result, bool scaled) {
  Tensor d = scaled ? special_i0e(self) - result * (sgn(self) + reciprocal(self)) : i0(self) - result / self;
  return grad * where_self(eq_Tensor(self, scalar(0.0, self)), scalar(0.5, d), d);
}

// sinc' = (πx cos πx - sin πx) / (πx²), 0 at 0.
Tensor sinc_grad(const Tensor& grad, const Tensor& self) {
  Tensor px = self * M_PI;
  Tensor d = (cos(px) * px - sin(px)) / (px * self);
  return grad * where_self(eq_Tensor(self, scalar(0.0, self)), scalar(0.0, d), d);
}

// log1p(other), 0 where self is 0 and other <= -1 (as torch).
Tensor xlog1py_self_grad(const Tensor& grad, const Tensor& self, const Tensor& other) {
  Tensor g = special_xlog1py(grad, other);
  Tensor zero = logical_and(eq_Tensor(self, scalar(0.0, self)), le_Tensor(other, scalar(-1.0, other)));
  return masked_fill_Scalar(g, zero, Scalar(0.0));
}

// dP(a, x)/dx = x^(a-1) e^-x / Γ(a).
Tensor igamma_other_grad(const Tensor& self, const Tensor& other) {
  return exp((self - 1.0) * log(other) - other - lgamma(self));
}

// mvlgamma' = Σ_(i<p) digamma(x - i/2), through digamma so that it differentiates again.
Tensor mvlgamma_grad(const Tensor& grad, const Tensor& self, int64_t p) {
  Tensor sum = digamma(self);
  for (int64_t i = 1; i < p; ++i) sum = sum + digamma(self - 0.5 * double(i));
  return grad * sum;
}

Tensor not_implemented_grad(const char* what) {
  fail(ErrorKind::NotImplemented, "the derivative for '", what, "' is not implemented.");
}

}  // namespace ember::api
