"""Hook bookkeeping shared by nn.Module and the optimizers: RemovableHandle, and
BackwardHook, which runs a module's full backward hooks through identity autograd
Functions on its inputs and outputs."""
from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["RemovableHandle", "BackwardHook"]


class RemovableHandle:
    """What registering a hook returns: `handle.remove()` unregisters it (also from the
    extra dicts that carry the hook's flags, such as with_kwargs), and a `with handle:`
    block removes it on exit. Ids grow across all handles, so dicts keyed by them keep
    registration order.

    >>> hooks = OrderedDict()
    >>> h = RemovableHandle(hooks); hooks[h.id] = print; h.remove(); len(hooks)
    0
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extras = ()
        elif isinstance(extra_dict, (list, tuple)):
            extras = tuple(extra_dict)
        else:
            extras = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    # a pickled handle keeps its dicts alive only as long as the unpickled owner does
    def __getstate__(self):
        return self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref)

    def __setstate__(self, state) -> None:
        hooks_dict, self.id = state[0], state[1]
        self.hooks_dict_ref = weakref.ref(OrderedDict() if hooks_dict is None else hooks_dict)
        extras = state[2] if len(state) > 2 else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _pack_with_none(indices, values, size):
    """A tuple of length size holding values at indices and None elsewhere."""
    out = [None] * size
    for i, v in zip(indices, values):
        out[i] = v
    return tuple(out)


def _unpack_none(indices, values):
    return tuple(values[i] for i in indices)


_identity_function = None


def _identity():
    """The autograd Function both hook points use: outputs alias the inputs, and backward
    hands the incoming gradients to a callback that may replace them."""
    global _identity_function
    if _identity_function is None:
        from ..autograd import Function

        class BackwardHookFunction(Function):
            @staticmethod
            def forward(ctx, on_grads, *tensors):
                ctx.on_grads = on_grads
                ctx.like = [(t.shape, t.dtype) for t in tensors]
                outs = tuple(t.view_as(t) for t in tensors)
                ctx.mark_non_differentiable(*[o for o, t in zip(outs, tensors) if not t.requires_grad])
                return outs

            @staticmethod
            def backward(ctx, *grads):
                # torch hands zeros for the non-differentiable outputs; ember's engine
                # passes None there, so they are made here
                from .. import zeros

                grads = tuple(zeros(shape, dtype=dtype) if g is None else g
                              for g, (shape, dtype) in zip(grads, ctx.like))
                return (None,) + tuple(ctx.on_grads(grads))

        _identity_function = BackwardHookFunction
    return _identity_function


class BackwardHook:
    """Runs a module's full backward pre-hooks when the gradients of its outputs arrive and
    its full backward hooks when those of its inputs are computed: `setup_input_hook`
    passes the forward's arguments through an identity Function whose backward sees the
    input gradients, `setup_output_hook` does the same for the forward's result."""

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = -1
        self.input_tensors_index = None
        self.n_outputs = -1
        self.output_tensors_index = None

    def _apply_on_tensors(self, on_grads, args):
        from .. import _C

        index = [i for i, a in enumerate(args) if isinstance(a, _C.TensorBase)]
        tensors = [args[i] for i in index]
        if not (_C.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        outs = _identity().apply(on_grads, *tensors)
        new_args = list(args)
        for i, o in zip(index, outs):
            new_args[i] = o
        return tuple(new_args), index

    def setup_input_hook(self, args):
        args, self.input_tensors_index = self._apply_on_tensors(self._input_grads, args)
        self.n_inputs = len(args)
        return args

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        outs, self.output_tensors_index = self._apply_on_tensors(self._output_grads, result if is_tuple else (result,))
        self.n_outputs = len(outs)
        return outs if is_tuple else outs[0]

    def _output_grads(self, grads):
        """The gradients of the outputs arrived: pre-hooks may replace them; when no input
        needs a gradient, the backward hooks run now (there will be no input gradient)."""
        grad_output = _pack_with_none(self.output_tensors_index, grads, self.n_outputs)
        for hook in self.user_pre_hooks:
            result = hook(self.module, grad_output)
            if result is None:
                continue
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) != len(grad_output):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(result)}, "
                                   f"but expected {len(grad_output)}")
            grad_output = result
        self.grad_outputs = grad_output
        if self.input_tensors_index is None:
            if self.user_hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", stacklevel=5)
            grad_input = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_input, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return _unpack_none(self.output_tensors_index, grad_output)

    def _input_grads(self, grads):
        if self.grad_outputs is None:  # reached the inputs without passing the outputs (double backward)
            return grads
        grad_input = _pack_with_none(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, grad_input, self.grad_outputs)
            if out is None:
                continue
            if not isinstance(out, tuple):
                out = (out,)
            if len(out) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(grad_input)}")
            grad_input = out
        self.grad_outputs = None
        return _unpack_none(self.input_tensors_index, grad_input)
