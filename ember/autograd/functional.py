"""ember.autograd.functional: derivatives of a whole function (vjp, jvp, jacobian,
hessian, vhp, hvp), over the reverse-mode engine.

Every function here has the same shape: take the inputs as tensors of their own (fresh
leaves, or views still linked to the caller's graph under create_graph), call the
function, ask the engine for one or two rounds of gradients, put zeros where an input
was not reached, and hand the results back detached (unless create_graph) and unpacked
as the caller packed them. jvp and hvp use the double-backward trick: u -> J^T u is
linear in u, so its gradient with respect to u, seeded with v, is J v. The Jacobian is
built one output element at a time (reverse mode). Messages and result structures are
torch's."""
from __future__ import annotations

from .. import _C
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_FUNC_OUTPUTS = "outputs of the user-provided function"


def _tensors(value, what: str, fn: str):
    """(whether value was a tuple, value as a tuple of tensors)."""
    packed = isinstance(value, tuple)
    items = value if packed else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, _C.TensorBase):
            where = f"the value at index {i}" if packed else f"the given {what}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(item)}.")
    return packed, items


def _own(tensors, create_graph: bool, differentiable: bool = True):
    """The tensors as the function sees them: new leaves (requiring grad when
    differentiable), except that under create_graph a tensor already in the caller's
    graph stays linked to it through a view."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(differentiable)
                 for t in tensors)


def _unpack(values, packed):
    """values as the caller packed them: packed is one flag, or (outer, inner) for the
    nested results of jacobian and hessian."""
    if isinstance(packed, tuple):
        outer, inner = packed
        if not inner:
            values = tuple(v[0] for v in values)
        return values if outer else values[0]
    return values if packed else values[0]


def _hand_back(values, create_graph: bool):
    """Results leave without their graph unless the caller asked for one."""
    if create_graph:
        return values
    return tuple(v.detach() if isinstance(v, _C.TensorBase) else _hand_back(v, False) for v in values)


def _vector(v, like, like_packed: bool, fn: str, create_graph: bool, no_v_message: str):
    """v checked against the tensors it multiplies (one of the same size each); None only
    where those are one single-element tensor."""
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(no_v_message)
        return None
    _, v = _tensors(v, "v", fn)
    if len(v) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}."
                           if like_packed else "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.size() != b.size():
            where = f"Entry {i} in " if like_packed else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got {a.size()}.")
    return _own(v, create_graph, differentiable=False)


_NO_V_OUT = ("The vector v can only be None if the user-provided function returns a single Tensor with a single "
             "element.")
_NO_V_IN = ("The vector v can only be None if the input to the user-provided function is a single Tensor with a "
            "single element.")

# strict mode: a result that does not depend on what it must depend on
_DETACHED = {
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
# strict mode, by the round of gradients: (a gradient that is None, one that is constant under create_graph)
_UNREACHED = {
    "back": ("The output of the user-provided function is independent of input {i}. This is not allowed in strict "
             "mode.",
             "The jacobian of the user-provided function is independent of input {i}. This is not allowed in strict "
             "mode when create_graph=True."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                   "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                   "mode.",
                   "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode when create_graph=True."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                    "strict mode.",
                    "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                    "strict mode when create_graph=True."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {i} in the "
                          "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                          "backward trick to replace forward mode AD.",
                          "The hessian of the user-provided function is independent of entry {i} in the "
                          "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                          "backward trick to replace forward mode AD."),
}


def _require_graph(tensors, kind: str, strict: bool) -> None:
    if strict:
        for i, t in enumerate(tensors):
            if t is None:
                raise RuntimeError(_UNREACHED["back"][0].format(i=i))
            if not t.requires_grad:
                raise RuntimeError(_DETACHED[kind].format(i=i))


def _gradients(outputs, wrt, seeds=None, *, create_graph: bool, retain_graph=None):
    """autograd.grad of the outputs that have a graph (a None for each of wrt when none has)."""
    from . import grad
    seeds = seeds if seeds is not None else (None,) * len(outputs)
    live = [(o, s) for o, s in zip(outputs, seeds) if o is not None and o.requires_grad]
    if not live:
        return (None,) * len(wrt)
    return grad([o for o, _ in live], wrt, [s for _, s in live], allow_unused=True, create_graph=create_graph,
                retain_graph=retain_graph)


def _zeros_where_unreached(grads, like, strict: bool, create_graph: bool, stage: str):
    from .. import zeros_like
    missing, constant = _UNREACHED[stage]
    filled = []
    for i, (g, ref) in enumerate(zip(grads, like)):
        if g is None and strict:
            raise RuntimeError(missing.format(i=i))
        if g is not None and strict and create_graph and not g.requires_grad:
            raise RuntimeError(constant.format(i=i))
        filled.append(zeros_like(ref) if g is None else g)
    return tuple(filled)


def _call(func, inputs, fn: str, strict: bool):
    """func on the prepared inputs: (outputs packed?, outputs as a tuple)."""
    packed, outputs = _tensors(func(*inputs), _FUNC_OUTPUTS, fn)
    _require_graph(outputs, "outputs", strict)
    return packed, outputs


def _last_round(outputs, wrt, seeds, like, strict: bool, create_graph: bool, stage: str):
    """The final gradients, recorded only when the caller wants a graph of them."""
    with set_grad_enabled(create_graph or _C.is_grad_enabled()):
        return _zeros_where_unreached(_gradients(outputs, wrt, seeds, create_graph=create_graph), like, strict,
                                      create_graph, stage)


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the vector-Jacobian product v^T J), each shaped as torch's: a
    tensor where func returned (or inputs was) a tensor, else a tuple."""
    with enable_grad():
        in_packed, inputs = _tensors(inputs, "inputs", "vjp")
        inputs = _own(inputs, create_graph)
        out_packed, outputs = _call(func, inputs, "vjp", strict)
        v = _vector(v, outputs, out_packed, "vjp", create_graph, _NO_V_OUT)
    product = _last_round(outputs, inputs, v, inputs, strict, create_graph, "back")
    return (_unpack(_hand_back(outputs, create_graph), out_packed),
            _unpack(_hand_back(product, create_graph), in_packed))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the Jacobian-vector product J v), by the double-backward trick."""
    from .. import zeros_like
    with enable_grad():
        in_packed, inputs = _tensors(inputs, "inputs", "jvp")
        inputs = _own(inputs, create_graph)
        v = _vector(v, inputs, in_packed, "jvp", create_graph, _NO_V_IN)
        out_packed, outputs = _call(func, inputs, "jvp", strict)
        u = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        jt_u = _gradients(outputs, inputs, u, create_graph=True)
        _require_graph(jt_u, "grad_inputs", strict)
    product = _last_round(jt_u, u, v, outputs, strict, create_graph, "back_trick")
    return (_unpack(_hand_back(outputs, create_graph), out_packed),
            _unpack(_hand_back(product, create_graph), out_packed))


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
        in_packed, inputs = _tensors(inputs, "inputs", "jacobian")
        inputs = _own(inputs, create_graph)
        out_packed, outputs = _call(func, inputs, "jacobian", strict)
        blocks = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]  # per input: the gradient of each element of out
            for element in out.reshape(-1):
                grads = _gradients((element,), inputs, create_graph=create_graph, retain_graph=True)
                for j, (g, inp) in enumerate(zip(grads, inputs)):
                    if g is None and strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                           "This is not allowed in strict mode.")
                    if g is not None and strict and create_graph and not g.requires_grad:
                        raise RuntimeError(_UNREACHED["back"][1].format(i=j))
                    rows[j].append(_C.zeros_like(inp) if g is None else g)
            blocks.append(tuple(stack(r).view(out.shape + inp.shape) if r else
                                zeros(out.shape + inp.shape, dtype=inp.dtype, device=inp.device)
                                for r, inp in zip(rows, inputs)))
        blocks = _hand_back(tuple(blocks), create_graph)
    return _unpack(blocks, (out_packed, in_packed))


def _one_element(out, fn: str, strict: bool):
    """The single-element tensor a Hessian's function must return."""
    packed, outs = _tensors(out, _FUNC_OUTPUTS, fn)
    _require_graph(outs, "outputs", strict)
    if packed:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")
    return outs[0]


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function returning one element: the Jacobian of its gradient."""
    in_packed, inputs = _tensors(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def gradient(*xs):
        g = jacobian(lambda *ys: _one_element(func(*ys), "hessian", strict).squeeze(), xs, create_graph=True)
        _require_graph(g, "jacobian", strict)
        return g

    blocks = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _unpack(blocks, (in_packed, in_packed))


def _gradient_at(func, inputs, v, fn: str, create_graph: bool, strict: bool):
    """The first round of vhp and hvp: (inputs packed?, inputs, v, the output, its gradient)."""
    in_packed, inputs = _tensors(inputs, "inputs", fn)
    inputs = _own(inputs, create_graph)
    v = _vector(v, inputs, in_packed, fn, create_graph, _NO_V_IN)
    out = _one_element(func(*inputs), fn, strict)
    grads = _gradients((out,), inputs, create_graph=True)
    _require_graph(grads, "jacobian", strict)
    return in_packed, inputs, v, out, grads


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the vector-Hessian product v^T H)."""
    with enable_grad():
        in_packed, inputs, v, out, grads = _gradient_at(func, inputs, v, "vhp", create_graph, strict)
    product = _last_round(grads, inputs, v, inputs, strict, create_graph, "double_back")
    return _hand_back((out,), create_graph)[0], _unpack(_hand_back(product, create_graph), in_packed)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), the Hessian-vector product H v), by the double-backward trick."""
    from .. import zeros_like
    with enable_grad():
        in_packed, inputs, v, out, grads = _gradient_at(func, inputs, v, "hvp", create_graph, strict)
        u = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        h_u = _gradients(grads, inputs, u, create_graph=True)
        _require_graph(grads, "hessian", strict)
    product = _last_round(h_u, u, v, inputs, strict, create_graph, "double_back_trick")
    return _hand_back((out,), create_graph)[0], _unpack(_hand_back(product, create_graph), in_packed)
