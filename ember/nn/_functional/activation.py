"""The activations. Most are native ops of the unary elementwise family (their backward
ops binary ones); relu, tanh and sigmoid are the Tensor methods; threshold, the shrinks,
softsign, tanhshrink and prelu are compositions (where() gives torch's gradients)."""
from __future__ import annotations

from ... import _C
from ._utils import _legacy_name
from ... import _autocast


def relu(input, inplace: bool = False):
    """max(input, 0).

    >>> ember.nn.functional.relu(ember.tensor([-1., 2.])).tolist()
    [0.0, 2.0]
    """
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def _needs_grad(t) -> bool:
    return t.requires_grad and _C.is_grad_enabled()


def _apply(fn, input, inplace: bool):
    """fn(input), or with inplace input overwritten by it. When autograd records, fn runs
    on a copy, so that what its backward saved is not the tensor being overwritten."""
    if not inplace:
        return fn(input)
    return input.copy_(fn(input.clone() if _needs_grad(input) else input))


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """input where input > threshold, value elsewhere."""
    return _apply(lambda x: _C.where(x > threshold, x, value), input, inplace)


def threshold_(input, threshold: float, value: float):
    return _apply(lambda x: _C.where(x > threshold, x, value), input, True)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """x clamped to [min_val, max_val] (the gradient is 0 at the bounds)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.hardtanh_(min_val, max_val) if inplace else _C.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), as torch computes it."""
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    return input.elu_(alpha) if inplace else _C.elu(input, alpha)


def elu_(input, alpha: float = 1.0):
    return input.elu_(alpha)


def selu(input, inplace: bool = False):
    """scale * elu(x, alpha) with the SELU constants."""
    return input.selu_() if inplace else _C.selu(input)


def selu_(input):
    return input.selu_()


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    return input.celu_(alpha) if inplace else _C.celu(input, alpha)


def celu_(input, alpha: float = 1.0):
    return input.celu_(alpha)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """x for x > 0, negative_slope * x otherwise."""
    return input.leaky_relu_(negative_slope) if inplace else _C.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope: float = 0.01):
    return input.leaky_relu_(negative_slope)


@_autocast.lower_precision
def prelu(input, weight):
    """input where positive, weight * input elsewhere; weight has one element or one per
    channel (dim 1 of the input).

    >>> ember.nn.functional.prelu(ember.tensor([-2., 3.]), ember.tensor([0.25])).tolist()
    [-0.5, 3.0]
    """
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.size(1) if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dtype != input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_legacy_name(input.dtype)} and "
                           f"{_legacy_name(weight.dtype)}")
    # (C) -> (1, C, 1, ...): one slope per channel
    w = weight.reshape(-1) if weight.numel() != 1 else weight.reshape(())
    if input.dim() >= 2 and weight.numel() != 1:
        w = w.view(1, -1, *([1] * (input.dim() - 2)))
    # where(x > 0, ...) gives torch's gradients: 1 or weight for the input, x or 0 for weight
    return _C.where(input > 0, input, w * input)


def gelu(input, approximate: str = "none"):
    """x * Phi(x); approximate='tanh' for the tanh formula."""
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):
    """x * sigmoid(x)."""
    return input.silu_() if inplace else _C.silu(input)


def mish(input, inplace: bool = False):
    """x * tanh(softplus(x))."""
    return input.mish_() if inplace else _C.mish(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta x)) / beta, linear above threshold."""
    return _C.softplus(input, beta, threshold)


def hardswish(input, inplace: bool = False):
    """x * relu6(x + 3) / 6."""
    return input.hardswish_() if inplace else _C.hardswish(input)


def hardsigmoid(input, inplace: bool = False):
    """relu6(x + 3) / 6."""
    return input.hardsigmoid_() if inplace else _C.hardsigmoid(input)


def logsigmoid(input):
    """log(sigmoid(x))."""
    return _C.log_sigmoid(input)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def softsign(input):
    """input / (1 + |input|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """input - tanh(input)."""
    return input - input.tanh()


def hardshrink(input, lambd: float = 0.5):
    """input where |input| > lambd, 0 elsewhere."""
    return _C.where((input > lambd) | (input < -lambd), input, 0)


def softshrink(input, lambd: float = 0.5):
    """input - lambd above lambd, input + lambd below -lambd, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _C.where(input > lambd, input - lambd, _C.where(input < -lambd, input + lambd, 0))


def glu(input, dim: int = -1):
    """a * sigmoid(b), a and b the two halves of input along dim.

    >>> ember.nn.functional.glu(ember.tensor([2., 0.])).tolist()
    [1.0]
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    wrapped = dim + input.dim() if dim < 0 else dim
    if not 0 <= wrapped < input.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         f"but got {dim})")
    if input.size(wrapped) % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {wrapped} is size {input.size(wrapped)}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{_legacy_name(input.dtype)}'")
    a, b = input.chunk(2, wrapped)
    return a * b.sigmoid()


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False):
    """x where x > 0, else a * x: a drawn uniformly from [lower, upper] per element in
    training, (lower + upper) / 2 otherwise.

    >>> ember.nn.functional.rrelu(ember.tensor([-2., 3.]), 0.25, 0.25).tolist()
    [-0.5, 3.0]
    """
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(input, lower: float, upper: float, training: bool, inplace: bool, generator):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = _C.empty(input.shape, dtype=input.dtype, device=input.device).uniform_(lower, upper, generator=generator)
    return _apply(lambda x: _C.where(x > 0, x, x * slope), input, inplace)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    return rrelu(input, lower, upper, training, True)
