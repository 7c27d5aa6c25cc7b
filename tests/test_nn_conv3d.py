"""conv3d and conv_transpose3d (the N-d native convolution), the top-level conv aliases,
Conv3d/ConvTranspose3d, the lazy modules with UninitializedParameter/UninitializedBuffer,
and a small 3-d CNN trained a few steps: all against torch."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember import nn as enn
from ember.autograd import gradcheck, gradgradcheck
from torch import nn as tnn

TF = torch.nn.functional


def to_e(t):
    e = ember.tensor(t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy())
    if t.dtype == torch.bfloat16:
        e = e.to(ember.bfloat16)
    return e.requires_grad_(t.requires_grad)


def as_np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().float().numpy() if x.dtype in (torch.float16, torch.bfloat16) else x.detach().numpy()
    return x.detach().float().numpy() if x.dtype in (ember.float16, ember.bfloat16) else x.detach().numpy()


def assert_close(e, t, tol):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(as_np(e), as_np(t), rtol=tol, atol=tol)


def leaves(*shapes, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    ts = [torch.randn(*s, generator=g, dtype=torch.float64).to(dtype).requires_grad_() for s in shapes]
    return ts, [to_e(t) for t in ts]


def check_parity(t_fn, e_fn, shapes, tol, dtype=torch.float64):
    (tx, tw, tb), (ex, ew, eb) = leaves(*shapes, dtype=dtype)
    ty, ey = t_fn(tx, tw, tb), e_fn(ex, ew, eb)
    assert_close(ey, ty, tol)
    g = torch.randn(ty.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1)).to(dtype)
    ty.backward(g)
    ey.backward(to_e(g))
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        assert_close(e.grad, t.grad, tol)


# ---- conv3d / conv_transpose3d values and gradients ----

CONV3D_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(1, 2, 3), padding=(0, 1, 2), dilation=(2, 1, 1)),
    dict(groups=2, padding="same"),
    dict(padding="same", dilation=(1, 2, 1)),  # an odd total: torch pads one more on the right
    dict(padding="valid", stride=(2, 1, 1)),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch's note on its own padded copy
@pytest.mark.parametrize("kw", CONV3D_CASES, ids=str)
def test_conv3d_matches_torch(kw):
    groups = kw.get("groups", 1)
    check_parity(lambda x, w, b: TF.conv3d(x, w, b, **kw), lambda x, w, b: F.conv3d(x, w, b, **kw),
                 [(2, 4, 5, 6, 7), (6, 4 // groups, 3, 2, 3), (6,)], 1e-10)


CONVT3D_CASES = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(1, 2, 3), padding=(0, 1, 2), dilation=(2, 1, 1), output_padding=(0, 1, 2)),
    dict(groups=2, dilation=2),
]


@pytest.mark.parametrize("kw", CONVT3D_CASES, ids=str)
def test_conv_transpose3d_matches_torch(kw):
    groups = kw.get("groups", 1)
    check_parity(lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw), lambda x, w, b: F.conv_transpose3d(x, w, b, **kw),
                 [(2, 4, 4, 3, 5), (4, 6 // groups, 3, 2, 3), (6,)], 1e-10)


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-4), (torch.float16, 2e-2), (torch.bfloat16, 1e-1)])
def test_conv3d_dtypes(dtype, tol):
    check_parity(lambda x, w, b: TF.conv3d(x, w, b, padding=1), lambda x, w, b: F.conv3d(x, w, b, padding=1),
                 [(1, 3, 4, 4, 4), (2, 3, 3, 3, 3), (2,)], tol, dtype)
    check_parity(lambda x, w, b: TF.conv_transpose3d(x, w, b, stride=2),
                 lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2), [(1, 3, 3, 3, 3), (3, 2, 2, 2, 2), (2,)], tol,
                 dtype)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "int16"])
def test_integer_convolutions(dtype):
    # torch computes them, wrapping around on overflow; its transposed ones take int64 alone
    g = torch.Generator().manual_seed(0)
    tx = torch.randint(-100 if dtype != "uint8" else 0, 100, (2, 4, 4, 5, 3), generator=g).to(getattr(torch, dtype))
    tw = torch.randint(-100 if dtype != "uint8" else 0, 100, (4, 2, 2, 3, 2), generator=g).to(getattr(torch, dtype))
    tb = torch.randint(0, 50, (4,), generator=g).to(getattr(torch, dtype))
    ex, ew, eb = to_e(tx), to_e(tw), to_e(tb)
    assert_close(F.conv3d(ex, ew, eb, padding=1, groups=2), TF.conv3d(tx, tw, tb, padding=1, groups=2), 0)
    assert_close(ember.conv2d(ex[:, :2, 0], ew[:, :, 0], stride=2), torch.conv2d(tx[:, :2, 0], tw[:, :, 0], stride=2),
                 0)
    tt, et = tw.transpose(0, 1).contiguous(), ew.transpose(0, 1).contiguous()  # (2, 4, ...)
    tx2, ex2 = tx[:, :2], ex[:, :2]
    if dtype == "int64":
        assert_close(F.conv_transpose3d(ex2, et, stride=2), TF.conv_transpose3d(tx2, tt, stride=2), 0)
        big_t, big_e = torch.full((1, 1, 2, 2, 2), 2**62), ember.full((1, 1, 2, 2, 2), 2**62)
        assert_close(F.conv3d(big_e, big_e * 0 + 3), TF.conv3d(big_t, big_t * 0 + 3), 0)  # wraps to 0 * 2**64
    else:
        for lib, f, x, w in ((torch, TF, tx2, tt), (ember, F, ex2, et)):
            with pytest.raises(NotImplementedError, match="slow_conv_transpose3d_out_cpu"):
                f.conv_transpose3d(x, w)
    for lib, f in ((torch, TF), (ember, F)):
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):  # torch's kernel name varies
            f.conv3d(lib.ones(1, 1, 2, 2, 2, dtype=lib.bool), lib.ones(1, 1, 1, 1, 1, dtype=lib.bool))


def test_conv3d_gradcheck_and_double_backward():
    g = ember.Generator().manual_seed(0)
    x = ember.randn(1, 2, 3, 4, 3, dtype=ember.float64, generator=g, requires_grad=True)
    w = ember.randn(2, 2, 2, 2, 2, dtype=ember.float64, generator=g, requires_grad=True)
    b = ember.randn(2, dtype=ember.float64, generator=g, requires_grad=True)

    def conv(x, w, b):
        return F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, dilation=(1, 1, 2))

    def convt(x, w, b):
        return F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1)

    for fn in (conv, convt):
        assert gradcheck(fn, (x, w, b))
        assert gradgradcheck(fn, (x, w, b))


def test_conv3d_double_backward_matches_torch():
    (tx, tw), (ex, ew) = leaves((1, 2, 4, 3, 4), (3, 2, 2, 2, 2))
    outs = []
    for x, w, lib, fn in ((tx, tw, torch, TF.conv3d), (ex, ew, ember, F.conv3d)):
        y = fn(x, w, None, padding=1)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        gx.sum().backward()
        outs.append((gx, gw, x.grad, w.grad))
    for e, t in zip(outs[1], outs[0]):
        assert_close(e, t, 1e-10)


def test_unbatched_noncontiguous_and_empty():
    (tx, tw, tb), (ex, ew, eb) = leaves((3, 6, 5, 4), (2, 3, 2, 2, 2), (2,))
    # (C, D, H, W) without a batch dim
    assert_close(F.conv3d(ex, ew, eb, padding=1), TF.conv3d(tx, tw, tb, padding=1), 1e-10)
    tw_t, ew_t = tw.detach().transpose(0, 1), ew.detach().transpose(0, 1)  # (3, 2, ...): a transposed weight
    assert_close(F.conv_transpose3d(ex.detach(), ew_t, None, stride=2),
                 TF.conv_transpose3d(tx.detach(), tw_t, None, stride=2), 1e-10)
    # a non-contiguous input (a permuted view)
    tp, ep = tx.detach().permute(1, 0, 2, 3).unsqueeze(0), ex.detach().permute(1, 0, 2, 3).unsqueeze(0)
    assert not ep.is_contiguous()
    tw2 = torch.randn(2, 6, 2, 1, 2, dtype=torch.float64)
    ew2 = to_e(tw2)
    assert_close(F.conv3d(ep, ew2, stride=(2, 1, 1)), TF.conv3d(tp, tw2, stride=(2, 1, 1)), 1e-10)
    # an empty batch, forward and backward
    tz = torch.zeros(0, 3, 4, 4, 4, dtype=torch.float64, requires_grad=True)
    ez = to_e(tz)
    ty, ey = TF.conv3d(tz, tw, tb), F.conv3d(ez, ew, eb)
    assert_close(ey, ty, 0)
    ey.sum().backward()
    ty.sum().backward()
    assert_close(ez.grad, tz.grad, 0)
    assert_close(ew.grad, tw.grad, 0)


@pytest.mark.parametrize("name, call", [
    ("weight_dims", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2))),
    ("input_dims", lambda L: L.nn.functional.conv3d(L.ones(2, 4, 4, 4, 4, 4), L.ones(3, 2, 2, 2, 2))),
    ("channels", lambda L: L.nn.functional.conv3d(L.ones(1, 3, 4, 4, 4), L.ones(3, 2, 2, 2, 2))),
    ("groups", lambda L: L.nn.functional.conv3d(L.ones(1, 4, 4, 4, 4), L.ones(3, 2, 2, 2, 2), groups=2)),
    ("groups0", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2), groups=0)),
    ("kernel_too_big", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 5, 2, 2))),
    ("same_strided", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2), stride=2,
                                                      padding="same")),
    ("padding_string", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2),
                                                        padding="full")),
    ("negative_padding", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2), padding=-1)),
    ("zero_stride", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2), stride=0)),
    ("stride_length", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2), stride=(1, 1))),
    ("bias_size", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2), L.ones(4))),
    ("dtype_mismatch", lambda L: L.nn.functional.conv3d(L.ones(1, 2, 4, 4, 4), L.ones(3, 2, 2, 2, 2,
                                                                                    dtype=L.float64))),
    ("t_channels", lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 3, 4, 4, 4), L.ones(2, 3, 2, 2, 2))),
    ("t_output_padding", lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 2, 4, 4, 4), L.ones(2, 3, 2, 2, 2),
                                                                    stride=2, output_padding=2)),
    ("t_padding_string", lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 2, 4, 4, 4), L.ones(2, 3, 2, 2, 2),
                                                                    padding="same")),
    ("module_groups", lambda L: L.nn.Conv3d(3, 4, 3, groups=2)),
    ("module_padding_mode", lambda L: L.nn.Conv3d(3, 4, 3, padding_mode="mirror")),
    ("t_module_padding_mode", lambda L: L.nn.ConvTranspose3d(3, 4, 3, padding_mode="reflect")),
    ("t_output_size", lambda L: L.nn.ConvTranspose3d(2, 4, 3, stride=2)(L.ones(1, 2, 3, 3, 3),
                                                                          output_size=[9, 9, 20])),
])
def test_errors_match_torch(name, call):
    with pytest.raises(Exception) as t_err:
        call(torch)
    with pytest.raises(Exception) as e_err:
        call(ember)
    assert type(e_err.value) is type(t_err.value)
    same_message = {"channels", "groups0", "kernel_too_big", "same_strided", "negative_padding", "zero_stride",
                    "stride_length", "bias_size", "t_channels", "t_padding_string", "module_groups",
                    "t_module_padding_mode"}
    if name in same_message:
        assert str(e_err.value) == str(t_err.value)


# ---- top-level aliases ----

@pytest.mark.parametrize("name", ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                                  "conv_transpose3d"])
def test_top_level_aliases(name):
    assert getattr(ember, name) is getattr(F, name)
    nd = int(name[-2])
    (tx, tw, tb), (ex, ew, eb) = leaves((2, 4) + (5,) * nd, (4, 2) + (3,) * nd, (2 if "transpose" in name else 4,))
    if "transpose" in name:
        kw = dict(stride=2, padding=1, output_padding=1, groups=1)
    else:
        tw, ew = tw[:, :2].detach(), ew[:, :2].detach()
        kw = dict(stride=1, padding="same", dilation=1, groups=2)
    assert_close(getattr(ember, name)(ex, ew, eb, **kw), getattr(torch, name)(tx, tw, tb, **kw), 1e-10)


# ---- modules ----

def copy_state(t_module, e_module):
    e_module.load_state_dict({k: to_e(v) for k, v in t_module.state_dict().items()})


@pytest.mark.parametrize("kw", [dict(), dict(stride=(1, 2, 2), padding=1, bias=False),
                                dict(padding="same", groups=2, dilation=(1, 1, 2)),
                                dict(padding=(1, 0, 2), padding_mode="reflect"),
                                dict(padding=1, padding_mode="replicate"), dict(padding=(2, 1, 1),
                                                                                padding_mode="circular")],
                         ids=str)
def test_conv3d_module(kw):
    t_m, e_m = tnn.Conv3d(4, 6, (3, 2, 3), **kw).double(), enn.Conv3d(4, 6, (3, 2, 3), **kw).double()
    assert repr(e_m) == repr(t_m)
    assert [(k, tuple(v.shape)) for k, v in e_m.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in t_m.state_dict().items()]
    copy_state(t_m, e_m)
    (tx,), (ex,) = leaves((2, 4, 5, 6, 7))
    ty, ey = t_m(tx), e_m(ex)
    assert_close(ey, ty, 1e-10)
    ty.sum().backward()
    ey.sum().backward()
    assert_close(ex.grad, tx.grad, 1e-10)
    assert_close(e_m.weight.grad, t_m.weight.grad, 1e-10)


def test_conv3d_module_init_statistics():
    # torch's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias
    m = enn.Conv3d(8, 16, 3)
    bound = 1 / np.sqrt(8 * 27)
    w = m.weight.detach().numpy()
    assert m.weight.shape == (16, 8, 3, 3, 3) and np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    assert isinstance(m, enn.modules.conv._ConvNd)


@pytest.mark.parametrize("kw, output_size", [(dict(), None), (dict(stride=2, padding=1), [6, 7, 5]),
                                             (dict(stride=(2, 1, 3), output_padding=(1, 0, 2), groups=2), None),
                                             (dict(stride=2, dilation=2, bias=False), [9, 10, 10])], ids=str)
def test_conv_transpose3d_module(kw, output_size):
    t_m = tnn.ConvTranspose3d(4, 6, (3, 2, 3), **kw).double()
    e_m = enn.ConvTranspose3d(4, 6, (3, 2, 3), **kw).double()
    assert repr(e_m) == repr(t_m)
    copy_state(t_m, e_m)
    (tx,), (ex,) = leaves((2, 4, 3, 4, 3))
    ty, ey = t_m(tx, output_size=output_size), e_m(ex, output_size=output_size)
    assert_close(ey, ty, 1e-10)
    ty.sum().backward()
    ey.sum().backward()
    assert_close(ex.grad, tx.grad, 1e-10)
    assert_close(e_m.weight.grad, t_m.weight.grad, 1e-10)
    # unbatched, output_size with the channel dims too
    if output_size is not None:
        assert_close(e_m(ex[0], output_size=[6] + output_size), t_m(tx[0], output_size=[6] + output_size), 1e-10)


# ---- lazy modules ----

LAZY = [
    ("LazyLinear", (3,), (2, 5)),
    ("LazyConv1d", (4, 3), (2, 5, 8)),
    ("LazyConv2d", (4, 3), (2, 6, 8, 8)),
    ("LazyConv3d", (4, 3), (5, 4, 4, 4)),  # unbatched: in_channels from dim 0
    ("LazyConvTranspose1d", (4, 3), (2, 5, 8)),
    ("LazyConvTranspose2d", (4, 3), (2, 5, 4, 4)),
    ("LazyConvTranspose3d", (4, 3), (2, 5, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 3)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), (4, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (4, 3, 5)),
    ("LazyInstanceNorm2d", (), (4, 3, 2, 2)),
    ("LazyInstanceNorm3d", (), (4, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name, args, shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_module_materializes_like_torch(name, args, shape):
    t_m, e_m = getattr(tnn, name)(*args).double(), getattr(enn, name)(*args).double()
    assert type(e_m).__name__ == name
    assert e_m.has_uninitialized_params() and t_m.has_uninitialized_params()
    assert list(e_m.state_dict()) == list(t_m.state_dict())
    for (k, e), (_, t) in zip(e_m.state_dict().items(), t_m.state_dict().items()):
        assert type(e).__name__ == type(t).__name__ and repr(e) == repr(t), k
        if type(t).__name__.startswith("Uninitialized"):
            assert e.dtype == ember.float64
    assert sorted(n for n, _ in e_m.named_parameters()) == sorted(n for n, _ in t_m.named_parameters())
    (tx,), (ex,) = leaves(shape)
    ty, ey = t_m(tx), e_m(ex)
    assert type(e_m).__name__ == type(t_m).__name__ == name.replace("Lazy", "")
    assert not hasattr(e_m, "_initialize_hook")
    assert [(k, tuple(v.shape), str(v.dtype).split('.')[-1]) for k, v in e_m.state_dict().items()] == \
           [(k, tuple(v.shape), str(v.dtype).split('.')[-1]) for k, v in t_m.state_dict().items()]
    assert all(type(p) is enn.Parameter for p in e_m.parameters())
    copy_state(t_m, e_m)
    assert_close(e_m(ex), t_m(tx), 1e-10)
    assert tuple(ey.shape) == tuple(ty.shape)


def test_lazy_state_dict_and_load():
    # a real state dict loaded into a lazy module materializes it (the class stays lazy until forward)
    t_src, e_src = tnn.Linear(4, 3), enn.Linear(4, 3)
    copy_state(t_src, e_src)
    t_m, e_m = tnn.LazyLinear(3), enn.LazyLinear(3)
    t_m.load_state_dict(t_src.state_dict())
    e_m.load_state_dict(e_src.state_dict())
    assert type(e_m).__name__ == type(t_m).__name__ == "LazyLinear"
    assert not e_m.has_uninitialized_params()
    assert_close(e_m.weight, t_m.weight, 0)
    x = torch.randn(2, 4)
    assert_close(e_m(to_e(x)), t_m(x), 1e-6)
    assert type(e_m).__name__ == "Linear"
    # an uninitialized state dict into a lazy module: still lazy
    e_m2 = enn.LazyLinear(3)
    e_m2.load_state_dict(enn.LazyLinear(3).state_dict())
    assert e_m2.has_uninitialized_params()
    # an uninitialized state dict into an initialized module: torch's shape error
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        enn.Linear(4, 3).load_state_dict(enn.LazyLinear(3).state_dict())
    # a BatchNorm's buffers too
    t_bn, e_bn = tnn.BatchNorm2d(3), enn.BatchNorm2d(3)
    t_bn(torch.randn(4, 3, 2, 2))
    copy_state(t_bn, e_bn)
    e_lazy = enn.LazyBatchNorm2d()
    e_lazy.load_state_dict(e_bn.state_dict())
    assert_close(e_lazy.running_mean, t_bn.running_mean, 1e-7)


def test_uninitialized_tensors():
    from ember.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

    p = UninitializedParameter(dtype=ember.float64)
    assert isinstance(p, enn.Parameter) and p.requires_grad and is_lazy(p)
    assert repr(p) == repr(torch.nn.parameter.UninitializedParameter()) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        p.shape
    with pytest.raises(RuntimeError, match="Can't share memory"):
        p.share_memory_()
    q = copy.deepcopy(p)
    assert type(q) is UninitializedParameter and q is not p and q.dtype == ember.float64
    assert type(pickle.loads(pickle.dumps(p))) is UninitializedParameter
    assert p.to(ember.float32).dtype == ember.float32 and is_lazy(p.to(ember.float32))
    p.materialize((2, 3))
    assert type(p) is enn.Parameter and p.shape == (2, 3) and p.dtype == ember.float64 and p.requires_grad
    assert not is_lazy(p)
    b = UninitializedBuffer()
    assert not b.requires_grad and isinstance(b, enn.Buffer) and is_lazy(b)
    b.materialize((4,), dtype=ember.float64)
    assert type(b) is ember.Tensor and b.shape == (4,) and b.dtype == ember.float64
    assert ember.nn.modules.lazy.LazyModuleMixin is enn.LazyLinear.__mro__[1]
    assert enn.UninitializedParameter is UninitializedParameter and enn.UninitializedBuffer is UninitializedBuffer


def test_lazy_norms_without_bias_and_their_repr():
    for name in ("LazyBatchNorm2d", "LazyInstanceNorm2d"):
        t_m, e_m = getattr(tnn, name)(bias=False).double(), getattr(enn, name)(bias=False).double()
        assert e_m.bias is None and t_m.bias is None
        (tx,), (ex,) = leaves((2, 3, 4, 4))
        t_m(tx), e_m(ex)
        assert repr(e_m) == repr(t_m) and e_m.bias is None


def test_lazy_module_errors_and_conversions():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Expected 4D \\(unbatched\\) or 5D \\(batched\\) input to LazyConv3d"):
            lib.nn.LazyConv3d(4, 3)(lib.ones(2, 3, 4))
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            lib.nn.LazyConv3d(4, 3, groups=2)(lib.ones(1, 3, 4, 4, 4))
    # a dtype conversion before the first forward keeps the tensors lazy, in the new dtype
    m = enn.LazyBatchNorm1d().double()
    assert type(m.running_mean).__name__ == "UninitializedBuffer" and m.running_mean.dtype == ember.float64
    m(ember.randn(4, 3, dtype=ember.float64))
    assert m.weight.dtype == m.running_var.dtype == ember.float64
    # an optimizer built before the first forward trains the materialized parameters
    m = enn.LazyLinear(2)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    m(ember.ones(3, 4)).sum().backward()
    before = m.weight.detach().clone()
    opt.step()
    assert not ember.equal(before, m.weight.detach())
    assert "LazyModuleMixin" not in dir(enn) and hasattr(ember.nn.modules.lazy, "LazyModuleMixin")


# ---- a 3-d CNN trained a few steps on both ----

def test_3d_cnn_training_steps_match_torch():
    def net(nn):
        return nn.Sequential(nn.Conv3d(2, 6, 3, padding=1), nn.BatchNorm3d(6), nn.ReLU(),
                             nn.Conv3d(6, 8, 3, stride=2, padding=1, padding_mode="replicate"), nn.ReLU(),
                             nn.ConvTranspose3d(8, 4, 2, stride=2), nn.ReLU(),
                             nn.Conv3d(4, 4, (1, 3, 3), stride=2, groups=2), nn.Flatten(), nn.Linear(4 * 3 * 2 * 1, 5))

    t_net, e_net = net(tnn).double(), net(enn).double()
    copy_state(t_net, e_net)
    e_opt = ember.optim.SGD(e_net.parameters(), lr=0.05, momentum=0.9)
    t_bufs = {}
    g = torch.Generator().manual_seed(0)
    for _ in range(4):
        x = torch.randn(3, 2, 6, 6, 4, generator=g, dtype=torch.float64)
        y = torch.randint(0, 5, (3,), generator=g)
        t_loss = TF.cross_entropy(t_net(x), y)
        e_loss = F.cross_entropy(e_net(to_e(x)), ember.tensor(y.numpy()))
        assert abs(e_loss.item() - t_loss.item()) < 1e-9
        t_net.zero_grad(), e_opt.zero_grad()
        t_loss.backward(), e_loss.backward()
        e_opt.step()
        with torch.no_grad():  # torch.optim's import is slow; SGD with momentum is three lines
            for p in t_net.parameters():
                buf = t_bufs[p] = p.grad.clone() if p not in t_bufs else t_bufs[p].mul_(0.9).add_(p.grad)
                p.sub_(0.05 * buf)
    for (k, e), (_, t) in zip(e_net.state_dict().items(), t_net.state_dict().items()):
        assert_close(e, t, 1e-9)


def test_doc_examples():
    import doctest

    from ember.nn import parameter
    from ember.nn._functional import conv

    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for module in (parameter, conv):
        for test in doctest.DocTestFinder().find(module, globs={"ember": ember}):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0
