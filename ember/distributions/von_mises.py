"""The von Mises distribution: a normal distribution wrapped onto the circle."""
from __future__ import annotations

import math

from .. import Size, empty, float64, rand, where, zeros_like
from .. import bool as bool_
from ..autograd.grad_mode import no_grad
from ..special import i0e, i1e
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x):
    """log I_0(x) for x >= 0, through the exponentially scaled i0e (no overflow)."""
    return i0e(x).log() + x


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best & Fisher (1979): propose from a wrapped Cauchy, accept by comparing against the
    von Mises density; every element draws until it is accepted (vectorised rounds)."""
    done = zeros_like(x, dtype=bool_)
    while not bool(done.all()):
        u1, u2, u3 = rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration): density exp(k cos(x - loc)) / (2 pi I_0(k)) on the
    circle; samples lie in [-pi, pi). mean and variance are the circular ones.

    >>> VonMises(ember.tensor([0.0]), ember.tensor([1.0])).sample((5,)).shape
    ember.Size([5, 1])
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _loc(self):
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho.pow(2)) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)  # its expansion near 0

    def sample(self, sample_shape=Size()):
        """Drawn in float64 (in float32 the loop can stall for tiny concentrations)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = empty(shape, dtype=float64, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """1 - I_1(k) / I_0(k)."""
        return 1 - i1e(self.concentration) / i0e(self.concentration)
