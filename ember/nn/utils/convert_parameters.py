"""Parameters to one flat vector and back."""
from __future__ import annotations

from ... import _C

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-D tensor (a copy).

    >>> ember.nn.utils.parameters_to_vector([ember.ones(2, 2), ember.zeros(1)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0]
    """
    return _C.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Makes each parameter's data a view of its slice of vec (the inverse of
    parameters_to_vector)."""
    if not isinstance(vec, _C.TensorBase):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
