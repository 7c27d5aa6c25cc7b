"""Issue 20's fused cross_entropy (ops/nn_loss.cpp _cross_entropy_loss, Note [Fused
cross_entropy] in kernels/nn_softmax.cpp) against torch: values and gradients for class
targets over (C), (N, C), (N, C, d1), (N, C, d1, d2), weights, ignore_index, the three
reductions, label smoothing, non-contiguous and -inf logits, empty batches, bfloat16,
errors, gradcheck, double backward and forward-mode AD (the composed path)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

TESTED_OPS = {"_cross_entropy_loss", "_cross_entropy_loss_backward"}

TOL = {"float32": (2e-6, 2e-5), "float64": (1e-12, 1e-10), "bfloat16": (2e-2, 2e-2)}


def pair(a: np.ndarray, dtype: str = "float32", grad: bool = True):
    t = torch.from_numpy(a).to(getattr(torch, dtype)).requires_grad_(grad)
    e = ember.tensor(a).to(getattr(ember, dtype)).requires_grad_(grad)
    return e, t


def close(e, t, dtype="float32"):
    assert tuple(e.shape) == tuple(t.shape)
    atol, rtol = TOL[dtype]
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), atol=atol, rtol=rtol,
                               equal_nan=True)


def check(x: np.ndarray, target: np.ndarray, dtype="float32", weight=None, **kw):
    """Loss and input gradient of ember's cross_entropy against torch's."""
    e, t = pair(x, dtype)
    et, tt = ember.tensor(target), torch.from_numpy(target)
    ew = tw = None
    if weight is not None:
        ew, tw = ember.tensor(weight).to(getattr(ember, dtype)), torch.from_numpy(weight).to(getattr(torch, dtype))
    le, lt = EF.cross_entropy(e, et, ew, **kw), TF.cross_entropy(t, tt, tw, **kw)
    close(le, lt, dtype)
    g = np.random.default_rng(1).standard_normal(tuple(lt.shape))
    ge, gt = ember.tensor(g).to(getattr(ember, dtype)), torch.from_numpy(g).to(getattr(torch, dtype))
    le.backward(ge)
    lt.backward(gt)
    close(e.grad, t.grad, dtype)


def data(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + tuple(shape[2:]) if len(shape) > 1 else ()
    target = rng.integers(0, c, tshape).astype(np.int64)
    return x, target


@pytest.mark.parametrize("shape", [(5,), (6, 4), (7, 1), (4, 5, 3), (3, 4, 2, 3), (9, 1000), (40, 65)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shapes_reductions(shape, reduction, dtype):
    x, target = data(shape)
    check(x, target, dtype, reduction=reduction)


@pytest.mark.parametrize("shape", [(9, 1000), (40, 65), (3, 600), (4, 5, 3)])
def test_threads(shape, threads):
    x, target = data(shape, 13)
    for reduction in ("mean", "none"):
        check(x, target, reduction=reduction, label_smoothing=0.1)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("shape", [(8, 5), (4, 5, 3), (5,)])
def test_weight_ignore_smoothing(shape, reduction, smoothing):
    x, target = data(shape, 2)
    c = x.shape[1] if x.ndim > 1 else x.shape[0]
    weight = np.random.default_rng(3).uniform(0.2, 2.0, c)
    if target.ndim:
        target.reshape(-1)[::3] = -100
    for w in (None, weight):
        check(x, target, "float64", w, reduction=reduction, label_smoothing=smoothing)
    if target.ndim:
        target2 = np.where(target == -100, 0, target)
        target2.reshape(-1)[1::3] = 2  # a custom ignore_index
        check(x, target2, "float32", weight, reduction=reduction, ignore_index=2, label_smoothing=smoothing)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_all_ignored_and_empty(smoothing):
    x, target = data((4, 3))
    target[:] = -100
    for reduction in ("mean", "sum", "none"):  # mean: 0 / 0 = nan, as torch
        check(x, target, weight=np.ones(3), reduction=reduction, label_smoothing=smoothing)
        check(x, target, reduction=reduction, label_smoothing=smoothing)
    for shape, tshape in (((0, 3), (0,)), ((0, 3, 2), (0, 2)), ((2, 3, 0), (2, 0))):
        for reduction in ("mean", "sum", "none"):
            check(np.zeros(shape), np.zeros(tshape, np.int64), reduction=reduction, label_smoothing=smoothing)


def test_non_contiguous_and_inf():
    x, target = data((6, 5))
    e, t = pair(x.T.copy())
    le, lt = EF.cross_entropy(e.t(), ember.tensor(target)), TF.cross_entropy(t.t(), torch.from_numpy(target))
    close(le, lt)
    le.backward()
    lt.backward()
    close(e.grad, t.grad)
    x[0, 1] = x[2, :] = -np.inf  # one -inf logit (finite loss), one row of -inf (nan)
    target[0] = 0
    for smoothing in (0.0, 0.1):
        for reduction in ("none", "sum"):
            check(x[:2], target[:2], reduction=reduction, label_smoothing=smoothing)
            check(x, target, reduction=reduction, label_smoothing=smoothing)
    x[3, target[3]] = -np.inf  # the target's logit -inf: inf loss
    check(x[3:], target[3:], reduction="none")


def test_bfloat16(threads):
    x, target = data((16, 70), 4)
    for reduction in ("mean", "none"):
        check(x, target, "bfloat16", reduction=reduction)
        check(x, target, "bfloat16", reduction=reduction, label_smoothing=0.1)


def test_errors():
    x = ember.randn(3, 4)
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        EF.cross_entropy(x, ember.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        EF.cross_entropy(x, ember.tensor([0, -1, 1]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        EF.cross_entropy(x, ember.tensor([0, 1, 1], dtype=ember.int32))
    xb = np.random.default_rng(0).standard_normal((3, 4))
    check(xb, np.array([0, 3, 1], np.uint8))  # uint8 targets: the composed path, as torch accepts them
    with pytest.raises(Exception):
        EF.cross_entropy(x, ember.tensor([0.5, 1.0, 1.0]))
    with pytest.raises(ValueError, match="Expected input batch_size"):
        EF.cross_entropy(x, ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        EF.cross_entropy(x, ember.tensor([0, 1, 1]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        EF.cross_entropy(x, ember.tensor([0, 1, 1]), weight=ember.ones(3))


def test_gradcheck():
    x, target = data((3, 4, 2), 5)
    target[0, 0] = -100
    w = ember.tensor(np.random.default_rng(6).uniform(0.5, 2, 4))
    for smoothing in (0.0, 0.3):
        for reduction in ("mean", "none"):
            def f(a):
                return EF.cross_entropy(a, ember.tensor(target), w, reduction=reduction, label_smoothing=smoothing)
            assert ember.autograd.gradcheck(f, (ember.tensor(x, requires_grad=True),))


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_double_backward(smoothing, reduction):
    x, target = data((5, 4), 7)
    target[1] = -100
    weight = np.random.default_rng(8).uniform(0.5, 2, 4)
    e, t = pair(x, "float64")
    ew, tw = ember.tensor(weight), torch.from_numpy(weight)
    out = []
    for lib, F, a, w, tg in ((ember, EF, e, ew, ember.tensor(target)), (torch, TF, t, tw, torch.from_numpy(target))):
        loss = F.cross_entropy(a, tg, w, reduction=reduction, label_smoothing=smoothing)
        (g,) = lib.autograd.grad(loss.sum(), a, create_graph=True)
        v = lib.tensor(np.linspace(-1, 1, 20).reshape(5, 4))
        (h,) = lib.autograd.grad((g * v).sum(), a)
        out.append((g, h))
    close(out[0][0], out[1][0], "float64")
    close(out[0][1], out[1][1], "float64")


def test_forward_ad():
    """The tangent (forward AD transposes the composed backward) equals <gradient, v>."""
    x, target = data((4, 3), 9)
    v = np.random.default_rng(10).standard_normal((4, 3))
    with ember.autograd.forward_ad.dual_level():
        d = ember.autograd.forward_ad.make_dual(ember.tensor(x), ember.tensor(v))
        loss = EF.cross_entropy(d, ember.tensor(target), label_smoothing=0.1)
        tangent = ember.autograd.forward_ad.unpack_dual(loss).tangent
    t = torch.tensor(x, requires_grad=True)
    TF.cross_entropy(t, torch.from_numpy(target), label_smoothing=0.1).backward()
    np.testing.assert_allclose(tangent.item(), float((t.grad * torch.from_numpy(v)).sum()), rtol=1e-10)


def test_ops_directly():
    """_cross_entropy_loss returns (loss, each row's log-sum-exp); its backward op takes
    that lse; (N, C, d) rows are (n, d) pairs."""
    x, target = data((3, 4, 2), 11)
    e, t = pair(x, "float64", grad=False)
    loss, lse = ember._cross_entropy_loss(e, ember.tensor(target), None, 0, -100, 0.0)
    close(loss, TF.cross_entropy(t, torch.from_numpy(target), reduction="none"), "float64")
    close(lse, torch.logsumexp(t, 1).reshape(-1), "float64")
    g = np.random.default_rng(12).standard_normal((3, 2))
    ge = ember._cross_entropy_loss_backward(ember.tensor(g), e, ember.tensor(target), None, 0, -100, 0.0, lse)
    tx = t.clone().requires_grad_(True)
    TF.cross_entropy(tx, torch.from_numpy(target), reduction="none").backward(torch.from_numpy(g))
    close(ge, tx.grad, "float64")
    with pytest.raises(RuntimeError, match="expected lse of 6 elements"):
        ember._cross_entropy_loss_backward(ember.tensor(g), e, ember.tensor(target), None, 0, -100, 0.0, lse[:2])
