"""The padding layers: F.pad with a fixed mode and padding, as in torch.nn.modules.padding.
An int padding pads every side of the last 1, 2 or 3 dims by that much; a tuple is
(left, right[, top, bottom[, front, back]]), taken as given."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _padding(padding, n: int) -> tuple:
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * (2 * n)


class _PadNd(Module):
    """F.pad(input, self.padding, mode) for an n-d spatial padding."""

    __constants__ = ["padding"]
    mode = "constant"
    n = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _padding(padding, self.n)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (self.n + 1, self.n + 2):
            raise ValueError(f"expected {self.n + 1}D or {self.n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class _ConstantPadNd(Module):
    """F.pad(input, self.padding, 'constant', self.value)."""

    __constants__ = ["padding", "value"]
    n = 1

    def __init__(self, padding, value: float) -> None:
        super().__init__()
        self.padding = _padding(padding, self.n)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class CircularPad1d(_CircularPadNd):
    """Wraps (C, W) or (N, C, W) around its last dim.

    >>> ember.nn.CircularPad1d(1)(ember.arange(3.).view(1, 3)).tolist()
    [[2.0, 0.0, 1.0, 2.0, 0.0]]
    """
    n = 1


class CircularPad2d(_CircularPadNd):
    """Wraps (C, H, W) or (N, C, H, W) around its last two dims."""
    n = 2


class CircularPad3d(_CircularPadNd):
    """Wraps (C, D, H, W) or (N, C, D, H, W) around its last three dims."""
    n = 3


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with value.

    >>> ember.nn.ConstantPad1d((1, 0), 5.)(ember.zeros(1, 2)).tolist()
    [[5.0, 0.0, 0.0]]
    """
    n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with value."""
    n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with value."""
    n = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros.

    >>> ember.nn.ZeroPad2d(1)(ember.ones(1, 1, 1)).shape
    ember.Size([1, 3, 3])
    """

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_ReflectionPadNd):
    """Mirrors (C, W) or (N, C, W) at its last dim's edges, without repeating the edge.

    >>> ember.nn.ReflectionPad1d(1)(ember.arange(3.).view(1, 3)).tolist()
    [[1.0, 0.0, 1.0, 2.0, 1.0]]
    """
    n = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Mirrors the last two dims at their edges."""
    n = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Mirrors the last three dims at their edges."""
    n = 3


class ReplicationPad1d(_ReplicationPadNd):
    """Repeats the last dim's edge values.

    >>> ember.nn.ReplicationPad1d(1)(ember.arange(3.).view(1, 3)).tolist()
    [[0.0, 0.0, 1.0, 2.0, 2.0]]
    """
    n = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Repeats the last two dims' edge values."""
    n = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Repeats the last three dims' edge values."""
    n = 3
