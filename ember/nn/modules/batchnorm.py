"""Batch normalization: per-channel statistics of the batch in training, folded into
running estimates that eval mode uses."""
from __future__ import annotations

from typing import Optional

from ... import _C
from .. import functional as F
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module, _no_grad
from .normalization import _register_affine, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


class _NormBase(Module):
    """weight (ones) and bias (zeros) of num_features when affine; the buffers
    running_mean (zeros), running_var (ones) and num_batches_tracked (int64 0) when
    track_running_stats, else those names registered as None."""

    _version = 2  # version 2 added num_batches_tracked
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, num_features, affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", _C.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", _C.zeros((), dtype=_C.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with _no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed load with it at 0
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                tracked = self.num_batches_tracked  # a meta one has no count to give: torch's 0 instead
                state_dict[key] = (tracked if tracked is not None and not tracked.is_meta
                                   else _C.zeros((), dtype=_C.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        return self._local_batch_norm(input)

    def _local_batch_norm(self, input):
        """Batch norm over this process's batch, updating the running statistics."""
        # momentum None: the running stats are the cumulative average over the batches seen
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked.item()
        # batch statistics in training, and in eval too when there are no running ones
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_running else None,
                            self.running_var if keep_running else None, self.weight, self.bias, use_batch_stats,
                            factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) over N (and L), per channel:
    (x - mean) / sqrt(var + eps) * weight + bias. momentum=None keeps a cumulative average.

    >>> bn = ember.nn.BatchNorm1d(3)
    >>> bn(ember.arange(6.).view(2, 3)).shape
    ember.Size([2, 3])
    >>> bn.running_mean.tolist(), bn.num_batches_tracked.item()
    ([0.15000000596046448, 0.25, 0.3499999940395355], 1)
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) per channel.

    >>> ember.nn.BatchNorm2d(3)(ember.randn(2, 3, 4, 4)).shape
    ember.Size([2, 3, 4, 4])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) per channel.

    >>> ember.nn.BatchNorm3d(3)(ember.randn(2, 3, 2, 2, 2)).shape
    ember.Size([2, 3, 2, 2, 2])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A norm whose num_features is dim 1 of its first input: weight, bias and the running
    statistics stay uninitialized until then (num_batches_tracked is a real 0)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype)  # no tensors of 0 features
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _C.zeros((), dtype=_C.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            for name in ("weight", "bias", "running_mean", "running_var"):
                tensor = getattr(self, name)
                if tensor is not None:
                    with _no_grad():
                        tensor.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features is dim 1 of its first input; it becomes a BatchNorm1d.

    >>> m = ember.nn.LazyBatchNorm1d(); m(ember.randn(4, 3)).shape, type(m).__name__
    (ember.Size([4, 3]), 'BatchNorm1d')
    """

    cls_to_become = BatchNorm1d

    def _check_input_dim(self, input) -> None:
        BatchNorm1d._check_input_dim(self, input)


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features is dim 1 of its first input."""

    cls_to_become = BatchNorm2d

    def _check_input_dim(self, input) -> None:
        BatchNorm2d._check_input_dim(self, input)


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features is dim 1 of its first input."""

    cls_to_become = BatchNorm3d

    def _check_input_dim(self, input) -> None:
        BatchNorm3d._check_input_dim(self, input)


class SyncBatchNorm(_BatchNorm):
    """Batch normalization of (N, C, *) whose statistics, in training under an initialized
    process group of more than one rank, would be those of the whole group's batch.

    As torch's on CPU: in eval mode or without an initialized process group it is plain
    batch norm; training under an initialized group raises torch's ValueError for a CPU
    input (synchronized batch norm is for GPU inputs). A CUDA input in a group of one is
    plain batch norm; in a larger group ember raises NotImplementedError (it does not
    synchronize the statistics yet).

    >>> ember.nn.SyncBatchNorm(3)(ember.randn(2, 3, 4)).shape
    ember.Size([2, 3, 4])
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        uses_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        group = self._process_group() if uses_batch_stats and self.training else None
        if group is not None:
            # torch checks the device first, so a CPU input fails even in a group of one
            if input.device.type != "cuda":
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
            if group[0].get_world_size(group[1]) > 1:
                raise NotImplementedError("SyncBatchNorm: ember does not synchronize batch statistics across ranks "
                                          "yet; convert the model back to BatchNorm*d for per-rank statistics")
        return self._local_batch_norm(input)

    def _process_group(self):
        """(ember.distributed, the group to synchronize over), or None where no process
        group is initialized."""
        import sys
        dist = sys.modules.get("ember.distributed")  # not initialized unless imported
        if dist is None or not dist.is_available() or not dist.is_initialized():
            return None
        return dist, (self.process_group or dist.group.WORLD)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replaces every BatchNorm*d layer in module (module itself included) by a
        SyncBatchNorm over process_group holding the same parameter, buffer objects and
        training flag; returns module, or the new layer where module was a batch norm.

        >>> net = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3))
        >>> ember.nn.SyncBatchNorm.convert_sync_batchnorm(net)[1]
        SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        """
        converted = module
        if isinstance(module, _BatchNorm):
            converted = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with _no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
