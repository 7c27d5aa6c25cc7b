"""Custom Functions, as torch users write them:

    class Exp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    Exp.apply(x)

Each Function class gets a backward class (ExpBackward), made by the metaclass, whose
instance is both the `ctx` forward sees and the outputs' grad_fn; it derives from the
native ember._C._FunctionBase, which records the node and calls back into Python."""
from __future__ import annotations

import functools

from .. import _C
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction", "NestedIOFunction"]


class FunctionCtx:
    """What forward can tell backward through ctx."""

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for backward, which reads them as ctx.saved_tensors;
        in-place changes in between are detected."""
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Declares the inputs forward modified in place (and returns)."""
        self._dirty = args

    def mark_non_differentiable(self, *args):
        """Declares outputs that have no gradient (indices, masks)."""
        self._non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """With False, backward receives None instead of zeros for outputs that got no
        gradient."""
        self._materialize_grads = value


class BackwardCFunction(_C._FunctionBase, FunctionCtx):
    """The base of every FooBackward class."""

    @property
    def saved_tensors(self):
        """What save_for_backward saved (in jvp: what save_for_forward saved)."""
        if getattr(self, "_in_jvp", False):
            return tuple(getattr(self, "_saved_for_forward", ()))
        return _C._FunctionBase.saved_tensors.__get__(self)

    def apply(self, *grads):
        cls = self._forward_cls
        if cls.backward is Function.backward and cls.vjp is not Function.vjp:
            return cls.vjp(self, *grads)
        return cls.backward(self, *grads)


class FunctionMeta(type):
    """Gives each Function subclass its backward class, named <Function>Backward."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls.__module__ = cls.__module__
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations (see the module's docstring)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. "
                           "Please use new-style autograd function with static forward method.")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, _C.TensorBase) and a.requires_grad for a in args)
        record = _C.is_grad_enabled() and any(ctx.needs_input_grad)
        # forward mode: forward sees the primals, and jvp gives the outputs' tangents
        tangents = [_C._fw_tangent(a) if isinstance(a, _C.TensorBase) else None for a in args]
        dual = any(t is not None for t in tangents)
        if dual:
            if cls.jvp is Function.jvp:
                Function.jvp(ctx)
            inputs = tuple(_C._unpack_dual(a)[0] if t is not None else a for a, t in zip(args, tangents))
        else:
            inputs = args
        with no_grad():
            if cls.setup_context is not Function.setup_context:
                outputs = cls.forward(*inputs, **kwargs)
                cls.setup_context(ctx, inputs, outputs)
            else:
                outputs = cls.forward(ctx, *inputs, **kwargs)
        if isinstance(outputs, list):
            outputs = tuple(outputs)
        if record:
            outputs = ctx._record(args, outputs)
        if dual:
            outputs = cls._give_tangents(ctx, outputs, tangents)
        return outputs

    @classmethod
    def _give_tangents(cls, ctx, outputs, tangents):
        ctx._in_jvp = True
        try:
            out_tangents = cls.jvp(ctx, *tangents)
        finally:
            ctx._in_jvp = False
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        tans = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
        if len(tans) != len(outs):
            raise RuntimeError(f"Function {cls.__name__}.jvp returned an incorrect number of forward gradients "
                               f"(expected {len(outs)} got {len(tans)})")
        for o, t in zip(outs, tans):
            if isinstance(o, _C.TensorBase) and t is not None:
                _C._fw_set_tangent(o, t)
        return outputs


def once_differentiable(fn):
    """Marks a backward as not differentiable itself: it runs without recording, and its
    results are plain tensors."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
