"""Parity with torch for the composed math and statistics ops of ember/_ops_math.py and
the windows of ember.signal.windows: values, dtypes, shapes, errors, gradients."""
from __future__ import annotations

import doctest
import math
import warnings

import pytest

import ember
from helpers import T, check, each, torch

NAN, INF = float("nan"), float("inf")


def pair(values, name="float32"):
    """The same tensor in both libraries, as a function of lib."""
    return lambda lib: T(lib, values, name)


def gradcheck_both(fn, *shapes, nondiff=()):
    """fn(lib, *tensors): ember's gradcheck passes and its gradients equal torch's."""
    torch.manual_seed(0)
    base = [torch.randn(*s, dtype=torch.float64) for s in shapes]
    tt = [b.clone().requires_grad_() for b in base]
    et = [ember.tensor(b.tolist(), dtype=ember.float64).requires_grad_() for b in base]
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), et)
    out_t, out_e = fn(torch, *tt), fn(ember, *et)
    grads_t = torch.autograd.grad(out_t.sum(), tt)
    grads_e = ember.autograd.grad(out_e.sum(), et)
    for g_e, g_t in zip(grads_e, grads_t):
        assert torch.allclose(torch.tensor(g_e.tolist(), dtype=torch.float64), g_t, atol=1e-9)


def test_names_and_methods():
    for name in ("isin", "quantile", "nanquantile", "cov", "corrcoef", "histogram", "histogramdd", "gcd", "gcd_",
                 "lcm", "lcm_", "heaviside", "frexp", "ldexp", "ldexp_", "nextafter", "deg2rad", "deg2rad_",
                 "rad2deg", "rad2deg_", "gradient", "trapezoid", "trapz", "cumulative_trapezoid", "renorm",
                 "index_reduce", "put", "dist", "sinc", "sinc_", "xlogy_", "hann_window", "hamming_window",
                 "blackman_window", "bartlett_window", "kaiser_window"):
        assert hasattr(torch, name) and hasattr(ember, name), name
    for name in ("quantile", "nanquantile", "cov", "corrcoef", "histogram", "gcd", "gcd_", "lcm", "lcm_",
                 "heaviside", "heaviside_", "frexp", "ldexp", "ldexp_", "nextafter", "nextafter_", "deg2rad",
                 "deg2rad_", "rad2deg", "rad2deg_", "renorm", "renorm_", "index_reduce", "index_reduce_", "put",
                 "put_", "dist", "sinc", "sinc_"):
        assert hasattr(torch.Tensor, name) and hasattr(ember.Tensor, name), name
    assert sorted(ember.signal.windows.__all__) == sorted(torch.signal.windows.__all__)
    assert ember.return_types.histogram is type(ember.histogram(ember.ones(2), 2))


def test_docstring_examples():
    import ember._ops_math as m
    import ember.signal.windows as w

    for module in (m, w):
        failures, _ = doctest.testmod(module, extraglobs={"ember": ember, "math": math}, verbose=False)
        assert failures == 0


def test_isin():
    each([
        (pair([1, 2, 3, 4]), pair([2, 4, 9]), {}),
        (pair([[1, 2], [3, 4]], "int8"), pair([4, 1], "int64"), {"invert": True}),
        (pair([1.5, NAN, 2.0]), pair([NAN, 2.0], "float64"), {}),
        (pair([1, 2, 3]), pair([], "int64"), {}),
        (pair([], "float32"), pair([1.0]), {}),
        (lambda lib: 2, pair([1, 2]), {}),
        (pair([1, 2, 3]), lambda lib: 2, {}),
        (pair([1, 2, 3]), lambda lib: 2.5, {}),
        (lambda lib: T(lib, [[1, 2, 3], [4, 5, 6]]).t(), pair([5, 3]), {"assume_unique": True}),
        (pair([True, False], "bool"), pair([True], "bool"), {}),
    ], lambda a, b, kw: check(lambda lib: lib.isin(a(lib), b(lib), **kw)))


QUANTILE_CASES = [
    (0.5, None, False), (0.0, 0, True), (1.0, 1, False), (0.3, -1, True),
    ([0.1, 0.5, 0.75], 1, False), ([0.25, 0.9], None, True), ([], 0, False),
]


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile(fn):
    data = [[1.0, 7.0, 3.0, 4.0], [NAN, 2.0, 0.5, 9.0], [NAN, NAN, NAN, NAN]]
    cases = []
    for q, dim, keepdim in QUANTILE_CASES:
        for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
            cases.append((q, dim, keepdim, interpolation))

    def one(q, dim, keepdim, interpolation):
        def call(lib):
            qq = T(lib, q, "float64") if isinstance(q, list) else q
            x = T(lib, data, "float64").t().contiguous().t()  # non-contiguous
            return getattr(lib, fn)(x, qq, dim, keepdim, interpolation=interpolation)

        check(call, tol=1e-12)

    each(cases, one)
    # rank 1.5 / 0.5: nearest rounds half to even
    check(lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0, 3.0, 4.0]), T(lib, [0.5, 1 / 6]), interpolation="nearest"))
    check(lambda lib: getattr(T(lib, [[1.0, 2.0], [5.0, 3.0]]), fn)(0.4, dim=0))  # method
    check(lambda lib: getattr(lib, fn)(T(lib, 2.0), 0.3, dim=0, keepdim=True))
    check(lambda lib: getattr(lib, fn)(T(lib, [2.0, 1.0]), 0.3, out=lib.empty(0)))
    for bad in [
        lambda lib: getattr(lib, fn)(T(lib, [1, 2], "int64"), 0.5),
        lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0], "float16"), 0.5),
        lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0]), T(lib, [0.5], "float64")),
        lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0]), 1.5),
        lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0]), T(lib, [0.5, -0.1])),
        lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0]), T(lib, [[0.5]])),
        lambda lib: getattr(lib, fn)(lib.empty(0, 3), 0.5, dim=1),
        lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0]), 0.5, interpolation="foo"),
        lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0]), 0.5, dim=2),
    ]:
        check(bad)
    gradcheck_both(lambda lib, x: getattr(lib, fn)(x, 0.37, dim=1), (3, 5))
    gradcheck_both(lambda lib, x: getattr(lib, fn)(x, lib.tensor([0.2, 0.5], dtype=lib.float64),
                                                   interpolation="midpoint"), (6,))


def test_cov_corrcoef():
    x = [[0.0, 1.0, 2.0, 5.0], [2.0, 1.5, 0.0, -1.0], [1.0, 1.0, 3.0, 2.0]]
    fw = pair([1, 2, 0, 3], "int64")
    aw = pair([0.5, 1.0, 2.0, 0.1], "float64")
    each([
        (pair(x), {}), (pair(x, "int64"), {}), (pair(x[0]), {}), (pair(x), {"correction": 0}),
        (pair(x), {"correction": 2, "fweights": fw}), (pair(x), {"aweights": aw}),
        (pair(x, "float64"), {"fweights": fw, "aweights": aw, "correction": 1}),
        (lambda lib: T(lib, x).t().contiguous().t(), {}),
        (lambda lib: lib.ones(2, 3, 2), {}), (pair([True, False], "bool"), {}),
        (pair(x), {"fweights": pair([1.0, 2.0, 0.0, 3.0])}), (pair(x), {"fweights": pair([-1, 2, 0, 3], "int64")}),
        (pair(x), {"aweights": pair([1, 2, 0, 3], "int64")}), (pair(x), {"aweights": pair([-1.0, 2.0, 0.0, 3.0])}),
        (pair(x), {"fweights": pair([1, 2], "int64")}), (pair(x), {"fweights": lambda lib: lib.ones(1, 4).long()}),
    ], lambda a, kw: check(lambda lib: lib.cov(a(lib), **{k: v(lib) if callable(v) else v
                                                          for k, v in kw.items()}), tol=1e-6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib: lib.cov(T(lib, [1.0])))
        check(lambda lib: lib.cov(lib.empty(2, 0)))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        ember.cov(ember.tensor([1.0]))
    each([(pair(x),), (pair(x, "int64"),), (pair(x[1]),), (pair([[1.0, 1.0], [1.0, 2.0]]),)],
         lambda a: check(lambda lib: lib.corrcoef(a(lib)), tol=1e-6))
    check(lambda lib: T(lib, x).cov(correction=0), tol=1e-6)
    gradcheck_both(lambda lib, a: lib.cov(a), (3, 5))
    gradcheck_both(lambda lib, a, w: lib.cov(a, aweights=w.abs() + 0.1), (2, 4), (4,))
    gradcheck_both(lambda lib, a: lib.corrcoef(a), (3, 5))


def test_histogram():
    x = [0.5, 1.0, 2.5, 3.0, 0.0, 1.7, 3.0]
    each([
        (pair(x), 3, {}), (pair(x, "float64"), 4, {"density": True}), (pair(x), 2, {"range": (1.0, 2.0)}),
        (pair(x), 3, {"weight": pair([1.0, 2.0, 0.5, 1.0, 0.0, 3.0, 1.0])}),
        (pair(x), pair([0.0, 1.0, 2.5, 3.0]), {}), (pair(x), pair([0.0, 1.0, 2.5, 3.0]), {"density": True}),
        (pair(x), pair([3.0, 2.0, 1.0]), {}),
        (lambda lib: T(lib, [[1.0, 2.0], [3.0, 9.0]]).t(), 4, {}),
        (lambda lib: lib.ones(3), 3, {}), (lambda lib: lib.empty(0), 3, {}),
        (lambda lib: lib.empty(0), 2, {"range": (1.0, 1.0)}), (lambda lib: lib.ones(3), 2, {"range": (1.0, 1.0)}),
        (pair([1, 2], "int64"), 3, {}), (pair([1.0, 2.0], "float16"), 3, {}), (pair(x), 0, {}),
        (pair(x), 3, {"range": (2.0, 1.0)}), (pair(x), 3, {"range": (0.0, INF)}), (pair([1.0, NAN]), 3, {}),
        (pair([1.0, INF]), 3, {}), (pair(x), pair([0.0, 1.0], "float64"), {}),
        (pair(x), lambda lib: lib.ones(2, 2), {}), (pair(x), 3, {"weight": pair([1.0, 2.0])}),
        (pair(x), 3, {"weight": lambda lib: lib.ones(7, dtype=lib.float64)}),
    ], lambda a, bins, kw: check(lambda lib: lib.histogram(a(lib), bins(lib) if callable(bins) else bins,
                                                            **{k: v(lib) if callable(v) else v
                                                               for k, v in kw.items()}), tol=1e-6))
    check(lambda lib: T(lib, x).histogram(4, range=(0.0, 4.0)))  # method
    # out=
    check(lambda lib: lib.histogram(T(lib, x), 2, out=(lib.empty(0), lib.empty(0))))
    # histogramdd
    pts = [[0.1, 0.2], [0.5, 0.9], [0.9, 0.1], [0.3, 0.3], [1.0, 1.0]]
    each([
        (pair(pts), 2, {}), (pair(pts), [2, 3], {}), (pair(pts, "float64"), [2, 3], {"density": True}),
        (pair(pts), [2, 2], {"range": [0.0, 1.0, 0.0, 2.0], "weight": pair([1.0, 2.0, 3.0, 4.0, 5.0])}),
        (pair(pts), lambda lib: [T(lib, [0.0, 0.5, 1.0]), T(lib, [0.0, 0.25, 1.0])], {}),
        (lambda lib: T(lib, pts).reshape(5, 1, 2), 2, {}),
        (pair(pts[0]), 2, {}), (pair(pts), [2, 3, 4], {}), (pair(pts), 2, {"range": [0.0, 1.0]}),
    ], lambda a, bins, kw: check(lambda lib: lib.histogramdd(a(lib), bins(lib) if callable(bins) else bins,
                                                              **{k: v(lib) if callable(v) else v
                                                                 for k, v in kw.items()}), tol=1e-6))


def test_gcd_lcm():
    a = [12, -9, 0, 7, 0, -4, 100, 36]
    b = [18, 6, 5, 0, 0, -6, 75, 48]
    for fn in ("gcd", "lcm"):
        each([(n,) for n in ("uint8", "int8", "int16", "int32", "int64")],
             lambda n: check(lambda lib: getattr(lib, fn)(T(lib, [abs(v) for v in a] if n == "uint8" else a, n),
                                                          T(lib, [abs(v) for v in b] if n == "uint8" else b, n))))
        check(lambda lib: getattr(lib, fn)(T(lib, [[4, 6], [8, 9]]).t(), T(lib, [6, 3], "int32")))  # broadcast
        check(lambda lib: getattr(lib, fn)(T(lib, [], "int64"), T(lib, [3], "int64")))
        check(lambda lib: getattr(T(lib, a, "int32"), fn + "_")(T(lib, b, "int64")))
        check(lambda lib: getattr(lib, fn + "_")(T(lib, a, "int64"), T(lib, b, "int64")))
        check(lambda lib: getattr(lib, fn)(T(lib, [200], "uint8"), T(lib, [3], "uint8")))
        for bad in ([1.0], "float32"), ([True], "bool"):
            check(lambda lib: getattr(lib, fn)(T(lib, *bad), T(lib, *bad)))
        check(lambda lib: getattr(lib, fn)(T(lib, a), 2))
        check(lambda lib: getattr(T(lib, [3]), fn + "_")(T(lib, [[3], [4]])))


def test_heaviside():
    each([
        ([-1.0, 0.0, -0.0, 2.0, NAN, INF], [0.5], "float32"), ([-2, 0, 3], [7, 8, 9], "int64"),
        ([True, False], [True], "bool"), ([[0.0, 1.0]], [[2.0], [3.0]], "float64"),
    ], lambda x, v, n: check(lambda lib: lib.heaviside(T(lib, x, n), T(lib, v, n))))
    check(lambda lib: T(lib, [-1.0, 0.0]).heaviside_(T(lib, [5.0])))
    check(lambda lib: lib.heaviside(T(lib, [1.0]), T(lib, [1], "int64")))
    check(lambda lib: lib.heaviside(T(lib, [1.0]), 0.5))
    check(lambda lib: lib.ones(3).heaviside_(lib.ones(2, 3)))


def test_frexp_ldexp():
    special = [0.0, -0.0, INF, -INF, NAN, 1e-45, -3.0, 0.1, 1e30, 8.0, 2 ** -140]
    each([("float32", special), ("float64", special + [5e-324, 1e300]), ("float16", [3.0, 0.1, 1e-6, 6e4, 0.0]),
          ("bfloat16", [3.0, 0.1, 1e-30])],
         lambda n, v: check(lambda lib: tuple(lib.frexp(T(lib, v, n)))))
    check(lambda lib: tuple(T(lib, [[1.0, 3.0], [5.0, 6.0]]).t().frexp()))
    check(lambda lib: tuple(lib.frexp(T(lib, [1.5]), out=(lib.empty(0), lib.empty(0, dtype=lib.int32)))))
    check(lambda lib: lib.frexp(T(lib, [1, 2], "int64")))
    r = ember.frexp(ember.tensor([6.0]))
    assert (r.mantissa.item(), r.exponent.item()) == (0.75, 3)
    gradcheck_both(lambda lib, x: lib.frexp(x * 40).mantissa, (6,))
    # ldexp
    each([
        ([1.0, 2.0, 3.0], "float32", [1, 2, -3], "int64"), ([1, 2], "int64", [1, 2], "int64"),
        ([1.0], "float64", [200], "int64"), ([1.0, 2.0], "float32", [0.5, 2.0], "float32"),
        ([1.0, 2.0], "float16", [1, 3], "int32"), ([[1.0], [2.0]], "float32", [1, 2], "int64"),
    ], lambda x, xn, e, en: check(lambda lib: lib.ldexp(T(lib, x, xn), T(lib, e, en))))
    check(lambda lib: T(lib, [1.0, 2.0]).ldexp_(T(lib, [3, 4], "int64")))
    check(lambda lib: lib.ldexp_(T(lib, [1.0, 2.0]), T(lib, [3, 4], "int64")))
    check(lambda lib: T(lib, [1, 2], "int64").ldexp_(T(lib, [3, 4], "int64")))
    check(lambda lib: lib.ldexp(T(lib, [1.0]), 2))
    gradcheck_both(lambda lib, x, e: lib.ldexp(x, e), (3,), (3,))


def test_nextafter():
    x = [1.0, 1.0, 0.0, 0.0, -0.0, -1.0, INF, -INF, NAN, 2.0, 3.4e38, 1e-45, -1e-45]
    y = [2.0, 0.0, 1.0, -1.0, 0.0, -2.0, 0.0, 0.0, 1.0, NAN, INF, 0.0, 0.0]
    each([(n,) for n in ("float32", "float64", "float16", "bfloat16")],
         lambda n: check(lambda lib: lib.nextafter(T(lib, [min(v, 6e4) for v in x] if n == "float16" else x, n),
                                                   T(lib, y, n))))
    check(lambda lib: lib.nextafter(T(lib, [1.0, 2.0]), T(lib, [[3.0], [0.0]], "float64")))
    check(lambda lib: T(lib, [1.0, 2.0]).t().nextafter_(T(lib, [0.0])))
    check(lambda lib: lib.nextafter(T(lib, [1], "int64"), T(lib, [2], "int64")))
    check(lambda lib: lib.nextafter(T(lib, [1.0]), 2.0))


def test_elementwise_formulas():
    ints = pair([0, 1, -90, 180, 360], "int64")
    floats = [0.0, 1.0, -0.5, 2.5, 1e-20, INF, NAN, -3.0]
    for fn in ("deg2rad", "rad2deg", "sinc"):
        each([(ints,), (pair(floats),), (pair(floats, "float64"),), (pair([1.0, 2.0], "float16"),),
              (pair([True, False], "bool"),), (lambda lib: T(lib, [[1.0, 2.0], [3.0, 4.0]]).t(),),
              (lambda lib: lib.empty(0, 2),)],
             lambda a: check(lambda lib: getattr(lib, fn)(a(lib)), tol=1e-6))
        check(lambda lib: getattr(T(lib, floats), fn + "_")(), tol=1e-6)
        check(lambda lib: getattr(lib, fn + "_")(T(lib, floats)), tol=1e-6)
        check(lambda lib: getattr(T(lib, [1, 2], "int64"), fn + "_")())
        check(lambda lib: getattr(lib, fn)(T(lib, [1.0, 2.0]), out=lib.empty(2, dtype=lib.float64)), tol=1e-6)
        gradcheck_both(lambda lib, x: getattr(lib, fn)(x), (5,))
    gradcheck_both(lambda lib, x: lib.sinc(x * 0), (3,))  # derivative 0 at 0
    check(lambda lib: lib.xlogy_(T(lib, [1.0, 2.0]), T(lib, [3.0, 0.5])), tol=1e-6)


def test_dist():
    each([(p,) for p in (2, 1, 0, 3.5, INF, -INF, -1)],
         lambda p: check(lambda lib: lib.dist(T(lib, [[1.0, 2.0], [0.0, -4.0]]), T(lib, [0.5, 2.0]), p), tol=1e-6))
    check(lambda lib: T(lib, [1.0, 2.0]).dist(T(lib, [0.0, 2.0], "float64")))
    check(lambda lib: lib.dist(lib.empty(0), lib.empty(0)))
    check(lambda lib: lib.dist(T(lib, [1], "int64"), T(lib, [2], "int64")))
    check(lambda lib: lib.dist(T(lib, [1.0]), 2.0))
    gradcheck_both(lambda lib, a, b: lib.dist(a, b, 3), (2, 3), (3,))


def test_renorm():
    x = [[3.0, 4.0, 0.0], [0.3, 0.4, 0.1], [10.0, -1.0, 2.0]]
    each([(2, 0, 1.0), (1, 1, 2.0), (INF, -1, 3.0), (3.5, 0, 0.0)],
         lambda p, d, m: check(lambda lib: lib.renorm(T(lib, x), p, d, m), tol=1e-6))
    check(lambda lib: T(lib, x).t().renorm_(2, 0, 1.0), tol=1e-6)
    check(lambda lib: lib.renorm(lib.rand(2, 0, 3), 2, 1, 1.0))
    for values, dtype, p, dim, maxnorm in [([1.0, 2.0], "float32", 2, 0, 1.0), ([[1, 2]], "int64", 2, 0, 1.0),
                                           ([[1.0]], "float32", 0, 0, 1.0), ([[1.0]], "float32", 2, 0, -1.0),
                                           ([[1.0]], "float32", 2, 5, 1.0)]:
        check(lambda lib: lib.renorm(T(lib, values, dtype), p, dim, maxnorm))
    gradcheck_both(lambda lib, a: lib.renorm(a, 2, 1, 0.7), (3, 4))


def test_put():
    each([
        (lambda lib: lib.arange(6.0).reshape(2, 3), pair([0, 5, -1], "int64"), pair([9.0, 8.0, 7.0]), False),
        (lambda lib: lib.arange(6.0).reshape(2, 3).t(), pair([1, 5], "int64"), pair([7.0, 8.0]), False),
        (lambda lib: lib.arange(6.0).reshape(2, 3), pair([[1, 1], [2, 1]], "int64"), pair([1.0, 2.0, 3.0, 4.0]),
         True),
        (lambda lib: lib.tensor(3.0), pair([0], "int64"), pair([5.0]), True),
        (lambda lib: lib.ones(2, 2), pair([], "int64"), pair([]), False),
        (lambda lib: lib.ones(3), pair([0.0]), pair([1.0]), False),
        (lambda lib: lib.ones(3), pair([0], "int32"), pair([1.0]), False),
        (lambda lib: lib.ones(3), pair([5], "int64"), pair([1.0]), False),
        (lambda lib: lib.ones(3), pair([-4], "int64"), pair([1.0]), False),
        (lambda lib: lib.ones(3), pair([0, 1], "int64"), pair([1.0]), False),
        (lambda lib: lib.ones(3), pair([0], "int64"), pair([1.0], "float64"), False),
    ], lambda a, i, s, acc: (check(lambda lib: lib.put(a(lib), i(lib), s(lib), acc)),
                             check(lambda lib: a(lib).put_(i(lib), s(lib), accumulate=acc))))
    check(lambda lib: T(lib, [1.0, 2.0, 3.0]).put(T(lib, [2], "int64"), T(lib, [0.0])))
    gradcheck_both(lambda lib, a, s: lib.put(a, lib.tensor([3, 0, 3]), s, accumulate=True), (2, 3), (3,))
    gradcheck_both(lambda lib, a, s: a.put(lib.tensor([1, 4]), s), (2, 3), (2,))


def test_index_reduce():
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [2.0, 0.5, -1.0]]
    src = [[2.0, 3.0, 4.0], [-1.0, 10.0, 0.0]]
    cases = [(r, inc) for r in ("prod", "mean", "amax", "amin") for inc in (True, False)]
    each(cases, lambda r, inc: (
        check(lambda lib: T(lib, x).index_reduce(0, T(lib, [1, 1], "int64"), T(lib, src), r, include_self=inc),
              tol=1e-6),
        check(lambda lib: T(lib, x).t().index_reduce_(1, T(lib, [3, 0], "int32"), T(lib, src), r,
                                                      include_self=inc), tol=1e-6),
        check(lambda lib: lib.index_reduce(T(lib, x, "int64"), -1, T(lib, [2, 2], "int64"), T(lib, src, "int64").t(),
                                           r, include_self=inc)),
    ))
    f = pair([1.0, 2.0, 3.0])
    for bad in [
        lambda lib: f(lib).index_reduce(0, T(lib, [0], "int64"), T(lib, [1.0]), "sum"),
        lambda lib: f(lib).index_reduce(0, T(lib, [0.0]), T(lib, [1.0]), "prod"),
        lambda lib: f(lib).index_reduce(0, T(lib, [[0]], "int64"), T(lib, [1.0]), "prod"),
        lambda lib: f(lib).index_reduce(0, T(lib, [0], "int64"), T(lib, [1.0], "float64"), "prod"),
        lambda lib: f(lib).index_reduce(0, T(lib, [7], "int64"), T(lib, [1.0]), "prod"),
        lambda lib: f(lib).index_reduce(0, T(lib, [-1], "int64"), T(lib, [1.0]), "prod"),
        lambda lib: f(lib).index_reduce(0, T(lib, [0, 1], "int64"), T(lib, [1.0]), "prod"),
        lambda lib: lib.ones(2, 3).index_reduce(1, T(lib, [0], "int64"), lib.ones(1), "prod"),
        lambda lib: lib.ones(2, 3).index_reduce(1, T(lib, [0], "int64"), lib.ones(3, 1), "prod"),
    ]:
        check(bad)
    for r in ("prod", "mean", "amax", "amin"):
        gradcheck_both(lambda lib, a, s: a.index_reduce(0, lib.tensor([2, 0, 2]), s, r), (4, 2), (3, 2))
    gradcheck_both(lambda lib, a, s: a.index_reduce(0, lib.tensor([2, 0, 2]), s, "prod", include_self=False),
                   (4, 2), (3, 2))

    def prod_grads(lib, include_self):  # zero factors: one in a slot, two in a slot, one from self
        a = T(lib, [[0.0, 2.0], [3.0, 0.0], [5.0, 1.5]], "float64").requires_grad_()
        s = T(lib, [[2.0, 0.0], [0.0, 4.0], [0.0, -1.0], [7.0, 0.5]], "float64").requires_grad_()
        out = a.index_reduce(0, T(lib, [0, 0, 1, 2], "int64"), s, "prod", include_self=include_self)
        (out * T(lib, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "float64")).sum().backward()
        return out, a.grad, s.grad

    each([(True,), (False,)], lambda inc: check(lambda lib: prod_grads(lib, inc)))
    check(lambda lib: lib.ones(3, requires_grad=True).clone().index_reduce_(
        0, T(lib, [0, 0], "int64"), T(lib, [2.0, 3.0]), "prod"))


def test_gradient():
    y = [[1.0, 4.0, 9.0, 16.0, 30.0], [0.0, 1.0, -1.0, 2.0, 5.0], [3.0, 3.0, 3.0, 1.0, 0.0]]
    coords = pair([0.0, 0.5, 2.0, 2.5, 4.0])
    rows = pair([0.0, 1.0, 3.0])
    each([
        (pair(y), {}), (pair(y), {"edge_order": 2}), (pair(y), {"spacing": 2.0}), (pair(y), {"dim": 1}),
        (pair(y, "int64"), {"spacing": [2, 3]}), (pair(y, "float64"), {"dim": [-1], "spacing": (coords,)}),
        (pair(y), {"spacing": (rows, coords), "edge_order": 2}), (pair(y), {"spacing": (rows, coords)}),
        (lambda lib: T(lib, y).t(), {"dim": 0, "spacing": [coords]}),
        (pair(y), {"spacing": lambda lib: lib.tensor(2.0)}), (lambda lib: lib.tensor(1.0), {}),
        (lambda lib: lib.ones(3, 1), {"dim": 0}),
        (pair([1.0]), {}), (pair([1.0, 2.0]), {"edge_order": 2}), (pair(y), {"edge_order": 3}),
        (pair(y), {"spacing": [2.0, 3.0, 4.0]}), (pair(y), {"spacing": [1.0], "dim": [0, 1]}),
        (pair(y), {"dim": [0, 0]}), (pair(y), {"dim": 5}),
    ], lambda a, kw: check(lambda lib: lib.gradient(a(lib), **{
        k: (v(lib) if callable(v) else [c(lib) if callable(c) else c for c in v] if isinstance(v, (list, tuple))
            else v) for k, v in kw.items()}), tol=1e-6))
    gradcheck_both(lambda lib, a: lib.gradient(a, edge_order=2)[1], (3, 4))


def test_trapezoid():
    y = [[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]]
    for fn in ("trapezoid", "trapz", "cumulative_trapezoid"):
        each([
            (pair(y), None, {}), (pair(y), None, {"dx": 0.5}), (pair(y, "int64"), None, {"dx": 2}),
            (pair(y), pair([1.0, 2.0, 4.0]), {}), (pair(y), pair([1, 3], "int64"), {"dim": 0}),
            (pair(y), pair([[1.0, 2.0, 4.0], [0.0, 1.0, 1.5]], "float64"), {}),
            (lambda lib: T(lib, y).t(), None, {"dim": 0}), (lambda lib: lib.empty(0), None, {}),
            (lambda lib: lib.empty(2, 0), None, {"dx": 3.0}), (pair(y), pair([1.0, 2.0]), {}),
            (lambda lib: lib.tensor(1.0), None, {}), (pair(y, "int64"), None, {}),
        ], lambda a, x, kw: check(lambda lib: getattr(lib, fn)(a(lib), *([] if x is None else [x(lib)]), **kw),
                                  tol=1e-6))
        gradcheck_both(lambda lib, a, b: getattr(lib, fn)(a, b), (2, 4), (4,))
        gradcheck_both(lambda lib, a: getattr(lib, fn)(a, dx=0.3, dim=0), (3, 2))


@pytest.mark.parametrize("fn", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                "kaiser_window"])
def test_torch_windows(fn):
    each([(n, periodic, dtype) for n in (0, 1, 2, 7, 16) for periodic in (True, False)
          for dtype in ("float32", "float64")],
         lambda n, periodic, dtype: check(lambda lib: getattr(lib, fn)(n, periodic, dtype=getattr(lib, dtype)),
                                          tol=1e-6))
    check(lambda lib: getattr(lib, fn)(5, dtype=lib.float16), tol=2e-3)
    check(lambda lib: getattr(lib, fn)(4, dtype=lib.int64))
    check(lambda lib: getattr(lib, fn)(-1))
    assert getattr(ember, fn)(3, requires_grad=True).requires_grad
    check(lambda lib: lib.hamming_window(9, False, 0.6, 0.3), tol=1e-6)
    check(lambda lib: lib.kaiser_window(9, True, 5.0, dtype=lib.float64), tol=1e-12)


WINDOW_KWARGS = {"exponential": [{"tau": 2.5}, {"center": 1.0, "sym": False}], "gaussian": [{"std": 0.7}],
                 "general_cosine": [{"a": [0.5, 0.3, 0.2]}], "general_hamming": [{"alpha": 0.6}],
                 "kaiser": [{"beta": 3.0}]}


@pytest.mark.parametrize("fn", sorted(torch.signal.windows.__all__))
def test_signal_windows(fn):
    base = {"a": [0.5, 0.5]} if fn == "general_cosine" else {}
    cases = [(m, dict(base, sym=sym), dtype) for m in (0, 1, 2, 7, 10) for sym in (True, False)
             for dtype in ("float32", "float64")]
    cases += [(9, kw, "float64") for kw in WINDOW_KWARGS.get(fn, [])]
    each(cases, lambda m, kw, dtype: check(lambda lib: getattr(lib.signal.windows, fn)(
        m, dtype=getattr(lib, dtype), **kw), tol=1e-6))
    check(lambda lib: getattr(lib.signal.windows, fn)(4, dtype=lib.int64, **base))
    check(lambda lib: getattr(lib.signal.windows, fn)(-1, **base))
    w = ember.signal.windows
    for bad in [lambda lib: lib.signal.windows.exponential(4, center=1.0),
                lambda lib: lib.signal.windows.exponential(4, tau=0.0),
                lambda lib: lib.signal.windows.gaussian(4, std=0.0),
                lambda lib: lib.signal.windows.kaiser(4, beta=-1.0),
                lambda lib: lib.signal.windows.general_cosine(4, a=3)]:
        check(bad)
    assert w.hann(3, requires_grad=True).requires_grad


def F(lib):
    return T(lib, [1.0, 2.0, 3.0])


ERROR_CASES = {
 "isin bool": lambda lib: lib.isin(T(lib,[True],"bool"), T(lib,[True],"bool")),
 "q int": lambda lib: lib.quantile(T(lib,[1,2],"int64"), 0.5),
 "q dtype": lambda lib: lib.quantile(F(lib), T(lib,[0.5],"float64")),
 "q range": lambda lib: lib.quantile(F(lib), 1.5),
 "q trange": lambda lib: lib.quantile(F(lib), T(lib,[1.5])),
 "q 2d": lambda lib: lib.quantile(F(lib), T(lib,[[0.5]])),
 "q empty": lambda lib: lib.nanquantile(lib.empty(0), 0.5),
 "q interp": lambda lib: lib.quantile(F(lib), 0.5, interpolation='x'),
 "q dim": lambda lib: lib.quantile(F(lib), 0.5, dim=3),
 "cov 3d": lambda lib: lib.cov(lib.ones(2,2,2)),
 "cov bool": lambda lib: lib.cov(T(lib,[True],"bool")),
 "cov fw": lambda lib: lib.cov(F(lib), fweights=F(lib)),
 "cov fw2": lambda lib: lib.cov(F(lib), fweights=lib.ones(1,3).long()),
 "cov fwn": lambda lib: lib.cov(F(lib), fweights=T(lib,[1,2],"int64")),
 "cov fwneg": lambda lib: lib.cov(F(lib), fweights=T(lib,[1,-2,1],"int64")),
 "cov aw": lambda lib: lib.cov(F(lib), aweights=T(lib,[1,2,1],"int64")),
 "cov awneg": lambda lib: lib.cov(F(lib), aweights=T(lib,[1,-2,1])),
 "cov w0": lambda lib: lib.cov(F(lib), fweights=T(lib,[0,0,0],"int64")),
 "h int": lambda lib: lib.histogram(T(lib,[1,2],"int64"), 2),
 "h bins0": lambda lib: lib.histogram(F(lib), 0),
 "h range": lambda lib: lib.histogram(F(lib), 2, range=(2.,1.)),
 "h rangeinf": lambda lib: lib.histogram(F(lib), 2, range=(0.,INF)),
 "h nan": lambda lib: lib.histogram(T(lib,[1.,NAN]), 2),
 "h bdtype": lambda lib: lib.histogram(F(lib), T(lib,[0.,1.],"float64")),
 "h b2d": lambda lib: lib.histogram(F(lib), lib.ones(2,2)),
 "h wshape": lambda lib: lib.histogram(F(lib), 2, weight=lib.ones(2)),
 "h wdtype": lambda lib: lib.histogram(F(lib), 2, weight=lib.ones(3,dtype=lib.float64)),
 "h range3": lambda lib: lib.histogram(F(lib), 2, range=(0.,1.,2.)),
 "hdd 1d": lambda lib: lib.histogramdd(F(lib), 2),
 "hdd bins": lambda lib: lib.histogramdd(lib.ones(3,2), [2,2,2]),
 "hdd range": lambda lib: lib.histogramdd(lib.ones(3,2), 2, range=[0.,1.]),
 "hdd bins0": lambda lib: lib.histogramdd(lib.ones(3,2), [2,0]),
 "gcd f": lambda lib: lib.gcd(F(lib), F(lib)),
 "gcd s": lambda lib: lib.gcd(F(lib), 2),
 "lcm_ bc": lambda lib: T(lib,[3],"int64").lcm_(T(lib,[[3],[4]],"int64")),
 "heav dt": lambda lib: lib.heaviside(F(lib), T(lib,[1],"int64")),
 "heav s": lambda lib: lib.heaviside(F(lib), 0.5),
 "frexp": lambda lib: lib.frexp(T(lib,[1],"int64")),
 "ldexp_": lambda lib: T(lib,[1],"int64").ldexp_(T(lib,[1],"int64")),
 "ldexp s": lambda lib: lib.ldexp(F(lib), 2),
 "nexta": lambda lib: lib.nextafter(T(lib,[1],"int64"), T(lib,[1],"int64")),
 "d2r_": lambda lib: T(lib,[1],"int64").deg2rad_(),
 "sinc_": lambda lib: T(lib,[1],"int64").sinc_(),
 "dist int": lambda lib: lib.dist(T(lib,[1],"int64"), T(lib,[1],"int64")),
 "renorm 1d": lambda lib: lib.renorm(F(lib), 2, 0, 1.),
 "renorm int": lambda lib: lib.renorm(T(lib,[[1]],"int64"), 2, 0, 1.),
 "renorm p": lambda lib: lib.renorm(lib.ones(2,2), 0, 0, 1.),
 "renorm m": lambda lib: lib.renorm(lib.ones(2,2), 2, 0, -1.),
 "renorm d": lambda lib: lib.renorm(lib.ones(2,2), 2, 4, 1.),
 "put idx": lambda lib: F(lib).put_(T(lib,[0],"int32"), T(lib,[1.])),
 "put oob": lambda lib: F(lib).put_(T(lib,[5],"int64"), T(lib,[1.])),
 "put n": lambda lib: F(lib).put_(T(lib,[0,1],"int64"), T(lib,[1.])),
 "put dt": lambda lib: F(lib).put_(T(lib,[0],"int64"), T(lib,[1.],"float64")),
 "ir r": lambda lib: F(lib).index_reduce(0, T(lib,[0],"int64"), T(lib,[1.]), "sum"),
 "ir i": lambda lib: F(lib).index_reduce(0, T(lib,[0.]), T(lib,[1.]), "prod"),
 "ir i2": lambda lib: F(lib).index_reduce(0, T(lib,[[0]],"int64"), T(lib,[1.]), "prod"),
 "ir dt": lambda lib: F(lib).index_reduce(0, T(lib,[0],"int64"), T(lib,[1.],"float64"), "prod"),
 "ir oob": lambda lib: F(lib).index_reduce(0, T(lib,[5],"int64"), T(lib,[1.]), "prod"),
 "ir n": lambda lib: F(lib).index_reduce(0, T(lib,[0,1],"int64"), T(lib,[1.]), "prod"),
 "ir sd": lambda lib: lib.ones(2,3).index_reduce(1, T(lib,[0],"int64"), lib.ones(1), "prod"),
 "ir ss": lambda lib: lib.ones(2,3).index_reduce(1, T(lib,[0],"int64"), lib.ones(3,1), "prod"),
 "g eo": lambda lib: lib.gradient(F(lib), edge_order=3),
 "g small": lambda lib: lib.gradient(T(lib,[1.])),
 "g sp": lambda lib: lib.gradient(F(lib), spacing=[1.,2.]),
 "g spd": lambda lib: lib.gradient(lib.ones(3,3), spacing=[1.,2.,3.], dim=[0,1]),
 "g dup": lambda lib: lib.gradient(lib.ones(3,3), dim=[0,0]),
 "t 0d": lambda lib: lib.trapezoid(lib.tensor(1.)),
 "t x": lambda lib: lib.trapezoid(F(lib), T(lib,[1.,2.])),
 "ct x": lambda lib: lib.cumulative_trapezoid(F(lib), T(lib,[1.,2.])),
 "w n": lambda lib: lib.kaiser_window(-2),
 "s dt": lambda lib: lib.signal.windows.hann(3, dtype=lib.int64),
 "s dt16": lambda lib: lib.signal.windows.kaiser(3, dtype=lib.float16),
 "s n": lambda lib: lib.signal.windows.gaussian(-1),
 "s c": lambda lib: lib.signal.windows.exponential(3, center=1.),
 "s tau": lambda lib: lib.signal.windows.exponential(3, tau=-1.),
 "s std": lambda lib: lib.signal.windows.gaussian(3, std=0.),
 "s beta": lambda lib: lib.signal.windows.kaiser(3, beta=-1.),
 "s a": lambda lib: lib.signal.windows.general_cosine(3, a=3),
 "s a0": lambda lib: lib.signal.windows.general_cosine(3, a=[]),
}


def test_error_messages():
    """ember raises torch's exception type with torch's message (where torch names itself,
    ember does too, as `import ember as torch` runs torch programs; dtypes print as ember's)."""
    def one(name):
        fn = ERROR_CASES[name]
        with pytest.raises(Exception) as expected:
            fn(torch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(type(expected.value)) as got:
                fn(ember)
        assert str(got.value).split("\n")[0] == str(expected.value).split("\n")[0].replace("got: torch.", "got: ember.")

    each([(name,) for name in ERROR_CASES], one)


def test_empty_inputs_and_out():
    empty = lambda lib: lib.empty(0, 3)  # noqa: E731
    each([
        (lambda lib: lib.heaviside(empty(lib), lib.ones(3)),),
        (lambda lib: tuple(lib.frexp(empty(lib))),),
        (lambda lib: lib.ldexp(empty(lib), lib.ones(3, dtype=lib.int64)),),
        (lambda lib: lib.nextafter(empty(lib), lib.ones(1)),),
        (lambda lib: lib.isin(empty(lib), lib.ones(3)),),
        (lambda lib: lib.gradient(lib.empty(0, 3), dim=1),),
        (lambda lib: lib.cumulative_trapezoid(lib.empty(0, 3), dim=1),),
        (lambda lib: lib.trapezoid(lib.empty(0, 3), dim=1),),
        (lambda lib: lib.index_reduce(lib.ones(2, 3), 0, lib.empty(0, dtype=lib.int64), empty(lib), "amax"),),
        (lambda lib: lib.isin(T(lib, [1, 2, 3]), T(lib, [2]), out=lib.empty(0, dtype=lib.bool)),),
        (lambda lib: lib.gcd(T(lib, [4, 6]), T(lib, [6]), out=lib.empty(2, dtype=lib.int64)),),
        (lambda lib: lib.nextafter(T(lib, [1.0]), T(lib, [2.0]), out=lib.empty(1)),),
        (lambda lib: lib.heaviside(T(lib, [0.0, 1.0]), T(lib, [0.5]), out=lib.empty(2)),),
        (lambda lib: lib.deg2rad(T(lib, [90, 180], "int64"), out=lib.empty(2, dtype=lib.int64)),),
    ], lambda fn: check(fn, tol=1e-6))


def test_autograd_conventions():
    """torch records heaviside and histogram with a backward that raises; nextafter passes
    the gradient to input unchanged; the exponent of frexp and isin have none."""
    for fn in (lambda lib, x: lib.heaviside(x, lib.tensor([0.5])), lambda lib, x: lib.histogram(x, 2).hist):
        for lib in (torch, ember):
            x = lib.tensor([1.0, 0.0, -1.0], requires_grad=True)
            y = fn(lib, x)
            assert y.requires_grad
            with pytest.raises(RuntimeError, match="derivative for aten::.* is not implemented"):
                y.sum().backward()

    def nextafter_grad(lib):
        x = lib.tensor([1.0, INF, 0.0, NAN], requires_grad=True)
        y = lib.nextafter(x, lib.tensor([2.0]))
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return y.detach(), x.grad

    check(nextafter_grad)
    x = ember.tensor([1.0, 3.0], requires_grad=True)
    assert not ember.frexp(x).exponent.requires_grad and not ember.isin(x, x).requires_grad
