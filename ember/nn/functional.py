"""ember.nn.functional: the layers as functions, with torch.nn.functional's signatures.

The heavy numerics (softmax, the losses, convolution, pooling, normalization, embedding
and most activations) are native ops with native derivatives, wrapped in
ember.nn._native_functional and re-exported here. What is left in this file is composed of
ember's ops, and autograd differentiates the composition."""
from __future__ import annotations

import math
import warnings
from typing import Optional

from .. import _C
from ._native_functional import *  # noqa: F401,F403
from ._native_functional import __all__ as _native_all
from ._native_functional import _legacy_name

__all__ = [
    *_native_all, "linear", "bilinear", "identity", "relu", "relu_", "tanh", "sigmoid", "threshold", "threshold_",
    "softsign", "tanhshrink", "hardshrink", "softshrink", "dropout", "dropout1d", "dropout2d", "dropout3d", "one_hot",
    "normalize", "pad", "prelu", "pixel_shuffle", "pixel_unshuffle", "multi_head_attention_forward",
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
    if bias is not None and weight.dim() == 2 and input.dim() >= 2:
        if input.dim() == 2:
            return _C.addmm(bias, input, weight.t())
        # (*, in) folded into one (rows, in) product with the bias added by the gemm, as
        # torch does; the gradients then come from 2-d products too
        *batch, n_in = input.shape
        rows = 1
        for n in batch:
            rows *= n
        return _C.addmm(bias, input.reshape(rows, n_in), weight.t()).view(*batch, weight.shape[0])
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


# ---- multi-head attention ----

def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _C.TensorBase):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or ember.Tensor")


def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True):
    """An attention mask as an additive float mask of target_type: a bool mask's True
    (masked out) becomes -inf, its False 0; a float mask is returned as it is."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _C.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.")
    if is_float:
        return mask
    return _C.zeros(tuple(mask.shape), dtype=target_type).masked_fill_(mask, float("-inf"))


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """Whether the inputs are batched ((L, N, E) query) or not ((L, E)); raises torch's
    AssertionErrors for inconsistent ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                     f"found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.size(0), key.size(0))
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate):
    """q, k, v projected to embed_dim: one matmul for self-attention (query is key is
    value), two when key is value, three otherwise."""
    E = query.size(-1)
    if separate is not None:
        w_q, w_k, w_v = separate
        b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
        return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    if key is value:
        if query is key:
            return linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)  # (L, N, 3E) -> 3 x (L, N, E)
        w_q, w_kv = in_proj_weight.split([E, 2 * E])
        b_q, b_kv = in_proj_bias.split([E, 2 * E]) if in_proj_bias is not None else (None, None)
        return (linear(query, w_q, b_q), *linear(key, w_kv, b_kv).chunk(2, -1))
    w_q, w_k, w_v = in_proj_weight.chunk(3)
    b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _append_column(mask):
    """One more key position, not masked (for bias_k/bias_v or the zero attention)."""
    return pad(mask, (0, 1)) if mask is not None else None


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None, need_weights: bool = True,
                                 attn_mask=None, use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
                                 average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention over sequence-first inputs: query (L, N, E) or unbatched
    (L, E), key (S, N, kdim), value (S, N, vdim) -> (attn_output (L, N, E), weights
    (N, L, S) averaged over heads, (N, heads, L, S) per head, or None without
    need_weights). Masks: True / -inf masks a position out. key_padding_mask (N, S),
    attn_mask (L, S) or (N * heads, L, S). is_causal is a hint that attn_mask is causal.

    >>> E = ember.eye(4)
    >>> x = ember.ones(3, 1, 4)
    >>> out, w = ember.nn.functional.multi_head_attention_forward(x, x, x, 4, 2, ember.cat([E, E, E]), None, None,
    ...     None, False, 0.0, E, None)
    >>> out.shape, w.shape
    (ember.Size([3, 1, 4]), ember.Size([1, 3, 3]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        # (L, E) -> (L, 1, E); the masks get their batch dim
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.size(0)
    if key_padding_mask is not None and key_padding_mask.size(1) != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.size(1)}")

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                           "`generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # attention applies the causal mask itself; the hint says attn_mask is that mask
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w, x in (("query", q_proj_weight, query), ("key", k_proj_weight, key),
                           ("value", v_proj_weight, value)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name[0]}_proj_weight is None")
            if tuple(w.shape) != (embed_dim, x.size(-1)):
                raise AssertionError(f"expecting {name} weights shape of {(embed_dim, x.size(-1))}, but got "
                                     f"{w.shape}")
        separate = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        separate = None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key." if static_k is not None
                                 else "bias cannot be added to static value.")
        # one more key/value position, learned: (S, N, E) -> (S + 1, N, E)
        k = _C.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _C.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = _append_column(attn_mask)
        key_padding_mask = _append_column(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static_or_heads(k, static_k, "key", bsz, num_heads, head_dim)
    v = _static_or_heads(v, static_v, "value", bsz, num_heads, head_dim)

    if add_zero_attn:
        zeros = _C.zeros((bsz * num_heads, 1, head_dim), dtype=q.dtype)
        k = _C.cat([k, zeros], 1)
        v = _C.cat([v, zeros], 1)
        attn_mask = _append_column(attn_mask)
        key_padding_mask = _append_column(key_padding_mask)
    src_len = k.size(1)

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        # (N, S) -> (N * heads, 1, S), broadcast over queries
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        key_padding_mask = key_padding_mask.reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        q = q * math.sqrt(1.0 / head_dim)
        if attn_mask is not None:
            weights = _C.baddbmm(attn_mask, q, k.transpose(-2, -1))  # (N * heads, L, S)
        else:
            weights = _C.bmm(q, k.transpose(-2, -1))
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = _C.bmm(weights, v)  # (N * heads, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        # (1 or N * heads, L, S) -> (1 or N, heads, L, S)
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 else attn_mask.view(bsz, num_heads, -1,
                                                                                          src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    # (N, heads, L, head_dim) -> (L * N, E)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
    return (out if is_batched else out.squeeze(1)), None


def _static_or_heads(x, static, name: str, bsz: int, num_heads: int, head_dim: int):
    """(S, N, E) -> (N * heads, S, head_dim), or the given static keys/values of that shape."""
    if static is None:
        return x.reshape(x.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    if static.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting static_{name[0]}.size(0) of {bsz * num_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting static_{name[0]}.size(2) of {head_dim}, but got {static.size(2)}")
    return static
