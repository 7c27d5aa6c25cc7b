"""ember.utils: data loading (ember.utils.data), DLPack exchange (ember.utils.dlpack), hook
handles (ember.utils.hooks), TensorBoard logging (ember.utils.tensorboard) and the safetensors
format (ember.utils.safetensors), imported when first used."""
from __future__ import annotations

import importlib as _importlib

_SUBMODULES = ("data", "dlpack", "hooks", "safetensors", "tensorboard")


def __getattr__(name):
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
