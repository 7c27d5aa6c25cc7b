"""ember.backends: the flags torch.backends offers, for scripts that set them. ember
computes on the CPU with its own kernels, so the flags are recorded and read back but
change nothing (there is no TF32, cuDNN or MPS here).

>>> ember.backends.cudnn.benchmark = True
>>> ember.backends.cudnn.benchmark
True
"""
from __future__ import annotations

import warnings as _warnings

_PRECISIONS = ("highest", "high", "medium")
_state = {"float32_matmul_precision": "highest", "deterministic": False, "deterministic_warn_only": False}


def set_float32_matmul_precision(precision: str) -> None:
    """Records the float32 matmul precision ('highest', 'high' or 'medium'); ember always
    computes float32 matmuls in full float32."""
    if precision not in _PRECISIONS:
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                       "set_float32_matmul_precision call has no effect.")
        return
    _state["float32_matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["float32_matmul_precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Records the flag; ember's kernels give the same results run to run either way."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    _state["deterministic"] = mode
    _state["deterministic_warn_only"] = bool(warn_only) and mode


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["deterministic_warn_only"]


from . import cuda, cudnn, mkldnn, mps, openmp  # noqa: E402  (tiny modules; torch imports them too)
