"""Optimizer: parameter groups, per-parameter state, and torch's state_dict format (state
keyed by integer parameter ids, groups listing those ids); step hooks."""
from __future__ import annotations

import copy
import functools
from collections import OrderedDict, defaultdict
from itertools import chain
from typing import Any, Callable, Optional

from .. import _C
from ..autograd import _zero_grad
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """The default of a hyperparameter every group must set."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks: dict = OrderedDict()
_global_optimizer_post_hooks: dict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """hook(optimizer, args, kwargs) runs before every optimizer's step; it may return
    (new_args, new_kwargs)."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """hook(optimizer, args, kwargs) runs after every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _no_grad():
    from ..autograd.grad_mode import no_grad

    return no_grad()


def _typename(obj) -> str:
    if isinstance(obj, _C.TensorBase):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ in ("", "builtins") else f"{cls.__module__}.{cls.__qualname__}"


def _scalar_dtype():
    """The dtype of the 'step' counters: float64 when that is the default dtype, else float32."""
    return _C.float64 if _C.get_default_dtype() == _C.float64 else _C.float32


def _hooked_step(step):
    """Wraps a subclass's step so that the pre- and post-hooks (global, then the
    optimizer's own) run around it, once: a step calling super().step() does not run
    them again."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if self.__dict__.get("_in_step"):
            return step(self, *args, **kwargs)
        self.__dict__["_in_step"] = True
        try:
            return _run_hooked(self, step, args, kwargs)
        finally:
            self.__dict__["_in_step"] = False

    wrapper._hooked = True
    return wrapper


def _run_hooked(self, step, args, kwargs):
    for hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
        result = hook(self, args, kwargs)
        if result is not None:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                                   f"{result}.")
            args, kwargs = result
    out = step(self, *args, **kwargs)
    for hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
        hook(self, args, kwargs)
    return out


class Optimizer:
    """Base class of the optimizers. params is an iterable of tensors, of (name, tensor)
    pairs, or of dicts (parameter groups) with a 'params' entry and per-group
    hyperparameters that override defaults.

    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> opt = ember.optim.SGD([p], lr=0.1)
    >>> opt.state_dict()["param_groups"][0]["params"]
    [0]
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__ and not getattr(cls.__dict__["step"], "_hooked", False):
            cls.step = _hooked_step(cls.__dict__["step"])

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict = OrderedDict()
        self._optimizer_step_post_hooks: dict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_state_dict_post_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: dict = OrderedDict()
        if isinstance(params, _C.TensorBase):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"

    # ---- groups ----

    def add_param_group(self, param_group: dict) -> None:
        """Adds a group of parameters (a dict with 'params' and optional hyperparameters;
        missing ones come from defaults). A parameter may belong to one group only."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, _C.TensorBase):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, _C.TensorBase):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            import warnings

            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)

        existing = set()
        for group in self.param_groups:
            existing.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{which} to the optimizer")
        if not existing.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients and steps ----

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of all parameters: to None (default), or to zeros."""
        _zero_grad((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Optional[Callable[[], float]] = None):
        """One update of every parameter that has a gradient; closure (re-evaluating the
        loss, with grad enabled) is called first and its result returned."""
        raise NotImplementedError

    @staticmethod
    def _evaluate(closure):
        if closure is None:
            return None
        from ..autograd.grad_mode import enable_grad

        with enable_grad():
            return closure()

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """hook(optimizer, args, kwargs) runs before step; it may return (new_args, new_kwargs)."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """hook(optimizer, args, kwargs) runs after step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # ---- state_dict ----

    def _register_ordered(self, hooks: dict, hook, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer) runs before state_dict()."""
        return self._register_ordered(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer, state_dict) runs after state_dict(); it may return a new one."""
        return self._register_ordered(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer, state_dict) runs before load_state_dict(); it may return a new one."""
        return self._register_ordered(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """hook(optimizer) runs after load_state_dict()."""
        return self._register_ordered(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self) -> dict:
        """{'state': {param id: its state}, 'param_groups': [group settings with 'params' as
        the ids]}; ids number the parameters in group order. The state's tensors are not
        copied."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        ids: dict = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                ids.setdefault(id(p), len(ids))
            packed["params"] = [ids[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(ids[id(k)] if isinstance(k, _C.TensorBase) else k): v for k, v in self.state.items()}
        result = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            out = hook(self, result)
            if out is not None:
                result = out
        return result

    @staticmethod
    def _cast_state(param, value, key=None):
        """A saved state value made to fit param: tensors move to param's device, floating
        ones take its dtype ('step' counters stay as they are, on the CPU); containers
        are cast entry by entry."""
        if isinstance(value, _C.TensorBase):
            if key == "step":
                return value
            if param.is_floating_point():
                return value.to(param.device, param.dtype)
            return value.to(param.device)
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)) and not isinstance(value, str):
            return type(value)(Optimizer._cast_state(param, v, key=key) for v in value)
        return value

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores state_dict() output: groups must match in number and sizes; the state
        is mapped onto this optimizer's parameters by position."""
        state_dict = dict(state_dict)
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            out = hook(self, state_dict)
            if out is not None:
                state_dict = out
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        id_map = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v)
            else:
                state[k] = v

        def updated(group, saved):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            return saved

        self.__setstate__({"state": state, "param_groups": [updated(g, s) for g, s in zip(groups, saved_groups)]})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---- helpers for the subclasses ----

    def _init_step_state(self, state: dict) -> Any:
        """A fresh 'step' counter, a 0-dim float tensor on the CPU (whatever the default
        device) as torch keeps it."""
        state["step"] = _C.zeros((), dtype=_scalar_dtype(), device="cpu")
        return state["step"]
