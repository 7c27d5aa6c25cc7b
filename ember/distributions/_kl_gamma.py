"""KL divergences of the gamma family (Gamma, Chi2 through Gamma, Beta, Dirichlet), Poisson
and Binomial: the pairs torch.distributions.kl registers between them and the other
families. Most are KL(p || q) = -H(p) - E_p[log q(x)] with the expectations in closed
form; a q whose support misses part of p's gives inf. Pairs with families defined in
modules that may be absent (exponential, gumbel, laplace, pareto, continuous_bernoulli) register only when the module is
there."""
from __future__ import annotations

import importlib
import math

from .. import full_like
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .dirichlet import Dirichlet
from .gamma import Gamma
from .kl import register_kl
from .normal import Normal
from .poisson import Poisson
from .uniform import Uniform

_EULER = 0.57721566490153286061  # Euler's constant


def _infinite_like(t):
    return full_like(t, math.inf)


def _x_log_x(t):
    return t.xlogy(t)  # 0 at 0


def _mean_log_gamma_density_terms(q):
    """log Gamma(q.concentration) - q.concentration log q.rate: the gamma log-density's
    normalizing part, with the sign E_p[-log q(x)] gives it."""
    return q.concentration.lgamma() - q.concentration * q.rate.log()


def _beta_mean_log(p):
    """E_p[log x] for p a Beta: psi(c1) - psi(c1 + c0)."""
    return p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()


# ---- within a family ----

@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a, b, c, d = p.concentration, p.rate, q.concentration, q.rate
    return c * (b / d).log() + c.lgamma() - a.lgamma() + (a - c) * a.digamma() + (d - b) * (a / b)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, a0, b1, b0 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    sp, sq = a1 + a0, b1 + b0
    log_beta_q = b1.lgamma() + b0.lgamma() - sq.lgamma()
    log_beta_p = a1.lgamma() + a0.lgamma() - sp.lgamma()
    return (log_beta_q - log_beta_p + (a1 - b1) * a1.digamma() + (a0 - b0) * a0.digamma()
            + (sq - sp) * sp.digamma())


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    expected_log = a.digamma() - a0.digamma().unsqueeze(-1)  # E_p[log x_i]
    return a0.lgamma() - b0.lgamma() - (a.lgamma() - b.lgamma()).sum(-1) + ((a - b) * expected_log).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    kl[p.total_count > q.total_count] = math.inf  # p puts mass on counts q cannot reach
    return kl


# ---- between families ----

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # log q(x) = x log rate - rate for x in {0, 1}
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    return -p.entropy() + _mean_log_gamma_density_terms(q) - (q.concentration - 1) * _beta_mean_log(p) + q.rate * mean


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    var = q.scale.pow(2)
    second_moment = mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)
    half_sq_dist = 0.5 * second_moment - q.loc * mean + 0.5 * q.loc.pow(2)  # E[(x - loc)^2] / 2
    return -p.entropy() + 0.5 * (2 * math.pi * var).log() + half_sq_dist / var


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    result[(q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)] = math.inf
    return result


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    a, b = p.concentration, p.rate
    var = q.scale.pow(2)
    neg_entropy = -a + b.log() - a.lgamma() + (a - 1) * a.digamma()
    second = 0.5 * (a.pow(2) + a) / b.pow(2) - q.loc * a / b + 0.5 * q.loc.pow(2)  # E[(x - loc)^2] / 2
    return neg_entropy + 0.5 * (2 * math.pi * var).log() + second / var


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    mean_log = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width  # E_p[log x]
    mean_log1m = (_x_log_x(1 - p.low) - _x_log_x(1 - p.high) - width) / width  # E_p[log(1 - x)]
    log_beta = q.concentration1.lgamma() + q.concentration0.lgamma() - (q.concentration1 + q.concentration0).lgamma()
    result = -width.log() + log_beta - (q.concentration1 - 1) * mean_log - (q.concentration0 - 1) * mean_log1m
    result[(p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)] = math.inf
    return result


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    mean_log = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = (-width.log() + _mean_log_gamma_density_terms(q) - (q.concentration - 1) * mean_log
              + q.rate * (p.high + p.low) / 2)
    result[p.low < q.support.lower_bound] = math.inf
    return result


@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Normal, Beta)
@register_kl(Normal, Gamma)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


# ---- with the families of other modules, when present ----

def _kl_beta_exponential(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    return -p.entropy() - q.rate.log() + q.rate * mean


def _kl_exponential_gamma(p, q):
    # -H(Exp(rate)) = log rate - 1; E[log x] = -log rate - Euler; E[x] = 1 / rate
    ratio = q.rate / p.rate
    return -q.concentration * ratio.log() + ratio + q.concentration.lgamma() + q.concentration * _EULER - (1 + _EULER)


def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


def _kl_gamma_gumbel(p, q):
    a, b = p.concentration, p.rate
    prod = b * q.scale
    loc_ratio = q.loc / q.scale
    neg_entropy_part = (a - 1) * a.digamma() - a.lgamma() - a
    # E[exp(-(x - loc)/scale)] = e^(loc/scale) (1 + 1/(rate scale))^(-a)
    return neg_entropy_part + prod.log() + a / prod + loc_ratio.exp() * (1 + prod.reciprocal()).pow(-a) - loc_ratio


def _kl_pareto_gamma(p, q):
    mean_log = p.scale.log() + p.alpha.reciprocal()  # E_p[log x]
    result = (p.alpha.log() - mean_log + _mean_log_gamma_density_terms(q) + (1 - q.concentration) * mean_log
              + q.rate * p.alpha * p.scale / (p.alpha - 1) - 1)
    result[p.alpha <= 1] = math.inf  # p has no mean
    return result


def _kl_beta_continuous_bernoulli(p, q):
    # log q(x) = x logits + log(1 - probs) + log C(probs), linear in x: E_p needs p's mean only
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


def _kl_loc_infinity(p, q):
    return _infinite_like(p.loc)


def _kl_scale_infinity(p, q):
    return _infinite_like(p.scale)


def _kl_rate_infinity(p, q):
    return _infinite_like(p.rate)


def _optional(module: str, name: str):
    try:
        return getattr(importlib.import_module(f".{module}", __package__), name)
    except (ImportError, AttributeError):
        return None


def _register_optional() -> None:
    exponential = _optional("exponential", "Exponential")
    gumbel = _optional("gumbel", "Gumbel")
    laplace = _optional("laplace", "Laplace")
    pareto = _optional("pareto", "Pareto")
    cont_bernoulli = _optional("continuous_bernoulli", "ContinuousBernoulli")
    pairs = [
        (Beta, exponential, _kl_beta_exponential), (exponential, Gamma, _kl_exponential_gamma),
        (Gamma, exponential, _kl_gamma_exponential), (Gamma, gumbel, _kl_gamma_gumbel),
        (pareto, Gamma, _kl_pareto_gamma), (Beta, pareto, _kl_beta_infinity), (Gamma, pareto, _kl_gamma_infinity),
        (exponential, Beta, _kl_rate_infinity), (gumbel, Beta, _kl_loc_infinity), (gumbel, Gamma, _kl_loc_infinity),
        (laplace, Beta, _kl_loc_infinity), (laplace, Gamma, _kl_loc_infinity), (pareto, Beta, _kl_scale_infinity),
        (Beta, cont_bernoulli, _kl_beta_continuous_bernoulli), (Gamma, cont_bernoulli, _kl_gamma_infinity),
    ]
    for type_p, type_q, fun in pairs:
        if type_p is not None and type_q is not None:
            register_kl(type_p, type_q)(fun)


_register_optional()
