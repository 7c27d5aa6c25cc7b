"""ember.signal: torch.signal's namespace (its window functions, in ember.signal.windows)."""
from . import windows

__all__ = ["windows"]
