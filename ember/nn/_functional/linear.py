"""linear, bilinear and identity: matrix products of ember's ops (addmm, matmul)."""
from __future__ import annotations

from ... import _C
from ... import _autocast


@_autocast.lower_precision
def linear(input, weight, bias=None):
    """input @ weight.T + bias: (*, in) x (out, in) -> (*, out).

    >>> ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3)).shape
    ember.Size([2, 4])
    """
    if bias is not None and weight.dim() == 2 and input.dim() >= 2:
        if input.dim() == 2:
            return _C.addmm(bias, input, weight.t())
        # (*, in) folded into one (rows, in) product with the bias added by the gemm, as
        # torch does; the gradients then come from 2-d products too
        *batch, n_in = input.shape
        rows = 1
        for n in batch:
            rows *= n
        return _C.addmm(bias, input.reshape(rows, n_in), weight.t()).view(*batch, weight.shape[0])
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
