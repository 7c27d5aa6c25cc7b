"""ember.cuda: what torch.cuda answers on a machine without CUDA. ember runs on the CPU
only, so is_available() is False and device_count() 0; seeding and cache calls are
no-ops (as in CPU torch), and the calls that need a device raise AssertionError, as CPU
torch does.

>>> ember.cuda.is_available(), ember.cuda.device_count()
(False, 0)
"""
from __future__ import annotations

import importlib as _importlib

_NO_CUDA = "ember is not compiled with CUDA enabled: it runs on the CPU only"


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def manual_seed(seed) -> None:
    """A no-op: there is no CUDA generator to seed."""


def manual_seed_all(seed) -> None:
    """A no-op: there is no CUDA generator to seed."""


def seed() -> None:
    """A no-op: there is no CUDA generator to seed."""


def seed_all() -> None:
    """A no-op: there is no CUDA generator to seed."""


def empty_cache() -> None:
    """A no-op: there is no CUDA memory to release."""


def memory_allocated(device=None) -> int:
    return 0


def max_memory_allocated(device=None) -> int:
    return 0


def memory_reserved(device=None) -> int:
    return 0


def max_memory_reserved(device=None) -> int:
    return 0


def _needs_cuda(*args, **kwargs):
    raise AssertionError(_NO_CUDA)


synchronize = current_device = get_device_name = get_device_capability = get_device_properties = _needs_cuda
init = set_device = get_rng_state = set_rng_state = get_rng_state_all = set_rng_state_all = _needs_cuda
reset_peak_memory_stats = ipc_collect = _needs_cuda


def __getattr__(name):
    if name == "amp":
        return _importlib.import_module(f"{__name__}.amp")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
