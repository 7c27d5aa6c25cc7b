"""ember.distributions as a whole, where the pure-Python families (transforms,
TransformedDistribution, Exponential, Laplace, Pareto, ..., LKJCholesky, Wishart) meet the
gamma family on the native samplers (Gamma, Chi2, Beta, ...): InverseGamma (Gamma through
PowerTransform(-1)), the KL pairs that cross the two sets, LKJCholesky and Wishart sampling
through ember's own Beta and Chi2, and the whole namespace against torch.distributions
(names, constraints, rsample/enumerate flags, the set of registered KL pairs)."""
from __future__ import annotations

import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest

import ember
import ember.distributions as ED
import ember.distributions.kl as EK
from helpers import torch

import torch.distributions as TD
import torch.distributions.kl as TK
from test_distributions15 import close, message


def T(lib, a, dtype="float64", requires_grad=False):
    return lib.tensor(np.asarray(a), dtype=getattr(lib, dtype), requires_grad=requires_grad)


def U(lo, hi, seed, shape=(3,)):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


# ---- InverseGamma ----

def test_inverse_gamma_against_torch():
    conc, rate = [0.5, 1.5, 2.5, 4.0], [1.0, 0.3, 2.0, 0.7]  # no mean, no variance, both
    e, t = ED.InverseGamma(T(ember, conc), T(ember, rate)), TD.InverseGamma(T(torch, conc), T(torch, rate))
    assert isinstance(e, ED.TransformedDistribution) and isinstance(e.base_dist, ED.Gamma)
    assert isinstance(e.transforms[0], ED.PowerTransform) and e.transforms[0].exponent.item() == -1
    close(e.concentration, t.concentration)
    close(e.rate, t.rate)
    for attr in ["mean", "mode", "variance", "stddev"]:
        close(getattr(e, attr), getattr(t, attr))
    close(e.entropy(), t.entropy())
    x = U(0.05, 4, 1, (2, 4))
    close(e.log_prob(T(ember, x)), t.log_prob(T(torch, x)))
    close(e.cdf(T(ember, x)), t.cdf(T(torch, x)))
    assert (e.batch_shape, e.event_shape) == (ember.Size([4]), ember.Size([]))
    big = e.expand((2, 4))
    assert type(big) is ED.InverseGamma and big.batch_shape == ember.Size([2, 4])
    close(big.mean, t.expand((2, 4)).mean)
    assert repr(e) == repr(t) == "InverseGamma()"
    # KL between two: TransformedDistribution's pair (same transforms) down to Gamma's; with
    # another transform, none, in both
    c2, r2 = [1.5, 3.0, 2.0, 5.0], [1.0, 0.5, 0.3, 2.0]
    close(ED.kl_divergence(e, ED.InverseGamma(T(ember, c2), T(ember, r2))),
          TD.kl_divergence(t, TD.InverseGamma(T(torch, c2), T(torch, r2))))
    for lib, D in [(torch, TD), (ember, ED)]:
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.InverseGamma(lib.tensor([2.0]), lib.tensor([1.0])),
                            D.LogNormal(lib.tensor([0.0]), lib.tensor([1.0])))
    s = ED.InverseGamma(3.0, 2.0).sample((5,))
    assert s.shape == ember.Size([5]) and s.dtype == ember.float32 and bool((s > 0).all())
    # float32 parameters stay float32, scalars broadcast
    e32 = ED.InverseGamma(T(ember, conc, "float32"), 1.0)
    assert e32.mean.dtype == ember.float32 and e32.log_prob(T(ember, x, "float32")).dtype == ember.float32


def test_inverse_gamma_sampling_and_gradients():
    ember.manual_seed(0)
    c, r = 6.0, 2.0
    s = ED.InverseGamma(T(ember, [c]), T(ember, [r])).sample((4000,)).numpy()[:, 0]
    mean, var = r / (c - 1), r * r / ((c - 1) ** 2 * (c - 2))
    assert abs(s.mean() - mean) < 4 * math.sqrt(var / 4000)
    assert abs(np.median(1 / s) - c / r * (1 - 1 / (9 * c)) ** 3) < 0.1  # 1/s ~ Gamma(c, r): its median
    # rsample is differentiable in both parameters; log_prob's gradients are torch's
    conc, rate = T(ember, [2.0, 3.0], requires_grad=True), T(ember, [1.0, 0.5], requires_grad=True)
    ED.InverseGamma(conc, rate).rsample((3,)).sum().backward()
    assert conc.grad is not None and rate.grad is not None and bool(rate.grad.gt(0).all())
    ember.autograd.gradcheck(lambda c, r: ED.InverseGamma(c, r).log_prob(T(ember, [0.4, 1.7])),
                             (T(ember, [2.0, 3.0], requires_grad=True), T(ember, [1.0, 0.5], requires_grad=True)))
    tc, tr = T(torch, [2.0, 3.0], requires_grad=True), T(torch, [1.0, 0.5], requires_grad=True)
    TD.InverseGamma(tc, tr).entropy().sum().backward()
    ec, er = T(ember, [2.0, 3.0], requires_grad=True), T(ember, [1.0, 0.5], requires_grad=True)
    ED.InverseGamma(ec, er).entropy().sum().backward()
    close(ec.grad, tc.grad)
    close(er.grad, tr.grad)


def test_inverse_gamma_empty_noncontiguous_and_doctest():
    import doctest
    import ember.distributions.inverse_gamma as mod
    close(ED.InverseGamma(ember.empty(0), 1.0).log_prob(ember.empty(0)), TD.InverseGamma(torch.empty(0), 1.0).log_prob(
        torch.empty(0)))
    x = U(0.1, 3, 4, (2, 3))
    e = ED.InverseGamma(T(ember, [1.5, 2.0, 3.0]), 0.5).log_prob(T(ember, x.T).t())  # a transposed view
    close(e, TD.InverseGamma(T(torch, [1.5, 2.0, 3.0]), 0.5).log_prob(T(torch, x)))
    ember.manual_seed(0)
    result = doctest.testmod(mod, globs={**vars(mod), "ember": ember})
    assert result.failed == 0 and result.attempted > 0


def test_inverse_gamma_errors():
    for lib, D in [(torch, TD), (ember, ED)]:  # Gamma has no icdf, so neither has this
        with pytest.raises(NotImplementedError):
            D.InverseGamma(lib.tensor(2.0), lib.tensor(1.0)).icdf(lib.tensor(0.5))
    for args in [(-1.0, 1.0), (1.0, 0.0)]:
        with pytest.raises(ValueError) as t_exc:
            TD.InverseGamma(*[torch.tensor(a) for a in args], validate_args=True)
        with pytest.raises(ValueError) as e_exc:
            ED.InverseGamma(*[ember.tensor(a) for a in args], validate_args=True)
        assert message(e_exc.value) == message(t_exc.value)
    with pytest.raises(ValueError) as t_exc:
        TD.InverseGamma(torch.tensor(2.0), torch.tensor(1.0), validate_args=True).log_prob(torch.tensor(-1.0))
    with pytest.raises(ValueError) as e_exc:
        ED.InverseGamma(ember.tensor(2.0), ember.tensor(1.0), validate_args=True).log_prob(ember.tensor(-1.0))
    assert message(e_exc.value) == message(t_exc.value)


# ---- KL: every pair torch registers, ember registers too, with torch's values ----

def _families(lib, D, seed, dtype="float64"):
    """name -> a distribution of that family with batch shape (3,), parameters from seed
    (seed 0 keeps Uniform inside [0, 1] and Pareto's alpha above 1; seed 1 does not)."""
    u = lambda lo, hi, k=0, shape=(3,): T(lib, U(lo, hi, 10 * seed + k, shape), dtype)  # noqa: E731
    if seed == 0:
        low, high, alpha = u(0.05, 0.3), u(0.5, 0.95, 1), u(1.2, 3, 2)
    else:
        low = u(-1, 1)
        high, alpha = low + u(0.5, 2, 1), u(0.5, 3, 2)
    a = np.random.default_rng(seed).normal(size=(3, 3, 3))
    cov = T(lib, a @ a.transpose(0, 2, 1) + np.eye(3), dtype)
    return {
        "Bernoulli": D.Bernoulli(u(0.1, 0.9)),
        "Beta": D.Beta(u(0.5, 3), u(0.5, 3, 1)),
        "Binomial": D.Binomial(T(lib, [5.0, 7.0, 9.0], dtype), u(0.1, 0.9)),
        "Categorical": D.Categorical(u(0.1, 1, 0, (3, 4))),
        "Cauchy": D.Cauchy(u(-1, 1), u(0.5, 2, 1)),
        "ContinuousBernoulli": D.ContinuousBernoulli(u(0.1, 0.9)),
        "Dirichlet": D.Dirichlet(u(0.5, 3, 0, (3, 4))),
        "Exponential": D.Exponential(u(0.5, 2)),
        "Gamma": D.Gamma(u(0.5, 3), u(0.5, 2, 1)),
        "Geometric": D.Geometric(u(0.1, 0.9)),
        "Gumbel": D.Gumbel(u(-1, 1), u(0.5, 2, 1)),
        "HalfNormal": D.HalfNormal(u(0.5, 2)),
        "Independent": D.Independent(D.Normal(u(-1, 1, 0, (3, 2)), u(0.5, 2, 1, (3, 2))), 1),
        "Laplace": D.Laplace(u(-1, 1), u(0.5, 2, 1)),
        "LowRankMultivariateNormal": D.LowRankMultivariateNormal(u(-1, 1, 0, (3, 3)), u(-1, 1, 1, (3, 3, 2)),
                                                                 u(0.5, 2, 2, (3, 3))),
        "MultivariateNormal": D.MultivariateNormal(u(-1, 1, 0, (3, 3)), cov),
        "Normal": D.Normal(u(-1, 1), u(0.5, 2, 1)),
        "OneHotCategorical": D.OneHotCategorical(u(0.1, 1, 0, (3, 4))),
        "Pareto": D.Pareto(u(0.5, 2, 1), alpha),
        "Poisson": D.Poisson(u(0.5, 4)),
        "TransformedDistribution": D.TransformedDistribution(D.Normal(u(-1, 1), u(0.5, 2, 1)),
                                                             [D.transforms.ExpTransform()]),
        "Uniform": D.Uniform(low, high),
    }


def _registered(registry):
    return {(a.__name__, b.__name__) for a, b in registry}


def test_kl_registry_is_torchs():
    assert _registered(EK._KL_REGISTRY) == _registered(TK._KL_REGISTRY)


@pytest.mark.parametrize("seed, dtype", [(0, "float64"), (1, "float64"), (1, "float32")])
def test_kl_values_for_every_torch_pair(seed, dtype):
    es, ts = _families(ember, ED, seed, dtype), _families(torch, TD, seed, dtype)
    es2, ts2 = _families(ember, ED, seed + 2, dtype), _families(torch, TD, seed + 2, dtype)  # a second member
    checked = 0
    for pname, qname in sorted(_registered(TK._KL_REGISTRY)):
        if pname == "ExponentialFamily":
            continue  # met only by a family with no pair of its own: test_kl_exponential_family_generic_pair
        p_e, q_e, p_t, q_t = es[pname], es[qname], ts[pname], ts[qname]
        if pname == qname:
            q_e, q_t = es2[qname], ts2[qname]
        got, want = ED.kl_divergence(p_e, q_e), TD.kl_divergence(p_t, q_t)
        assert got.dtype == getattr(ember, dtype), (pname, qname)
        try:
            close(got, want, *((1e-8, 1e-10) if dtype == "float64" else (2e-4, 2e-5)))
        except AssertionError as exc:
            raise AssertionError(f"KL({pname} || {qname}): {exc}") from None
        checked += 1
    assert checked == len(TK._KL_REGISTRY) - 1


def _exp_family_exponential(lib, D):
    """The exponential law written as a bare ExponentialFamily: natural parameter -rate,
    log-normalizer -log(-eta); no KL pair of its own, so KL takes the generic Bregman pair."""

    class Exp(D.ExponentialFamily):
        arg_constraints = {"rate": D.constraints.positive}
        support = D.constraints.nonnegative
        _mean_carrier_measure = 0

        def __init__(self, rate):
            self.rate = rate
            super().__init__(rate.shape, validate_args=False)

        @property
        def _natural_params(self):
            return (-self.rate,)

        def _log_normalizer(self, eta):
            return -(-eta).log()

    return Exp


def test_kl_exponential_family_generic_pair():
    e_cls, t_cls = _exp_family_exponential(ember, ED), _exp_family_exponential(torch, TD)
    p, q = U(0.5, 2, 0), U(0.5, 2, 1)
    got = ED.kl_divergence(e_cls(T(ember, p)), e_cls(T(ember, q)))
    close(got, TD.kl_divergence(t_cls(T(torch, p)), t_cls(T(torch, q))))
    close(got, TD.kl_divergence(TD.Exponential(T(torch, p)), TD.Exponential(T(torch, q))))
    # Chi2 takes Gamma's pair; StudentT has no pair in either library
    close(ED.kl_divergence(ED.Chi2(T(ember, p)), ED.Chi2(T(ember, q))),
          TD.kl_divergence(TD.Chi2(T(torch, p)), TD.Chi2(T(torch, q))))
    with pytest.raises(NotImplementedError):
        TD.kl_divergence(TD.StudentT(2.0), TD.StudentT(3.0))
    with pytest.raises(NotImplementedError):
        ED.kl_divergence(ED.StudentT(2.0), ED.StudentT(3.0))


def test_cross_kl_pairs_gradients():
    # the cross pairs are differentiable in both sides' parameters, with torch's gradients
    def kl(lib, D, a, b, r, s):
        return (D.kl_divergence(D.Gamma(a, b), D.Exponential(r)).sum()
                + D.kl_divergence(D.Exponential(r), D.Gamma(a, b)).sum()
                + D.kl_divergence(D.Beta(a, b), D.ContinuousBernoulli(probs=s)).sum()
                + D.kl_divergence(D.Gamma(a, b), D.Gumbel(r, b)).sum()
                + D.kl_divergence(D.Pareto(b, a + 1), D.Gamma(a, r)).sum()
                + D.kl_divergence(D.Beta(a, b), D.Exponential(r)).sum())

    vals = [[1.5, 2.5], [0.7, 1.3], [0.9, 1.6], [0.2, 0.7]]
    e_args = [T(ember, v, requires_grad=True) for v in vals]
    t_args = [T(torch, v, requires_grad=True) for v in vals]
    kl(ember, ED, *e_args).backward()
    kl(torch, TD, *t_args).backward()
    for e, t in zip(e_args, t_args):
        close(e.grad, t.grad, 1e-8, 1e-10)


# ---- LKJCholesky and Wishart sampling through ember's own Beta and Chi2 ----

def test_lkj_cholesky_sampling():
    ember.manual_seed(0)
    d, eta = 3, 2.0
    s = ED.LKJCholesky(d, T(ember, eta)).sample((4000,))
    assert s.shape == ember.Size([4000, d, d]) and s.dtype == ember.float64
    assert bool(ED.constraints.corr_cholesky.check(s).all())
    corr = (s @ s.mT).numpy()
    # every off-diagonal correlation of LKJ(eta) is 2 Beta(b, b) - 1 with b = eta - 1 + d / 2:
    # mean 0, variance 1 / (2 b + 1). (torch's sampler widens rows 2..: Note [LKJ onion
    # concentrations] in lkj_cholesky.py; ember's draws follow the density both log_probs give)
    b = eta - 1 + d / 2
    for i, j in [(1, 0), (2, 0), (2, 1)]:
        assert abs(corr[:, i, j].var() - 1 / (2 * b + 1)) < 0.015 and abs(corr[:, i, j].mean()) < 0.03
    # d = 4: the fourth moment too, E r^4 = 3 / ((2 b + 1) (2 b + 3))
    b4 = eta - 1 + 4 / 2
    r = ED.LKJCholesky(4, T(ember, eta)).sample((4000,))
    r = (r @ r.mT).numpy()[:, [1, 2, 3, 2, 3, 3], [0, 0, 0, 1, 1, 2]]
    assert np.all(np.abs(r.var(0) - 1 / (2 * b4 + 1)) < 0.015)
    assert np.all(np.abs((r ** 4).mean(0) - 3 / ((2 * b4 + 1) * (2 * b4 + 3))) < 0.01)
    # batched concentrations, float32, and a 2 x 2 case whose one correlation is 2 Beta(eta, eta) - 1
    s = ED.LKJCholesky(2, ember.tensor([0.5, 1.0, 4.0])).sample((2000,))
    assert s.shape == ember.Size([2000, 3, 2, 2]) and s.dtype == ember.float32
    assert bool(ED.constraints.corr_cholesky.check(s).all())
    r = s[..., 1, 0].numpy()
    for k, e in enumerate([0.5, 1.0, 4.0]):
        assert abs(r[:, k].var() - 1 / (2 * e + 1)) < 0.03
    # the sampled law: log_prob of ember's samples against torch's density
    x = ED.LKJCholesky(4, T(ember, 1.5)).sample((6,))
    close(ED.LKJCholesky(4, T(ember, 1.5)).log_prob(x), TD.LKJCholesky(4, T(torch, 1.5)).log_prob(T(torch, x.numpy())))


def test_wishart_sampling():
    a = np.random.default_rng(0).normal(size=(2, 3, 3))
    cov = a @ a.transpose(0, 2, 1) + np.eye(3)
    ember.manual_seed(0)
    e = ED.Wishart(T(ember, [4.0, 6.5]), T(ember, cov))
    s = e.sample((3000,))
    assert s.shape == ember.Size([3000, 2, 3, 3]) and bool(ED.constraints.positive_definite.check(s).all())
    rel = np.abs(s.numpy().mean(0) - e.mean.numpy()) / np.sqrt(e.variance.numpy() / 3000)
    assert rel.max() < 4.5
    var_ratio = s.numpy().var(0) / e.variance.numpy()
    assert np.all(np.abs(var_ratio - 1) < 0.25)
    # rsample carries gradients to df and the scale
    df = T(ember, [4.0, 6.5], requires_grad=True)
    tril = T(ember, np.linalg.cholesky(cov), requires_grad=True)
    ED.Wishart(df, scale_tril=tril).rsample((2,)).sum().backward()
    assert df.grad is not None and tril.grad is not None and bool(df.grad.isfinite().all())
    close(e.log_prob(s[:4]), TD.Wishart(T(torch, [4.0, 6.5]), T(torch, cov)).log_prob(T(torch, s[:4].numpy())))


# ---- the whole namespace ----

def test_every_torch_name_is_there():
    missing = [n for n in TD.__all__ if not hasattr(ED, n)]
    assert missing == []
    assert set(TD.__all__) <= set(ED.__all__)
    for sub in ["constraints", "transforms", "constraint_registry"]:
        t_mod, e_mod = getattr(TD, sub), importlib.import_module("ember.distributions." + sub)
        assert [n for n in t_mod.__all__ if not hasattr(e_mod, n)] == [], sub
    # torch's submodules, by their names (torch spells one studentT): `from torch.distributions.gamma import Gamma`
    for info in pkgutil.iter_modules(TD.__path__):
        e_mod = importlib.import_module("ember.distributions." + info.name)
        t_mod = importlib.import_module("torch.distributions." + info.name)
        assert [n for n in getattr(t_mod, "__all__", []) if not hasattr(e_mod, n)] == [], info.name


def _distribution_classes(mod, base):
    return {n: getattr(mod, n) for n in mod.__all__
            if inspect.isclass(getattr(mod, n)) and issubclass(getattr(mod, n), base)}


def _constraint_repr(c) -> str:
    return repr(c).replace("torch.", "").replace("ember.", "")


def test_every_class_has_torchs_constraints_and_flags():
    tcls, ecls = _distribution_classes(TD, TD.Distribution), _distribution_classes(ED, ED.Distribution)
    assert set(tcls) == set(ecls)
    for name, t in tcls.items():
        e = ecls[name]
        for flag in ["has_rsample", "has_enumerate_support"]:
            t_flag, e_flag = inspect.getattr_static(t, flag), inspect.getattr_static(e, flag)
            if isinstance(t_flag, property):  # from the base distribution: compared on instances below
                assert isinstance(e_flag, property), (name, flag)
            else:
                assert e_flag == t_flag, (name, flag)
        t_args, e_args = t.arg_constraints, e.arg_constraints
        if isinstance(t_args, property):  # per-instance (e.g. Independent): compare on instances below
            assert isinstance(e_args, property), name
        else:
            assert set(e_args) == set(t_args), name
            for k in t_args:
                assert _constraint_repr(e_args[k]) == _constraint_repr(t_args[k]), (name, k)
        t_sup = inspect.getattr_static(t, "support")
        e_sup = inspect.getattr_static(e, "support")
        if isinstance(t_sup, TD.constraints._Dependent):  # fixed by the parameters (Binomial, Uniform, ...)
            assert isinstance(e_sup, ED.constraints._Dependent) and \
                isinstance(e_sup, property) == isinstance(t_sup, property), name
        elif isinstance(t_sup, TD.constraints.Constraint):
            assert _constraint_repr(e_sup) == _constraint_repr(t_sup), name
            assert e_sup.is_discrete == t_sup.is_discrete and e_sup.event_dim == t_sup.event_dim, name
        else:  # depends on the parameters (a property or a dependent_property)
            assert not isinstance(e_sup, ED.constraints.Constraint) or \
                isinstance(e_sup, ED.constraints._DependentProperty), name


def test_instances_have_torchs_constraints_and_flags():
    es, ts = _families(ember, ED, 1), _families(torch, TD, 1)
    es["InverseGamma"], ts["InverseGamma"] = ED.InverseGamma(2.0, 1.0), TD.InverseGamma(2.0, 1.0)
    es["Wishart"], ts["Wishart"] = ED.Wishart(4.0, ember.eye(2)), TD.Wishart(torch.tensor(4.0), torch.eye(2))
    es["LKJCholesky"], ts["LKJCholesky"] = ED.LKJCholesky(3, 2.0), TD.LKJCholesky(3, 2.0)
    def more(lib, D):
        x = T(lib, [0.5, 1.5])
        return {"Chi2": D.Chi2(x), "FisherSnedecor": D.FisherSnedecor(x, x + 1), "StudentT": D.StudentT(x),
                "GeneralizedPareto": D.GeneralizedPareto(x, x, x - 1), "HalfCauchy": D.HalfCauchy(x),
                "Kumaraswamy": D.Kumaraswamy(x, x), "LogNormal": D.LogNormal(x, x), "Weibull": D.Weibull(x, x),
                "LogisticNormal": D.LogisticNormal(x, x), "VonMises": D.VonMises(x, x),
                "MixtureSameFamily": D.MixtureSameFamily(D.Categorical(x), D.Normal(x, x)),
                "Multinomial": D.Multinomial(3, x), "NegativeBinomial": D.NegativeBinomial(x, x / 2),
                "OneHotCategoricalStraightThrough": D.OneHotCategoricalStraightThrough(x),
                "RelaxedBernoulli": D.RelaxedBernoulli(x, x / 2),
                "RelaxedOneHotCategorical": D.RelaxedOneHotCategorical(x, x)}

    es.update(more(ember, ED))
    ts.update(more(torch, TD))
    assert set(ts) | {"Distribution", "ExponentialFamily"} >= set(_distribution_classes(TD, TD.Distribution))
    for name, t in ts.items():
        e = es[name]
        assert (e.has_rsample, e.has_enumerate_support) == (t.has_rsample, t.has_enumerate_support), name
        assert _constraint_repr(e.support) == _constraint_repr(t.support), name
        assert e.support.event_dim == t.support.event_dim and e.support.is_discrete == t.support.is_discrete, name
        assert {k: _constraint_repr(c) for k, c in e.arg_constraints.items()} == \
            {k: _constraint_repr(c) for k, c in t.arg_constraints.items()}, name
