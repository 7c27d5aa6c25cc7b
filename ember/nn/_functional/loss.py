"""The losses. nll_loss, mse_loss, smooth_l1_loss, huber_loss and the binary cross entropies
are native ops; cross_entropy, l1_loss, kl_div, cosine_embedding_loss and
margin_ranking_loss are compositions, arranged so that values and gradients equal torch's.
The reduction arguments (the reduction string, the deprecated size_average/reduce) are
read here as torch reads them."""
from __future__ import annotations

import math
import warnings

from ... import _C
from ..._functional import broadcast_shapes
from ._utils import _legacy_name
from ... import _autocast
from ..._C import int64 as _int64


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


@_autocast.fp32
def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean"):
    """-weight[t] * input[n, t], for class targets t: input (C), (N, C) or (N, C, d1, ...).

    >>> ember.nn.functional.nll_loss(ember.tensor([[-1., -2.]]), ember.tensor([1])).item()
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


@_autocast.fp32
def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0):
    """nll_loss of log_softmax(input) for class targets; for class probabilities (a target
    shaped like input), -sum(target * log_softmax(input)) over classes; label_smoothing
    mixes the targets with the uniform distribution.

    >>> ember.nn.functional.cross_entropy(ember.tensor([[0., 0.]]), ember.tensor([1])).item()
    0.6931471824645996
    """
    reduction = _reduction(size_average, reduce, reduction)
    red = _reduction_enum(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.dim() > 0 and target.dtype is _int64 and input.shape != target.shape:
        # class indices: one native op, one read of the logits each way (Note [Fused
        # cross_entropy], csrc/kernels/nn_softmax.cpp)
        return _C._cross_entropy_loss(input, target, weight, red, ignore_index, float(label_smoothing))[0]
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


@_autocast.fp32
def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """(input - target)^2, averaged, summed or not reduced (weighted: divided by the weights' sum).

    >>> ember.nn.functional.mse_loss(ember.tensor([1., 2.]), ember.tensor([1., 4.])).item()
    2.0
    """
    _warn_size_mismatch(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        d = input - target
        return _weighted(d * d, weight, reduction, mean_by_weight=True)
    return _C.mse_loss(input, target, _reduction_enum(reduction))


@_autocast.fp32
def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None):
    """|input - target|, averaged, summed or not reduced.

    >>> ember.nn.functional.l1_loss(ember.tensor([1., 2.]), ember.tensor([1., 4.])).item()
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


@_autocast.fp32
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


@_autocast.fp32
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


@_autocast.fp32
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


@_autocast.fp32
def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def _plain_reduction(size_average, reduce, reduction: str) -> str:
    """The reduction torch's natively reduced losses read: the legacy arguments' rule, else
    reduction, checked."""
    reduction = _reduction(size_average, reduce, reduction)
    _reduction_enum(reduction)
    return reduction


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
    """0.5 (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi) when full), var clamped
    to at least eps without the clamp reaching the gradient; var may be one dim short of
    input or differ from it in one broadcast dim (homoscedastic), or be a float.

    >>> ember.nn.functional.gaussian_nll_loss(ember.tensor([1.]), ember.tensor([1.]), ember.tensor([1.])).item()
    0.0
    """
    if isinstance(var, (float, int)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _C.full_like(input, float(var))
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(v for i, v in zip(input.size(), var.size()) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # torch clamps a clone in place under no_grad: the clamp is invisible to autograd
    var = var + (var.clamp_min(eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@_autocast.fp32
def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean"):
    """exp(input) - target * input (log_input), else input - target * log(input + eps);
    full adds Stirling's approximation of log(target!) where target > 1.

    >>> ember.nn.functional.poisson_nll_loss(ember.tensor([0.]), ember.tensor([1.])).item()
    1.0
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _C.exp(input) - target * input
    else:
        loss = input - target * _C.log(input + eps)
    if full:
        stirling = target * _C.log(target) - target + 0.5 * _C.log(2 * math.pi * target)
        loss = loss + _C.masked_fill(stirling, target <= 1, 0.0)
    return _reduce(loss, reduction)


@_autocast.fp32
def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """input where target is 1, max(0, margin - input) where it is -1.

    >>> ember.nn.functional.hinge_embedding_loss(ember.tensor([0.3, 2.]), ember.tensor([-1., 1.])).item()
    1.350000023841858
    """
    reduction = _plain_reduction(size_average, reduce, reduction)
    zeros = _C.zeros_like(input)
    loss = (_C.where(target != 1, (margin - input).clamp_min(0), zeros)
            + _C.where(target != -1, input, zeros))
    return _reduce(loss, reduction)


@_autocast.fp32
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-target * input)), for targets 1 and -1.

    >>> round(ember.nn.functional.soft_margin_loss(ember.tensor([0.]), ember.tensor([1.])).item(), 4)
    0.6931
    """
    reduction = _plain_reduction(size_average, reduce, reduction)
    return _reduce(_C.log1p(_C.exp(-input * target)), reduction)


def _check_class_target(input, target, kernel: str) -> None:
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy_name(input.dtype)}'")
    if target.dtype != _C.int64:
        raise RuntimeError(f"expected scalar type Long but found {_legacy_name(target.dtype)}")
    if input.dim() not in (1, 2) or input.size(-1) == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")


@_autocast.fp32
def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None,
                      reduce=None, reduction: str = "mean"):
    """sum over classes j != y of max(0, margin - x[y] + x[j])^p (times weight[y]), divided
    by the number of classes, for input (C) or (N, C) and class targets y.

    >>> ember.nn.functional.multi_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([3])).item()
    0.32499998807907104
    """
    reduction = _plain_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_class_target(input, target, "multi_margin_loss_cpu_kernel")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    n, c = x.shape
    y = target.reshape(-1)
    if y.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if n and not y.is_meta and (bool((y < 0).any()) or bool((y >= c).any())):  # meta: no values
        raise RuntimeError("target out of range")
    y = y.unsqueeze(1)
    z = (margin - x.gather(1, y) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.gather(0, y.reshape(-1)).unsqueeze(1)
    own_class = _C.arange(c, device=y.device).unsqueeze(0) == y
    loss = _C.masked_fill(z, own_class, 0.0).sum(1) / c
    if input.dim() == 1 and target.dim() == 0:
        loss = loss.squeeze(0)
    if reduction == "mean" and n == 0:
        return loss.sum()
    return _reduce(loss, reduction)


@_autocast.fp32
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """sum over the target classes j and the other classes i of max(0, 1 - (x[j] - x[i])),
    divided by the number of classes; a row's targets are its entries before the first -1.

    >>> ember.nn.functional.multilabel_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                                            ember.tensor([[3, 0, -1, 1]])).item()
    0.8500000238418579
    """
    reduction = _plain_reduction(size_average, reduce, reduction)
    _check_class_target(input, target, "multilabel_margin_loss_forward_out_frame")
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = target if target.dim() == 2 else target.unsqueeze(0)
    c = x.size(1)
    listed = (t < 0).cumsum(1) == 0  # the entries before a row's first negative one
    if not t.is_meta and bool(((t < -1) | (t >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    index = _C.masked_fill(t, ~listed, 0)
    is_target = _C.zeros_like(x).scatter_add(1, index, listed.to(x.dtype)) > 0
    pairs = (1 - x.gather(1, index).unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)
    counted = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = _C.masked_fill(pairs, ~counted, 0.0).sum((1, 2)) / c
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """-(t log sigmoid(x) + (1 - t) log sigmoid(-x)) (times weight), averaged over classes.

    >>> round(ember.nn.functional.multilabel_soft_margin_loss(ember.tensor([[0., 0.]]),
    ...                                                       ember.tensor([[1., 0.]])).item(), 4)
    0.6931
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    from .activation import logsigmoid

    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _check_triplet_dims(anchor, positive, negative) -> None:
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")


def _triplet(d_pos, d_neg, d_swap, margin, reduction):
    if d_swap is not None:
        d_neg = _C.minimum(d_neg, d_swap)
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


@_autocast.fp32
def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
    """max(0, margin + d(a, p) - d(a, n)) with d the pairwise_distance (p, eps); swap uses
    min(d(a, n), d(p, n)).

    >>> ember.nn.functional.triplet_margin_loss(ember.tensor([[0.]]), ember.tensor([[0.]]), ember.tensor([[3.]])).item()
    0.0
    """
    reduction = _plain_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    from .distance import pairwise_distance

    d_swap = pairwise_distance(positive, negative, p, eps) if swap else None
    return _triplet(pairwise_distance(anchor, positive, p, eps), pairwise_distance(anchor, negative, p, eps),
                    d_swap, margin, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean"):
    """triplet_margin_loss with any distance_function(x1, x2) (default pairwise_distance).

    >>> ember.nn.functional.triplet_margin_with_distance_loss(ember.tensor([[0.]]), ember.tensor([[0.]]),
    ...                                                       ember.tensor([[0.5]])).item()
    0.5000019669532776
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        from .distance import pairwise_distance as distance_function
    d_swap = distance_function(positive, negative) if swap else None
    return _triplet(distance_function(anchor, positive), distance_function(anchor, negative), d_swap, margin,
                    reduction)
