"""The LKJ distribution over lower Cholesky factors of correlation matrices."""
from __future__ import annotations

import math

from .. import Size, arange, cat, finfo, lgamma, mvlgamma, randn
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.0): L with L L^T ~ LKJ(concentration), the density of
    the correlation matrix proportional to det(L L^T)^(concentration - 1); concentration = 1
    is uniform over correlation matrices. Sampling is the onion method (Lewandowski,
    Kurowicka & Joe, 2009), whose row norms are Beta draws.

    >>> LKJCholesky(3, 0.5).log_prob(ember.eye(3)).shape
    ember.Size([])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # row i (i >= 1) has squared norm of its off-diagonal part ~ Beta(i / 2, marginal - (i - 1) / 2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        # built now, as torch does: a bad concentration fails first in Beta's own validation.
        # Note [LKJ onion concentrations]: torch 2.13 draws row i's norm from Beta(i - 1/2, ...),
        # which for dim >= 3 widens the correlations of rows 2.. beyond the LKJ law its own
        # log_prob describes; ember draws Beta(i / 2, ...), the onion method's (Lewandowski,
        # Kurowicka & Joe 2009, sec. 3.2), whose every correlation has the LKJ marginal
        self._beta = Beta(0.5 * offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)  # (S, B, dim, 1): squared row norms
        # directions uniform on the sphere of each row's strictly lower part
        u_normal = randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)  # row 0 has no off-diagonal part (and 0 / 0 above)
        w = y.sqrt() * u_hypersphere
        diag_elems = (1 - w.pow(2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diag_elems.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # density of L: prod_i L_ii^(dim - i + 2 (concentration - 1)), i = 2 .. dim, normalised
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = lgamma(alpha) * dm1
        numerator = mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
