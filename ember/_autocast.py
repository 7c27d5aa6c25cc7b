"""Autocast for ops composed in Python (Note [Autocast] in csrc/python/autocast.cpp).

Native ops declared with `autocast:` cast in their generated wrappers. A function written
in Python that torch lists in an autocast policy is decorated here: while CPU autocast is
on in this thread it casts its tensor arguments (and the tensors of list arguments) as
the policy says and runs with CPU autocast off, so its inner ops do not cast again, as in
torch; a call given out= is not cast. While autocast is off it costs one native check."""
from __future__ import annotations

import functools

from . import _C

_on = _C._autocast_cpu_enabled
_cast = _C._autocast_cast
_set = _C._autocast_set_enabled


def _policy(code: int):
    def decorate(fn):
        @functools.wraps(fn)
        def cast_then_call(*args, **kwargs):
            if not _on() or kwargs.get("out") is not None:
                return fn(*args, **kwargs)
            n = len(args)
            values = _cast(code, args + tuple(kwargs.values()))
            args, kwargs = values[:n], dict(zip(kwargs, values[n:]))
            _set(0, False)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(0, True)

        return cast_then_call

    return decorate


lower_precision = _policy(0)  # to the autocast dtype: products and convolutions
fp32 = _policy(1)             # to float32: losses, linalg, fft, ...
promote = _policy(2)          # to the widest floating dtype among the arguments
