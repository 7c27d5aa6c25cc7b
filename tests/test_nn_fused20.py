"""Issue 20's single-pass softmax kernels (kernels/nn_softmax.cpp, Note [Softmax in one
read pass]) against torch: rows shorter and longer than one block (512) and than the
stack's 64 blocks, maxima that rise from block to block, -inf/NaN/inf rows, non-last dims
with the cache-sized column blocks, non-contiguous, empty and half inputs, gradients, and
1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

TOL = {"float32": (1e-6, 1e-5), "float64": (1e-12, 1e-10), "bfloat16": (1e-2, 2e-2), "float16": (1e-3, 2e-3)}


def pair(a: np.ndarray, dtype: str = "float32"):
    t = torch.from_numpy(a).to(getattr(torch, dtype))
    e = ember.tensor(a).to(getattr(ember, dtype))
    return e, t


def same(e, t, dtype="float32"):
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    atol, rtol = TOL[dtype]
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), atol=atol, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("n", [1, 7, 16, 511, 512, 513, 1500, 33000])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows(n, dtype, threads):
    x = np.random.default_rng(n).standard_normal((3, n)) * 4
    x[1] += np.linspace(0, 30, n)  # the maximum rises in every block: the sums are rescaled
    x[2] -= np.linspace(0, 30, n)
    e, t = pair(x, dtype)
    for name in ("softmax", "log_softmax"):
        same(getattr(ember, name)(e, -1), getattr(torch, name)(t, -1), dtype)


def special_rows(n):
    ninf, nan, inf = -np.inf, np.nan, np.inf
    rows = np.random.default_rng(0).standard_normal((9, n)).astype(np.float32)
    rows[0] = ninf  # all -inf: NaN
    rows[1, : n - 3] = ninf  # -inf blocks before the finite ones
    rows[2, n - 1] = nan  # NaN in the last block
    rows[3, 0] = nan
    rows[4, n // 2] = inf
    rows[5] -= 1000.0  # far below exp's range, but x - max is not
    rows[6, ::2] = ninf
    rows[7, 1:] = ninf  # one finite element first
    rows[8, -1] = 1e30
    return rows


@pytest.mark.parametrize("n", [5, 600, 1100])
def test_special_values(n):
    e, t = pair(special_rows(n))
    for name in ("softmax", "log_softmax"):
        same(getattr(ember, name)(e, 1), getattr(torch, name)(t, 1))
        same(getattr(ember, name)(e.t(), 0), getattr(torch, name)(t.t(), 0))  # the column kernel


@pytest.mark.parametrize("shape,dim", [((5, 300, 7), 1), ((40, 3), 0), ((2, 2100, 33), 1), ((3, 4, 70), 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_last_dims(shape, dim, dtype, threads):
    x = np.random.default_rng(1).standard_normal(shape) * 3
    e, t = pair(x, dtype)
    for name in ("softmax", "log_softmax"):
        same(getattr(ember, name)(e, dim), getattr(torch, name)(t, dim), dtype)


def test_non_contiguous_and_empty():
    x = np.random.default_rng(2).standard_normal((600, 9)).astype(np.float32)
    e, t = pair(x)
    same(ember.softmax(e.t(), 1), torch.softmax(t.t(), 1))
    same(ember.log_softmax(e[::2], 0), torch.log_softmax(t[::2], 0))
    for shape, dim in [((0, 5), 1), ((5, 0), 1), ((0, 5), 0), ((2, 0, 3), 2)]:
        e, t = pair(np.zeros(shape, np.float32))
        same(ember.softmax(e, dim), torch.softmax(t, dim))
        same(ember.log_softmax(e, dim), torch.log_softmax(t, dim))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_inputs(dtype):
    x = np.random.default_rng(3).standard_normal((4, 700)).astype(np.float32)
    e, t = pair(x, dtype)
    for name in ("softmax", "log_softmax"):
        same(getattr(ember, name)(e, 1), getattr(torch, name)(t, 1), dtype)
        same(getattr(ember, name)(e, 0), getattr(torch, name)(t, 0), dtype)
    same(ember.softmax(e, 1, dtype=ember.float32), torch.softmax(t, 1, dtype=torch.float32))


@pytest.mark.parametrize("shape,dim", [((3, 1100), 1), ((6, 40, 5), 1), ((700, 3), 0)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_gradients(shape, dim, name, threads):
    rng = np.random.default_rng(4)
    x, g = rng.standard_normal(shape), rng.standard_normal(shape)
    e, t = pair(x, "float64")
    e.requires_grad_(True)
    t.requires_grad_(True)
    getattr(ember, name)(e, dim).backward(ember.tensor(g))
    getattr(torch, name)(t, dim).backward(torch.from_numpy(g))
    same(e.grad, t.grad, "float64")


def test_wrong_dtype_and_dim():
    with pytest.raises(RuntimeError):
        ember.softmax(ember.tensor([1, 2]), 0)
    with pytest.raises(IndexError):
        ember.log_softmax(ember.zeros(2, 3), 2)


def test_exp_flush_boundary():
    # exp_nonpos flushes e^(x - max) below 2^-125.5 (x - max < -87) to 0 and is one power
    # of two times the polynomial above it: relative accuracy holds down to -87.
    d = np.array([0.0, -1e-3, -20.0, -86.99, -87.0, -87.01, -88.0, -103.0, -200.0], np.float32)
    e, t = pair(d[None, :].repeat(2, 0))
    got, want = ember.softmax(e, 1).numpy()[0], torch.softmax(t, 1).numpy()[0]
    np.testing.assert_allclose(got[:5], want[:5], rtol=2e-6)
    assert np.all(np.abs(got[5:] - want[5:]) <= 1.2e-38)
    same(ember.log_softmax(e, 1), torch.log_softmax(t, 1))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("n", [9, 1500])
def test_half_rows_several_blocks(dtype, n, threads):
    # the write pass scales each block and rounds it straight into the half output
    x = np.random.default_rng(n).standard_normal((5, n)).astype(np.float32) * 3
    x[1] += np.linspace(0, 30, n, dtype=np.float32)  # the maximum rises block by block
    x[2, n // 2] = np.inf
    x[3, -1] = np.nan
    x[4] = -np.inf
    e, t = pair(x, dtype)
    for name in ("softmax", "log_softmax"):
        same(getattr(ember, name)(e, 1), getattr(torch, name)(t, 1), dtype)
        same(getattr(ember, name)(e[:, 1:], 1), getattr(torch, name)(t[:, 1:], 1), dtype)  # non-contiguous
