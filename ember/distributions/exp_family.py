"""ExponentialFamily: distributions with density p(x) = h(x) exp(<theta, t(x)> - F(theta)),
whose entropy and same-family KL divergence follow from the log-normalizer F by autograd."""
from __future__ import annotations

from .. import autograd
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A subclass gives its natural parameters theta (``_natural_params``), the
    log-normalizer F (``_log_normalizer(*theta)``) and E[log h(x)] (``_mean_carrier_measure``)."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[log h(x)] (the Bregman divergence form)."""
        result = -self._mean_carrier_measure
        theta = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*theta)
        grads = autograd.grad(log_normalizer.sum(), theta, create_graph=True)
        result = result + log_normalizer
        for p, g in zip(theta, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
