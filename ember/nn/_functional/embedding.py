"""The lookups of class indices: embedding (the native op; max_norm's in-place
renormalization is Python) and one_hot."""
from __future__ import annotations

from typing import Optional

from ... import _C
from ...autograd.grad_mode import no_grad


def embedding(input, weight, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False):
    """The rows of weight at the indices of input; the padding_idx row gets no gradient;
    with max_norm, the rows looked up are first renormalized in place (as torch does).

    >>> ember.nn.functional.embedding(ember.tensor([1]), ember.eye(2)).tolist()
    [[0.0, 1.0]]
    """
    num = weight.size(0)
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _embedding_renorm_(weight, indices, max_norm: float, norm_type: float) -> None:
    """Rows of weight at indices whose norm exceeds max_norm scaled to max_norm (no grad);
    nothing on meta, where the rows to scale are unknown."""
    if weight.is_meta:
        return
    with no_grad():
        rows = _C._unique(indices.reshape(-1), True, False, False, None)[0]
        picked = weight.index_select(0, rows)
        norms = _C.linalg_vector_norm(picked, float(norm_type), [1], True)
        scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), _C.ones_like(norms))
        weight.index_copy_(0, rows, picked * scale)


def one_hot(tensor, num_classes: int = -1):
    """(*) int64 class indices -> (*, num_classes) int64 with a 1 at each index
    (num_classes=-1: the largest index + 1).

    >>> ember.nn.functional.one_hot(ember.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if not isinstance(num_classes, int) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not {type(num_classes).__name__}")
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _C.empty((*tensor.shape, num_classes), dtype=_C.int64, device=tensor.device)
    # on meta the values are unknown: the checks are skipped, and -1 raises item()'s error, as torch
    if not tensor.is_meta and tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = tensor.max().item() + 1
    elif not tensor.is_meta and tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = _C.zeros((*tensor.shape, num_classes), dtype=_C.int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm: Optional[float] = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False, padding_idx: Optional[int] = None):
    """Bags of embeddings reduced (sum, mean or max) without forming the looked-up rows:
    a 2-D input (B, L) is B bags of L indices; a 1-D input is cut into bags at offsets.
    per_sample_weights (mode='sum') scale each row; padding_idx rows are skipped, and an
    empty bag gives zeros. The native embedding_bag computes it.

    >>> ember.nn.functional.embedding_bag(ember.tensor([[0, 2]]), ember.arange(6.).view(3, 2)).tolist()
    [[2.0, 3.0]]
    """
    if weight.dtype == _C.int64 and input.is_floating_point():  # torch's legacy argument order
        input, weight = weight, input
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        bags, length = input.shape
        offsets = _C.arange(0, input.numel(), length, dtype=input.dtype, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return _C.embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
                            per_sample_weights, include_last_offset, padding_idx)[0]
