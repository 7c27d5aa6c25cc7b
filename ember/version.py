"""ember.version: what torch.version tells about a build. cuda is the CUDA runtime version
ember._C_cuda was built against ("13.0"), None when it was built without CUDA (or no driver
lets it load); ember has no ROCm or XPU build (hip, rocm, xpu are None) and no debug build."""
from __future__ import annotations

from . import __version__

hip = None
rocm = None
xpu = None
debug = False


def __getattr__(name):
    if name == "cuda":  # loading the CUDA extension only when asked
        from . import cuda as _cuda

        lib = _cuda._load() if _cuda._is_compiled() else None
        value = None if lib is None else f"{lib._runtime_version() // 1000}.{lib._runtime_version() % 1000 // 10}"
        globals()["cuda"] = value
        return value
    raise AttributeError(f"module 'ember.version' has no attribute '{name}'")


__all__ = ["__version__", "cuda", "debug", "hip", "rocm", "xpu"]
