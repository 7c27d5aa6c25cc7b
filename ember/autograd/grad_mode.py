"""Grad mode: no_grad, enable_grad, set_grad_enabled and inference_mode, each usable as a
context manager and as a decorator. The flag itself is native and thread-local."""
from __future__ import annotations

import functools
import inspect

from .. import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

is_grad_enabled = _C.is_grad_enabled
is_inference_mode_enabled = _C.is_inference_mode_enabled


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions, whose
    every step then runs in the mode)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            try:
                                response = gen.send(request)
                            except StopIteration as stop:
                                return stop.value
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator (@no_grad as well as @no_grad())."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Ops inside record no autograd history (results do not require grad)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc) -> None:
        _C._set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Turns recording back on inside a no_grad region."""

    def __enter__(self) -> None:
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc) -> None:
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode): sets grad mode now (as a function call) and restores the
    previous mode when used as a context manager's exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __call__(self, func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc) -> None:
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Grad mode off, and the tensors made inside are inference tensors (is_inference()),
    which autograd refuses outside the mode. inference_mode(False) turns the mode off
    (and grad mode on) inside an inference_mode region, as torch's."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # used as @inference_mode without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __enter__(self) -> None:
        self.prev = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        _C._set_grad_enabled(not self.mode)
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc) -> None:
        _C._set_grad_enabled(self.prev[0])
        _C._set_inference_mode(self.prev[1])

    def clone(self):
        return type(self)(self.mode)
