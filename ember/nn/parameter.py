"""Parameter (a tensor a Module registers as a learnable weight) and Buffer (a tensor it
registers as state); UninitializedParameter and UninitializedBuffer, the placeholders of
the lazy modules until their first forward gives them a shape."""
from __future__ import annotations

from .. import _C
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


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



class UninitializedTensorMixin:
    """What the uninitialized parameter and buffer share: an empty tensor that keeps the
    dtype (and requires_grad) the tensor will have, until materialize gives it a shape and
    turns it into a cls_to_become. Its shape is an error, as in torch; ops on it see an
    empty tensor (torch's check of every op on it has no counterpart here)."""

    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Becomes a cls_to_become of this shape (uninitialized memory), dtype and device
        (by default the ones it was made with)."""
        self.data = _C.empty(tuple(shape), dtype=self.data.dtype if dtype is None else dtype,
                             device=self.data.device if device is None else device)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def to(self, *args, **kwargs):
        # a conversion (Module.to, .double(), ...) gives an uninitialized tensor of the new dtype and device
        result = Tensor.to(self, *args, **kwargs)
        if result is self or (result.dtype == self.dtype and result.device == self.device):
            return self
        return self._like(result.dtype, result.device)

    def __repr__(self, *, tensor_contents=None) -> str:
        return f"<{self.__class__.__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self._like(self.dtype, self.device)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return self.__class__, (self.requires_grad,)


def is_lazy(param) -> bool:
    """Whether param is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's weight before its first
    forward); materialize(shape) makes it a Parameter.

    >>> p = ember.nn.parameter.UninitializedParameter(); p.materialize((2, 3)); type(p).__name__, p.shape
    ('Parameter', ember.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        param = Tensor.__new__(cls, _C.empty(0, dtype=dtype, device=device))
        param.requires_grad_(requires_grad)
        return param

    def _like(self, dtype, device):
        return UninitializedParameter(self.requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; materialize(shape) makes it a Tensor."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        buf = Tensor.__new__(cls, _C.empty(0, dtype=dtype, device=device))
        buf.requires_grad_(requires_grad)
        buf.persistent = persistent
        buf._is_buffer = True
        return buf

    def _like(self, dtype, device):
        return UninitializedBuffer(self.requires_grad, device, dtype, getattr(self, "persistent", True))
