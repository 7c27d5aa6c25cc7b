"""Loss modules: each holds its reduction (and class weights as buffers) and calls its
ember.nn.functional form. The deprecated size_average/reduce arguments set the reduction
by torch's rule, with its warning."""
from __future__ import annotations

import warnings

from .. import functional as F
from .._functional.loss import _legacy_reduction
from .distance import PairwiseDistance
from .linear import Linear
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .module import Module

__all__ = ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss",
           "KLDivLoss", "SmoothL1Loss", "HuberLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "GaussianNLLLoss",
           "PoissonNLLLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
           "MultiLabelSoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "LinearCrossEntropyLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with a per-class weight, registered as the buffer 'weight' (None when absent)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """|input - target|, reduced ('mean', 'sum' or 'none').

    >>> ember.nn.L1Loss()(ember.tensor([1., 2.]), ember.tensor([1., 4.])).item()
    1.0
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """(input - target)^2, reduced.

    >>> ember.nn.MSELoss()(ember.tensor([1., 2.]), ember.tensor([1., 4.])).item()
    2.0
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """-weight[t] * input[n, t] for class targets t, input being log-probabilities (N, C)
    or (N, C, d1, ...); targets equal to ignore_index count for nothing.

    >>> ember.nn.NLLLoss()(ember.tensor([[-1., -2.]]), ember.tensor([1])).item()
    2.0
    """

    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """NLLLoss under its old name for (N, C, H, W) inputs (NLLLoss takes any of them),
    deprecated as in torch."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning,
                      stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_WeightedLoss):
    """nll_loss(log_softmax(input)) for class targets, or the cross entropy with class
    probabilities (a target shaped like input); label_smoothing mixes in the uniform
    distribution.

    >>> ember.nn.CrossEntropyLoss()(ember.tensor([[0., 0.]]), ember.tensor([1])).item()
    0.6931471824645996
    """

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """-weight (t log x + (1 - t) log(1 - x)) for probabilities x, the logs clamped at -100.

    >>> ember.nn.BCELoss()(ember.tensor([0.5]), ember.tensor([1.])).item()
    0.6931471824645996
    """

    __constants__ = ["reduction"]

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """BCELoss of sigmoid(input), computed stably from the logits; pos_weight (a buffer, as
    weight) scales the positive term per class.

    >>> ember.nn.BCEWithLogitsLoss()(ember.tensor([0.]), ember.tensor([1.])).item()
    0.6931471824645996
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """target * (log(target) - input) for log-probabilities input (and target, with
    log_target); 'batchmean' divides the sum by the batch size.

    >>> ember.nn.KLDivLoss(reduction="sum")(ember.tensor([0.]), ember.tensor([1.])).item()
    0.0
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.

    >>> ember.nn.SmoothL1Loss()(ember.tensor([0., 0.]), ember.tensor([0.5, 3.])).item()
    1.3125
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).

    >>> ember.nn.HuberLoss(delta=2.0)(ember.tensor([0.]), ember.tensor([3.])).item()
    4.0
    """

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.

    >>> ember.nn.CosineEmbeddingLoss()(ember.tensor([[1., 0.]]), ember.tensor([[1., 0.]]), ember.tensor([1])).item()
    0.0
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """max(0, -target * (input1 - input2) + margin): target 1 asks input1 to rank higher.

    >>> ember.nn.MarginRankingLoss(margin=1.0)(ember.tensor([2.]), ember.tensor([1.5]), ember.tensor([1.])).item()
    0.5
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """0.5 (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi) when full), var clamped
    to at least eps.

    >>> ember.nn.GaussianNLLLoss()(ember.tensor([1.]), ember.tensor([1.]), ember.tensor([1.])).item()
    0.0
    """

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """exp(input) - target * input for log-rates input (log_input), else
    input - target * log(input + eps); full adds Stirling's term.

    >>> ember.nn.PoissonNLLLoss()(ember.tensor([0.]), ember.tensor([1.])).item()
    1.0
    """

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """input where target is 1, max(0, margin - input) where it is -1.

    >>> ember.nn.HingeEmbeddingLoss()(ember.tensor([0.3]), ember.tensor([-1.])).item()
    0.699999988079071
    """

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input)), for targets 1 and -1.

    >>> round(ember.nn.SoftMarginLoss()(ember.tensor([0.]), ember.tensor([1.])).item(), 4)
    0.6931
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss: sum over classes j != y of max(0, margin - x[y] + x[j])^p,
    per class count.

    >>> ember.nn.MultiMarginLoss()(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([3])).item()
    0.32499998807907104
    """

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss; a row's target classes are its entries before the first -1.

    >>> ember.nn.MultiLabelMarginLoss()(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([[3, 0, -1, 1]])).item()
    0.8500000238418579
    """

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The per-class binary cross entropy of the logits, averaged over the classes.

    >>> round(ember.nn.MultiLabelSoftMarginLoss()(ember.tensor([[0., 0.]]), ember.tensor([[1., 0.]])).item(), 4)
    0.6931
    """

    __constants__ = ["reduction"]

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)) with the p-norm pairwise distance d.

    >>> ember.nn.TripletMarginLoss()(ember.tensor([[0.]]), ember.tensor([[0.]]), ember.tensor([[3.]])).item()
    0.0
    """

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False, size_average=None,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """TripletMarginLoss with any distance_function(x1, x2) (default: a PairwiseDistance module).

    >>> ember.nn.TripletMarginWithDistanceLoss()(ember.tensor([[0.]]), ember.tensor([[0.]]),
    ...                                          ember.tensor([[0.5]])).item()
    0.5000019669532776
    """

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss between log-probabilities (T, N, C)
    or (T, C) and unaligned target sequences; see F.ctc_loss.

    >>> round(ember.nn.CTCLoss()(ember.full((2, 1, 2), 0.5).log(), ember.tensor([[1]]), [2], [1]).item(), 4)
    0.2877
    """

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class LinearCrossEntropyLoss(_WeightedLoss):
    """cross_entropy of the logits of a Linear(in_features, num_classes * prod(out_features))
    it owns (as ``self.linear``), viewed as (N, num_classes, *out_features); ``options`` (a
    LinearCrossEntropyOptions) processes the batch in chunks, never forming all the logits.
    See F.linear_cross_entropy.

    >>> loss = ember.nn.LinearCrossEntropyLoss(4, 10)
    >>> loss(ember.randn(3, 4), ember.tensor([1, 2, 3])).shape
    ember.Size([])
    """

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index", "label_smoothing"]

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight=None, ignore_index=None,
                 label_smoothing: float = 0.0, options: LinearCrossEntropyOptions = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # stored flat, as Linear's 2-d weight: forward views it as (C, *out_features, in)
        rows = num_classes
        for d in out_features:
            rows *= d
        self.linear = Linear(in_features, rows, bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        weight = self.linear.weight.reshape(self.num_classes, *self.out_features, self.linear.in_features)
        bias = self.linear.bias
        if bias is not None:
            bias = bias.reshape(self.num_classes, *self.out_features)
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
