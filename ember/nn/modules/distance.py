"""PairwiseDistance and CosineSimilarity: the F functions with their arguments held."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dim (the norm's order is the attribute norm).

    >>> ember.nn.PairwiseDistance(eps=0.)(ember.tensor([[0., 0.]]), ember.tensor([[3., 4.]])).tolist()
    [5.0]
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along dim, each norm at least eps.

    >>> ember.nn.CosineSimilarity()(ember.tensor([[1., 0.]]), ember.tensor([[2., 0.]])).tolist()
    [1.0]
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
