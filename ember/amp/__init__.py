"""ember.amp: automatic mixed precision, as CPU torch offers it.

Inside `with ember.autocast("cpu", dtype=ember.bfloat16):` (or float16) the ops of
torch's CPU autocast lists cast their floating arguments as torch's do: products and
convolutions (mm, matmul, linear, conv*, scaled_dot_product_attention, ...) to the
autocast dtype, losses, linalg and fft to float32, cat/stack/index_copy to their widest
dtype (Note [Autocast] in csrc/python/autocast.cpp). The state is per thread and nests;
casts of float32 leaves that require grad are cached for the outermost block. The
context manager disables itself with torch's warnings where torch does (device 'cuda'
without CUDA, a CPU dtype other than bfloat16/float16) and works as a decorator.
GradScaler behaves as torch's: disabled (as torch's is without CUDA) it is a
pass-through; on device 'cpu' it scales losses and unscales gradients."""
from .autocast_mode import (autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_available,
                            is_autocast_enabled, set_autocast_dtype, set_autocast_enabled)
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_enabled", "set_autocast_dtype", "set_autocast_enabled"]
