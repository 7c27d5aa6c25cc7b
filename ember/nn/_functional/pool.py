"""Max, average and adaptive pooling: the native 2-d and 3-d pooling ops; the 1-d forms
run the 2-d ones on a (..., 1, L) view of the input. Compositions: max_unpool (a scatter
into zeros), lp_pool (torch's formula over avg_pool) and fractional_max_pool (a gather
of every window, then a max)."""
from __future__ import annotations

import math

from ... import _C, arange, cat, full, int64, rand, relu
from ... import _autocast


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
    if not return_indices and not input.is_floating_point():
        # torch's index-free 1-d kernel is float-only; its indexed path takes integers
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{_type_name(input)}'")
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
            if n == 3:  # the op says it in torch's words
                return [int(s) for s in output_size]
            raise RuntimeError(f"adaptive pooling: output_size must be {n}, but got {len(output_size)}")
        sizes = list(output_size)
    else:
        sizes = [output_size] * n
    return [input.size(input.dim() - n + i) if s is None else int(s) for i, s in enumerate(sizes)]


def _check_mean_dtype(input, sizes):
    """torch computes an adaptive average to size 1 as a mean, refusing integers as mean does."""
    if all(s == 1 for s in sizes) and not input.is_floating_point():
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_type_name(input)}")


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to output_size (windows [floor(i H / oh), ceil((i + 1) H / oh)))."""
    sizes = _adaptive_size(input, output_size, 2)
    _check_mean_dtype(input, sizes)
    return _C.adaptive_avg_pool2d(input, sizes)


def adaptive_avg_pool1d(input, output_size):
    x = _as_2d(input, "adaptive_avg_pool1d")
    size = _adaptive_size(input, output_size, 1)[0]
    _check_mean_dtype(input, [size])
    return _C.adaptive_avg_pool2d(x, [1, size]).squeeze(-2)


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


_TYPE_NAMES = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool",
               "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def _type_name(t) -> str:
    return _TYPE_NAMES[str(t.dtype).split(".")[-1]]


def _three(v, message):
    """A 3-d pooling argument (an int, or a tuple of one or three) as a list, None as None."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        if len(v) not in (1, 3):
            raise RuntimeError(message)
        return [int(x) for x in v]
    return [int(v)]


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """(max_pool3d, the flat index of each maximum in its (D, H, W) volume)."""
    return _C.max_pool3d_with_indices(
        input, _three(kernel_size, "max_pool3d: kernel_size must either be a single int, or a tuple of three ints"),
        _three(_stride_or_none(stride),
               "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints"),
        _three(padding, "max_pool3d: padding must either be a single int, or a tuple of three ints"),
        _three(dilation, "max_pool3d: dilation must be either a single int, or a tuple of three ints"), ceil_mode)


@_autocast.fp32
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The largest element of each window of (N, C, D, H, W) or (C, D, H, W).

    >>> ember.nn.functional.max_pool3d(ember.arange(8.).view(1, 2, 2, 2), 2).tolist()
    [[[[7.0]]]]
    """
    out, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None):
    """The mean of each window of (N, C, D, H, W) or (C, D, H, W)."""
    return _C.avg_pool3d(
        input, _three(kernel_size, "avg_pool3d: kernel_size must be a single int, or a tuple of three ints"),
        _three(_stride_or_none(stride), "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints"),
        _three(padding, "avg_pool3d: padding must be a single int, or a tuple of three ints"), ceil_mode,
        count_include_pad, divisor_override)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to output_size."""
    sizes = _adaptive_size(input, output_size, 3)
    _check_mean_dtype(input, sizes)
    return _C.adaptive_avg_pool3d(input, sizes)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices: bool = False):
    return _C.adaptive_max_pool3d(input, _adaptive_size(input, output_size, 3))


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to output_size, with the indices when return_indices."""
    out, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


# ---- max_unpool: each value written back at the flat index max_pool gave it ----

def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    n = len(kernel_size)
    default = [(input.size(input.dim() - n + d) - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        sizes = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
        sizes = output_size
    for d in range(n):
        if sizes[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={sizes[d]}")
    return [int(s) for s in sizes]


def _max_unpool(input, indices, output_size, stride, name: str):
    """input's values scattered into zeros of (..., *output_size) at the flat in-plane indices."""
    n = len(output_size)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, but got a tensor "
                           f"with {input.dim()} dimensions.")
    if str(indices.dtype) != "ember.int64":
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {_type_name(indices)}" if n == 2 else ""))
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if n == 3 and any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{name}\" not implemented for '{_type_name(input)}'")
    batch = list(input.shape[:-n])
    plane = math.prod(output_size)
    plane_in = math.prod(input.shape[-n:])
    flat_indices = indices.reshape(batch + [plane_in])
    if flat_indices.numel() and not flat_indices.is_meta:
        bad = flat_indices[(flat_indices < 0) | (flat_indices >= plane)]
        if bad.numel():  # the first; torch's threads report whichever they meet
            raise RuntimeError(f"Found an invalid max index: {bad[0].item()} (output volumes are of size "
                               f"{'x'.join(str(s) for s in output_size)})")
    out = input.new_zeros(batch + [plane]).scatter(-1, flat_indices, input.reshape(batch + [plane_in]))
    return out.view(batch + list(output_size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool1d: each value back at its index along L, zeros elsewhere.

    >>> x, i = ember.nn.functional.max_pool1d(ember.tensor([[1., 3., 2., 0.]]), 2, return_indices=True)
    >>> ember.nn.functional.max_unpool1d(x, i, 2).tolist()
    [[0.0, 3.0, 2.0, 0.0]]
    """
    kernel_size = _tuple(kernel_size, 1)
    stride = _tuple(stride, 1) if stride is not None else kernel_size
    size = _unpool_output_size(input, kernel_size, stride, _tuple(padding, 1), output_size)
    # torch unpools a (..., L, 1) view with its 2-d op
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1], stride, "max_unpool2d").squeeze(-1)


@_autocast.fp32
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool2d: each value back at its flat (H, W) index, zeros elsewhere."""
    kernel_size = _tuple(kernel_size, 2)
    stride = _tuple(stride, 2) if stride is not None else kernel_size
    size = _unpool_output_size(input, kernel_size, stride, _tuple(padding, 2), output_size)
    return _max_unpool(input, indices, size, stride, "max_unpool2d")


@_autocast.fp32
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool3d: each value back at its flat (D, H, W) index, zeros elsewhere."""
    kernel_size = _tuple(kernel_size, 3)
    stride = _tuple(stride, 3) if stride is not None else kernel_size
    size = _unpool_output_size(input, kernel_size, stride, _tuple(padding, 3), output_size)
    return _max_unpool(input, indices, size, stride, "max_unpool3d")


# ---- lp_pool: (sum of x^p over the window)^(1/p), torch's formula over avg_pool ----

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n: int, max_pool, avg_pool):
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    # the sign keeps relu's zero gradient where a window's sum is zero or negative
    return (out.sign() * relu(out.abs())).mul(math.prod(_tuple(kernel_size, n))).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of (N, C, L) or (C, L).

    >>> ember.nn.functional.lp_pool1d(ember.tensor([[3., 4.]]), 2, 2).tolist()
    [[5.0]]
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, max_pool1d, avg_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of (N, C, H, W) or (C, H, W)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, max_pool2d, avg_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of (N, C, D, H, W) or (C, D, H, W)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, max_pool3d, avg_pool3d)


# ---- fractional_max_pool: max pooling over pseudo-random windows (Graham, 2014) ----

def _fractional_starts(sample, in_size: int, out_size: int, k: int):
    """Each window's first position along one dim, (N, C, out_size) int64, from the
    (N, C) samples in [0, 1): trunc((i + u) * alpha) - trunc(u * alpha) for i < out - 1,
    alpha = (in - k) / (out - 1), computed in the samples' dtype as torch does; the last
    window ends at the input's end."""
    last = full(list(sample.shape) + [min(out_size, 1)], in_size - k, dtype=int64, device=sample.device)
    if out_size <= 1:
        return last
    alpha = sample.new_full([], float(in_size - k)) / (out_size - 1)
    i = arange(out_size - 1, dtype=sample.dtype, device=sample.device)
    u = sample.unsqueeze(-1)
    starts = ((i + u) * alpha).trunc().long() - (u * alpha).trunc().long()
    return cat([starts, last], -1)


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, n: int, name: str):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    kernel = _tuple(kernel_size, n)
    if output_size is None:
        if n == 2 and len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _tuple(output_ratio, n)
        output_size = [int(input.size(input.dim() - n + d) * ratio[d]) for d in range(n)]
    out_size = _tuple(output_size, n)
    if len(out_size) != n or len(kernel) != n:
        what = "output_size" if len(out_size) != n else "kernel_size"
        raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of Ints")
    if _random_samples is None:
        if not input.is_floating_point():  # torch draws the samples in the input's dtype
            raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{_type_name(input)}'")
        batch = 1 if input.dim() == n + 1 else input.size(0)
        _random_samples = rand(batch, input.size(-n - 1), n, dtype=input.dtype, device=input.device)
    op = name if n == 2 else "fractional_max_pool3d_out"
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    for d in range(1, input.dim()):
        if input.size(d) == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {d} being empty.")
    if _random_samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for '{_type_name(input)}'")
    if _random_samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {_random_samples.dim()}")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    if _random_samples.size(0) < x.size(0):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if _random_samples.size(1) != x.size(1):
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if _random_samples.size(2) != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got {_random_samples.size(2)}.")
    in_size = list(x.shape[2:])
    dim_names = ("height", "width") if n == 2 else ("time", "height", "width")
    for d in range(n):
        if kernel[d] <= 0:
            raise RuntimeError(f"{op}(): kernel_size must be greater than zero, but got {list(kernel)}")
        # 2-d windows may end at the input's end; torch's 3-d check is strict
        fits = out_size[d] + kernel[d] - 1 <= in_size[d] if n == 2 else out_size[d] + kernel[d] - 1 < in_size[d]
        if not fits:
            raise RuntimeError(f"{op}(): pool {dim_names[d]} {kernel[d]} too large relative to input "
                               f"{dim_names[d]} {in_size[d]}")
    N, C = x.shape[0], x.shape[1]
    # torch's 2-d samples are (width, height); its 3-d ones (time, height, width)
    sample_of = (1, 0) if n == 2 else (0, 1, 2)
    samples = _random_samples[:N]
    # (N, C, out_d + k_d) positions -> one flat in-plane index per (output, window element)
    flat = None
    for d in range(n):
        starts = _fractional_starts(samples[:, :, sample_of[d]], in_size[d], out_size[d], kernel[d])
        pos = starts.unsqueeze(-1) + arange(kernel[d], device=x.device)  # (N, C, out_d, k_d)
        shape = [N, C] + [1] * (2 * n)
        shape[2 + d], shape[2 + n + d] = out_size[d], kernel[d]
        pos = pos.reshape(shape)
        flat = pos if flat is None else flat * in_size[d] + pos
    planes_out, window = math.prod(out_size), math.prod(kernel)
    flat = flat.expand([N, C] + list(out_size) + list(kernel)).reshape(N, C, planes_out, window)
    if planes_out == 0 or N == 0:
        out = x.new_zeros([N, C] + list(out_size))
        indices = flat.new_zeros([N, C] + list(out_size))
    else:
        values = x.reshape(N, C, -1).gather(2, flat.reshape(N, C, -1)).view(N, C, planes_out, window)
        out, best = values.max(-1)
        indices = flat.gather(-1, best.unsqueeze(-1)).squeeze(-1)
        out, indices = out.view([N, C] + list(out_size)), indices.view([N, C] + list(out_size))
    if not batched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return out, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2,
                                "fractional_max_pool2d")


@_autocast.fp32
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                          _random_samples=None):
    """Max pooling of (N, C, H, W) or (C, H, W) over pseudo-random windows of kernel_size
    that give output_size (or output_ratio of the input's size); _random_samples, (N, C, 2)
    in [0, 1), fixes the windows.

    >>> ember.nn.functional.fractional_max_pool2d(ember.ones(1, 1, 5, 5), 2, output_size=3).shape
    ember.Size([1, 1, 3, 3])
    """
    out, indices = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                                      _random_samples=_random_samples)
    return (out, indices) if return_indices else out


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3,
                                "fractional_max_pool3d")


@_autocast.fp32
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
                          _random_samples=None):
    """fractional_max_pool2d over (N, C, D, H, W) or (C, D, H, W); _random_samples is (N, C, 3)."""
    out, indices = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                                      _random_samples=_random_samples)
    return (out, indices) if return_indices else out
