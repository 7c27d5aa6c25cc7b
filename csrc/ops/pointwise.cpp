// Pointwise ops with rules beyond their kernel entry (declarations/ops/pointwise.yaml
// and comparison.yaml, `manual: true`). The rest have generated bodies.
#include <cmath>
#include <limits>
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

using kernels::BinaryOp;
using kernels::TernaryOp;
using kernels::UnaryOp;

// The dtype the engine will compute self op other in (for checks that depend on it).
ScalarType common_dtype(const Tensor& a, const Tensor& b) {
  const Tensor* ts[] = {&a, &b};
  return result_type(ts, 2);
}

void check_alpha(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ScalarType t = common_dtype(self, other);
  EMBER_CHECK(!(alpha.is_bool() && t != ScalarType::Bool), Runtime,
              "Boolean alpha only supported for Boolean results.");
  EMBER_CHECK(!(alpha.is_floating() && is_integral(t, true)), Runtime,
              "For integral input tensors, argument alpha must not be a floating point number.");
}

Tensor wrapped(const Scalar& s) { return wrapped_number(s); }

Spec bound_spec(const char* name, bool numbers, bool no_bool);

// torch's refusals of a complex clamp: a Tensor bound of clamp_min/clamp_max goes through
// its maximum/minimum kernel (`kernel`), any other clamp says so itself.
void check_not_complex(const Tensor& self, const Tensor& bound = Tensor(), const char* kernel = nullptr) {
  if (kernel && !bound.impl()->wrapped_number) {
    const ScalarType t = promote_types(self.dtype(), bound.dtype());
    EMBER_CHECK(!is_complex(t), NotImplemented, "\"", kernel, "\" not implemented for '", type_name(t), "'");
  }
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "clamp is not supported for complex types");
}

Spec bound_spec(const char* name, bool numbers, bool no_bool) {
  return {name, Promote::Common, no_bool ? DTypes::NoBool : DTypes::All, false,
          numbers ? OutDType::Exact : OutDType::Castable, true};
}

Tensor clamp_bounds(const Tensor& self, const Tensor& min, const Tensor& max, const Out& out, bool numbers) {
  check_not_complex(self);
  EMBER_CHECK(min.defined() || max.defined(), Runtime, "torch.clamp: At least one of 'min' or 'max' must not be None");
  if (!max.defined()) return binary(BinaryOp::clamp_min, bound_spec("clamp", numbers, numbers), self, min, {}, out);
  if (!min.defined()) return binary(BinaryOp::clamp_max, bound_spec("clamp", numbers, numbers), self, max, {}, out);
  return ternary(TernaryOp::clamp, bound_spec("clamp", numbers, true), self, min, max, {}, out);
}

void check_lerp_dtype(const Tensor& self, const Tensor& other, const char* name) {
  EMBER_CHECK(self.dtype() == other.dtype(), Runtime, "expected dtype ", cpp_name(self.dtype()), " for `", name,
              "` but got dtype ", cpp_name(other.dtype()));
}

}  // namespace

Tensor add_Tensor(const Tensor& self, const Tensor& other, const Scalar& alpha, const Out& out) {
  check_alpha(self, other, alpha);
  return binary(BinaryOp::add, {"add"}, self, other, {alpha}, out);
}

Tensor sub_Tensor(const Tensor& self, const Tensor& other, const Scalar& alpha, const Out& out) {
  EMBER_CHECK(!(self.dtype() == ScalarType::Bool && other.dtype() == ScalarType::Bool), Runtime,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  EMBER_CHECK(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool, Runtime,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
              "mask, use the `~` or `logical_not()` operator instead.");
  check_alpha(self, other, alpha);
  return binary(BinaryOp::sub, {"sub"}, self, other, {alpha}, out);
}

Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return sub_Tensor(other, self, alpha, Out{});
}

Tensor div_Tensor_mode(const Tensor& self, const Tensor& other, std::optional<std::string> rounding_mode,
                       const Out& out) {
  if (!rounding_mode) return binary(BinaryOp::div, {"div", Promote::Float}, self, other, {}, out);
  if (*rounding_mode == "trunc")
    return binary(BinaryOp::div_trunc, {"div_trunc", Promote::Common, DTypes::NoBool}, self, other, {}, out);
  if (*rounding_mode == "floor")
    return binary(BinaryOp::div_floor, {"div_floor", Promote::Common, DTypes::NoBool}, self, other, {}, out);
  fail(ErrorKind::Runtime, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
       *rounding_mode, "'");
}

Tensor pow_Tensor(const Tensor& self, const Tensor& exponent, const Out& out) {
  if (exponent.impl()->wrapped_number && exponent.dtype() == ScalarType::Int64)
    EMBER_CHECK(!(is_integral(common_dtype(self, exponent), true) && item(exponent).to_int64() < 0), Runtime,
                "Integers to negative integer powers are not allowed.");
  // A float tensor to one of torch's special Python-number exponents takes that
  // exponent's own kernel, as torch's does: the values are torch's (pow(-0., .5) = -0.,
  // pow(-inf, .5) = nan as sqrt gives them) and the general kernel's exp and log cost
  // about ten times more. Only for a fresh result or in place: out= may cast.
  if (exponent.impl()->wrapped_number && exponent.device().is_cpu() && is_floating(self.dtype()) &&
      !is_complex(exponent.dtype()) &&
      (!out.tensor.defined() || out.inplace)) {
    const double e = item(exponent).to_double();
    if (e == 2.0) return mul_Tensor(self, self, out);
    if (e == 3.0) return mul_Tensor(mul_Tensor(self, self, Out{}), self, out);
    if (e == 0.5) return sqrt(self, out);
    if (e == -0.5) return rsqrt(self, out);
    if (e == -1.0) return reciprocal(self, out);
    if (e == -2.0) return reciprocal(mul_Tensor(self, self, Out{}), out);
  }
  // bool ** bool has no kernel in torch; a Python number exponent is fine
  const DTypes dtypes = exponent.impl()->wrapped_number ? DTypes::All : DTypes::NoBool;
  return binary(BinaryOp::pow, {"pow", Promote::Common, dtypes, false, OutDType::Castable, true}, self, exponent, {},
                out);
}

// In float64, or complex128 where either is complex.
Tensor float_power(const Tensor& self, const Tensor& exponent, const Out& out) {
  const ScalarType t =
      is_complex(self.dtype()) || is_complex(exponent.dtype()) ? ScalarType::ComplexDouble : ScalarType::Float64;
  EMBER_CHECK(!out.inplace || self.dtype() == t, Runtime, "the base given to float_power_ has dtype ",
              type_name(self.dtype()), " but the operation's result requires dtype ", type_name(t));
  Tensor a = to_dtype(self, t, false, false, std::nullopt);
  Tensor b = to_dtype(exponent, t, false, false, std::nullopt);
  return binary(BinaryOp::pow, {"float_power"}, out.inplace ? self : a, b, {}, out);
}

Tensor neg(const Tensor& self, const Out& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, Runtime,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  return unary(UnaryOp::neg, {"neg", Promote::Same, DTypes::All, false, OutDType::Exact}, self, {}, out);
}

Tensor positive(const Tensor& self) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, Runtime, "The `+` operator, on a bool tensor is not supported.");
  return self;
}

Tensor square(const Tensor& self, const Out& out) {
  return binary(BinaryOp::pow, {"square"}, self, wrapped(Scalar(int64_t(2))), {}, out);
}

Tensor logit(const Tensor& self, std::optional<double> eps, const Out& out) {
  return unary(UnaryOp::logit, {"logit", Promote::Float}, self, {Scalar(eps.value_or(-1.0))}, out);
}

Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Out& out) {
  ScalarType t = self.dtype();
  EMBER_CHECK(!out.tensor.defined() || out.tensor.dtype() == t, Runtime, "nan_to_num: dtype of out: ",
              type_name(out.tensor.dtype()), " should be same as input: ", type_name(t));
  double hi = 0, lo = 0;
  if (is_floating(t) || is_complex(t)) {  // a complex tensor's parts: its part dtype's bounds
    hi = visit_dtype(to_real(t), [](auto tag) -> double {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, Half>) return 65504.0;
      else if constexpr (std::is_same_v<T, BFloat16>) return 3.3895313892515355e38;
      else return double(std::numeric_limits<T>::max());
    });
    lo = -hi;
  }
  return unary(UnaryOp::nan_to_num, {"nan_to_num", Promote::Same}, self,
               {Scalar(nan.value_or(0.0)), Scalar(posinf.value_or(hi)), Scalar(neginf.value_or(lo))}, out);
}

Tensor clamp_Tensor(const Tensor& self, const Tensor& min, const Tensor& max, const Out& out) {
  return clamp_bounds(self, min, max, out, false);
}

// As torch's: bounds given as Python numbers must fit the dtype, have no bool kernel and
// take an out= of the result's dtype only; tensor bounds have no bool kernel together.
Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max, const Out& out) {
  return clamp_bounds(self, min ? wrapped(*min) : Tensor(), max ? wrapped(*max) : Tensor(), out, true);
}

Tensor clamp_min(const Tensor& self, const Tensor& min, const Out& out) {
  check_not_complex(self, min, "maximum_cpu");
  const bool number = min.impl()->wrapped_number;
  return binary(BinaryOp::clamp_min, bound_spec("clamp_min", number, number), self, min, {}, out);
}

Tensor clamp_max(const Tensor& self, const Tensor& max, const Out& out) {
  check_not_complex(self, max, "minimum_cpu");
  const bool number = max.impl()->wrapped_number;
  return binary(BinaryOp::clamp_max, bound_spec("clamp_max", number, number), self, max, {}, out);
}

Tensor lerp_Scalar(const Tensor& self, const Tensor& end, const Scalar& weight, const Out& out) {
  check_lerp_dtype(self, end, "end");
  return binary(BinaryOp::lerp, {"lerp", Promote::Common, DTypes::Floating}, self, end, {weight}, out);
}

Tensor lerp_Tensor(const Tensor& self, const Tensor& end, const Tensor& weight, const Out& out) {
  check_lerp_dtype(self, end, "end");
  if (weight.dim() > 0) check_lerp_dtype(self, weight, "weight");  // a 0-dim weight converts
  return ternary(TernaryOp::lerp, {"lerp", Promote::Common, DTypes::Floating, false, OutDType::Exact}, self, end,
                 weight, {}, out);
}

Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
               const Out& out) {
  EMBER_CHECK(!(is_integral(tensor1.dtype(), true) && is_integral(tensor2.dtype(), true)), Runtime,
              "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
              "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
              "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
              "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
              "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  return ternary(TernaryOp::addcdiv, {"addcdiv"}, self, tensor1, tensor2, {value}, out);
}

Tensor where_self(const Tensor& condition, const Tensor& self, const Tensor& other) {
  Spec spec{"where"};
  spec.condition = true;
  if (self.impl()->wrapped_number || other.impl()->wrapped_number) {
    // as torch's: a number must fit the dtype, except float16/bfloat16 (1e5 becomes inf)
    const ScalarType t = common_dtype(self, other);
    spec.numbers_checked = t != ScalarType::Float16 && t != ScalarType::BFloat16;
  }
  if (condition.dtype() == ScalarType::UInt8) {  // torch still takes it, with a warning (once)
    static bool warned = false;
    if (!warned) {
      warned = true;
      warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a future "
           "version of PyTorch. Use a boolean condition instead.");
    }
    return ternary(TernaryOp::where, spec, ne_Tensor(condition, wrapped(Scalar(int64_t(0))), Out{}), self, other, {},
                   Out{});
  }
  return ternary(TernaryOp::where, spec, condition, self, other, {}, Out{});
}

Tensor masked_fill_Scalar(const Tensor& self, const Tensor& mask, const Scalar& value, const Out& out) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, Runtime, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              info(mask.dtype()).name);
  check_number_fits(value, self.dtype());
  return binary(BinaryOp::masked_fill, {"masked_fill", Promote::Same}, self, mask, {value}, out);
}

Tensor masked_fill_Tensor(const Tensor& self, const Tensor& mask, const Tensor& value, const Out& out) {
  EMBER_CHECK(value.dim() == 0, Runtime, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return masked_fill_Scalar(self, mask, item(value), out);
}

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(self.dtype() == other.dtype(), Runtime, type_name(self.dtype()), " did not match ",
              type_name(other.dtype()));
  EMBER_CHECK(rtol >= 0, Runtime, "rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, Runtime, "atol must be greater than or equal to zero, but got ", atol);
  if (is_complex(self.dtype())) {
    // equal, or both NaN (equal_nan), or finitely apart by at most atol + rtol |other|
    // with |.| the complex modulus
    Tensor close = eq_Tensor(self, other, Out{});
    if (equal_nan) close = logical_or(close, logical_and(isnan(self), isnan(other), Out{}), Out{});
    Tensor err = abs(sub_Tensor(self, other, Scalar(int64_t(1)), Out{}), Out{});
    Tensor allowed = add_Tensor(mul_Tensor(abs(other, Out{}), wrapped(Scalar(rtol)), Out{}), wrapped(Scalar(atol)),
                                Scalar(int64_t(1)), Out{});
    return logical_or(close, logical_and(isfinite(err), le_Tensor(err, allowed, Out{}), Out{}), Out{});
  }
  return compare(kernels::CompareOp::isclose, {"isclose"}, self, other, {Scalar(rtol), Scalar(atol), Scalar(equal_nan)},
                 Out{});
}

bool equal(const Tensor& self, const Tensor& other) {
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  return item(all(eq_Tensor(self, other, Out{}), std::nullopt, false, Out{})).to_bool();
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return item(all(isclose(self, other, rtol, atol, equal_nan), std::nullopt, false, Out{})).to_bool();
}

ScalarType result_type_Tensor(const Tensor& tensor, const Tensor& other) { return common_dtype(tensor, other); }

// (overload names keep these apart from the C++ helpers of the same name)
ScalarType promote_types_dtypes(ScalarType type1, ScalarType type2) { return ember::promote_types(type1, type2); }

bool can_cast_dtypes(ScalarType from, ScalarType to) { return can_cast(from, to); }

}  // namespace ember::ops
