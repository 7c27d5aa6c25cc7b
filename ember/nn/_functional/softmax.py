"""softmax, log_softmax and softmin: the native softmax ops, with torch.nn.functional's
signatures (the deprecated implicit dim included)."""
from __future__ import annotations

import warnings
from typing import Optional

from ... import _C


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (softmax of the converted input with dtype=).

    >>> ember.nn.functional.softmax(ember.tensor([0., 0.]), 0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None):
    """log(softmax(x)) along dim, computed without overflow."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _C.log_softmax(input, dim, dtype)


def softmin(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None):
    """softmax(-x) along dim."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _C.softmax(_C.neg(input) if dtype is None else _C.neg(input.to(dtype)), dim)
