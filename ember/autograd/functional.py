"""ember.autograd.functional: derivatives of a whole function (vjp, jvp, jacobian,
hessian, vhp, hvp), over the reverse-mode engine. jvp and hvp use the double-backward
trick (the gradient of a vjp with respect to its vector is a jvp), as torch's do; the
jacobian is computed row by row (reverse mode)."""
from __future__ import annotations

from .. import _C
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x, arg_name: str, fn_name: str):
    is_tuple = isinstance(x, tuple)
    if not is_tuple:
        x = (x,)
    for i, el in enumerate(x):
        if not isinstance(el, _C.TensorBase):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                                f"the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"given {arg_name} has type {type(el)}.")
    return is_tuple, x


def _tuple_postprocess(res, to_unpack):
    """Undoes _as_tuple: to_unpack is a bool, or two (outer, inner) for nested results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(r[0] for r in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool):
    """Inputs as the function will see them: new leaves, unless create_graph must keep
    the caller's graph (then a view that still leads to it)."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(outputs, create_graph: bool):
    if isinstance(outputs[0], _C.TensorBase):
        if not create_graph:
            return tuple(o.detach() for o in outputs)
        return outputs
    return tuple(_grad_postprocess(o, create_graph) for o in outputs)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_INDEPENDENT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
               "in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
}


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_INDEPENDENT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph: bool = False, retain_graph=None):
    """autograd.grad over the outputs that require grad; all None when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gouts = [], []
    for out, g in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            outs.append(out)
            gouts.append(g)
    if not outs:
        return (None,) * len(inputs)
    from . import grad
    return grad(outs, inputs, gouts, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


_NONE_STRICT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}
_CONST_STRICT = {
    "back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode when create_graph=True.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode "
                  "when create_graph=True.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode when create_graph=True.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str):
    from .. import zeros_like
    res = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_NONE_STRICT[stage].format(i=i))
            g = zeros_like(r)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(_CONST_STRICT[stage].format(i=i))
        res.append(g)
    return tuple(res)


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the vector-Jacobian product v^T J), each shaped as torch's: a
    tensor where func returned (or inputs was) a tensor, else a tuple."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
    with set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the Jacobian-vector product J v), by the double-backward trick."""
    from .. import zeros_like
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # u -> J^T u is linear: its gradient with respect to u, taken at v, is J v.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j a tensor of shape
    output_i.shape + input_j.shape, nested in tuples as torch nests them."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if not vectorize:
            raise ValueError("torch.autograd.functional.jacobian: `strategy=\"forward-mode\"` requires "
                             "`vectorize=True`.")
        raise NotImplementedError("ember does not implement forward-mode automatic differentiation")
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    from .. import stack, zeros
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(flat.numel()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError("The jacobian of the user-provided function is not differentiable "
                                               f"with respect to input {k}. This is not allowed in strict mode when "
                                               "create_graph=True.")
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        g = zeros(inp.shape, dtype=inp.dtype)
                    rows[k].append(g)
            jac.append(tuple(stack(r).view(out.shape + inp.shape) if r else
                             zeros(out.shape + inp.shape, dtype=inp.dtype) for r, inp in zip(rows, inputs)))
        jac = _grad_postprocess(tuple(jac), create_graph)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function returning one element: the Jacobian of its gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, _C.TensorBase):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _hessian_setup(func, inputs, v, fn_name: str, create_graph: bool, strict: bool):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs[0], _C.TensorBase):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, is_outputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the vector-Hessian product v^T H)."""
    with enable_grad():
        is_inputs_tuple, is_outputs_tuple, inputs, v, outputs, jac = _hessian_setup(func, inputs, v, "vhp",
                                                                                    create_graph, strict)
    with set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the Hessian-vector product H v), by the double-backward trick."""
    from .. import zeros_like
    with enable_grad():
        is_inputs_tuple, is_outputs_tuple, inputs, v, outputs, jac = _hessian_setup(func, inputs, v, "hvp",
                                                                                    create_graph, strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)
