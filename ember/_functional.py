"""Functions torch writes in Python too: shape helpers and compositions of ops."""
from __future__ import annotations

import builtins

from . import _C
from ._C import Size


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of the given shapes broadcast to (RuntimeError if none)."""
    sizes = [(s,) if isinstance(s, builtins.int) else tuple(s) for s in shapes]
    ndim = builtins.max((len(s) for s in sizes), default=0)
    out = [1] * ndim
    for s in sizes:
        for i, n in enumerate(s):
            if not isinstance(n, builtins.int):
                raise TypeError(f"broadcast_shapes(): expected ints in shapes, got {type(n).__name__}")
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(s)}")
            k = ndim - len(s) + i
            if out[k] == 1:
                out[k] = n
            elif n != 1 and n != out[k]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape. "
                                   f"Mismatch is between arg 0 and arg with shape {list(s)}.")
    return Size(out)


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common broadcast shape; a tensor that already
    has that shape comes back itself, as in torch (so a leaf stays a leaf)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def _atleast(rank, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        if t.dim() == 0:
            t = t.reshape((1,) * rank)
        elif t.dim() == 1 and rank >= 2:
            t = t.unsqueeze(0)
        if t.dim() == 2 and rank == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    """The tensors with at least one dim (0-dim ones become shape (1,))."""
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """The tensors with at least two dims (1-D ones become a row)."""
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """The tensors with at least three dims (2-D ones gain a trailing dim)."""
    return _atleast(3, tensors)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (bool tensors: logical xor)."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    x = input
    if prepend is not None or append is not None:
        parts = [p if p.dim() else p.expand_as(x.narrow(dim, 0, 1)) for p in (prepend, x, append) if p is not None]
        x = _C.cat(parts, dim)
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi, lo = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = _C.logical_xor(hi, lo) if x.dtype == _C.bool else hi - lo
    return x


def where(self, condition, y):
    """Tensor.where(condition, y): self where condition is True, else y."""
    return _C.where(condition, self, y)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal in place; returns self. More than 2 dims must all be equal;
    with wrap, a tall matrix starts the diagonal again after every cols + 1 rows."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2:
        if len(set(self.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        self.as_strided((self.shape[0],), (builtins.sum(self.stride()),), self.storage_offset()).fill_(fill_value)
        return self
    rows, cols = self.shape
    starts = range(0, rows, cols + 1) if wrap and cols > 0 else [0]
    for start in starts:
        self.narrow(0, start, rows - start).diagonal().fill_(fill_value)
    return self
