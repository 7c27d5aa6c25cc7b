"""ember.func: torch.func's function transforms over the reverse-mode engine: grad,
grad_and_value, vjp, jacrev, hessian (jacrev of jacrev) and functional_call.

A transform differentiates with respect to fresh leaves standing for the chosen
arguments; where an argument already requires grad (an outer transform's leaf, or the
caller's graph), it differentiates with create_graph=True through a view of it instead,
so transforms nest (hessian, grad of grad) and results stay connected to the caller's
graph, as torch's are. Arguments may be tensors or tuples, lists and dicts of them.
Forward-mode transforms (jvp, jacfwd) and vmap are not provided."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

from . import _C
from .autograd.grad_mode import enable_grad

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian", "functional_call"]


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


def _differentiable(tensors):
    """Stand-ins to differentiate with respect to, and whether to keep building the graph."""
    outer = _C.is_grad_enabled() and any(t.requires_grad for t in tensors)
    new = []
    for t in tensors:
        if not isinstance(t, _C.TensorBase):
            raise RuntimeError(f"Expected tensors as the differentiated inputs, got {type(t)}")
        new.append(t.view_as(t) if (outer and t.requires_grad) else t.detach().requires_grad_())
    return new, outer


def _grads(outputs, inputs, grad_outputs, create_graph: bool):
    from . import autograd, zeros_like
    outs = [o for o in outputs if o.requires_grad]
    gouts = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not outs:
        res = (None,) * len(inputs)
    else:
        res = autograd.grad(outs, inputs, gouts, retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [zeros_like(i) if g is None else (g if create_graph else g.detach()) for g, i in zip(res, inputs)]


def _detach_tree(tree, keep: bool):
    if keep:
        return tree
    leaves, rebuild = _flatten(tree)
    return rebuild([x.detach() if isinstance(x, _C.TensorBase) else x for x in leaves])


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


def hessian(func: Callable, argnums=0):
    """The Hessian of func with respect to the arguments in argnums: jacrev of jacrev
    (torch's is jacfwd of jacrev; the values are the same)."""
    return jacrev(jacrev(func, argnums), argnums)


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
