"""The pooling functions torch also exposes at its top level (torch.max_pool1d, ...), with
the signatures they have there: no return_indices, and adaptive_max_pool1d returning
(values, indices). Loaded on first use through ember.__getattr__."""
from __future__ import annotations

from .nn._functional import pool as _pool


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The largest element of each window of (N, C, L) or (C, L)."""
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The largest element of each window of (N, C, H, W) or (C, H, W)."""
    return _pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The largest element of each window of (N, C, D, H, W) or (C, D, H, W).

    >>> ember.max_pool3d(ember.arange(8.).view(1, 2, 2, 2), 2).tolist()
    [[[[7.0]]]]
    """
    return _pool.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(max_pool1d, the index of each maximum along L)."""
    return _pool.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    """The mean of each window of (N, C, L) or (C, L)."""
    return _pool.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) to output_size positions."""
    return _pool.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """(max pooling of (N, C, L) or (C, L) to output_size positions, the maxima's indices)."""
    return _pool.adaptive_max_pool1d_with_indices(input, output_size)
