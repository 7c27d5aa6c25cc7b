"""Complex matrix products and complex linear algebra (issue 15) against torch: mm, bmm,
matmul in its broadcasting forms, mv, dot/vdot, the add* products with complex alpha and
beta, outer/inner/kron/einsum/tensordot/linear; linalg.eig/eigvals (real and complex
input); inv, solve, det, slogdet, cholesky, qr, svd, svdvals, eigh, eigvalsh on complex
matrices. Values, dtypes, shapes, non-contiguous and empty inputs, errors, and gradients
(complex128, compared with torch's autograd on the same real-valued loss)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import torch

# declared ops this module compares with torch (see test_op_coverage.py)
TESTED_OPS = {"linalg_eig", "linalg_eigvals"}

TOL = {"complex64": 1e-4, "complex128": 1e-10, "float64": 1e-10, "float32": 1e-4}


def crand(*shape, dtype="complex128", seed=0):
    g = torch.Generator().manual_seed(seed + 31 * sum(shape) + len(shape))
    re = torch.randn(*shape, generator=g, dtype=torch.float64)
    im = torch.randn(*shape, generator=g, dtype=torch.float64)
    return torch.complex(re, im).to(getattr(torch, dtype))


def em(t, requires_grad=False):
    """The ember twin of a torch tensor, with its strides (a transposed view stays one)."""
    e = ember.from_dlpack(t.detach().clone())
    if t.dim() >= 2 and not t.is_contiguous() and t.mT.is_contiguous():
        e = ember.from_dlpack(t.detach().mT.clone()).mT
    return e.requires_grad_() if requires_grad else e


def th(e):
    return torch.from_dlpack(e.detach())


def same(e, t, tol=0.0):
    assert isinstance(e, ember.Tensor), type(e)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1], (e.dtype, t.dtype)
    torch.testing.assert_close(th(e), t, atol=tol, rtol=tol, equal_nan=True)


def both(fn, *ts, dtype="complex128"):
    """fn(lib, *tensors) on torch and on ember twins; compares the results."""
    expected = fn(torch, *ts)
    got = fn(ember, *[em(t) if isinstance(t, torch.Tensor) else t for t in ts])
    if isinstance(expected, torch.Tensor):
        expected, got = (expected,), (got,)
    for g, x in zip(got, expected):
        same(g, x, TOL[dtype])


# ---------------------------------------------------------------- products

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_products(dtype):
    a, b = crand(3, 4, dtype=dtype), crand(4, 5, dtype=dtype, seed=1)
    both(lambda L, x, y: L.mm(x, y), a, b, dtype=dtype)
    both(lambda L, x, y: L.mm(x.mT, y.mT), crand(4, 3, dtype=dtype), crand(5, 4, dtype=dtype), dtype=dtype)
    both(lambda L, x, y: x @ y, a.mT.contiguous().mT, b, dtype=dtype)  # column-major operand
    both(lambda L, x, y: L.mm(x.conj(), y), a, b, dtype=dtype)
    b3, c3 = crand(2, 3, 4, dtype=dtype), crand(2, 4, 2, dtype=dtype)
    both(lambda L, x, y: L.bmm(x, y), b3, c3, dtype=dtype)
    v, w = crand(4, dtype=dtype), crand(4, dtype=dtype, seed=2)
    for x, y in [(v, w), (v, b), (a, v), (b3, b), (a, c3), (crand(2, 1, 3, 4, dtype=dtype), c3), (v, c3),
                 (b3, v)]:
        both(lambda L, x, y: L.matmul(x, y), x, y, dtype=dtype)
    both(lambda L, x, y: L.mv(x, y), a, v, dtype=dtype)
    both(lambda L, x, y: L.dot(x, y), v, w, dtype=dtype)
    both(lambda L, x, y: L.vdot(x, y), v, w, dtype=dtype)
    both(lambda L, x, y: (L.outer(x, y), L.inner(x, y), L.kron(x, y)), v, w, dtype=dtype)
    both(lambda L, x, y: L.einsum("bij,bjk->bik", x, y), b3, c3, dtype=dtype)
    both(lambda L, x, y: L.tensordot(x, y, dims=1), a, b, dtype=dtype)
    both(lambda L, x, y: L.nn.functional.linear(x, y, y[:, 0]), crand(2, 4, dtype=dtype), crand(3, 4, dtype=dtype),
         dtype=dtype)


def test_add_products_with_complex_factors():
    a, b, s = crand(3, 4), crand(4, 2), crand(3, 2)
    al, be = 0.5 - 2j, 1.5 + 0.25j
    both(lambda L, s, x, y: L.addmm(s, x, y, beta=be, alpha=al), s, a, b)
    both(lambda L, s, x, y: L.addmv(s[:, 0], x, y[:, 0], beta=be, alpha=al), s, a, b)
    both(lambda L, s, x, y: L.addr(s, x[:, 0], y[0], beta=be, alpha=al), s, a, b)
    b1, b2 = crand(2, 3, 4), crand(2, 4, 2)
    both(lambda L, s, x, y: L.baddbmm(s, x, y, beta=be, alpha=al), crand(2, 3, 2), b1, b2)
    both(lambda L, s, x, y: L.addbmm(s, x, y, beta=2j, alpha=al), s, b1, b2)
    both(lambda L, s, x, y: s.clone().addmm_(x, y, beta=be, alpha=3), s, a, b)
    # beta 0 ignores self (its NaNs too); a purely imaginary beta is not 0
    nan = torch.full((3, 2), complex(float("nan"), 0), dtype=torch.complex128)
    both(lambda L, s, x, y: L.addmm(s, x, y, beta=0), nan, a, b)
    both(lambda L, s, x, y: L.addmm(s, x, y, beta=1j), s, a, b)
    # k = 0: beta * self alone
    e1, e2 = crand(3, 0), crand(0, 2)
    both(lambda L, s, x, y: (L.addmm(s, x, y, beta=be), L.mm(x, y), L.addmm(s, x, y, beta=0)), s, e1, e2)
    both(lambda L, x, y: L.matmul(x, y), crand(0, 3), crand(3, 2))


def test_product_errors():
    a = em(crand(2, 3))
    for fn in (lambda: ember.mm(a, ember.ones(3, 2, dtype=ember.complex64)), lambda: ember.mm(a, ember.ones(3, 2)),
               lambda: ember.mm(a, a)):
        with pytest.raises(RuntimeError):
            fn()
    with pytest.raises(RuntimeError):
        ember.dot(a[0], ember.ones(3, dtype=ember.complex64))


def grads(fn, *ts):
    """The gradients of the real loss fn(lib, *tensors) in torch and ember, compared."""
    tt = [t.detach().clone().requires_grad_() for t in ts]
    fn(torch, *tt).backward()
    ee = [em(t, requires_grad=True) for t in ts]
    fn(ember, *ee).backward()
    for e, t in zip(ee, tt):
        same(e.grad, t.grad, 1e-9)


def loss(L, out):
    """A real loss that weighs real and imaginary parts differently (so a missing conjugate shows)."""
    if not out.is_complex():
        return out.sum()
    return (L.view_as_real(out.resolve_conj()) * L.tensor([0.7, -1.3], dtype=L.float64)).sum()


def test_product_gradients():
    a, b, v = crand(3, 4), crand(4, 2), crand(4)
    grads(lambda L, x, y: loss(L, L.mm(x, y)), a, b)
    grads(lambda L, x, y: loss(L, L.mm(x.mT.contiguous().mT, y)), a, b)
    grads(lambda L, x, y: loss(L, L.bmm(x, y)), crand(2, 3, 4), crand(2, 4, 2))
    for x, y in [(v, crand(4, seed=3)), (v, b), (a, v), (crand(2, 3, 4), b), (a, crand(2, 4, 2)),
                 (v, crand(2, 4, 2)), (crand(2, 3, 4), v)]:
        grads(lambda L, x, y: loss(L, L.matmul(x, y)), x, y)
    grads(lambda L, x, y: loss(L, L.mv(x, y)), a, v)
    grads(lambda L, x, y: loss(L, L.dot(x, y) + L.vdot(x, y)), v, crand(4, seed=3))
    grads(lambda L, x, y: loss(L, L.outer(x, y)) + loss(L, L.kron(x, y)), v, crand(3, seed=4))
    grads(lambda L, x, y: loss(L, L.inner(x, y)), crand(2, 4), crand(3, 4, seed=4))
    al, be = 0.5 - 2j, 1.5 + 0.25j
    s = crand(3, 2)
    grads(lambda L, s, x, y: loss(L, L.addmm(s, x, y, beta=be, alpha=al)), s, a, b)
    grads(lambda L, s, x, y: loss(L, L.addmv(s, x, y, beta=be, alpha=al)), crand(3), a, v)
    grads(lambda L, s, x, y: loss(L, L.addr(s, x, y, beta=be, alpha=al)), s, crand(3), crand(2))
    grads(lambda L, s, x, y: loss(L, L.baddbmm(s, x, y, beta=be, alpha=al)), crand(2, 3, 2), crand(2, 3, 4),
          crand(2, 4, 2))
    grads(lambda L, s, x, y: loss(L, L.addbmm(s, x, y, beta=be, alpha=al)), s, crand(2, 3, 4), crand(2, 4, 2))
    # a real matrix times a complex one: the real input's gradient is real
    grads(lambda L, x, y: loss(L, L.mm(x.to(L.complex128), y)), torch.randn(3, 4, dtype=torch.float64), b)


# ---------------------------------------------------------------- eig

def check_eig(A, L, V, tol):
    """eigenvalues as torch's (as a multiset), A V = V diag(L), unit columns."""
    At = th(A).to(th(L).dtype)
    Lt, Vt = th(L), th(V)
    torch.testing.assert_close(Vt.abs().pow(2).sum(-2), torch.ones(Lt.shape, dtype=Lt.real.dtype), atol=tol, rtol=tol)
    torch.testing.assert_close(At @ Vt, Vt * Lt.unsqueeze(-2), atol=tol * 10, rtol=tol * 10)
    ref = torch.linalg.eigvals(th(A))
    key = lambda t: torch.sort(t.real * 1e3 + t.imag, dim=-1).values  # noqa: E731
    torch.testing.assert_close(key(Lt), key(ref), atol=tol * 1e3, rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eig(dtype):
    t = crand(2, 4, 4, dtype="complex128", seed=5)
    t = t.real.to(getattr(torch, dtype)) if "float" in dtype else t.to(getattr(torch, dtype))
    A = em(t)
    res = ember.linalg.eig(A)
    assert type(res).__name__ == "linalg_eig" and res._fields == ("eigenvalues", "eigenvectors")
    L, V = res
    cdt = {"float32": "complex64", "float64": "complex128"}.get(dtype, dtype)
    assert str(L.dtype) == f"ember.{cdt}" and str(V.dtype) == f"ember.{cdt}"
    assert tuple(L.shape) == (2, 4) and tuple(V.shape) == (2, 4, 4)
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    check_eig(A, L, V, tol)
    same(ember.linalg.eigvals(A), th(L), 0)
    check_eig(A.mT, *ember.linalg.eig(A.mT), tol)  # non-contiguous


def test_eig_known_values_and_edges():
    rot = em(torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64))
    same(ember.linalg.eigvals(rot), torch.linalg.eigvals(th(rot)))
    same(ember.linalg.eigvals(rot), torch.tensor([1j, -1j], dtype=torch.complex128))
    both(lambda L, x: tuple(L.linalg.eig(x)), torch.zeros(0, 3, 3))
    both(lambda L, x: tuple(L.linalg.eig(x)), torch.zeros(2, 0, 0))
    both(lambda L, x: L.linalg.eigvals(x), torch.tensor([[2.5]], dtype=torch.float64))
    # out=
    L0, V0 = ember.empty(0, dtype=ember.complex128), ember.empty(0, dtype=ember.complex128)
    r = ember.linalg.eig(rot, out=(L0, V0))
    assert r.eigenvalues is L0 and tuple(V0.shape) == (2, 2)
    with pytest.raises(RuntimeError):
        ember.linalg.eig(rot, out=(ember.empty(0), ember.empty(0)))
    # eigvals of a matrix with a NaN: NaN (torch returns LAPACK's partial values, NaN among them)
    nan = em(torch.tensor([[float("nan"), 0.0], [0.0, 1.0]]))
    assert th(ember.linalg.eigvals(nan)).isnan().all()


@pytest.mark.parametrize("make", [lambda L: L.ones(2, 3), lambda L: L.ones(3), lambda L: L.ones(2, 2, dtype=L.int64),
                                  lambda L: L.ones(2, 2, dtype=L.float16),
                                  lambda L: L.tensor([[float("inf"), 0.0], [0.0, 1.0]])])
def test_eig_errors(make):
    with pytest.raises((RuntimeError, NotImplementedError)) as expected:
        torch.linalg.eig(make(torch))
    with pytest.raises(type(expected.value)) as got:
        ember.linalg.eig(make(ember))
    if "square" in str(expected.value) or "dimensions" in str(expected.value) or "NaN" in str(expected.value):
        assert str(got.value) == str(expected.value)


def test_eig_gradients():
    A = crand(3, 3, seed=7)
    w = crand(3, 3, seed=8)
    grads(lambda L, a: loss(L, L.linalg.eigvals(a)), A)
    grads(lambda L, a: loss(L, L.linalg.eigvals(a)), A.real.contiguous())
    # a loss the eigenvectors' phases do not change
    grads(lambda L, a: (L.linalg.eig(a).eigenvectors.abs() * w.real.to(a.real.dtype) if L is torch else
                        L.linalg.eig(a).eigenvectors.abs() * em(w.real)).sum(), A)
    grads(lambda L, a: loss(L, L.linalg.eig(a)[0]) + (L.linalg.eig(a)[1].abs() ** 2 * L.arange(3.0)).sum(),
          A.real.contiguous())


# ---------------------------------------------------------------- LAPACK on complex matrices

def hpd(n, seed=0, batch=()):
    a = crand(*batch, n, n, seed=seed)
    return a @ a.mH + n * torch.eye(n, dtype=torch.complex128)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_lapack_values(dtype):
    c = getattr(torch, dtype)
    A = crand(2, 3, 3, dtype=dtype, seed=9)
    B = crand(2, 3, 2, dtype=dtype, seed=10)
    H = hpd(3, batch=(2,)).to(c)
    both(lambda L, a: L.linalg.inv(a), A, dtype=dtype)
    both(lambda L, a: L.linalg.inv(a.mT), A, dtype=dtype)
    both(lambda L, a, b: (L.linalg.solve(a, b), L.linalg.solve(a, b[..., 0]), L.linalg.solve(a, b.mT, left=False)),
         A, B, dtype=dtype)
    both(lambda L, a: (L.linalg.det(a), *L.linalg.slogdet(a), L.det(a), L.logdet(a @ a.mH)), A, dtype=dtype)
    both(lambda L, h: (L.linalg.cholesky(h), L.linalg.cholesky(h, upper=True)), H, dtype=dtype)
    both(lambda L, h: tuple(L.linalg.eigh(h))[0], H, dtype=dtype)
    both(lambda L, h: (L.linalg.eigvalsh(h), L.linalg.eigvalsh(h, UPLO="U")), H, dtype=dtype)
    W = crand(2, 4, 3, dtype=dtype, seed=11)
    both(lambda L, a: L.linalg.svdvals(a), W, dtype=dtype)
    tol = TOL[dtype] * 10
    for mode in ("reduced", "complete"):
        Q, R = ember.linalg.qr(em(W), mode=mode)
        Qt, Rt = torch.linalg.qr(W, mode=mode)
        assert Q.dtype == ember.complex64 if dtype == "complex64" else Q.dtype == ember.complex128
        torch.testing.assert_close(th(Q) @ th(R), W, atol=tol, rtol=tol)
        torch.testing.assert_close(th(R).abs(), Rt.abs(), atol=tol, rtol=tol)
    U, S, Vh = ember.linalg.svd(em(W), full_matrices=False)
    assert S.dtype == (ember.float32 if dtype == "complex64" else ember.float64)
    torch.testing.assert_close((th(U) * th(S).to(c).unsqueeze(-2)) @ th(Vh), W, atol=tol, rtol=tol)
    Lh, Vh_ = ember.linalg.eigh(em(H))
    torch.testing.assert_close(th(Vh_) @ th(Lh).to(c).diag_embed() @ th(Vh_).mH, H, atol=tol * 10, rtol=tol)


def test_lapack_errors_and_empty():
    sing = em(torch.zeros(2, 2, dtype=torch.complex128))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(sing)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.cholesky(em(-hpd(2)))
    both(lambda L, a: (L.linalg.inv(a), L.linalg.det(a), L.linalg.svdvals(a)), torch.zeros(0, 2, 2, dtype=torch.complex64),
         dtype="complex64")
    same(ember.linalg.det(sing), torch.linalg.det(th(sing)))
    same(ember.linalg.slogdet(sing).sign, torch.linalg.slogdet(th(sing)).sign)


def test_lapack_gradients():
    A, B = crand(3, 3, seed=12), crand(3, 2, seed=13)
    grads(lambda L, a: loss(L, L.linalg.inv(a)), A)
    grads(lambda L, a, b: loss(L, L.linalg.solve(a, b)), A, B)
    grads(lambda L, a, b: loss(L, L.linalg.solve(a, b[:, 0])), A, B)
    grads(lambda L, a, b: loss(L, L.linalg.solve(a, b.mT, left=False)), A, B)
    grads(lambda L, a: loss(L, L.linalg.det(a)), A)
    grads(lambda L, a: L.linalg.slogdet(a).logabsdet * 1.7 + loss(L, L.linalg.slogdet(a).sign), A)
    grads(lambda L, a: loss(L, L.linalg.slogdet(a).sign), A)
    grads(lambda L, a: L.linalg.slogdet(a).logabsdet, A.real.contiguous())
    grads(lambda L, a, b: loss(L, L.linalg.inv_ex(a).inverse) + loss(L, L.linalg.solve_ex(a, b).result), A, B)
    grads(lambda L, a: L.linalg.svdvals(a).sum(), crand(2, 4, 3, seed=14))
    grads(lambda L, a: (L.linalg.eigvalsh(a) * L.arange(1.0, 4.0, dtype=L.float64)).sum(), hpd(3, seed=15))
    # eigh: a loss the eigenvectors' phases do not change
    grads(lambda L, a: (L.linalg.eigh(a).eigenvectors.abs() * L.arange(9.0, dtype=L.float64).reshape(3, 3)).sum() +
          L.linalg.eigh(a).eigenvalues.sum(), hpd(3, seed=15))
    grads(lambda L, a: (L.linalg.eigh(a).eigenvectors.abs() * L.arange(9.0, dtype=L.float64).reshape(3, 3)).sum(),
          hpd(3, seed=15).real.contiguous())


def test_factorizations():
    A, B, H = crand(2, 3, 3, seed=16), crand(2, 3, 2, seed=17), hpd(3, seed=18)
    LU, piv = torch.linalg.lu_factor(A)
    both(lambda L, a: tuple(L.linalg.lu_factor(a)), A)
    both(lambda L, a: tuple(L.linalg.lu_factor_ex(a)), A.mT)
    for left in (True, False):
        for adjoint in (False, True):
            b = B if left else B.mT
            both(lambda L, lu, b: L.linalg.lu_solve(lu, em(piv) if L is ember else piv, b, left=left, adjoint=adjoint),
                 LU, b)
    both(lambda L, a: tuple(L.linalg.inv_ex(a)), A)
    both(lambda L, a, b: tuple(L.linalg.solve_ex(a, b)), A, B)
    both(lambda L, a, b: tuple(L.linalg.solve_ex(a, b.mT, left=False)), A, B)
    both(lambda L, h: tuple(L.linalg.cholesky_ex(h)), H)
    both(lambda L, h: tuple(L.linalg.cholesky_ex(h, upper=True)), H)
    info = ember.linalg.inv_ex(em(torch.zeros(2, 2, dtype=torch.complex64))).info
    assert info.item() > 0
    T = torch.triu(A) + 3 * torch.eye(3)
    for upper, left, unit in ((True, True, False), (False, False, True), (True, False, False)):
        tri = T if upper else T.mT
        b = B if left else B.mT
        both(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit), tri, b)


def test_compositions():
    W, H = crand(4, 3, seed=19), hpd(3, seed=20)
    both(lambda L, a: L.linalg.pinv(a), W)
    both(lambda L, a, h: (L.linalg.matrix_rank(a), L.linalg.matrix_rank(h, hermitian=True), L.linalg.cond(h)), W, H)


def test_unsupported_complex_stays_loud():
    # lstsq, lu, geqrf and the gradients of cholesky, svd and qr hold for complex now
    # (tests/test_linalg_complex15b.py); LDL does not
    a = em(hpd(2))
    with pytest.raises(NotImplementedError):
        ember.linalg.ldl_factor(a)


# graphs whose nodes cover this module's formulas (tests/test_autograd.py checks every
# formula of derivatives.yaml runs somewhere)
DERIVATIVE_GRAPHS = [
    lambda: ember.linalg.eig(ember.eye(2, dtype=ember.float64, requires_grad=True))[0],
    lambda: ember.linalg.eigvals(ember.eye(2, dtype=ember.float64, requires_grad=True)),
]
