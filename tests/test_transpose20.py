"""Transposing copies (issue 20, kernels/transpose.cpp): a 2-D copy whose output runs
along one dim and whose input along the other moves 64x64 tiles as 8x8 / 4x4 blocks in
AVX registers (4- and 8-byte elements) or element by element (other sizes, the edges);
a converting one converts each tile's rows into a buffer first. Checked bit for bit
against torch for every element size, converting pairs, both orientations, sizes around
the blocks and tiles, sliced operands, and the 2-thread split; and that a copy the
transpose cannot take (neither side contiguous) still goes right."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import pytest

import ember
from helpers import torch

DTYPES = ["bool", "uint8", "int8", "int16", "float16", "bfloat16", "int32", "float32", "int64", "float64",
          "complex64", "complex128"]
# around the 4x4 / 8x8 blocks and the 64 tile, and large enough (>= 4096) to be tiled
SHAPES = [(64, 64), (67, 129), (130, 33), (8, 1000), (1000, 9), (200, 200)]


def source(shape, dtype, seed=0):
    g = np.random.default_rng(seed)
    data = g.standard_normal(shape) * 50
    if dtype.startswith("complex"):
        data = data + 1j * g.standard_normal(shape) * 50
    t = torch.from_numpy(data)
    t = (t > 0) if dtype == "bool" else t.to(getattr(torch, dtype))
    e = ember.from_numpy(t.view(torch.int16).numpy()).view(ember.bfloat16) if dtype == "bfloat16" \
        else ember.from_numpy(t.numpy())
    return e, t


def same(e, t, exact=True):
    assert e.shape == tuple(t.shape) and str(e.dtype) == str(t.dtype).replace("torch", "ember")
    if t.dtype == torch.bfloat16:
        np.testing.assert_array_equal(e.view(ember.int16).numpy(), t.view(torch.int16).numpy())
    elif exact:
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    else:  # complex products: torch's vectorized ones round differently in the last bit
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_contiguous_of_a_transpose_matches_torch(dtype, shape, threads):
    e, t = source(shape, dtype)
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        same(e.t().contiguous(), t.t().contiguous())  # the input runs along dim 1
        out_e = ember.empty(shape[::-1], dtype=e.dtype).t()
        out_t = torch.empty(shape[::-1], dtype=t.dtype).t()
        same(out_e.copy_(e).t(), out_t.copy_(t).t())  # the output runs along dim 1
    finally:
        ember.set_num_threads(old)


PAIRS = [("float32", "float16"), ("float32", "bfloat16"), ("float32", "float64"), ("float64", "float32"),
         ("int64", "float32"), ("bool", "float32"), ("float32", "int32"), ("float16", "float32"),
         ("int8", "int64"), ("float32", "complex64"), ("complex64", "complex128"), ("uint8", "bool"),
         ("int16", "bfloat16")]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("src,dst", PAIRS)
def test_converting_transposes_match_torch(src, dst, shape):
    e, t = source(shape, src, seed=1)
    out_e = ember.empty(shape[::-1], dtype=getattr(ember, dst))
    out_t = torch.empty(shape[::-1], dtype=getattr(torch, dst))
    same(out_e.copy_(e.t()), out_t.copy_(t.t()))
    back_e = ember.empty(shape[::-1], dtype=getattr(ember, dst)).t()
    back_t = torch.empty(shape[::-1], dtype=getattr(torch, dst)).t()
    same(back_e.copy_(e), back_t.copy_(t))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "complex128"])
def test_sliced_transposes_match_torch(dtype):
    e, t = source((300, 260), dtype, seed=2)
    # rows of the input a slice apart, the output a column block of a wider matrix
    out_e = ember.zeros(300, 520, dtype=e.dtype)
    out_t = torch.zeros(300, 520, dtype=t.dtype)
    out_e[:150, 3:263].copy_(e[1:151].t().t())
    out_t[:150, 3:263].copy_(t[1:151].t().t())
    same(out_e, out_t)
    out_e = ember.zeros(260, 400, dtype=e.dtype)
    out_t = torch.zeros(260, 400, dtype=t.dtype)
    out_e[:, 5:305].copy_(e.t())
    out_t[:, 5:305].copy_(t.t())
    same(out_e, out_t)
    same(e[10:250, 20:200].t().contiguous(), t[10:250, 20:200].t().contiguous())
    # neither side contiguous along a dim: not the transpose's, still right
    same(e[::2, ::3].t().contiguous(), t[::2, ::3].t().contiguous())
    to = ember.float64 if dtype != "complex128" else ember.complex64
    same(e[::2, ::3].t().to(to).contiguous(), t[::2, ::3].t().to(getattr(torch, str(to).split(".")[1])).contiguous())


def test_empty_and_small_transposes():
    for shape in [(0, 5), (5, 0), (1, 4096), (4096, 1), (3, 3)]:
        e, t = source(shape, "float32")
        same(e.t().contiguous(), t.t().contiguous())
        same(e.t().to(ember.float16).contiguous(), t.t().to(torch.float16).contiguous())


# Note [Transposed inputs] (ops/elementwise.cpp): past 2^15 elements an input running along
# the other dim than the output is first copied laid out like it.
@pytest.mark.parametrize("shape", [(300, 200), (100, 100), (1024, 40), (40, 1024)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16", "complex64"])
def test_elementwise_ops_with_a_transposed_input_match_torch(dtype, shape):
    a_e, a_t = source(shape[::-1], dtype, seed=3)
    b_e, b_t = source(shape, dtype, seed=4)
    same(a_e.t() + b_e, a_t.t() + b_t)
    exact = dtype != "complex64"
    same(b_e * a_e.t(), b_t * a_t.t(), exact)
    same(b_e.sub(a_e.t(), alpha=2), b_t.sub(a_t.t(), alpha=2))
    m_e, m_t = source(shape, "bool", seed=5)
    same(ember.where(m_e, a_e.t(), b_e), torch.where(m_t, a_t.t(), b_t))
    if dtype != "complex64":
        same(ember.eq(a_e.t(), b_e), torch.eq(a_t.t(), b_t))
        # a sliced transpose, and an input of another dtype converted on the way
        w_e, w_t = source((shape[1] + 7, shape[0] + 3), dtype, seed=6)
        same(w_e[2:2 + shape[1], 1:1 + shape[0]].t() + b_e.double(),
             w_t[2:2 + shape[1], 1:1 + shape[0]].t() + b_t.double())
    # in place and out=, the output's layout deciding
    c_e, c_t = b_e.clone(), b_t.clone()
    same(c_e.add_(a_e.t()), c_t.add_(a_t.t()))
    o_e, o_t = ember.empty(shape, dtype=b_e.dtype), torch.empty(shape, dtype=b_t.dtype)
    same(ember.mul(a_e.t(), b_e, out=o_e), torch.mul(a_t.t(), b_t, out=o_t), exact)
    o_e, o_t = ember.empty(shape[::-1], dtype=b_e.dtype).t(), torch.empty(shape[::-1], dtype=b_t.dtype).t()
    same(ember.mul(a_e.t(), b_e, out=o_e), torch.mul(a_t.t(), b_t, out=o_t), exact)


def test_transposed_input_keeps_autograd():
    a_e = ember.randn(300, 200, dtype=ember.float64, requires_grad=True)
    b_e = ember.randn(200, 300, dtype=ember.float64, requires_grad=True)
    a_t = torch.from_numpy(a_e.detach().numpy()).requires_grad_()
    b_t = torch.from_numpy(b_e.detach().numpy()).requires_grad_()
    (a_e.t() * b_e).sum().backward()
    (a_t.t() * b_t).sum().backward()
    np.testing.assert_array_equal(a_e.grad.numpy(), a_t.grad.numpy())
    np.testing.assert_array_equal(b_e.grad.numpy(), b_t.grad.numpy())


# Batches of transposed matrices: the loop's other dims are looped over around the tiles.
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "complex128"])
def test_batched_transposes_match_torch(dtype):
    e, t = source((3, 5, 40, 70), dtype, seed=7)
    same(e.permute(0, 2, 3, 1).contiguous(), t.permute(0, 2, 3, 1).contiguous())  # NCHW -> NHWC
    same(e.contiguous(memory_format=ember.channels_last), t.contiguous(memory_format=torch.channels_last))
    same(e.transpose(-1, -2).contiguous(), t.transpose(-1, -2).contiguous())
    same(e.permute(3, 1, 0, 2).contiguous(), t.permute(3, 1, 0, 2).contiguous())
    same(e[:, 1:4, ::2].transpose(-1, -2).contiguous(), t[:, 1:4, ::2].transpose(-1, -2).contiguous())
    to_e, to_t = (ember.float32, torch.float32) if dtype != "complex128" else (ember.complex64, torch.complex64)
    out_e = ember.empty(3, 5, 70, 40, dtype=to_e)
    out_t = torch.empty(3, 5, 70, 40, dtype=to_t)
    same(out_e.copy_(e.transpose(-1, -2)), out_t.copy_(t.transpose(-1, -2)))
    out_e = ember.empty(3, 40, 70, 5, dtype=to_e)
    out_t = torch.empty(3, 40, 70, 5, dtype=to_t)
    same(out_e.copy_(e.permute(0, 2, 3, 1)), out_t.copy_(t.permute(0, 2, 3, 1)))


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_elementwise_ops_with_a_batched_transposed_input_match_torch(dtype):
    a_e, a_t = source((4, 3, 90, 130), dtype, seed=8)
    b_e, b_t = source((4, 3, 130, 90), dtype, seed=9)
    same(a_e.transpose(-1, -2) + b_e, a_t.transpose(-1, -2) + b_t)
    same(b_e * a_e.transpose(-1, -2)[:, :1], b_t * a_t.transpose(-1, -2)[:, :1])  # broadcast over dim 1
    c_e, c_t = source((4, 130, 90, 3), dtype, seed=10)
    same(c_e.permute(0, 3, 1, 2) - b_e, c_t.permute(0, 3, 1, 2) - b_t)  # NHWC data, NCHW output


def test_broadcast_copies_across_the_output_rows():
    # a column broadcast along the output's contiguous dim: the fill path, not a transpose
    e, t = source((300, 1), "float32", seed=11)
    same(ember.empty(300, 200).copy_(e.expand(300, 200)), torch.empty(300, 200).copy_(t.expand(300, 200)))
    same(ember.empty(200, 300).t().copy_(e.expand(300, 200)), torch.empty(200, 300).t().copy_(t.expand(300, 200)))
    same(ember.empty(300, 200, dtype=ember.float64).copy_(e.expand(300, 200)),
         torch.empty(300, 200, dtype=torch.float64).copy_(t.expand(300, 200)))
