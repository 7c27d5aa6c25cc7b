"""The factorizations and solvers of declarations/ops/linalg_factor.yaml and
ember/_linalg_factor.py against torch: LU (lu_factor(_ex), lu, lu_solve, lu_unpack, the
legacy torch.lu/lu_solve), triangular and Cholesky solves (solve_triangular,
triangular_solve, cholesky_solve, cholesky_inverse, cholesky), the *_ex forms, Householder
(geqrf, householder_product/orgqr, ormqr), LDL, matrix_exp, cond, tensorinv,
tensorsolve, vander, vecdot, diagonal, matmul: values, dtypes, shapes, batch
broadcasting, non-contiguous and empty inputs, errors, and gradients (gradcheck in float64)."""
from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import assert_same, torch

# declared ops this module compares with torch (see test_op_coverage.py)
TESTED_OPS = {
    "linalg_lu_factor_ex", "linalg_lu_solve", "lu_unpack", "linalg_solve_triangular", "linalg_cholesky_ex",
    "linalg_inv_ex", "linalg_solve_ex", "geqrf", "linalg_householder_product", "ormqr", "linalg_ldl_factor_ex",
    "linalg_ldl_solve",
}

TOL = {"float32": 2e-4, "float64": 1e-10}
DTYPES = ["float32", "float64"]


def pair(t):
    """(ember twin, torch tensor) of a torch tensor, keeping its strides."""
    e = ember.tensor(t.contiguous().tolist(), dtype=getattr(ember, str(t.dtype).split(".")[1])) if t.numel() else \
        ember.zeros(tuple(t.shape), dtype=getattr(ember, str(t.dtype).split(".")[1]))
    if t.dim() >= 2 and not t.is_contiguous():  # the transposed layout torch's has
        e = e.mT.contiguous().mT
    return e, t


def rand(*shape, dtype="float64", seed=0, layout="contiguous"):
    g = torch.Generator().manual_seed(seed + sum(shape) * 7 + len(shape))
    if layout == "transposed":
        return torch.randn(*shape[:-2], shape[-1], shape[-2], generator=g, dtype=getattr(torch, dtype)).mT
    return torch.randn(*shape, generator=g, dtype=getattr(torch, dtype))


def spd(*shape, dtype="float64", seed=0):
    a = rand(*shape, dtype="float64", seed=seed)
    return (a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)).to(getattr(torch, dtype))


def both(fn, *tensors, tol=None, dtype="float64"):
    """fn(lib, *tensors) on ember (twins) and torch; compares the results."""
    expected = fn(torch, *tensors)
    got = fn(ember, *[pair(t)[0] if isinstance(t, torch.Tensor) else t for t in tensors])
    assert_same(got, expected, tol=TOL[dtype] if tol is None else tol)
    return got


def same_error(fn, *tensors, exc=RuntimeError, match=None):
    """torch and ember both raise exc (message matching `match` in ember's)."""
    with pytest.raises(exc):
        fn(torch, *tensors)
    with pytest.raises(exc, match=match):
        fn(ember, *[pair(t)[0] if isinstance(t, torch.Tensor) else t for t in tensors])


# ---------------------------------------------------------------- LU
LU_SHAPES = [(3, 3), (4, 2), (2, 5), (2, 3, 3), (2, 1, 4, 3), (0, 0), (0, 3, 3), (3, 0), (1, 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_factor(shape, dtype):
    A = rand(*shape, dtype=dtype)
    both(lambda lib, a: lib.linalg.lu_factor_ex(a), A, dtype=dtype)
    both(lambda lib, a: tuple(lib.linalg.lu_factor(a)), A, dtype=dtype)
    both(lambda lib, a: tuple(lib.linalg.lu(a)), A, dtype=dtype)
    both(lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a))), A, dtype=dtype)


def test_lu_layouts_and_return_types():
    A = rand(2, 4, 4, layout="transposed")
    both(lambda lib, a: tuple(lib.linalg.lu_factor(a)), A)
    r = ember.linalg.lu_factor_ex(pair(A)[0])
    assert type(r).__name__ == "linalg_lu_factor_ex" and r.pivots.dtype == ember.int32 and r.info.shape == (2,)
    assert type(ember.linalg.lu(pair(A)[0])).__name__ == "linalg_lu"
    assert ember.linalg.lu_factor(pair(A)[0]).LU.shape == (2, 4, 4)
    both(lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a), unpack_data=False)), A)
    both(lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a), unpack_pivots=False)), A)
    # singular: info, never an error from lu / lu_factor_ex / torch.lu
    S = torch.tensor([[[1., 2.], [2., 4.]], [[1., 0.], [0., 1.]]], dtype=torch.float64)
    both(lambda lib, s: lib.linalg.lu_factor_ex(s), S)
    both(lambda lib, s: tuple(lib.linalg.lu(s)), S)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib, s: tuple(lib.lu(s)), S)
        both(lambda lib, s: tuple(lib.lu(s, get_infos=True)), S)
        both(lambda lib, s: tuple(s.lu()), S)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve(left, adjoint):
    A = rand(2, 1, 3, 3, dtype="float64")
    B = rand(4, 3, 2, dtype="float64", seed=1) if left else rand(4, 2, 3, dtype="float64", seed=1)
    both(lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=left, adjoint=adjoint), A, B)
    Bt = rand(3, 5, dtype="float32", layout="transposed") if left else rand(5, 3, dtype="float32", layout="transposed")
    both(lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=left, adjoint=adjoint),
         rand(3, 3, dtype="float32"), Bt, dtype="float32")


@pytest.mark.filterwarnings("ignore:torch.lu_solve is deprecated")
def test_lu_solve_legacy_and_empty():
    A, b = rand(2, 3, 3), rand(2, 3, 2, seed=3)
    both(lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a)), A, b)
    both(lambda lib, a, b: b.lu_solve(*lib.linalg.lu_factor(a)), A, b)
    both(lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), rand(0, 0), rand(0, 2))
    both(lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), rand(0, 3, 3), rand(0, 3, 2))
    both(lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), rand(3, 3), rand(3, 0))


# ---------------------------------------------------------------- triangular and Cholesky solves
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(upper, left, unit):
    A = rand(2, 1, 3, 3) + 3 * torch.eye(3, dtype=torch.float64)  # the other triangle is never read
    B = rand(4, 3, 2, seed=1) if left else rand(4, 2, 3, seed=1)
    both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit), A, B)
    At = rand(3, 3, dtype="float32", layout="transposed") + 3 * torch.eye(3)
    both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit),
         At, rand(3, 3, dtype="float32", layout="transposed", seed=2), dtype="float32")


def test_solve_triangular_edges():
    both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True), rand(0, 0), rand(0, 4))
    both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True), rand(0, 3, 3), rand(3, 1))
    both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False), rand(3, 3), rand(3, 0))
    # a zero on the diagonal: inf/nan, no error; B cast to A's dtype
    both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
         torch.tensor([[1., 2.], [0., 0.]]), torch.tensor([[1.], [1.]]), dtype="float32")
    both(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
         rand(3, 3, dtype="float32") + 3 * torch.eye(3),
         rand(3, 1, seed=1), dtype="float32")


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_triangular_solve_legacy(upper, transpose):
    A = rand(3, 3) + 3 * torch.eye(3, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib, b, a: tuple(lib.triangular_solve(b, a, upper, transpose)), rand(4, 3, 2, seed=1), A)
        both(lambda lib, b, a: tuple(b.triangular_solve(a, upper=upper, transpose=transpose, unitriangular=True)),
             rand(3, 2, seed=1), A)


@pytest.mark.parametrize("upper", [True, False])
def test_cholesky_solve_inverse(upper):
    A = spd(2, 3, 3)
    F = torch.linalg.cholesky(A, upper=upper)
    both(lambda lib, b, f: lib.cholesky_solve(b, f, upper), rand(4, 1, 3, 2, seed=1), F)
    both(lambda lib, b, f: b.cholesky_solve(f, upper=upper), rand(2, 3, 2, seed=1), F)
    both(lambda lib, f: lib.cholesky_inverse(f, upper), F)
    both(lambda lib, f: f[0].cholesky_inverse(upper=upper), F)
    both(lambda lib, f: lib.cholesky_inverse(f, upper), rand(0, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib, a: lib.cholesky(a, upper), A)
        both(lambda lib, a: a.cholesky(), A)


# ---------------------------------------------------------------- the *_ex forms
def test_ex_forms():
    A = spd(2, 3, 3)
    both(lambda lib, a: lib.linalg.cholesky_ex(a), A)
    both(lambda lib, a: lib.linalg.cholesky_ex(a, upper=True), A)
    both(lambda lib, a: lib.linalg.inv_ex(a), A)
    both(lambda lib, a, b: lib.linalg.solve_ex(a, b), A, rand(2, 3, seed=1))
    both(lambda lib, a, b: lib.linalg.solve_ex(a, b, left=False), A, rand(4, 1, 2, 3, seed=1))
    both(lambda lib, a: lib.linalg.inv_ex(a), rand(0, 2, 2))
    bad = torch.tensor([[[1., 0.], [0., 1.]], [[1., 2.], [2., 1.]]], dtype=torch.float64)  # not PD / singular
    sing = torch.tensor([[[1., 0.], [0., 1.]], [[1., 2.], [2., 4.]]], dtype=torch.float64)
    both(lambda lib, a: lib.linalg.cholesky_ex(a).info, bad)
    both(lambda lib, a: lib.linalg.inv_ex(a).info, sing)
    both(lambda lib, a: lib.linalg.solve_ex(a, a).info, sing)
    E = ember.linalg.LinAlgError
    with pytest.raises(E, match=r"linalg.cholesky_ex: \(Batch element 1\): .*leading minor of order 2"):
        ember.linalg.cholesky_ex(pair(bad)[0], check_errors=True)
    with pytest.raises(E, match=r"linalg.inv_ex: \(Batch element 1\): The diagonal element 2 is zero"):
        ember.linalg.inv_ex(pair(sing)[0], check_errors=True)
    with pytest.raises(E, match="torch.linalg.solve_ex: .*singular"):
        ember.linalg.solve_ex(pair(sing)[0], pair(sing)[0], check_errors=True)
    r = ember.linalg.inv_ex(pair(A)[0])
    assert type(r).__name__ == "linalg_inv_ex" and r.info.dtype == ember.int32


# ---------------------------------------------------------------- Householder
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 4, 2), (0, 3), (0, 2, 2)])
def test_geqrf_householder(shape):
    A = rand(*shape)
    both(lambda lib, a: tuple(lib.geqrf(a)), A)
    if shape[-2] >= shape[-1]:
        both(lambda lib, a: lib.linalg.householder_product(*lib.geqrf(a)), A)
        both(lambda lib, a: lib.orgqr(*a.geqrf()), A)
        both(lambda lib, a: a.orgqr(lib.geqrf(a)[1]), A)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr(left, transpose):
    A = rand(2, 4, 3)
    C = rand(2, 4, 5, seed=1) if left else rand(2, 5, 4, seed=1)
    both(lambda lib, a, c: lib.ormqr(*lib.geqrf(a), c, left, transpose), A, C)
    both(lambda lib, a, c: a.geqrf()[0].ormqr(a.geqrf()[1], c, left=left, transpose=transpose), A, C)


# ---------------------------------------------------------------- LDL
def test_ldl():
    A = rand(2, 4, 4)
    A = A + A.mT  # symmetric, indefinite
    both(lambda lib, a: lib.linalg.ldl_factor_ex(a), A)
    both(lambda lib, a: tuple(lib.linalg.ldl_factor(a)), A)
    both(lambda lib, a: tuple(lib.linalg.ldl_factor(a, hermitian=True)), A)
    both(lambda lib, a, b: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(a), b), A, rand(2, 4, 2, seed=1))
    # broadcast batch dims (torch 2.13 crashes on these: compared with its result on expanded factors)
    LD, piv = torch.linalg.ldl_factor(A)
    B = rand(3, 2, 4, 2, seed=1)
    expected = torch.linalg.ldl_solve(LD.expand(3, 2, 4, 4), piv.expand(3, 2, 4), B)
    assert_same(ember.linalg.ldl_solve(*ember.linalg.ldl_factor(pair(A)[0]), pair(B)[0]), expected, tol=1e-10)
    both(lambda lib, a, b: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(a), b), rand(0, 0), rand(0, 2))
    both(lambda lib, a: lib.linalg.ldl_factor_ex(a).info, torch.zeros(3, 3))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.ldl_factor(ember.zeros(3, 3))


# ---------------------------------------------------------------- matrix_exp and compositions
@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_exp(dtype):
    # norms from 1e-3 to 50: every Padé degree, and scaling and squaring
    A = torch.stack([rand(4, 4, seed=s) * c for s, c in enumerate((1e-3, 0.05, 0.3, 1.0, 3.0, 50.0))])
    A = A.to(getattr(torch, dtype))
    got = ember.linalg.matrix_exp(pair(A)[0])
    expected = torch.linalg.matrix_exp(A)
    assert got.dtype == getattr(ember, dtype) and tuple(got.shape) == tuple(A.shape)
    for g, e in zip(got, expected):  # each matrix on its own (one batch takes the largest norm's steps)
        scale = float(e.abs().max()) + 1
        error = float((torch.tensor(g.tolist(), dtype=torch.float64) - e.double()).abs().max())
        assert error <= TOL[dtype] * scale * 10
    for a in (A[0], A[3], rand(0, 0), rand(2, 0, 0), rand(3, 1, 1)):
        both(lambda lib, a: lib.linalg.matrix_exp(a), a.to(getattr(torch, dtype)), dtype=dtype)
    both(lambda lib, a: lib.matrix_exp(a), A[2], dtype=dtype)
    both(lambda lib, a: a.matrix_exp(), A[2].mT, dtype=dtype)


@pytest.mark.parametrize("p", [None, "fro", "nuc", float("inf"), float("-inf"), 1, -1, 2, -2])
def test_cond(p):
    A = rand(2, 3, 3)
    both(lambda lib, a: lib.linalg.cond(a, p), A)
    both(lambda lib, a: lib.linalg.cond(a, p), rand(2, 0, 0))
    if p in (None, 2, -2):
        both(lambda lib, a: lib.linalg.cond(a, p), rand(4, 3))
    elif p != "nuc":  # singular: inf (the SVD-based ones give a rounding-dependent huge number)
        both(lambda lib, a: lib.linalg.cond(a, p), torch.tensor([[1., 2.], [2., 4.]], dtype=torch.float64))


def test_tensorinv_tensorsolve():
    A = rand(4, 2, 2) + torch.eye(4, dtype=torch.float64).reshape(4, 2, 2)
    both(lambda lib, a: lib.linalg.tensorinv(a, ind=1), A)
    A6 = rand(6, 2, 3) + 3 * torch.eye(6, dtype=torch.float64).reshape(6, 2, 3)
    both(lambda lib, a: lib.linalg.tensorinv(a.reshape(2, 3, 6), ind=2), A6)
    both(lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(2, 3, 6), b), A6, rand(2, 3, seed=1))
    both(lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(6, 2, 3).permute(1, 2, 0), b, dims=(0, 1)),
         A6, rand(6, seed=1))


def test_vander_vecdot_diagonal_matmul():
    x = torch.tensor([1., -2., 3., 0.5], dtype=torch.float64)
    both(lambda lib, x: lib.linalg.vander(x), x)
    both(lambda lib, x: lib.linalg.vander(x, N=6), rand(2, 3))
    both(lambda lib, x: lib.linalg.vander(x), torch.tensor([1, 2, 3], dtype=torch.int32))
    both(lambda lib, x: lib.vander(x), x)
    both(lambda lib, x: lib.vander(x, N=3, increasing=True), torch.tensor([1, 2, 3]))
    both(lambda lib, x, y: lib.linalg.vecdot(x, y), rand(2, 1, 3), rand(4, 3, seed=1))
    both(lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0), rand(3, 2, layout="transposed"), rand(3, 1, seed=1))
    both(lambda lib, x, y: lib.linalg.vecdot(x, y), rand(0, 3), rand(3, seed=1))
    both(lambda lib, a: lib.linalg.diagonal(a, offset=1), rand(2, 3, 4))
    both(lambda lib, a: lib.linalg.diagonal(a, dim1=0, dim2=2), rand(2, 3, 4))
    both(lambda lib, a, b: lib.linalg.matmul(a, b), rand(2, 3, 4), rand(4, 5, seed=1))


def test_out_arguments():
    A = pair(rand(3, 3))[0]
    LU, piv = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int32)
    r = ember.linalg.lu_factor(A, out=(LU, piv))
    assert r.LU is LU and LU.shape == (3, 3) and piv.tolist() == ember.linalg.lu_factor(A).pivots.tolist()
    X = ember.empty(3, 1, dtype=ember.float64)
    assert ember.linalg.solve_triangular(A, ember.ones(3, 1, dtype=ember.float64), upper=True, out=X) is X
    with pytest.raises(RuntimeError):
        ember.linalg.lu_solve(*ember.linalg.lu_factor(A), ember.ones(3, 1, dtype=ember.float64),
                              out=ember.empty(0, dtype=ember.float32))


# ---------------------------------------------------------------- errors
A3 = torch.randn(3, 3, dtype=torch.float64)
ERRORS = [
    (lambda lib: lib.linalg.lu_factor(lib.ones(3)), RuntimeError, "2 or more dimensions"),
    (lambda lib: lib.linalg.lu_factor(lib.ones(3, 3, dtype=lib.int64)), NotImplementedError, "lu_cpu"),
    (lambda lib: lib.linalg.lu_factor(lib.ones(3, 3), pivot=False), RuntimeError, "without pivoting"),
    (lambda lib: lib.linalg.lu_factor(lib.zeros(2, 3, 3)), RuntimeError, r"\(Batch element 0\): U\[1,1\] is zero"),
    (lambda lib: lib.linalg.lu_factor_ex(lib.zeros(3, 3), check_errors=True), RuntimeError, "lu_factor_ex"),
    (lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(4, 1)), RuntimeError,
     r"AX = B \(3x3 and 4x1\)"),
    (lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(3)), RuntimeError,
     "at least 2 dimensions"),
    (lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(3)), lib.ones(3, 1, dtype=lib.float64)),
     RuntimeError, "same dtype"),
    (lambda lib: lib.linalg.lu_solve(lib.eye(3), lib.ones(3, dtype=lib.int64), lib.ones(3, 1)), RuntimeError,
     "int32"),
    (lambda lib: lib.linalg.lu_solve(lib.eye(3), lib.ones(2, dtype=lib.int32), lib.ones(3, 1)), RuntimeError,
     "Number of pivots"),
    (lambda lib: lib.linalg.lu_solve(lib.eye(3), lib.tensor([5, 1, 1], dtype=lib.int32), lib.ones(3, 1)),
     None, "pivots"),
    (lambda lib: lib.linalg.lu_solve(lib.ones(3, 2), lib.ones(2, dtype=lib.int32), lib.ones(3, 1)), RuntimeError,
     "square"),
    (lambda lib: lib.lu_unpack(lib.eye(3), lib.ones(3, dtype=lib.int64)), RuntimeError, "int32"),
    (lambda lib: lib.lu_unpack(lib.eye(3), lib.tensor([5, 1, 1], dtype=lib.int32)), RuntimeError,
     "between 1 and LU.size"),
    (lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(3), upper=True), RuntimeError,
     "at least 2 dimensions"),
    (lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(4, 1), upper=True), RuntimeError, "AX = B"),
    (lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(4, 2), upper=True, left=False), RuntimeError,
     "XA = B"),
    (lambda lib: lib.linalg.solve_triangular(lib.ones(3, 2), lib.ones(3, 1), upper=True), RuntimeError, "square"),
    (lambda lib: lib.linalg.solve_triangular(lib.eye(3, dtype=lib.int64), lib.ones(3, 1, dtype=lib.int64),
                                             upper=True), NotImplementedError, "triangular_solve_cpu"),
    (lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(3, 1)), TypeError, None),
    (lambda lib: lib.linalg.solve_triangular(lib.ones(2, 3, 3), lib.ones(4, 3, 1), upper=True), RuntimeError,
     "must match"),
    (lambda lib: lib.triangular_solve(lib.ones(3), lib.eye(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.cholesky_solve(lib.ones(3), lib.eye(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.cholesky_solve(lib.ones(3, 1), lib.eye(3, dtype=lib.float64)), RuntimeError, "same dtype"),
    (lambda lib: lib.cholesky_solve(lib.ones(4, 1), lib.eye(3)), RuntimeError, "Incompatible matrix sizes"),
    (lambda lib: lib.cholesky_inverse(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.cholesky_inverse(lib.ones(3, 2)), RuntimeError, "square"),
    (lambda lib: lib.cholesky_inverse(lib.ones(3, 3, dtype=lib.int64)), NotImplementedError, "cholesky_inverse"),
    (lambda lib: lib.geqrf(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.geqrf(lib.ones(3, 3, dtype=lib.int64)), NotImplementedError, "geqrf_cpu"),
    (lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(3)), RuntimeError,
     "greater than or equal to tau"),
    (lambda lib: lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2)), RuntimeError,
     r"input.shape\[-2\] must be greater"),
    (lambda lib: lib.linalg.householder_product(lib.ones(2, 3, 2), lib.ones(3, 2)), RuntimeError,
     "batch dimensions of tau"),
    (lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(2, dtype=lib.float64)), RuntimeError,
     "does not match"),
    (lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(4, 3)), RuntimeError, r"other.shape\[-2\]"),
    (lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(3), lib.ones(3, 3)), RuntimeError, r"tau.shape\[-1\]"),
    (lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(3, 3, dtype=lib.float64)), RuntimeError,
     "same dtype"),
    (lambda lib: lib.linalg.ldl_factor(lib.ones(3, 2)), RuntimeError, "square"),
    (lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)), lib.ones(3, 1, dtype=lib.float64)),
     RuntimeError, "same dtype"),
    (lambda lib: lib.linalg.matrix_exp(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.matrix_exp(lib.ones(3, 3, dtype=lib.int64)), RuntimeError, "floating point"),
    (lambda lib: lib.linalg.matrix_exp(lib.ones(3, 2)), RuntimeError, "square"),
    (lambda lib: lib.linalg.cond(lib.eye(3), 3), RuntimeError, "invalid norm type"),
    (lambda lib: lib.linalg.cond(lib.ones(3, 2), "fro"), RuntimeError, "square"),
    (lambda lib: lib.linalg.cond(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.tensorinv(lib.ones(4, 2, 2), 0), RuntimeError, "strictly positive"),
    (lambda lib: lib.linalg.tensorinv(lib.ones(4, 2, 3)), RuntimeError, "3 != 8"),
    (lambda lib: lib.linalg.tensorinv(lib.zeros(4, 2, 2), 1), RuntimeError, "singular"),
    (lambda lib: lib.linalg.tensorsolve(lib.ones(2, 3, 6), lib.ones(2, 2)), RuntimeError, "6 != 4"),
    (lambda lib: lib.linalg.vander(lib.ones(3), N=1), RuntimeError, "greater than 1"),
    (lambda lib: lib.linalg.vander(lib.ones(3, dtype=lib.bool)), RuntimeError, "Bool"),
    (lambda lib: lib.vander(lib.ones(2, 3)), RuntimeError, "one-dimensional"),
    (lambda lib: lib.linalg.vecdot(lib.ones(3), lib.ones(3, dtype=lib.float64)), RuntimeError, "same dtype"),
    (lambda lib: lib.linalg.vecdot(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)), RuntimeError,
     "floating point"),
    (lambda lib: lib.linalg.vecdot(lib.ones(2, 3), lib.ones(4)), RuntimeError, "must match"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn, exc, match = ERRORS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exc is None:  # torch's behaviour is unspecified here (bad pivots): ember refuses them
            with pytest.raises(RuntimeError, match=match):
                fn(ember)
            return
        with pytest.raises(exc):
            fn(torch)
        with pytest.raises(exc, match=match):
            fn(ember)


def test_linalg_errors_are_linalg_errors():
    E = ember.linalg.LinAlgError
    with pytest.raises(E):
        ember.linalg.tensorinv(ember.zeros(4, 2, 2), 1)
    with pytest.raises(E):
        ember.linalg.ldl_factor_ex(ember.zeros(2, 2), check_errors=True)


# ---------------------------------------------------------------- gradients
def gradcheck(fn, *tensors):
    inputs = [pair(t)[0].requires_grad_() if t.is_floating_point() else pair(t)[0] for t in tensors]
    assert ember.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_grad_solve_triangular(upper, left, unit):
    A = rand(2, 3, 3) + 3 * torch.eye(3, dtype=torch.float64)
    B = rand(3, 2, seed=1) if left else rand(2, 3, seed=1)
    gradcheck(lambda a, b: ember.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit), A, B)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
def test_grad_lu(shape):
    A = rand(*shape) + torch.eye(*shape[-2:], dtype=torch.float64)
    gradcheck(lambda a: ember.linalg.lu_factor(a).LU, A)
    gradcheck(lambda a: tuple(ember.linalg.lu(a))[1:], A)
    gradcheck(lambda a: ember.linalg.lu(a).L, A)  # one output alone: the others' gradients undefined


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_grad_lu_solve(left, adjoint):
    A = rand(3, 3) + 3 * torch.eye(3, dtype=torch.float64)
    LU, piv = torch.linalg.lu_factor(A)
    B = rand(2, 3, 2, seed=1) if left else rand(2, 2, 3, seed=1)
    gradcheck(lambda lu, b, p: ember.linalg.lu_solve(lu, p, b, left=left, adjoint=adjoint), LU, B, piv)
    # through the factorization: the gradient of A's solve
    gradcheck(lambda a, b: ember.linalg.lu_solve(*ember.linalg.lu_factor(a), b, left=left, adjoint=adjoint), A, B)


def test_grad_cholesky_family_and_ex():
    A = spd(3, 3)
    F = torch.linalg.cholesky(A)
    gradcheck(lambda b, f: ember.cholesky_solve(b, f), rand(3, 2, seed=1), F)
    gradcheck(lambda b, f: ember.cholesky_solve(b, f, upper=True), rand(3, 2, seed=1), F.mT.contiguous())
    gradcheck(lambda f: ember.cholesky_inverse(f), F)
    gradcheck(lambda a: ember.linalg.cholesky_ex((a + a.mT) / 2).L, A)  # it reads one triangle
    gradcheck(lambda a: ember.linalg.inv_ex(a).inverse, A)
    gradcheck(lambda a, b: ember.linalg.solve_ex(a, b).result, A, rand(3, seed=1))
    gradcheck(lambda a, b: ember.linalg.solve_ex(a, b, left=False).result, A, rand(2, 3, seed=1))


def test_grad_matrix_exp_and_compositions():
    gradcheck(lambda a: ember.linalg.matrix_exp(a), rand(2, 3, 3) * 0.5)
    gradcheck(lambda a: ember.linalg.matrix_exp(a), rand(3, 3) * 4)  # scaling and squaring
    gradcheck(lambda a: ember.linalg.cond(a), rand(3, 3))
    gradcheck(lambda a: ember.linalg.cond(a, 1), rand(3, 3))
    gradcheck(lambda x: ember.linalg.vander(x), rand(3))
    gradcheck(lambda x, y: ember.linalg.vecdot(x, y), rand(2, 3), rand(3, seed=1))


def test_grad_double_backward_solve_triangular():
    A = pair(rand(3, 3) + 3 * torch.eye(3, dtype=torch.float64))[0].requires_grad_()
    B = pair(rand(3, 2, seed=1))[0].requires_grad_()
    assert ember.autograd.gradgradcheck(lambda a, b: ember.linalg.solve_triangular(a, b, upper=True), [A, B])


def test_no_grad_where_torch_has_none():
    a = ember.ones(3, 2, dtype=ember.float64, requires_grad=True)
    with pytest.raises(NotImplementedError):
        ember.geqrf(a)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_grad_householder_ormqr(left, transpose):
    a, tau = torch.geqrf(rand(2, 4, 3))
    C = rand(2, 4, 2, seed=1) if left else rand(2, 2, 4, seed=1)
    gradcheck(lambda a, t, c: ember.ormqr(a, t, c, left, transpose), a, tau, C)
    if left and not transpose:
        gradcheck(lambda a, t: ember.linalg.householder_product(a, t), a, tau)
        gradcheck(lambda a, t: ember.orgqr(a, t), a[0], tau[0])
    # the differentiable path gives torch's values
    ea, et, ec = (pair(x)[0].requires_grad_() for x in (a, tau, C))
    assert_same(ember.ormqr(ea, et, ec, left, transpose).detach(), torch.ormqr(a, tau, C, left, transpose), tol=1e-10)
    assert_same(ember.linalg.householder_product(ea, et).detach(), torch.linalg.householder_product(a, tau),
                tol=1e-10)


def test_meta_shapes():
    A = ember.empty(2, 4, 3, device="meta")
    LU, piv, info = ember.linalg.lu_factor_ex(A)
    assert LU.shape == (2, 4, 3) and piv.shape == (2, 3) and info.shape == (2,)
    assert ember.linalg.solve_triangular(ember.empty(3, 3, device="meta"), ember.empty(2, 3, 5, device="meta"),
                                         upper=True).shape == (2, 3, 5)
    assert ember.geqrf(A).tau.shape == (2, 3)


def test_nan_inputs_give_nan():
    # LAPACKE refuses NaN inputs; the results are NaN as torch's, with valid pivots and info 0
    nan = float("nan")
    A = ember.tensor([[[nan, 1.], [2., 3.]], [[1., 2.], [3., 4.]]], dtype=ember.float64)
    LU, piv, info = ember.linalg.lu_factor_ex(A)
    assert bool(LU[0].isnan().any()) and not bool(LU[1].isnan().any())
    assert info.tolist() == [0, 0] and piv[0].tolist() == [1, 2]
    X = ember.linalg.lu_solve(LU, piv, ember.ones(2, 2, 1, dtype=ember.float64))
    assert bool(X[0].isnan().all()) and not bool(X[1].isnan().any())
    a, tau = ember.geqrf(A)
    assert bool(a[0].isnan().any()) and bool(tau[0].isnan().any()) and not bool(tau[1].isnan().any())
    assert bool(ember.linalg.inv_ex(A).inverse[0].isnan().any())


def test_grad_lu_unpack_parts():
    LU, piv = torch.linalg.lu_factor(rand(3, 4))
    gradcheck(lambda lu, p: ember.lu_unpack(lu, p).U, LU, piv)
    gradcheck(lambda lu, p: ember.lu_unpack(lu, p, unpack_pivots=False).L, LU, piv)
    lu = pair(LU)[0].requires_grad_()
    P, L, U = ember.lu_unpack(lu, pair(piv)[0], unpack_data=False)
    assert L.shape == (0,) and U.shape == (0,)
    (P.sum() + L.sum()).backward()  # no gradient reaches LU through P or the empty parts
    assert lu.grad is None or float(lu.grad.abs().sum()) == 0
