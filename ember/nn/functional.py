"""ember.nn.functional: the layers as functions, with torch.nn.functional's signatures.

This module only names the functions; each is written in one private module of
ember/nn/_functional/, by what it is:

    activation.py   relu, gelu, silu, elu, leaky_relu, hardtanh, prelu, threshold, ...
    softmax.py      softmax, log_softmax, softmin
    loss.py         nll_loss, cross_entropy, mse_loss, binary_cross_entropy, kl_div, ...
    conv.py         conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold
    pool.py         max, average, adaptive, lp and fractional pooling, max_unpool
    norm.py         batch_norm, layer_norm, group_norm, rms_norm, normalize, instance_norm,
                    local_response_norm
    distance.py     cosine_similarity, pairwise_distance, pdist
    embedding.py    embedding, embedding_bag, one_hot
    ctc.py          ctc_loss
    linear.py       linear, bilinear, identity
    dropout.py      dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout
    attention.py    scaled_dot_product_attention, multi_head_attention_forward
    vision.py       pad, interpolate, upsample*, grid_sample, affine_grid, pixel_shuffle,
                    pixel_unshuffle, channel_shuffle
    _utils.py       what several topics use

The heavy numerics (softmax, the losses, convolution, pooling, normalization, embedding and
most activations) are native ops with native derivatives (declarations/ops/nn_<topic>.yaml; the
C++ op layer is split by the same topics, csrc/ops/nn_<topic>.cpp): their functions here
check and convert the arguments as torch's do, then call the op. The rest are
compositions of ember's ops, differentiated by autograd; a topic module's docstring says
which of its functions are which.

>>> import ember.nn.functional as F
>>> F.cross_entropy(ember.tensor([[0., 0.]]), ember.tensor([1])).item()
0.6931471824645996
"""
from __future__ import annotations

from ._functional.activation import (celu, celu_, elu, elu_, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh,
                                     hardtanh_, leaky_relu, leaky_relu_, logsigmoid, mish, prelu, relu, relu6, relu_,
                                     rrelu, rrelu_, selu, selu_, sigmoid, silu, softplus, softshrink, softsign, tanh,
                                     tanhshrink, threshold, threshold_)
# _canonical_mask and _none_or_dtype are private names of torch.nn.functional too; the transformer layers use them
from ._functional.attention import (_canonical_mask, _none_or_dtype, multi_head_attention_forward,
                                    scaled_dot_product_attention)
from ._functional.conv import (conv_tbc, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, fold,
                               unfold)
from ._functional.distance import cosine_similarity, pairwise_distance, pdist
from ._functional.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ._functional.ctc import ctc_loss
from ._functional.embedding import embedding, embedding_bag, one_hot
from ._functional.linear import bilinear, identity, linear
from ._functional.linear_cross_entropy import linear_cross_entropy
from ._functional.loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                               cross_entropy, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss,
                               margin_ranking_loss, mse_loss, multi_margin_loss, multilabel_margin_loss,
                               multilabel_soft_margin_loss, nll_loss, poisson_nll_loss, smooth_l1_loss,
                               soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)
from ._functional.norm import (batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, normalize,
                               rms_norm)
from ._functional.pool import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
                               adaptive_max_pool1d_with_indices, adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
                               adaptive_max_pool3d, adaptive_max_pool3d_with_indices, avg_pool1d, avg_pool2d,
                               avg_pool3d, fractional_max_pool2d, fractional_max_pool2d_with_indices,
                               fractional_max_pool3d, fractional_max_pool3d_with_indices, lp_pool1d, lp_pool2d,
                               lp_pool3d, max_pool1d, max_pool1d_with_indices, max_pool2d, max_pool2d_with_indices,
                               max_pool3d, max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d)
from ._functional.softmax import log_softmax, softmax, softmin
from ._functional.vision import (affine_grid, channel_shuffle, grid_sample, interpolate, native_channel_shuffle, pad,
                                pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest)

__all__ = [
    # activation
    "relu", "relu_", "relu6", "threshold", "threshold_", "hardtanh", "hardtanh_", "elu", "elu_", "selu", "selu_",
    "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "gelu", "silu", "mish", "softplus", "hardswish",
    "hardsigmoid", "logsigmoid", "tanh", "sigmoid", "softsign", "tanhshrink", "hardshrink", "softshrink", "glu",
    "rrelu", "rrelu_",
    # softmax
    "softmax", "log_softmax", "softmin",
    # loss
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "gaussian_nll_loss",
    "poisson_nll_loss", "hinge_embedding_loss", "soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "ctc_loss", "linear_cross_entropy",
    # conv
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
    # pool
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
    "max_unpool3d",
    # norm
    "batch_norm", "layer_norm", "group_norm", "rms_norm", "normalize", "instance_norm", "local_response_norm",
    # distance
    "cosine_similarity", "pairwise_distance", "pdist",
    # embedding
    "embedding", "embedding_bag", "one_hot",
    # linear
    "linear", "bilinear", "identity",
    # dropout
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    # attention
    "scaled_dot_product_attention", "multi_head_attention_forward",
    # vision
    "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample", "affine_grid",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
]
