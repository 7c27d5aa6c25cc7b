"""The image functions: pad, interpolate, pixel_shuffle and pixel_unshuffle, composed of
indexing ops (index_select, cat, reshape/permute), so autograd gives torch's gradients;
interpolate's 'area' mode is adaptive average pooling."""
from __future__ import annotations

import math
from typing import Optional

from ... import _C
from .pool import adaptive_avg_pool1d, adaptive_avg_pool2d


def _check_factor(name: str, arg: str, factor) -> None:
    if not isinstance(factor, int) or isinstance(factor, bool):
        raise TypeError(f"{name}(): argument '{arg}' (position 2) must be int, not {type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {arg}, but got {factor}")


def pixel_shuffle(input, upscale_factor: int):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r): each group of r^2 channels becomes an
    r x r block of pixels (r = upscale_factor).

    >>> ember.nn.functional.pixel_shuffle(ember.arange(4.).view(4, 1, 1), 2).tolist()
    [[[0.0, 1.0], [2.0, 3.0]]]
    """
    _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    r = upscale_factor
    *batch, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    if r == 1:
        return input.clone()
    nb = len(batch)
    # (*, C, r, r, H, W) -> (*, C, H, r, W, r) -> (*, C, H * r, W * r)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int):
    """The inverse of pixel_shuffle: (*, C, H * r, W * r) -> (*, C * r^2, H, W).

    >>> ember.nn.functional.pixel_unshuffle(ember.arange(4.).view(1, 2, 2), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    r = downscale_factor
    *batch, c, h, w = input.shape
    if h % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    if r == 1:
        return input.clone()
    nb = len(batch)
    # (*, C, H, r, W, r) -> (*, C, r, r, H, W) -> (*, C * r^2, H, W)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def _pad_constant(input, pad, value):
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        # negative padding crops
        if before < 0 or after < 0:
            start = max(-before, 0)
            length = out.size(dim) - start - max(-after, 0)
            out = out.narrow(dim, start, length)
        pieces = []
        for amount in (max(before, 0), max(after, 0)):
            shape = list(out.shape)
            shape[dim] = amount
            pieces.append(_C.full(shape, value, dtype=out.dtype) if amount else None)
        if pieces[0] is not None or pieces[1] is not None:
            out = _C.cat([t for t in (pieces[0], out, pieces[1]) if t is not None], dim)
    return out


def _pad_indices(size: int, before: int, after: int, mode: str):
    """For reflect/replicate/circular padding of one dim: which input index each output
    position reads."""
    idx = _C.arange(-before, size + after)
    if mode == "replicate":
        return idx.clamp(0, size - 1)
    if mode == "circular":
        return idx.remainder(size)
    period = 2 * (size - 1)  # reflect without repeating the edge
    if period == 0:
        return idx * 0
    idx = idx.remainder(period)
    return _C.where(idx >= size, period - idx, idx)


def pad(input, pad, mode: str = "constant", value: Optional[float] = None):
    """Pads the last len(pad) // 2 dims: pad = (left, right, top, bottom, ...), last dim
    first. mode 'constant' fills with value (0) and takes negative pads as crops;
    'reflect', 'replicate' and 'circular' read the input's own values.

    >>> ember.nn.functional.pad(ember.ones(1, 2), (1, 0)).tolist()
    [[0.0, 1.0, 1.0]]
    """
    pad = list(pad)
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        for i in range(len(pad) // 2):
            dim = input.dim() - 1 - i
            if input.size(dim) + pad[2 * i] + pad[2 * i + 1] < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        return _pad_constant(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n_pad = len(pad) // 2
    if n_pad > 3 or input.dim() not in (n_pad + 1, n_pad + 2):
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    out = input
    for i in range(n_pad):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        size = out.size(dim)
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({before}, {after}) at dimension {dim} of input "
                               f"{list(input.shape)}")
        if mode == "circular" and (before > size or after > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out = out.index_select(dim, _pad_indices(size, before, after, mode))
    return out


def _resize_plan(input, size, scale_factor, recompute_scale_factor):
    """(output sizes, the scale factors torch's kernels use, None where in / out applies)."""
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if len(sizes) != dim:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(input.shape[2:])} and output size of {size}.")
        return [int(s) for s in sizes], [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * dim
    if len(scales) != dim:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input with "
                         f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}.")
    sizes = [int(math.floor(input.size(2 + i) * float(s))) for i, s in enumerate(scales)]
    return sizes, [None] * dim if recompute_scale_factor else [float(s) for s in scales]


def _source_positions(n_in: int, n_out: int, scale, how, dtype):
    """Where each output position samples the input, in torch's float arithmetic. how:
    "nearest" (floor), "nearest-exact" (the nearest pixel center), or for the linear
    modes "align_corners" or "half_pixel" (the source coordinate, clamped at 0)."""
    from ... import arange, float32, tensor

    ct = float32 if dtype != _C.float64 else dtype
    if how == "align_corners":
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
    dst = arange(n_out, dtype=ct)
    ratio_t = tensor(ratio, dtype=ct)
    if how == "nearest":
        return _C.clamp((dst * ratio_t).floor(), None, n_in - 1).long()
    if how == "nearest-exact":
        return _C.clamp(((dst + 0.5) * ratio_t).floor(), None, n_in - 1).long()
    if how == "align_corners":
        return dst * ratio_t
    return _C.clamp((dst + 0.5) * ratio_t - 0.5, 0.0, None)


def _resample(x, dim: int, n_out: int, scale, how: str):
    """Resizes dim of x by the rule `how` (see _source_positions)."""
    n_in = x.size(dim)
    src = _source_positions(n_in, n_out, scale, how, x.dtype)
    if how in ("nearest", "nearest-exact"):
        return x.index_select(dim, src)
    i0 = src.long()  # src >= 0: truncation is floor
    i1 = _C.clamp(i0 + 1, None, n_in - 1)
    l1 = (src - i0.to(src.dtype)).to(x.dtype)
    shape = [1] * x.dim()
    shape[dim] = n_out
    l1 = l1.view(shape)
    return x.index_select(dim, i0) * (1 - l1) + x.index_select(dim, i1) * l1


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False):
    """Resizes (N, C, L) or (N, C, H, W): mode 'nearest' (torch's floor rule),
    'nearest-exact', 'linear' or 'bilinear' (align_corners as torch's), as index_select and
    lerps (so autograd gives torch's gradients); 'area' is adaptive average pooling."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias:
        raise NotImplementedError("interpolate: antialias is not supported by ember yet")
    if mode == "area" and size is None:
        recompute_scale_factor = True  # as torch: area needs the integer output size only
    sizes, scales = _resize_plan(input, size, scale_factor, recompute_scale_factor)
    if mode == "area" and input.dim() in (3, 4):
        return (adaptive_avg_pool1d if input.dim() == 3 else adaptive_avg_pool2d)(input, sizes)
    supported = {(m, d) for m in ("nearest", "nearest-exact") for d in (3, 4)} | {("linear", 3), ("bilinear", 4)}
    if (mode, input.dim()) not in supported:
        if mode in ("linear", "bilinear", "trilinear", "bicubic") and input.dim() in (3, 4, 5):
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{ {'linear': 3, 'bilinear': 4, 'trilinear': 5, 'bicubic': 4}[mode] }D input")
        raise NotImplementedError(f"interpolate: mode '{mode}' on {input.dim()}-D input is not supported by ember yet")
    how = ("align_corners" if align_corners else "half_pixel") if mode in ("linear", "bilinear") else mode
    out = input
    for i, (n, s) in enumerate(zip(sizes, scales)):
        out = _resample(out, 2 + i, n, s, how)
    return out
