"""Instance normalization: each sample's channels normalized over their own spatial dims,
in training and eval alike unless track_running_stats keeps running estimates for eval."""
from __future__ import annotations

import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """_NormBase with instance norm's defaults (affine and track_running_stats off); an
    input without its batch dim is normalized as a batch of one."""

    _dims = 0  # the dims of an input without a batch dim

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (self._dims, self._dims + 1):
            raise ValueError(f"expected {self._dims}D or {self._dims + 1}D input (got {input.dim()}D input)")

    def _get_no_batch_dim(self) -> int:
        return self._dims

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        # checkpoints from before 0.4 hold running stats that track_running_stats=False modules lack
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                name = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                    "track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                    "them. See the documentation of {klass} for details.".format(
                        names=" and ".join(f'"{k}"' for k in keys), klass=name))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or (C, L).

    >>> ember.nn.InstanceNorm1d(1)(ember.tensor([[[1., 3.]]])).tolist()
    [[[-0.9999949932098389, 0.9999949932098389]]]
    """

    _dims = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or (C, H, W).

    >>> ember.nn.InstanceNorm2d(3)(ember.randn(2, 3, 4, 4)).shape
    ember.Size([2, 3, 4, 4])
    """

    _dims = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) or (C, D, H, W).

    >>> ember.nn.InstanceNorm3d(3)(ember.randn(2, 3, 2, 2, 2)).shape
    ember.Size([2, 3, 2, 2, 2])
    """

    _dims = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm1d whose num_features is dim 1 of its first input (as torch's, also for
    an input without its batch dim); affine and track_running_stats default on, as torch's.

    >>> m = ember.nn.LazyInstanceNorm1d(); m(ember.randn(2, 3, 5)).shape, type(m).__name__
    (ember.Size([2, 3, 5]), 'InstanceNorm1d')
    """

    cls_to_become = InstanceNorm1d
    _dims = 2


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm2d whose num_features is dim 1 of its first input."""

    cls_to_become = InstanceNorm2d
    _dims = 3


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm3d whose num_features is dim 1 of its first input."""

    cls_to_become = InstanceNorm3d
    _dims = 4
