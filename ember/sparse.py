"""torch.sparse's functions over ember's sparse COO tensors (ember/_sparse.py).

>>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
>>> ember.sparse.mm(s, ember.eye(2)).tolist()
[[0.0, 2.0], [3.0, 0.0]]
"""
from __future__ import annotations

import ember
from . import _sparse

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sum"]


def mm(mat1, mat2, reduce="sum"):
    """mat1 @ mat2 where mat1 (or both) is sparse; the gradient of a sparse operand is sparse,
    with its pattern. Only reduce="sum" is supported."""
    if reduce != "sum":
        raise NotImplementedError(f"ember.sparse.mm: reduce={reduce!r} is not supported")
    return ember.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse."""
    return _sparse.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's values: a dense 0-dim tensor over every dim, a sparse
    tensor while sparse dims remain."""
    return _sparse.sum(input, dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """Softmax along dim over the specified entries only (unspecified ones count as -inf)."""
    return _sparse.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """log of softmax along dim over the specified entries only."""
    return _sparse.log_softmax(input, dim, dtype)
