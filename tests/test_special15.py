"""ember.special and the special tensor ops (declarations/ops/special.yaml, kernels in
csrc/kernels/special.cpp): values against torch over each function's domain, its poles,
large arguments, NaN and the infinities; dtypes and promotion; out=, in-place, views and
empty inputs; gradients (gradcheck in float64) and the gradients torch refuses."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from helpers import check

torch = pytest.importorskip("torch")

TESTED_OPS = {
    "lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "i0", "sinc",
    "special_i0e", "special_i1", "special_i1e", "special_erfcx", "special_ndtr", "special_ndtri",
    "special_log_ndtr", "special_entr", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0",
    "special_bessel_y1", "special_modified_bessel_i0", "special_modified_bessel_i1",
    "special_modified_bessel_k0", "special_modified_bessel_k1", "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1", "special_spherical_bessel_j0", "special_airy_ai", "special_zeta",
    "special_xlog1py", "special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v", "special_chebyshev_polynomial_w", "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u", "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w", "special_hermite_polynomial_h", "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l", "special_legendre_polynomial_p",
}

INF, NAN = math.inf, math.nan


def E(a, dtype="float64"):
    return ember.from_numpy(np.asarray(a, dtype=dtype))


def Tt(a, dtype="float64"):
    return torch.from_numpy(np.asarray(a, dtype=dtype))


def close(got, want, rtol, atol, what=""):
    """ember result against torch's: the same dtype and shape, NaN and infinities where
    torch has them, finite values within atol + rtol * |want|."""
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], what
    assert tuple(got.shape) == tuple(want.shape), what
    g = got.double().numpy() if got.dtype in (ember.float16, ember.bfloat16) else got.numpy()
    w = want.double().numpy() if want.dtype in (torch.float16, torch.bfloat16) else want.numpy()
    g, w = g.astype(np.float64), w.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(w)), f"{what}: NaN at {np.isnan(g)} vs {np.isnan(w)}\n{g}\n{w}"
    inf = np.isinf(w)
    assert np.array_equal(g[inf], w[inf]), f"{what}: infinities {g[inf]} vs {w[inf]}"
    fin = np.isfinite(w)
    err = np.abs(g[fin] - w[fin])
    bad = err > atol + rtol * np.abs(w[fin])
    assert not bad.any(), f"{what}: got {g[fin][bad]} want {w[fin][bad]} (indices {np.flatnonzero(fin)[bad]})"


GRID = np.concatenate([
    np.linspace(-12, 12, 97), [-1e-300, 1e-300, 1e-10, -1e-10, 0.0, -0.0, 0.5, 1.5, -2.5, 3.7, 25.5, 26.5, 29.9, 30.1,
                               40.0, 80.0, 200.0, 700.0, 720.0, -700.0, 1e5, -1e5, INF, -INF, NAN]])

# name -> (ember function, torch function, domain filter, rtol, atol) in float64. torch's
# Bessel J/Y (errors up to 3e-7), Airy (1e-6), igamma near a = x (1e-9) and trigamma (1e-9)
# are less accurate than ember's: those compare loosely here and tightly to mpmath below.
UNARY = {
    "lgamma": (ember.lgamma, torch.lgamma, None, 1e-13, 1e-13),
    "digamma": (ember.digamma, torch.digamma, None, 1e-12, 1e-12),
    "i0": (ember.i0, torch.i0, None, 1e-13, 0),
    "sinc": (ember.sinc, torch.sinc, None, 1e-12, 1e-14),
    "i0e": (ember.special.i0e, torch.special.i0e, None, 1e-13, 0),
    "i1": (ember.special.i1, torch.special.i1, None, 1e-13, 0),
    "i1e": (ember.special.i1e, torch.special.i1e, None, 1e-13, 0),
    "erfcx": (ember.special.erfcx, torch.special.erfcx, None, 1e-13, 0),
    "ndtr": (ember.special.ndtr, torch.special.ndtr, None, 1e-13, 1e-15),  # torch: 0 below 1e-16
    "log_ndtr": (ember.special.log_ndtr, torch.special.log_ndtr, None, 1e-12, 1e-15),
    "entr": (ember.special.entr, torch.special.entr, None, 1e-14, 0),
    "bessel_j0": (ember.special.bessel_j0, torch.special.bessel_j0, None, 1e-9, 1e-6),
    "bessel_j1": (ember.special.bessel_j1, torch.special.bessel_j1, None, 1e-9, 1e-6),
    "bessel_y0": (ember.special.bessel_y0, torch.special.bessel_y0, None, 1e-9, 1e-6),
    "bessel_y1": (ember.special.bessel_y1, torch.special.bessel_y1, None, 1e-9, 1e-6),
    "modified_bessel_i0": (ember.special.modified_bessel_i0, torch.special.modified_bessel_i0, None, 1e-13, 0),
    "modified_bessel_i1": (ember.special.modified_bessel_i1, torch.special.modified_bessel_i1, None, 1e-13, 0),
    "modified_bessel_k0": (ember.special.modified_bessel_k0, torch.special.modified_bessel_k0, None, 1e-13, 0),
    "modified_bessel_k1": (ember.special.modified_bessel_k1, torch.special.modified_bessel_k1, None, 1e-13, 0),
    "scaled_modified_bessel_k0": (ember.special.scaled_modified_bessel_k0,
                                  torch.special.scaled_modified_bessel_k0, None, 1e-13, 0),
    "scaled_modified_bessel_k1": (ember.special.scaled_modified_bessel_k1,
                                  torch.special.scaled_modified_bessel_k1, None, 1e-13, 0),
    "spherical_bessel_j0": (ember.special.spherical_bessel_j0, torch.special.spherical_bessel_j0, None, 1e-13, 1e-16),
    "airy_ai": (ember.special.airy_ai, torch.special.airy_ai, None, 1e-9, 5e-6),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64_against_torch(name):
    ef, tf, _, rtol, atol = UNARY[name]
    close(ef(E(GRID)), tf(Tt(GRID)), rtol, atol, name)


def test_ndtri_against_torch():
    p = np.concatenate([np.linspace(0, 1, 101), [1e-300, 5e-324, 1e-20, 1 - 1e-12, -0.1, 1.1, NAN, INF]])
    close(ember.special.ndtri(E(p)), torch.special.ndtri(Tt(p)), 1e-13, 1e-15, "ndtri")
    close(ember.special.ndtri(E(p, "float32")), torch.special.ndtri(Tt(p, "float32")), 1e-6, 1e-7, "ndtri")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32(name):
    ef, tf, _, rtol, atol = UNARY[name]
    x = np.concatenate([np.linspace(-12, 12, 49), [0.0, 1e-30, 30.1, 80.0, 100.0, -100.0, INF, -INF, NAN]])
    close(ef(E(x, "float32")), tf(Tt(x, "float32")), max(rtol, 2e-6), max(atol, 1e-7), name)


def test_half_types_and_promotion():
    x = [-3.5, -0.5, 0.25, 1.0, 2.5, 7.0]
    for name in ["lgamma", "digamma", "i0", "sinc", "i0e", "i1", "i1e", "ndtr", "entr"]:
        ef, tf = UNARY[name][:2]
        for dt in (torch.float16, torch.bfloat16):
            ed = getattr(ember, str(dt).split(".")[1])
            close(ef(ember.tensor(x, dtype=ed)), tf(torch.tensor(x, dtype=dt)), 1e-2, 1e-2, f"{name} {dt}")
        # integers and bools compute in the default float dtype
        close(ef(ember.tensor([1, 2, 3])), tf(torch.tensor([1, 2, 3])), 1e-6, 1e-7, name)
        close(ef(ember.tensor([True, False])), tf(torch.tensor([True, False])), 1e-6, 1e-7, name)
    # the functions torch computes in float32/float64 only refuse float16 as torch does
    for f in ["erfcx", "ndtri", "log_ndtr", "bessel_j0", "modified_bessel_k1", "airy_ai", "spherical_bessel_j0"]:
        check(lambda lib: getattr(lib.special, f)(lib.tensor([1.0], dtype=lib.float16)))
    check(lambda lib: lib.special.zeta(lib.tensor([2.0], dtype=lib.bfloat16), lib.tensor([1.0], dtype=lib.bfloat16)))
    check(lambda lib: lib.special.chebyshev_polynomial_t(lib.tensor([0.5], dtype=lib.float16), 2))
    # igamma refuses integers (no float promotion), as torch
    check(lambda lib: lib.igamma(lib.tensor([1, 2]), lib.tensor([1, 2])))
    check(lambda lib: lib.igamma(lib.tensor([1.0], dtype=lib.float16), lib.tensor([1.0], dtype=lib.float16)), tol=1e-3)


def test_polygamma_and_mvlgamma():
    x = np.concatenate([np.linspace(-6.25, 12, 74), [1e-8, 0.5, 30.0, 1e4, -INF, NAN]])
    for n in [0, 2, 3, 4]:
        close(ember.polygamma(n, E(x)), torch.polygamma(n, Tt(x)), 1e-12, 1e-12, f"polygamma {n}")
    # trigamma's poles: inf (torch gives a large finite value from tan's rounding)
    pole = (x <= 0) & (x == np.floor(x)) & np.isfinite(x)
    close(ember.polygamma(1, E(x[~pole])), torch.polygamma(1, Tt(x[~pole])), 1e-8, 1e-10, "trigamma")
    assert (ember.polygamma(1, E(x[pole])).numpy() == INF).all()
    xs = np.linspace(2.1, 30, 23)
    for p in range(1, 5):
        close(ember.mvlgamma(E(xs), p), torch.mvlgamma(Tt(xs), p), 1e-13, 1e-12, f"mvlgamma {p}")
        close(ember.special.multigammaln(E(xs, "float32"), p), torch.special.multigammaln(Tt(xs, "float32"), p),
              1e-6, 1e-5, f"multigammaln {p}")
    check(lambda lib: lib.polygamma(-1, lib.tensor([1.0])))
    check(lambda lib: lib.mvlgamma(lib.tensor([3.0]), 0))
    with pytest.raises(RuntimeError, match="too large"):
        ember.mvlgamma(ember.tensor([3.0]), 2**40)
    check(lambda lib: lib.mvlgamma(lib.tensor([3, 4]), 2), tol=1e-6)
    check(lambda lib: lib.tensor([1.5, 2.5]).polygamma(2), tol=1e-12)
    check(lambda lib: lib.tensor([1.5, 2.5]).mvlgamma(2), tol=1e-6)
    results = []
    for lib in (ember, torch):
        t = lib.tensor([1.5, 2.5], dtype=lib.float64)
        u = lib.tensor([3.5, 4.5], dtype=lib.float64)
        assert t.polygamma_(1) is t and u.mvlgamma_(3) is u
        results.append(t.tolist() + u.tolist())
    assert np.allclose(results[0], results[1], rtol=1e-13)


def test_incomplete_gamma():
    a = np.array([1e-3, 0.1, 0.5, 1.0, 2.5, 10.0, 50.0, 200.0, 1000.0])
    x = np.array([0.0, 1e-3, 0.1, 0.9, 1.0, 3.0, 11.0, 49.0, 60.0, 210.0, 1500.0, INF])
    A, X = np.meshgrid(a, x)
    A, X = A.ravel(), X.ravel()
    for e, t in [(ember.igamma, torch.igamma), (ember.igammac, torch.igammac),
                 (ember.special.gammainc, torch.special.gammainc), (ember.special.gammaincc, torch.special.gammaincc)]:
        close(e(E(A), E(X)), t(Tt(A), Tt(X)), 1e-8, 1e-12, t.__name__)
        close(e(E(A, "float32"), E(X, "float32")), t(Tt(A, "float32"), Tt(X, "float32")), 1e-5, 1e-6, t.__name__)
    edges_a = [0.0, 0.0, -1.0, 1.0, NAN, 1.0, INF, INF, 2.0]
    edges_x = [1.0, 0.0, 1.0, -1.0, 1.0, NAN, 1.0, INF, INF]
    for e, t in [(ember.igamma, torch.igamma), (ember.igammac, torch.igammac)]:
        close(e(E(edges_a), E(edges_x)), t(Tt(edges_a), Tt(edges_x)), 0, 0, "igamma edges")


def test_zeta_and_xlog1py():
    s = np.array([1.0, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 0.5, -2.0, NAN])
    q = np.array([0.1, 0.5, 1.0, 2.0, 7.5, 100.0, 0.0, -1.0, -1.5, -3.25])
    S, Q = np.meshgrid(s, q)
    close(ember.special.zeta(E(S.ravel()), E(Q.ravel())), torch.special.zeta(Tt(S.ravel()), Tt(Q.ravel())),
          1e-12, 1e-14, "zeta")
    check(lambda lib: lib.special.zeta(2.0, lib.tensor([1.0, 2.0])), tol=1e-12)
    check(lambda lib: lib.special.zeta(lib.tensor([2.0, 3.0]), 1), tol=1e-6)
    x = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 3.0, 0.0, 2.5])
    y = np.array([-1.0, NAN, 0.0, -1.0, 0.5, 1e-12, -2.0, INF])
    close(ember.special.xlog1py(E(x), E(y)), torch.special.xlog1py(Tt(x), Tt(y)), 1e-14, 0, "xlog1py")
    check(lambda lib: lib.special.xlog1py(2, lib.tensor([0.5, 1.0])), tol=1e-6)
    check(lambda lib: lib.special.xlog1py(lib.tensor([1, 2]), lib.tensor([1, 2])), tol=1e-6)
    check(lambda lib: lib.special.xlogy(lib.tensor([0.0, 2.0]), lib.tensor([0.0, 3.0])), tol=1e-6)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


def test_polynomials():
    xs = np.array([-2.0, -1.0, -0.7, -0.5, 0.0, 0.3, 0.5, 0.9, 1.0, 1.5, 3.0])
    ns = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 7.0, 9.0, 12.0, 20.0])
    X, N = np.meshgrid(xs, ns)
    X, N = X.ravel(), N.ravel()
    for name in POLYNOMIALS:
        e, t = getattr(ember.special, name), getattr(torch.special, name)
        close(e(E(X), E(N)), t(Tt(X), Tt(N)), 1e-10, 1e-10, name)
        close(e(E(X, "float32"), E(N, "float32")), t(Tt(X, "float32"), Tt(N, "float32")), 1e-4, 1e-4, name)
        # a number for either argument; integer tensors promote to float
        check(lambda lib: getattr(lib.special, name)(lib.tensor([0.25, 2.0]), 4), tol=1e-6)
        check(lambda lib: getattr(lib.special, name)(0.5, lib.tensor([3.0, 6.0])), tol=1e-6)
        check(lambda lib: getattr(lib.special, name)(lib.tensor([1, 2]), lib.tensor([2, 3])), tol=1e-6)
        # NaN x gives NaN (torch's t, v, h, he do too); a huge degree ends (inf, or NaN where
        # the recurrence stays bounded past 2^24 steps) rather than running for hours
        assert math.isnan(e(E([NAN]), E([3.0])).item())
        assert not np.isfinite(e(E([0.5, 1.5]), E([1e300, 1e300])).numpy()[1])


def test_accuracy_against_mpmath():
    mp = pytest.importorskip("mpmath")
    x = [0.3, 1.0, 2.4048, 5.5, 7.0, 10.0, 20.0, 24.9, 25.1, 40.0, 1000.0]
    cases = [(ember.special.bessel_j0, lambda v: mp.besselj(0, v), x),
             (ember.special.bessel_j1, lambda v: mp.besselj(1, v), x),
             (ember.special.bessel_y0, lambda v: mp.bessely(0, v), x),
             (ember.special.bessel_y1, lambda v: mp.bessely(1, v), x),
             (ember.special.airy_ai, mp.airyai, [-30.0, -7.5, -6.9, -5.0, -2.25, -1.0, 0.0, 0.5, 1.5, 5.0, 20.0]),
             (lambda t: ember.polygamma(1, t), lambda v: mp.psi(1, v), [-2.5, 0.25, 1.25, 3.0, 9.5, 100.0]),
             (lambda t: ember.igamma(ember.full_like(t, 50.0), t), lambda v: mp.gammainc(50, 0, v, regularized=True),
              [30.0, 45.0, 49.0, 50.0, 55.0, 60.0, 80.0])]
    for fn, ref, xs in cases:
        got = fn(E(xs)).tolist()
        want = [float(ref(v)) for v in xs]
        assert np.allclose(got, want, rtol=1e-10, atol=1e-14), (xs, got, want)


def test_layouts_out_inplace_empty():
    base = torch.linspace(0.1, 9, 24, dtype=torch.float64).reshape(4, 6)
    eb = ember.from_numpy(base.numpy().copy())
    for e, t in [(ember.lgamma, torch.lgamma), (ember.special.i1e, torch.special.i1e),
                 (ember.special.modified_bessel_k1, torch.special.modified_bessel_k1)]:
        close(e(eb.t()), t(base.t()), 1e-12, 1e-14, "transposed")
        close(e(eb[:, ::2]), t(base[:, ::2]), 1e-12, 1e-14, "stepped")
        assert e(eb.t()).stride() == t(base.t()).stride()
        close(e(ember.empty(0, 3)), t(torch.empty(0, 3)), 0, 0, "empty")
    close(ember.igamma(eb[:, :1], eb[0]), torch.igamma(base[:, :1], base[0]), 1e-12, 1e-14, "broadcast")
    close(ember.special.legendre_polynomial_p(eb[:, ::3] / 10, 3), torch.special.legendre_polynomial_p(
        base[:, ::3] / 10, 3), 1e-12, 1e-14, "stepped")
    # out= and in-place
    got = []
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.5, 2.5], dtype=lib.float64)
        out = lib.empty(3, dtype=lib.float64)
        r = lib.special.i0e(x, out=out)
        assert r is out
        y = x.clone()
        y.lgamma_().digamma_()
        z = x.clone()
        z.i0_().sinc_()
        w = x.clone()
        w.igamma_(lib.tensor(2.0, dtype=lib.float64))
        got.append([out.tolist(), y.tolist(), z.tolist(), w.tolist(),
                    lib.special.zeta(x + 1, x, out=lib.empty(3, dtype=lib.float64)).tolist()])
    assert np.allclose(np.array(got[0]), np.array(got[1]), rtol=1e-12)
    check(lambda lib: lib.lgamma(lib.tensor([1.5]), out=lib.empty(1, dtype=lib.int64)))
    check(lambda lib: lib.tensor([1, 2]).lgamma_())
    check(lambda lib: lib.special.ndtr(lib.tensor([0.5]), out=lib.empty(1, dtype=lib.float64)), tol=1e-12)


GRADS = [
    (lambda lib, x: lib.lgamma(x), [-2.5, 0.3, 4.0]),
    (lambda lib, x: lib.digamma(x), [-2.5, 0.3, 4.0]),
    (lambda lib, x: lib.polygamma(2, x), [-2.5, 0.3, 4.0]),
    (lambda lib, x: lib.mvlgamma(x, 3), [1.3, 2.0, 5.0]),
    (lambda lib, x: lib.i0(x), [-3.0, 0.0, 2.0]),
    (lambda lib, x: lib.special.i0e(x), [-3.0, 0.5, 2.0]),
    (lambda lib, x: lib.special.i1(x), [-3.0, 0.0, 2.0]),
    (lambda lib, x: lib.special.i1e(x), [-3.0, 0.0, 2.0]),
    (lambda lib, x: lib.special.erfcx(x), [-2.0, 0.5, 30.0]),
    (lambda lib, x: lib.special.ndtr(x), [-2.0, 0.5, 3.0]),
    (lambda lib, x: lib.special.ndtri(x), [0.01, 0.5, 0.9]),
    (lambda lib, x: lib.special.log_ndtr(x), [-20.0, 0.5, 3.0]),
    (lambda lib, x: lib.special.entr(x), [0.1, 0.5, 3.0]),
    (lambda lib, x: lib.sinc(x), [-1.5, 0.0, 0.3, 2.0]),
    (lambda lib, x: lib.special.xlog1py(x, x * 2), [0.0, 0.5, 3.0]),
    (lambda lib, x: lib.igamma(lib.tensor([0.5, 2.0, 4.0], dtype=lib.float64), x), [0.3, 1.0, 5.0]),
    (lambda lib, x: lib.igammac(lib.tensor([0.5, 2.0, 4.0], dtype=lib.float64), x), [0.3, 1.0, 5.0]),
    (lambda lib, x: lib.special.zeta(lib.tensor([2.0, 3.5, 4.0], dtype=lib.float64), x), [0.3, 1.0, 5.0]),
]


@pytest.mark.parametrize("case", range(len(GRADS)))
def test_gradients(case):
    fn, xs = GRADS[case]
    x = ember.tensor(xs, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: fn(ember, t), (x,))
    # the same gradient as torch's
    tx = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    (g,) = ember.autograd.grad(fn(ember, x).sum(), x)
    (tg,) = torch.autograd.grad(fn(torch, tx).sum(), tx)
    close(g, tg, 1e-9, 1e-12, f"gradient {case}")


def test_gradients_torch_refuses():
    for f in [lambda lib, a, x: lib.igamma(a, x), lambda lib, a, x: lib.igammac(a, x),
              lambda lib, a, x: lib.special.zeta(a, x)]:
        for lib in (ember, torch):
            a = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
            x = lib.tensor([1.0, 2.0], dtype=lib.float64)
            with pytest.raises(NotImplementedError):
                f(lib, a, x).sum().backward()
    for name in ["bessel_j0", "modified_bessel_k1", "airy_ai", "spherical_bessel_j0"]:
        check(lambda lib: getattr(lib.special, name)(lib.tensor([1.0], requires_grad=True)).requires_grad)
    check(lambda lib: lib.special.hermite_polynomial_h(lib.tensor([1.0], requires_grad=True), 2).requires_grad)


def test_namespace():
    import torch.special as ts

    assert sorted(ember.special.__all__) == sorted(ts.__all__)
    for name in ts.__all__:
        assert callable(getattr(ember.special, name)), name
    for name in ["lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "i0", "sinc", "xlogy"]:
        assert callable(getattr(ember, name)), name
    for name in ["lgamma", "lgamma_", "digamma", "digamma_", "polygamma", "polygamma_", "mvlgamma", "mvlgamma_",
                 "igamma", "igamma_", "igammac", "igammac_", "i0", "i0_", "sinc", "sinc_"]:
        assert callable(getattr(ember.Tensor, name)), name
    x = [[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]]
    check(lambda lib: lib.special.softmax(lib.tensor(x), 1), tol=1e-6)
    check(lambda lib: lib.special.log_softmax(lib.tensor(x), 0, dtype=lib.float64), tol=1e-12)
    check(lambda lib: lib.special.logsumexp(lib.tensor(x), 1), tol=1e-6)
    check(lambda lib: lib.special.expit(lib.tensor(x)), tol=1e-6)
    check(lambda lib: lib.special.logit(lib.tensor([0.25, 0.5]), eps=1e-6), tol=1e-6)
    check(lambda lib: lib.special.round(lib.tensor([1.25, 2.5])))
    check(lambda lib: lib.special.psi(lib.tensor([1.25, 2.5])), tol=1e-6)
    check(lambda lib: lib.special.gammaln(lib.tensor([1.25, 2.5])), tol=1e-6)


def test_forward_ad_and_double_backward():
    import torch.autograd.forward_ad as tfwd

    import ember.autograd.forward_ad as efwd

    xs, ts = [0.5, 1.5, 3.0], [1.0, -2.0, 0.5]
    for fn in [lambda lib, x: lib.lgamma(x), lambda lib, x: lib.polygamma(1, x), lambda lib, x: lib.special.i1e(x),
               lambda lib, x: lib.special.log_ndtr(x), lambda lib, x: lib.special.xlog1py(x, x)]:
        tangents = []
        for lib, fwd in ((ember, efwd), (torch, tfwd)):
            with fwd.dual_level():
                x = fwd.make_dual(lib.tensor(xs, dtype=lib.float64), lib.tensor(ts, dtype=lib.float64))
                tangents.append(fwd.unpack_dual(fn(lib, x)).tangent.tolist())
        assert np.allclose(tangents[0], tangents[1], rtol=1e-10)
    for fn in [ember.lgamma, ember.digamma, ember.i0, ember.special.erfcx, lambda t: ember.mvlgamma(t + 1, 3)]:
        x = ember.tensor(xs, dtype=ember.float64, requires_grad=True)
        assert ember.autograd.gradgradcheck(fn, (x,))


def _special_graph(fn):
    def make():
        x = ember.tensor([0.7, 1.3, 2.2], dtype=ember.float64, requires_grad=True)
        return fn(x)
    return make


# graphs whose nodes cover the special functions' formulas (tests/test_autograd.py checks
# that every formula of derivatives.yaml runs somewhere)
DERIVATIVE_GRAPHS = [
    _special_graph(lambda x: ember.digamma(x) + ember.lgamma(x) + ember.polygamma(1, x) + ember.i0(x) + ember.sinc(x)),
    _special_graph(lambda x: ember.mvlgamma(x + 2, 2) + ember.igamma(x, x) + ember.igammac(x, x)),
    _special_graph(lambda x: ember.special.entr(x) + ember.special.erfcx(x) + ember.special.i0e(x)
                   + ember.special.i1(x) + ember.special.i1e(x)),
    _special_graph(lambda x: ember.special.log_ndtr(x) + ember.special.ndtr(x) + ember.special.ndtri(x / 3)
                   + ember.special.xlog1py(x, x) + ember.special.zeta(x + 1, x)),
]
