"""ember.compile: ember has no graph compiler; compiling returns what it was given."""
from __future__ import annotations

import warnings

_warned = False


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, name=None,
            disable=False, **kwargs):
    """Returns model unchanged (ember runs eagerly), warning once per process. Also a
    decorator, bare (@ember.compile) or with arguments (@ember.compile(mode="max-autotune")).

    >>> f = lambda x: x + 1
    >>> ember.compile(f) is f
    True
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, **kwargs)

        return decorator
    if not callable(model):
        raise RuntimeError(f"ember.compile: expected a module or a function, got {type(model).__name__}")
    global _warned
    if not _warned and not disable:
        _warned = True
        warnings.warn("ember.compile: ember has no compiler; the model runs unchanged, eagerly.", stacklevel=2)
    return model
