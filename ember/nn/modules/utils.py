"""Argument helpers the layers share (and user code imports, as from torch.nn.modules.utils):
an int or an iterable as an n-tuple."""
from __future__ import annotations

import collections.abc
from itertools import repeat

__all__ = ["_single", "_pair", "_triple", "_quadruple", "_ntuple", "_reverse_repeat_tuple"]


def _ntuple(n: int, name: str = "parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """(a, b) -> (b, b, a, a) for n = 2: per-dim values in F.pad's order (last dim first),
    each repeated n times.

    >>> _reverse_repeat_tuple((1, 2), 2)
    (2, 2, 1, 1)
    """
    return tuple(x for x in reversed(t) for _ in range(n))
