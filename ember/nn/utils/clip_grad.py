"""Gradient clipping: by total norm, or elementwise by value."""
from __future__ import annotations

import math

from ... import _C

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _tensors(parameters) -> list:
    return [parameters] if isinstance(parameters, _C.TensorBase) else list(parameters)


def _no_grad():
    from ...autograd.grad_mode import no_grad

    return no_grad()


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None):
    """The norm of the norms of tensors (as if they were concatenated into one vector)."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _C.tensor(0.0)
    with _no_grad():
        if norm_type == math.inf:
            norms = [t.abs().max() for t in tensors]
            total = norms[0] if len(norms) == 1 else _C.stack(norms).max()
        else:
            norms = [_vector_norm(t, norm_type) for t in tensors]
            total = _vector_norm(_C.stack(norms), norm_type)
    if error_if_nonfinite and (total.isnan().item() or total.isinf().item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


def _vector_norm(t, p: float):
    from ... import linalg

    return linalg.vector_norm(t, p)


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scales the gradients by max_norm / (total_norm + 1e-6) when that is below 1."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with _no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None):
    """Scales the gradients of parameters in place so that their total norm (as one vector)
    is at most max_norm; returns the total norm before clipping.

    >>> p = ember.nn.Parameter(ember.zeros(2)); p.grad = ember.tensor([3., 4.])
    >>> ember.nn.utils.clip_grad_norm_([p], 1.0).item()
    5.0
    """
    parameters = _tensors(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if grads:
        clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamps every gradient of parameters into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with _no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
