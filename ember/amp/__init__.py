"""ember.amp: automatic mixed precision's Python face, as CPU torch offers it.

ember does not change dtypes under autocast: inside an enabled autocast('cpu',
dtype=ember.bfloat16) block ops still compute in their inputs' dtypes (float32 stays
float32, which is at least as accurate). The context manager otherwise behaves as
torch's: it records the state that is_autocast_enabled / get_autocast_dtype report,
disables itself with torch's warnings where torch does (device 'cuda' without CUDA, a
CPU dtype other than bfloat16/float16), nests and restores, and works as a decorator.
GradScaler behaves as torch's: disabled (as torch's is without CUDA) it is a
pass-through; on device 'cpu' it scales losses and unscales gradients."""
from .autocast_mode import (autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_available,
                            is_autocast_enabled, set_autocast_dtype, set_autocast_enabled)
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_enabled", "set_autocast_dtype", "set_autocast_enabled"]
