"""cosine_similarity, pairwise_distance and pdist, compositions of norm and elementwise
ops (torch's eps semantics: pairwise_distance adds eps to the difference, cosine_similarity
clamps each norm to eps where autograd does not see the clamp)."""
from __future__ import annotations

from ... import _C
from ..._functional import broadcast_tensors
from ._utils import _legacy_name


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
    i, j = _C.triu_indices(n, n, 1)
    return (input.index_select(0, i) - input.index_select(0, j)).norm(p, 1)
