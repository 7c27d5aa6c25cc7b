"""Parameter (a tensor a Module registers as a learnable weight) and Buffer (a tensor it
registers as state)."""
from __future__ import annotations

from .. import _C
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


def _rebuild_parameter(cls, data, requires_grad, state):
    param = cls(data, requires_grad)
    if state:
        param.__dict__.update(state)
    return param


class Parameter(Tensor):
    """A tensor that, assigned as a Module attribute, becomes one of its parameters
    (listed by parameters(), saved by state_dict()). It shares data's memory and requires
    grad unless told otherwise; ops on it return plain tensors.

    >>> ember.nn.Parameter(ember.zeros(2)).requires_grad
    True
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, _C.TensorBase):
            raise TypeError(f"Parameter(): expected data to be a Tensor, got {type(data).__name__}")
        param = Tensor.__new__(cls, data)  # the same memory, without data's history
        param.requires_grad_(requires_grad)
        return param

    def __repr__(self, *, tensor_contents=None):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return _rebuild_parameter, (type(self), self.data, self.requires_grad, dict(self.__dict__))


class _BufferMeta(type):
    # Buffer(t) returns a plain tensor marked as a buffer; isinstance sees the mark
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, _C.TensorBase) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that, assigned as a Module attribute, becomes one of its buffers
    (persistent ones are saved by state_dict()). Buffer(t) is t detached, marked.

    >>> isinstance(ember.nn.Buffer(ember.zeros(2)), ember.nn.Buffer)
    True
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

