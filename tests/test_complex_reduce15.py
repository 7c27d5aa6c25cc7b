"""Complex reductions, scans, statistics, norms, comparisons, random creation, the
gradients of the elementwise and reduction ops marked `complex: true`, and the complex
conversion methods, against torch (issue 15). Sums fold through kernels/complex_reduce.cpp."""
import math

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(15)
CDTYPES = ["complex64", "complex128"]


def _c(shape, dtype="complex128"):
    a = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    return a.astype(np.dtype(dtype))


def _pair(a):
    return ember.tensor(a), torch.tensor(a)


def _same(e, t, rtol=1e-5, atol=1e-5):
    if isinstance(t, tuple):
        assert len(e) == len(t)
        for x, y in zip(e, t):
            _same(x, y, rtol, atol)
        return
    if not isinstance(t, torch.Tensor):
        assert e == t
        return
    assert str(e.dtype).replace("ember", "torch") == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().resolve_conj().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


# ---- sums: every loop shape of the fold ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_sum_mean_paths(dtype):
    e, t = _pair(_c((70, 1000), dtype))  # above the grain: threaded chunks
    for f in [lambda x: x.sum(), lambda x: x.mean(), lambda x: x.sum(1), lambda x: x.sum(0, keepdim=True),
              lambda x: x.t().sum(0), lambda x: x[:, ::3].sum(), lambda x: x[::2, 1::2].mean(1),
              lambda x: x[:3].sum((0, 1)), lambda x: x[:, :0].sum(1), lambda x: x[:0].mean(0),
              lambda x: x.sum(dtype=x.dtype), lambda x: x[0, :5].sum(), lambda x: x.reshape(7, 10, 1000).sum((0, 2))]:
        _same(f(e), f(t), rtol=1e-4, atol=1e-3)
    # float64 accumulation: a long complex64 sum is the exact one rounded
    big = ember.full((1 << 17,), 0.1 + 0.3j, dtype=ember.complex64)
    s = big.sum().item()
    assert abs(s.real - (1 << 17) * np.float32(0.1)) < 1e-3 and abs(s.imag - (1 << 17) * np.float32(0.3)) < 1e-3
    out = ember.empty(1000, dtype=e.dtype)
    ember.sum(e, 0, out=out)
    _same(out, t.sum(0), rtol=1e-4, atol=1e-3)


# ---- prod and scans ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_prod_cumsum_cumprod(dtype):
    a = _c((3, 4, 5), dtype) * 0.8
    e, t = _pair(a)
    for f in [lambda m, x: x.prod(), lambda m, x: x.prod(1), lambda m, x: x.prod(-1, keepdim=True),
              lambda m, x: m.prod(x[:, ::2], 0), lambda m, x: x[:, :0].prod(1), lambda m, x: x.cumsum(1),
              lambda m, x: x.cumprod(0), lambda m, x: m.cumsum(x.transpose(0, 2), 2), lambda m, x: x[0, 0, 0].cumprod(0),
              lambda m, x: x[:, :0].cumsum(1), lambda m, x: x.cumsum(-1, dtype=m.complex128),
              lambda m, x: m.logsumexp(x, 1), lambda m, x: m.logsumexp(x[:, :0], 1)]:
        _same(f(ember, e), f(torch, t), rtol=1e-4, atol=1e-5)
    out = ember.empty((3, 5), dtype=e.dtype)
    ember.prod(e, 1, out=out)
    _same(out, t.prod(1), rtol=1e-4, atol=1e-5)


# ---- statistics ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_var_std(dtype):
    e, t = _pair(_c((4, 6), dtype))
    for f in [lambda m, x: x.var(), lambda m, x: x.std(1), lambda m, x: x.var(0, keepdim=True, correction=0),
              lambda m, x: m.var_mean(x, 1), lambda m, x: m.std_mean(x), lambda m, x: m.std_mean(x, 0, unbiased=False),
              lambda m, x: m.var(x.t()[::2], 0)]:
        _same(f(ember, e), f(torch, t))


# ---- norms: a complex input's norm is real ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_norms(dtype):
    e, t = _pair(_c((3, 4), dtype))
    for f in [lambda m, x: x.norm(), lambda m, x: x.norm(p=1, dim=1), lambda m, x: m.norm(x, 3, dim=0, keepdim=True),
              lambda m, x: m.linalg.vector_norm(x, 0), lambda m, x: m.linalg.vector_norm(x, math.inf, dim=1),
              lambda m, x: m.linalg.vector_norm(x, -math.inf), lambda m, x: m.linalg.vector_norm(x, 2.5, dim=(0, 1)),
              lambda m, x: m.linalg.vector_norm(x, dtype=m.complex128), lambda m, x: m.linalg.norm(x),
              lambda m, x: m.linalg.norm(x, 1), lambda m, x: m.linalg.norm(x[0]), lambda m, x: m.linalg.matrix_norm(x),
              lambda m, x: m.linalg.matrix_norm(x, -1), lambda m, x: m.linalg.matrix_norm(x, math.inf, keepdim=True),
              lambda m, x: m.linalg.matrix_norm(x, -math.inf, dtype=m.complex128), lambda m, x: x.norm(p="fro")]:
        _same(f(ember, e), f(torch, t))


# ---- comparisons and truth ----

def test_isclose_equal_count_any_all():
    a = np.array([1 + 1j, 0, 1j, np.nan + 0j, complex(np.inf, 1), 2 - 2j], dtype=np.complex64)
    b = np.array([1 + 1.000001j, 0, -1j, np.nan + 0j, complex(np.inf, 1), 2 - 2.1j], dtype=np.complex64)
    (ea, ta), (eb, tb) = _pair(a), _pair(b)
    for f in [lambda m, x, y: m.isclose(x, y), lambda m, x, y: m.isclose(x, y, equal_nan=True),
              lambda m, x, y: m.isclose(x, y, rtol=0.1, atol=0.0), lambda m, x, y: m.allclose(x[:3], y[:3]),
              lambda m, x, y: m.allclose(x, y), lambda m, x, y: m.equal(x, x), lambda m, x, y: m.equal(x[:3], y[:3]),
              lambda m, x, y: m.count_nonzero(x), lambda m, x, y: x.any(), lambda m, x, y: x.all(),
              lambda m, x, y: x[1:2].any(), lambda m, x, y: x.reshape(2, 3).all(1), lambda m, x, y: x.reshape(3, 2).any(0)]:
        _same(f(ember, ea, eb), f(torch, ta, tb))


# ---- what torch refuses for complex: the same error type and message ----

@pytest.mark.parametrize("call", [
    lambda m, x: x.max(), lambda m, x: x.min(), lambda m, x: x.max(0), lambda m, x: x.min(0), lambda m, x: x.argmax(),
    lambda m, x: x.argmin(0), lambda m, x: x.amax(), lambda m, x: x.amin(0), lambda m, x: m.aminmax(x),
    lambda m, x: x.sort(), lambda m, x: x.argsort(), lambda m, x: m.msort(x), lambda m, x: x.topk(1),
    lambda m, x: x.clamp(0, 1), lambda m, x: x.clamp(min=m.zeros(2, dtype=x.dtype)), lambda m, x: x.clamp_min(0),
    lambda m, x: m.clamp_max(x, m.ones(2)), lambda m, x: x.nansum(), lambda m, x: x.nanmean(),
    lambda m, x: m.randint(3, (2,), dtype=m.complex64), lambda m, x: m.randint_like(x, 3),
    lambda m, x: m.randperm(3, dtype=m.complex64), lambda m, x: x.clone().exponential_(),
    lambda m, x: x.clone().cauchy_(), lambda m, x: x.clone().log_normal_(), lambda m, x: x.clone().geometric_(0.5),
    lambda m, x: x.clone().random_(), lambda m, x: x.clone().random_(3), lambda m, x: x.clone().bernoulli_(0.5),
    lambda m, x: x.clone().bernoulli_(m.ones(2) / 2), lambda m, x: m.bernoulli(x), lambda m, x: m.multinomial(x, 1),
    lambda m, x: m.normal(m.zeros(2), x), lambda m, x: m.linalg.vector_norm(x, dtype=m.float64),
    lambda m, x: m.linalg.vector_norm(x.real, dtype=m.complex64),
    lambda m, x: m.linalg.matrix_norm(x.reshape(1, 2), dtype=m.float32), lambda m, x: m.isclose(x, x.real),
    lambda m, x: m.allclose(x, x.to(m.complex128)), lambda m, x: m.max(x, x), lambda m, x: m.minimum(m.ones(2), x),
    lambda m, x: m.fmax(x, x), lambda m, x: m.fmin(x, x), lambda m, x: x.median(), lambda m, x: x.median(0),
    lambda m, x: x.nanmedian(), lambda m, x: x.kthvalue(1), lambda m, x: x.mode(), lambda m, x: x.cummax(0),
    lambda m, x: x.cummin(0),
])
def test_refusals_match_torch(call):
    with pytest.raises(Exception) as want:
        call(torch, torch.tensor([1 + 1j, 2], dtype=torch.complex64))
    with pytest.raises(want.type) as got:
        call(ember, ember.tensor([1 + 1j, 2], dtype=ember.complex64))
    assert str(got.value) == str(want.value)


# ---- random creation ----

@pytest.mark.parametrize("dtype", CDTYPES)
def test_random_complex(dtype):
    cd, rd = getattr(ember, dtype), ember.float64 if dtype == "complex128" else ember.float32
    # each part is the real draw: randn's with std 1/sqrt(2), rand's uniform [0, 1)
    ember.manual_seed(3)
    z = ember.randn(4, 5, dtype=cd)
    ember.manual_seed(3)
    r = ember.randn(4, 5, 2, dtype=rd) / math.sqrt(2)
    assert z.dtype is cd and z.shape == (4, 5)
    _same(ember.view_as_real(z), torch.tensor(r.numpy()), rtol=1e-6, atol=1e-6)
    ember.manual_seed(3)
    u = ember.rand(3, dtype=cd)
    ember.manual_seed(3)
    _same(ember.view_as_real(u), torch.tensor(ember.rand(3, 2, dtype=rd).numpy()), rtol=0, atol=0)
    big = ember.randn(20000, dtype=cd)
    assert abs(big.mean().item()) < 0.05
    assert abs(big.real.var().item() - 0.5) < 0.05 and abs(big.imag.var().item() - 0.5) < 0.05
    assert abs(big.var().item() - 1.0) < 0.05  # E|z|^2 = 1, as torch's
    w = ember.rand_like(big)
    assert w.dtype is cd and 0 <= w.real.min().item() and w.imag.max().item() < 1
    n = ember.empty(20000, dtype=cd).normal_(2.0, 3.0)
    assert abs(n.real.mean().item() - 2) < 0.1 and abs(n.imag.mean().item() - 2) < 0.1
    assert abs(n.var().item() - 9) < 0.5
    assert ember.randn_like(z).dtype is cd and ember.randn(0, dtype=cd).shape == (0,)
    t = ember.empty(4, 6, dtype=cd).t().uniform_(-1, 1)  # non-contiguous: written through
    assert t.real.abs().max().item() <= 1 and t.imag.abs().max().item() <= 1 and (t != 0).all()
    m = ember.normal(ember.full((5000,), 1 + 1j, dtype=cd), ember.full((5000,), 2.0, dtype=rd))
    assert m.dtype is cd and abs(m.mean().item() - (1 + 1j)) < 0.15 and abs(m.var().item() - 4) < 0.4
    for name in ["zeros_like", "ones_like", "empty_like"]:
        assert getattr(ember, name)(z).dtype is cd
    _same(ember.full_like(z, 1 - 2j), torch.full((4, 5), 1 - 2j, dtype=getattr(torch, dtype)))


# ---- gradients ----

def _z(shape, scale=0.5):
    return ember.tensor(_c(shape) * scale).requires_grad_()


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
                                  "atanh", "log2", "log10", "log1p", "expm1", "exp2", "rsqrt", "neg", "sgn"])
def test_elementwise_gradcheck(name):
    z = _z((5,))
    if name == "acosh":  # away from the branch cut of torch's formula (Re z > 0)
        z = ember.tensor(_c((5,)) * 0.3 + 2).requires_grad_()
    f = getattr(ember, name)
    assert ember.autograd.gradcheck(f, (z,))
    # and the same gradient as torch's
    ze = z.detach().requires_grad_()
    zt = torch.tensor(z.detach().numpy(), requires_grad=True)
    v = _c((5,))
    (f(ze) * ember.tensor(v)).real.sum().backward()
    (getattr(torch, name)(zt) * torch.tensor(v)).real.sum().backward()
    _same(ze.grad, zt.grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda m, z: z.sum(), lambda m, z: z.mean(1), lambda m, z: z.prod(), lambda m, z: z.prod(0, keepdim=True),
    lambda m, z: z.cumsum(1), lambda m, z: z.cumprod(1), lambda m, z: z.var(0), lambda m, z: z.std(),
    lambda m, z: m.var_mean(z, 1)[0] + m.var_mean(z, 1)[1].abs(), lambda m, z: m.std_mean(z, 0, correction=0)[1],
    lambda m, z: z.norm(), lambda m, z: m.linalg.vector_norm(z, 1, dim=0), lambda m, z: m.linalg.vector_norm(z, 3),
    lambda m, z: m.linalg.vector_norm(z, math.inf), lambda m, z: m.logsumexp(z, 1),
    lambda m, z: m.sgn(z * 0).sum(), lambda m, z: z.as_strided((2, 3), (1, 2), 1).prod(1),
])
def test_reduction_gradients(fn):
    a = _c((3, 4))
    z = ember.tensor(a).requires_grad_()
    if "sgn" not in fn.__code__.co_names:
        assert ember.autograd.gradcheck(lambda x: fn(ember, x), (z,))
    zt = torch.tensor(a, requires_grad=True)
    ze = ember.tensor(a).requires_grad_()
    r_e, r_t = fn(ember, ze), fn(torch, zt)
    v = _c(tuple(r_t.shape))
    w_e = ember.tensor(v) if r_t.is_complex() else ember.tensor(v.real)
    w_t = torch.tensor(v) if r_t.is_complex() else torch.tensor(v.real)
    (r_e * w_e).real.sum().backward()
    (r_t * w_t).real.sum().backward()
    _same(ze.grad, zt.grad, rtol=1e-8, atol=1e-10)


def test_gradcheck_sees_complex_parts():
    """ember's gradcheck perturbs both parts of a complex input and reads both parts of a
    complex output, so a formula without torch's conjugate fails it."""
    class NoConj(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return ember.exp(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ember.exp(x)

    z = _z((3,))
    assert ember.autograd.gradcheck(ember.exp, (z,))
    assert not ember.autograd.gradcheck(NoConj.apply, (z,), raise_exception=False)
    x = ember.tensor(RNG.standard_normal(3)).requires_grad_()
    assert ember.autograd.gradcheck(lambda a: ember.polar(a.abs() + 1, a), (x,))


# ---- conversions ----

def test_cfloat_cdouble_chalf():
    x = ember.tensor([[1.5, -2.0]]).t()
    for name, dtype in [("cfloat", ember.complex64), ("cdouble", ember.complex128)]:
        y = getattr(x, name)()
        assert y.dtype is dtype and y.shape == (2, 1)
        _same(y, getattr(torch.tensor([[1.5, -2.0]]).t(), name)())
    assert x.cdouble().cfloat().dtype is ember.complex64
    assert not hasattr(x, "complexfloat")
    with pytest.raises(NotImplementedError, match="complex32"):
        x.chalf()
