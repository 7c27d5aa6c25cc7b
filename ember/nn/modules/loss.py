"""Loss modules: each holds its reduction (and class weights as buffers) and calls its
ember.nn.functional form. The deprecated size_average/reduce arguments set the reduction
by torch's rule, with its warning."""
from __future__ import annotations

from .. import functional as F
from .._functional.loss import _legacy_reduction
from .module import Module

__all__ = ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
           "SmoothL1Loss", "HuberLoss", "CosineEmbeddingLoss", "MarginRankingLoss"]


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
