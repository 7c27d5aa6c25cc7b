"""LinearCrossEntropyOptions: how F.linear_cross_entropy's chunked path splits the batch.

The fields, defaults, validation errors and the chunk-size rule are torch 2.13's. ember
computes every chunk in ``acc_dtype`` (float32 for float16/bfloat16 inputs under "auto"),
so the four accumulation policies are accepted and resolved but give the same numbers
(torch's "accurate"); only the chunk size changes how much memory a call takes.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ... import _C

__all__ = ["LinearCrossEntropyOptions"]

_POLICIES = ("auto", "accurate", "balanced", "compact")

# (device type, dtype) -> (acc_policy, chunking_method) that "auto" resolves to (torch's picks)
_AUTO_DEFAULTS = {
    ("cuda", _C.bfloat16): ("compact", "aspect_ratio:2"),
    ("cuda", _C.float16): ("compact", "aspect_ratio:2"),
    ("cpu", _C.bfloat16): ("accurate", "aspect_ratio"),
    ("cpu", _C.float16): ("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Options of linear_cross_entropy's chunked path: ``batch_chunk_size`` rows per chunk,
    or ``chunking_method`` "aspect_ratio[:N]" (chunks whose logits take about as much
    memory as the input, divided by N; "auto" picks per device and dtype), the
    accumulation policy and dtype, and whether backward may run twice
    (``allow_retain_graph``).

    >>> ember.nn.LinearCrossEntropyOptions(batch_chunk_size=64).batch_chunk_size
    64
    """

    allow_retain_graph: bool = False
    batch_chunk_size: Optional[int] = None
    chunking_method: Optional[str] = "auto"
    acc_policy: str = "auto"
    acc_dtype: Optional[object] = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, colon, factor = self.chunking_method.partition(":")
            factor = factor if colon else "1"
            if name != "aspect_ratio" or not factor.isdigit() or int(factor) <= 0:
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if size is not None and not (isinstance(size, int) and size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    def _resolve(self, num_batches: int, in_features: int, num_classes: int, dtype, device):
        """(batch_chunk_size, acc_dtype) for one call, "auto" resolved as torch resolves it."""
        method = self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None  # an explicit size wins over the automatic method
        if method == "auto":
            method = _AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)[1]
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            factor = int(method.partition(":")[2] or 1)
            # chunks whose (chunk, classes) logits are about the size of the (batch, in) input
            target = _ceil_div(num_batches, _ceil_div(num_classes, in_features))
            size = min((1 << (target - 1).bit_length()) // factor, num_batches)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give "
                                 f"different chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            half = dtype in (_C.float16, _C.bfloat16)
            acc_dtype = _C.float32 if half and self.acc_policy == "auto" else dtype
        return max(1, size), acc_dtype
