"""The samplers behind the gamma family (declarations/ops/random.yaml: _standard_gamma,
_standard_gamma_grad, _sample_dirichlet, poisson, binomial; csrc/kernels/random_sample.cpp)
and the distributions on them (Gamma, Chi2, Beta, Dirichlet, StudentT, Poisson, Binomial,
FisherSnedecor, NegativeBinomial) with their KL pairs. Samples are not torch's (another
generator): their laws are checked by moments and a Kolmogorov-Smirnov distance against
the exact CDF with fixed seeds; densities, moments, entropies and KLs against torch's."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.distributions as ed

torch = pytest.importorskip("torch")
td = torch.distributions

TESTED_OPS = {"_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "poisson", "binomial"}

# 1% critical value of the Kolmogorov-Smirnov distance for n samples is about 1.63/sqrt(n)
N = 4000
KS_BOUND = 1.63 / math.sqrt(N)


def E(a, dtype="float64"):
    return ember.from_numpy(np.asarray(a, dtype=dtype))


def T(a, dtype="float64"):
    return torch.from_numpy(np.asarray(a, dtype=dtype))


def ks_distance(samples: np.ndarray, cdf) -> float:
    """sup |F_n - F| for a continuous F (evaluated at the sorted samples)."""
    x = np.sort(samples)
    f = cdf(x)
    i = np.arange(1, len(x) + 1)
    return float(max(np.max(i / len(x) - f), np.max(f - (i - 1) / len(x))))


def discrete_cdf_distance(samples: np.ndarray, cdf) -> float:
    """max over the integers k of |F_n(k) - F(k)|."""
    ks = np.arange(0, int(samples.max()) + 1)
    empirical = np.searchsorted(np.sort(samples), ks, side="right") / len(samples)
    return float(np.max(np.abs(empirical - cdf(ks))))


def gamma_cdf(alpha):
    return lambda x: torch.special.gammainc(T(alpha), T(x)).numpy()


# ---- the samplers ----

@pytest.mark.parametrize("alpha", [0.05, 0.7, 1.0, 4.5, 300.0])
def test_standard_gamma_law(alpha):
    ember.manual_seed(7)
    x = ember._standard_gamma(ember.full((N,), alpha, dtype=ember.float64)).numpy()
    assert ks_distance(x, gamma_cdf(alpha)) < KS_BOUND
    assert abs(x.mean() - alpha) < 5 * math.sqrt(alpha / N)
    assert (x > 0).all()


def test_standard_gamma_float32_and_edges():
    ember.manual_seed(3)
    a = ember.tensor([0.0, -1.0, math.nan, math.inf, 1e-3, 2.0])
    x = ember._standard_gamma(a)
    ref = torch._standard_gamma(torch.tensor([0.0, -1.0, math.nan, math.inf]))
    assert x.dtype == ember.float32
    assert x[:4].tolist() == ref.tolist()  # the smallest normal float, and inf
    assert x[4:].gt(0).all().item()
    x32 = ember._standard_gamma(ember.full((N,), 2.5)).numpy().astype(np.float64)
    assert ks_distance(x32, gamma_cdf(2.5)) < KS_BOUND
    assert ember._standard_gamma(ember.ones(0, 3)).shape == (0, 3)
    # non-contiguous and broadcast (expanded) inputs
    ember.manual_seed(1)
    alpha = ember.tensor([[1.0, 5.0]], dtype=ember.float64).expand(N // 2, 2).t()
    s = ember._standard_gamma(alpha)
    assert s.shape == (2, N // 2)
    assert abs(s[1].mean().item() - 5.0) < 0.3 and abs(s[0].mean().item() - 1.0) < 0.1


def test_sampler_determinism_and_generator():
    a = ember.full((50,), 1.5, dtype=ember.float64)
    ember.manual_seed(11)
    first = [ember._standard_gamma(a), ember.poisson(a), ember.binomial(a * 10, a / 3), ember._sample_dirichlet(a)]
    ember.manual_seed(11)
    again = [ember._standard_gamma(a), ember.poisson(a), ember.binomial(a * 10, a / 3), ember._sample_dirichlet(a)]
    for u, v in zip(first, again):
        assert ember.equal(u, v)
    g = ember.Generator().manual_seed(5)
    one = ember._standard_gamma(a, generator=g)
    g.manual_seed(5)
    assert ember.equal(one, ember._standard_gamma(a, generator=g))
    assert not ember.equal(one, ember._standard_gamma(a, generator=g))
    g.manual_seed(5)
    by_keyword = ember.poisson(a, generator=g)
    g.manual_seed(5)
    assert ember.equal(by_keyword, ember.poisson(a, g))


@pytest.mark.parametrize("rate", [0.3, 4.0, 10.0, 37.5, 2500.0])
def test_poisson_law(rate):
    ember.manual_seed(2)
    k = ember.poisson(ember.full((N,), rate, dtype=ember.float64)).numpy()
    assert (k == np.floor(k)).all() and (k >= 0).all()
    cdf = lambda ks: torch.special.gammaincc(T(ks + 1.0), T(np.full(ks.shape, rate))).numpy()  # P(K <= k)
    assert discrete_cdf_distance(k, cdf) < KS_BOUND
    assert abs(k.mean() - rate) < 5 * math.sqrt(rate / N)
    assert abs(k.var() / rate - 1) < 0.12


def test_poisson_dtypes_and_errors():
    assert ember.poisson(ember.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    for dt in (ember.float16, ember.bfloat16, ember.float32):
        assert ember.poisson(ember.ones(3, dtype=dt)).dtype == dt
    with pytest.raises(NotImplementedError, match="\"poisson_cpu\" not implemented for 'Long'"):
        ember.poisson(ember.ones(2, dtype=ember.int64))
    for bad in (-1.0, math.nan):
        with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
            ember.poisson(ember.tensor([1.0, bad]))
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            torch.poisson(torch.tensor([1.0, bad]))


@pytest.mark.parametrize("n, p", [(7, 0.3), (40, 0.9), (120, 0.45), (5000, 0.001), (3000, 0.7)])
def test_binomial_law(n, p):
    ember.manual_seed(4)
    k = ember.binomial(ember.full((N,), float(n), dtype=ember.float64), ember.full((N,), p, dtype=ember.float64))
    k = k.numpy()
    assert (k >= 0).all() and (k <= n).all() and (k == np.floor(k)).all()
    pmf = td.Binomial(n, torch.tensor(p, dtype=torch.float64)).log_prob(torch.arange(n + 1.0, dtype=torch.float64))
    cdf_table = pmf.exp().cumsum(0).numpy()
    assert discrete_cdf_distance(k, lambda ks: cdf_table[ks]) < KS_BOUND
    assert abs(k.mean() - n * p) < 5 * math.sqrt(n * p * (1 - p) / N)


def test_binomial_edges_dtypes_errors():
    r = ember.binomial(ember.tensor([10.0, 0.0, 5.0, -2.0, 4.0]), ember.tensor([0.5, 0.5, 1.0, 0.5, 0.0]))
    assert r.dtype == ember.float32 and r[1:].tolist() == [0.0, 5.0, 0.0, 0.0]
    r = ember.binomial(ember.tensor([math.inf, 3.0]), ember.tensor([0.5, math.nan]))
    assert r[0].item() == math.inf and math.isnan(r[1].item())  # as torch
    b = ember.binomial(ember.ones(3, 1, dtype=ember.float64) * 4, ember.full((2,), 0.5, dtype=ember.float64))
    assert b.shape == (3, 2) and b.dtype == ember.float64
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count, got: Long"):
        ember.binomial(ember.ones(2, dtype=ember.int64), ember.ones(2) * 0.5)
    with pytest.raises(ValueError, match="for prob, got: Long"):
        ember.binomial(ember.ones(2), ember.ones(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="Found dtype Float but expected Double"):
        ember.binomial(ember.ones(2, dtype=ember.float64), ember.ones(2) * 0.5)
    with pytest.raises(NotImplementedError, match="\"binomial_cpu\" not implemented for 'Half'"):
        ember.binomial(ember.ones(2, dtype=ember.float16), ember.ones(2, dtype=ember.float16))
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.binomial(ember.ones(2), ember.ones(3))


def test_gamma_and_dirichlet_dtype_errors():
    with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Half'"):
        ember._standard_gamma(ember.ones(2, dtype=ember.float16))
    with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Long'"):
        ember._standard_gamma(ember.ones(2, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="\"dirichlet\" not implemented for 'Long'"):
        ember._sample_dirichlet(ember.ones(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        ember._standard_gamma_grad(ember.ones(2), ember.ones(2, dtype=ember.float64))
    with pytest.raises(NotImplementedError, match="_standard_gamma_grad_cpu"):
        ember._standard_gamma_grad(ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64))


def test_sample_dirichlet():
    ember.manual_seed(9)
    alpha = [0.5, 2.0, 7.5]
    x = ember._sample_dirichlet(E([alpha] * N)).numpy()
    assert np.allclose(x.sum(-1), 1.0) and (x > 0).all()
    a = np.array(alpha)
    s = a.sum()
    assert np.all(np.abs(x.mean(0) - a / s) < 5 * np.sqrt(a * (s - a) / (s * s * (s + 1)) / N))
    # the first coordinate's marginal is Beta(0.5, 9.5); its CDF by torch's quadrature-free route:
    # the Beta(a, b) CDF equals P(G_a / (G_a + G_b) <= t); compare variance instead
    assert abs(x[:, 0].var() / (a[0] * (s - a[0]) / (s * s * (s + 1))) - 1) < 0.1
    tiny = ember._sample_dirichlet(ember.tensor([[1e-3, 1e-3], [1.0, 2.0]]))
    assert tiny.dtype == ember.float32 and abs(tiny.sum(-1) - 1).max().item() < 1e-6
    assert ember._sample_dirichlet(ember.tensor(1.0)).item() == 1.0
    assert ember._sample_dirichlet(ember.ones(0, 3)).shape == (0, 3)
    assert ember._sample_dirichlet(ember.ones(2, 0)).shape == (2, 0)


# ---- the gamma sample's gradient ----

def test_standard_gamma_grad_matches_cdf_derivative():
    """dx/dalpha = -(dP/dalpha)(alpha, x) / density, checked by central differences of
    torch's regularized incomplete gamma in float64, over alpha and the quantiles."""
    alphas, xs = [], []
    for a in (0.01, 0.3, 1.0, 2.5, 40.0, 3000.0):
        mean, sd = a, math.sqrt(a)
        for x in (mean * 0.05, mean * 0.5, mean * 0.98, mean * 1.02, mean * 2, mean + 6 * sd):
            if abs(x - mean) < 8 * sd:  # where P and Q have digits to difference
                alphas.append(a)
                xs.append(x)
    a, x = np.array(alphas), np.array(xs)
    h = 1e-5 * a
    # the lower P below the mean, the upper Q = 1 - P above it (each without cancellation)
    upper = x > a
    lower_diff = torch.special.gammainc(T(a + h), T(x)) - torch.special.gammainc(T(a - h), T(x))
    upper_diff = torch.special.gammaincc(T(a - h), T(x)) - torch.special.gammaincc(T(a + h), T(x))
    dP = np.where(upper, upper_diff.numpy(), lower_diff.numpy()) / (2 * h)
    log_density = (a - 1) * np.log(x) - x - torch.lgamma(T(a)).numpy()
    expected = -dP / np.exp(log_density)
    got = ember._standard_gamma_grad(E(a), E(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=2e-5)
    # torch's approximation agrees to its own accuracy
    np.testing.assert_allclose(got, torch._standard_gamma_grad(T(a), T(x)).numpy(), rtol=2e-3)
    # broadcasting and float32
    g = ember._standard_gamma_grad(ember.tensor([1.0, 2.0]), ember.tensor([0.5]))
    assert g.dtype == ember.float32 and g.shape == (2,)
    np.testing.assert_allclose(g.numpy(), torch._standard_gamma_grad(torch.tensor([1.0, 2.0]),
                                                                     torch.tensor([0.5])).numpy(), rtol=1e-3)


def test_gamma_rsample_gradients():
    c = ember.tensor([0.5, 3.0], dtype=ember.float64, requires_grad=True)
    r = ember.tensor([2.0, 0.5], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    x = ed.Gamma(c, r).rsample((N,))
    x.sum().backward()
    xd = x.detach()
    expected_c = (ember._standard_gamma_grad(c.detach().expand(N, 2), xd * r.detach()) / r.detach()).sum(0)
    assert ember.allclose(c.grad, expected_c)
    assert ember.allclose(r.grad, (-xd / r.detach()).sum(0))
    # unbiased: d E[x] / d concentration = 1 / rate
    assert ember.allclose(c.grad / N, 1 / r.detach(), rtol=0.06)
    assert x.grad_fn is not None


def test_dirichlet_and_beta_rsample_gradients_are_unbiased():
    a = ember.tensor([1.5, 2.0, 4.0], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(1)
    ed.Dirichlet(a).rsample((N,))[:, 0].mean().backward()
    s = 7.5
    expected = ember.tensor([(s - 1.5) / s**2, -1.5 / s**2, -1.5 / s**2], dtype=ember.float64)  # d mean_0 / d a
    assert (a.grad - expected).abs().max().item() < 0.02
    c1 = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
    c0 = ember.tensor(3.0, dtype=ember.float64, requires_grad=True)
    ed.Beta(c1, c0).rsample((N,)).mean().backward()
    assert abs(c1.grad.item() - 3 / 25) < 0.01 and abs(c0.grad.item() + 2 / 25) < 0.01


# ---- the distributions against torch's ----

P1 = [0.7, 2.0, 5.5]
P2 = [1.5, 0.4, 3.0]


def families():
    """(name, ember distribution, torch distribution, values for log_prob)."""
    e1, e2, t1, t2 = E(P1), E(P2), T(P1), T(P2)
    probs_e, probs_t = E([0.2, 0.5, 0.9]), T([0.2, 0.5, 0.9])
    return [
        ("Gamma", ed.Gamma(e1, e2), td.Gamma(t1, t2), [0.3, 1.0, 4.0]),
        ("Chi2", ed.Chi2(e1), td.Chi2(t1), [0.3, 1.0, 4.0]),
        ("Beta", ed.Beta(e1, e2), td.Beta(t1, t2), [0.1, 0.5, 0.95]),
        ("Dirichlet", ed.Dirichlet(E([P1, P2])), td.Dirichlet(T([P1, P2])), [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
        ("StudentT", ed.StudentT(E([0.8, 2.0, 5.0]), e2, e1), td.StudentT(T([0.8, 2.0, 5.0]), t2, t1),
         [-1.0, 0.3, 8.0]),
        ("Poisson", ed.Poisson(e1), td.Poisson(t1), [0.0, 2.0, 7.0]),
        ("Binomial", ed.Binomial(10, probs_e), td.Binomial(10, probs_t), [0.0, 4.0, 10.0]),
        ("BinomialLogits", ed.Binomial(E([3.0, 5.0, 8.0]), logits=e2 - 1),
         td.Binomial(T([3.0, 5.0, 8.0]), logits=t2 - 1),
         [1.0, 5.0, 2.0]),
        ("FisherSnedecor", ed.FisherSnedecor(E([1.0, 3.0, 6.0]), E([2.0, 4.5, 9.0])),
         td.FisherSnedecor(T([1.0, 3.0, 6.0]), T([2.0, 4.5, 9.0])), [0.2, 1.0, 3.0]),
        ("NegativeBinomial", ed.NegativeBinomial(e1, probs_e), td.NegativeBinomial(t1, probs_t), [0.0, 3.0, 12.0]),
        ("NegativeBinomialLogits", ed.NegativeBinomial(E([0.0, 2.0, 5.5]), logits=e2),
         td.NegativeBinomial(T([0.0, 2.0, 5.5]), logits=t2), [0.0, 3.0, 12.0]),
    ]


def close(got, want, what):
    want = want.detach().numpy()
    got = got.detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("case", families(), ids=lambda c: c[0])
def test_family_matches_torch(case):
    name, e, t, values = case
    assert e.batch_shape == tuple(t.batch_shape) and e.event_shape == tuple(t.event_shape)
    close(e.log_prob(E(values)), t.log_prob(T(values)), "log_prob")
    for attr in ("mean", "variance", "mode"):
        try:
            want = getattr(t, attr)
        except NotImplementedError:
            continue
        close(getattr(e, attr), want, attr)
    try:
        want = t.entropy()
    except NotImplementedError:
        want = None
    if want is not None:
        close(e.entropy(), want, "entropy")
    if name in ("Gamma", "Chi2"):
        close(e.cdf(E(values)), t.cdf(T(values)), "cdf")
    ex = e.expand((4,) + tuple(e.batch_shape))
    assert ex.batch_shape == (4,) + tuple(e.batch_shape)
    ember.manual_seed(0)
    s = e.sample((2,))
    assert s.shape == (2,) + tuple(e.batch_shape) + tuple(e.event_shape) and s.dtype == ember.float64
    assert ex.sample().shape == (4,) + tuple(e.batch_shape) + tuple(e.event_shape)
    if e.has_rsample:
        assert t.has_rsample
        assert e.rsample((3,)).shape == (3,) + tuple(e.batch_shape) + tuple(e.event_shape)
    assert bool(e.support.check(s).all())


def test_family_sample_means():
    ember.manual_seed(6)
    cases = [(ed.Gamma(E([2.0]), E([4.0])), 0.5, 0.25 / 2), (ed.Chi2(E([3.0])), 3.0, 6.0),
             (ed.Beta(E([2.0]), E([6.0])), 0.25, 0.25 * 0.75 / 9),
             (ed.StudentT(E([6.0]), E([1.0]), E([2.0])), 1.0, 6.0),
             (ed.Poisson(E([3.5])), 3.5, 3.5), (ed.Binomial(20, E([0.3])), 6.0, 4.2),
             (ed.FisherSnedecor(E([5.0]), E([12.0])), 1.2, 2 * 144 * 15 / (5 * 100 * 8)),
             (ed.NegativeBinomial(E([4.0]), E([0.4])), 4 * 0.4 / 0.6, 4 * 0.4 / 0.36)]
    for d, mean, var in cases:
        x = d.sample((N,)).numpy()
        assert abs(x.mean() - mean) < 5 * math.sqrt(var / N), type(d).__name__
        assert abs(x.var() / var - 1) < 0.25, type(d).__name__
        close(d.mean, torch.tensor([mean], dtype=torch.float64), "mean")


def test_binomial_enumerate_support_and_entropy_errors():
    d = ed.Binomial(E([3.0, 3.0]), E([0.2, 0.6]))
    assert d.enumerate_support().shape == (4, 2) and d.enumerate_support(False).shape == (4, 1)
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count not supported by `entropy`"):
        ed.Binomial(E([3.0, 4.0]), E([0.2, 0.6])).entropy()
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        ed.Binomial(3)


def test_validation():
    with pytest.raises(ValueError, match="concentration"):
        ed.Gamma(E([-1.0]), E([1.0]))
    with pytest.raises(ValueError, match="rate"):
        ed.Poisson(E([-0.5]))
    with pytest.raises(ValueError, match="`concentration` parameter must be at least one-dimensional."):
        ed.Dirichlet(ember.tensor(1.0))
    with pytest.raises(ValueError, match="probs"):
        ed.NegativeBinomial(2.0, E([1.0]))
    with pytest.raises(ValueError, match="df"):
        ed.Chi2(E([0.0]))
    with pytest.raises(ValueError, match="support"):
        ed.Binomial(3, E([0.5])).log_prob(E([4.0]))
    with pytest.raises(ValueError, match="support"):
        ed.Beta(E([1.0]), E([1.0])).log_prob(E([1.5]))
    with pytest.raises(ValueError, match="support"):
        ed.Poisson(E([1.0])).log_prob(E([0.5]))
    assert ed.Gamma(E([-1.0]), E([1.0]), validate_args=False).batch_shape == (1,)
    assert ed.Gamma(2.0, 3.0).batch_shape == () and ed.Beta(2.0, 3.0).batch_shape == ()


# ---- KL divergences ----

def kl_pairs():
    e1, e2, t1, t2 = E(P1), E(P2), T(P1), T(P2)
    probs = [0.2, 0.5, 0.9]
    return [
        (ed.Gamma(e1, e2), ed.Gamma(e2, e1), td.Gamma(t1, t2), td.Gamma(t2, t1)),
        (ed.Chi2(e1), ed.Gamma(e2, e1), td.Chi2(t1), td.Gamma(t2, t1)),
        (ed.Beta(e1, e2), ed.Beta(e2, e1), td.Beta(t1, t2), td.Beta(t2, t1)),
        (ed.Dirichlet(E([P1, P2])), ed.Dirichlet(E([P2, P1])), td.Dirichlet(T([P1, P2])), td.Dirichlet(T([P2, P1]))),
        (ed.Poisson(e1), ed.Poisson(e2), td.Poisson(t1), td.Poisson(t2)),
        (ed.Binomial(E([5.0, 6.0, 5.0]), E(probs)), ed.Binomial(5, e2 / 4),
         td.Binomial(T([5.0, 6.0, 5.0]), T(probs)), td.Binomial(5, t2 / 4)),
        (ed.Bernoulli(E(probs)), ed.Poisson(e1), td.Bernoulli(T(probs)), td.Poisson(t1)),
        (ed.Beta(e1, e2), ed.Gamma(e2, e1), td.Beta(t1, t2), td.Gamma(t2, t1)),
        (ed.Beta(e1, e2), ed.Normal(e2, e1), td.Beta(t1, t2), td.Normal(t2, t1)),
        (ed.Beta(e1, e2), ed.Uniform(E([0.0, -1.0, 0.1]), E([1.0, 2.0, 1.0])), td.Beta(t1, t2),
         td.Uniform(T([0.0, -1.0, 0.1]), T([1.0, 2.0, 1.0]))),
        (ed.Gamma(e1, e2), ed.Normal(e2, e1), td.Gamma(t1, t2), td.Normal(t2, t1)),
        (ed.Uniform(E([0.1, 0.5, -0.1]), E([0.4, 1.0, 0.5])), ed.Beta(e1, e2),
         td.Uniform(T([0.1, 0.5, -0.1]), T([0.4, 1.0, 0.5])), td.Beta(t1, t2)),
        (ed.Uniform(E([0.1, 0.5, -0.1]), E([0.4, 3.0, 0.5])), ed.Gamma(e1, e2),
         td.Uniform(T([0.1, 0.5, -0.1]), T([0.4, 3.0, 0.5])), td.Gamma(t1, t2)),
        (ed.Gamma(e1, e2), ed.Beta(e1, e2), td.Gamma(t1, t2), td.Beta(t1, t2)),
        (ed.Gamma(e1, e2), ed.Uniform(e1 - 5, e1), td.Gamma(t1, t2), td.Uniform(t1 - 5, t1)),
        (ed.Normal(e1, e2), ed.Beta(e1, e2), td.Normal(t1, t2), td.Beta(t1, t2)),
        (ed.Normal(e1, e2), ed.Gamma(e1, e2), td.Normal(t1, t2), td.Gamma(t1, t2)),
        (ed.Poisson(e1), ed.Bernoulli(E(probs)), td.Poisson(t1), td.Bernoulli(T(probs))),
        (ed.Poisson(e1), ed.Binomial(4, E(probs)), td.Poisson(t1), td.Binomial(4, T(probs))),
    ]


@pytest.mark.parametrize("pair", kl_pairs(), ids=lambda p: f"{type(p[0]).__name__}-{type(p[1]).__name__}")
def test_kl_matches_torch(pair):
    ep, eq, tp, tq = pair
    close(ed.kl_divergence(ep, eq), td.kl_divergence(tp, tq), "kl")


def test_kl_binomial_refuses_larger_q_count():
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        ed.kl_divergence(ed.Binomial(3, E([0.5])), ed.Binomial(4, E([0.5])))


class _Stub:
    """Parameters of a family defined in another module (Exponential, Gumbel, Pareto)."""

    def __init__(self, **params):
        self.__dict__.update(params)


def test_kl_formulas_with_other_modules_families():
    """The pairs registered when exponential.py, gumbel.py and pareto.py are present, called
    directly with those families' parameters."""
    from ember.distributions import _kl_gamma as k

    e1, e2, t1, t2 = E(P1), E(P2), T(P1), T(P2)
    alpha_e, alpha_t = E([0.7, 2.0, 5.5]), T([0.7, 2.0, 5.5])
    cases = [
        (k._kl_beta_exponential(ed.Beta(e1, e2), _Stub(rate=e1)),
         td.kl_divergence(td.Beta(t1, t2), td.Exponential(t1))),
        (k._kl_exponential_gamma(_Stub(rate=e2), ed.Gamma(e1, e2)),
         td.kl_divergence(td.Exponential(t2), td.Gamma(t1, t2))),
        (k._kl_gamma_exponential(ed.Gamma(e1, e2), _Stub(rate=e1)),
         td.kl_divergence(td.Gamma(t1, t2), td.Exponential(t1))),
        (k._kl_gamma_gumbel(ed.Gamma(e1, e2), _Stub(loc=e2 - 1, scale=e1)),
         td.kl_divergence(td.Gamma(t1, t2), td.Gumbel(t2 - 1, t1))),
        (k._kl_pareto_gamma(_Stub(scale=e2, alpha=alpha_e), ed.Gamma(e1, e2)),
         td.kl_divergence(td.Pareto(t2, alpha_t), td.Gamma(t1, t2))),
    ]
    for got, want in cases:
        close(got, want, "kl")


# graphs whose nodes cover this module's derivatives.yaml entry (tests/test_autograd.py
# checks that every formula runs somewhere)
DERIVATIVE_GRAPHS = [
    lambda: ember._standard_gamma(ember.ones(3, dtype=ember.float64, requires_grad=True)),
    lambda: ember.poisson(ember.ones(3, requires_grad=True)),
    lambda: ember.binomial(ember.ones(3, requires_grad=True), ember.ones(3, requires_grad=True) / 2),
]


def test_counts_have_zero_gradients():
    rate = ember.ones(3, requires_grad=True)
    ember.poisson(rate).sum().backward()
    assert rate.grad.tolist() == [0.0, 0.0, 0.0]
    count, prob = ember.full((2,), 4.0, requires_grad=True), ember.full((2,), 0.5, requires_grad=True)
    ember.binomial(count, prob).sum().backward()
    assert count.grad.tolist() == [0.0, 0.0] and prob.grad.tolist() == [0.0, 0.0]
    assert not ember._sample_dirichlet(ember.ones(3, requires_grad=True)).requires_grad


@pytest.mark.parametrize("module", [".gamma", ".chi2", ".beta", ".dirichlet", ".studentT", ".poisson", ".binomial",
                                    ".fishersnedecor", ".negative_binomial"])
def test_docstring_examples(module):
    import doctest
    import importlib

    mod = importlib.import_module("ember.distributions" + module)
    globs = {**vars(mod), "ember": ember}
    result = doctest.testmod(mod, globs=globs)
    assert result.failed == 0 and result.attempted > 0


def test_log_prob_and_entropy_gradcheck():
    def p(*v):
        return E(v).requires_grad_()

    c, r, value = p(0.7, 2.5), p(1.5, 0.4), E([0.3, 2.0])
    assert ember.autograd.gradcheck(lambda c, r: ed.Gamma(c, r).log_prob(value) + ed.Gamma(c, r).entropy(), (c, r))
    u = E([0.2, 0.9])
    assert ember.autograd.gradcheck(lambda a, b: ed.Beta(a, b).log_prob(u) + ed.Beta(a, b).entropy(), (c, r))
    df, loc, scale = p(2.5, 6.0), p(0.3, -1.0), p(1.2, 0.5)
    assert ember.autograd.gradcheck(
        lambda d, l, s: ed.StudentT(d, l, s).log_prob(value) + ed.StudentT(d, l, s).entropy(), (df, loc, scale))
    probs = p(0.3, 0.8)
    assert ember.autograd.gradcheck(lambda q: ed.NegativeBinomial(E([2.0, 3.5]), q).log_prob(E([1.0, 4.0])), (probs,))
    assert ember.autograd.gradcheck(lambda q: ed.Binomial(5, q).log_prob(E([1.0, 4.0])), (probs,))
    assert ember.autograd.gradcheck(lambda a, b: ed.kl_divergence(ed.Gamma(a, b), ed.Gamma(b, a)), (c, r))
