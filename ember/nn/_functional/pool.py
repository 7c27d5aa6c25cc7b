"""Max, average and adaptive pooling: the native 2-D pooling ops; the 1-D forms run them
on a (..., 1, L) view of the input."""
from __future__ import annotations

from ... import _C


def _stride_or_none(stride):
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return None
    return stride


def _pool_list(v, n, name):
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        if len(v) not in (1, n):
            raise RuntimeError(f"{name} must either be a single int, or a tuple of {n} ints")
        return [int(x) for x in v]
    return [int(v)]


def _as_2d(input, name: str):
    """A (N, C, L) or (C, L) input as (…, 1, L), for the 2-D kernels."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{name}() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    return input.unsqueeze(-2)


def _one(v, name):
    """A 1-D pooling argument (int or 1-tuple) as a (1, v) pair."""
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise RuntimeError(f"{name} must be a single int, or a tuple of one int")
        v = v[0]
    return int(v)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """(max_pool2d, the flat index of each maximum in its (H, W) plane)."""
    return _C.max_pool2d_with_indices(input, _pool_list(kernel_size, 2, "max_pool2d: kernel_size"),
                                      _pool_list(_stride_or_none(stride), 2, "max_pool2d: stride"),
                                      _pool_list(padding, 2, "max_pool2d: padding"),
                                      _pool_list(dilation, 2, "max_pool2d: dilation"), ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest element of each window of (N, C, H, W) or (C, H, W).

    >>> ember.nn.functional.max_pool2d(ember.arange(16.).view(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    x = _as_2d(input, "max_pool1d")
    stride = _stride_or_none(stride)
    out, indices = _C.max_pool2d_with_indices(
        x, [1, _one(kernel_size, "max_pool1d: kernel_size")], None if stride is None else [1, _one(stride, "stride")],
        [0, _one(padding, "padding")], [1, _one(dilation, "dilation")], ceil_mode)
    return out.squeeze(-2), indices.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest element of each window of (N, C, L) or (C, L)."""
    out, indices = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None):
    """The mean of each window of (N, C, H, W) or (C, H, W)."""
    return _C.avg_pool2d(input, _pool_list(kernel_size, 2, "avg_pool2d: kernel_size"),
                         _pool_list(_stride_or_none(stride), 2, "avg_pool2d: stride"),
                         _pool_list(padding, 2, "avg_pool2d: padding"), ceil_mode, count_include_pad,
                         divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    """The mean of each window of (N, C, L) or (C, L)."""
    x = _as_2d(input, "avg_pool1d")
    stride = _stride_or_none(stride)
    return _C.avg_pool2d(x, [1, _one(kernel_size, "avg_pool1d: kernel_size")],
                         None if stride is None else [1, _one(stride, "stride")], [0, _one(padding, "padding")],
                         ceil_mode, count_include_pad, None).squeeze(-2)


def _adaptive_size(input, output_size, n: int):
    """output_size (int, or a tuple whose None entries keep the input's size) as n ints."""
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != n:
            raise RuntimeError(f"adaptive pooling: output_size must be {n}, but got {len(output_size)}")
        sizes = list(output_size)
    else:
        sizes = [output_size] * n
    return [input.size(input.dim() - n + i) if s is None else int(s) for i, s in enumerate(sizes)]


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to output_size (windows [floor(i H / oh), ceil((i + 1) H / oh)))."""
    return _C.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_avg_pool1d(input, output_size):
    x = _as_2d(input, "adaptive_avg_pool1d")
    return _C.adaptive_avg_pool2d(x, [1, _adaptive_size(input, output_size, 1)[0]]).squeeze(-2)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices: bool = False):
    return _C.adaptive_max_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max pooling to output_size, with the indices when return_indices."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d_with_indices(input, output_size, return_indices: bool = False):
    x = _as_2d(input, "adaptive_max_pool1d")
    out, indices = _C.adaptive_max_pool2d(x, [1, _adaptive_size(input, output_size, 1)[0]])
    return out.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    out, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, indices) if return_indices else out
