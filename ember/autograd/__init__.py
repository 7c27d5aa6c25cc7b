"""ember.autograd: reverse-mode automatic differentiation. The graph, its nodes and the
engine are native (csrc/autograd/); this package is their Python face: backward(),
grad(), grad mode, custom Functions, gradcheck."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from .. import _C
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad
from .grad_mode import set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from . import forward_ad, functional, graph  # noqa: F401

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "gradcheck",
           "gradgradcheck", "Variable"]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, _C.TensorBase):
        return (x,)
    return tuple(x)


def _grads_for(outputs, grad_outputs):
    grads = list(_as_tuple(grad_outputs)) if grad_outputs is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad_tensors has {len(grads)} entries but tensors has {len(outputs)}")
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o.requires_grad and o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
        elif not isinstance(g, _C.TensorBase):
            from .. import tensor
            grads[i] = tensor(g, dtype=o.dtype, device=o.device)
    return grads


def backward(tensors, grad_tensors=None, retain_graph: Optional[bool] = None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Accumulates into the .grad of the leaves (or of `inputs`) the gradient of tensors,
    weighted by grad_tensors (omitted for one-element tensors)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    if inputs is not None and _as_tuple(inputs) == ():
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    inputs = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    _C._run_backward(outputs, _grads_for(outputs, grad_tensors), bool(retain_graph), bool(create_graph),
                     inputs, False, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph: Optional[bool] = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: Optional[bool] = None, is_grads_batched: bool = False,
         materialize_grads: bool = False):
    """The gradients of outputs with respect to inputs (a tuple, one per input), without
    touching any .grad."""
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True")
    if retain_graph is None:
        retain_graph = create_graph
    result = _C._run_backward(outs, _grads_for(outs, grad_outputs), bool(retain_graph), bool(create_graph), ins,
                              bool(allow_unused), False)
    if materialize_grads:
        from .. import zeros_like
        result = tuple(g if g is not None else zeros_like(i) for g, i in zip(result, ins))
    return result


def _zero_grad(params, set_to_none: bool = True) -> None:
    """Module.zero_grad and Optimizer.zero_grad, as torch's: each .grad set to None, or
    zeroed in place once out of any graph (detached if an op made it, else no longer
    requiring grad)."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()


def Variable(data, requires_grad: bool = False, volatile: bool = False):
    """The legacy wrapper: since torch 0.4 a Variable is a tensor."""
    if requires_grad:
        data.requires_grad_(True)
    return data
