"""LayerNorm, GroupNorm and RMSNorm: normalization over each sample's own features, the
same in training and eval."""
from __future__ import annotations

import numbers
from typing import Optional

from ... import _C
from .. import functional as F
from .. import init
from ...autograd.function import Function
from ..parameter import Parameter
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


def _register_affine(module, shape, affine: bool, bias: bool, dtype, device) -> None:
    """The parameters weight and (with bias) bias of shape when affine, else those names
    registered as None; _reset_affine gives them their values. Shared by the
    normalizations here and batch norm."""
    module.register_parameter("weight", Parameter(_C.empty(shape, dtype=dtype, device=device)) if affine else None)
    module.register_parameter("bias", Parameter(_C.empty(shape, dtype=dtype, device=device))
                              if affine and bias else None)


def _reset_affine(module) -> None:
    """weight to ones and bias to zeros, those that exist."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


def _shape_tuple(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LocalResponseNorm(Module):
    """input / (k + alpha * mean of input^2 over the size neighbouring channels)^beta.

    >>> ember.nn.LocalResponseNorm(2, alpha=1., beta=1., k=0.)(ember.ones(1, 2, 1)).tolist()
    [[[2.0], [1.0]]]
    """

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _window_sums(t, lo, hi):
    """For each channel c, the sum of t[:, lo[c]..hi[c]] (inclusive; empty where hi < lo)."""
    c = t.size(1)
    sums = _C.cat([_C.zeros_like(t[:, :1]), t.cumsum(1)], 1)  # sums[:, i]: t[:, :i].sum(1)
    lo = [min(max(i, 0), c) for i in lo]
    hi = [min(max(i + 1, 0), c) for i in hi]
    return sums[:, hi] - sums[:, [min(a, b) for a, b in zip(lo, hi)]]


class _CrossMapLRN2dFunction(Function):
    """torch's legacy cross-channel LRN, as its CrossMapLRN2d computes it: the forward
    window of channel c is [c - p + 1, c + p - 1] (p = (size - 1) // 2 + 1) but keeps
    channel 0 in once it has passed, and the backward is the legacy one (its window
    [c - q, c + size - 1 - q], q = (size + 1) // 2), not the forward's derivative."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.size(1)
        pre = (size - 1) // 2 + 1
        sq = input * input
        sums = _window_sums(sq, [max(c - pre + 1, 0) if c > pre else 0 for c in range(channels)],
                            [c + pre - 1 for c in range(channels)])
        stuck = [c for c in range(channels) if c > pre]  # channel 0 is never taken out of their windows
        if stuck:
            sums[:, stuck] += sq[:, :1]
        scale = sums * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.save_for_backward(input, output, scale)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        inverse = (size + 1) // 2
        ratio = grad_output * output / scale
        accum = _window_sums(ratio, [c - inverse for c in range(channels)],
                             [c + size - 1 - inverse for c in range(channels)])
        grad = scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / size) * input * accum
        return grad, None, None, None, None


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel local response normalization of 4-D inputs, with its
    exact (quirky) windows and backward; LocalResponseNorm is the regular one.

    >>> ember.nn.CrossMapLRN2d(3)(ember.ones(1, 2, 1, 1)).shape
    ember.Size([1, 2, 1, 1])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    """Normalizes the last len(normalized_shape) dims of each sample to mean 0, variance 1,
    then (elementwise_affine) * weight + bias, both of normalized_shape.

    >>> ember.nn.LayerNorm(2)(ember.tensor([[1., 3.]])).tolist()
    [[-0.9999949932098389, 0.9999949932098389]]
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, self.normalized_shape, elementwise_affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Splits the channels of (N, C, *) into num_groups groups and normalizes each group of
    each sample; then (affine) * weight + bias per channel.

    >>> ember.nn.GroupNorm(2, 4)(ember.randn(3, 4, 5)).shape
    ember.Size([3, 4, 5])
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, num_channels, affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, then (if
    elementwise_affine) * weight. eps=None takes the input dtype's epsilon.

    >>> ember.nn.RMSNorm(2)(ember.tensor([[3., 4.]])).shape
    ember.Size([1, 2])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps: Optional[float] = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
