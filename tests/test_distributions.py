"""ember.distributions against torch.distributions: the same parameters give the same
shapes, dtypes, log_prob, entropy, moments, cdf/icdf and KL divergences, and the same
gradients; validation raises torch's ValueErrors with torch's messages; samples honour
ember.manual_seed and have the right statistics (ember's random streams are its own, so
samples are compared by their statistics, not element by element)."""
from __future__ import annotations

import doctest
import importlib
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
from helpers import assert_same, torch

import ember.distributions as ED
import torch.distributions as TD

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-6, "float64": 1e-13}


def values(seed, shape, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def both(arrays, dtype, requires_grad=False):
    """The numpy arrays as (ember tensors, torch tensors) of dtype."""
    e = [ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=requires_grad) for a in arrays]
    t = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=requires_grad) for a in arrays]
    return e, t


def message(exc) -> str:
    """An error message with the library's name taken out (ember.Size vs torch.Size)."""
    return str(exc).replace("torch.", "").replace("ember.", "")


def same_error(fn):
    """fn(lib) raises the same exception type with the same message in both libraries."""
    with pytest.raises(Exception) as t_exc:
        fn(torch, TD)
    with pytest.raises(type(t_exc.value)) as e_exc:
        fn(ember, ED)
    assert message(e_exc.value) == message(t_exc.value)


# ---------------------------------------------------------------- Normal
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("loc_shape, scale_shape", [((3,), (3,)), ((2, 1), (3,)), ((), (4,)), ((), ())])
def test_normal_matches_torch(dtype, loc_shape, scale_shape):
    loc, scale = values(0, loc_shape), values(1, scale_shape, 0.3, 2.0)
    (el, es), (tl, ts) = both([loc, scale], dtype)
    e, t = ED.Normal(el, es), TD.Normal(tl, ts)
    assert tuple(e.batch_shape) == tuple(t.batch_shape) and tuple(e.event_shape) == ()
    tol = TOL[dtype]
    for name in ["mean", "mode", "stddev", "variance"]:
        assert_same(getattr(e, name), getattr(t, name), tol=tol)
    assert_same(e.entropy(), t.entropy(), tol=tol)
    x = values(2, (5,) + tuple(t.batch_shape), -3, 3)
    (ex,), (tx,) = both([x], dtype)
    assert_same(e.log_prob(ex), t.log_prob(tx), tol=tol)
    assert_same(e.cdf(ex), t.cdf(tx), tol=tol)
    (eu,), (tu,) = both([values(3, tuple(t.batch_shape), 0.01, 0.99)], dtype)
    assert_same(e.icdf(eu), t.icdf(tu), tol=10 * tol)
    assert_same(e.perplexity(), t.perplexity(), tol=tol)


def test_normal_numbers_give_default_dtype_and_scalar_batch():
    d = ED.Normal(0.0, 1.0)
    assert d.batch_shape == ember.Size([]) and d.loc.dtype == ember.float32
    assert ED.Normal(0, 1).scale.dtype == ember.float32
    assert ED.Normal(ember.tensor(0.0, dtype=ember.float64), 1.0).scale.dtype == ember.float64
    assert ED.Normal(ember.zeros(1), 1.0).batch_shape == ember.Size([1])
    assert repr(d) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(ED.Normal(ember.zeros(2), 1.0)) == "Normal(loc: ember.Size([2]), scale: ember.Size([2]))"
    assert repr(ED.Normal(ember.zeros(1), 1.0)) == "Normal(loc: tensor([0.]), scale: tensor([1.]))"


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_gradients_of_log_prob_cdf_entropy_match_torch(dtype):
    loc, scale, x = values(0, (2, 3)), values(1, (3,), 0.5, 2.0), values(2, (4, 2, 3))
    (el, es, ex), (tl, ts, tx) = both([loc, scale, x], dtype, requires_grad=True)
    for fn in [lambda d, v: d.log_prob(v), lambda d, v: d.cdf(v), lambda d, v: d.entropy() * v]:
        for g in (el, es, ex, tl, ts, tx):
            g.grad = None
        fn(ED.Normal(el, es), ex).sum().backward()
        fn(TD.Normal(tl, ts), tx).sum().backward()
        for e, t in [(el, tl), (es, ts), (ex, tx)]:
            assert_same(e.grad, t.grad, tol=20 * TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_rsample_is_reparameterised(dtype):
    """rsample = loc + eps * scale: d/dloc = 1, d/dscale = eps, as torch's."""
    (loc, scale), _ = both([values(0, (3,)), values(1, (3,), 0.5, 2.0)], dtype, requires_grad=True)
    ember.manual_seed(0)
    d = ED.Normal(loc, scale)
    assert d.has_rsample
    x = d.rsample((50,))
    assert x.shape == ember.Size([50, 3]) and x.dtype == getattr(ember, dtype) and x.requires_grad
    (x * x).sum().backward()
    eps = ((x - loc) / scale).detach()
    # torch on the same eps: the gradients of (loc + eps * scale)^2
    tl, ts = (torch.tensor(v.tolist(), dtype=getattr(torch, dtype), requires_grad=True) for v in (loc, scale))
    teps = torch.tensor(eps.tolist(), dtype=getattr(torch, dtype))
    ((tl + teps * ts) ** 2).sum().backward()
    assert_same(loc.grad, tl.grad, tol=100 * TOL[dtype])
    assert_same(scale.grad, ts.grad, tol=100 * TOL[dtype])
    # sample() is outside autograd
    assert not d.sample((2,)).requires_grad


def test_normal_samples_follow_the_seed_and_the_moments():
    d = ED.Normal(ember.tensor([0.0, 3.0]), ember.tensor([1.0, 0.5]))
    ember.manual_seed(123)
    a = d.sample((20000,))
    ember.manual_seed(123)
    assert ember.equal(d.sample((20000,)), a)
    assert not ember.equal(d.sample((20000,)), a)
    assert a.shape == ember.Size([20000, 2])
    mean, std = a.mean(0).tolist(), a.std(0).tolist()
    assert abs(mean[0]) < 0.03 and abs(mean[1] - 3) < 0.015
    assert abs(std[0] - 1) < 0.02 and abs(std[1] - 0.5) < 0.01
    ember.manual_seed(7)
    r = d.rsample((20000,))
    ember.manual_seed(7)
    assert ember.equal(d.rsample((20000,)), r)
    assert abs(r[:, 1].mean().item() - 3) < 0.015 and abs(r[:, 1].std().item() - 0.5) < 0.01
    # the default shapes
    assert d.sample().shape == ember.Size([2]) and ED.Normal(0.0, 1.0).sample().shape == ember.Size([])
    assert ED.Normal(0.0, 1.0).sample([3, 4]).shape == ember.Size([3, 4])
    assert d.sample((0,)).shape == ember.Size([0, 2])


def test_normal_expand():
    for lib, D in ((ember, ED), (torch, TD)):
        d = D.Normal(lib.zeros(3), 2.0).expand([2, 3])
        assert list(d.batch_shape) == [2, 3] and list(d.loc.shape) == [2, 3]
        assert d.log_prob(lib.zeros(2, 3)).shape == (2, 3)
    same_error(lambda lib, D: D.Normal(lib.zeros(3), 1.0).expand([2, 4]))


# ---------------------------------------------------------------- Categorical
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("by", ["probs", "logits"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 1, 5)])
def test_categorical_matches_torch(dtype, by, shape):
    param = values(4, shape, 0.1, 3.0) if by == "probs" else values(4, shape, -3.0, 3.0)
    (ep,), (tp,) = both([param], dtype)
    e, t = ED.Categorical(**{by: ep}), TD.Categorical(**{by: tp})
    tol = 5 * TOL[dtype]
    assert tuple(e.batch_shape) == tuple(t.batch_shape) and tuple(e.param_shape) == tuple(t.param_shape)
    assert_same(e.probs, t.probs, tol=tol)
    assert_same(e.logits, t.logits, tol=tol)
    assert_same(e.entropy(), t.entropy(), tol=tol)
    assert_same(e.mean, t.mean)
    assert_same(e.variance, t.variance)
    assert_same(e.mode, t.mode)
    k = shape[-1]
    v = np.random.default_rng(5).integers(0, k, (6,) + tuple(t.batch_shape))
    assert_same(e.log_prob(ember.tensor(v)), t.log_prob(torch.tensor(v)), tol=tol)
    for expand in (True, False):
        assert_same(e.enumerate_support(expand), t.enumerate_support(expand))
    assert_same(e.log_prob(e.enumerate_support()), t.log_prob(t.enumerate_support()), tol=tol)


def test_categorical_log_prob_broadcasts_values_against_the_batch():
    p = [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]
    for v in ([[0], [2]], [0, 1], [[0, 1], [2, 2], [1, 0]], [[[1, 2]]], 2):
        assert_same(ED.Categorical(ember.tensor(p)).log_prob(ember.tensor(v)),
                    TD.Categorical(torch.tensor(p)).log_prob(torch.tensor(v)), tol=1e-6)


def test_categorical_zero_probabilities():
    for kw in ({"probs": [0.0, 1.0, 0.0]}, {"logits": [-math.inf, 0.0, 1.0]}):
        e = ED.Categorical(**{k: ember.tensor(v) for k, v in kw.items()})
        t = TD.Categorical(**{k: torch.tensor(v) for k, v in kw.items()})
        assert_same(e.entropy(), t.entropy(), tol=1e-6)
        assert_same(e.logits, t.logits, tol=1e-6)
        assert_same(e.log_prob(ember.tensor([0, 1, 2])), t.log_prob(torch.tensor([0, 1, 2])), tol=1e-6)


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_categorical_gradients_match_torch(by):
    param = values(6, (2, 4), 0.2, 2.0)
    (ep,), (tp,) = both([param], "float64", requires_grad=True)
    v = [[0, 3], [2, 1], [1, 1]]
    for fn in [lambda d, lib: d.log_prob(lib.tensor(v)).sum(), lambda d, lib: d.entropy().sum(),
               lambda d, lib: (d.probs * d.logits.exp()).sum()]:
        ep.grad = tp.grad = None
        fn(ED.Categorical(**{by: ep}), ember).backward()
        fn(TD.Categorical(**{by: tp}), torch).backward()
        assert_same(ep.grad, tp.grad, tol=1e-12)


def test_categorical_sample_shapes_and_frequencies():
    probs = ember.tensor([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]])
    d = ED.Categorical(probs)
    assert d.sample().shape == ember.Size([2]) and d.sample().dtype == ember.int64
    assert d.sample((4, 5)).shape == ember.Size([4, 5, 2])
    assert ED.Categorical(ember.ones(3)).sample([7]).shape == ember.Size([7])
    ember.manual_seed(1)
    s = d.sample((30000,))
    ember.manual_seed(1)
    assert ember.equal(d.sample((30000,)), s)
    for b in range(2):
        counts = ember.bincount(s[:, b], minlength=3).double() / 30000
        assert ember.allclose(counts, probs[b].double(), atol=0.015), counts
    assert (s[:, 1] != 1).all()  # never a zero-probability category


def test_categorical_expand_and_support():
    for lib, D in ((ember, ED), (torch, TD)):
        d = D.Categorical(logits=lib.zeros(2, 3)).expand([4, 2])
        assert list(d.batch_shape) == [4, 2] and list(d.logits.shape) == [4, 2, 3]
        assert d.sample().shape == (4, 2)
    e, t = ED.Categorical(ember.ones(3)), TD.Categorical(torch.ones(3))
    assert repr(e.support) == repr(t.support) == "IntegerInterval(lower_bound=0, upper_bound=2)"
    assert repr(ED.Categorical.support) == repr(TD.Categorical.support) == "DependentProperty()"
    assert e.support.check(ember.tensor([0.5, 1.0, -1.0, 3.0])).tolist() == [False, True, False, False]
    assert ED.Categorical.has_enumerate_support and not ED.Categorical.has_rsample
    with pytest.raises(NotImplementedError):
        e.rsample()


# ---------------------------------------------------------------- Bernoulli, Uniform, OneHotCategorical, Independent
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("by", ["probs", "logits"])
def test_bernoulli_matches_torch(dtype, by):
    param = [0.0, 0.1, 0.5, 0.9, 1.0] if by == "probs" else [-30.0, -2.0, 0.0, 1.5, 40.0]
    (ep,), (tp,) = both([param], dtype, requires_grad=True)
    e, t = ED.Bernoulli(**{by: ep}), TD.Bernoulli(**{by: tp})
    tol = 5 * TOL[dtype]
    for name in ["probs", "logits", "mean", "mode", "variance", "param_shape"]:
        assert_same(getattr(e, name), getattr(t, name), tol=tol)
    assert_same(e.entropy(), t.entropy(), tol=tol)
    (ev,), (tv,) = both([[[0.0], [1.0]]], dtype)
    assert_same(e.log_prob(ev), t.log_prob(tv), tol=tol)
    (e.log_prob(ev).sum() + e.entropy().sum()).backward()
    (t.log_prob(tv).sum() + t.entropy().sum()).backward()
    assert_same(ep.grad, tp.grad, tol=tol)
    assert_same(e.enumerate_support(), t.enumerate_support())
    assert_same(e.enumerate_support(False), t.enumerate_support(False))
    assert ED.Bernoulli(0.3).batch_shape == ember.Size([]) and ED.Bernoulli(0.3).probs.dtype == ember.float32


def test_bernoulli_samples():
    d = ED.Bernoulli(ember.tensor([0.2, 0.9]))
    ember.manual_seed(3)
    s = d.sample((20000,))
    assert s.shape == ember.Size([20000, 2]) and s.dtype == ember.float32
    assert ember.allclose(s.mean(0), ember.tensor([0.2, 0.9]), atol=0.015)
    ember.manual_seed(3)
    assert ember.equal(d.sample((20000,)), s)


@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform_matches_torch(dtype):
    low, high = values(7, (2, 3), -2, 0), values(8, (3,), 0.5, 2)
    (el, eh), (tl, th) = both([low, high], dtype, requires_grad=True)
    e, t = ED.Uniform(el, eh, validate_args=False), TD.Uniform(tl, th, validate_args=False)
    tol = 5 * TOL[dtype]
    for name in ["mean", "mode", "stddev", "variance"]:
        assert_same(getattr(e, name), getattr(t, name), tol=tol)
    assert_same(e.entropy(), t.entropy(), tol=tol)
    (ex,), (tx,) = both([values(9, (4, 2, 3), -1.0, 0.5)], dtype)  # partly outside [low, high)
    assert_same(e.cdf(ex), t.cdf(tx), tol=tol)
    assert_same(e.icdf(ex.clamp(0, 1)), t.icdf(tx.clamp(0, 1)), tol=tol)
    assert_same(e.log_prob(ex), t.log_prob(tx), tol=tol)
    (e.log_prob(ex).sum() + e.entropy().sum() + e.cdf(ex).sum()).backward()
    (t.log_prob(tx).sum() + t.entropy().sum() + t.cdf(tx).sum()).backward()
    assert_same(el.grad, tl.grad, tol=tol)
    assert_same(eh.grad, th.grad, tol=tol)
    # outside [low, high): -inf without validation
    e2, t2 = ED.Uniform(0.0, 1.0, validate_args=False), TD.Uniform(0.0, 1.0, validate_args=False)
    assert_same(e2.log_prob(ember.tensor([0.5, 1.5, 0.0, 1.0])), t2.log_prob(torch.tensor([0.5, 1.5, 0.0, 1.0])))
    assert repr(e.support) == repr(t.support).replace("torch.", "ember.")


def test_uniform_rsample():
    low, high = ember.tensor([0.0, -1.0], requires_grad=True), ember.tensor([1.0, 3.0], requires_grad=True)
    ember.manual_seed(5)
    x = ED.Uniform(low, high).rsample((20000,))
    assert x.shape == ember.Size([20000, 2]) and bool(((x >= low) & (x < high)).all())
    assert ember.allclose(x.mean(0), ember.tensor([0.5, 1.0]), atol=0.03)
    x.sum().backward()
    u = (x - low) / (high - low)  # d x / d low = 1 - u, d x / d high = u
    assert ember.allclose(low.grad, (1 - u).sum(0).detach(), rtol=1e-4)
    assert ember.allclose(high.grad, u.sum(0).detach(), rtol=1e-4)


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_one_hot_categorical_matches_torch(by):
    param = values(10, (2, 3), 0.1, 2.0)
    (ep,), (tp,) = both([param], "float64")
    e, t = ED.OneHotCategorical(**{by: ep}), TD.OneHotCategorical(**{by: tp})
    assert repr(e) == repr(t) == "OneHotCategorical()"
    assert tuple(e.batch_shape) == (2,) and tuple(e.event_shape) == (3,)
    for name in ["probs", "logits", "mean", "mode", "variance", "param_shape"]:
        assert_same(getattr(e, name), getattr(t, name), tol=1e-12)
    assert_same(e.entropy(), t.entropy(), tol=1e-12)
    for expand in (True, False):
        assert_same(e.enumerate_support(expand), t.enumerate_support(expand))
    assert_same(e.log_prob(e.enumerate_support()), t.log_prob(t.enumerate_support()), tol=1e-12)
    ember.manual_seed(0)
    s = e.sample((5,))
    assert s.shape == ember.Size([5, 2, 3]) and s.dtype == ember.float64 and (s.sum(-1) == 1).all()
    assert e.expand([4, 2]).sample().shape == ember.Size([4, 2, 3])


def test_independent_matches_torch():
    loc, scale = values(11, (2, 3)), values(12, (2, 3), 0.5, 1.5)
    (el, es), (tl, ts) = both([loc, scale], "float64")
    e, t = ED.Independent(ED.Normal(el, es), 1), TD.Independent(TD.Normal(tl, ts), 1)
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert tuple(e.batch_shape) == (2,) and tuple(e.event_shape) == (3,) and e.has_rsample
    (ex,), (tx,) = both([values(13, (4, 2, 3))], "float64")
    assert_same(e.log_prob(ex), t.log_prob(tx), tol=1e-12)
    assert_same(e.entropy(), t.entropy(), tol=1e-12)
    assert_same(e.mean, t.mean)
    assert e.rsample((5,)).shape == ember.Size([5, 2, 3])
    assert tuple(e.expand([7, 2]).batch_shape) == (7, 2)
    same_error(lambda lib, D: D.Independent(D.Normal(lib.zeros(2, 3), 1.0), 3))
    same_error(lambda lib, D: D.Independent(D.Categorical(lib.ones(2, 3)), 1).enumerate_support())


# ---------------------------------------------------------------- KL divergence
def kl_pairs(lib, D):
    f = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    return [
        (D.Normal(f([0.0, 1.0, -2.0]), f([1.0, 2.0, 0.3])), D.Normal(f([1.0, 1.0, 0.5]), f([1.5, 0.5, 2.0]))),
        (D.Normal(f([[0.0], [1.0]]), f([1.0, 2.0])), D.Normal(0.5, f(2.0))),
        (D.Categorical(f([[0.2, 0.8], [0.5, 0.5]])), D.Categorical(logits=f([[0.0, 1.0], [-1.0, 2.0]]))),
        (D.Categorical(f([[0.0, 1.0], [1.0, 0.0]])), D.Categorical(f([[0.5, 0.5], [0.0, 1.0]]))),
        (D.OneHotCategorical(f([0.1, 0.2, 0.7])), D.OneHotCategorical(f([0.3, 0.3, 0.4]))),
        (D.Bernoulli(f([0.0, 0.3, 1.0, 0.6])), D.Bernoulli(f([0.2, 0.3, 1.0, 0.0]))),
        (D.Uniform(f([0.0, 0.0]), f([1.0, 2.0])), D.Uniform(f([-1.0, 0.5]), f([2.0, 3.0]))),
        (D.Uniform(f([0.0, 0.0]), f([1.0, 2.0])), D.Normal(f([0.0, 1.0]), f([1.0, 2.0]))),
        (D.Independent(D.Normal(f([[0.0, 1.0]]), f([1.0, 2.0])), 1), D.Independent(D.Normal(f([[1.0, 0.0]]), 1.0), 1)),
    ]


def test_kl_divergence_matches_torch():
    for (ep, eq), (tp, tq) in zip(kl_pairs(ember, ED), kl_pairs(torch, TD)):
        assert_same(ED.kl_divergence(ep, eq), TD.kl_divergence(tp, tq), tol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_kl_gradients_match_torch(dtype):
    arrays = [values(14, (3,)), values(15, (3,), 0.5, 2), values(16, (3,)), values(17, (3,), 0.5, 2)]
    e, t = both(arrays, dtype, requires_grad=True)
    ED.kl_divergence(ED.Normal(e[0], e[1]), ED.Normal(e[2], e[3])).sum().backward()
    TD.kl_divergence(TD.Normal(t[0], t[1]), TD.Normal(t[2], t[3])).sum().backward()
    for a, b in zip(e, t):
        assert_same(a.grad, b.grad, tol=10 * TOL[dtype])
    (ep, eq), (tp, tq) = both([values(18, (2, 4)), values(19, (2, 4))], dtype, requires_grad=True)
    ED.kl_divergence(ED.Categorical(logits=ep), ED.Categorical(logits=eq)).sum().backward()
    TD.kl_divergence(TD.Categorical(logits=tp), TD.Categorical(logits=tq)).sum().backward()
    assert_same(ep.grad, tp.grad, tol=10 * TOL[dtype])
    assert_same(eq.grad, tq.grad, tol=10 * TOL[dtype])


def test_exponential_family_bregman_forms_agree_with_the_closed_forms():
    p = ED.Normal(ember.tensor([0.0, 1.0], dtype=ember.float64), ember.tensor([1.0, 2.0], dtype=ember.float64))
    q = ED.Normal(ember.tensor([0.5, -1.0], dtype=ember.float64), ember.tensor([0.7, 1.0], dtype=ember.float64))
    assert ember.allclose(ED.ExponentialFamily.entropy(p), p.entropy())
    assert ember.allclose(ED.kl._kl_expfamily_expfamily(p, q), ED.kl_divergence(p, q))
    b, c = ED.Bernoulli(ember.tensor([0.2, 0.7])), ED.Bernoulli(ember.tensor([0.4, 0.1]))
    assert ember.allclose(ED.ExponentialFamily.entropy(b), b.entropy())
    assert ember.allclose(ED.kl._kl_expfamily_expfamily(b, c), ED.kl_divergence(b, c))
    with pytest.raises(NotImplementedError, match="different exponential families"):
        ED.kl_divergence(p, b)


def test_kl_dispatch_and_register_kl():
    same_error(lambda lib, D: D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(lib.ones(2))))
    for D in (ED, TD):
        with pytest.raises(TypeError):
            D.register_kl(D.Normal, "Normal")
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        ED.register_kl(int, ED.Normal)  # torch's check lets int through (an operator precedence slip)

    class MyNormal(ED.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), ED.Normal(1.0, 1.0)
    assert ED.kl_divergence(p, q).item() == pytest.approx(0.5)  # inherits Normal-Normal
    try:
        @ED.register_kl(MyNormal, ED.Normal)
        def kl_mine(p, q):
            return ember.tensor(42.0)

        assert ED.kl_divergence(p, q).item() == 42.0  # the more specific pair wins
        assert ED.kl_divergence(q, p).item() == pytest.approx(0.5)
    finally:
        del ED.kl._KL_REGISTRY[MyNormal, ED.Normal]
        ED.kl._KL_MEMOIZE.clear()


# ---------------------------------------------------------------- validation
def test_invalid_parameters_raise_torchs_value_errors():
    same_error(lambda lib, D: D.Normal(0.0, -1.0))
    same_error(lambda lib, D: D.Normal(lib.zeros(2), lib.tensor([1.0, -1.0])))
    same_error(lambda lib, D: D.Normal(lib.tensor([0.0, math.nan]), 1.0))
    same_error(lambda lib, D: D.Normal("a", 1.0))
    same_error(lambda lib, D: D.Categorical(lib.tensor([0.2, -0.8])))
    same_error(lambda lib, D: D.Categorical(lib.tensor([[0.2, 0.8], [0.5, -0.5]])))
    same_error(lambda lib, D: D.Categorical(logits=lib.tensor([0.0, math.nan])))
    same_error(lambda lib, D: D.Categorical())
    same_error(lambda lib, D: D.Categorical(lib.ones(2), lib.ones(2)))
    same_error(lambda lib, D: D.Categorical(lib.tensor(1.0)))
    same_error(lambda lib, D: D.Categorical(logits=lib.tensor(1.0)))
    same_error(lambda lib, D: D.Bernoulli(lib.tensor(1.5)))
    same_error(lambda lib, D: D.Bernoulli(lib.tensor([0.5, -0.1])))
    same_error(lambda lib, D: D.Bernoulli())
    same_error(lambda lib, D: D.Uniform(1.0, 0.0))
    same_error(lambda lib, D: D.Uniform(lib.zeros(2), lib.tensor([1.0, 0.0])))
    same_error(lambda lib, D: D.OneHotCategorical(lib.tensor([0.5, -0.5, 1.0])))


def test_invalid_samples_raise_torchs_value_errors():
    same_error(lambda lib, D: D.Categorical(lib.tensor([0.2, 0.8])).log_prob(lib.tensor(3)))
    same_error(lambda lib, D: D.Categorical(lib.ones(3)).log_prob(lib.tensor([0.5])))
    same_error(lambda lib, D: D.Normal(lib.zeros(2), 1.0).log_prob(lib.zeros(3)))
    same_error(lambda lib, D: D.Normal(lib.zeros(2), 1.0).log_prob(2.0))
    same_error(lambda lib, D: D.Normal(0.0, 1.0).cdf(math.nan))
    same_error(lambda lib, D: D.Normal(0.0, 1.0).log_prob(lib.tensor(math.nan)))
    same_error(lambda lib, D: D.Bernoulli(0.3).log_prob(lib.tensor(0.5)))
    same_error(lambda lib, D: D.Uniform(lib.zeros(2), lib.ones(2)).log_prob(lib.tensor([0.5, 1.5])))
    same_error(lambda lib, D: D.OneHotCategorical(lib.ones(3)).log_prob(lib.tensor([0.0, 1.0, 1.0])))
    same_error(lambda lib, D: D.OneHotCategorical(lib.ones(3)).log_prob(lib.tensor([0.0, 1.0])))


def test_validate_args_switches():
    assert ED.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    assert ED.Bernoulli(0.3, validate_args=False).log_prob(ember.tensor(0.5)).item() == pytest.approx(
        TD.Bernoulli(0.3, validate_args=False).log_prob(torch.tensor(0.5)).item())
    assert ED.Distribution._validate_args is True
    try:
        ED.Distribution.set_default_validate_args(False)
        ED.Normal(0.0, -1.0)
        with pytest.raises(ValueError):
            ED.Normal(0.0, -1.0, validate_args=True)
    finally:
        ED.Distribution.set_default_validate_args(True)
    ED.Normal(0.0, 1.0).log_prob(ember.tensor(1.0))
    with pytest.raises(ValueError):
        ED.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        ED.Distribution.set_default_validate_args("yes")
    assert ED.Distribution._validate_args is True
    assert isinstance(ED.Distribution.__dict__["set_default_validate_args"], staticmethod)


def test_base_class():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="does not define `arg_constraints`"):
            ED.Distribution(validate_args=True)
    d = ED.Distribution(ember.Size([2]), validate_args=False)
    assert d.batch_shape == ember.Size([2]) and d.event_shape == ember.Size([])
    assert ED.Distribution([3], [4], validate_args=False).event_shape == ember.Size([4])
    for name in ["mean", "variance", "mode", "support", "arg_constraints", "stddev"]:
        with pytest.raises(NotImplementedError):
            getattr(d, name)
    for call in [d.sample, d.rsample, d.entropy, lambda: d.log_prob(ember.zeros(2)), lambda: d.expand([3]),
                 lambda: d.cdf(ember.zeros(2)), lambda: d.icdf(ember.zeros(2)), d.enumerate_support]:
        with pytest.raises(NotImplementedError):
            call()

    class Custom(ED.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    with pytest.raises(NotImplementedError, match="custom .expand"):
        Custom(ember.zeros(2)).expand([3, 2])
    with pytest.warns(UserWarning, match=r"Use `sample\(\(n,\)\)` instead"):
        assert ED.Normal(0.0, 1.0).sample_n(3).shape == ember.Size([3])
    assert ED.Normal(0.0, 1.0)._extended_shape([2]) == ember.Size([2])
    with pytest.raises(TypeError):
        ED.Normal(0.0, 1.0).sample(3)


def test_constraints_match_torch():
    for name in ["real", "positive", "nonnegative", "unit_interval", "simplex", "real_vector", "boolean", "one_hot",
                 "nonnegative_integer", "positive_integer", "dependent"]:
        assert repr(getattr(ED.constraints, name)) == repr(getattr(TD.constraints, name)), name
    for make in [lambda c: c.interval(0, 1), lambda c: c.half_open_interval(0.0, 2.5), lambda c: c.greater_than(2),
                 lambda c: c.greater_than_eq(0), lambda c: c.less_than(1.5), lambda c: c.integer_interval(0, 3),
                 lambda c: c.independent(c.positive, 2)]:
        assert repr(make(ED.constraints)) == repr(make(TD.constraints))
    x = [[0.0, 0.5, 1.0, -1.0], [2.0, 0.25, 0.25, 0.5], [math.nan, math.inf, 3.0, 0.0]]
    for name in ["real", "positive", "nonnegative", "unit_interval", "simplex", "real_vector", "boolean", "one_hot",
                 "nonnegative_integer", "positive_integer"]:
        assert_same(getattr(ED.constraints, name).check(ember.tensor(x)),
                    getattr(TD.constraints, name).check(torch.tensor(x)))
        c = getattr(ED.constraints, name)
        t = getattr(TD.constraints, name)
        assert (c.event_dim, c.is_discrete) == (t.event_dim, t.is_discrete), name
    assert ED.constraints.is_dependent(ED.constraints.dependent)
    assert ED.constraints.dependent(is_discrete=True, event_dim=0).is_discrete
    same_error(lambda lib, D: D.constraints.dependent.check(lib.zeros(1)))
    same_error(lambda lib, D: D.constraints.dependent.event_dim)
    same_error(lambda lib, D: D.constraints.real_vector.check(lib.tensor(1.0)))


# ---------------------------------------------------------------- the package
def test_lazy_import_and_as_torch(tmp_path):
    code = ("import sys, ember; print('ember.distributions' in sys.modules, 'ember.nn' in sys.modules); "
            "ember.distributions.Normal(0.0, 1.0); print('ember.distributions' in sys.modules); "
            "print('distributions' in dir(ember))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.stdout.split() == ["False", "False", "True", "True"], result.stderr
    script = tmp_path / "uses_torch_distributions.py"
    script.write_text("import torch\nfrom torch.distributions import Normal, kl_divergence\n"
                      "import torch.distributions.constraints as c\n"
                      "torch.manual_seed(0)\nd = Normal(torch.zeros(3), 1.0)\n"
                      "print(type(d.sample()).__module__, kl_divergence(d, d).sum().item(), c.positive)\n")
    result = subprocess.run([sys.executable, "-m", "ember.as_torch", str(script)], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.stdout.split() == ["ember._tensor", "0.0", "GreaterThan(lower_bound=0.0)"], result.stderr


@pytest.mark.parametrize("module", ["", ".constraints", ".utils", ".distribution", ".normal", ".categorical",
                                    ".bernoulli", ".uniform", ".one_hot_categorical", ".independent", ".kl"])
def test_docstring_examples(module):
    mod = importlib.import_module("ember.distributions" + module)
    globs = {**vars(mod), "ember": ember, **{name: getattr(ED, name) for name in ED.__all__}}
    ember.manual_seed(0)
    result = doctest.testmod(mod, globs=globs)
    assert result.failed == 0 and result.attempted > 0
