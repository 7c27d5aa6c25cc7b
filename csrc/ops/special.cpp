// The special functions' hand-written op bodies: polygamma and mvlgamma check their int
// argument, then run their entry like the generated bodies (ops_elementwise.cpp). The
// kernels are kernels/special.cpp.
#include "core/error.h"
#include "ops/elementwise.h"
#include "ops_decl.h"

namespace ember::ops {

Tensor polygamma(int64_t n, const Tensor& self, const Out& out) {
  EMBER_CHECK(n >= 0, Runtime, "polygamma(n, x) does not support negative n.");
  return special_map(kernels::special::SpecialOp::polygamma, {"polygamma", Promote::Float, DTypes::All}, {&self},
                     {Scalar(n)}, out);
}

Tensor mvlgamma(const Tensor& self, int64_t p, const Out& out) {
  EMBER_CHECK(p >= 1, Runtime, "p has to be greater than or equal to 1");
  // each element sums p lgammas (torch allocates p of them, and fails for a huge p)
  EMBER_CHECK(p <= (int64_t(1) << 24), Runtime, "mvlgamma: p = ", p, " is too large");
  return special_map(kernels::special::SpecialOp::mvlgamma, {"mvlgamma", Promote::Float, DTypes::All}, {&self},
                     {Scalar(p)}, out);
}

}  // namespace ember::ops
