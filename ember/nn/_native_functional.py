"""The native numerics of ember.nn.functional, with torch.nn.functional's signatures.

Each function checks and converts its arguments as torch's does (reduction strings,
int-or-tuple sizes, padding='same', unbatched inputs), then calls one op of ember._C
(declarations/ops/nn.yaml), whose backward is native too. The rarer losses
(l1, kl_div, cosine_embedding, margin_ranking) and cross_entropy are compositions of
those ops, arranged so that values and gradients equal torch's.

>>> import ember.nn._native_functional as F
>>> F.cross_entropy(ember.tensor([[0., 0.]]), ember.tensor([1])).item()
0.6931471824645996
"""
from __future__ import annotations

import math
import warnings
from typing import Optional

from .. import _C
from .._functional import broadcast_shapes
from ..autograd.grad_mode import no_grad

__all__ = [
    "softmax", "log_softmax", "softmin",
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "margin_ranking_loss",
    "gelu", "silu", "mish", "softplus", "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_",
    "hardtanh", "hardtanh_", "relu6", "hardswish", "hardsigmoid", "logsigmoid",
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "batch_norm", "layer_norm", "group_norm", "rms_norm", "embedding",
    "interpolate", "unfold", "fold", "scaled_dot_product_attention",
]

# ---- arguments ----

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _legacy_reduction(size_average, reduce) -> str:
    """The reduction the deprecated size_average/reduce arguments ask for (torch's rule),
    with the warning naming it."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else "mean" if size_average else "sum"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  stacklevel=3)
    return reduction


def _reduction(size_average, reduce, reduction: str) -> str:
    return reduction if size_average is None and reduce is None else _legacy_reduction(size_average, reduce)


def _reduce(loss, reduction: str):
    _reduction_enum(reduction)
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _tuple(value, n: int, name: str):
    """int or sequence -> a list of n ints (a sequence of one int repeats it)."""
    if isinstance(value, (list, tuple)):
        value = [int(v) for v in value]
        if len(value) == 1:
            return value * n
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values, "
                               f"but got {name}={value}")
        return value
    return [int(value)] * n


def _warn_size_mismatch(input, target) -> None:
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _check_weight_size(weight, input) -> None:
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")


def _weighted(loss, weight, reduction: str, mean_by_weight: bool):
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


# ---- softmax ----

def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None):
    """exp(x) / sum(exp(x)) along dim (softmax of the converted input with dtype=).

    >>> ember.nn._native_functional.softmax(ember.tensor([0., 0.]), 0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None):
    """log(softmax(x)) along dim, computed without overflow."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _C.log_softmax(input, dim, dtype)


def softmin(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None):
    """softmax(-x) along dim."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _C.softmax(_C.neg(input) if dtype is None else _C.neg(input.to(dtype)), dim)


# ---- losses ----

def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean"):
    """-weight[t] * input[n, t], for class targets t: input (C), (N, C) or (N, C, d1, ...).

    >>> ember.nn._native_functional.nll_loss(ember.tensor([[-1., -2.]]), ember.tensor([1])).item()
    2.0
    """
    reduction = _reduction(size_average, reduce, reduction)
    return _C.nll_loss_nd(input, target, weight, _reduction_enum(reduction), ignore_index)


def _class_dim(input) -> int:
    return 0 if input.dim() == 1 else 1


def _class_weight_view(weight, input):
    """weight (C) shaped to multiply input along its class dim."""
    if input.dim() <= 1:
        return weight
    return weight.view(1, -1, *([1] * (input.dim() - 2)))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0):
    """nll_loss of log_softmax(input) for class targets; for class probabilities (a target
    shaped like input), -sum(target * log_softmax(input)) over classes; label_smoothing
    mixes the targets with the uniform distribution.

    >>> ember.nn._native_functional.cross_entropy(ember.tensor([[0., 0.]]), ember.tensor([1])).item()
    0.6931471824645996
    """
    reduction = _reduction(size_average, reduce, reduction)
    red = _reduction_enum(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = _class_dim(input)
    logp = _C.log_softmax(input, cdim) if input.dim() > 0 else input
    if input.dim() == 0 and target.dim() == 0 or input.shape == target.shape:
        return _cross_entropy_probabilities(input, logp, target, weight, ignore_index, reduction, label_smoothing)
    nll = _C.nll_loss_nd(logp, target, weight, red, ignore_index)
    if label_smoothing <= 0.0:
        return nll
    n_classes = input.size(cdim)
    ignored = target == ignore_index
    per_class = logp * _class_weight_view(weight, input) if weight is not None else logp
    smooth = _C.masked_fill(-per_class.sum(cdim), ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            smooth = smooth.sum() / weight.gather(0, target[~ignored].flatten()).sum()
        else:
            smooth = smooth.sum() / (~ignored).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / n_classes)


def _cross_entropy_probabilities(input, logp, target, weight, ignore_index, reduction, label_smoothing):
    if not target.is_floating_point():
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_legacy_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if input.dim() == 0:
        raise RuntimeError("cross_entropy: expected input with at least 1 dimension (the classes)")
    cdim = _class_dim(input)
    n_classes = input.size(cdim)
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight_view(weight, input)
    loss = -prod.sum(cdim)
    if reduction == "mean":
        return loss.sum() / (input.numel() // n_classes) if input.numel() else loss.sum() / 0.0
    return loss.sum() if reduction == "sum" else loss


def _legacy_name(dtype) -> str:
    names = {"float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names.get(repr(dtype).split(".")[-1], repr(dtype))


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """(input - target)^2, averaged, summed or not reduced (weighted: divided by the weights' sum).

    >>> ember.nn._native_functional.mse_loss(ember.tensor([1., 2.]), ember.tensor([1., 4.])).item()
    2.0
    """
    _warn_size_mismatch(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        d = input - target
        return _weighted(d * d, weight, reduction, mean_by_weight=True)
    return _C.mse_loss(input, target, _reduction_enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """|input - target|, averaged, summed or not reduced.

    >>> ember.nn._native_functional.l1_loss(ember.tensor([1., 2.]), ember.tensor([1., 4.])).item()
    1.0
    """
    _warn_size_mismatch(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    loss = (input - target).abs()
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted(loss, weight, reduction, mean_by_weight=True)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (l1_loss for beta 0)."""
    _warn_size_mismatch(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta == 0.0:
        return _reduce((input - target).abs(), reduction)
    return _C.smooth_l1_loss(input, target, _reduction_enum(reduction), float(beta))


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _warn_size_mismatch(input, target)
    if weight is None:
        return _C.huber_loss(input, target, _reduction_enum(reduction), float(delta))
    _check_weight_size(weight, input)
    return _weighted(_C.huber_loss(input, target, 0, float(delta)), weight, reduction, mean_by_weight=False)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
    """-weight (t log x + (1 - t) log(1 - x)), the logs clamped to at least -100."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(broadcast_shapes(target.shape, weight.shape))
    return _C.binary_cross_entropy(input, target, weight, _reduction_enum(reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target), computed stably from the logits."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _C.binary_cross_entropy_with_logits(input, target, weight, pos_weight, _reduction_enum(reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
    """target * (log(target) - input) (input: log-probabilities; log_target: target too),
    reduced; 'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if reduction == "batchmean":
        red = "sum"
    else:
        _reduction_enum(reduction)
        red = reduction
    if log_target:
        loss = _C.exp(target) * (target - input)
    else:
        loss = _C.xlogy(target, target) - target * input
    loss = _reduce(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        loss = loss / input.size(0)
    return loss


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                          reduction: str = "mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    red = _reduction_enum(reduction)
    if input1.dim() == 0 or input2.dim() == 0:
        raise RuntimeError("cosine_embedding_loss does not support scalar inputs")
    if target.dim() > 1:
        raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != input2.dim() or input1.dim() != target.dim() + 1:
        raise RuntimeError(f"{input1.dim()}D target tensor expects {target.dim() + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = input1.dim() - 1
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    sq1 = (input1 * input1).sum(dim) + eps
    sq2 = (input2 * input2).sum(dim) + eps
    cos = dot / (sq1 * sq2).sqrt()
    zeros = _C.zeros_like(cos)
    loss = _C.where(target == 1, 1 - cos, zeros) + _C.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(loss, ("none", "mean", "sum")[red])


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


# ---- activations ----

def gelu(input, approximate: str = "none"):
    """x * Phi(x); approximate='tanh' for the tanh formula."""
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):
    """x * sigmoid(x)."""
    return input.silu_() if inplace else _C.silu(input)


def mish(input, inplace: bool = False):
    """x * tanh(softplus(x))."""
    return input.mish_() if inplace else _C.mish(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta x)) / beta, linear above threshold."""
    return _C.softplus(input, beta, threshold)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    return input.elu_(alpha) if inplace else _C.elu(input, alpha)


def elu_(input, alpha: float = 1.0):
    return input.elu_(alpha)


def selu(input, inplace: bool = False):
    """scale * elu(x, alpha) with the SELU constants."""
    return input.selu_() if inplace else _C.selu(input)


def selu_(input):
    return input.selu_()


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    return input.celu_(alpha) if inplace else _C.celu(input, alpha)


def celu_(input, alpha: float = 1.0):
    return input.celu_(alpha)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """x for x > 0, negative_slope * x otherwise."""
    return input.leaky_relu_(negative_slope) if inplace else _C.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope: float = 0.01):
    return input.leaky_relu_(negative_slope)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """x clamped to [min_val, max_val] (the gradient is 0 at the bounds)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.hardtanh_(min_val, max_val) if inplace else _C.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), as torch computes it."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardswish(input, inplace: bool = False):
    """x * relu6(x + 3) / 6."""
    return input.hardswish_() if inplace else _C.hardswish(input)


def hardsigmoid(input, inplace: bool = False):
    """relu6(x + 3) / 6."""
    return input.hardsigmoid_() if inplace else _C.hardsigmoid(input)


def logsigmoid(input):
    """log(sigmoid(x))."""
    return _C.log_sigmoid(input)


# ---- convolution ----

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


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C_in, L) or (C_in, L) with weight (C_out, C_in / groups, k).

    >>> ember.nn._native_functional.conv1d(ember.ones(1, 1, 3), ember.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution of (N, C_in, H, W) or (C_in, H, W); padding may be 'same' or 'valid'."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    if weight.dim() != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D weight, but got weight of size {list(weight.shape)}")
    if isinstance(padding, str):
        raise RuntimeError(f"{name}: padding must be an int or a tuple of ints, not '{padding}'")
    x, unbatched = _unbatched(input, weight, name)
    out = _C.convolution(x, weight, bias, _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding"),
                         _tuple(dilation, nd, "dilation"), True, _tuple(output_padding, nd, "output_padding"), groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose of conv1d: weight (C_in, C_out / groups, k)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose of conv2d: weight (C_in, C_out / groups, kh, kw)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


# ---- pooling ----

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

    >>> ember.nn._native_functional.max_pool2d(ember.arange(16.).view(1, 4, 4), 2).tolist()
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


# ---- normalization ----

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


# ---- embedding ----

def embedding(input, weight, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False):
    """The rows of weight at the indices of input; the padding_idx row gets no gradient;
    with max_norm, the rows looked up are first renormalized in place (as torch does).

    >>> ember.nn._native_functional.embedding(ember.tensor([1]), ember.eye(2)).tolist()
    [[0.0, 1.0]]
    """
    num = weight.size(0)
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_renorm_(weight, indices, max_norm: float, norm_type: float) -> None:
    """Rows of weight at indices whose norm exceeds max_norm scaled to max_norm (no grad)."""
    with no_grad():
        rows = _C._unique(indices.reshape(-1), True, False, False, None)[0]
        picked = weight.index_select(0, rows)
        norms = _C.linalg_vector_norm(picked, float(norm_type), [1], True)
        scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), _C.ones_like(norms))
        weight.index_copy_(0, rows, picked * scale)


# ---- interpolation, unfold/fold, attention (compositions of the ops above) ----

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
    from .. import arange, float32, tensor

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


def _eye_weight(channels: int, kh: int, kw: int, like):
    """The (C * kh * kw, 1, kh, kw) weight whose grouped convolution copies each tap:
    unfold as a convolution."""
    from .. import eye

    k = kh * kw
    return eye(k, dtype=like.dtype).view(k, 1, kh, kw).repeat(channels, 1, 1, 1)


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


# C++ names of the dtypes, as torch's attention messages print them
_CPP_DTYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                    "uint8": "unsigned char", "bool": "bool"}


def _cpp_dtype_name(dtype) -> str:
    return _CPP_DTYPE_NAMES[repr(dtype).split(".", 1)[1]]


def _check_attention_inputs(query, key, value, attn_mask, is_causal: bool, dropout_p: float) -> None:
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_dtype_name(query.dtype)} key.dtype: {_cpp_dtype_name(key.dtype)} and value.dtype: "
                           f"{_cpp_dtype_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_C.bool, _C.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cpp_dtype_name(attn_mask.dtype)} and  query.dtype: "
                           f"{_cpp_dtype_name(query.dtype)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")


def _repeat_heads(query, kv):
    """Grouped-query attention: each of kv's heads serves query.size(-3) / kv.size(-3) query heads."""
    if kv.dim() < 3 or query.size(-3) == kv.size(-3):
        return kv
    if kv.size(-3) == 0 or query.size(-3) % kv.size(-3):
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return kv.repeat_interleave(query.size(-3) // kv.size(-3), -3)


def _safe_softmax(scores):
    """softmax over the last dim, with rows where every score is -inf (fully masked) all
    zero instead of NaN, and no gradient through them."""
    dead = scores.isneginf().all(-1, keepdim=True)
    if not dead.any().item():
        return _C.softmax(scores, -1)
    return _C.softmax(_C.masked_fill(scores, dead, 0.0), -1).masked_fill(dead, 0.0)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale=None, enable_gqa: bool = False):
    """softmax(q k^T * scale + mask) v over (..., L, E) queries, (..., S, E) keys and
    (..., S, Ev) values -> (..., L, Ev). A bool attn_mask keeps where True, a float one is
    added; is_causal masks the future (query i sees keys 0..i); a query that may attend to
    nothing gets zeros. dropout_p drops attention weights whenever it is > 0 (training or
    not, as torch's). enable_gqa repeats key/value heads (dim -3) to the query's count.

    >>> q = ember.ones(1, 2, 4)
    >>> ember.nn.functional.scaled_dot_product_attention(q, q, ember.eye(4)[:2].unsqueeze(0)).tolist()
    [[[0.5, 0.5, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]]]
    """
    _check_attention_inputs(query, key, value, attn_mask, is_causal, dropout_p)
    L, S = query.size(-2), key.size(-2)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if enable_gqa:
        key, value = _repeat_heads(query, key), _repeat_heads(query, value)
    scores = query.matmul(key.transpose(-2, -1)) * scale  # (..., L, S)
    if is_causal:
        future = _C.ones((L, S), dtype=_C.bool).triu(1)
        scores = _C.masked_fill(scores, future, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            scores = _C.masked_fill(scores, attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    # only an attn_mask can mask a whole row: under is_causal alone query i sees key 0
    weights = _safe_softmax(scores) if attn_mask is not None else _C.softmax(scores, -1)
    if dropout_p >= 1.0:
        weights = weights * 0.0
    elif dropout_p > 0.0:
        keep = _C.empty(tuple(weights.shape), dtype=weights.dtype).bernoulli_(1.0 - dropout_p)
        weights = weights * keep.div_(1.0 - dropout_p)
    return weights.matmul(value)
