"""linear_cross_entropy: cross_entropy(linear(input, weight, bias), target), either composed
(options=None, torch's reference path: any reduction, label smoothing, class
probabilities, K-dimensional weights, every order of derivative) or chunked over the batch
(options given), so that only a (chunk, classes) block of logits exists at a time.

The chunked path, as torch's, computes the gradients during forward for the scalar
reductions (a backward then only scales them, and may run once unless
allow_retain_graph) and recomputes them chunk by chunk in backward for reduction='none';
it has no double backward. Per chunk, with p = softmax(logits) and w the class weight of
each row's target (0 for ignored rows), d loss / d logits = w * (p - onehot(target)),
divided by the total weight for 'mean'.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from ... import _C
from ...autograd.function import Function
from .linear import linear
from .loss import cross_entropy


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction: str = "mean",
                         ignore_index=None, label_smoothing: float = 0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...) for input (in)
    or (N, in) and linear_weight (C, in) or (C, d1, ..., dK, in) (logits (N, C, d1, ...));
    ignore_index None means -100 for class targets. With ``options`` (a
    LinearCrossEntropyOptions) the batch is processed in chunks and the full logits never
    exist; combinations the chunked path lacks fall back with a warning.

    >>> x, w = ember.ones(2, 3), ember.zeros(4, 3)
    >>> round(ember.nn.functional.linear_cross_entropy(x, w, ember.tensor([0, 1])).item(), 4)
    1.3863
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, "
                           f"got {tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index

    if options is not None:
        chunkable = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                     and target.dtype == _C.int64)
        if chunkable:
            return _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options)
        bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, linear_bias.shape={bias_shape}.",
                      stacklevel=2)

    if out_features:  # (C, d1, ..., in) as one (C * d1 * ..., in) linear, its logits viewed back
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        linear_bias = linear_bias.reshape(rows) if linear_bias is not None else None
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


@dataclass(frozen=True)
class _Config:
    reduction: str
    ignore_index: int
    chunk: int
    acc_dtype: object
    allow_retain_graph: bool
    needs: tuple  # whether input, weight, bias want gradients


def _chunked(input, weight, target, bias, class_weight, reduction, ignore_index, options):
    unbatched = input.dim() == 1
    if unbatched:  # (in) -> (1, in)
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n, in_features = input.shape
    chunk, acc_dtype = options._resolve(n, in_features, weight.shape[0], input.dtype, input.device)
    grad_on = _C.is_grad_enabled()
    needs = tuple(t is not None and t.requires_grad and grad_on for t in (input, weight, bias))
    config = _Config(reduction, ignore_index, chunk, acc_dtype, options.allow_retain_graph, needs)
    out = _ChunkedLinearCrossEntropy.apply(input, weight, bias, target, class_weight, config)
    return out.squeeze(0) if unbatched else out


def _row_weights(target, class_weight, ignore_index: int, num_classes: int, dtype):
    """(each row's class weight, 0 where ignored; the target with ignored rows as class 0)."""
    valid = target != ignore_index
    safe = _C.where(valid, target, target.new_zeros(()))
    if bool(((safe < 0) | (safe >= num_classes)).any()):
        bad = safe[(safe < 0) | (safe >= num_classes)][0].item()
        # torch's chunked path fails in its gather, with the gather's error
        raise RuntimeError(f"index {bad} is out of bounds for dimension 1 with size {num_classes}")
    w = class_weight.to(dtype).index_select(0, safe) if class_weight is not None else valid.to(dtype)
    return w * valid.to(dtype), safe


def _chunk_step(x, weight, bias, safe, w, need_grad: bool):
    """(loss per row, d loss / d logits or None) of one chunk, in the accumulation dtype."""
    logits = x.matmul(weight.t())  # (chunk, in) @ (in, C) -> (chunk, C)
    if bias is not None:
        logits = logits + bias
    lse = logits.logsumexp(1)
    picked = logits.gather(1, safe.unsqueeze(1)).squeeze(1)
    loss = w * (lse - picked)
    if not need_grad:
        return loss, None
    grad = (logits - lse.unsqueeze(1)).exp_().mul_(w.unsqueeze(1))  # w * softmax
    grad.scatter_add_(1, safe.unsqueeze(1), -w.unsqueeze(1))  # - w at the target class
    return loss, grad


class _ChunkedLinearCrossEntropy(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, target, class_weight, config):
        acc = config.acc_dtype
        n = input.shape[0]
        w_all, safe_all = _row_weights(target, class_weight, config.ignore_index, weight.shape[0], acc)
        wa = weight.to(acc)
        ba = bias.to(acc) if bias is not None else None
        scalar = config.reduction != "none"
        need_grad = scalar and any(config.needs)
        total = w_all.sum() if config.reduction == "mean" else None
        losses = []
        gx = input.new_empty(input.shape, dtype=acc) if need_grad and config.needs[0] else None
        gw = _C.zeros_like(wa) if need_grad and config.needs[1] else None
        gb = _C.zeros_like(ba) if need_grad and config.needs[2] else None
        for start in range(0, n, config.chunk):
            stop = min(start + config.chunk, n)
            x = input[start:stop].to(acc)
            loss, grad = _chunk_step(x, wa, ba, safe_all[start:stop], w_all[start:stop], need_grad)
            losses.append(loss)
            if grad is not None:
                if total is not None:
                    grad = grad / total
                if gx is not None:
                    gx[start:stop] = grad.matmul(wa)  # (chunk, C) @ (C, in)
                if gw is not None:
                    gw.addmm_(grad.t(), x)  # (C, chunk) @ (chunk, in)
                if gb is not None:
                    gb.add_(grad.sum(0))
        loss = _C.cat(losses) if losses else input.new_zeros((0,), dtype=acc)
        if config.reduction == "sum":
            loss = loss.sum()
        elif config.reduction == "mean":
            loss = loss.sum() / total
        ctx.config = config
        ctx.dtypes = tuple(t.dtype if t is not None else None for t in (input, weight, bias))
        if scalar:
            ctx.grads = (gx, gw, gb)
        else:
            ctx.save_for_backward(input, weight, bias, target, class_weight)
        return loss.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        config = ctx.config
        if config.reduction != "none":
            if ctx.grads is None:
                raise RuntimeError("linear_cross_entropy chunked backward called twice; retain_graph=True / "
                                   "double backward are not supported.")
            grads = ctx.grads
            if not config.allow_retain_graph:
                ctx.grads = None
            g = grad_output.to(config.acc_dtype)
            gx, gw, gb = (t * g if t is not None else None for t in grads)
        else:
            gx, gw, gb = _none_reduction_grads(ctx, grad_output)
        grads = tuple(g.to(dtype) if g is not None else None for g, dtype in zip((gx, gw, gb), ctx.dtypes))
        return (*grads, None, None, None)


def _none_reduction_grads(ctx, grad_output):
    """The gradients of reduction='none', recomputed chunk by chunk."""
    config = ctx.config
    input, weight, bias, target, class_weight = ctx.saved_tensors
    acc = config.acc_dtype
    w_all, safe_all = _row_weights(target, class_weight, config.ignore_index, weight.shape[0], acc)
    w_all = w_all * grad_output.to(acc)  # each row's gradient scaled by its output's
    wa = weight.to(acc)
    ba = bias.to(acc) if bias is not None else None
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    gx = input.new_empty(input.shape, dtype=acc) if need_x else None
    gw = _C.zeros_like(wa) if need_w else None
    gb = _C.zeros_like(ba) if need_b else None
    for start in range(0, input.shape[0], config.chunk):
        stop = min(start + config.chunk, input.shape[0])
        x = input[start:stop].to(acc)
        _, grad = _chunk_step(x, wa, ba, safe_all[start:stop], w_all[start:stop], True)
        if gx is not None:
            gx[start:stop] = grad.matmul(wa)
        if gw is not None:
            gw.addmm_(grad.t(), x)
        if gb is not None:
            gb.add_(grad.sum(0))
    return gx, gw, gb
