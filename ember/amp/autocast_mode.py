"""autocast: records and restores the autocast state per device type; ember computes
in the inputs' dtypes whatever the state (see ember.amp)."""
from __future__ import annotations

import copy
import functools
import warnings

from .. import _C

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_enabled = {}
_dtype = {"cpu": _C.bfloat16, "hpu": _C.bfloat16, "xla": _C.bfloat16, "maia": _C.bfloat16}  # the rest: float16, as in torch


def _device_type(device_type):
    kind = device_type.split(":")[0]
    if kind not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return kind


_AUTOCAST_TYPES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "ipu", "maia", "privateuseone")


_cache = {"enabled": True, "nesting": 0}  # torch's cache flag and count of active autocast blocks


def is_autocast_cache_enabled() -> bool:
    """Whether autocast blocks cache their casts (the flag only: ember casts nothing)."""
    return _cache["enabled"]


def set_autocast_cache_enabled(enabled) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _cache["enabled"] = enabled


def autocast_increment_nesting() -> int:
    """One more active autocast block; returns how many there are."""
    _cache["nesting"] += 1
    return _cache["nesting"]


def autocast_decrement_nesting() -> int:
    """One fewer active autocast block; returns how many there are."""
    _cache["nesting"] -= 1
    return _cache["nesting"]


def is_autocast_available(device_type: str) -> bool:
    """Whether device_type is one autocast knows (as torch answers: not whether the
    device exists)."""
    return _device_type(device_type) in _AUTOCAST_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled autocast block is active for device_type ('cuda' when omitted,
    as in torch)."""
    return _enabled.get(_device_type(device_type or "cuda"), False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    if enabled is None:  # the old form set_autocast_enabled(enabled), for cuda
        device_type, enabled = "cuda", device_type
    _enabled[_device_type(device_type)] = bool(enabled)


def get_autocast_dtype(device_type: str):
    """The dtype autocast would compute in for device_type."""
    return _dtype.get(_device_type(device_type), _C.float16)


def set_autocast_dtype(device_type: str, dtype) -> None:
    _dtype[_device_type(device_type)] = dtype


class autocast:
    """Context manager and decorator: `with ember.autocast("cpu"): ...` (see ember.amp:
    the state is kept, dtypes are not changed).

    >>> with ember.autocast("cpu", enabled=False):
    ...     (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
    ember.float32
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        enabled = bool(enabled)
        if enabled and device_type == "cuda":  # torch tests the string: "cuda:0" stays enabled
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
            enabled = False
        elif enabled and self.device == "cpu" and self.fast_dtype not in (_C.bfloat16, _C.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of ember.bfloat16, ember.float16 currently.")
            enabled = False
        elif enabled and device_type in _AUTOCAST_TYPES and device_type != "cpu":
            warnings.warn(f"User provided device_type of '{self.device}', but {self.device} is not available. "
                          "Disabling autocast.")
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self._saved = (is_autocast_enabled(self.device), get_autocast_dtype(self.device), is_autocast_cache_enabled())
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        set_autocast_cache_enabled(bool(self._cache_enabled))
        autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc, tb):
        enabled, dtype, cache_enabled = self._saved
        autocast_decrement_nesting()
        set_autocast_enabled(self.device, enabled)
        set_autocast_dtype(self.device, dtype)
        set_autocast_cache_enabled(cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def with_autocast(*args, **kwargs):
            with copy.copy(self):  # a copy per call: recursive calls each restore their own state
                return func(*args, **kwargs)

        return with_autocast


def custom_fwd(fwd=None, *, device_type="cpu", cast_inputs=None):
    """Decorator for a custom autograd Function's forward; ember casts nothing, so it
    returns forward unchanged."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type="cpu"):
    """Decorator for a custom autograd Function's backward; returns it unchanged."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
