"""dropout and the channel-wise dropout1d/2d/3d: a bernoulli mask, scaled by 1 / (1 - p)."""
from __future__ import annotations

import warnings

from ... import _C


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_with_noise_shape(input, p: float, noise_shape, inplace: bool):
    if p == 1.0:
        return input.mul_(0) if inplace else input * _C.zeros((), dtype=input.dtype)
    # mask of kept elements, scaled so the expectation is unchanged
    mask = _C.empty(noise_shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p).div_(1 - p)
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


_SELU_ALPHA = 1.7580993408473766  # selu's scale * alpha: where alpha dropout sends dropped elements (before a, b)


def _dropout_impl(input, p: float, train: bool, inplace: bool, feature: bool, alpha: bool):
    """torch's dropout family at the top level (torch.dropout, feature_dropout, alpha_dropout,
    feature_alpha_dropout and their in-place forms): RuntimeErrors, input itself when
    nothing drops. Alpha dropout keeps selu's mean and variance: dropped elements go to
    -alpha, then all are scaled by a and shifted by b."""
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 0.0 or not train or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0) if inplace else input * _C.zeros((), dtype=input.dtype)
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature else tuple(input.shape)
    keep = _C.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    if not alpha:
        keep = keep.div_(1 - p)
        return input.mul_(keep) if inplace else input * keep
    a = 1.0 / ((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p)) ** 0.5
    shift = (keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
    scale = keep * a
    return input.mul_(scale).add_(shift) if inplace else input * scale + shift


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for selu networks: dropped elements take selu's negative saturation value,
    then an affine map restores the input's mean and variance.

    >>> ember.nn.functional.alpha_dropout(ember.ones(2), 0.5).tolist()
    [1.0, 1.0]
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """alpha_dropout of whole channels (one draw per batch element and channel)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)
