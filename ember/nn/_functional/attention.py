"""scaled_dot_product_attention and multi_head_attention_forward, composed of matmuls, a
softmax and masks; a query that may attend to nothing gets zeros (torch's safe softmax)."""
from __future__ import annotations

import math
import warnings

from ... import _C
from .dropout import dropout
from .linear import linear
from .softmax import softmax
from .vision import pad
from ... import _autocast


# C++ names of the dtypes, as torch's attention messages print them
_CPP_DTYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                    "uint8": "unsigned char", "bool": "bool"}


def _cpp_dtype_name(dtype) -> str:
    return _CPP_DTYPE_NAMES[repr(dtype).split(".", 1)[1]]


def _check_attention_inputs(query, key, value, attn_mask, is_causal: bool, dropout_p: float) -> None:
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_dtype_name(query.dtype)} key.dtype: {_cpp_dtype_name(key.dtype)} and value.dtype: "
                           f"{_cpp_dtype_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_C.bool, _C.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cpp_dtype_name(attn_mask.dtype)} and  query.dtype: "
                           f"{_cpp_dtype_name(query.dtype)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")


def _repeat_heads(query, kv):
    """Grouped-query attention: each of kv's heads serves query.size(-3) / kv.size(-3) query heads."""
    if kv.dim() < 3 or query.size(-3) == kv.size(-3):
        return kv
    if kv.size(-3) == 0 or query.size(-3) % kv.size(-3):
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return kv.repeat_interleave(query.size(-3) // kv.size(-3), -3)


def _safe_softmax(scores):
    """softmax over the last dim, with rows where every score is -inf (fully masked) all
    zero instead of NaN, and no gradient through them."""
    dead = scores.isneginf().all(-1, keepdim=True)
    if not scores.is_meta and not dead.any().item():  # meta: no values, the masked path's shape
        return _C.softmax(scores, -1)
    return _C.softmax(_C.masked_fill(scores, dead, 0.0), -1).masked_fill(dead, 0.0)


@_autocast.lower_precision
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale=None, enable_gqa: bool = False):
    """softmax(q k^T * scale + mask) v over (..., L, E) queries, (..., S, E) keys and
    (..., S, Ev) values -> (..., L, Ev). A bool attn_mask keeps where True, a float one is
    added; is_causal masks the future (query i sees keys 0..i); a query that may attend to
    nothing gets zeros. dropout_p drops attention weights whenever it is > 0 (training or
    not, as torch's). enable_gqa repeats key/value heads (dim -3) to the query's count.

    >>> q = ember.ones(1, 2, 4)
    >>> ember.nn.functional.scaled_dot_product_attention(q, q, ember.eye(4)[:2].unsqueeze(0)).tolist()
    [[[0.5, 0.5, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]]]
    """
    _check_attention_inputs(query, key, value, attn_mask, is_causal, dropout_p)
    L, S = query.size(-2), key.size(-2)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if enable_gqa:
        key, value = _repeat_heads(query, key), _repeat_heads(query, value)
    # the scale goes onto the queries ((..., L, E): a pass over them, not over the scores)
    scores = (query * scale).matmul(key.transpose(-2, -1))  # (..., L, S)
    if is_causal:
        future = _C.ones((L, S), dtype=_C.bool, device=scores.device).triu(1)
        scores = scores.masked_fill_(future, float("-inf"))  # a fresh product: in place
    if attn_mask is not None:
        if attn_mask.dtype == _C.bool:
            scores = _C.masked_fill(scores, attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    # only an attn_mask can mask a whole row: under is_causal alone query i sees key 0
    weights = _safe_softmax(scores) if attn_mask is not None else _C.softmax(scores, -1)
    if dropout_p >= 1.0:
        weights = weights * 0.0
    elif dropout_p > 0.0:
        keep = _C.empty(tuple(weights.shape), dtype=weights.dtype, device=weights.device).bernoulli_(1.0 - dropout_p)
        weights = weights * keep.div_(1.0 - dropout_p)
    return weights.matmul(value)


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _C.TensorBase):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or ember.Tensor")


def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True):
    """An attention mask as an additive float mask of target_type: a bool mask's True
    (masked out) becomes -inf, its False 0; a float mask is returned as it is."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _C.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.")
    if is_float:
        return mask
    return _C.zeros(tuple(mask.shape), dtype=target_type, device=mask.device).masked_fill_(mask, float("-inf"))


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """Whether the inputs are batched ((L, N, E) query) or not ((L, E)); raises torch's
    AssertionErrors for inconsistent ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                     f"found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.size(0), key.size(0))
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate):
    """q, k, v projected to embed_dim: one matmul for self-attention (query is key is
    value), two when key is value, three otherwise."""
    E = query.size(-1)
    if separate is not None:
        w_q, w_k, w_v = separate
        b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
        return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    if key is value:
        if query is key:
            return linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)  # (L, N, 3E) -> 3 x (L, N, E)
        w_q, w_kv = in_proj_weight.split([E, 2 * E])
        b_q, b_kv = in_proj_bias.split([E, 2 * E]) if in_proj_bias is not None else (None, None)
        return (linear(query, w_q, b_q), *linear(key, w_kv, b_kv).chunk(2, -1))
    w_q, w_k, w_v = in_proj_weight.chunk(3)
    b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _append_column(mask):
    """One more key position, not masked (for bias_k/bias_v or the zero attention)."""
    return pad(mask, (0, 1)) if mask is not None else None


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None, need_weights: bool = True,
                                 attn_mask=None, use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
                                 average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention over sequence-first inputs: query (L, N, E) or unbatched
    (L, E), key (S, N, kdim), value (S, N, vdim) -> (attn_output (L, N, E), weights
    (N, L, S) averaged over heads, (N, heads, L, S) per head, or None without
    need_weights). Masks: True / -inf masks a position out. key_padding_mask (N, S),
    attn_mask (L, S) or (N * heads, L, S). is_causal is a hint that attn_mask is causal.

    >>> E = ember.eye(4)
    >>> x = ember.ones(3, 1, 4)
    >>> out, w = ember.nn.functional.multi_head_attention_forward(x, x, x, 4, 2, ember.cat([E, E, E]), None, None,
    ...     None, False, 0.0, E, None)
    >>> out.shape, w.shape
    (ember.Size([3, 1, 4]), ember.Size([1, 3, 3]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        # (L, E) -> (L, 1, E); the masks get their batch dim
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.size(0)
    if key_padding_mask is not None and key_padding_mask.size(1) != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.size(1)}")

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                           "`generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # attention applies the causal mask itself; the hint says attn_mask is that mask
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w, x in (("query", q_proj_weight, query), ("key", k_proj_weight, key),
                           ("value", v_proj_weight, value)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name[0]}_proj_weight is None")
            if tuple(w.shape) != (embed_dim, x.size(-1)):
                raise AssertionError(f"expecting {name} weights shape of {(embed_dim, x.size(-1))}, but got "
                                     f"{w.shape}")
        separate = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        separate = None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key." if static_k is not None
                                 else "bias cannot be added to static value.")
        # one more key/value position, learned: (S, N, E) -> (S + 1, N, E)
        k = _C.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _C.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = _append_column(attn_mask)
        key_padding_mask = _append_column(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static_or_heads(k, static_k, "key", bsz, num_heads, head_dim)
    v = _static_or_heads(v, static_v, "value", bsz, num_heads, head_dim)

    if add_zero_attn:
        zeros = q.new_zeros((bsz * num_heads, 1, head_dim))
        k = _C.cat([k, zeros], 1)
        v = _C.cat([v, zeros], 1)
        attn_mask = _append_column(attn_mask)
        key_padding_mask = _append_column(key_padding_mask)
    src_len = k.size(1)

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        # (N, S) -> (N * heads, 1, S), broadcast over queries
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        key_padding_mask = key_padding_mask.reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        q = q * math.sqrt(1.0 / head_dim)
        if attn_mask is not None:
            weights = _C.baddbmm(attn_mask, q, k.transpose(-2, -1))  # (N * heads, L, S)
        else:
            weights = _C.bmm(q, k.transpose(-2, -1))
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = _C.bmm(weights, v)  # (N * heads, L, head_dim)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        # (1 or N * heads, L, S) -> (1 or N, heads, L, S)
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 else attn_mask.view(bsz, num_heads, -1,
                                                                                          src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    # (N, heads, L, head_dim) -> (L * N, E)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
    return (out if is_batched else out.squeeze(1)), None


def _static_or_heads(x, static, name: str, bsz: int, num_heads: int, head_dim: int):
    """(S, N, E) -> (N * heads, S, head_dim), or the given static keys/values of that shape."""
    if static is None:
        return x.reshape(x.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    if static.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting static_{name[0]}.size(0) of {bsz * num_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting static_{name[0]}.size(2) of {head_dim}, but got {static.size(2)}")
    return static
