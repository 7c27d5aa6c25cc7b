"""ember.autograd.graph: the Node base of grad_fn objects, hooks on saved tensors
(saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks) and
register_multi_grad_hook.

Every grad_fn is an instance of a class named as torch names it (MulBackward0,
AccumulateGrad, a custom Function's <Name>Backward); `Node` is their abstract base, as
torch's is: isinstance and issubclass hold for every node class without it being a real
base."""
from __future__ import annotations

import abc
import functools
import threading
from typing import Any, Callable

from .. import _C

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "increment_version"]


class Node(abc.ABC):
    """The abstract base of autograd graph nodes (a tensor's grad_fn)."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name (MulBackward0)."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """(node, input_nr) for each input of the recorded op."""

    @property
    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict kept with the node."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after the node; it may return new grad_inputs."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """fn(grad_outputs) runs before the node; it may return new grad_outputs."""

    @classmethod
    def __subclasshook__(cls, C):
        if cls is Node:
            if issubclass(C, _C._Node):
                return True
            from .function import BackwardCFunction
            if issubclass(C, BackwardCFunction):
                return True
        return NotImplemented


_hooks_disabled = threading.local()


class saved_tensors_hooks:
    """Inside this context, every tensor a node saves for backward is passed to
    pack_hook, and what it returns is kept instead; unpack_hook turns it back into a
    tensor when backward (or grad_fn._saved_<name>) needs it."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        message = getattr(_hooks_disabled, "message", None)
        if message is not None:
            raise RuntimeError(message)
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc) -> None:
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (as copies when they live elsewhere) and come
    back to their device on unpack; pin_memory is accepted (ember's CPU tensors need no
    pinning)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t):
            return (t.device, t.cpu())

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside this context, saved_tensors_hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self.prev = getattr(_hooks_disabled, "message", None)
        _hooks_disabled.message = self.error_message

    def __exit__(self, *exc) -> None:
        _hooks_disabled.message = self.prev

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


class _MultiHandle:
    def __init__(self, handles) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """mode "all": fn(grads) once per backward, after the gradients of every tensor in
    `tensors` that the backward reaches were computed (None for the others). mode "any":
    fn(grad) with the first gradient computed among them."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for t in tensors:
        if not t.requires_grad:
            raise RuntimeError("register_multi_grad_hook: every tensor must require grad")
    lock = threading.Lock()
    if mode == "any":
        state = {"fired": set()}

        def make(i):
            def hook(grad):
                key = _C._current_graph_task_id()
                with lock:
                    if key in state["fired"]:
                        return None
                    state["fired"] = {key}
                fn(grad)
                return None
            return hook
        return _MultiHandle([t.register_hook(make(i)) for i, t in enumerate(tensors)])

    n = len(tensors)
    state = {"task": None, "grads": None, "count": 0, "expected": 0}

    def make_all(i):
        def hook(grad):
            key = _C._current_graph_task_id()
            with lock:
                if state["task"] != key:
                    state["task"] = key
                    state["grads"] = [None] * n
                    state["count"] = 0
                    state["expected"] = sum(1 for t in tensors if _C._will_engine_execute(t))
                state["grads"][i] = grad
                state["count"] += 1
                done = state["count"] == state["expected"]
                grads = state["grads"]
            if done:
                fn(tuple(grads))
            return None
        return hook
    return _MultiHandle([t.register_hook(make_all(i)) for i, t in enumerate(tensors)])


class allow_mutation_on_saved_tensors:
    """Accepted for compatibility; ember detects in-place writes to saved tensors
    through their version and raises, as torch does outside this context."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def increment_version(tensor) -> None:
    """Counts an in-place write made behind autograd's back, so that nodes that saved the
    tensor see it changed."""
    tensors = (tensor,) if isinstance(tensor, _C.TensorBase) else tuple(tensor)
    for t in tensors:
        _C._increment_version(t)
