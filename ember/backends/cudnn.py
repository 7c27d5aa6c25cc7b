"""ember.backends.cudnn: assignable flags with torch's defaults; there is no cuDNN."""
from __future__ import annotations

import contextlib

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None


def is_acceptable(tensor) -> bool:
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Sets the flags within the block and restores them after."""
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    saved = {name: globals()[name] for name in names}
    globals().update(zip(names, (enabled, benchmark, deterministic, allow_tf32)))
    try:
        yield
    finally:
        globals().update(saved)
