// Backward helpers of the factorizations (declarations/ops/linalg_factor.yaml), written
// with ember::api so that create_graph records them. A = P L U throughout; for a square
// A the LU gradient is P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H, and the wide and
// tall cases fold the extra block of U (or L) into that square core first. Written with
// conjugate transposes, the formulas hold for complex matrices too (torch's conjugate
// Wirtinger convention; mH is mT for real ones).
#include "autograd/formulas.h"
#include <algorithm>

namespace ember::api {
namespace {

// X with op(A) X = B (left) or X op(A) = B for triangular A.
Tensor tri_solve(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit = false) {
  return linalg_solve_triangular(A, B, upper, left, unit);
}

std::vector<int64_t> batch_of(const Tensor& t) { return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - 2); }

Tensor zero_block(const Tensor& like, int64_t r, int64_t c) {
  std::vector<int64_t> s = batch_of(like);
  s.insert(s.end(), {r, c});
  return zeros(s, like.dtype());
}

}  // namespace

Tensor lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots) {
  const int64_t m = LU.sizes()[LU.dim() - 2], n = LU.sizes()[LU.dim() - 1], k = std::min(m, n);
  if (LU.numel() == 0) return zeros_of(LU.sizes(), LU.dtype());
  auto [P, L, U] = lu_unpack(LU, pivots, true, true);
  if (m == n) {
    Tensor phi = tril(matmul(mH(L), tril(grad, -1)), -1) + triu(matmul(triu(grad, 0), mH(U)), 0);
    Tensor X = tri_solve(mH(L), phi, true, true, true);  // L^-T phi
    return matmul(P, tri_solve(mH(U), X, false, false));  // ... U^-T
  }
  if (m < n) {  // U = [U1 U2]: U2 = L^-1 P^T A2 also moves with L
    Tensor g1 = narrow(grad, -1, 0, k), gU2 = narrow(grad, -1, k, n - k);
    Tensor U1 = narrow(U, -1, 0, k), U2 = narrow(U, -1, k, n - k);
    Tensor phi = tril(matmul(mH(L), tril(g1, -1)) - matmul(gU2, mH(U2)), -1) + triu(matmul(triu(g1, 0), mH(U1)), 0);
    Tensor Z = cat({tri_solve(mH(U1), phi, false, false), gU2}, -1);
    return matmul(P, tri_solve(mH(L), Z, true, true, true));
  }
  // m > n: L = [L1; L2], L2 = (P^T A)_2 U^-1 also moves with U
  Tensor g1 = narrow(grad, -2, 0, k), gL2 = narrow(grad, -2, k, m - k);
  Tensor L1 = narrow(L, -2, 0, k), L2 = narrow(L, -2, k, m - k);
  Tensor phi = tril(matmul(mH(L1), tril(g1, -1)), -1) + triu(matmul(triu(g1, 0), mH(U)) - matmul(mH(L2), gL2), 0);
  Tensor Z = cat({tri_solve(mH(L1), phi, true, true, true), gL2}, -2);
  return matmul(P, tri_solve(mH(U), Z, false, false));
}

Tensor lu_solve_backward_LU(const Tensor& grad, const Tensor& LU, const Tensor& pivots, const Tensor& X, bool left,
                            bool adjoint) {
  Tensor gB = linalg_lu_solve(LU, pivots, grad, left, !adjoint);
  Tensor gA = left ? (adjoint ? -matmul(X, mH(gB)) : -matmul(gB, mH(X)))
                   : (adjoint ? -matmul(mH(gB), X) : -matmul(mH(X), gB));
  // dA = P (dL U + L dU)
  auto [P, L, U] = lu_unpack(LU, pivots, true, true);
  Tensor R = matmul(mH(P), gA);
  return tril(matmul(R, mH(U)), -1) + triu(matmul(mH(L), R), 0);
}

Tensor lu_unpack_backward(const Tensor& gL, const Tensor& gU, IntList LU_sizes) {
  const int64_t m = LU_sizes[LU_sizes.size() - 2], n = LU_sizes[LU_sizes.size() - 1], k = std::min(m, n);
  Tensor g;  // L and U are empty (1-D) when not unpacked: no gradient through them
  if (gL.defined() && gL.dim() >= 2) {  // m x k, strictly lower
    g = tril(gL, -1);
    if (k < n) g = cat({g, zero_block(gL, m, n - k)}, -1);
  }
  if (gU.defined() && gU.dim() >= 2) {  // k x n, upper
    Tensor t = triu(gU, 0);
    if (k < m) t = cat({t, zero_block(gU, m - k, n)}, -2);
    g = g.defined() ? g + t : t;
  }
  return g;  // undefined when only P was used: no gradient
}

Tensor solve_triangular_backward_A(const Tensor& grad, const Tensor& A, const Tensor& X, bool upper, bool left,
                                   bool unitriangular) {
  Tensor gB = tri_solve(mH(A), grad, !upper, left, unitriangular);
  Tensor gA = left ? -matmul(gB, mH(X)) : -matmul(mH(X), gB);
  return upper ? triu(gA, unitriangular ? 1 : 0) : tril(gA, unitriangular ? -1 : 0);
}

}  // namespace ember::api
