"""ember.nn.functional: the layers as functions. Everything here is composed of ember's
ops (autograd differentiates the composition); the heavy numerics (softmax, convolution,
pooling, normalization, losses) come as native ops.

Where torch's backward differs from what the plain composition would give (hardtanh is
flat at its bounds, softplus and elu must not leak NaN from an overflowing branch), the
composition is arranged so that the gradients equal torch's."""
from __future__ import annotations

import functools
import math
import warnings
from typing import Optional

from .. import _C

__all__ = [
    "linear", "bilinear", "identity", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu",
    "selu_", "celu", "celu_", "gelu", "silu", "mish", "softplus", "tanh", "sigmoid", "hardtanh", "hardtanh_",
    "hardswish", "hardsigmoid", "threshold", "threshold_", "logsigmoid", "softsign", "tanhshrink", "hardshrink",
    "softshrink", "dropout", "dropout1d", "dropout2d", "dropout3d", "embedding", "one_hot", "normalize", "pad",
]


def _needs_grad(t) -> bool:
    return t.requires_grad and _C.is_grad_enabled()


def _apply(fn, input, inplace: bool):
    """fn(input), or with inplace input overwritten by it. When autograd records, fn runs
    on a copy, so that what its backward saved is not the tensor being overwritten."""
    if not inplace:
        return fn(input)
    return input.copy_(fn(input.clone() if _needs_grad(input) else input))


# ---- linear layers ----

def linear(input, weight, bias=None):
    """input @ weight.T + bias: (*, in) x (out, in) -> (*, out).

    >>> ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3)).shape
    ember.Size([2, 4])
    """
    if bias is not None and input.dim() == 2:
        return _C.addmm(bias, input, weight.t())
    out = input.matmul(weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o].

    >>> ember.nn.functional.bilinear(ember.ones(2, 3), ember.ones(2, 4), ember.ones(5, 3, 4)).tolist()[0]
    [12.0, 12.0, 12.0, 12.0, 12.0]
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.size(d) != input2.size(d):
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got {input1.size(d)} "
                               f"and {input2.size(d)}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, got {weight.dim()}")
    out_features, in1, in2 = weight.shape
    if input1.size(-1) != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.size(-1)} but "
                           f"expected {in1}")
    if input2.size(-1) != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.size(-1)} but "
                           f"expected {in2}")
    if bias is not None and bias.numel() != out_features:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.numel()} but expected "
                           f"{out_features}")
    # (*, in1) @ (in1, out*in2) -> (*, out, in2), then contract in2 with input2
    left = input1.matmul(weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    left = left.reshape(*input1.shape[:-1], out_features, in2)
    out = left.matmul(input2.unsqueeze(-1)).squeeze(-1)
    return out + bias if bias is not None else out


def identity(input):
    return input


# ---- activations ----

def relu(input, inplace: bool = False):
    """max(input, 0).

    >>> ember.nn.functional.relu(ember.tensor([-1., 2.])).tolist()
    [0.0, 2.0]
    """
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """input clamped to [min_val, max_val]; the gradient is zero at and beyond the bounds."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not _needs_grad(input):
        return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)

    def fn(x):  # torch's gradient passes only strictly inside the bounds
        return _C.where((x > min_val) & (x < max_val), x, x.clamp(min_val, max_val).detach())

    return _apply(fn, input, inplace)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False):
    """min(max(input, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """input where positive, negative_slope * input elsewhere."""
    return _apply(lambda x: _C.where(x > 0, x, x * negative_slope), input, inplace)


def leaky_relu_(input, negative_slope: float = 0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def _elu(input, alpha: float, scale: float, input_scale: float):
    # the negative branch sees min(x, 0): exp of a large x must not overflow into a NaN gradient
    negative = input.clamp(max=0)
    if input_scale != 1.0:
        negative = negative * input_scale
    negative = negative.expm1() * (alpha * scale)
    positive = input * scale if scale != 1.0 else input
    return _C.where(input > 0, positive, negative)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """input where positive, alpha * (exp(input) - 1) elsewhere."""
    return _apply(lambda x: _elu(x, alpha, 1.0, 1.0), input, inplace)


def elu_(input, alpha: float = 1.0):
    return elu(input, alpha, inplace=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace: bool = False):
    """scale * elu(input, alpha) with the self-normalizing constants."""
    return _apply(lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0), input, inplace)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """input where positive, alpha * (exp(input / alpha) - 1) elsewhere."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _apply(lambda x: _elu(x, alpha, 1.0, 1.0 / alpha), input, inplace)


def celu_(input, alpha: float = 1.0):
    return celu(input, alpha, inplace=True)


def gelu(input, approximate: str = "none"):
    """input * Phi(input) (Phi the standard normal CDF); approximate='tanh' uses
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).

    >>> round(ember.nn.functional.gelu(ember.tensor([1.])).item(), 4)
    0.8413
    """
    if approximate == "none":
        return input * 0.5 * (1 + (input * (1 / math.sqrt(2))).erf())
    if approximate == "tanh":
        inner = (input + 0.044715 * input * input * input) * math.sqrt(2 / math.pi)
        return 0.5 * input * (1 + inner.tanh())
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input, inplace: bool = False):
    """input * sigmoid(input)."""
    return _apply(lambda x: x * x.sigmoid(), input, inplace)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta * input)) / beta, and input itself where beta * input > threshold."""
    scaled = input * beta if beta != 1 else input
    soft = scaled.clamp(max=threshold).exp().log1p()  # clamped: no overflow in the unused branch
    if beta != 1:
        soft = soft / beta
    return _C.where(scaled > threshold, input, soft)


def mish(input, inplace: bool = False):
    """input * tanh(softplus(input))."""
    return _apply(lambda x: x * softplus(x).tanh(), input, inplace)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def hardsigmoid(input, inplace: bool = False):
    """relu6(input + 3) / 6; the gradient is 1/6 strictly inside (-3, 3), zero elsewhere."""
    def fn(x):
        return _C.where((x > -3) & (x < 3), (x + 3) / 6, (x >= 3).to(x.dtype))

    return _apply(fn, input, inplace)


def hardswish(input, inplace: bool = False):
    """input * relu6(input + 3) / 6; the gradient is x / 3 + 1/2 strictly inside (-3, 3),
    0 below and 1 above, as torch's."""
    def fn(x):
        return _C.where(x <= -3, 0.0, _C.where(x >= 3, x, x * (x + 3) / 6))

    return _apply(fn, input, inplace)


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """input where input > threshold, value elsewhere."""
    return _apply(lambda x: _C.where(x > threshold, x, value), input, inplace)


def threshold_(input, threshold: float, value: float):
    return _apply(lambda x: _C.where(x > threshold, x, value), input, True)


def logsigmoid(input):
    """log(sigmoid(input)) = min(x, 0) - log1p(exp(-|x|)); each branch sees only its own
    sign of x, so neither overflows nor spoils the gradient at 0."""
    negative = input.clamp(max=0)
    positive = input.clamp(min=0)
    return _C.where(input < 0, negative - negative.exp().log1p(), -(-positive).exp().log1p())


def softsign(input):
    """input / (1 + |input|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """input - tanh(input)."""
    return input - input.tanh()


def hardshrink(input, lambd: float = 0.5):
    """input where |input| > lambd, 0 elsewhere."""
    return _C.where((input > lambd) | (input < -lambd), input, 0)


def softshrink(input, lambd: float = 0.5):
    """input - lambd above lambd, input + lambd below -lambd, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _C.where(input > lambd, input - lambd, _C.where(input < -lambd, input + lambd, 0))


# ---- dropout ----

def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_with_noise_shape(input, p: float, noise_shape, inplace: bool):
    if p == 1.0:
        return input.mul_(0) if inplace else input * _C.zeros((), dtype=input.dtype)
    # mask of kept elements, scaled so the expectation is unchanged
    mask = _C.empty(noise_shape, dtype=input.dtype).bernoulli_(1 - p).div_(1 - p)
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


# ---- embeddings and encodings ----

_embedding_function = None


def _embedding_backward_function():
    """Embedding with torch's gradient rules that plain indexing lacks: no gradient into
    the padding row, and scale_grad_by_freq."""
    global _embedding_function
    if _embedding_function is None:
        from ..autograd import Function

        class EmbeddingFunction(Function):
            @staticmethod
            def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
                ctx.save_for_backward(indices)
                ctx.num_weights = weight.size(0)
                ctx.padding_idx = padding_idx
                ctx.scale_grad_by_freq = scale_grad_by_freq
                flat = indices.reshape(-1)
                return weight.index_select(0, flat).reshape(*indices.shape, weight.size(1))

            @staticmethod
            def backward(ctx, grad):
                (indices,) = ctx.saved_tensors
                flat = indices.reshape(-1)
                grad = grad.reshape(flat.numel(), grad.size(-1))
                if ctx.padding_idx >= 0:
                    grad = grad * (flat != ctx.padding_idx).unsqueeze(1).to(grad.dtype)
                if ctx.scale_grad_by_freq:
                    counts = _C.zeros(ctx.num_weights, dtype=grad.dtype).index_add_(
                        0, flat, _C.ones(flat.numel(), dtype=grad.dtype))
                    grad = grad / counts.index_select(0, flat).unsqueeze(1)
                grad_weight = _C.zeros(ctx.num_weights, grad.size(1), dtype=grad.dtype).index_add_(0, flat, grad)
                return grad_weight, None, None, None

        _embedding_function = EmbeddingFunction
    return _embedding_function


def _embedding_renorm_(weight, indices, max_norm: float, norm_type: float) -> None:
    """Rescales, in place and without recording, the rows that indices reference whose
    norm exceeds max_norm, to max_norm."""
    from ..autograd.grad_mode import no_grad

    with no_grad():
        rows = indices.reshape(-1).unique()
        norms = weight.index_select(0, rows).norm(norm_type, 1)
        scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        weight.index_copy_(0, rows, weight.index_select(0, rows) * scale.unsqueeze(1))


@functools.lru_cache(maxsize=None)
def _warn_dense_embedding_grad() -> None:
    warnings.warn("embedding(sparse=True): ember has no sparse tensors; the weight's gradient is dense")


def embedding(input, weight, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False):
    """The rows of weight at the indices in input: (*) -> (*, embedding_dim). Rows at
    padding_idx get no gradient; with max_norm, looked-up rows are first renormalized in
    weight itself.

    >>> ember.nn.functional.embedding(ember.tensor([2, 0]), ember.arange(6.).view(3, 2)).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    if input.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if sparse:
        _warn_dense_embedding_grad()
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if _needs_grad(weight) and (padding_idx >= 0 or scale_grad_by_freq):
        return _embedding_backward_function().apply(weight, input, padding_idx, scale_grad_by_freq)
    if input.dim() == 1:
        return weight.index_select(0, input)
    return weight.index_select(0, input.reshape(-1)).reshape(*input.shape, weight.size(1))


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
        return _C.empty((*tensor.shape, num_classes), dtype=_C.int64)
    if tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = tensor.max().item() + 1
    elif tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = _C.zeros((*tensor.shape, num_classes), dtype=_C.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """input / max(||input||_p over dim, eps).

    >>> ember.nn.functional.normalize(ember.tensor([[3., 4.]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _C.div(input, denom, out=out)


# ---- padding ----

def _pad_constant(input, pad, value):
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        # negative padding crops
        if before < 0 or after < 0:
            start = max(-before, 0)
            length = out.size(dim) - start - max(-after, 0)
            out = out.narrow(dim, start, length)
        pieces = []
        for amount in (max(before, 0), max(after, 0)):
            shape = list(out.shape)
            shape[dim] = amount
            pieces.append(_C.full(shape, value, dtype=out.dtype) if amount else None)
        if pieces[0] is not None or pieces[1] is not None:
            out = _C.cat([t for t in (pieces[0], out, pieces[1]) if t is not None], dim)
    return out


def _pad_indices(size: int, before: int, after: int, mode: str):
    """For reflect/replicate/circular padding of one dim: which input index each output
    position reads."""
    idx = _C.arange(-before, size + after)
    if mode == "replicate":
        return idx.clamp(0, size - 1)
    if mode == "circular":
        return idx.remainder(size)
    period = 2 * (size - 1)  # reflect without repeating the edge
    if period == 0:
        return idx * 0
    idx = idx.remainder(period)
    return _C.where(idx >= size, period - idx, idx)


def pad(input, pad, mode: str = "constant", value: Optional[float] = None):
    """Pads the last len(pad) // 2 dims: pad = (left, right, top, bottom, ...), last dim
    first. mode 'constant' fills with value (0) and takes negative pads as crops;
    'reflect', 'replicate' and 'circular' read the input's own values.

    >>> ember.nn.functional.pad(ember.ones(1, 2), (1, 0)).tolist()
    [[0.0, 1.0, 1.0]]
    """
    pad = list(pad)
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        for i in range(len(pad) // 2):
            dim = input.dim() - 1 - i
            if input.size(dim) + pad[2 * i] + pad[2 * i + 1] < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        return _pad_constant(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n_pad = len(pad) // 2
    if n_pad > 3 or input.dim() not in (n_pad + 1, n_pad + 2):
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    out = input
    for i in range(n_pad):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        size = out.size(dim)
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({before}, {after}) at dimension {dim} of input "
                               f"{list(input.shape)}")
        if mode == "circular" and (before > size or after > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out = out.index_select(dim, _pad_indices(size, before, after, mode))
    return out
