"""batch_norm, layer_norm, group_norm and rms_norm, the native normalization ops; and,
composed, normalize (input / its L_p norm along a dim), instance_norm (batch_norm of the
(1, N*C, *) view) and local_response_norm (an average pool across channels)."""
from __future__ import annotations

from typing import Optional

from ... import _C
from ...autograd.grad_mode import no_grad


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


def _repeat(t, n: int):
    return None if t is None else t.repeat(n)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5):
    """Normalizes each channel of each sample of (N, C, *) over its own spatial dims: the
    batch norm of the (1, N*C, *) view, the per-sample running statistics averaged over N
    into running_mean/running_var (in place, momentum); use_input_stats=False normalizes
    with the running ones.

    >>> ember.nn.functional.instance_norm(ember.tensor([[[1., 3.]]])).tolist()
    [[[-0.9999949932098389, 0.9999949932098389]]]
    """
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.size()}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or higher input (got {input.dim()}D input)")
    n, c = input.size(0), input.size(1)
    mean_n, var_n = _repeat(running_mean, n), _repeat(running_var, n)
    out = _C.native_batch_norm(input.reshape(1, n * c, *input.shape[2:]), _repeat(weight, n), _repeat(bias, n),
                               mean_n, var_n, use_input_stats, momentum, eps)[0]
    if use_input_stats and running_mean is not None:
        with no_grad():
            running_mean.copy_(mean_n.view(n, c).mean(0))
            running_var.copy_(var_n.view(n, c).mean(0))
    return out.view(input.shape)


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
    """input / (k + alpha * mean of input^2 over the size channels around each)^beta (the
    window zero-padded at the channel ends).

    >>> ember.nn.functional.local_response_norm(ember.ones(1, 2, 1), 2, alpha=1., beta=1., k=0.).tolist()
    [[[2.0], [1.0]]]
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    from .pool import avg_pool2d
    from .vision import pad

    n, c = input.size(0), input.size(1)
    sq = (input * input).reshape(n, 1, c, -1)
    integral = not sq.is_floating_point()
    if integral:
        sq = sq.to(_C.get_default_dtype())
    div = avg_pool2d(pad(sq, (0, 0, size // 2, (size - 1) // 2)), (size, 1), stride=1).reshape(input.shape)
    if integral:  # torch averages integer squares in integer arithmetic: the window's sum // size
        div = (div * size).round().div(size, rounding_mode="floor")
    return input / (div * alpha + k) ** beta
