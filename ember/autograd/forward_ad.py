"""ember.autograd.forward_ad: forward-mode automatic differentiation, as torch's.

Inside ``with dual_level():``, ``make_dual(x, t)`` gives a tensor that carries the tangent
t beside its value; every op on such tensors computes its outputs' tangents (J·t) as it
runs, and ``unpack_dual(y)`` reads them back. The tangents are carried by the native op
layer (Note [Forward-mode AD] in csrc/autograd/forward.h); one level exists at a time."""
from __future__ import annotations

from collections import namedtuple

from .. import _C

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_current_level = -1


def enter_dual_level():
    """Enters a new forward grad level and returns its index (0: levels do not nest)."""
    global _current_level
    level = _C._enter_dual_level()
    _current_level = level
    return level


def exit_dual_level(*, level=None):
    """Exits the level (the current one by default); every tangent of it is freed."""
    global _current_level
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _C._exit_dual_level(level)
    _current_level = level - 1


def _check_level(level, what):
    if level is None:
        level = _current_level
    if level < 0:
        if what == "make_dual":
            raise RuntimeError("To create a dual Tensor, use the dual_level context manager or enter_dual_level()"
                               " first.")
        return None
    if level != _current_level:
        raise RuntimeError(f"Invalid level given to _{what}")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient at ``level``."""
    from .. import Tensor

    if level is None and _current_level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_level(level, "make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): expected tensor and tangent to be Tensors")
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    return _C._make_dual(tensor, tangent)


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What unpack_dual returns: the primal (a view), and the tangent or None."


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor at ``level``; tangent is None when it has none."""
    from .. import Tensor

    if level is None and _current_level < 0:
        return UnpackedDualTensor(tensor, None)
    if _check_level(level, "unpack_dual") is None or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    primal, tangent = _C._unpack_dual(tensor)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager of a forward AD level: ``with dual_level(): ...``. The tangents made
    inside are freed at its end."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
