"""The nn functions torch also exposes at its top level (torch.layer_norm, torch.dropout,
torch.kl_div, torch.max_pool1d, ...), with the top level's signatures: those of torch's native ops, which
differ from torch.nn.functional's (dropout's train is positional and required, the losses
take reduction as the int enum 0 none / 1 mean / 2 sum, batch_norm orders its tensors
weight, bias, running_mean, running_var; the pools take no return_indices and
adaptive_max_pool1d returns (values, indices)). ember binds them lazily (ember/__init__.py)."""
from __future__ import annotations

from . import activation as _act
from . import distance as _dist
from . import dropout as _drop
from . import linear as _linear
from . import loss as _loss
from . import norm as _norm
from . import pool as _pool
from ... import _autocast

__all__ = ["layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm", "dropout", "dropout_",
           "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "relu_", "selu_", "celu_", "sigmoid_", "rrelu", "rrelu_", "prelu", "threshold",
           "threshold_", "hardshrink", "bilinear", "pdist", "cdist", "cosine_similarity", "pairwise_distance",
           "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
           "triplet_margin_loss", "kl_div", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d"]


def _reduction_name(reduction: int) -> str:
    if reduction not in (0, 1, 2):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return ("none", "mean", "sum")[reduction]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5, cudnn_enable: bool = True):
    """F.layer_norm; cudnn_enable is accepted and ignored, as on torch's CPU."""
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5, cudnn_enabled: bool = True):
    """F.group_norm."""
    return _norm.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool):
    """F.batch_norm, its tensors in the native op's order."""
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool):
    """F.instance_norm, its tensors in the native op's order."""
    return _norm.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """F.rms_norm."""
    return _norm.rms_norm(input, normalized_shape, weight, eps)


def dropout(input, p: float, train: bool):
    """Elementwise dropout (scaled by 1 / (1 - p)) when train; input itself otherwise."""
    return _drop._dropout_impl(input, p, train, False, feature=False, alpha=False)


def dropout_(input, p: float, train: bool):
    return _drop._dropout_impl(input, p, train, True, feature=False, alpha=False)


def feature_dropout(input, p: float, train: bool):
    """Dropout of whole channels (dim 1) of each batch element."""
    return _drop._dropout_impl(input, p, train, False, feature=True, alpha=False)


def feature_dropout_(input, p: float, train: bool):
    return _drop._dropout_impl(input, p, train, True, feature=True, alpha=False)


def alpha_dropout(input, p: float, train: bool):
    """F.alpha_dropout with train positional."""
    return _drop._dropout_impl(input, p, train, False, feature=False, alpha=True)


def alpha_dropout_(input, p: float, train: bool):
    return _drop._dropout_impl(input, p, train, True, feature=False, alpha=True)


def feature_alpha_dropout(input, p: float, train: bool):
    """F.feature_alpha_dropout with train positional."""
    return _drop._dropout_impl(input, p, train, False, feature=True, alpha=True)


def feature_alpha_dropout_(input, p: float, train: bool):
    return _drop._dropout_impl(input, p, train, True, feature=True, alpha=True)


def relu_(input):
    return input.relu_()


def selu_(input):
    return input.selu_()


def celu_(input, alpha: float = 1.0):
    return input.celu_(alpha)


def sigmoid_(input):
    return input.sigmoid_()


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    """F.rrelu, the training slopes drawn from generator (default: the default generator)."""
    return _act._rrelu(input, lower, upper, training, False, generator)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    return _act._rrelu(input, lower, upper, training, True, generator)


@_autocast.lower_precision
def prelu(input, weight):
    return _act.prelu(input, weight)


def threshold(input, threshold: float, value: float):
    return _act.threshold(input, threshold, value)


def threshold_(input, threshold: float, value: float):
    return _act.threshold_(input, threshold, value)


def hardshrink(input, lambd: float = 0.5):
    return _act.hardshrink(input, lambd)


def bilinear(input1, input2, weight, bias=None):
    return _linear.bilinear(input1, input2, weight, bias)


def pdist(input, p: float = 2.0):
    return _dist.pdist(input, p)


cdist = _dist.cdist


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    return _dist.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    return _dist.pairwise_distance(x1, x2, p, eps, keepdim)


@_autocast.fp32
def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    return _loss.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction_name(reduction))


@_autocast.fp32
def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: int = 1):
    return _loss.hinge_embedding_loss(input, target, margin, reduction=_reduction_name(reduction))


@_autocast.fp32
def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    return _loss.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction_name(reduction))


@_autocast.fp32
def poisson_nll_loss(input, target, log_input: bool, full: bool, eps: float, reduction: int):
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction_name(reduction))


@_autocast.fp32
def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 1):
    return _loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_reduction_name(reduction))


@_autocast.fp32
def kl_div(input, target, reduction: int = 1, *, log_target: bool = False):
    """The pointwise KL divergence, reduced by the int enum (no 'batchmean' here, and no
    warning for mean, as torch's top level)."""
    loss = _loss.kl_div(input, target, reduction="none", log_target=log_target)
    return _loss._reduce(loss, _reduction_name(reduction))

def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The largest element of each window of (N, C, L) or (C, L)."""
    return _pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The largest element of each window of (N, C, H, W) or (C, H, W)."""
    return _pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


@_autocast.fp32
def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The largest element of each window of (N, C, D, H, W) or (C, D, H, W).

    >>> ember.max_pool3d(ember.arange(8.).view(1, 2, 2, 2), 2).tolist()
    [[[[7.0]]]]
    """
    return _pool.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(max_pool1d, the index of each maximum along L)."""
    return _pool.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    """The mean of each window of (N, C, L) or (C, L)."""
    return _pool.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) to output_size positions."""
    return _pool.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """(max pooling of (N, C, L) or (C, L) to output_size positions, the maxima's indices)."""
    return _pool.adaptive_max_pool1d_with_indices(input, output_size)
