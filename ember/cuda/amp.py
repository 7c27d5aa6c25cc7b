"""ember.cuda.amp: torch.cuda.amp's deprecated autocast and GradScaler. Both warn as
torch's do and disable themselves, since there is no CUDA device."""
from __future__ import annotations

import warnings

from .. import amp as _amp
from .._C import float16


class autocast(_amp.autocast):
    """Deprecated: ember.amp.autocast('cuda', ...)."""

    def __init__(self, enabled=True, dtype=float16, cache_enabled=True):
        warnings.warn("`ember.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`ember.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """Deprecated: ember.amp.GradScaler('cuda', ...)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
