"""finfo and iinfo: the numeric limits of a dtype, as torch reports them."""
from __future__ import annotations

from . import _C

# bits, eps, max, smallest normal, resolution: IEEE facts of each format
_FLOAT = {
    "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
    "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 0.01),
    "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-06),
    "float64": (64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 1e-15),
}


def _name(dtype) -> str:
    return repr(dtype).split(".", 1)[1]


class finfo:
    """finfo(dtype=None): limits of a floating point dtype (default: the default dtype)."""

    def __init__(self, type=None):
        dtype = _C.get_default_dtype() if type is None else type
        if not isinstance(dtype, _C.dtype) or not dtype.is_floating_point:
            raise TypeError(f"finfo(): argument 'type' must be a floating point dtype, got {dtype!r}")
        self.dtype = _name(dtype)
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOAT[self.dtype]
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:e}, max={self.max:e}, eps={self.eps:e}, "
                f"smallest_normal={self.tiny:e}, tiny={self.tiny:e}, dtype={self.dtype})")


class iinfo:
    """iinfo(dtype): limits of an integer dtype."""

    def __init__(self, type):
        if not isinstance(type, _C.dtype) or type.is_floating_point or type is _C.bool:
            raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, got {type!r}")
        self.dtype = _name(type)
        self.bits = type.itemsize * 8
        if type.is_signed:
            self.min, self.max = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        else:
            self.min, self.max = 0, (1 << self.bits) - 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
