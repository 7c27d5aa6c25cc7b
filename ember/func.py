"""ember.func: torch.func's function transforms: grad, grad_and_value, vjp and jacrev over
the reverse-mode engine; jvp and jacfwd over forward-mode AD (ember.autograd.forward_ad);
hessian (jacfwd of jacrev, as torch's) and functional_call.

A transform differentiates with respect to fresh leaves standing for the chosen
arguments; where an argument already requires grad (an outer transform's leaf, or the
caller's graph), it differentiates with create_graph=True through a view of it instead,
so transforms nest (hessian, grad of grad) and results stay connected to the caller's
graph, as torch's are. Stand-ins and results keep their tangents when a forward-mode
transform is outside (jacfwd of jacrev). Arguments may be tensors or tuples, lists and
dicts of them. vmap is not provided, so jacrev and jacfwd build a Jacobian a row (a
column) at a time, and forward-mode levels do not nest (jvp of jvp raises)."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

from . import _C
from .autograd.grad_mode import enable_grad

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call"]


# ---- a small pytree: tensors nested in tuples, lists and dicts ----

def _flatten(tree):
    """(leaves, rebuild) where rebuild(new_leaves) gives the same structure."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(new, parts=parts, kind=type(tree)):
            out, pos = [], 0
            for p_leaves, p_rebuild in parts:
                out.append(p_rebuild(new[pos:pos + len(p_leaves)]))
                pos += len(p_leaves)
            if kind is tuple or kind is list:
                return kind(out)
            if hasattr(kind, "_fields"):  # a namedtuple
                return kind(*out)
            return kind(out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(new, parts=parts, keys=keys, kind=type(tree)):
            out, pos = kind(), 0
            for k, (p_leaves, p_rebuild) in zip(keys, parts):
                out[k] = p_rebuild(new[pos:pos + len(p_leaves)])
                pos += len(p_leaves)
            return out
        return leaves, rebuild
    return [tree], lambda new: new[0]


def _check_argnums(argnums, num_args: int):
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    items = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    for a in items:
        if isinstance(a, bool) or not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -num_args <= a < num_args:
            raise RuntimeError(f"Got argnum={a}, but only {num_args} positional inputs")
    return tuple(a % num_args for a in items)


def _detached(t):
    """t.detach(), keeping t's forward-mode tangent (an outer jvp's) if it has one."""
    tangent = _C._fw_tangent(t)
    d = t.detach()
    return d if tangent is None else _C._make_dual(d, tangent)


def _differentiable(tensors):
    """Stand-ins to differentiate with respect to, and whether to keep building the graph."""
    outer = _C.is_grad_enabled() and any(t.requires_grad for t in tensors)
    new = []
    for t in tensors:
        if not isinstance(t, _C.TensorBase):
            raise RuntimeError(f"Expected tensors as the differentiated inputs, got {type(t)}")
        new.append(t.view_as(t) if (outer and t.requires_grad) else _detached(t).requires_grad_())
    return new, outer


def _grads(outputs, inputs, grad_outputs, create_graph: bool):
    from . import autograd, zeros_like
    outs = [o for o in outputs if o.requires_grad]
    gouts = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not outs:
        res = (None,) * len(inputs)
    else:
        res = autograd.grad(outs, inputs, gouts, retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [zeros_like(i) if g is None else (g if create_graph else _detached(g)) for g, i in zip(res, inputs)]


def _detach_tree(tree, keep: bool):
    if keep:
        return tree
    leaves, rebuild = _flatten(tree)
    return rebuild([_detached(x) if isinstance(x, _C.TensorBase) else x for x in leaves])


def _prepare(args, argnums):
    """The chosen arguments replaced by stand-ins: (new args, flat stand-ins, rebuild of
    the chosen arguments' structure, create_graph)."""
    nums = _check_argnums(argnums, len(args))
    chosen = tuple(args[i] for i in nums) if isinstance(argnums, tuple) else args[nums[0]]
    leaves, rebuild = _flatten(chosen)
    new_leaves, create_graph = _differentiable(leaves)
    new_chosen = rebuild(new_leaves)
    args = list(args)
    if isinstance(argnums, tuple):
        for i, v in zip(nums, new_chosen):
            args[i] = v
    else:
        args[nums[0]] = new_chosen
    return tuple(args), new_leaves, rebuild, create_graph


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning (gradient of func's scalar output with respect to the
    arguments in argnums, func's output); with has_aux, func returns (output, aux) and
    the value is (output, aux)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, leaves, rebuild, create_graph = _prepare(args, argnums)
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, _C.TensorBase):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = _grads([output], leaves, [None], create_graph)
        value = _detach_tree(output, create_graph)
        g = rebuild(grads)
        if has_aux:
            return g, (value, _detach_tree(aux, create_graph))
        return g, value
    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of func's scalar output with respect to the
    arguments in argnums (and func's aux output with has_aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return wrapper


def vjp(func: Callable, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives, for every primal, the
    vector-Jacobian product (a tuple, one entry per primal)."""
    with enable_grad():
        leaves, rebuild = _flatten(primals)
        new_leaves, create_graph = _differentiable(leaves)
        output = func(*rebuild(new_leaves))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) if "
                                   "has_aux is True")
            output, aux = output
    out_leaves, _ = _flatten(output)
    for o in out_leaves:
        if not isinstance(o, _C.TensorBase):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output (a Tensor "
                               f"or a tuple, list or dict of them), got {type(o)}")

    def vjp_fn(cotangents, *, retain_graph: bool = True, create_graph: bool = create_graph):
        cot_leaves, _ = _flatten(cotangents)
        if len(cot_leaves) != len(out_leaves):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function: {len(cot_leaves)} cotangents for {len(out_leaves)} outputs")
        for c, o in zip(cot_leaves, out_leaves):
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has a "
                                   f"shape of {o.shape}")
        with enable_grad():
            grads = _grads(out_leaves, new_leaves, cot_leaves, create_graph)
        return rebuild(grads)

    value = _detach_tree(output, create_graph)
    if has_aux:
        return value, vjp_fn, _detach_tree(aux, create_graph)
    return value, vjp_fn


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of func with respect to the arguments in
    argnums, row by row through the engine: for each output, a tensor of shape
    output.shape + input.shape (nested as the outputs and argnums are)."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from . import stack, zeros
        with enable_grad():
            args, leaves, rebuild, create_graph = _prepare(args, argnums)
            output = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("jacrev(f, ...)(*args): output of function f should be a tuple: (output, aux) "
                                       "if has_aux is True")
                output, aux = output
            out_leaves, out_rebuild = _flatten(output)
            per_output = []
            for o in out_leaves:
                if not isinstance(o, _C.TensorBase):
                    raise RuntimeError(f"jacrev(f, ...)(*args): expected f(*args) to return only tensors, got "
                                       f"unsupported type {type(o)}")
                flat = o.reshape(-1)
                rows = [[] for _ in leaves]
                for j in range(flat.numel()):
                    for k, g in enumerate(_grads([flat[j]], leaves, [None], create_graph)):
                        rows[k].append(g)
                per_output.append(rebuild([stack(r).view(o.shape + i.shape) if r else
                                           zeros(o.shape + i.shape, dtype=i.dtype, device=i.device)
                                           for r, i in zip(rows, leaves)]))
        jac = out_rebuild(per_output)
        if has_aux:
            return jac, _detach_tree(aux, create_graph)
        return jac
    return wrapper


def _structure(tree) -> str:
    if isinstance(tree, (tuple, list)):
        return f"{type(tree).__name__}[" + ", ".join(_structure(x) for x in tree) + "]"
    if isinstance(tree, dict):
        return "dict{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in tree.items()) + "}"
    return "*"


def _jvp(func, primals, tangents, has_aux, where):
    """(primal outputs, tangent outputs, aux) of func at primals along tangents, the
    outputs' structure kept. One dual level; the results are plain tensors."""
    from . import zeros_like
    from .autograd import forward_ad as fwAD
    p_leaves, p_rebuild = _flatten(primals)
    t_leaves, _ = _flatten(tangents)
    with fwAD.dual_level():
        duals = []
        for p, t in zip(p_leaves, t_leaves):
            if not isinstance(p, _C.TensorBase) or not isinstance(t, _C.TensorBase):
                raise RuntimeError(f"{where}: Expected primals and tangents to be tensors, got "
                                   f"{type(p if not isinstance(p, _C.TensorBase) else t)}")
            duals.append(fwAD.make_dual(p, t))
        output = func(*p_rebuild(duals))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if has_aux is "
                                   "True")
            output, aux = output
        out_leaves, out_rebuild = _flatten(output)
        values, derivs = [], []
        for o in out_leaves:
            if not isinstance(o, _C.TensorBase):
                raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got unsupported type "
                                   f"{type(o)}")
            primal, tangent = fwAD.unpack_dual(o)
            values.append(primal)
            derivs.append(zeros_like(primal) if tangent is None else tangent)
        if aux is not None:
            aux_leaves, aux_rebuild = _flatten(aux)
            aux = aux_rebuild([fwAD.unpack_dual(a).primal if isinstance(a, _C.TensorBase) else a
                               for a in aux_leaves])
    return out_rebuild(values), out_rebuild(derivs), aux


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian-vector product of func at primals along tangents),
    by forward-mode AD; with has_aux, func returns (output, aux) and aux comes third."""
    where = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    if _structure(primals) != _structure(tangents):
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python structure. For example, "
                           f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{_structure(primals)} and tangents with structure {_structure(tangents)}")
    value, derivative, aux = _jvp(func, primals, tangents, has_aux, where)
    if has_aux:
        return value, derivative, aux
    return value, derivative


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """A function returning the Jacobian of func with respect to the arguments in
    argnums, column by column through forward-mode AD (one jvp per input element): for
    each output, a tensor of shape output.shape + input.shape, nested as jacrev's."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from . import stack, zeros, zeros_like
        nums = _check_argnums(argnums, len(args))
        chosen = tuple(args[i] for i in nums) if isinstance(argnums, tuple) else args[nums[0]]
        leaves, rebuild = _flatten(chosen)
        for t in leaves:
            if not isinstance(t, _C.TensorBase):
                raise RuntimeError(f"Expected tensors as the differentiated inputs, got {type(t)}")

        def at(chosen_leaves, tangent_leaves):
            def f(*xs):
                new = list(args)
                picked = rebuild(list(xs))
                if isinstance(argnums, tuple):
                    for i, v in zip(nums, picked):
                        new[i] = v
                else:
                    new[nums[0]] = picked
                return func(*new, **kwargs)
            return _jvp(f, tuple(chosen_leaves), tuple(tangent_leaves), has_aux, "jacfwd(f, ...)(*args)")

        # one column per element of the chosen inputs
        columns = []  # per input leaf: a list (over its elements) of flat output tangents
        value = aux = None
        for k, x in enumerate(leaves):
            cols = []
            for j in range(x.numel()):
                tangents = [zeros_like(t) for t in leaves]
                tangents[k].view(-1)[j] = 1
                value, deriv, aux = at(leaves, tangents)
                cols.append(_flatten(deriv)[0])
            columns.append(cols)
        if value is None:  # no input elements: evaluate once for the outputs' shapes
            value, _, aux = at(leaves, [zeros_like(t) for t in leaves])
        out_leaves, out_rebuild = _flatten(value)
        per_output = []
        for m, o in enumerate(out_leaves):
            per_output.append(rebuild([
                stack([c[m] for c in cols], dim=-1).view(o.shape + x.shape) if cols else
                zeros(o.shape + x.shape, dtype=o.dtype, device=o.device)
                for cols, x in zip(columns, leaves)]))
        jac = out_rebuild(per_output)
        if has_aux:
            return jac, aux
        return jac
    return wrapper


def hessian(func: Callable, argnums=0):
    """The Hessian of func with respect to the arguments in argnums: jacfwd of jacrev,
    as torch's (forward over reverse)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- functional_call ----

def _owner(module, name: str):
    *path, leaf = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, leaf


@contextlib.contextmanager
def _swapped(module, tensors: dict, tie_weights: bool):
    if tie_weights:  # a tensor tied under several names is replaced under all of them
        by_id: dict[int, list[str]] = {}
        for name, t in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            by_id.setdefault(id(t), []).append(name)
        extra = {}
        for names in by_id.values():
            given = [n for n in names if n in tensors]
            if len(given) > 1 and any(tensors[n] is not tensors[given[0]] for n in given):
                raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. Consider "
                                 "using tie_weights=False")
            if given:
                for n in names:
                    if n not in tensors:
                        extra[n] = tensors[given[0]]
        tensors = {**tensors, **extra}
    saved = []
    try:
        for name, value in tensors.items():
            owner, leaf = _owner(module, name)
            for store in ("_parameters", "_buffers"):
                d = owner.__dict__.get(store)
                if d is not None and leaf in d:
                    saved.append((d, leaf, d[leaf]))
                    d[leaf] = value
                    break
            else:
                had = leaf in owner.__dict__
                saved.append((owner, leaf, owner.__dict__.get(leaf) if had else _MISSING))
                object.__setattr__(owner, leaf, value)
        yield
    finally:
        for where, leaf, old in reversed(saved):
            if isinstance(where, dict):
                where[leaf] = old
            elif old is _MISSING:
                object.__delattr__(where, leaf)
            else:
                object.__setattr__(where, leaf, old)


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """module(*args, **kwargs) with its parameters and buffers replaced by the given
    tensors (by dotted name) for the call; the module is unchanged afterwards."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        tensors = {}
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, dict):
                raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries, got "
                                 f"{type(d)}")
        seen: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                seen[k] = seen.get(k, 0) + 1
        repeated = [k for k, n in seen.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        for d in parameter_and_buffer_dicts:
            tensors.update(d)
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
                {n for n, _ in module.named_buffers(remove_duplicate=False)}
        unexpected = [k for k in tensors if k not in known]
        missing = [k for k in known if k not in tensors]
        if unexpected or missing:
            msg = f"Error(s) in reparametrizing for {type(module).__name__}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + "."
            raise RuntimeError(msg)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors, tie_weights):
        return module(*args, **kwargs)
