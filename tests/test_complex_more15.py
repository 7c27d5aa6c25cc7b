"""Complex numbers in more of torch's pointwise and reduction surface (issue 15):
logcumsumexp and logaddexp (torch's complex log-add-exp), lerp, logical ops, nan_to_num,
cross, scatter_reduce/index_reduce sums, products and means, complex linspace/logspace,
float_power, ldexp, dist, renorm, matrix_exp, cov/corrcoef, and the gradients of addcmul,
addcdiv, lerp, logcumsumexp, logaddexp, cross and fill_, against torch: same values, or
the same exception where torch refuses a complex input."""
import math

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(1515)
CDTYPES = ["complex64", "complex128"]


def _c(shape, dtype="complex128", scale=1.0):
    a = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)) * scale
    return a.astype(np.dtype(dtype))


def _same(e, t, rtol=1e-5, atol=1e-6):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for x, y in zip(e, t):
            _same(x, y, rtol, atol)
        return
    assert str(e.dtype).replace("ember", "torch") == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().resolve_conj().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


def _both(fn, *arrays, rtol=1e-5, atol=1e-6):
    e = fn(ember, *[ember.tensor(a) for a in arrays])
    t = fn(torch, *[torch.tensor(a) for a in arrays])
    _same(e, t, rtol, atol)


def _grads(fn, *arrays, rtol=1e-9, atol=1e-11):
    """The gradients of a real loss (a weighted real part) through fn, ember vs torch."""
    es = [ember.tensor(a).requires_grad_() for a in arrays]
    ts = [torch.tensor(a).requires_grad_() for a in arrays]
    for m, xs in ((ember, es), (torch, ts)):
        out = fn(m, *xs)
        w = m.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)) * (1 - 0.5j))
        (out * w).real.sum().backward()
    for e, t in zip(es, ts):
        if t.grad is None:
            assert e.grad is None
            continue
        _same(e.grad, t.grad, rtol, atol)


def _raises(fn, *arrays):
    """ember raises what torch raises (type and message)."""
    with pytest.raises(Exception) as te:
        fn(torch, *[torch.tensor(a) for a in arrays])
    with pytest.raises(type(te.value), match=None) as ee:
        fn(ember, *[ember.tensor(a) for a in arrays])
    assert str(ee.value).split("\n")[0] == str(te.value).split("\n")[0]


# ---- log-add-exp: logaddexp and logcumsumexp ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_logcumsumexp(dtype):
    a = _c((3, 5), dtype, 2.0)
    for f in [lambda m, x: m.logcumsumexp(x, 1), lambda m, x: m.logcumsumexp(x, 0), lambda m, x: x.t().logcumsumexp(1),
              lambda m, x: x[:, ::2].logcumsumexp(-1), lambda m, x: x[:, :0].logcumsumexp(1),
              lambda m, x: x[0, 0].logcumsumexp(0)]:
        _both(f, a, rtol=1e-5, atol=1e-5)
    # large real parts (no overflow), -inf real parts (exp 0)
    b = np.array([[800 + 1j, 799 - 2j, -np.inf + 0j, 3 + 0j], [-np.inf, -np.inf, 1 + 0.5j, 1 + 2.5j]],
                 dtype=dtype)
    _both(lambda m, x: m.logcumsumexp(x, 1), b, rtol=1e-5, atol=1e-4)
    out = ember.empty((3, 5), dtype=getattr(ember, dtype))
    ember.logcumsumexp(ember.tensor(a), 1, out=out)
    _same(out, torch.logcumsumexp(torch.tensor(a), 1), rtol=1e-5, atol=1e-5)


def test_logaddexp():
    a, b = _c((3, 4)), _c((4,))
    _both(lambda m, x, y: m.logaddexp(x, y), a, b, rtol=1e-12, atol=1e-12)
    _both(lambda m, x, y: m.logaddexp(x, y), a.astype(np.complex64), b.astype(np.complex64))
    special = np.array([-np.inf + 0j, np.inf + 0j, 700 + 1j, np.nan + 0j, 2 + 0j], dtype=np.complex128)
    other = np.array([-np.inf + 1j, np.inf + 0j, 700 - 1j, 1 + 0j, 2 + np.pi * 1j], dtype=np.complex128)
    _both(lambda m, x, y: m.logaddexp(x, y), special, other, rtol=1e-12, atol=1e-12)


# ---- lerp ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_lerp(dtype):
    a, b, w = _c((3, 4), dtype), _c((4,), dtype), _c((3, 1), dtype, 0.6)
    for f in [lambda m, x, y, z: m.lerp(x, y, 0.3), lambda m, x, y, z: m.lerp(x, y, 0.7 - 0.2j),
              lambda m, x, y, z: m.lerp(x, y, z), lambda m, x, y, z: x.lerp(y, z[0, 0]),
              lambda m, x, y, z: x.clone().lerp_(y, 0.8), lambda m, x, y, z: x.t().lerp(y[:3], z[:, 0])]:
        _both(f, a, b, w)
    out = ember.empty((3, 4), dtype=getattr(ember, dtype))
    ember.lerp(ember.tensor(a), ember.tensor(b), 0.25, out=out)
    _same(out, torch.lerp(torch.tensor(a), torch.tensor(b), 0.25))
    # a real weight tensor for complex ends is refused, as torch does
    _raises(lambda m, x, y, z: m.lerp(x, y, z.real.contiguous()), a, b, w)


# ---- logical ops, nan_to_num, errors where torch refuses ----

def test_logical_sinc_nan_to_num():
    a = np.array([0, 1j, 2, 0, -1 + 1j], dtype=np.complex64)
    b = np.array([0, 0, 3j, 1, 2], dtype=np.complex128)
    for f in [lambda m, x, y: m.logical_and(x, y), lambda m, x, y: m.logical_or(x, y),
              lambda m, x, y: m.logical_xor(x, y)]:
        _both(lambda m, x, y: f(m, x, y), a, b)
    z = np.array([0, 0.5 + 0.25j, -2j, 3 + 0j, 1e-9 + 1e-9j], dtype=np.complex128)
    for f in [lambda m, x: m.sinc(x), lambda m, x: m.special.sinc(x.to(m.complex64)), lambda m, x: x.clone().sinc_(),
              lambda m, x: m.sinc(x[::2])]:
        _both(f, z, rtol=1e-6, atol=1e-7)
    o = ember.empty(5, dtype=ember.complex128)
    ember.sinc(ember.tensor(z), out=o)
    _same(o, torch.sinc(torch.tensor(z)))
    inf, nan = np.inf, np.nan
    c = np.array([complex(nan, inf), complex(-inf, nan), complex(1, -inf), 2 - 1j], dtype=np.complex128)
    for f in [lambda m, x: m.nan_to_num(x), lambda m, x: m.nan_to_num(x, 1.0, 2.0, -3.0),
              lambda m, x: x.to(m.complex64).nan_to_num(), lambda m, x: x.clone().nan_to_num_(posinf=5.0)]:
        _both(f, c, rtol=1e-6, atol=0)


def test_refusals_match_torch():
    a, b = _c((2, 3)), _c((2, 3))
    for f in [lambda m, x, y: m.isposinf(x), lambda m, x, y: m.isneginf(x), lambda m, x, y: x.clone().abs_(),
              lambda m, x, y: m.nn.functional.mse_loss(x, y), lambda m, x, y: m.heaviside(x, y),
              lambda m, x, y: m.rad2deg(x), lambda m, x, y: m.deg2rad(x),
              lambda m, x, y: x.scatter_reduce(0, m.tensor([[0, 1, 0]]), y, "amax"),
              lambda m, x, y: x.to(m.complex64).float_power_(2), lambda m, x, y: m.clamp(x, 0, 1)]:
        _raises(f, a, b)


# ---- float_power, ldexp, linspace, logspace ----

def test_float_power_ldexp_ranges():
    a = _c((2, 3), "complex64")
    for f in [lambda m, x: m.float_power(x, 2), lambda m, x: m.float_power(x.real, 0.5j),
              lambda m, x: m.float_power(x, x.real), lambda m, x: m.ldexp(x, m.tensor([1, 2, 3])),
              lambda m, x: m.linspace(1, 2 + 3j, 4), lambda m, x: m.linspace(0, 1, 3, dtype=m.complex64),
              lambda m, x: m.linspace(-1j, 1j, 1), lambda m, x: m.linspace(0, 1j, 0),
              lambda m, x: m.logspace(0, 1j, 3), lambda m, x: m.logspace(0, 1 + 1j, 4, base=2.0, dtype=m.complex128)]:
        _both(f, a)


# ---- cross, scatter_reduce, index_reduce ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_cross_and_scatter_reduce(dtype):
    a, b = _c((4, 3), dtype), _c((1, 3), dtype)
    for f in [lambda m, x, y: m.linalg.cross(x, y), lambda m, x, y: m.cross(x.t(), y.expand(4, 3).t(), dim=0),
              lambda m, x, y: m.linalg.cross(x[:0], y)]:
        _both(f, a, b)
    x, src = _c((3, 4), dtype), _c((2, 4), dtype)
    idx = np.array([[0, 2, 2, 1], [2, 2, 0, 1]])
    for reduce in ("sum", "prod"):
        for include_self in (True, False):
            _both(lambda m, s, t: s.scatter_reduce(0, m.tensor(idx), t, reduce, include_self=include_self), x, src)
    _both(lambda m, s, t: s.clone().scatter_reduce_(1, m.tensor(idx[:, :2]), t, "prod"), x, src)
    for reduce in ("prod",):
        _both(lambda m, s, t: s.index_reduce(0, m.tensor([2, 0]), t, reduce), x, src)


# ---- compositions: dist, renorm, matrix_exp, cov, corrcoef ----

def test_compositions():
    a, b = _c((3, 4)), _c((3, 4))
    for f in [lambda m, x, y: m.dist(x, y), lambda m, x, y: m.dist(x, y, 1), lambda m, x, y: m.renorm(x, 2, 0, 1.0),
              lambda m, x, y: m.cov(x), lambda m, x, y: m.cov(x, aweights=y[0].abs()), lambda m, x, y: m.corrcoef(x),
              lambda m, x, y: m.linalg.matrix_exp(x[:, :3]), lambda m, x, y: m.linalg.matrix_exp(3 * y[:, :3])]:
        _both(f, a, b, rtol=1e-9, atol=1e-10)
    _both(lambda m, x, y: m.linalg.matrix_exp(x[:, :3].to(m.complex64)), a, b, rtol=1e-4, atol=1e-4)


# ---- gradients ----

@pytest.mark.parametrize("fn", [
    lambda m, x, y, z: m.addcmul(x, y, z, value=2 - 1j),
    lambda m, x, y, z: m.addcdiv(x, y, z + 2, value=0.5j),
    lambda m, x, y, z: m.addcmul(x, y, z) + m.addcdiv(x, y, z + 2),
    lambda m, x, y, z: m.lerp(x, y, 0.3) + m.lerp(x, y, 0.8 + 0.1j),
    lambda m, x, y, z: m.lerp(x, y, z * 0.4),
    lambda m, x, y, z: m.logcumsumexp(x, 1) + m.logcumsumexp(y, 0),
    lambda m, x, y, z: m.logaddexp(x, y),
    lambda m, x, y, z: m.linalg.cross(x[:, :3], y[:, 1:]) + m.cross(x[:, 1:], z[:, :3], dim=1),
    lambda m, x, y, z: x.clone().fill_diagonal_(1.0) * y + m.dist(x, z),
])
def test_gradients_match_torch(fn):
    _grads(fn, _c((3, 4)), _c((3, 4)), _c((3, 4)))


def test_logcumsumexp_gradient_zero_upstream():
    # zeros in the upstream gradient (log 0 = -inf) and a real input still take the real formula
    x = _c((2, 4))
    for m in (ember, torch):
        t = m.tensor(x, requires_grad=True)
        g = m.tensor(np.array([[0, 1 + 1j, 0, -2], [1j, 0, 0, 0]]))
        (m.logcumsumexp(t, 1) * g).real.sum().backward()
        if m is ember:
            eg = t.grad
        else:
            _same(eg, t.grad, 1e-9, 1e-12)
    r = RNG.standard_normal((2, 4))
    _grads(lambda m, x, y, z: m.logcumsumexp(x.real * 1.0, 1), r, r, r)


def test_second_order_through_complex_lerp_and_addcmul():
    x = ember.tensor(_c((3,)), requires_grad=True)
    y = ember.tensor(_c((3,)))
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    ty = torch.tensor(y.numpy())
    for m, a, b in ((ember, x, y), (torch, tx, ty)):
        out = (m.addcmul(a, a, a) * m.lerp(a, b, 0.4)).abs().sum()
        (g,) = m.autograd.grad(out, a, create_graph=True)
        (g.real.sum() + g.imag.sum()).backward()
    _same(x.grad, tx.grad, 1e-9, 1e-11)


def test_math_constant_guard():
    # the log-add-exp picks the larger real part: equal real parts of +inf add through exp
    z = ember.tensor([complex(math.inf, 0.5)], dtype=ember.complex128)
    t = torch.tensor([complex(math.inf, 0.5)], dtype=torch.complex128)
    _same(ember.logaddexp(z, z), torch.logaddexp(t, t), 0, 0)


def test_pow_exponent_gradient_at_zero_base():
    # 0^w: the exponent's gradient is 0 where w is real and >= 0, NaN-free
    base = np.array([0, 0, 0, 1 + 1j], dtype=np.complex128)
    exp_ = np.array([2 + 0j, 0j, 3 + 0j, 0.5 - 1j], dtype=np.complex128)
    _grads(lambda m, x, y: m.pow(x.detach(), y), base, exp_)
