"""The losses. nll_loss, mse_loss, smooth_l1_loss, huber_loss and the binary cross entropies
are native ops; cross_entropy, l1_loss, kl_div, cosine_embedding_loss and
margin_ranking_loss are compositions, arranged so that values and gradients equal torch's.
The reduction arguments (the reduction string, the deprecated size_average/reduce) are
read here as torch reads them."""
from __future__ import annotations

import warnings

from ... import _C
from ..._functional import broadcast_shapes
from ._utils import _legacy_name


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
