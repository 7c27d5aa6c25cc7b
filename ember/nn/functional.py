"""ember.nn.functional: the layers as functions, with torch.nn.functional's signatures.

This module only names the functions; each is written in one private module of
ember/nn/_functional/, by what it is:

    activation.py   relu, gelu, silu, elu, leaky_relu, hardtanh, prelu, threshold, ...
    softmax.py      softmax, log_softmax, softmin
    loss.py         nll_loss, cross_entropy, mse_loss, binary_cross_entropy, kl_div, ...
    conv.py         conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold
    pool.py         max, average and adaptive pooling
    norm.py         batch_norm, layer_norm, group_norm, rms_norm, normalize
    embedding.py    embedding, one_hot
    linear.py       linear, bilinear, identity
    dropout.py      dropout, dropout1d/2d/3d
    attention.py    scaled_dot_product_attention, multi_head_attention_forward
    vision.py       pad, interpolate, pixel_shuffle, pixel_unshuffle
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

from ._functional.activation import (celu, celu_, elu, elu_, gelu, hardshrink, hardsigmoid, hardswish, hardtanh,
                                     hardtanh_, leaky_relu, leaky_relu_, logsigmoid, mish, prelu, relu, relu6, relu_,
                                     selu, selu_, sigmoid, silu, softplus, softshrink, softsign, tanh, tanhshrink,
                                     threshold, threshold_)
# _canonical_mask and _none_or_dtype are private names of torch.nn.functional too; the transformer layers use them
from ._functional.attention import (_canonical_mask, _none_or_dtype, multi_head_attention_forward,
                                    scaled_dot_product_attention)
from ._functional.conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, fold,
                               unfold)
from ._functional.dropout import dropout, dropout1d, dropout2d, dropout3d
from ._functional.embedding import embedding, one_hot
from ._functional.linear import bilinear, identity, linear
from ._functional.loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                               cross_entropy, huber_loss, kl_div, l1_loss, margin_ranking_loss, mse_loss, nll_loss,
                               smooth_l1_loss)
from ._functional.norm import batch_norm, group_norm, layer_norm, normalize, rms_norm
from ._functional.pool import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d,
                               adaptive_max_pool1d_with_indices, adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
                               avg_pool1d, avg_pool2d, max_pool1d, max_pool1d_with_indices, max_pool2d,
                               max_pool2d_with_indices)
from ._functional.softmax import log_softmax, softmax, softmin
from ._functional.vision import interpolate, pad, pixel_shuffle, pixel_unshuffle

__all__ = [
    # activation
    "relu", "relu_", "relu6", "threshold", "threshold_", "hardtanh", "hardtanh_", "elu", "elu_", "selu", "selu_",
    "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "gelu", "silu", "mish", "softplus", "hardswish",
    "hardsigmoid", "logsigmoid", "tanh", "sigmoid", "softsign", "tanhshrink", "hardshrink", "softshrink",
    # softmax
    "softmax", "log_softmax", "softmin",
    # loss
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "margin_ranking_loss",
    # conv
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
    # pool
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    # norm
    "batch_norm", "layer_norm", "group_norm", "rms_norm", "normalize",
    # embedding
    "embedding", "one_hot",
    # linear
    "linear", "bilinear", "identity",
    # dropout
    "dropout", "dropout1d", "dropout2d", "dropout3d",
    # attention
    "scaled_dot_product_attention", "multi_head_attention_forward",
    # vision
    "pad", "interpolate", "pixel_shuffle", "pixel_unshuffle",
]
