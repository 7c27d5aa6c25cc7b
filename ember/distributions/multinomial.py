"""The multinomial distribution: counts of total_count draws from a categorical."""
from __future__ import annotations

import math

from .. import Size, arange, lgamma, ones_like, zeros
from ..nn.functional import softplus
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all, probs_to_logits

__all__ = ["Multinomial"]


def _binomial_log_prob(n: int, logits, k):
    """log P(k successes of n) for Binomial(n, sigmoid(logits)), stable for large |logits|."""
    log_binom = math.lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)
    return log_binom + k * logits - n * softplus(logits)


class Multinomial(Distribution):
    """Multinomial(total_count=1, probs=None, logits=None): total_count (one int for the whole
    batch) draws from Categorical(probs or logits), counted per category.

    >>> Multinomial(10, ember.tensor([1.0, 1.0])).mean.tolist()
    [5.0, 5.0]
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        # (total_count,) + sample_shape + batch_shape category indices -> counts per category
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        order = list(range(1, samples.dim())) + [0]
        samples = samples.permute(*order)
        counts = zeros(self._extended_shape(sample_shape), dtype=samples.dtype, device=samples.device)
        counts.scatter_add_(-1, samples, ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        """n H(categorical) - log n! + sum over categories of E[log x_i!], x_i ~ Binomial(n, p_i)."""
        n = self.total_count
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        logits = probs_to_logits(self._categorical.probs, is_binary=True)  # (..., K), each category's log-odds
        support = arange(1, n + 1, dtype=logits.dtype, device=logits.device).view((-1,) + (1,) * logits.dim())
        binomial_probs = _binomial_log_prob(n, logits, support).exp()
        weights = lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -math.inf)] = 0  # 0 * log 0 = 0
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
