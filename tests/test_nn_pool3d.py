"""Pooling beyond the 2-d layers: avg/max/adaptive pools over 3 spatial dims (native),
max_unpool, lp_pool and fractional_max_pool (compositions), integer inputs wherever
torch pools them, the modules and the top-level aliases, against torch: values, dtypes,
indices, gradients (double backward by gradgradcheck), non-contiguous and empty inputs,
and torch's errors."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import ember.nn.functional as EF  # noqa: E402

TESTED_OPS = {
    "max_pool3d_with_indices", "avg_pool3d", "avg_pool3d_backward", "adaptive_avg_pool3d",
    "_adaptive_avg_pool3d_backward", "adaptive_max_pool3d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
}


# ---------------------------------------------------------------- helpers

def make(shape, dtype="float64", seed=0, low=-3, high=3, transpose=False):
    """The same values as a torch and an ember tensor (integers for integer dtypes)."""
    rng = np.random.default_rng(seed)
    integer = dtype.startswith(("int", "uint")) or dtype == "bool"
    values = rng.integers(low, high, size=shape) if integer else rng.uniform(low, high, size=shape)
    if dtype == "bool":
        values = values > 0
    if transpose:  # the same logical values, laid out transposed in the last two dims
        values = np.ascontiguousarray(np.swapaxes(values, -1, -2))
    t = torch.tensor(values.tolist(), dtype=getattr(torch, dtype)).reshape(values.shape)
    e = ember.tensor(values.tolist(), dtype=getattr(ember, dtype)).reshape(values.shape)
    if transpose:
        t, e = t.transpose(-1, -2), e.transpose(-1, -2)
        assert not e.is_contiguous()
    return t, e


def as_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).numpy() if x.is_floating_point() else x.detach().numpy()
    return x.detach().to(ember.float64).numpy() if x.is_floating_point() else x.detach().numpy()


def same(e, t, rtol=1e-6, atol=1e-9):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(as_numpy(e), as_numpy(t), rtol=rtol, atol=atol)


def same_call(fe, ft, shape, dtype="float64", grad=True, transpose=False, seed=0, low=-3, **tol):
    """fe(ember input) against ft(torch input): every output, then the input's gradient
    of the first output's weighted sum."""
    t, e = make(shape, dtype, seed=seed, transpose=transpose, low=low)
    grad = grad and dtype.startswith("float")
    if grad:
        t.requires_grad_()
        e.requires_grad_()
    rt, re = ft(t), fe(e)
    rt = rt if isinstance(rt, tuple) else (rt,)
    re = re if isinstance(re, tuple) else (re,)
    for a, b in zip(re, rt):
        same(a, b, **tol)
    if grad and rt[0].numel():
        w = np.random.default_rng(seed + 1).uniform(-1, 1, size=tuple(rt[0].shape))
        (rt[0] * torch.tensor(w, dtype=rt[0].dtype)).sum().backward()
        (re[0] * ember.tensor(w, dtype=re[0].dtype)).sum().backward()
        same(e.grad, t.grad, **tol)
    return re


def raises_like(fe, ft):
    """Both raise, the same exception type, and ember's message starts as torch's."""
    with pytest.raises(Exception) as tinfo:
        ft()
    with pytest.raises(type(tinfo.value)) as einfo:
        fe()
    # which invalid index max_unpool names depends on torch's threads
    first_line = lambda e: re.sub(r"max index: -?\d+", "max index: N", str(e.value).split("\n")[0])  # noqa: E731
    assert first_line(einfo) == first_line(tinfo)


# ---------------------------------------------------------------- 3-d pools

MAX3D = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    ((3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), True),
    ((1, 3, 2), 1, (0, 1, 1), 1, False),
    (3, 2, 1, 2, True),
]


@pytest.mark.parametrize("k, s, p, d, ceil", MAX3D)
def test_max_pool3d(k, s, p, d, ceil):
    for fn in ("max_pool3d",):
        same_call(lambda x: getattr(EF, fn)(x, k, s, p, d, ceil, return_indices=True),
                  lambda x: getattr(TF, fn)(x, k, s, p, d, ceil, return_indices=True), (2, 2, 5, 6, 7))


def test_max_pool3d_layouts_and_dtypes():
    f = lambda F: lambda x: F.max_pool3d(x, (2, 2, 3), (1, 2, 2), 1, return_indices=True)  # noqa: E731
    same_call(f(EF), f(TF), (2, 3, 4, 5, 6), transpose=True)
    same_call(f(EF), f(TF), (3, 4, 5, 6))  # no batch dim
    same_call(f(EF), f(TF), (0, 3, 4, 5, 6))  # empty batch
    same_call(f(EF), f(TF), (2, 3, 4, 5, 6), dtype="float32")
    for dtype in ("float16", "bfloat16"):
        same_call(f(EF), f(TF), (2, 3, 4, 5, 6), dtype=dtype, grad=False)
    # NaN wins, and ties keep the first
    x = [[[[[1.0, float("nan")], [3.0, 3.0]], [[3.0, 0.0], [2.0, 1.0]]]]]
    e = EF.max_pool3d(ember.tensor(x), 2, return_indices=True)
    t = TF.max_pool3d(torch.tensor(x), 2, return_indices=True)
    assert math.isnan(e[0].item()) and e[1].item() == t[1].item()
    x[0][0][0][0][1] = 0.0
    e = EF.max_pool3d(ember.tensor(x), 2, return_indices=True)
    t = TF.max_pool3d(torch.tensor(x), 2, return_indices=True)
    assert e[0].item() == t[0].item() and e[1].item() == t[1].item()


AVG3D = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (2, None, 0, False, True, None),
    ((3, 2, 2), (2, 1, 2), (1, 1, 0), True, True, None),
    ((3, 2, 2), (2, 1, 2), (1, 1, 0), True, False, None),
    (3, 2, 1, False, True, 5),
]


@pytest.mark.parametrize("k, s, p, ceil, cip, div", AVG3D)
def test_avg_pool3d(k, s, p, ceil, cip, div):
    same_call(lambda x: EF.avg_pool3d(x, k, s, p, ceil, cip, div), lambda x: TF.avg_pool3d(x, k, s, p, ceil, cip, div),
              (2, 2, 5, 6, 7))


def test_avg_pool3d_layouts_and_dtypes():
    f = lambda F: lambda x: F.avg_pool3d(x, (2, 2, 3), (1, 2, 2), 1)  # noqa: E731
    same_call(f(EF), f(TF), (2, 3, 4, 5, 6), transpose=True)
    same_call(f(EF), f(TF), (3, 4, 5, 6))
    same_call(f(EF), f(TF), (0, 3, 4, 5, 6))
    same_call(f(EF), f(TF), (2, 3, 4, 5, 6), dtype="float32", rtol=1e-5)
    for dtype in ("float16", "bfloat16"):  # torch's 3-d average refuses them
        raises_like(lambda: f(EF)(make((1, 2, 3, 3, 3), dtype)[1]), lambda: f(TF)(make((1, 2, 3, 3, 3), dtype)[0]))


@pytest.mark.parametrize("size", [1, (3, 2, 4), (None, 3, 2), (5, 7, 9), (0, 2, 2)])
def test_adaptive_pool3d(size):
    same_call(lambda x: EF.adaptive_avg_pool3d(x, size), lambda x: TF.adaptive_avg_pool3d(x, size), (2, 2, 5, 6, 7))
    same_call(lambda x: EF.adaptive_max_pool3d(x, size, True), lambda x: TF.adaptive_max_pool3d(x, size, True),
              (2, 2, 5, 6, 7), transpose=True)


def test_adaptive_pool3d_layouts_and_dtypes():
    for F_ in ("adaptive_avg_pool3d", "adaptive_max_pool3d_with_indices"):
        f = lambda F: lambda x: getattr(F, F_)(x, (2, 3, 2))  # noqa: E731
        same_call(f(EF), f(TF), (3, 4, 5, 6))
        same_call(f(EF), f(TF), (0, 3, 4, 5, 6))
        same_call(f(EF), f(TF), (2, 3, 4, 5, 6), dtype="float32", rtol=1e-5)
        for dtype in ("float16", "bfloat16"):
            same_call(f(EF), f(TF), (2, 3, 4, 5, 6), dtype=dtype, grad=False, rtol=1e-2, atol=2e-2)


def test_pool3d_double_backward():
    x = ember.rand(1, 2, 4, 5, 4, dtype=ember.float64, requires_grad=True)
    for f in (lambda x: EF.avg_pool3d(x, 2, 1, 1, count_include_pad=False),
              lambda x: EF.adaptive_avg_pool3d(x, (3, 2, 3)),
              lambda x: EF.max_pool3d(x, 2, 1, 1),
              lambda x: EF.adaptive_max_pool3d(x, (3, 2, 3))):
        assert ember.autograd.gradcheck(f, (x,))
        assert ember.autograd.gradgradcheck(f, (x,))


def test_pool3d_errors():
    x = lambda lib: lib.ones(1, 2, 4, 4, 4)  # noqa: E731
    cases = [
        lambda F, lib: F.max_pool3d(lib.ones(4, 4), 2),
        lambda F, lib: F.max_pool3d(lib.ones(1, 0, 4, 4, 4), 2),
        lambda F, lib: F.max_pool3d(x(lib), (2, 2)),
        lambda F, lib: F.max_pool3d(x(lib), 2, stride=(1, 1)),
        lambda F, lib: F.max_pool3d(x(lib), 2, padding=2),
        lambda F, lib: F.max_pool3d(x(lib), 0, stride=1),
        lambda F, lib: F.max_pool3d(x(lib), 2, stride=0),
        lambda F, lib: F.max_pool3d(x(lib), 2, dilation=0),
        lambda F, lib: F.max_pool3d(x(lib), 5),
        lambda F, lib: F.max_pool3d(x(lib).bool(), 2),
        lambda F, lib: F.avg_pool3d(lib.ones(4, 4), 2),
        lambda F, lib: F.avg_pool3d(lib.ones(1, 0, 2, 2, 2), 2),
        lambda F, lib: F.avg_pool3d(x(lib), 2, padding=2),
        lambda F, lib: F.avg_pool3d(x(lib), 5),
        lambda F, lib: F.avg_pool3d(x(lib), 2, divisor_override=0),
        lambda F, lib: F.avg_pool3d(x(lib), (2, 2)),
        lambda F, lib: F.avg_pool3d(x(lib), 2, stride=(1, 1)),
        lambda F, lib: F.avg_pool3d(x(lib), 1, padding=(1, 1)),
        lambda F, lib: F.avg_pool3d(x(lib), 0, stride=1),
        lambda F, lib: F.adaptive_avg_pool3d(lib.ones(4, 4), 2),
        lambda F, lib: F.adaptive_avg_pool3d(x(lib), (2, 2)),
        lambda F, lib: F.adaptive_avg_pool3d(x(lib), -1),
        lambda F, lib: F.adaptive_avg_pool3d(lib.ones(1, 2, 0, 4, 4), 2),
        lambda F, lib: F.adaptive_max_pool3d(lib.ones(4, 4), 2),
        lambda F, lib: F.adaptive_max_pool3d(x(lib), (2, 2)),
    ]
    for case in cases:
        raises_like(lambda: case(EF, ember), lambda: case(TF, torch))


# ---------------------------------------------------------------- integer inputs

INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
def test_integer_pooling_as_torch(dtype):
    """Each pool computes where torch computes, with torch's dtype, and refuses where it refuses."""
    calls = [
        lambda F, x: F.max_pool1d(x[0], 2, return_indices=True),
        lambda F, x: F.max_pool1d(x[0], 2),
        lambda F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
        lambda F, x: F.max_pool2d(x, 2, ceil_mode=True),
        lambda F, x: F.max_pool3d(x[None], (1, 2, 2), return_indices=True),
        lambda F, x: F.avg_pool1d(x[0], 3, 2, 1),
        lambda F, x: F.avg_pool2d(x, 3, 2, 1),
        lambda F, x: F.avg_pool2d(x, 2, divisor_override=3),
        lambda F, x: F.avg_pool3d(x[None], (1, 3, 3), 1, (0, 1, 1), count_include_pad=False),
        lambda F, x: F.adaptive_avg_pool1d(x[0], 2),
        lambda F, x: F.adaptive_avg_pool2d(x, 2),
        lambda F, x: F.adaptive_avg_pool3d(x[None], (1, 2, 2)),
        lambda F, x: F.adaptive_avg_pool1d(x[0], 1),
        lambda F, x: F.adaptive_avg_pool2d(x, 1),
        lambda F, x: F.adaptive_avg_pool3d(x[None], 1),
        lambda F, x: F.adaptive_max_pool1d(x[0], 2),
        lambda F, x: F.adaptive_max_pool2d(x, 2),
        lambda F, x: F.adaptive_max_pool3d(x[None], (1, 2, 2)),
        lambda F, x: F.lp_pool1d(x[0], 2, 2),
        lambda F, x: F.lp_pool2d(x, 1, 2),
    ]
    low, high = (0, 250) if dtype == "uint8" else (-100, 100)
    t, e = make((2, 5, 6), dtype, low=low, high=high)
    for call in calls:
        try:
            want = call(TF, t)
        except Exception:
            raises_like(lambda: call(EF, e), lambda: call(TF, t))
            continue
        got = call(EF, e)
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            same(a, b, rtol=1e-6)


def test_int64_average_truncates_and_wraps():
    x = [[[-7, 0, 5, 2, -3, -3]]]
    same(EF.avg_pool1d(ember.tensor(x), 2), TF.avg_pool1d(torch.tensor(x), 2))
    same(EF.avg_pool1d(ember.tensor(x), 3, 1, 1), TF.avg_pool1d(torch.tensor(x), 3, 1, 1))
    big = [[[2 ** 62, 2 ** 62 + 1], [3, 3]]]
    same(EF.avg_pool2d(ember.tensor(big), 2, divisor_override=1),
         TF.avg_pool2d(torch.tensor(big), 2, divisor_override=1))
    # exact beyond float64's 53 bits
    big = [[[2 ** 62 + 1, 2 ** 62, 2 ** 62 + 3]]]
    e = EF.max_pool1d(ember.tensor(big), 3, return_indices=True)
    t = TF.max_pool1d(torch.tensor(big), 3, return_indices=True)
    assert e[0].tolist() == t[0].tolist() and e[1].tolist() == t[1].tolist()


# ---------------------------------------------------------------- max_unpool

@pytest.mark.parametrize("n, shape, k, s, p", [
    (1, (2, 3, 9), 3, 2, 1),
    (2, (2, 3, 6, 7), (2, 3), (2, 2), (1, 1)),
    (3, (2, 2, 4, 6, 6), 2, None, 0),
    (3, (2, 4, 5, 6), (2, 1, 2), (1, 1, 2), (1, 0, 1)),
])
def test_max_unpool(n, shape, k, s, p):
    pool_e, pool_t = getattr(EF, f"max_pool{n}d"), getattr(TF, f"max_pool{n}d")
    unpool_e, unpool_t = getattr(EF, f"max_unpool{n}d"), getattr(TF, f"max_unpool{n}d")
    t, e = make(shape)
    ot, it = pool_t(t, k, s, p, return_indices=True)
    oe, ie = pool_e(e, k, s, p, return_indices=True)
    same(ie, it)
    sizes = [None, list(t.shape[-n:])] + ([list(t.shape)] if len(shape) == n + 2 else [])
    for size in sizes:
        same_call(lambda x: unpool_e(x, ie, k, s, p, size), lambda x: unpool_t(x, it, k, s, p, size), tuple(ot.shape))
    # non-contiguous input; float32; empty batch
    same(unpool_e(oe.transpose(-1, -2).contiguous().transpose(-1, -2), ie, k, s, p), unpool_t(ot, it, k, s, p))
    for dtype in ("float32", "float16", "bfloat16"):
        same(unpool_e(oe.to(getattr(ember, dtype)), ie, k, s, p), unpool_t(ot.to(getattr(torch, dtype)), it, k, s, p))
    if len(shape) == n + 2:
        same(unpool_e(oe[:0], ie[:0], k, s, p), unpool_t(ot[:0], it[:0], k, s, p))


def test_max_unpool_double_backward():
    x = ember.rand(2, 2, 4, 4, dtype=ember.float64)
    o, i = EF.max_pool2d(x, 2, return_indices=True)
    o.requires_grad_()
    assert ember.autograd.gradgradcheck(lambda v: EF.max_unpool2d(v, i, 2), (o,))


def test_max_unpool_errors():
    def pooled(lib, F, n):
        x = lib.arange(2 * 4 ** n, dtype=lib.float32).reshape([1, 2] + [4] * n)
        return getattr(F, f"max_pool{n}d")(x, 2, return_indices=True)

    cases = [
        lambda F, lib: F.max_unpool2d(*pooled(lib, F, 2), 2, output_size=(6, 6)),
        lambda F, lib: F.max_unpool2d(*pooled(lib, F, 2), 2, output_size=(1, 5, 5)),
        lambda F, lib: F.max_unpool2d(*pooled(lib, F, 2), 2, output_size=(2, 2)),
        lambda F, lib: F.max_unpool2d(pooled(lib, F, 2)[0], pooled(lib, F, 2)[1] * 10, 2),
        lambda F, lib: F.max_unpool2d(pooled(lib, F, 2)[0], -pooled(lib, F, 2)[1] - 1, 2),
        lambda F, lib: F.max_unpool2d(pooled(lib, F, 2)[0], pooled(lib, F, 2)[1].int(), 2),
        lambda F, lib: F.max_unpool2d(pooled(lib, F, 2)[0], pooled(lib, F, 2)[1][..., :1], 2),
        lambda F, lib: F.max_unpool2d(pooled(lib, F, 2)[0][0, 0], pooled(lib, F, 2)[1][0, 0], 2),
        lambda F, lib: F.max_unpool2d(pooled(lib, F, 2)[0].long(), pooled(lib, F, 2)[1], 2),
        lambda F, lib: F.max_unpool1d(pooled(lib, F, 1)[0], pooled(lib, F, 1)[1] * 100, 2),
        lambda F, lib: F.max_unpool3d(pooled(lib, F, 3)[0][0], pooled(lib, F, 3)[1][0] * 100, 2),
        lambda F, lib: F.max_unpool3d(pooled(lib, F, 3)[0][0, 0], pooled(lib, F, 3)[1][0, 0], 2),
        lambda F, lib: F.max_unpool3d(pooled(lib, F, 3)[0], pooled(lib, F, 3)[1].int(), 2),
        lambda F, lib: F.max_unpool3d(pooled(lib, F, 3)[0], pooled(lib, F, 3)[1], 2, stride=0),
        lambda F, lib: F.max_unpool3d(pooled(lib, F, 3)[0].int(), pooled(lib, F, 3)[1], 2),
        lambda F, lib: F.max_unpool2d(*pooled(lib, F, 2), 2, padding=3),
    ]
    for case in cases:
        raises_like(lambda: case(EF, ember), lambda: case(TF, torch))


# ---------------------------------------------------------------- lp_pool

@pytest.mark.parametrize("norm", [1, 2, 3.5, float("inf")])
def test_lp_pool(norm):
    # positive inputs: torch's formula takes the root of the window's power sum
    for n, shape, k, s in [(1, (2, 3, 9), 3, 2), (2, (2, 3, 6, 7), (2, 3), None), (3, (2, 2, 4, 5, 6), 2, (1, 2, 2))]:
        fe, ft = getattr(EF, f"lp_pool{n}d"), getattr(TF, f"lp_pool{n}d")
        t, e = make(shape, low=0.5, high=2)
        t.requires_grad_(), e.requires_grad_()
        same(fe(e, norm, k, s), ft(t, norm, k, s))
        ft(t, norm, k, s, ceil_mode=True).sum().backward()
        fe(e, norm, k, s, ceil_mode=True).sum().backward()
        same(e.grad, t.grad)
    same_call(lambda x: EF.lp_pool2d(x, norm, 2), lambda x: TF.lp_pool2d(x, norm, 2), (2, 3, 4, 4), dtype="float32",
              transpose=True, low=0.1, rtol=1e-5)
    for dtype in ("float16", "bfloat16"):
        same_call(lambda x: EF.lp_pool2d(x, norm, 2), lambda x: TF.lp_pool2d(x, norm, 2), (2, 3, 4, 4), dtype=dtype,
                  grad=False, low=0.1, rtol=2e-2)
    # negative inputs: a NaN power sum gives NaN, as torch's
    v = [[-1.0, 2.0, 3.0, 1.0]]
    same(EF.lp_pool1d(ember.tensor(v), norm, 2), TF.lp_pool1d(torch.tensor(v), norm, 2))


# ---------------------------------------------------------------- fractional_max_pool

@pytest.mark.parametrize("n, shape, k, size", [
    (2, (2, 3, 9, 11), 2, (4, 5)),
    (2, (3, 10, 8), (3, 2), 4),
    (2, (2, 2, 7, 7), 2, (6, 1)),
    (3, (2, 2, 7, 8, 9), 2, (3, 4, 5)),
    (3, (2, 6, 7, 8), (2, 3, 2), 3),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fractional_max_pool_given_samples(n, shape, k, size, dtype):
    batch = shape[0] if len(shape) == n + 2 else 1
    channels = shape[-n - 1]
    samples = torch.rand(batch, channels, n, dtype=getattr(torch, dtype), generator=torch.Generator().manual_seed(1))
    se = ember.tensor(samples.numpy())
    fe, ft = getattr(EF, f"fractional_max_pool{n}d"), getattr(TF, f"fractional_max_pool{n}d")
    same_call(lambda x: fe(x, k, size, return_indices=True, _random_samples=se),
              lambda x: ft(x, k, size, return_indices=True, _random_samples=samples), shape, dtype=dtype)


def test_fractional_max_pool_half_and_layouts():
    samples = torch.rand(2, 3, 2, generator=torch.Generator().manual_seed(2))
    for dtype in ("float16", "bfloat16"):
        s = samples.to(getattr(torch, dtype))
        se = ember.tensor(s.float().numpy()).to(getattr(ember, dtype))
        same_call(lambda x: EF.fractional_max_pool2d(x, 2, 5, return_indices=True, _random_samples=se),
                  lambda x: TF.fractional_max_pool2d(x, 2, 5, return_indices=True, _random_samples=s), (2, 3, 9, 11),
                  dtype=dtype, grad=False)
    # torch computes the windows in the samples' dtype: distinct values, so that only the windows decide
    g = torch.Generator().manual_seed(4)
    for dtype in ("float16", "bfloat16"):
        x = torch.stack([torch.randperm(13 * 11, generator=g) for _ in range(16)]).view(4, 4, 13, 11)
        s = torch.rand(4, 4, 2, generator=g).to(getattr(torch, dtype))
        xe = ember.tensor(x.numpy()).to(getattr(ember, dtype))
        se = ember.tensor(s.float().numpy()).to(getattr(ember, dtype))
        same(EF.fractional_max_pool2d(xe, (2, 3), (4, 3), return_indices=True, _random_samples=se)[1],
             TF.fractional_max_pool2d(x.to(s.dtype), (2, 3), (4, 3), return_indices=True, _random_samples=s)[1])
    se = ember.tensor(samples.double().numpy())
    same_call(lambda x: EF.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7), _random_samples=se),
              lambda x: TF.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7), _random_samples=samples.double()),
              (2, 3, 9, 11), transpose=True)
    same_call(lambda x: EF.fractional_max_pool2d(x, 2, 3), lambda x: TF.fractional_max_pool2d(x, 2, 3), (0, 3, 9, 11))


def test_fractional_max_pool_random_samples():
    """Drawn windows: the output has the asked size, each value is the largest of a
    kernel-sized window of the input at its index, the gradient lands there, and the
    windows cover the input from its start to its end."""
    x = ember.randn(2, 3, 10, 9, 8, dtype=ember.float64, requires_grad=True)
    out, idx = EF.fractional_max_pool3d(x, (2, 3, 2), (4, 3, 5), return_indices=True)
    assert tuple(out.shape) == (2, 3, 4, 3, 5) and idx.dtype == ember.int64
    flat = x.detach().reshape(2, 3, -1)
    assert ember.equal(flat.gather(2, idx.reshape(2, 3, -1)).view(out.shape), out.detach())
    out.sum().backward()
    assert x.grad.sum().item() == out.numel()
    # each index lies inside the image and consecutive windows never step back
    d, h, w = idx // 72, idx // 8 % 9, idx % 8
    assert d.min().item() >= 0 and d.max().item() <= 9 and h.max().item() <= 8 and w.max().item() <= 7
    out2 = EF.fractional_max_pool2d(x.detach()[:, :, 0], 3, output_ratio=(0.5, 0.5))
    assert tuple(out2.shape) == (2, 3, 4, 4)
    # the same seed, the same windows
    ember.manual_seed(3)
    a = EF.fractional_max_pool2d(x.detach()[:, :, 0], 2, 4)
    ember.manual_seed(3)
    assert ember.equal(a, EF.fractional_max_pool2d(x.detach()[:, :, 0], 2, 4))


def test_fractional_max_pool_double_backward():
    x = ember.rand(1, 2, 6, 7, dtype=ember.float64, requires_grad=True)
    s = ember.rand(1, 2, 2, dtype=ember.float64)
    assert ember.autograd.gradgradcheck(lambda v: EF.fractional_max_pool2d(v, 2, 3, _random_samples=s), (x,))


def test_fractional_max_pool_errors():
    x = lambda lib: lib.ones(1, 2, 7, 9)  # noqa: E731
    s = lambda lib, *shape, dtype="float32": lib.ones(*shape, dtype=getattr(lib, dtype)) / 2  # noqa: E731
    cases = [
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2),
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2, output_size=(7, 9), _random_samples=s(lib, 1, 2, 2)),
        lambda F, lib: F.fractional_max_pool2d(x(lib), (3, 2), output_size=(6, 8), _random_samples=s(lib, 1, 2, 2)),
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2, output_size=3, _random_samples=s(lib, 1, 3, 2)),
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2, output_size=3, _random_samples=s(lib, 1, 2, 3)),
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2, output_size=3, _random_samples=s(lib, 1, 2)),
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2, output_size=3,
                                               _random_samples=s(lib, 1, 2, 2, dtype="float64")),
        lambda F, lib: F.fractional_max_pool2d(x(lib)[0, 0], 2, output_size=3),
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2, output_ratio=0.5),
        lambda F, lib: F.fractional_max_pool2d(x(lib), 2, output_size=(2, 2, 2)),
        lambda F, lib: F.fractional_max_pool2d(x(lib).long(), 2, output_size=3),
        lambda F, lib: F.fractional_max_pool2d(lib.ones(1, 0, 5, 5), 2, output_size=3),
        lambda F, lib: F.fractional_max_pool3d(lib.ones(1, 1, 5, 5), 2, output_size=3),
        lambda F, lib: F.fractional_max_pool3d(lib.ones(1, 1, 5, 5, 5), 2, output_size=3,
                                               _random_samples=s(lib, 1, 1, 2)),
        lambda F, lib: F.fractional_max_pool3d(lib.ones(1, 1, 5, 5, 5), 2, output_size=4),
        lambda F, lib: F.fractional_max_pool3d(lib.ones(1, 1, 5, 5, 5), 2),
        lambda F, lib: F.fractional_max_pool3d(lib.ones(1, 0, 5, 5, 5), 2, output_size=2),
    ]
    for case in cases:
        raises_like(lambda: case(EF, ember), lambda: case(TF, torch))


# ---------------------------------------------------------------- modules and aliases

MODULES = [  # (class name, constructor args, input shape)
    ("MaxPool3d", (2,), (2, 3, 4, 5, 6)),
    ("MaxPool3d", ((2, 3, 2), (1, 1, 2), 1, (1, 2, 1), True, True), (2, 3, 4, 5, 6)),
    ("AvgPool3d", (2,), (2, 3, 4, 5, 6)),
    ("AvgPool3d", ((2, 1, 2), 1, (1, 0, 1), True, False, 3), (3, 4, 5, 6)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), (2, 3, 4, 5, 6)),
    ("AdaptiveMaxPool3d", (2, True), (2, 3, 4, 5, 6)),
    ("LPPool1d", (2, 3), (2, 3, 7)),
    ("LPPool2d", (1.5, (2, 3), 1, True), (2, 3, 5, 6)),
    ("LPPool3d", (3, 2), (2, 3, 4, 5, 6)),
]


@pytest.mark.parametrize("name, args, shape", MODULES)
def test_modules(name, args, shape):
    me, mt = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(me) == repr(mt)
    for attr in ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "count_include_pad", "divisor_override",
                 "output_size", "return_indices", "norm_type"):
        assert getattr(me, attr, None) == getattr(mt, attr, None), attr
    low = 0.5 if name.startswith("LP") else -3
    t, e = make(shape, low=low)
    for a, b in zip(me(e) if isinstance(me(e), tuple) else (me(e),), mt(t) if isinstance(mt(t), tuple) else (mt(t),)):
        same(a, b)


def test_fractional_and_unpool_modules():
    for n in (2, 3):
        name = f"FractionalMaxPool{n}d"
        for kwargs in ({"output_size": 3}, {"output_ratio": 0.5}, {"output_size": 2, "return_indices": True}):
            me, mt = getattr(ember.nn, name)(2, **kwargs), getattr(torch.nn, name)(2, **kwargs)
            assert repr(me) == repr(mt)
            for attr in ("kernel_size", "output_size", "output_ratio", "return_indices"):
                assert getattr(me, attr) == getattr(mt, attr), attr
        samples = torch.rand(2, 3, n)
        me = getattr(ember.nn, name)(2, 3, _random_samples=ember.tensor(samples.numpy()))
        mt = getattr(torch.nn, name)(2, 3, _random_samples=samples)
        assert "_random_samples" in dict(me.named_buffers())
        t, e = make((2, 3) + (8,) * n, dtype="float32")
        same(me(e), mt(t))
        for kwargs in ({}, {"output_size": 2, "output_ratio": 0.5}, {"output_ratio": 1.5}):
            raises_like(lambda: getattr(ember.nn, name)(2, **kwargs), lambda: getattr(torch.nn, name)(2, **kwargs))
    raises_like(lambda: ember.nn.FractionalMaxPool3d(0, 2), lambda: torch.nn.FractionalMaxPool3d(0, 2))
    for n in (1, 2, 3):
        for args in ((2,), (3, 2, 1)):
            me, mt = getattr(ember.nn, f"MaxUnpool{n}d")(*args), getattr(torch.nn, f"MaxUnpool{n}d")(*args)
            assert repr(me) == repr(mt)
            assert (me.kernel_size, me.stride, me.padding) == (mt.kernel_size, mt.stride, mt.padding)
            t, e = make((2, 3) + (6,) * n)
            ot, it = getattr(TF, f"max_pool{n}d")(t, *args, return_indices=True)
            oe, ie = getattr(EF, f"max_pool{n}d")(e, *args, return_indices=True)
            same(me(oe, ie, output_size=list(t.shape)), mt(ot, it, output_size=list(t.shape)))


def test_top_level_aliases():
    names = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
             "adaptive_avg_pool1d", "adaptive_max_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d"]
    for name in names:
        assert hasattr(torch, name) and hasattr(ember, name), name
    for name in ("avg_pool3d", "adaptive_max_pool3d_with_indices", "max_unpool2d", "lp_pool2d"):
        assert not hasattr(torch, name)
    t, e = make((2, 3, 8))
    for name, args in [("max_pool1d", (3, 2, 1)), ("max_pool1d_with_indices", (2,)), ("avg_pool1d", (3, 1, 1)),
                       ("adaptive_avg_pool1d", (3,)), ("adaptive_max_pool1d", (3,))]:
        a, b = getattr(ember, name)(e, *args), getattr(torch, name)(t, *args)
        assert isinstance(a, tuple) == isinstance(b, tuple)
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            same(x, y)
    t, e = make((2, 3, 4, 5, 6))
    same(ember.max_pool2d(e[0], 2, 1), torch.max_pool2d(t[0], 2, 1))
    same(ember.max_pool3d(e, 2, 1, 1), torch.max_pool3d(t, 2, 1, 1))
    same(ember._adaptive_avg_pool2d(e[0], [2, 3]), torch._adaptive_avg_pool2d(t[0], [2, 3]))
    same(ember._adaptive_avg_pool3d(e, [2, 3, 1]), torch._adaptive_avg_pool3d(t, [2, 3, 1]))
