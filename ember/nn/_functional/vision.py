"""The image functions: pad, interpolate, grid_sample, affine_grid, pixel_shuffle,
pixel_unshuffle and channel_shuffle, composed of indexing ops (index_select, gather, cat,
reshape/permute) and products, so autograd gives torch's gradients; interpolate's 'area'
mode is adaptive average pooling, its bicubic and antialiased modes a product with a
(out, in) weight matrix per resized dim."""
from __future__ import annotations

import math
import warnings
from typing import Optional

from ... import _C
from ...autograd.function import Function
from .pool import adaptive_avg_pool1d, adaptive_avg_pool2d
from ... import _autocast


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
            pieces.append(_C.full(shape, value, dtype=out.dtype, device=out.device) if amount else None)
        if pieces[0] is not None or pieces[1] is not None:
            out = _C.cat([t for t in (pieces[0], out, pieces[1]) if t is not None], dim)
    return out


def _pad_indices(size: int, before: int, after: int, mode: str, device):
    """For reflect/replicate/circular padding of one dim: which input index each output
    position reads (negative pads crop; circular wraps around what is left), on device."""
    if mode == "circular":
        start = max(-before, 0)
        kept = size - start - max(-after, 0)
        return _C.arange(-max(before, 0), kept + max(after, 0), device=device).remainder(kept) + start
    idx = _C.arange(-before, size + after, device=device)
    if mode == "replicate":
        return idx.clamp(0, size - 1)
    period = 2 * (size - 1)  # reflect without repeating the edge
    if period == 0:
        return idx * 0
    idx = idx.remainder(period)
    return _C.where(idx >= size, period - idx, idx)


_PAD_DIMS_HELP = ("Supported combinations for non-constant padding:\n"
                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                  "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                  "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _check_nonconstant_pad(input, pad, mode: str) -> None:
    n_pad = len(pad) // 2
    if n_pad > 3 or input.dim() not in (n_pad + 1, n_pad + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
                                  + _PAD_DIMS_HELP)
    shape = list(input.shape)
    if mode == "circular":
        for i in range(n_pad):
            size, before, after = shape[-1 - i], pad[2 * i], pad[2 * i + 1]
            if before > size or after > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if size + min(before, 0) + min(after, 0) <= 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return
    kernel = {"reflect": "reflection", "replicate": "replication"}[mode]
    if input.dtype == _C.bool:
        raise NotImplementedError(f"\"{kernel}_pad{n_pad}d\" not implemented for 'Bool'")
    non_batch = shape[1:] if input.dim() == n_pad + 2 else shape
    if 0 in non_batch:
        raise RuntimeError(f"Expected {n_pad + 1}D or {n_pad + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {shape}")
    names = "DHW"[3 - n_pad:]
    for i in range(n_pad):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (before >= shape[dim] or after >= shape[dim]):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input {shape}")
    out_sizes = [shape[-n_pad + k] + pad[2 * (n_pad - 1 - k)] + pad[2 * (n_pad - 1 - k) + 1] for k in range(n_pad)]
    if min(out_sizes) < 1:
        ins = ", ".join(f"{n}: {shape[-n_pad + k]}" for k, n in enumerate(names))
        outs = " ".join(f"{n}: {out_sizes[k]}" for k, n in enumerate(names))
        raise RuntimeError(f"input ({ins}) is too small. Calculated output {outs}")


def pad(input, pad, mode: str = "constant", value: Optional[float] = None):
    """Pads the last len(pad) // 2 dims: pad = (left, right, top, bottom, ...), last dim
    first. mode 'constant' fills with value (0), any number of dims; 'reflect',
    'replicate' and 'circular' read the input's own values, for the last 1, 2 or 3 dims
    of an input with or without a batch dim. Negative pads crop. One index_select (or
    cat) per padded dim, so autograd gives torch's gradients.

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
    _check_nonconstant_pad(input, pad, mode)
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        out = out.index_select(dim, _pad_indices(out.size(dim), pad[2 * i], pad[2 * i + 1], mode, out.device))
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


def _source_positions(n_in: int, n_out: int, scale, how, dtype, device):
    """Where each output position samples the input, in torch's float arithmetic. how:
    "nearest" (floor), "nearest-exact" (the nearest pixel center), or for the linear
    modes "align_corners" or "half_pixel" (the source coordinate, clamped at 0)."""
    from ... import arange, float32, tensor

    ct = float32 if dtype != _C.float64 else dtype
    if how == "align_corners":
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
    dst = arange(n_out, dtype=ct, device=device)
    ratio_t = tensor(ratio, dtype=ct, device=device)
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
    src = _source_positions(n_in, n_out, scale, how, x.dtype, x.device)
    if how in ("nearest", "nearest-exact"):
        return x.index_select(dim, src)
    i0 = src.long()  # src >= 0: truncation is floor
    i1 = _C.clamp(i0 + 1, None, n_in - 1)
    l1 = (src - i0.to(src.dtype)).to(x.dtype)
    shape = [1] * x.dim()
    shape[dim] = n_out
    l1 = l1.view(shape)
    return x.index_select(dim, i0) * (1 - l1) + x.index_select(dim, i1) * l1


def _cubic_matrix(n_in: int, n_out: int, scale, align_corners: bool, dtype, device):
    """The (n_out, n_in) matrix of torch's bicubic resize of one dim: four taps around the
    source position (not clamped at 0), with A = -0.75 weights, taps past an edge reading
    the edge pixel."""
    from ... import arange, float32, tensor, zeros

    ct = float32 if dtype != _C.float64 else dtype
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = arange(n_out, dtype=ct, device=device) * tensor(ratio, dtype=ct, device=device)
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
        src = (arange(n_out, dtype=ct, device=device) + 0.5) * tensor(ratio, dtype=ct, device=device) - 0.5
    base = src.floor()
    taps = _C.stack(_cubic_weights(src - base), 1)
    idx = _C.clamp(base.long().unsqueeze(1) + arange(-1, 3, device=device), 0, n_in - 1)
    return zeros(n_out, n_in, dtype=ct, device=device).scatter_add(1, idx, taps)


def _aa_matrix(n_in: int, n_out: int, scale, align_corners: bool, mode: str, dtype, device):
    """The (n_out, n_in) matrix of torch's antialiased resize of one dim (PIL's): a
    triangle (bilinear), cubic A = -0.5 (bicubic) or Lanczos-3 filter, widened by the
    downscale factor, each row normalized to sum 1."""
    from ... import arange, float64, zeros

    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
    half_width = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode]
    support = half_width * ratio if ratio >= 1.0 else half_width
    inv = 1.0 / ratio if ratio >= 1.0 else 1.0
    center = (arange(n_out, dtype=float64, device=device) + 0.5) * ratio
    lo = _C.clamp((center - support + 0.5).long(), 0, None)
    hi = _C.clamp((center + support + 0.5).long(), None, n_in)
    width = int(math.ceil(support)) * 2 + 1
    idx = lo.unsqueeze(1) + arange(width, device=device)
    valid = idx < hi.unsqueeze(1)
    x = ((idx.to(float64) - center.unsqueeze(1) + 0.5) * inv).abs()
    if mode == "bilinear":
        w = _C.clamp(1 - x, 0, None)
    elif mode == "lanczos":  # sinc(x) sinc(x / 3) on |x| < 3
        safe = _C.where(x == 0, x.new_ones(()), x * math.pi)
        w = _C.where(x == 0, x.new_ones(()), (safe.sin() / safe) * ((safe / 3).sin() / (safe / 3)))
        w = _C.where(x < 3, w, x * 0)
    else:
        a = -0.5
        w = _C.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                   _C.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, x * 0))
    w = w * valid
    total = w.sum(1, keepdim=True)
    w = w / _C.where(total == 0, total.new_ones(()), total)
    m = zeros(n_out, n_in + width, dtype=float64, device=device).scatter_add(1, idx, w)
    return m[:, :n_in].to(dtype if dtype == _C.float64 else _C.float32)


def _apply_matrix(x, dim: int, m):
    return x.movedim(dim, -1).matmul(m.t()).movedim(-1, dim)


_INTERP_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False):
    """Resizes (N, C, L), (N, C, H, W) or (N, C, D, H, W) to size, or by scale_factor:
    mode 'nearest' (torch's floor rule), 'nearest-exact', 'linear', 'bilinear',
    'trilinear', 'bicubic' (A = -0.75), 'lanczos' (antialias only) or 'area';
    align_corners as torch's; antialias=True (bilinear, bicubic, lanczos; 4-D) filters as
    PIL does when downscaling.

    One dim at a time: the nearest and linear modes by index_select and lerps, bicubic and
    the antialiased modes by a product with a (out, in) weight matrix, area by adaptive average
    pooling; autograd gives torch's gradients.

    >>> ember.nn.functional.interpolate(ember.tensor([[[0., 2.]]]), size=3, mode='linear',
    ...                                 align_corners=True).tolist()
    [[[0.0, 1.0, 2.0]]]
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode in _INTERP_DIMS and mode != "bicubic" and input.dim() in (3, 4, 5) and input.dim() != _INTERP_DIMS[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_INTERP_DIMS[mode]}D input")
    known = ("nearest", "nearest-exact", "area", "lanczos") + tuple(_INTERP_DIMS)
    if input.dim() not in (3, 4, 5) or mode not in known or (mode in ("bicubic", "lanczos") and input.dim() != 4):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode == "area" and size is None:
        recompute_scale_factor = True  # as torch: area needs the integer output size only
    sizes, scales = _resize_plan(input, size, scale_factor, recompute_scale_factor)
    if any(n <= 0 for n in sizes) or any(n <= 0 for n in input.shape[2:]):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"{tuple(input.shape[2:])} output {tuple(sizes)}")
    if mode == "area":
        from .. import functional as F  # adaptive_avg_pool3d may live in another topic module

        pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d,
                5: getattr(F, "adaptive_avg_pool3d", None)}[input.dim()]
        if pool is None:
            raise NotImplementedError("interpolate: mode 'area' on 5-D input needs adaptive_avg_pool3d")
        return pool(input, sizes)
    if mode in ("nearest", "nearest-exact", "linear", "bilinear", "trilinear") and not antialias:
        how = mode if mode.startswith("nearest") else ("align_corners" if align_corners else "half_pixel")
        out = input
        for i, (n, s) in enumerate(zip(sizes, scales)):
            n_in = out.size(2 + i)
            # torch's kernels copy a dim that keeps its size whatever the scale (the
            # 2-d nearest kernel also halves the index of a dim that doubles)
            if n == n_in and (how != "nearest" or input.dim() == 4):
                continue
            if how == "nearest" and input.dim() == 4 and n == 2 * n_in:
                out = out.index_select(2 + i, _C.arange(n, device=out.device) // 2)
                continue
            out = _resample(out, 2 + i, n, s, how)
        return out.clone() if out is input else out
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"compute_indices_weights_cubic" not implemented for \'{_type_name(input.dtype)}\'')
    x = input if input.dtype in (_C.float32, _C.float64) else input.float()
    for i, (n, s) in enumerate(zip(sizes, scales)):
        n_in = x.size(2 + i)
        if antialias and n == n_in:  # kept as it is, as torch's kernel does
            continue
        if antialias:
            m = _aa_matrix(n_in, n, s, align_corners, mode, x.dtype, x.device)
        else:
            m = _cubic_matrix(n_in, n, s, align_corners, x.dtype, x.device)
        x = _apply_matrix(x, 2 + i, m.to(x.dtype))
    return x.clone() if x is input else x.to(input.dtype)


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """Deprecated name of interpolate."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(input, size, scale_factor, mode='nearest')."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def channel_shuffle(input, groups: int):
    """(N, g * k, *) -> (N, k * g, *): the channels, read as a (g, k) grid, are transposed
    (groups = g), as ShuffleNet mixes grouped convolutions' outputs.

    >>> ember.nn.functional.channel_shuffle(ember.arange(4.).view(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    return _channel_shuffle(input, groups, "channel_shuffle")


def _channel_shuffle(input, groups: int, name: str):
    if not isinstance(groups, int) or isinstance(groups, bool):
        raise TypeError(f"{name}(): argument 'groups' (position 2) must be int, not {type(groups).__name__}")
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


def native_channel_shuffle(input, groups: int):
    """channel_shuffle under torch's native name; as torch's, it has no derivative (backward
    through it raises).

    >>> ember.native_channel_shuffle(ember.arange(4.).view(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    if input.requires_grad and _C.is_grad_enabled():
        return _NoDerivative.apply(input, groups)
    return _channel_shuffle(input, groups, "native_channel_shuffle")


class _NoDerivative(Function):
    """native_channel_shuffle under autograd: torch declares no derivative for it."""

    @staticmethod
    def forward(ctx, input, groups):
        return _channel_shuffle(input, groups, "native_channel_shuffle")

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


def _clip(x, size: int):
    """x clamped to [0, size - 1], with gradient 0 at and beyond both borders (torch's
    grid sampler counts the borders as outside)."""
    hi = size - 1
    return _C.where(x <= 0, x.new_zeros(()), _C.where(x >= hi, x.new_full((), hi), x))


def _reflect(x, twice_low: int, twice_high: int):
    """x reflected into [twice_low / 2, twice_high / 2] as often as it takes."""
    if twice_low == twice_high:
        return x * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    y = (x - low).abs()
    flips = (y.detach() / span).floor()
    extra = _C.fmod(y, span)
    return _C.where(_C.remainder(flips, 2) == 0, extra + low, (span + low) - extra)


def _grid_coordinate(coord, size: int, padding_mode: str, align_corners: bool, pad: bool = True):
    """A normalized grid coordinate in [-1, 1] as a pixel position of an axis of `size`
    pixels, with padding_mode's border rule applied (pad=False: unnormalized only)."""
    if align_corners:
        x = ((coord + 1) / 2) * (size - 1)
    else:
        x = ((coord + 1) * size - 1) / 2
    return _pad_coordinate(x, size, padding_mode, align_corners) if pad else x


def _pad_coordinate(x, size: int, padding_mode: str, align_corners: bool):
    if padding_mode == "border":
        return _clip(x, size)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        return _clip(x, size)
    return x


def _gather_points(flat, coords, sizes):
    """flat (N, C, prod(sizes)) read at integer positions coords (each (N, P) float, one
    per spatial dim): (N, C, P) values and the (N, 1, P) mask of positions inside."""
    inside = None
    linear = None
    for c, size in zip(coords, sizes):
        ok = (c >= 0) & (c <= size - 1)
        inside = ok if inside is None else inside & ok
        i = _C.clamp(_C.nan_to_num(c, 0.0, 0.0, 0.0), 0, size - 1).long()
        linear = i if linear is None else linear * size + i
    n, ch = flat.shape[0], flat.shape[1]
    values = flat.gather(2, linear.unsqueeze(1).expand(n, ch, linear.shape[1]))
    return values, inside.unsqueeze(1)


def _cubic_weights(t):
    """The four cubic-convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 for a
    fractional position t."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@_autocast.fp32
def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros", align_corners=None):
    """Samples input (N, C, H, W) or (N, C, D, H, W) at the normalized positions of grid
    (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), x (width) first, -1 and 1 the
    outer edges (align_corners=False) or the corner pixels' centers (True).

    mode 'bilinear' (trilinear on 5-D), 'nearest' or 'bicubic' (4-D only); padding_mode
    'zeros', 'border' or 'reflection' decides what lies outside. A composition of gathers
    and products: the gradients are torch's, for input and grid ('nearest' gives the grid
    zeros).

    >>> F = ember.nn.functional
    >>> F.grid_sample(ember.arange(4.).view(1, 1, 2, 2), ember.zeros(1, 1, 1, 2), align_corners=True).item()
    1.5
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.size(0) != grid.size(0):
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    d = input.dim() - 2
    if grid.size(-1) != d:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {d} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.size(i) == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found {_type_name(grid.dtype)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"grid_sampler_{d}d_cpu_kernel_impl" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    out_dtype = input.dtype
    if out_dtype not in (_C.float32, _C.float64):  # float16/bfloat16 compute in float32
        input, grid = input.float(), grid.float()
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    out_spatial = list(grid.shape[1:-1])
    flat = input.reshape(n, c, math.prod(sizes))
    g = grid.reshape(n, math.prod(out_spatial), d)
    # spatial dim k (0: the first of D/H/W) is read by the grid's component d - 1 - k
    raw = [g[:, :, d - 1 - k] for k in range(d)]
    if mode == "bicubic":
        pos = [_grid_coordinate(x, s, padding_mode, align_corners, pad=False) for x, s in zip(raw, sizes)]
        base = [p.detach().floor() for p in pos]
        weights = [_cubic_weights(p - b) for p, b in zip(pos, base)]
        out = None
        for i in range(4):
            y = _pad_coordinate(base[0] + (i - 1), sizes[0], padding_mode, align_corners)
            for j in range(4):
                x = _pad_coordinate(base[1] + (j - 1), sizes[1], padding_mode, align_corners)
                values, inside = _gather_points(flat, [y, x], sizes)
                w = (weights[0][i] * weights[1][j]).unsqueeze(1) * inside
                term = values * w
                out = term if out is None else out + term
    else:
        pos = [_grid_coordinate(x, s, padding_mode, align_corners) for x, s in zip(raw, sizes)]
        if mode == "nearest":
            near = [p.detach().round() for p in pos]
            values, inside = _gather_points(flat, near, sizes)
            # the grid's gradient is zeros, not absent, as torch's: where() on a mask that
            # is all False adds 0 and passes no gradient to the grid
            never = pos[0].detach() < -math.inf
            out = values * inside + _C.where(never, sum(pos), pos[0].new_zeros(())).unsqueeze(1)
        else:
            low = [p.detach().floor() for p in pos]
            out = None
            for corner in range(1 << d):
                coords, w = [], None
                for k in range(d):
                    up = (corner >> (d - 1 - k)) & 1
                    coords.append(low[k] + up)
                    wk = pos[k] - low[k] if up else (low[k] + 1) - pos[k]
                    w = wk if w is None else w * wk
                values, inside = _gather_points(flat, coords, sizes)
                term = values * (w.unsqueeze(1) * inside)
                out = term if out is None else out + term
    return out.reshape(n, c, *out_spatial).to(out_dtype)


def _type_name(dtype) -> str:
    name = str(dtype).split(".")[-1]
    return _TYPE_NAMES.get(name, name)


_TYPE_NAMES = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool",
               "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def _linspace_from_neg_one(n: int, align_corners: bool, dtype, device):
    from ... import linspace, zeros

    if n <= 1:
        return zeros(1, dtype=dtype, device=device)
    steps = linspace(-1, 1, n, dtype=dtype, device=device)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps theta (N, 2, 3) or (N, 3, 4) for an output of
    size (N, C, H, W) or (N, C, D, H, W): each output pixel's normalized (x, y[, z]), with a
    1 appended, times theta. For grid_sample.

    >>> F = ember.nn.functional
    >>> F.affine_grid(ember.tensor([[[1., 0, 0], [0, 1, 0]]]), (1, 1, 1, 2), align_corners=False).tolist()
    [[[[-0.5, 0.0], [0.5, 0.0]]]]
    """
    from ... import ones, stack

    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {tuple(size)}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {tuple(size)}. "
                             f"Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {tuple(size)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {tuple(size)}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {theta.shape[-1]}] but got: [{theta.shape[0]}, {theta.shape[-1]}].")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.")
    d = len(spatial)
    axes = [_linspace_from_neg_one(s, align_corners, theta.dtype, theta.device) for s in spatial]
    # base[..., j] is x, y (, z): the component j varies along spatial dim d - 1 - j
    comps = []
    for j in range(d):
        k = d - 1 - j
        shape = [1] * d
        shape[k] = spatial[k]
        comps.append(axes[k].view(shape).expand(spatial))
    comps.append(ones(spatial, dtype=theta.dtype, device=theta.device))
    base = stack(comps, -1).reshape(1, -1, d + 1)
    grid = base.matmul(theta.transpose(1, 2))
    return grid.view(size[0], *spatial, d)
