"""The image functions of ember.nn.functional (grid_sample, affine_grid, interpolate's
bicubic/trilinear/antialias modes and upsample aliases, pad in every mode, channel_shuffle)
and their layers (the padding modules, ChannelShuffle, Upsample), against torch: values,
dtypes, gradients (against torch's, and gradcheck in float64), non-contiguous and empty
inputs, and torch's errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import ember.nn as enn  # noqa: E402
import ember.nn.functional as EF  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore:Default grid_sample and affine_grid"),
              pytest.mark.filterwarnings("ignore:Since version 1.3.0, affine_grid")]


def pair(shape, seed=0, low=-1.0, high=1.0, dtype="float64", grad=True):
    """The same random values as an ember and a torch tensor."""
    values = np.random.default_rng(seed).uniform(low, high, size=shape)
    e = ember.tensor(values, dtype=getattr(ember, dtype))
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    if grad:
        e.requires_grad_()
        t.requires_grad_()
    return e, t


def as_np(t):
    if isinstance(t, ember.Tensor):
        return np.array(t.detach().to(ember.float64).tolist()) if t.numel() else np.zeros(tuple(t.shape))
    return t.detach().to(torch.float64).numpy()


def close(e, t, rtol=1e-7, atol=1e-9):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(as_np(e), as_np(t), rtol=rtol, atol=atol)


def check_grads(fn_e, fn_t, inputs_e, inputs_t, rtol=1e-7, atol=1e-9, seed=1):
    """Forward values and the gradients of every input, for a random output gradient."""
    out_e, out_t = fn_e(*inputs_e), fn_t(*inputs_t)
    close(out_e, out_t, rtol, atol)
    go = np.random.default_rng(seed).standard_normal(tuple(out_t.shape))
    grads_t = torch.autograd.grad(out_t, inputs_t, torch.tensor(go, dtype=out_t.dtype))
    grads_e = ember.autograd.grad(out_e, inputs_e, ember.tensor(go, dtype=out_e.dtype))
    for ge, gt in zip(grads_e, grads_t):
        close(ge, gt, rtol, atol)


def raises_like(fn_e, fn_t, match=True):
    """Both raise the same exception type (and message, unless match=False)."""
    with pytest.raises(Exception) as t_info:
        fn_t()
    with pytest.raises(type(t_info.value)) as e_info:
        fn_e()
    if match:
        assert str(e_info.value) == str(t_info.value).replace("torch.", "ember.")


# ---------------------------------------------------------------- grid_sample

SPATIAL = {2: (4, 5), 3: (3, 4, 5)}
GRID_OUT = {2: (3, 4), 3: (2, 3, 2)}


def grid_pair(d, seed=1, n=2):
    """A grid reaching past both edges, with exact -1, 0 and 1 entries (the borders and
    the points where the coordinate maps land on pixel centers)."""
    values = np.random.default_rng(seed).uniform(-1.6, 1.6, size=(n, *GRID_OUT[d], d))
    flat = values.reshape(-1)
    flat[:6] = [-1.0, 1.0, 0.0, -1.0, 1.0, 0.5]
    e = ember.tensor(values).requires_grad_()
    t = torch.tensor(values).requires_grad_()
    return e, t


@pytest.mark.parametrize("d, mode", [(2, "bilinear"), (2, "nearest"), (2, "bicubic"), (3, "bilinear"), (3, "nearest")])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch_with_gradients(d, mode, padding_mode, align_corners):
    xe, xt = pair((2, 3, *SPATIAL[d]))
    ge, gt = grid_pair(d)
    check_grads(lambda x, g: EF.grid_sample(x, g, mode, padding_mode, align_corners),
                lambda x, g: TF.grid_sample(x, g, mode, padding_mode, align_corners), (xe, ge), (xt, gt))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_unit_size_axes(mode):
    # an axis of one pixel: reflection has nothing to reflect in, and its gradient is 0
    for padding_mode in ("zeros", "border", "reflection"):
        for align_corners in (False, True):
            xe, xt = pair((1, 2, 1, 4))
            ge, gt = grid_pair(2, n=1)
            check_grads(lambda x, g: EF.grid_sample(x, g, mode, padding_mode, align_corners),
                        lambda x, g: TF.grid_sample(x, g, mode, padding_mode, align_corners), (xe, ge), (xt, gt))


def test_grid_sample_nearest_gives_the_grid_a_zero_gradient():
    xe, _ = pair((1, 2, 3, 3))
    ge, _ = grid_pair(2, n=1)
    EF.grid_sample(xe, ge, "nearest", align_corners=False).sum().backward()
    assert ge.grad is not None and as_np(ge.grad).tolist() == np.zeros(tuple(ge.shape)).tolist()


@pytest.mark.parametrize("mode, padding_mode, d", [("bilinear", "zeros", 2), ("bicubic", "reflection", 2),
                                                   ("bilinear", "border", 3)])
def test_grid_sample_gradcheck(mode, padding_mode, d):
    x = ember.tensor(np.random.default_rng(0).standard_normal((1, 2, *SPATIAL[d])), requires_grad=True)
    g = ember.tensor(np.random.default_rng(2).uniform(-1.2, 1.2, size=(1, *GRID_OUT[d], d)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: EF.grid_sample(a, b, mode, padding_mode, True), (x, g))


@pytest.mark.parametrize("dtype, tol", [("float32", 1e-5), ("float16", 2e-2), ("bfloat16", 1e-1)])
def test_grid_sample_dtypes(dtype, tol):
    xe, xt = pair((2, 3, 4, 5), dtype=dtype, grad=False)
    ge, gt = pair((2, 3, 4, 2), seed=3, low=-1.2, high=1.2, dtype=dtype, grad=False)
    ye, yt = EF.grid_sample(xe, ge, align_corners=False), TF.grid_sample(xt, gt, align_corners=False)
    assert ye.dtype == getattr(ember, dtype)
    close(ye, yt, rtol=tol, atol=tol)


def test_grid_sample_non_contiguous_and_empty():
    xe, xt = pair((2, 3, 5, 4))
    ge, gt = pair((2, 4, 3, 2), seed=4, low=-1.1, high=1.1)
    check_grads(lambda x, g: EF.grid_sample(x.transpose(2, 3), g.transpose(1, 2), align_corners=True),
                lambda x, g: TF.grid_sample(x.transpose(2, 3), g.transpose(1, 2), align_corners=True),
                (xe, ge), (xt, gt))
    assert EF.grid_sample(ember.zeros(0, 3, 4, 5), ember.zeros(0, 3, 3, 2), align_corners=False).shape == (0, 3, 3, 3)
    assert EF.grid_sample(ember.zeros(2, 0, 4, 5), ember.zeros(2, 3, 3, 2), align_corners=False).shape == (2, 0, 3, 3)
    assert EF.grid_sample(ember.zeros(2, 1, 4, 5), ember.zeros(2, 0, 3, 2), align_corners=False).shape == (2, 1, 0, 3)


def test_grid_sample_nan_grid_does_not_crash():
    g = ember.tensor([[[[float("nan"), 0.0], [float("inf"), -float("inf")]]]])
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding_mode in ("zeros", "border", "reflection"):
            assert EF.grid_sample(ember.ones(1, 1, 3, 3), g, mode, padding_mode, False).shape == (1, 1, 1, 2)


@pytest.mark.parametrize("call", [
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(2, 3, 3, 2), mode="foo"),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(2, 3, 3, 2), padding_mode="foo"),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(3, 3, 3, 2), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(2, 3, 3, 3), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5, 6), T.zeros(2, 3, 3, 3, 3), mode="bicubic", align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 0, 5), T.zeros(2, 3, 3, 2), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5, dtype=T.float64), T.zeros(2, 3, 3, 2), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5, dtype=T.int64), T.zeros(2, 3, 3, 2, dtype=T.int64),
                               align_corners=False),
])
def test_grid_sample_errors(call):
    raises_like(lambda: call(EF, ember), lambda: call(TF, torch))


def test_grid_sample_default_align_corners_warns():
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        EF.grid_sample(ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 1, 2))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        EF.affine_grid(ember.zeros(1, 2, 3), (1, 1, 2, 2))


# ---------------------------------------------------------------- affine_grid

@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 3), (2, 3, 2, 3, 4), (2, 1, 1, 1, 2)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch_with_gradients(size, align_corners):
    te, tt = pair((2, 2, 3) if len(size) == 4 else (2, 3, 4), seed=5)
    check_grads(lambda th: EF.affine_grid(th, size, align_corners),
                lambda th: TF.affine_grid(th, size, align_corners), (te,), (tt,))


def test_affine_grid_gradcheck_and_feeds_grid_sample():
    theta = ember.tensor([[[0.9, -0.2, 0.13], [0.3, 1.1, -0.17]]], dtype=ember.float64, requires_grad=True)
    x = ember.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)))
    assert ember.autograd.gradcheck(
        lambda th: EF.grid_sample(x, EF.affine_grid(th, (1, 2, 3, 3), False), align_corners=False), (theta,))
    identity = ember.tensor([[[1.0, 0, 0], [0, 1, 0]]])
    img = ember.randn(1, 3, 4, 5)
    close(EF.grid_sample(img, EF.affine_grid(identity, (1, 3, 4, 5), False), align_corners=False), torch.tensor(
        as_np(img), dtype=torch.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 4), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 4, 5, 6), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3, dtype=T.int64), (2, 3, 4, 5), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 0, 5), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 4, 5, 6, 7), align_corners=False),
])
def test_affine_grid_errors(call):
    raises_like(lambda: call(EF, ember), lambda: call(TF, torch))


# ---------------------------------------------------------------- interpolate

INTERP_CASES = [
    ((2, 3, 5, 6), "bicubic", dict(size=(7, 4))),
    ((2, 3, 5, 6), "bicubic", dict(scale_factor=1.7)),
    ((2, 3, 5, 6), "bicubic", dict(scale_factor=2.3, recompute_scale_factor=True)),
    ((2, 3, 5, 6), "bicubic", dict(size=(1, 1))),
    ((1, 2, 3, 4, 5), "trilinear", dict(size=(5, 3, 7))),
    ((1, 2, 3, 4, 5), "trilinear", dict(scale_factor=(1.5, 0.5, 2.0))),
    ((2, 3, 11, 13), "bilinear", dict(size=(4, 5), antialias=True)),
    ((2, 3, 4, 4), "bilinear", dict(size=(9, 3), antialias=True)),
    ((2, 3, 11, 13), "bicubic", dict(size=(4, 17), antialias=True)),
    ((2, 3, 11, 13), "bicubic", dict(scale_factor=0.3, antialias=True)),
]


@pytest.mark.parametrize("shape, mode, kw", INTERP_CASES)
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_new_modes_match_torch_with_gradients(shape, mode, kw, align_corners):
    xe, xt = pair(shape)
    check_grads(lambda x: EF.interpolate(x, mode=mode, align_corners=align_corners, **kw),
                lambda x: TF.interpolate(x, mode=mode, align_corners=align_corners, **kw), (xe,), (xt,))


@pytest.mark.parametrize("shape, kw", [((2, 3, 11, 13), dict(size=(4, 17))), ((2, 3, 5, 6), dict(scale_factor=0.3)),
                                       ((1, 2, 4, 4), dict(size=(9, 3)))])
def test_interpolate_lanczos(shape, kw):
    xe, xt = pair(shape)
    check_grads(lambda x: EF.interpolate(x, mode="lanczos", antialias=True, **kw),
                lambda x: TF.interpolate(x, mode="lanczos", antialias=True, **kw), (xe,), (xt,))


@pytest.mark.parametrize("mode, kw", [("nearest", dict(scale_factor=1.5)), ("nearest-exact", dict(size=(2, 7, 3))),
                                      ("nearest", dict(scale_factor=2.5, recompute_scale_factor=True))])
def test_interpolate_nearest_5d(mode, kw):
    xe, xt = pair((1, 2, 3, 4, 5))
    check_grads(lambda x: EF.interpolate(x, mode=mode, **kw), lambda x: TF.interpolate(x, mode=mode, **kw),
                (xe,), (xt,))


@pytest.mark.parametrize("shape, mode, antialias", [
    ((1, 2, 5, 7), "nearest", False), ((1, 2, 5, 7), "bilinear", False), ((1, 2, 5, 7), "bilinear", True),
    ((1, 2, 5, 7), "bicubic", True), ((1, 2, 5, 7), "bicubic", False), ((1, 2, 5), "linear", False),
    ((1, 2, 5), "nearest", False), ((1, 2, 5, 3, 4), "trilinear", False), ((1, 2, 5, 3, 4), "nearest", False),
])
def test_interpolate_scale_factors_keeping_or_doubling_a_size(shape, mode, antialias):
    # torch's forward kernels copy a dim whose size a scale factor keeps (and the 2-d
    # nearest kernel halves the index of a dim it doubles) instead of using the scale.
    # Some of torch's backward kernels do not (their gradient is then not the forward's
    # adjoint); ember's is the adjoint, so only the values are compared here.
    for scale_factor in (1.01, (1.01, 2.01)[:len(shape) - 2] + (1.3,) * (len(shape) - 4)):
        xe, xt = pair(shape, grad=False)
        close(EF.interpolate(xe, scale_factor=scale_factor, mode=mode, antialias=antialias),
              TF.interpolate(xt, scale_factor=scale_factor, mode=mode, antialias=antialias))
        if (mode, len(shape)) in (("nearest", 4), ("linear", 3), ("bilinear", 4), ("trilinear", 5)) and not antialias:
            xe, xt = pair(shape)  # torch's backward agrees with its forward here
            check_grads(lambda x: EF.interpolate(x, scale_factor=scale_factor, mode=mode),
                        lambda x: TF.interpolate(x, scale_factor=scale_factor, mode=mode), (xe,), (xt,))


@pytest.mark.parametrize("mode, kw", [("bicubic", {}), ("bicubic", dict(antialias=True)),
                                      ("bilinear", dict(antialias=True))])
def test_interpolate_gradcheck(mode, kw):
    x = ember.tensor(np.random.default_rng(0).standard_normal((1, 2, 5, 4)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: EF.interpolate(a, size=(3, 6), mode=mode, **kw), (x,))


@pytest.mark.parametrize("dtype, tol", [("float32", 1e-5), ("float16", 1e-2)])
def test_interpolate_bicubic_dtypes_and_non_contiguous(dtype, tol):
    xe, xt = pair((2, 3, 6, 5), dtype=dtype, grad=False)
    ye = EF.interpolate(xe.transpose(2, 3), scale_factor=1.5, mode="bicubic", align_corners=False)
    yt = TF.interpolate(xt.transpose(2, 3), scale_factor=1.5, mode="bicubic", align_corners=False)
    assert ye.dtype == getattr(ember, dtype)
    close(ye, yt, rtol=tol, atol=tol)
    assert EF.interpolate(ember.zeros(0, 3, 4, 4), scale_factor=2, mode="bicubic").shape == (0, 3, 8, 8)


@pytest.mark.parametrize("call", [
    lambda F, T: F.interpolate(T.zeros(1, 1, 4), scale_factor=2, mode="bicubic"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4), scale_factor=2, mode="bilinear"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4, 4), scale_factor=2, mode="linear"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), scale_factor=2, mode="trilinear"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4, 4), scale_factor=2, mode="bilinear"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4), scale_factor=2, mode="linear", antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), scale_factor=2, mode="nearest", antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), scale_factor=2, mode="foo"),
    lambda F, T: F.interpolate(T.zeros(2, 4), scale_factor=2),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), scale_factor=2, mode="nearest", align_corners=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), size=3, scale_factor=2, mode="bicubic"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4, dtype=T.int64), scale_factor=2, mode="bicubic"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), scale_factor=2, mode="lanczos"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), scale_factor=2, mode="lanczos", antialias=True, align_corners=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4), scale_factor=2, mode="lanczos"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4, 4), scale_factor=2, mode="lanczos"),
])
def test_interpolate_errors(call):
    raises_like(lambda: call(EF, ember), lambda: call(TF, torch))


@pytest.mark.parametrize("name, kw, mode, align_corners", [
    ("upsample", dict(scale_factor=2, mode="bicubic"), "bicubic", None),
    ("upsample_nearest", dict(scale_factor=2), "nearest", None),
    ("upsample_bilinear", dict(size=(3, 5)), "bilinear", True),
])
def test_upsample_aliases_warn_and_match_interpolate(name, kw, mode, align_corners):
    xe, xt = pair((1, 2, 3, 4), grad=False)
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        ye = getattr(EF, name)(xe, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(ye, getattr(TF, name)(xt, **kw))


@pytest.mark.parametrize("module", [
    lambda nn: nn.Upsample(scale_factor=2, mode="bicubic"),
    lambda nn: nn.Upsample(size=(3, 2, 5), mode="trilinear", align_corners=True),
    lambda nn: nn.Upsample(scale_factor=(2, 1.5), mode="bilinear"),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=3),
    lambda nn: nn.UpsamplingBilinear2d(size=(5, 7)),
])
def test_upsample_modules(module):
    me, mt = module(enn), module(torch.nn)
    assert repr(me) == repr(mt)
    shape = (1, 2, 3, 4, 2) if mt.mode == "trilinear" else (1, 2, 3, 4)
    xe, xt = pair(shape)
    check_grads(me, mt, (xe,), (xt,))


# ---------------------------------------------------------------- pad

PAD_SHAPES = {1: [(3, 5), (2, 3, 5)], 2: [(3, 4, 5), (2, 3, 4, 5)], 3: [(2, 3, 4, 5), (1, 2, 3, 4, 5)]}
PAD_AMOUNTS = {1: [(1, 2), (-1, 2), (4, 0)], 2: [(2, 1, 1, 0), (2, -1, -1, 1), (0, 3, 3, 0)],
               3: [(1, 1, 2, 0, 0, 1), (-1, 1, 1, -1, 2, 0), (0, 0, 0, 0, 2, 2)]}


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_pad_matches_torch_with_gradients(mode, n):
    for shape in PAD_SHAPES[n]:
        for amounts in PAD_AMOUNTS[n]:
            xe, xt = pair(shape)
            if mode == "reflect" and any(a >= s for a, s in zip(amounts, [s for s in shape[::-1] for _ in (0, 1)])):
                raises_like(lambda: EF.pad(xe, amounts, mode), lambda: TF.pad(xt, amounts, mode))
                continue
            check_grads(lambda x: EF.pad(x, amounts, mode), lambda x: TF.pad(x, amounts, mode), (xe,), (xt,))


def test_pad_constant_any_dims_values_and_dtypes():
    xe, xt = pair((2, 1, 3, 2, 2))
    pads = (1, 0, -1, 2, 0, 1, 2, 2, 1, 0)
    check_grads(lambda x: EF.pad(x, pads, value=1.5), lambda x: TF.pad(x, pads, value=1.5), (xe,), (xt,))
    for dtype in ("int64", "int32", "uint8", "bool", "float16", "bfloat16"):
        te = ember.arange(6).view(2, 3).to(getattr(ember, dtype))
        tt = torch.arange(6).view(2, 3).to(getattr(torch, dtype))
        for kw in ({}, dict(value=2.5 if dtype != "bool" else True)):
            ye, yt = EF.pad(te, (1, 2), **kw), TF.pad(tt, (1, 2), **kw)
            assert ye.dtype == getattr(ember, dtype)
            close(ye, yt)
    for mode in ("reflect", "replicate", "circular"):
        close(EF.pad(ember.arange(6).view(1, 2, 3), (2, 1), mode), TF.pad(torch.arange(6).view(1, 2, 3), (2, 1), mode))


def test_pad_non_contiguous_and_empty():
    xe, xt = pair((2, 5, 4))
    for mode in ("constant", "reflect", "replicate", "circular"):
        check_grads(lambda x: EF.pad(x.transpose(1, 2), (1, 2, 2, 1), mode),
                    lambda x: TF.pad(x.transpose(1, 2), (1, 2, 2, 1), mode), (xe,), (xt,))
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert EF.pad(ember.zeros(0, 2, 3, 3, 3), (1, 1, 1, 1, 1, 1), mode).shape == (0, 2, 5, 5, 5)
    assert EF.pad(ember.zeros(2, 0), (1, 1)).shape == (2, 2)


def test_pad_gradcheck():
    x = ember.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)), requires_grad=True)
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert ember.autograd.gradcheck(lambda a: EF.pad(a, (2, 1, -1, 2), mode), (x,))


@pytest.mark.parametrize("call", [
    lambda F, T: F.pad(T.zeros(2, 3), (1, 1, 1)),
    lambda F, T: F.pad(T.zeros(2, 3), (1, 1, 1, 1, 1, 1)),
    lambda F, T: F.pad(T.zeros(1, 2, 3), (-4, 1)),
    lambda F, T: F.pad(T.zeros(1, 2, 3), (1, 1), mode="foo"),
    lambda F, T: F.pad(T.zeros(1, 2, 3), (1, 1), mode="reflect", value=2),
    lambda F, T: F.pad(T.zeros(1, 2, 3, 4, 5, 6), (1, 1), mode="reflect"),
    lambda F, T: F.pad(T.zeros(2, 3), (1, 1, 1, 1, 1, 1), mode="replicate"),
    lambda F, T: F.pad(T.zeros(1, 2, 3), (3, 1), mode="reflect"),
    lambda F, T: F.pad(T.zeros(1, 2, 4, 5), (1, 1, 4, 1), mode="reflect"),
    lambda F, T: F.pad(T.zeros(1, 2, 3, 4, 5), (1, 1, 1, 1, 4, 4), mode="reflect"),
    lambda F, T: F.pad(T.zeros(1, 2, 0), (1, 1), mode="reflect"),
    lambda F, T: F.pad(T.zeros(1, 2, 0, 3, 3), (1, 1, 1, 1, 1, 1), mode="replicate"),
    lambda F, T: F.pad(T.zeros(2, 3, 3), (-2, -2), mode="replicate"),
    lambda F, T: F.pad(T.zeros(2, 3, 3), (4, 0), mode="circular"),
    lambda F, T: F.pad(T.zeros(2, 3, 3), (-2, -2), mode="circular"),
    lambda F, T: F.pad(T.zeros(2, 3, 3, dtype=T.bool), (1, 1), mode="reflect"),
])
def test_pad_errors(call):
    raises_like(lambda: call(EF, ember), lambda: call(TF, torch))


# ---------------------------------------------------------------- padding modules

PAD_MODULES = [
    ("ZeroPad1d", (2,), (2, 3, 4)), ("ZeroPad2d", ((1, 2, 0, 1),), (2, 3, 4)), ("ZeroPad3d", (1,), (1, 2, 3, 4)),
    ("ConstantPad1d", ((1, 0), 3.5), (2, 3)), ("ConstantPad2d", (2, -1.0), (1, 2, 3, 4)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), (2, 3, 2, 2)),
    ("ReflectionPad1d", (2,), (2, 3, 4)), ("ReflectionPad2d", ((1, 2, 0, 1),), (2, 3, 4)),
    ("ReflectionPad3d", (1,), (1, 2, 3, 4, 3)),
    ("ReplicationPad1d", ((3, 1),), (3, 4)), ("ReplicationPad2d", (2,), (1, 2, 3, 4)),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),), (2, 3, 2, 2)),
    ("CircularPad1d", (2,), (2, 3, 4)), ("CircularPad2d", ((1, 2, 0, 1),), (1, 2, 3, 4)),
    ("CircularPad3d", (1,), (2, 3, 2, 2)),
]


@pytest.mark.parametrize("name, args, shape", PAD_MODULES)
def test_padding_modules(name, args, shape):
    from ember.nn.modules import padding

    me, mt = getattr(enn, name)(*args), getattr(torch.nn, name)(*args)
    assert getattr(padding, name) is getattr(enn, name)
    assert repr(me) == repr(mt)
    assert me.padding == mt.padding
    assert getattr(me, "value", None) == getattr(mt, "value", None)
    xe, xt = pair(shape)
    check_grads(me, mt, (xe,), (xt,))


def test_circular_pad_module_checks_dims():
    raises_like(lambda: enn.CircularPad2d(1)(ember.zeros(3, 3)), lambda: torch.nn.CircularPad2d(1)(torch.zeros(3, 3)))


# ---------------------------------------------------------------- channel_shuffle

@pytest.mark.parametrize("shape, groups", [((2, 6, 4), 2), ((2, 6, 3, 3), 3), ((1, 4, 2, 1, 2), 4), ((0, 6, 2), 3)])
def test_channel_shuffle_matches_torch(shape, groups):
    xe, xt = pair(shape)
    check_grads(lambda x: EF.channel_shuffle(x, groups), lambda x: TF.channel_shuffle(x, groups), (xe,), (xt,))
    check_grads(lambda x: ember.channel_shuffle(x.transpose(0, -1).transpose(0, -1), groups),
                lambda x: torch.channel_shuffle(x, groups), (xe,), (xt,))
    me, mt = enn.ChannelShuffle(groups), torch.nn.ChannelShuffle(groups)
    assert repr(me) == repr(mt)
    close(me(xe), mt(xt))
    close(EF.channel_shuffle(ember.arange(12).view(1, 6, 2), 3), TF.channel_shuffle(torch.arange(12).view(1, 6, 2), 3))


@pytest.mark.parametrize("call", [
    lambda F, T: F.channel_shuffle(T.zeros(2, 6, 4), 4),
    lambda F, T: F.channel_shuffle(T.zeros(2, 6, 4), 0),
    lambda F, T: F.channel_shuffle(T.zeros(2, 6), 2),
    lambda F, T: F.channel_shuffle(T.zeros(2, 6, 4), 2.0),
])
def test_channel_shuffle_errors(call):
    raises_like(lambda: call(EF, ember), lambda: call(TF, torch))


def test_top_level_aliases():
    from ember.nn.modules.channelshuffle import ChannelShuffle

    assert ChannelShuffle is enn.ChannelShuffle
    for name in ("channel_shuffle", "pixel_shuffle", "pixel_unshuffle"):
        assert getattr(ember, name) is getattr(EF, name)
    close(ember.pixel_shuffle(ember.arange(8.).view(1, 8, 1, 1), 2),
          torch.pixel_shuffle(torch.arange(8.).view(1, 8, 1, 1), 2))


@pytest.mark.parametrize("name", ["ember.nn.modules.padding", "ember.nn.modules.channelshuffle",
                                  "ember.nn.modules.upsampling"])
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(name)
    result = doctest.testmod(module, globs={"ember": ember, **vars(module)})
    assert result.attempted > 0 and result.failed == 0
