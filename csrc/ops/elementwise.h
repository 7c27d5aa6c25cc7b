// The elementwise engine: every op that maps inputs to an output element by element
// (add, exp, eq, where, ...) goes through run() below, which
//   1. computes the compute dtype by torch's type promotion (result_type),
//   2. broadcasts the inputs to one shape,
//   3. resolves the output: a fresh tensor laid out like the inputs, the out= tensor
//      (resized, dtype checked with can_cast) or self for the in-place form,
//   4. converts inputs to the compute dtype and runs the family's kernel entry for that
//      dtype on one strided loop (kernels/loops.h).
// Declarations with `kernel: <family>.<entry>` get their op bodies generated as calls of
// the family functions here; ops with extra rules (add's alpha check) call them by hand.
#pragma once
#include <initializer_list>
#include "core/scalar.h"
#include "core/tensor.h"
#include "kernel_ops.h"  // generated: UnaryOp, PredicateOp, BinaryOp, CompareOp, TernaryOp

namespace ember::ops {

// promote: how inputs decide the compute dtype (see declarations' `promote:`).
enum class Promote : uint8_t { Common, Float, Same };
// dtypes: which compute dtypes an entry supports (declarations' `dtypes:`).
enum class DTypes : uint8_t { All, NoBool, Integral, Ints, Floating, Signed, Float3264 };
// out_dtype: which dtypes an out= may have.
enum class OutDType : uint8_t { Castable, Exact, Bool };

struct Spec {
  const char* name;  // for messages: "add"
  Promote promote = Promote::Common;
  DTypes dtypes = DTypes::All;
  // The first input is a bool condition (where): it takes no part in promotion and is
  // read as bool by the kernel.
  bool condition = false;
  // Which out= dtypes are taken (declarations' `out_dtype:`): any the result can be cast
  // to, exactly the result's (torch's abs, floor, clamp: "Found dtype Double but expected
  // Float"), or bool only (isposinf).
  OutDType out_dtype = OutDType::Castable;
  // Python numbers must fit the compute dtype (declarations' `numbers_checked:`; torch's
  // pow, clamp, where: "value cannot be converted to type uint8_t without overflow").
  bool numbers_checked = false;
};

Tensor unary(kernels::UnaryOp op, const Spec& spec, const Tensor& a, std::initializer_list<Scalar> args,
             const Out& out);
Tensor predicate(kernels::PredicateOp op, const Spec& spec, const Tensor& a, std::initializer_list<Scalar> args,
                 const Out& out);
Tensor binary(kernels::BinaryOp op, const Spec& spec, const Tensor& a, const Tensor& b,
              std::initializer_list<Scalar> args, const Out& out);
Tensor compare(kernels::CompareOp op, const Spec& spec, const Tensor& a, const Tensor& b,
               std::initializer_list<Scalar> args, const Out& out);
Tensor ternary(kernels::TernaryOp op, const Spec& spec, const Tensor& a, const Tensor& b, const Tensor& c,
               std::initializer_list<Scalar> args, const Out& out);

// The special functions' engine call (a float family, kernels/special.h): one or two
// inputs, computed in float or double (float16/bfloat16 in float), run like unary/binary.
Tensor special_map(kernels::special::SpecialOp op, const Spec& spec, std::initializer_list<const Tensor*> ins,
                   std::initializer_list<Scalar> args, const Out& out);

// torch's type promotion over tensors (wrapped numbers and 0-dim tensors rank below
// tensors with dims; see Note [Type promotion] in elementwise.cpp).
ScalarType result_type(const Tensor* const* tensors, int n);
// Whether a result of dtype `from` may be written into a tensor of dtype `to` (out=,
// in-place): no floating -> integral, no non-bool -> bool.
bool can_cast(ScalarType from, ScalarType to);
// The tensor an op writes into: out.tensor (checked, resized) or a fresh one of shape
// and dtype, laid out like `like` when given.
// A non-empty out= is resized with torch's deprecation warning.
Tensor resolve_out(const Out& out, IntList shape, ScalarType dtype, const char* op, const Tensor* like = nullptr);
void warn_resized(IntList from, IntList to);

}  // namespace ember::ops
