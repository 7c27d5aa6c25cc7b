"""ember.nn.functional: the layers as functions, with torch.nn.functional's signatures.

The heavy numerics (softmax, the losses, convolution, pooling, normalization, embedding
and most activations) are native ops with native derivatives, wrapped in
ember.nn._native_functional and re-exported here. What is left in this file is composed of
ember's ops, and autograd differentiates the composition."""
from __future__ import annotations

import warnings
from typing import Optional

from .. import _C
from ._native_functional import *  # noqa: F401,F403
from ._native_functional import __all__ as _native_all
from ._native_functional import _legacy_name

__all__ = [
    *_native_all, "linear", "bilinear", "identity", "relu", "relu_", "tanh", "sigmoid", "threshold", "threshold_",
    "softsign", "tanhshrink", "hardshrink", "softshrink", "dropout", "dropout1d", "dropout2d", "dropout3d", "one_hot",
    "normalize", "pad", "prelu", "pixel_shuffle", "pixel_unshuffle",
]


def _needs_grad(t) -> bool:
    return t.requires_grad and _C.is_grad_enabled()


def _apply(fn, input, inplace: bool):
    """fn(input), or with inplace input overwritten by it. When autograd records, fn runs
    on a copy, so that what its backward saved is not the tensor being overwritten."""
    if not inplace:
        return fn(input)
    return input.copy_(fn(input.clone() if _needs_grad(input) else input))


# ---- linear layers ----

def linear(input, weight, bias=None):
    """input @ weight.T + bias: (*, in) x (out, in) -> (*, out).

    >>> ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3)).shape
    ember.Size([2, 4])
    """
    if bias is not None and input.dim() == 2:
        return _C.addmm(bias, input, weight.t())
    out = input.matmul(weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o].

    >>> ember.nn.functional.bilinear(ember.ones(2, 3), ember.ones(2, 4), ember.ones(5, 3, 4)).tolist()[0]
    [12.0, 12.0, 12.0, 12.0, 12.0]
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.size(d) != input2.size(d):
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got {input1.size(d)} "
                               f"and {input2.size(d)}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, got {weight.dim()}")
    out_features, in1, in2 = weight.shape
    if input1.size(-1) != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.size(-1)} but "
                           f"expected {in1}")
    if input2.size(-1) != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.size(-1)} but "
                           f"expected {in2}")
    if bias is not None and bias.numel() != out_features:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.numel()} but expected "
                           f"{out_features}")
    # (*, in1) @ (in1, out*in2) -> (*, out, in2), then contract in2 with input2
    left = input1.matmul(weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    left = left.reshape(*input1.shape[:-1], out_features, in2)
    out = left.matmul(input2.unsqueeze(-1)).squeeze(-1)
    return out + bias if bias is not None else out


def identity(input):
    return input


# ---- activations ----

def relu(input, inplace: bool = False):
    """max(input, 0).

    >>> ember.nn.functional.relu(ember.tensor([-1., 2.])).tolist()
    [0.0, 2.0]
    """
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()




def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """input where input > threshold, value elsewhere."""
    return _apply(lambda x: _C.where(x > threshold, x, value), input, inplace)


def threshold_(input, threshold: float, value: float):
    return _apply(lambda x: _C.where(x > threshold, x, value), input, True)


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


# ---- dropout ----

def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_with_noise_shape(input, p: float, noise_shape, inplace: bool):
    if p == 1.0:
        return input.mul_(0) if inplace else input * _C.zeros((), dtype=input.dtype)
    # mask of kept elements, scaled so the expectation is unchanged
    mask = _C.empty(noise_shape, dtype=input.dtype).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(mask) if inplace else input * mask


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes each element with probability p and scales the others by 1 / (1 - p);
    input itself when not training.

    >>> ember.nn.functional.dropout(ember.ones(3), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    return _dropout_with_noise_shape(input, p, tuple(input.shape), inplace)


def _feature_dropout(input, p: float, training: bool, inplace: bool):
    """Drops whole channels: one draw per (batch, channel)."""
    if not training or p == 0.0 or input.numel() == 0:
        return input
    noise_shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    return _dropout_with_noise_shape(input, p, noise_shape, inplace)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, inplace).squeeze(0)
    return _feature_dropout(input, p, training, inplace)


def _warn_unusual_dims(name: str, dim: int, spatial: int) -> None:
    if dim not in (spatial + 1, spatial + 2):
        warnings.warn(f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result in an error in "
                      "a future release. To retain the behavior and silence this warning, please use dropout instead. "
                      f"Note that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{spatial + 1}D or {spatial + 2}D inputs).")


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels of (N, C, H, W) inputs (a 3-D input is taken as (N, C, L),
    with torch's warning)."""
    _check_p(p)
    _warn_unusual_dims("dropout2d", input.dim(), 2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.")
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    _check_p(p)
    _warn_unusual_dims("dropout3d", input.dim(), 3)
    if input.dim() == 4:
        return _feature_dropout(input.unsqueeze(0), p, training, inplace).squeeze(0)
    return _feature_dropout(input, p, training, inplace)


# ---- encodings ----

def one_hot(tensor, num_classes: int = -1):
    """(*) int64 class indices -> (*, num_classes) int64 with a 1 at each index
    (num_classes=-1: the largest index + 1).

    >>> ember.nn.functional.one_hot(ember.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if not isinstance(num_classes, int) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not {type(num_classes).__name__}")
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _C.empty((*tensor.shape, num_classes), dtype=_C.int64)
    if tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = tensor.max().item() + 1
    elif tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = _C.zeros((*tensor.shape, num_classes), dtype=_C.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """input / max(||input||_p over dim, eps).

    >>> ember.nn.functional.normalize(ember.tensor([[3., 4.]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _C.div(input, denom, out=out)


# ---- pixel shuffle ----

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


# ---- padding ----

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
