"""conv1d/2d/3d, conv_transpose1d/2d/3d, and unfold/fold as grouped convolutions with an
identity weight: each is one call of the native convolution op."""
from __future__ import annotations

from ... import _C
from ... import _autocast


def _tuple(value, n: int, name: str):
    """int or sequence -> a list of n ints (a sequence of one int repeats it)."""
    if isinstance(value, (list, tuple)):
        value = [int(v) for v in value]
        if len(value) == 1:
            return value * n
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={value}")
        return value
    return [int(value)] * n


def _unbatched(input, weight, name: str):
    """(input as a batch, whether it was one sample): (C, *) inputs get a batch dim."""
    nd = weight.dim() - 2
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    if input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
                           f"input of size: {list(input.shape)}")
    return input, False


def _conv(input, weight, bias, stride, padding, dilation, groups, nd: int, name: str):
    if weight.dim() != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D weight, but got weight of size {list(weight.shape)}")
    x, unbatched = _unbatched(input, weight, name)
    stride, dilation = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
    crop = []  # dims whose 'same' padding is one larger on the right: computed with both sides larger, cropped
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0] * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
            padding = [(t + 1) // 2 for t in totals]
            crop = [i for i, t in enumerate(totals) if t % 2]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple(padding, nd, "padding")
    out = _C.convolution(x, weight, bias, stride, padding, dilation, False, [0] * nd, groups)
    for i in crop:  # the left side got one more than 'same' asks for: its first output goes
        out = out.narrow(2 + i, 1, out.size(2 + i) - 1)
    return out.squeeze(0) if unbatched else out


@_autocast.lower_precision
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C_in, L) or (C_in, L) with weight (C_out, C_in / groups, k).

    >>> ember.nn.functional.conv1d(ember.ones(1, 1, 3), ember.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@_autocast.lower_precision
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution of (N, C_in, H, W) or (C_in, H, W); padding may be 'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@_autocast.lower_precision
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of (N, C_in, D, H, W) or (C_in, D, H, W) with weight (C_out, C_in / groups,
    kd, kh, kw); padding may be 'same' or 'valid'.

    >>> ember.nn.functional.conv3d(ember.ones(1, 1, 3, 3, 3), ember.ones(1, 1, 2, 2, 2)).shape
    ember.Size([1, 1, 2, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    if weight.dim() != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D weight, but got weight of size {list(weight.shape)}")
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x, unbatched = _unbatched(input, weight, name)
    out = _C.convolution(x, weight, bias, _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding"),
                         _tuple(dilation, nd, "dilation"), True, _tuple(output_padding, nd, "output_padding"), groups)
    return out.squeeze(0) if unbatched else out


@_autocast.lower_precision
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose of conv1d: weight (C_in, C_out / groups, k)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


@_autocast.lower_precision
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose of conv2d: weight (C_in, C_out / groups, kh, kw)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


@_autocast.lower_precision
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose of conv3d: weight (C_in, C_out / groups, kd, kh, kw)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")


def _eye_weight(channels: int, kh: int, kw: int, like):
    """The (C * kh * kw, 1, kh, kw) weight whose grouped convolution copies each tap:
    unfold as a convolution."""
    from ... import eye

    k = kh * kw
    return eye(k, dtype=like.dtype, device=like.device).view(k, 1, kh, kw).repeat(channels, 1, 1, 1)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding windows of (N, C, H, W) as columns: (N, C * kh * kw, L)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    x = input.unsqueeze(0) if input.dim() == 3 else input
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    c = x.size(1)
    cols = _C.convolution(x, _eye_weight(c, kh, kw, x), None, _tuple(stride, 2, "stride"),
                          _tuple(padding, 2, "padding"), _tuple(dilation, 2, "dilation"), False, [0, 0], c)
    cols = cols.reshape(x.size(0), c * kh * kw, -1)
    return cols.squeeze(0) if input.dim() == 3 else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: (N, C * kh * kw, L) columns summed into (N, C, H, W)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    x = input.unsqueeze(0) if input.dim() == 2 else input
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    (h, w), (sh, sw) = _tuple(output_size, 2, "output_size"), _tuple(stride, 2, "stride")
    (ph, pw), (dh, dw) = _tuple(padding, 2, "padding"), _tuple(dilation, 2, "dilation")
    if x.size(1) % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={x.size(1)} and kernel_size=({kh}, {kw})")
    c = x.size(1) // (kh * kw)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh * ow != x.size(2):
        raise RuntimeError(f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), "
                           f"padding=({ph}, {pw}), stride=({sh}, {sw}), expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {oh} * {ow} = {oh * ow}, but got "
                           f"input.size(2)={x.size(2)}.")
    extra = [h - ((oh - 1) * sh - 2 * ph + dh * (kh - 1) + 1), w - ((ow - 1) * sw - 2 * pw + dw * (kw - 1) + 1)]
    out = _C.convolution(x.reshape(x.size(0), c * kh * kw, oh, ow), _eye_weight(c, kh, kw, x), None, [sh, sw],
                         [ph, pw], [dh, dw], True, extra, c)
    return out.squeeze(0) if input.dim() == 2 else out


@_autocast.lower_precision
def conv_tbc(input, weight, bias, pad: int = 0):
    """1-D convolution in (time, batch, channels) layout: input (T, B, C_in), weight
    (k, C_in, C_out), bias (C_out), pad steps of zeros on both ends of time (negative pad
    crops); output (T + 2 * pad - k + 1, B, C_out). conv1d of the (B, C_in, T) view.

    >>> ember.conv_tbc(ember.ones(4, 2, 3), ember.ones(2, 3, 5), ember.zeros(5), 1).shape
    ember.Size([5, 2, 5])
    """
    for position, (name, value) in enumerate((("input", input), ("weight", weight), ("bias", bias)), 1):
        if not isinstance(value, _C.TensorBase):
            raise TypeError(f"conv_tbc(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    if not isinstance(pad, int) or isinstance(pad, bool):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not {type(pad).__name__}")
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    time, batch, in_channels = input.shape
    width, _, out_channels = weight.shape
    if in_channels != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dtype_name(input)} and "
                           f"{_dtype_name(weight)}")
    out_time = time + 2 * pad - width + 1
    if out_time < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_time}: "
                           f"[{out_time}, {batch}, {out_channels}]")
    if out_time == 0:
        return input.new_zeros((0, batch, out_channels)) + bias
    if pad < 0:  # cropping both ends of time, then an unpadded convolution
        input, pad = input.narrow(0, -pad, time + 2 * pad), 0
    # (T, B, C_in) -> (B, C_in, T); (k, C_in, C_out) -> (C_out, C_in, k)
    out = _C.convolution(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, [1], [pad], [1], False, [0], 1)
    return out.permute(2, 0, 1).contiguous()  # (B, C_out, T') -> (T', B, C_out)


def _dtype_name(t) -> str:
    """A tensor's dtype as torch's messages name it ('Float', 'Double', 'Long')."""
    return _C.empty((0,), dtype=t.dtype).type().split(".")[-1].replace("Tensor", "")
