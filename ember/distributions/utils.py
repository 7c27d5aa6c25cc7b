"""Helpers shared by the distributions: broadcasting parameters, probabilities <-> logits,
lazily computed attributes."""
from __future__ import annotations

import functools
from numbers import Number

from .. import _C, Tensor, broadcast_tensors, finfo, get_default_dtype, tensor
from ..autograd.grad_mode import enable_grad

__all__ = [
    "broadcast_all", "clamp_probs", "euler_constant", "lazy_property", "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values):
    """The values broadcast to one shape, as tensors. Numbers become tensors of the first
    tensor argument's dtype and device (the defaults when there is none).

    >>> [v.shape for v in broadcast_all(ember.zeros(2, 1), 1.0, ember.zeros(3))]
    [ember.Size([2, 3]), ember.Size([2, 3]), ember.Size([2, 3])]
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if all(isinstance(v, Tensor) for v in values):
        return broadcast_tensors(*values)
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dtype, device = (get_default_dtype(), None) if first is None else (first.dtype, first.device)
    return broadcast_tensors(*(v if isinstance(v, Tensor) else tensor(v, dtype=dtype, device=device) for v in values))


def clamp_probs(probs):
    """probs clamped to [eps, 1 - eps] of its dtype, so that logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Log-probabilities of a categorical (or, with is_binary, log-odds of a Bernoulli)
    from probabilities, clamped away from 0 and 1."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from unnormalised log-probabilities (softmax over the last dim), or
    with is_binary from log-odds (sigmoid)."""
    if is_binary:
        return logits.sigmoid()
    return (logits - logits.logsumexp(-1, keepdim=True)).exp()


class lazy_property:
    """A cached attribute: computed (with grad enabled, so that it can be differentiated
    even when first read under no_grad) on first access, then stored on the instance,
    which hides this descriptor from then on."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def expand_probs_or_logits(dist, new, shape) -> None:
    """Gives `new` (dist.expand's instance) dist's probs and/or logits, whichever it holds
    (given or computed), expanded to shape, and `_param` (logits when it holds both)."""
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(shape))
            new._param = getattr(new, name)


def _sum_rightmost(value, dim: int):
    """value summed over its dim rightmost dims."""
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1) if dim > 0 else value


def _standard_normal(shape, dtype, device):
    """A tensor of the given shape, dtype and device filled from N(0, 1) with the default generator."""
    return _C.empty(shape, dtype=dtype, device=device).normal_()


def _tril_mask(n: int, diag: int, device):
    """(n, n) bool: True on and below diagonal diag."""
    from .. import arange
    idx = arange(n, device=device)
    return idx < idx.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The entries of the (..., n, n) matrices on and below diagonal diag, row by row, as (..., k)."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of tril_matrix_to_vec: (..., k) -> (..., n, n), zero above diagonal diag."""
    from .. import finfo
    # k = n (n + 1) / 2 + diag n - |diag| (diag + 1) / 2 ... solved for n
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if not round(n) - n < finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
