// The activations that are more than one elementwise kernel entry
// (declarations/ops/nn_activation.yaml): the others are entries of the unary and binary
// families (kernels/activation_impl.h) with generated bodies.
#include "ops/elementwise.h"

namespace ember::ops {

using kernels::BinaryOp;
using kernels::UnaryOp;

Tensor gelu(const Tensor& self, const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", Runtime,
              "approximate argument must be either none or tanh.");
  return unary(approximate == "tanh" ? UnaryOp::gelu_tanh : UnaryOp::gelu,
               {"GeluKernelImpl", Promote::Same, DTypes::Floating}, self, {}, Out{});
}

Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", Runtime,
              "approximate argument must be either none or tanh.");
  return binary(approximate == "tanh" ? BinaryOp::gelu_tanh_backward : BinaryOp::gelu_backward,
                {"GeluBackwardKernelImpl", Promote::Common, DTypes::Floating}, grad_output, self, {}, Out{});
}

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val, const Out& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, Runtime, "Bool inputs not supported for hardtanh");
  return unary(UnaryOp::hardtanh, {"hardtanh", Promote::Same, DTypes::NoBool}, self, {min_val, max_val}, out);
}

}  // namespace ember::ops
