"""ember.return_types: the named tuple types of ops returning several tensors, as
torch.return_types (ember.return_types.max is the type of `x.max(0)`). The native ops'
types are made on first use (_C._return_type); linalg's are Python (ember/linalg.py)."""
from __future__ import annotations

from . import _C


def __getattr__(name):
    from . import _ops_math, _torch_more, linalg

    for t in linalg._RETURN_TYPES + _ops_math.RETURN_TYPES + _torch_more.RETURN_TYPES:
        if t.__name__ == name:
            return t
    value = _C._return_type(name)  # AttributeError for a name that is none of them
    globals()[name] = value
    return value


def __dir__():
    from . import _ops_math, _torch_more, linalg

    return sorted(set(globals()) | set(_C._return_types())
                  | {t.__name__ for t in linalg._RETURN_TYPES + _ops_math.RETURN_TYPES + _torch_more.RETURN_TYPES})
