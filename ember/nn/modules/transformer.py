"""The transformer of "Attention Is All You Need", as torch.nn has it: encoder and decoder
layers, their stacks, and the whole model. Submodules are named as torch's, so
state_dicts interchange."""
from __future__ import annotations

import copy
import warnings
from typing import Callable, Optional, Union

from ... import _C
from .. import functional as F
from ..init import xavier_uniform_
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """(sz, sz) float mask, -inf above the diagonal: position i attends to 0..i."""
    return _C.full((sz, sz), float("-inf"), dtype=_C.float32 if dtype is None else dtype, device=device).triu(1)


def _get_activation_fn(activation: str) -> Callable:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_seq_len(src, batch_first: bool) -> Optional[int]:
    if src.dim() == 2:  # unbatched (S, E)
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal: Optional[bool] = None, size: Optional[int] = None) -> bool:
    """is_causal when given; else whether mask equals the square subsequent mask (so that
    attention may apply the causal mask itself)."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    sz = size if size is not None else mask.size(-2)
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    if tuple(mask.shape) != tuple(causal.shape):
        return False
    return bool((mask == causal).all().item())


def _activation_kind(activation) -> int:
    """1 for relu, 2 for gelu, 0 for anything else (torch's activation_relu_or_gelu)."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


def _add_layer_parts(layer: Module, attentions, norms, dropouts, d_model: int, nhead: int, dim_feedforward: int,
                     dropout: float, activation, layer_norm_eps: float, batch_first: bool, norm_first: bool,
                     bias: bool, device, dtype) -> Callable:
    """Registers what encoder and decoder layers share, in torch's order (the state_dict's
    keys and the parameters' random draws follow it): a MultiheadAttention per name in
    attentions, the feed-forward block (linear1, dropout, linear2), norm_first, then a
    LayerNorm per name in norms and a Dropout per name in dropouts (one per block).
    Returns the activation as a callable ('relu' and 'gelu' name F.relu and F.gelu)."""
    factory = {"device": device, "dtype": dtype}
    for name in attentions:
        setattr(layer, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                **factory))
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
    layer.norm_first = norm_first
    for name in norms:
        setattr(layer, name, LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
    for name in dropouts:
        setattr(layer, name, Dropout(dropout))
    return _get_activation_fn(activation) if isinstance(activation, str) else activation


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (linear1, activation, linear2), each with
    dropout, a residual connection and a LayerNorm: after the residual sum (post-norm), or
    on the block's input with norm_first=True (pre-norm).

    >>> layer = ember.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(ember.ones(5, 3, 8)).shape
    ember.Size([5, 3, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Union[str, Callable] = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        activation = _add_layer_parts(self, ("self_attn",), ("norm1", "norm2"), ("dropout1", "dropout2"), d_model,
                                      nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                                      norm_first, bias, device, dtype)
        self.activation_relu_or_gelu = _activation_kind(activation)
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        """src (S, N, E) ((N, S, E) with batch_first, or unbatched (S, E)); src_mask (S, S)
        or (N * nhead, S, S); src_key_padding_mask (N, S). Masks: True / -inf mask out."""
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to the encoder's output
    (memory), then a feed-forward block; each with dropout, a residual connection and a
    LayerNorm (post-norm, or pre-norm with norm_first=True).

    >>> layer = ember.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(ember.ones(4, 3, 8), ember.ones(5, 3, 8)).shape
    ember.Size([4, 3, 8])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Union[str, Callable] = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.activation = _add_layer_parts(self, ("self_attn", "multihead_attn"), ("norm1", "norm2", "norm3"),
                                           ("dropout1", "dropout2", "dropout3"), d_model, nhead, dim_feedforward,
                                           dropout, activation, layer_norm_eps, batch_first, norm_first, bias,
                                           device, dtype)

    def __setstate__(self, state: dict) -> None:
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False):
        """tgt (T, N, E), memory (S, N, E) ((N, ., E) with batch_first, or unbatched);
        tgt_mask (T, T), memory_mask (T, S), key padding masks (N, T) and (N, S)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _why_no_nested_tensor(layer) -> str:
    """Why torch would not run this encoder layer on nested tensors ('' when it would)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then norm (if given).

    enable_nested_tensor: torch runs inference (eval mode, no gradient wanted) with a
    right-padded src_key_padding_mask on nested tensors, which leaves zeros at the padded
    positions of the output (before norm); ember computes densely and zeroes them the
    same way, so the outputs agree.

    >>> enc = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(8, 2, 16), 2, enable_nested_tensor=False)
    >>> enc(ember.ones(5, 3, 8)).shape
    ember.Size([5, 3, 8])
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers: int, norm: Optional[Module] = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}")
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: Optional[bool] = None):
        """src (S, N, E) ((N, S, E) with batch_first, or unbatched (S, E)); mask (S, S) or
        (N * nhead, S, S); src_key_padding_mask (N, S). is_causal None: detected from mask."""
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(mask), "mask", src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        first_layer = self.layers[0] if len(self.layers) else None
        batch_first = first_layer.self_attn.batch_first if isinstance(first_layer, TransformerEncoderLayer) else False
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if padded is not None:
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_padding(self, src, mask, key_padding_mask):
        """The (N, S) positions torch's nested-tensor inference would leave as zeros, or None
        when it would compute densely."""
        if not self.use_nested_tensor or key_padding_mask is None or mask is not None or src.dim() != 3:
            return None
        if not self.layers or self.layers[0].training:
            return None
        if _C.is_grad_enabled() and (src.requires_grad or any(p.requires_grad for p in self.parameters())):
            return None
        padded = key_padding_mask.isneginf() if key_padding_mask.is_floating_point() else key_padding_mask
        # nested tensors hold sequences whose padding is all at the end (left-aligned)
        if self.mask_check and not bool((padded.cumsum(1) * padded.logical_not()).eq(0).all().item()):
            return None
        return padded


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer applied in turn to the target (each attending to
    memory), then norm (if given).

    >>> dec = ember.nn.TransformerDecoder(ember.nn.TransformerDecoderLayer(8, 2, 16), 2)
    >>> dec(ember.ones(4, 3, 8), ember.ones(5, 3, 8)).shape
    ember.Size([4, 3, 8])
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers: int, norm: Optional[Module] = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: Optional[bool] = None, memory_is_causal: bool = False):
        first_layer = self.layers[0] if len(self.layers) else None
        batch_first = first_layer.self_attn.batch_first if isinstance(first_layer, TransformerDecoderLayer) else False
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, _get_seq_len(tgt, batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder (num_encoder_layers layers and a final LayerNorm) and a decoder
    (num_decoder_layers layers and a final LayerNorm), or custom_encoder/custom_decoder;
    every parameter of more than one dim starts from xavier_uniform_.

    >>> model = ember.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                              dim_feedforward=16)
    >>> model(ember.ones(5, 3, 8), ember.ones(4, 3, 8)).shape
    ember.Size([4, 3, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: Union[str, Callable] = F.relu,
                 custom_encoder=None, custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, **factory)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal: Optional[bool] = None,
                tgt_is_causal: Optional[bool] = None, memory_is_causal: bool = False):
        """src (S, N, E), tgt (T, N, E) ((N, ., E) with batch_first, or unbatched) -> (T, N, E).
        Masks as in TransformerEncoder and TransformerDecoder."""
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """(sz, sz) float mask, -inf above the diagonal and 0 elsewhere: position i may
        attend to positions 0..i.

        >>> ember.nn.Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
