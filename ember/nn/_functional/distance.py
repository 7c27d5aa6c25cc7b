"""cosine_similarity, pairwise_distance and pdist, compositions of norm and elementwise
ops (torch's eps semantics: pairwise_distance adds eps to the difference, cosine_similarity
clamps each norm to eps where autograd does not see the clamp)."""
from __future__ import annotations

from ... import _C
from ..._functional import broadcast_tensors
from ._utils import _legacy_name
from ... import _autocast


def _floating(x1, x2):
    """x1 and x2 in their common dtype, integers and bools promoted to the default float."""
    dtype = _C.result_type(x1, x2)
    if not dtype.is_floating_point:
        dtype = _C.get_default_dtype()
    return x1.to(dtype), x2.to(dtype)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The p-norm of x1 - x2 + eps over the last dim (the inputs broadcast).

    >>> ember.nn.functional.pairwise_distance(ember.tensor([[0., 0.]]), ember.tensor([[3., 4.]]), eps=0.).tolist()
    [5.0]
    """
    x1, x2 = _floating(x1, x2)
    last = max(x1.dim(), x2.dim()) - 1
    diff = x1 - x2 + eps
    if last < 0:
        return diff.abs() if p != 0 else (diff != 0).to(diff.dtype)
    return diff.norm(p, last, keepdim=keepdim)


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps))) along dim (the inputs
    broadcast); the clamps are invisible to the gradient, as torch's.

    >>> ember.nn.functional.cosine_similarity(ember.tensor([[1., 0.]]), ember.tensor([[1., 1.]])).item()
    0.7071067690849304
    """
    dtype = _C.result_type(x1, x2)
    if not dtype.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_legacy_name(dtype)}")
    x1, x2 = broadcast_tensors(x1.to(dtype), x2.to(dtype))
    n1 = x1.norm(2, dim, keepdim=True)
    n2 = x2.norm(2, dim, keepdim=True)
    n1 = n1 + (n1.clamp_min(eps) - n1).detach()
    n2 = n2 + (n2.clamp_min(eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pdist(input, p: float = 2.0):
    """The p-norm distances between the rows of a 2-D input, for each pair i < j in order.

    >>> ember.nn.functional.pdist(ember.tensor([[0., 0.], [3., 4.], [0., 1.]])).tolist()
    [5.0, 1.0, 4.242640495300293]
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.size(0)
    i, j = _C.triu_indices(n, n, 1, device=input.device)
    return (input.index_select(0, i) - input.index_select(0, j)).norm(p, 1)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


@_autocast.fp32
def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between each row of x1 (*, P, M) and each row of x2 (*, R, M),
    (*, P, R), the batch dims broadcast. For p = 2 with more than 25 rows (or
    compute_mode='use_mm_for_euclid_dist') it is sqrt(|a|^2 + |b|^2 - 2 a.b) through one
    matmul, as torch's, whose gradient is 0 where the distance is.

    >>> ember.cdist(ember.tensor([[0., 0.]]), ember.tensor([[3., 4.], [0., 1.]])).tolist()
    [[5.0, 1.0]]
    """
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_legacy_name(x.dtype)}")
    if x1.size(-1) != x2.size(-1):
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.size(-1)} X2: {x2.size(-1)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_legacy_name(x1.dtype)} but found {_legacy_name(x2.dtype)}")
    mode = _CDIST_MODES[compute_mode]
    if p == 2 and (mode == 1 or (mode == 0 and (x1.size(-2) > 25 or x2.size(-2) > 25))):
        sq = ((x1 * x1).sum(-1, keepdim=True) + (x2 * x2).sum(-1).unsqueeze(-2)
              - 2 * x1.matmul(x2.transpose(-2, -1))).clamp_min(0)
        positive = sq > 0
        # sqrt of 1 where the distance is 0: its gradient there is 0 instead of inf * 0
        return _C.where(positive, _C.where(positive, sq, _C.ones_like(sq)).sqrt(), _C.zeros_like(sq))
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, -1)
