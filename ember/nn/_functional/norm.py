"""batch_norm, layer_norm, group_norm and rms_norm, the native normalization ops; and
normalize (input / its L_p norm along a dim), composed."""
from __future__ import annotations

from typing import Optional

from ... import _C


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Normalizes over every dim but 1; in training, with the batch's statistics, folding
    them into running_mean/running_var (in place, momentum); else with the running ones."""
    if training:
        size = input.size()
        count = size[0]
        for s in size[2:]:
            count *= s
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    return _C.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalizes over the last dims (normalized_shape), then weight * x + bias."""
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return _C.native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalizes each group of num_groups channels of (N, C, *)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.size(0), input.size(1)
    spatial = 1
    for s in input.shape[2:]:
        spatial *= s
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    if (n * c // num_groups) * spatial == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{[n * c // num_groups, num_groups] + list(input.shape[2:])}")
    return _C.native_group_norm(input, weight, bias, n, c, spatial, num_groups, eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps: Optional[float] = None):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims (eps: the dtype's epsilon)."""
    if isinstance(normalized_shape, int):
        normalized_shape = [normalized_shape]
    return _C._fused_rms_norm(input, list(normalized_shape), weight, eps)[0]


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """input / max(||input||_p over dim, eps).

    >>> ember.nn.functional.normalize(ember.tensor([[3., 4.]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _C.div(input, denom, out=out)
