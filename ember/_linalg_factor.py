"""torch.linalg's factorizations and solvers past inv/solve/cholesky, and torch's legacy
names for them. The native ops are declarations/ops/linalg_factor.yaml (LU, triangular
solves, the *_ex forms, geqrf/householder_product/ormqr, LDL); here are their torch
signatures (out=, named tuples, errors raised from `info`) and the compositions:
linalg.lu (lu_factor_ex + lu_unpack), cholesky_solve/cholesky_inverse (two triangular
solves), matrix_exp (Padé scaling and squaring), cond, tensorinv, tensorsolve.
Compositions of differentiable ops need no formula of their own.

ember.linalg imports the public names; TOP_LEVEL (ember.<name> and Tensor.<name>) and
FUNCTIONS (ember.<name> only) are merged into torch's namespace by ember/__init__.py.
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

from . import _C
from .autograd.grad_mode import no_grad
from .linalg import _into, _named, _structseq, _type_name, inv, matrix_norm, solve, svdvals
from . import _autocast

_lu_factor = _structseq("linalg_lu_factor", "_lu_factor", ["LU", "pivots"])
_lu = _structseq("linalg_lu", "_lu", ["P", "L", "U"])
_lu_with_info = _structseq("_lu_with_info", "_lu_with_info", ["LU", "pivots", "info"])
_ldl_factor = _structseq("linalg_ldl_factor", "_ldl_factor", ["LD", "pivots"])
_triangular_solve_t = _structseq("triangular_solve", "_triangular_solve_t", ["solution", "cloned_coefficient"])
RETURN_TYPES = (_lu_factor, _lu, _lu_with_info, _ldl_factor, _triangular_solve_t)


def _native(results, out):
    """A native op's named tuple, or with out=: its results written into out."""
    return results if out is None else _named(type(results), tuple(results), out)


def _out_message(fn):
    return lambda want, got: f"{fn}: Expected out tensor to have dtype {want}, but got {got} instead"


def _batch_prefix(info, e):
    return f"(Batch element {e}): " if info.dim() > 0 else ""


def _first_failure(info):
    """(index, value) of the first positive info, or None."""
    flat = info.reshape(-1)
    if flat.numel() == 0:
        return None
    bad = _C.nonzero(_C.gt(flat, 0))
    if bad.shape[0] == 0:
        return None
    e = int(bad[0, 0])
    return e, int(flat[e])


# ---------------------------------------------------------------- LU
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): the LU factorization with partial pivoting, packed; info > 0
    marks a U with an exact zero on its diagonal (check_errors raises instead).

    >>> ember.linalg.lu_factor_ex(ember.tensor([[1., 2.], [3., 4.]])).info.item()
    0
    """
    return _native(_C.linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors), out)


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of lu_factor_ex; RuntimeError for a singular matrix (whose LU would
    divide by zero in lu_solve).

    >>> ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]])).pivots.tolist()
    [2, 2]
    """
    LU, pivots, info = _C.linalg_lu_factor_ex(A, pivot=pivot)
    bad = _first_failure(info)
    if bad is not None:
        e, i = bad
        raise RuntimeError(f"torch.linalg.lu_factor: {_batch_prefix(info, e)}U[{i},{i}] is zero and using it on "
                           "lu_solve would result in a division by zero. If you still want to perform the "
                           "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _named(_lu_factor, (LU, pivots), out)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P @ L @ U: P a permutation, L unit lower triangular (m x k),
    U upper triangular (k x n), k = min(m, n). Never raises for a singular A.

    >>> ember.linalg.lu(ember.tensor([[1., 2.], [3., 4.]])).P.tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    LU, pivots, _ = _C.linalg_lu_factor_ex(A, pivot=pivot)
    return _named(_lu, _C.lu_unpack(LU, pivots), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (left=False: X A = B; adjoint: A^H for A) from lu_factor's LU, pivots.

    >>> ember.linalg.lu_solve(*ember.linalg.lu_factor(ember.tensor([[2., 0.], [0., 4.]])), ember.tensor([[2.], [2.]])).flatten().tolist()
    [1.0, 0.5]
    """
    X = _C.linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
    return X if out is None else _into(out, X, _out_message("linalg.lu_solve"))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from lu_factor's packed LU and pivots (empty tensors for what is not unpacked).

    >>> ember.lu_unpack(*ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]]))).L.tolist()
    [[1.0, 0.0], [0.3333333432674408, 1.0]]
    """
    return _native(_C.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots), out)


@_autocast.fp32
def _lu_legacy(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots), or (LU, pivots, infos) with get_infos; never raises for a
    singular matrix (deprecated in torch for linalg.lu_factor(_ex))."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    LU, pivots, info = _C.linalg_lu_factor_ex(A, pivot=pivot)
    results = (LU, pivots, info) if get_infos else (LU, pivots)
    if out is not None:
        if len(out) != len(results):
            raise TypeError(f"expected tuple of {len(results)} elements but got {len(out)}")
        return tuple(_into(o, r, _out_message("lu")) for o, r in zip(out, results))
    return _lu_with_info(results) if get_infos else results


@_autocast.fp32
def _lu_solve_legacy(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve(LU_data, LU_pivots, b)."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, b, out=out)


# ---------------------------------------------------------------- triangular and Cholesky solves
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (left=False: X A = B) for triangular A: only A's upper (upper=True)
    or lower triangle is read, its diagonal taken as ones when unitriangular. B is cast
    to A's dtype, as torch does.

    >>> ember.linalg.solve_triangular(ember.tensor([[2., 1.], [0., 4.]]), ember.tensor([[3.], [4.]]), upper=True).flatten().tolist()
    [1.0, 1.0]
    """
    if isinstance(A, _C.TensorBase) and isinstance(B, _C.TensorBase) and B.dtype != A.dtype \
            and A.is_floating_point() and B.is_floating_point():
        B = B.to(A.dtype)
    X = _C.linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)
    return X if out is None else _into(out, X, _out_message("linalg.solve_triangular"))


@_autocast.fp32
def _triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve: (solution of op(A) X = b, a copy of A broadcast to the batch);
    deprecated in torch for linalg.solve_triangular."""
    if b.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {b.dim()} "
                           "dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {A.dim()} "
                           "dimensions instead")
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    op = A.mT if transpose else A
    X = _C.linalg_solve_triangular(op, b, upper=upper != transpose, left=True, unitriangular=unitriangular)
    batch = tuple(X.shape[:-2])
    M = A.expand(batch + tuple(A.shape[-2:])).clone()
    if out is not None:
        return _triangular_solve_t(tuple(_into(o, r, _out_message("triangular_solve")) for o, r in zip(out, (X, M))))
    return _triangular_solve_t((X, M))


@_autocast.fp32
def _cholesky_solve(B, L, upper=False, *, out=None):
    """torch.cholesky_solve: X with A X = B for A = L L^H (upper: A = U^H U) given its
    Cholesky factor; two triangular solves, batch dims broadcast.

    >>> ember.cholesky_solve(ember.tensor([[4.], [2.]]), ember.tensor([[2., 0.], [0., 1.]])).flatten().tolist()
    [1.0, 2.0]
    """
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions instead")
    if B.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_type_name(B.dtype)} "
                           f"and A of type {_type_name(L.dtype)} instead.")
    if L.shape[-1] != L.shape[-2] or B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-2]} by "
                           f"{L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if upper:  # A = U^H U
        X = _C.linalg_solve_triangular(L, _C.linalg_solve_triangular(L.mH, B, upper=False), upper=True)
    else:  # A = L L^H
        X = _C.linalg_solve_triangular(L.mH, _C.linalg_solve_triangular(L, B, upper=False), upper=True)
    return X if out is None else _into(out, X, _out_message("cholesky_solve"))


@_autocast.fp32
def _cholesky_inverse(L, upper=False, *, out=None):
    """torch.cholesky_inverse: the inverse of A = L L^H (upper: U^H U) from its Cholesky factor.

    >>> ember.cholesky_inverse(ember.tensor([[2., 0.], [0., 1.]])).tolist()
    [[0.25, 0.0], [0.0, 1.0]]
    """
    if L.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they are {L.shape[-2]} by "
                           f"{L.shape[-1]} matrices")
    if L.dtype not in (_C.float32, _C.float64, _C.complex64, _C.complex128):
        raise NotImplementedError(f"\"cholesky_inverse_out_cpu\" not implemented for '{_type_name(L.dtype)}'")
    eye = _C.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    X = _cholesky_solve(eye.expand(L.shape), L, upper)
    return X if out is None else _into(out, X, _out_message("cholesky_inverse"))


@_autocast.fp32
def _cholesky_legacy(input, upper=False, *, out=None):
    """torch.cholesky (deprecated in torch for linalg.cholesky)."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\n"
                  "and\nU = torch.cholesky(A, upper=True)\nshould be replaced with\n"
                  "U = torch.linalg.cholesky(A).mH", UserWarning, stacklevel=2)
    L = _C.linalg_cholesky(input, upper=upper)
    return L if out is None else _into(out, L, _out_message("cholesky"))


# ---------------------------------------------------------------- the *_ex forms
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): linalg.cholesky with info > 0 (the order of the failing leading minor)
    instead of an error for a matrix that is not positive-definite.

    >>> ember.linalg.cholesky_ex(ember.tensor([[4., 2.], [2., 5.]])).L.tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    return _native(_C.linalg_cholesky_ex(A, upper=upper, check_errors=check_errors), out)


def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): linalg.inv with info > 0 instead of an error for a singular matrix.

    >>> ember.linalg.inv_ex(ember.tensor([[2., 0.], [0., 4.]])).inverse.diagonal().tolist()
    [0.5, 0.25]
    """
    return _native(_C.linalg_inv_ex(A, check_errors=check_errors), out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info): linalg.solve with info > 0 instead of an error for a singular A.

    >>> ember.linalg.solve_ex(ember.tensor([[2., 0.], [0., 4.]]), ember.tensor([2., 2.])).result.tolist()
    [1.0, 0.5]
    """
    return _native(_C.linalg_solve_ex(A, B, left=left, check_errors=check_errors), out)


# ---------------------------------------------------------------- Householder, LDL
def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i below the
    diagonal of A's column i (unit head): Q from geqrf's (a, tau).

    >>> ember.linalg.householder_product(*ember.geqrf(ember.tensor([[3., 0.], [4., 1.]], dtype=ember.float64))).abs().round(decimals=2).tolist()
    [[0.6, 0.8], [0.8, 0.6]]
    """
    if not _needs_grad(A, tau):
        Q = _C.linalg_householder_product(A, tau)
    else:
        with no_grad():
            _C.linalg_householder_product(A, tau)  # checks the arguments
        eye = _C.eye(A.shape[-2], A.shape[-1], dtype=A.dtype, device=A.device)
        Q = _apply_reflectors(A, tau, eye.expand(A.shape), True, False)
    return Q if out is None else _into(out, Q, _out_message("linalg.householder_product"))


@_autocast.fp32
def _orgqr(input, tau):
    """torch.orgqr: linalg.householder_product."""
    return householder_product(input, tau)


def _needs_grad(*tensors):
    return _C.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _apply_reflectors(A, tau, C, left, transpose):
    """op(Q) C (left) or C op(Q), Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i below the
    diagonal of A's column i with a unit head: one rank-1 update per reflector, all
    differentiable (the gradients of householder_product and ormqr; LAPACK's blocked
    kernels compute the values). transpose: op(Q) = Q^H, whose factors are H_i^H =
    I - conj(tau_i) v_i v_i^H (the transpose for real matrices)."""
    k = tau.shape[-1]
    rows = A.shape[-2]
    V = _C.tril(A.narrow(-1, 0, k), -1) + _C.eye(rows, k, dtype=A.dtype, device=A.device)
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        v = V.narrow(-1, i, 1)  # (..., rows, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)  # (..., 1, 1)
        if transpose and t.is_complex():
            t = _C.conj(t)
        C = C - t * (v @ (v.mH @ C)) if left else C - t * ((C @ v) @ v.mH)
    return C


def _ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """torch.ormqr: other multiplied by Q (from geqrf's input and tau) without forming Q.

    >>> ember.ormqr(*ember.geqrf(ember.tensor([[3., 0.], [4., 1.]], dtype=ember.float64)), ember.eye(2, dtype=ember.float64)).abs().round(decimals=2).tolist()
    [[0.6, 0.8], [0.8, 0.6]]
    """
    if not _needs_grad(input, tau, other):
        R = _C.ormqr(input, tau, other, left, transpose)
    else:
        with no_grad():
            _C.ormqr(input, tau, other, left, transpose)  # checks the arguments
        R = _apply_reflectors(input, tau, other, left, transpose)
    return R if out is None else _into(out, R, _out_message("ormqr"))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): the Bunch-Kaufman LDL^T factorization of symmetric A (read from
    its lower triangle), as LAPACK's sytrf packs it.

    >>> ember.linalg.ldl_factor_ex(ember.tensor([[4., 2.], [2., 3.]])).pivots.tolist()
    [1, 2]
    """
    return _native(_C.linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=check_errors), out)


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots) of ldl_factor_ex; LinAlgError when D is singular.

    >>> ember.linalg.ldl_factor(ember.tensor([[4., 2.], [2., 3.]])).LD.tolist()
    [[4.0, 0.0], [0.5, 2.0]]
    """
    LD, pivots, _ = _C.linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return _named(_ldl_factor, (LD, pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from ldl_factor's LD and pivots.

    >>> ember.linalg.ldl_solve(*ember.linalg.ldl_factor(ember.tensor([[4., 2.], [2., 3.]])), ember.tensor([[6.], [5.]])).flatten().tolist()
    [1.0, 1.0]
    """
    X = _C.linalg_ldl_solve(LD, pivots, B, hermitian=hermitian)
    return X if out is None else _into(out, X, _out_message("linalg.ldl_solve"))


# ---------------------------------------------------------------- matrix_exp
def _pade_coefficients(m):
    """b_j = (2m - j)! m! / ((2m)! j! (m - j)!), j = 0..m: the [m/m] Padé approximant of exp."""
    f = math.factorial
    return [float(Fraction(f(2 * m - j) * f(m), f(2 * m) * f(j) * f(m - j))) for j in range(m + 1)]


_PADE = {m: _pade_coefficients(m) for m in (3, 5, 7, 9, 13)}
# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# the largest 1-norm for which the [m/m] approximant is exact to the unit roundoff.
_THETA = {_C.float64: ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
                       (9, 2.097847961257068e0), (13, 5.371920351148152e0)),
          _C.float32: ((3, 4.258730016922831e-1), (5, 1.880152677804762e0), (7, 3.925724783138660e0))}


def _pade(A, m, eye):
    """(U, V): the odd and even parts of the [m/m] Padé numerator at A."""
    b = _PADE[m]
    A2 = A @ A
    if m == 13:
        A4 = A2 @ A2
        A6 = A4 @ A2
        U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
        V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
        return U, V
    powers = [eye, A2]
    for _ in range(2, m // 2 + 1):
        powers.append(powers[-1] @ A2)
    U = A @ sum(b[2 * i + 1] * P for i, P in enumerate(powers))
    V = sum(b[2 * i] * P for i, P in enumerate(powers))
    return U, V


def matrix_exp(A):
    """The matrix exponential of each square matrix of A: Padé approximation with scaling
    and squaring (Higham 2005), chosen by the largest 1-norm of the batch. Differentiable
    through its products and one solve.

    >>> ember.linalg.matrix_exp(ember.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(A.dtype)}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.dtype in (_C.float16, _C.bfloat16):  # computed in float32, as torch's CPU kernel does
        return matrix_exp(A.to(_C.float32)).to(A.dtype)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    norm = float(A.detach().abs().sum(-2).amax())  # the largest 1-norm (column sums)
    eye = _C.eye(n, dtype=A.dtype, device=A.device)
    thetas = _THETA[A.real.dtype]  # a complex A: its part dtype's
    s = 0
    for m, theta in thetas:
        if norm <= theta:
            break
    else:
        m, theta = thetas[-1]
        s = max(0, math.ceil(math.log2(norm / theta))) if math.isfinite(norm) else 0
    X = A / 2.0 ** s if s else A
    U, V = _pade(X, m, eye)
    R = solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R


# ---------------------------------------------------------------- compositions
_COND_ORDS = (None, "fro", "nuc", float("inf"), float("-inf"), 1, -1, 2, -2)


@_autocast.fp32
def cond(A, p=None, *, out=None):
    """The condition number of each matrix in the p-norm: for p None, 2 or -2 the ratio
    of extreme singular values (any shape), for 'nuc' from the singular values too,
    otherwise norm(A) * norm(A^-1) (square A; inf when A is singular).

    >>> ember.linalg.cond(ember.tensor([[2., 0.], [0., 1.]])).item()
    2.0
    """
    if out is not None:
        return _into(out, cond(A, p), _out_message("linalg.cond"))
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        S = svdvals(A)
        if S.shape[-1] == 0:
            return _C.zeros(S.shape[:-1], dtype=S.dtype, device=S.device)
        first, last = S.narrow(-1, 0, 1).squeeze(-1), S.narrow(-1, S.shape[-1] - 1, 1).squeeze(-1)
        return first / last if p != -2 else last / first
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] == 0:
        return _C.zeros(A.shape[:-2], dtype=A.dtype, device=A.device)
    if p == "nuc":  # ||A||_* ||A^-1||_*: the singular values' sum times their reciprocals' sum
        S = svdvals(A)
        return S.sum(-1) * S.reciprocal().sum(-1)
    inverse, info = _C.linalg_inv_ex(A)
    c = matrix_norm(A, p) * matrix_norm(inverse, p)
    return _C.where(_C.gt(info, 0), _C.full_like(c, float("inf")), c)


def _prod(shape):
    p = 1
    for s in shape:
        p *= s
    return p


@_autocast.fp32
def tensorinv(A, ind=2, *, out=None):
    """The inverse of A under tensordot over ind dims: A viewed as a
    prod(shape[:ind]) x prod(shape[ind:]) matrix, inverted, shaped shape[ind:] + shape[:ind].

    >>> ember.linalg.tensorinv(ember.eye(4).reshape(4, 2, 2), ind=1).shape
    ember.Size([2, 2, 4])
    """
    if out is not None:
        return _into(out, tensorinv(A, ind), _out_message("linalg.tensorinv"))
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if _prod(rows) != _prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_prod(cols)} != {_prod(rows)}")
    return inv(A.reshape(_prod(rows), _prod(cols))).reshape(cols + rows)


@_autocast.fp32
def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B: A's dims listed in dims moved last first, then
    A viewed as a prod(B.shape) x prod(the rest) matrix.

    >>> ember.linalg.tensorsolve(ember.eye(6).reshape(2, 3, 6), ember.ones(2, 3)).shape
    ember.Size([6])
    """
    if out is not None:
        return _into(out, tensorsolve(A, B, dims), _out_message("linalg.tensorsolve"))
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    rest = tuple(A.shape[B.dim():])
    lead = B.numel()
    if lead != _prod(rest):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {_prod(rest)} != {lead}")
    return solve(A.reshape(lead, _prod(rest)), B.reshape(lead)).reshape(rest)


# torch's top-level names: these also become Tensor methods (self first) ...
TOP_LEVEL = {"lu": _lu_legacy, "lu_solve": _lu_solve_legacy, "triangular_solve": _triangular_solve,
             "cholesky_solve": _cholesky_solve, "cholesky_inverse": _cholesky_inverse, "cholesky": _cholesky_legacy,
             "orgqr": _orgqr, "ormqr": _ormqr, "matrix_exp": matrix_exp}
# ... and these are functions only
FUNCTIONS = {"lu_unpack": lu_unpack}  # vander, linalg.vander/vecdot/diagonal/matmul: ember/_ops_shape.py
