"""Complex linear algebra, part 2 (issue 15) against torch: the gradients of cholesky(_ex),
qr and svd on complex matrices (svd's phase gauge and torch's refusal of a loss that
depends on it), gradcheck in complex128; complex lu / lu_unpack with the gradients of
lu_factor, lu_solve and solve_triangular; geqrf, householder_product, ormqr, lstsq,
cholesky_solve/cholesky_inverse and the singular-value matrix norms on complex input."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import torch
from test_linalg_complex15 import both, crand, em, grads, hpd, loss, same, th

# declared ops this module compares with torch (see test_op_coverage.py)
TESTED_OPS = {"lu_unpack", "geqrf", "ormqr", "linalg_householder_product", "linalg_cholesky", "linalg_cholesky_ex",
              "linalg_qr", "linalg_svd", "linalg_lu_factor_ex", "linalg_lu_solve", "linalg_solve_triangular"}


def gradcheck(fn, *ts):
    """ember's gradcheck (complex inputs as their two real parts) at the twins of ts."""
    assert ember.autograd.gradcheck(fn, tuple(em(t, requires_grad=True) for t in ts), atol=1e-6, rtol=1e-4)


def eye(L, n):
    return L.eye(n, dtype=L.complex128)


# ---------------------------------------------------------------- cholesky

def test_cholesky_gradients():
    H = hpd(3, seed=1)
    grads(lambda L, h: loss(L, L.linalg.cholesky(h)), H)
    grads(lambda L, h: loss(L, L.linalg.cholesky(h, upper=True)), H)
    grads(lambda L, h: loss(L, L.linalg.cholesky_ex(h).L), hpd(3, seed=2, batch=(2,)))
    grads(lambda L, h: loss(L, L.linalg.cholesky_ex(h, upper=True).L), H)
    # through a Hermitian construction, as a program would differentiate it
    grads(lambda L, x: loss(L, L.linalg.cholesky(x @ x.mH + 3 * eye(L, 3))), crand(3, 3, seed=3))
    gradcheck(lambda x: ember.linalg.cholesky(x @ x.mH + 3 * eye(ember, 3)), crand(3, 3, seed=4))
    gradcheck(lambda x: ember.linalg.cholesky(x @ x.mH + 3 * eye(ember, 3), upper=True), crand(3, 3, seed=5))


# ---------------------------------------------------------------- qr

def qr_loss(L, a, mode="reduced"):
    Q, R = L.linalg.qr(a, mode=mode)
    return loss(L, Q) + loss(L, R)


def test_qr_gradients():
    for shape, mode in (((4, 3), "reduced"), ((3, 3), "reduced"), ((3, 3), "complete"), ((2, 3, 2), "reduced")):
        A = crand(*shape, seed=6)
        Q, R = ember.linalg.qr(em(A), mode=mode)
        Qt, Rt = torch.linalg.qr(A, mode=mode)
        same(Q, Qt, 1e-10)  # the same Householder convention (R's diagonal real): the same factors
        same(R, Rt, 1e-10)
        grads(lambda L, a: qr_loss(L, a, mode), A)
    grads(lambda L, a: qr_loss(L, a), crand(4, 3, seed=7).mT.contiguous().mT)  # column-major
    gradcheck(lambda a: tuple(ember.linalg.qr(a)), crand(4, 3, seed=8))
    with pytest.raises(NotImplementedError, match="not differentiable"):
        ember.linalg.qr(em(crand(2, 3), requires_grad=True))[0].abs().sum().backward()


# ---------------------------------------------------------------- svd

def svd_loss(L, A, full_matrices=False):
    """A loss no choice of the singular vectors' phases changes."""
    U, S, Vh = L.linalg.svd(A, full_matrices=full_matrices)
    k = S.shape[-1]
    w = L.arange(float(U.shape[-1] * U.shape[-2]), dtype=L.float64).reshape(U.shape[-2:]) / 7
    return (loss(L, (U[..., :k] * S.unsqueeze(-2).to(U.dtype)) @ Vh[..., :k, :]) + (U.abs() * w).sum() +
            (S * L.arange(1.0, k + 1, dtype=L.float64)).sum() + (Vh.abs() ** 3).sum(-2)[..., 0].sum())


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_svd_gradients(shape):
    A = crand(*shape, seed=9)
    grads(lambda L, a: svd_loss(L, a), A)
    grads(lambda L, a: svd_loss(L, a, True), A)
    grads(lambda L, a: loss(L, L.linalg.svd(a).S.to(L.complex128)), A)
    if len(shape) == 2:
        gradcheck(lambda a: (lambda r: (r.U[:, :2] @ r.Vh[:2], r.S))(ember.linalg.svd(a, False)), A)


def test_svd_phase_dependent_loss_raises():
    A = crand(3, 3, seed=10)
    t = A.clone().requires_grad_()
    with pytest.raises(RuntimeError) as expected:
        torch.linalg.svd(t)[0].real.sum().backward()
    with pytest.raises(RuntimeError) as got:
        ember.linalg.svd(em(A, requires_grad=True))[0].real.sum().backward()
    assert str(got.value) == str(expected.value)
    # the singular values alone, or a real matrix: no phase, no check
    grads(lambda L, a: L.linalg.svd(a)[1].sum(), A)
    grads(lambda L, a: svd_loss(L, a), A.real.contiguous())


# ---------------------------------------------------------------- LU

def test_lu_values():
    for shape in ((2, 3, 3), (4, 3), (3, 4), (0, 2, 2)):
        A = crand(*shape, seed=11)
        both(lambda L, a: tuple(L.linalg.lu(a)), A)
        both(lambda L, a: tuple(L.lu_unpack(*L.linalg.lu_factor(a))), A)
        both(lambda L, a: tuple(L.lu_unpack(*L.linalg.lu_factor(a), unpack_data=False)), A)
    both(lambda L, a: tuple(L.linalg.lu(a.mT)), crand(3, 3, seed=12), dtype="complex128")
    both(lambda L, a: tuple(L.linalg.lu(a)), crand(3, 3, seed=13, dtype="complex64"), dtype="complex64")


def test_lu_gradients():
    for shape in ((3, 3), (4, 3), (3, 4)):
        A = crand(*shape, seed=14)
        grads(lambda L, a: loss(L, L.linalg.lu_factor(a).LU), A)
        grads(lambda L, a: loss(L, L.linalg.lu(a).L) + loss(L, L.linalg.lu(a).U), A)
    gradcheck(lambda a: ember.linalg.lu_factor(a).LU, crand(3, 3, seed=15))
    A, B = crand(2, 3, 3, seed=16), crand(2, 3, 2, seed=17)
    for left in (True, False):
        for adjoint in (False, True):
            b = B if left else B.mT
            grads(lambda L, a, b: loss(L, L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=left, adjoint=adjoint)),
                  A, b)
    gradcheck(lambda a, b: ember.linalg.lu_solve(*ember.linalg.lu_factor(a), b, adjoint=True), A[0], B[0])


def test_solve_triangular_gradients():
    T = torch.triu(crand(3, 3, seed=18)) + 3 * torch.eye(3)
    B = crand(3, 2, seed=19)
    for upper, left, unit in ((True, True, False), (False, False, True), (True, False, False)):
        tri = T if upper else T.mT
        b = B if left else B.mT
        grads(lambda L, a, b: loss(L, L.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)),
              tri, b)
    gradcheck(lambda a, b: ember.linalg.solve_triangular(a, b, upper=True), T, B)


# ---------------------------------------------------------------- Householder, lstsq, Cholesky solves, norms

def test_householder():
    for shape in ((4, 3), (2, 3, 3)):
        A = crand(*shape, seed=20)
        both(lambda L, a: tuple(L.geqrf(a)), A)
        a, tau = torch.geqrf(A)
        both(lambda L, a, t: L.linalg.householder_product(a, t), a, tau)
        both(lambda L, a, t: L.linalg.householder_product(a, t[..., :2]), a, tau)
        for left in (True, False):
            for transpose in (False, True):
                C = crand(*shape[:-2], shape[-2], 2, seed=21)
                c = C if left else C.mT
                both(lambda L, a, t, c: L.ormqr(a, t, c, left=left, transpose=transpose), a, tau, c)
                grads(lambda L, a, t, c: loss(L, L.ormqr(a, t, c, left=left, transpose=transpose)), a, tau, c)
        grads(lambda L, a, t: loss(L, L.linalg.householder_product(a, t)), a, tau)
    both(lambda L, a: tuple(L.geqrf(a)), crand(3, 4, seed=22, dtype="complex64"), dtype="complex64")


def test_lstsq():
    for shape in ((4, 3), (3, 4), (2, 4, 3)):
        A, B = crand(*shape, seed=23), crand(*shape[:-1], 2, seed=24)
        for driver in ("gelsd", "gelss", "gels", "gelsy"):
            expected = torch.linalg.lstsq(A, B, driver=driver)
            got = ember.linalg.lstsq(em(A), em(B), driver=driver)
            same(got.solution, expected.solution, 1e-9)
            same(got.residuals, expected.residuals, 1e-9)
            same(got.singular_values, expected.singular_values, 1e-9)
            if driver != "gels":
                same(got.rank, expected.rank)
        grads(lambda L, a, b: loss(L, L.linalg.lstsq(a, b).solution), A, B)
    both(lambda L, a, b: L.linalg.lstsq(a, b[..., 0]).solution, crand(4, 3, seed=25), crand(4, 2, seed=26))


def test_cholesky_solve_and_inverse():
    H, B = hpd(3, seed=27), crand(3, 2, seed=28)
    for upper in (False, True):
        F = torch.linalg.cholesky(H, upper=upper)
        both(lambda L, f, b: L.cholesky_solve(b, f, upper=upper), F, B)
        both(lambda L, f: L.cholesky_inverse(f, upper=upper), F)
        # B's gradient (torch's factor gradient is not triangular: it reads the whole matrix)
        grads(lambda L, b: loss(L, L.cholesky_solve(b, F if L is torch else em(F), upper=upper)), B)


def test_singular_value_norms():
    A = crand(2, 3, 4, seed=29)
    both(lambda L, a: tuple(L.linalg.matrix_norm(a, o) for o in ("nuc", 2, -2, "fro", 1, float("inf"))), A)
    both(lambda L, a: (L.linalg.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True), L.linalg.norm(a[0], 2),
                       L.norm(a[0], "nuc"), L.linalg.cond(a[:, :, :3], "nuc")), A)
    both(lambda L, a: L.linalg.matrix_norm(a, 2), crand(3, 3, seed=30, dtype="complex64"), dtype="complex64")
    for o in ("nuc", 2, -2):
        grads(lambda L, a: L.linalg.matrix_norm(a, o).sum(), A)
    with pytest.raises(RuntimeError, match="dtype should be complex"):
        ember.linalg.matrix_norm(em(A), "nuc", dtype=ember.float64)


def test_unsupported_complex_stays_loud():
    a = em(hpd(2))
    for fn in (lambda: ember.linalg.ldl_factor(a), lambda: ember.linalg.ldl_factor_ex(a, hermitian=True)):
        with pytest.raises(NotImplementedError, match="ldl_factor"):
            fn()
