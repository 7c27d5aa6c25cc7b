"""The reductions' one-pass forms (issue 20): variance's two passes over the input as it
is (centered_sumsq), vector_norm folding x², |x| and max |x| directly, and the one-select
NaN-propagating max/min, against torch, on every path of the fold's planning: small
contiguous runs, rows and columns, both threads' private accumulators, non-contiguous
and empty inputs."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import pytest

import ember
from helpers import torch

SHAPES = [(7,), (3, 5000), (5000, 3), (40, 33, 65), (0, 4)]


def pair(shape, dtype, offset=0.0, seed=0, transposed=False):
    g = np.random.default_rng(seed)
    data = (g.standard_normal(shape) * 3 + offset).astype(np.float64)
    t = torch.tensor(data).to(getattr(torch, dtype))
    e = ember.tensor(data.tolist() if data.size else data.tolist(), dtype=getattr(ember, dtype)) if data.size \
        else ember.zeros(shape, dtype=getattr(ember, dtype))
    if transposed and len(shape) > 1:
        t, e = t.transpose(0, -1), e.transpose(0, -1)
    return e, t


def same(ember_fn, torch_fn, rtol, atol=0.0):
    """ember_fn() against torch_fn(), or the same exception type where torch raises."""
    try:
        want = torch_fn()
    except (RuntimeError, IndexError) as error:
        with pytest.raises(type(error)):
            ember_fn()
        return
    close(ember_fn(), want, rtol, atol)


def close(e, t, rtol, atol=0.0):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    got = np.array(e.double().tolist(), dtype=np.float64).reshape(tuple(e.shape))
    np.testing.assert_allclose(got, t.double().numpy(), rtol=rtol, atol=atol)


RTOL = {"float32": 2e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1.6e-2}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", SHAPES)
def test_var_std_match_torch_on_every_dim(shape, dtype, threads):
    for transposed in (False, True):
        e, t = pair(shape, dtype, transposed=transposed)
        for dims in [None, 0, -1, (0, -1)]:
            for correction in (0, 1, 2.5):
                same(lambda: e.var(dim=dims, correction=correction),
                     lambda: t.double().var(dim=dims, correction=correction).to(t.dtype), RTOL[dtype], 1e-30)
        close(e.std(dim=-1, keepdim=True), t.double().std(dim=-1, keepdim=True).to(t.dtype), RTOL[dtype])
        ev, em = ember.var_mean(e, dim=0)
        tv, tm = torch.var_mean(t.double(), dim=0)
        close(ev, tv.to(t.dtype), RTOL[dtype])
        close(em, tm.to(t.dtype), RTOL[dtype], 1e-6 if dtype == "float32" else 1e-2)


def test_var_of_a_large_mean_keeps_float32_precision():
    # a single-pass E[x²] - E[x]² would lose the variance to cancellation here
    e, t = pair((200_000,), "float32", offset=1e4, seed=3)
    close(e.var(), t.double().var().float(), 2e-6)
    close(e.view(400, 500).var(1), t.double().view(400, 500).var(1).float(), 2e-6)


def test_var_special_values_and_errors():
    for values in ([1.0, float("nan"), 2.0], [1.0, float("inf"), 2.0], [3.0]):
        e, t = ember.tensor(values), torch.tensor(values)
        np.testing.assert_equal(e.var().item(), t.var().item())
    assert np.isnan(ember.tensor([]).var().item()) and np.isnan(torch.tensor([]).var().item())
    with pytest.raises(RuntimeError, match="floating point or complex"):
        ember.arange(4).var()
    with pytest.raises(RuntimeError):
        torch.arange(4).var()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", SHAPES)
def test_vector_norm_orders_match_torch(shape, dtype, threads):
    for transposed in (False, True):
        e, t = pair(shape, dtype, seed=1, transposed=transposed)
        for ord in (2, 1, float("inf"), float("-inf"), 3, 0):
            for dims in [None, -1, (0, -1)]:
                same(lambda: ember.linalg.vector_norm(e, ord, dims),
                     lambda: torch.linalg.vector_norm(t.double(), ord, dims).to(t.dtype), RTOL[dtype])


def test_vector_norm_special_values():
    values = [3.0, -float("inf"), 4.0, float("nan"), -0.0]
    for subset in (values[:3], values[:4], [values[0], values[4]], [-5.0, -1.0]):
        e, t = ember.tensor(subset), torch.tensor(subset)
        for ord in (2, 1, float("inf"), float("-inf"), 0.5):
            np.testing.assert_equal(ember.linalg.vector_norm(e, ord).item(),
                                    torch.linalg.vector_norm(t, ord).item())
    for shape, dims in [((0, 4), None), ((0, 4), 0), ((4, 0), -1), ((2, 0, 3), (0, 1))]:
        try:
            torch.linalg.vector_norm(torch.zeros(shape), float("-inf"), dims)
        except RuntimeError as error:
            with pytest.raises(RuntimeError) as raised:
                ember.linalg.vector_norm(ember.zeros(shape), float("-inf"), dims)
            assert str(raised.value) == str(error)
        else:
            raise AssertionError("torch computes the -inf norm over an empty dim")
    assert ember.linalg.vector_norm(ember.zeros(2, 0, 3), float("inf"), (0, 2)).shape == (0,)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        ember.linalg.vector_norm(ember.arange(3))


def test_amax_amin_propagate_nan_and_keep_signed_zeros(threads):
    for dtype in ("float32", "float64", "bfloat16", "int32", "uint8"):
        e, t = pair((3000, 70), "float32", seed=2)
        e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
        for dims in [(), 0, 1]:
            for op in ("amax", "amin"):
                got, want = getattr(e, op)(dims), getattr(t, op)(dims)
                assert got.tolist() == want.tolist(), (dtype, dims, op)
    data = [[0.0, -0.0, float("nan"), 1.0], [-0.0, 0.0, -1.0, float("-inf")]]
    for dims in [(), 0, 1]:
        for op in ("amax", "amin"):
            got = getattr(ember.tensor(data), op)(dims)
            want = getattr(torch.tensor(data), op)(dims)
            np.testing.assert_equal(np.array(got.tolist()), want.numpy())
            assert (np.signbit(np.array(got.tolist())) == np.signbit(want.numpy())).all()
    a, b = ember.tensor([0.0, -0.0, float("nan"), 2.0]), ember.tensor([-0.0, 0.0, 1.0, float("nan")])
    ta, tb = torch.tensor(a.tolist()), torch.tensor(b.tolist())
    for op in ("maximum", "minimum", "fmax", "fmin"):
        got, want = getattr(ember, op)(a, b), getattr(torch, op)(ta, tb)
        np.testing.assert_equal(np.array(got.tolist()), want.numpy())
        assert (np.signbit(np.array(got.tolist())) == np.signbit(want.numpy())).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(1,), (15,), (16,), (17,), (255,), (256,), (257,), (5000,), (300, 7), (7, 300),
                                   (3, 0)])
def test_half_type_folds_match_torch(shape, dtype, threads):
    """float16/bfloat16 inputs fold through blocks converted to float (Note [Half types in
    folds]): every fold, along rows and down columns, around the block and accumulator
    sizes, transposed, empty, and with NaN and inf among the values."""
    for transposed in (False, True):
        e, t = pair(shape, dtype, offset=0.5, seed=len(shape) + shape[0], transposed=transposed)
        for dim in ([None, 0, -1] if e.numel() else [0, -1]):
            kw = {} if dim is None else {"dim": dim}
            for name in ("sum", "nansum", "mean", "amax", "amin", "all", "any"):
                if name in ("amax", "amin") and dim is None:
                    continue
                same(lambda: getattr(e, name)(**kw), lambda: getattr(t, name)(**kw), 2 * RTOL[dtype], 1e-3)
            # ember's product accumulates in float64 (torch's in float: 5% off over 5000)
            same(lambda: e.prod(**kw), lambda: t.double().prod(**kw).to(t.dtype), 2 * RTOL[dtype], 1e-3)
            if e.numel():
                for order in (1, 2, float("inf"), -float("inf")):
                    same(lambda: ember.linalg.vector_norm(e, order, **kw),
                         lambda: torch.linalg.vector_norm(t, order, **kw), 2 * RTOL[dtype], 1e-3)
                same(lambda: e.var(**kw), lambda: t.double().var(**kw).to(t.dtype), 2 * RTOL[dtype], 1e-3)
    if shape[-1] > 16:  # a NaN in the middle of a block, an inf in the next
        e, t = pair(shape, dtype, seed=1)
        e[..., 5] = float("nan")
        t[..., 5] = float("nan")
        e[..., -1] = float("inf")
        t[..., -1] = float("inf")
        for name in ("sum", "nansum", "amax", "amin", "any"):
            same(lambda: getattr(e, name)(dim=-1), lambda: getattr(t, name)(dim=-1), 2 * RTOL[dtype], 1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [31, 32, 33, 1023, 1024, 1025, 3000, 100003])
def test_float_block_sums_are_accurate(n, dtype, threads):
    """sum, nansum, mean and the 1-norm of a float32/float16/bfloat16 run add rounds of
    256 into 32 float partials, then into double, a float32 run read as four streams first
    (Note [Float blocks in sums]): within a few float ulps of the float64 sum of the same
    values, around the stream, round and partial sizes, and NaN/inf where they fall."""
    e, t = pair((n,), dtype, offset=0.5, seed=n)
    x = np.array(e.double().tolist())  # the values as stored
    scale = np.abs(x).sum()
    for name, ref in (("sum", x.sum()), ("nansum", x.sum()), ("mean", x.mean()),
                      ("norm1", np.abs(x).sum())):
        got = ember.linalg.vector_norm(e, 1) if name == "norm1" else getattr(e, name)()
        want = torch.linalg.vector_norm(t, 1) if name == "norm1" else getattr(t, name)()
        if dtype != "float32":  # rounded to the half type at the end, as torch
            assert got.item() == pytest.approx(want.item(), rel=RTOL[dtype], abs=1e-3)
        else:
            bound = 4e-7 * scale / (n if name == "mean" else 1) + np.spacing(np.float32(abs(ref)))
            assert abs(got.item() - ref) <= bound, (name, got.item(), ref)
            assert got.item() == pytest.approx(want.item(), rel=1e-5, abs=1e-5 * scale / n)
    # a NaN inside a block, then an inf and a -inf in the next one
    e[n // 2] = float("nan")
    t[n // 2] = float("nan")
    assert np.isnan(e.sum().item()) and np.isnan(t.sum().item())
    x[n // 2] = 0.0
    assert e.nansum().item() == pytest.approx(np.float64(x.sum()), rel=RTOL[dtype], abs=1e-3 * scale / n + 1e-3)
    if n > 1031:  # inf + -inf is NaN, which nansum keeps (torch on 2 threads drops a NaN partial)
        f, g = ember.ones(n, dtype=e.dtype), torch.ones(n, dtype=t.dtype)
        for a in (f, g):
            a[1030], a[1031] = float("inf"), float("-inf")
        assert np.isnan(f.nansum().item()) and np.isnan(f.sum().item()) and np.isnan(g.sum().item())
        assert ember.linalg.vector_norm(f, 1).item() == torch.linalg.vector_norm(g, 1).item() == float("inf")
