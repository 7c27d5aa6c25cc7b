"""autocast: torch's autocast context manager over ember's native, thread-local autocast
state (csrc/core/autocast.h). While autocast('cpu') is enabled, the ops torch lists cast
their floating arguments (Note [Autocast] in csrc/python/autocast.cpp)."""
from __future__ import annotations

import copy
import functools
import warnings

from .. import _C

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")  # core/autocast.h's order
_INDEX = {name: i for i, name in enumerate(_DEVICE_TYPES)}


def _device_type(device_type):
    kind = device_type.split(":")[0]
    if kind not in _INDEX:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return kind


_AUTOCAST_TYPES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "ipu", "maia", "privateuseone")


def is_autocast_cache_enabled() -> bool:
    """Whether autocast blocks cache the casts of float32 leaves that require grad (this thread)."""
    return _C._autocast_cache_enabled()


def set_autocast_cache_enabled(enabled) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _C._autocast_set_cache_enabled(enabled)


def autocast_increment_nesting() -> int:
    """One more active autocast block in this thread; returns how many there are."""
    return _C._autocast_increment_nesting()


def autocast_decrement_nesting() -> int:
    """One fewer active autocast block in this thread; returns how many there are."""
    return _C._autocast_decrement_nesting()


def is_autocast_available(device_type: str) -> bool:
    """Whether device_type is one autocast knows (as torch answers: not whether the
    device exists)."""
    return _device_type(device_type) in _AUTOCAST_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled autocast block is active for device_type in this thread ('cuda'
    when omitted, as in torch)."""
    return _C._autocast_is_enabled(_INDEX[_device_type(device_type or "cuda")])


def set_autocast_enabled(device_type, enabled=None) -> None:
    if enabled is None:  # the old form set_autocast_enabled(enabled), for cuda
        device_type, enabled = "cuda", device_type
    _C._autocast_set_enabled(_INDEX[_device_type(device_type)], bool(enabled))


def get_autocast_dtype(device_type: str):
    """The dtype autocast computes in for device_type (this thread)."""
    return _C._autocast_get_dtype(_INDEX[_device_type(device_type)])


def set_autocast_dtype(device_type: str, dtype) -> None:
    _C._autocast_set_dtype(_INDEX[_device_type(device_type)], dtype)


class autocast:
    """Context manager and decorator: inside `with ember.autocast("cpu"):` the ops torch
    lists compute in bfloat16 (or dtype=float16), float32 or their widest input dtype.

    >>> with ember.autocast("cpu"):
    ...     (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
    ember.bfloat16
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
        if autocast_decrement_nesting() == 0:  # the outermost block drops the cached casts
            _C._autocast_clear_cache()
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


def _cast_inputs(value, dtype):
    if isinstance(value, _C.TensorBase):
        return value.to(dtype) if value.is_floating_point() and value.dtype != _C.float64 else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type="cpu", cast_inputs=None):
    """Decorator for a custom autograd Function's forward, as torch's: with cast_inputs,
    inside an enabled autocast block the floating tensor arguments are cast to it and
    forward runs with autocast off; otherwise forward runs in the caller's state, which
    custom_bwd then gives backward."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_inputs(args, cast_inputs), **_cast_inputs(kwargs, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type="cpu"):
    """Decorator for a custom autograd Function's backward: it runs in the autocast state
    its forward (decorated with custom_fwd) ran in."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)

    return decorate_bwd
