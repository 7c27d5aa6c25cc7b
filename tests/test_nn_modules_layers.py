"""The module forms of convolution, pooling, normalization, softmax, the losses and the
resampling layers against torch.nn: each module is built the same way in both libraries,
torch's state copied into ember's (through numpy), then outputs and the gradients of the
input and every parameter compared (float32 and float64, batched, unbatched and
non-contiguous inputs); BatchNorm's running statistics step for step; state_dict keys,
reprs, initialization bounds and the exceptions of bad arguments."""
from __future__ import annotations

import copy
import math
import pickle
import re
import warnings

import numpy as np
import pytest

import ember
from helpers import torch

import ember.nn as enn
import ember.nn.functional as EF
import torch.nn as tnn
import torch.nn.functional as TF

TOL = {"float64": 1e-10, "float32": 2e-5}


@pytest.fixture(autouse=True, scope="module")
def torch_single_threaded():
    """These tensors are tiny: torch's thread pool only costs time here (a lot of it when
    another process is using the cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def assert_close(e, t, tol):
    assert e is not None and t is not None, (e, t)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert repr(e.dtype).split(".")[1] == repr(t.dtype).split(".")[1]
    if e.is_floating_point():
        np.testing.assert_allclose(e.detach().to(ember.float64).numpy(), t.detach().double().numpy(), rtol=tol,
                                   atol=tol)
    else:
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def build(expr: str, lib, dtype: str = "float32"):
    """The module expr names, built with lib (`nn`, `torch` in expr are lib's), in dtype."""
    mod = eval(expr, {"nn": lib.nn, "torch": lib})
    return mod.double() if dtype == "float64" else mod


def copy_state(t_mod, e_mod) -> None:
    """torch's parameters and buffers into ember's module, by load_state_dict (strict)."""
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})


def leaves(arrays, lib, dtype: str, layout: str):
    """(leaf tensors, the inputs the module sees). Floating inputs require grad; with
    layout 'transposed' the leaf holds the last two dims swapped and the module sees its
    transpose, a non-contiguous view of the same values."""
    made, fed = [], []
    for a in arrays:
        a = np.asarray(a)
        floating = a.dtype.kind == "f"
        swap = layout == "transposed" and floating and a.ndim >= 2
        data = np.ascontiguousarray(np.swapaxes(a, -1, -2)) if swap else a
        t = lib.tensor(data, dtype=getattr(lib, dtype) if floating else lib.int64, requires_grad=floating)
        made.append(t)
        fed.append(t.transpose(-1, -2) if swap else t)
    return made, fed


def first_float(out):
    outs = out if isinstance(out, tuple) else (out,)
    return outs, next(o for o in outs if o.is_floating_point())


def check_module(expr, arrays, dtype="float32", layout="contiguous", t_mod=None, e_mod=None, tol=None, **fwd_kwargs):
    """Forward and backward of the module expr on both libraries with torch's state;
    compares outputs, the inputs' gradients and the parameters' gradients."""
    tol = TOL[dtype] if tol is None else tol
    if t_mod is None:
        t_mod, e_mod = build(expr, torch, dtype), build(expr, ember, dtype)
        copy_state(t_mod, e_mod)
    t_in, t_fed = leaves(arrays, torch, dtype, layout)
    e_in, e_fed = leaves(arrays, ember, dtype, layout)
    assert all(not e.is_contiguous() for e, a in zip(e_fed, arrays) if layout == "transposed" and np.ndim(a) >= 2
               and np.shape(a)[-1] > 1 and np.shape(a)[-2] > 1 and np.asarray(a).dtype.kind == "f")
    t_outs, t_out = first_float(t_mod(*t_fed, **fwd_kwargs))
    e_outs, e_out = first_float(e_mod(*e_fed, **fwd_kwargs))
    assert len(t_outs) == len(e_outs)
    for e, t in zip(e_outs, t_outs):
        assert_close(e, t, tol)
    if t_out.requires_grad:
        w = np.random.default_rng(99).standard_normal(tuple(t_out.shape))
        (t_out * torch.tensor(w, dtype=t_out.dtype)).sum().backward()
        (e_out * ember.tensor(w, dtype=e_out.dtype)).sum().backward()
        for e, t in zip(e_in, t_in):
            if t.grad is None:
                assert e.grad is None
            else:
                assert_close(e.grad, t.grad, tol)
    e_params = dict(e_mod.named_parameters())
    t_params = dict(t_mod.named_parameters())
    assert list(e_params) == list(t_params)
    for name, tp in t_params.items():
        if tp.grad is None:
            assert e_params[name].grad is None, name
        else:
            assert_close(e_params[name].grad, tp.grad, tol)
    return t_mod, e_mod


def rand(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


# ---- convolution ----

CONVS = [
    ("nn.Conv1d(4, 6, 3)", (2, 4, 9)),
    ("nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2)", (2, 4, 11)),
    ("nn.Conv1d(3, 4, 4, padding='same', bias=False)", (2, 3, 8)),
    ("nn.Conv1d(3, 4, 3, padding=2, padding_mode='reflect')", (2, 3, 7)),
    ("nn.Conv1d(3, 4, 3, padding=1, padding_mode='circular', stride=2)", (2, 3, 7)),
    ("nn.Conv1d(3, 4, 4, padding='same', padding_mode='replicate')", (2, 3, 7)),
    ("nn.Conv2d(3, 8, 3)", (2, 3, 7, 6)),
    ("nn.Conv2d(4, 8, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=4)", (2, 4, 9, 8)),
    ("nn.Conv2d(3, 5, (2, 3), padding='same')", (2, 3, 6, 5)),
    ("nn.Conv2d(3, 5, 3, padding='valid', bias=False)", (2, 3, 6, 5)),
    ("nn.Conv2d(2, 4, 3, padding=(1, 2), padding_mode='reflect')", (2, 2, 5, 6)),
    ("nn.Conv2d(2, 4, 3, padding=1, padding_mode='replicate', stride=2)", (2, 2, 5, 6)),
    ("nn.Conv2d(2, 4, (3, 2), padding='same', padding_mode='circular')", (2, 2, 5, 6)),
    ("nn.ConvTranspose1d(4, 6, 3)", (2, 4, 5)),
    ("nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)", (2, 4, 5)),
    ("nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)", (2, 3, 4, 5)),
    ("nn.ConvTranspose2d(4, 6, (2, 3), stride=(1, 2), groups=2, bias=False, dilation=(2, 1))", (2, 4, 4, 3)),
]


VARIANTS = [("float32", "batched"), ("float32", "unbatched"), ("float32", "transposed"), ("float64", "batched")]
LAYOUTS = [("float32", "contiguous"), ("float32", "transposed"), ("float64", "contiguous")]


@pytest.mark.parametrize("dtype, variant", VARIANTS)
@pytest.mark.parametrize("expr, shape", CONVS, ids=[c[0] for c in CONVS])
def test_conv_forward_backward(expr, shape, dtype, variant):
    x = rand(*shape)
    if variant == "unbatched":
        x = x[0]
    check_module(expr, [x], dtype, layout="transposed" if variant == "transposed" else "contiguous")


@pytest.mark.parametrize("output_size", [[9, 10], [10, 9], [1, 4, 10, 10], (9, 9)])
def test_conv_transpose_output_size(output_size):
    expr = "nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)"
    check_module(expr, [rand(1, 4, 5, 5)], "float64", output_size=output_size)
    check_module(expr, [rand(4, 5, 5)], "float64", output_size=output_size[-2:])
    check_module("nn.ConvTranspose1d(4, 2, 3, stride=3)", [rand(2, 4, 5)], "float64", output_size=[15])


def _sets_sorted(message: str) -> str:
    """The message with each printed set's items sorted (a set prints in hash order)."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


def same_error(t_fn, e_fn, message=True):
    """Both raise, the same exception type (and message, ember's types named for torch's)."""
    with pytest.raises(Exception) as t_info:
        t_fn()
    with pytest.raises(Exception) as e_info:
        e_fn()
    assert type(e_info.value) is type(t_info.value), (e_info.value, t_info.value)
    if message:
        assert _sets_sorted(str(e_info.value)) == _sets_sorted(str(t_info.value).replace("torch.", "ember."))


def both(expr, call=None, message=True):
    """expr (and then call(module, lib)) raise alike on both libraries."""
    def run(lib):
        mod = eval(expr, {"nn": lib.nn, "torch": lib})
        if call is not None:
            call(mod, lib)
    same_error(lambda: run(torch), lambda: run(ember), message)


@pytest.mark.parametrize("expr", [
    "nn.Conv2d(3, 4, 3, groups=2)", "nn.Conv2d(4, 3, 3, groups=2)", "nn.Conv2d(4, 4, 3, groups=0)",
    "nn.Conv1d(4, 4, 3, groups=-1)", "nn.Conv2d(4, 4, 3, padding='full')", "nn.Conv2d(4, 4, 3, padding='same', stride=2)",
    "nn.Conv1d(4, 4, 3, padding_mode='mirror')", "nn.ConvTranspose2d(4, 4, 3, padding_mode='reflect')",
    "nn.ConvTranspose1d(4, 4, 3, padding_mode='circular')",
])
def test_conv_constructor_errors(expr):
    both(expr)


def test_conv_input_errors():
    both("nn.Conv2d(4, 4, 3)", lambda m, lib: m(lib.ones(2, 3, 5, 5)), message=False)
    both("nn.Conv2d(4, 4, 3)", lambda m, lib: m(lib.ones(5, 5)))
    both("nn.Conv1d(4, 4, 3)", lambda m, lib: m(lib.ones(2, 4, 5, 5)))
    both("nn.Conv2d(4, 4, 3, groups=2)", lambda m, lib: m(lib.ones(1, 2, 5, 5)), message=False)
    both("nn.ConvTranspose2d(4, 4, 3, stride=2)", lambda m, lib: m(lib.ones(1, 4, 5, 5), output_size=[20, 20]))
    both("nn.ConvTranspose2d(4, 4, 3, stride=2)", lambda m, lib: m(lib.ones(1, 4, 5, 5), output_size=[1, 4, 11, 11, 3]))
    both("nn.ConvTranspose1d(4, 4, 3, stride=2)", lambda m, lib: m(lib.ones(4, 5), output_size=[1, 4, 11]))


@pytest.mark.parametrize("expr", [
    "nn.Conv1d(6, 42, 5, groups=3)", "nn.Conv2d(16, 64, (3, 5))", "nn.ConvTranspose1d(8, 12, 3, groups=4)",
    "nn.ConvTranspose2d(16, 40, 3)", "nn.Conv2d(8, 8, 1, bias=False)",
])
def test_conv_initialization_bounds(expr):
    t_mod, e_mod = build(expr, torch), build(expr, ember)
    assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    w = e_mod.weight.detach().numpy()
    # kaiming_uniform_(a=sqrt(5)): U(-b, b) with b = 1 / sqrt(fan_in), fan_in = weight.size(1) * kernel taps
    fan_in = w.shape[1] * int(np.prod(w.shape[2:]))
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    if w.size >= 1000:  # U(-b, b): std b / sqrt(3), mean 0
        assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound / math.sqrt(3)
        assert abs(w.mean()) < 0.1 * bound
    if e_mod.bias is not None:
        b = e_mod.bias.detach().numpy()
        assert np.abs(b).max() <= bound and len(np.unique(b)) == len(b)
    t_w = t_mod.weight.detach().numpy()  # torch's follows the same bound
    assert np.abs(t_w).max() <= bound and np.abs(t_w).max() > 0.9 * bound


def test_conv_attributes_match_torch():
    for expr in ["nn.Conv2d(4, 6, (3, 2), padding='same', padding_mode='reflect', dilation=2)",
                 "nn.Conv1d(4, 6, 3, padding=(2,), padding_mode='circular')", "nn.Conv1d(4, 6, 3, padding='valid')",
                 "nn.ConvTranspose2d(4, 6, 3, stride=(2, 1), output_padding=(1, 0))"]:
        t_mod, e_mod = build(expr, torch), build(expr, ember)
        for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "transposed",
                     "output_padding", "groups", "padding_mode"):
            assert getattr(e_mod, name) == getattr(t_mod, name), (expr, name)
        assert list(e_mod._reversed_padding_repeated_twice) == list(t_mod._reversed_padding_repeated_twice)


def test_factory_kwargs_dtype():
    for expr in ["nn.Conv2d(2, 3, 3, dtype=torch.float64)", "nn.ConvTranspose1d(2, 3, 3, dtype=torch.float64)",
                 "nn.BatchNorm2d(3, dtype=torch.float64)", "nn.LayerNorm(3, dtype=torch.float64)",
                 "nn.GroupNorm(1, 3, dtype=torch.float64)", "nn.RMSNorm(3, dtype=torch.float64)",
                 "nn.PReLU(3, dtype=torch.float64)"]:
        t_mod, e_mod = build(expr, torch), build(expr, ember)
        t_state, e_state = t_mod.state_dict(), e_mod.state_dict()
        assert list(e_state) == list(t_state)
        for k in t_state:
            assert repr(e_state[k].dtype) == repr(t_state[k].dtype).replace("torch", "ember"), (expr, k)


# ---- pooling ----

POOLS = [
    ("nn.MaxPool1d(3)", (2, 3, 10)),
    ("nn.MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True)", (2, 3, 10)),
    ("nn.MaxPool1d(2, return_indices=True)", (2, 3, 9)),
    ("nn.MaxPool2d(2)", (2, 3, 6, 7)),
    ("nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True)", (2, 3, 7, 8)),
    ("nn.MaxPool2d(3, 2, return_indices=True)", (2, 3, 7, 8)),
    ("nn.AvgPool1d(3)", (2, 3, 10)),
    ("nn.AvgPool1d(4, stride=2, padding=2, ceil_mode=True, count_include_pad=False)", (2, 3, 11)),
    ("nn.AvgPool2d(2)", (2, 3, 6, 7)),
    ("nn.AvgPool2d((3, 2), stride=(2, 1), padding=1, ceil_mode=True, count_include_pad=False)", (2, 3, 7, 8)),
    ("nn.AvgPool2d(3, padding=1, divisor_override=2)", (2, 3, 7, 8)),
    ("nn.AdaptiveAvgPool1d(4)", (2, 3, 10)),
    ("nn.AdaptiveAvgPool2d((3, 4))", (2, 3, 7, 9)),
    ("nn.AdaptiveAvgPool2d((None, 2))", (2, 3, 7, 9)),
    ("nn.AdaptiveAvgPool2d(1)", (2, 3, 7, 9)),
    ("nn.AdaptiveMaxPool1d(3)", (2, 3, 10)),
    ("nn.AdaptiveMaxPool1d(4, return_indices=True)", (2, 3, 10)),
    ("nn.AdaptiveMaxPool2d((2, 3), return_indices=True)", (2, 3, 7, 9)),
    ("nn.AdaptiveMaxPool2d((4, None))", (2, 3, 7, 9)),
]


@pytest.mark.parametrize("dtype, variant", VARIANTS)
@pytest.mark.parametrize("expr, shape", POOLS, ids=[p[0] for p in POOLS])
def test_pool_forward_backward(expr, shape, dtype, variant):
    x = rand(*shape)
    if variant == "unbatched":
        x = x[0]
    check_module(expr, [x], dtype, layout="transposed" if variant == "transposed" else "contiguous")


def test_pool_input_errors():
    both("nn.MaxPool2d(3)", lambda m, lib: m(lib.ones(2)), message=False)
    both("nn.MaxPool1d(3)", lambda m, lib: m(lib.ones(2, 2, 2, 9)), message=False)
    both("nn.AvgPool1d(3)", lambda m, lib: m(lib.ones(9)), message=False)
    both("nn.AdaptiveAvgPool1d(3)", lambda m, lib: m(lib.ones(9)), message=False)


# ---- batch normalization ----

BATCHNORMS = [
    ("nn.BatchNorm1d(4)", (8, 4)),
    ("nn.BatchNorm1d(4)", (5, 4, 6)),
    ("nn.BatchNorm1d(4, momentum=None)", (5, 4, 6)),
    ("nn.BatchNorm1d(4, eps=1e-3, momentum=0.3, affine=False)", (6, 4)),
    ("nn.BatchNorm1d(4, track_running_stats=False)", (5, 4, 3)),
    ("nn.BatchNorm2d(3)", (4, 3, 5, 6)),
    ("nn.BatchNorm2d(3, momentum=None, bias=False)", (4, 3, 5, 6)),
    ("nn.BatchNorm2d(3, affine=False, track_running_stats=False)", (4, 3, 5, 6)),
    ("nn.BatchNorm3d(2)", (3, 2, 3, 4, 2)),
]


@pytest.mark.parametrize("dtype, layout", LAYOUTS)
@pytest.mark.parametrize("expr, shape", BATCHNORMS, ids=[b[0] + str(b[1]) for b in BATCHNORMS])
def test_batchnorm_training_steps_then_eval(expr, shape, dtype, layout):
    t_mod, e_mod = build(expr, torch, dtype), build(expr, ember, dtype)
    copy_state(t_mod, e_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    for step in range(4):  # running stats fold in each batch
        x = rand(*shape, seed=step, scale=1 + step) + step
        t_mod.zero_grad()
        e_mod.zero_grad()
        check_module(expr, [x], dtype, layout, t_mod=t_mod, e_mod=e_mod)
        for name, tb in t_mod.named_buffers():
            assert_close(dict(e_mod.named_buffers())[name], tb, TOL[dtype])
    if t_mod.track_running_stats:
        assert e_mod.num_batches_tracked.item() == 4
    t_mod.eval(), e_mod.eval()
    check_module(expr, [rand(*shape, seed=9)], dtype, layout, t_mod=t_mod, e_mod=e_mod)
    for name, tb in t_mod.named_buffers():  # eval mode leaves them alone
        assert_close(dict(e_mod.named_buffers())[name], tb, TOL[dtype])


def test_batchnorm_momentum_none_is_the_cumulative_average():
    bn = enn.BatchNorm1d(2, momentum=None)
    batches = [ember.tensor(rand(6, 2, seed=s) + s) for s in range(3)]
    for b in batches:
        bn(b)
    means = np.stack([b.numpy().mean(0) for b in batches])
    np.testing.assert_allclose(bn.running_mean.numpy(), means.mean(0), rtol=1e-5, atol=1e-6)
    unbiased = np.stack([b.numpy().var(0, ddof=1) for b in batches])
    np.testing.assert_allclose(bn.running_var.numpy(), unbiased.mean(0), rtol=1e-5)


def test_batchnorm_unbatched_and_eval_without_running_stats():
    # eval without running stats normalizes with the batch's own statistics
    check_module("nn.BatchNorm1d(3, track_running_stats=False).eval()", [rand(4, 3)], "float64")
    check_module("nn.BatchNorm2d(3).eval()", [rand(2, 3, 4, 4)], "float64")


def test_batchnorm_errors():
    both("nn.BatchNorm1d(4)", lambda m, lib: m(lib.ones(2, 4, 5, 5)))
    both("nn.BatchNorm1d(4)", lambda m, lib: m(lib.ones(4)))
    both("nn.BatchNorm2d(4)", lambda m, lib: m(lib.ones(2, 4, 5)))
    both("nn.BatchNorm3d(4)", lambda m, lib: m(lib.ones(2, 4, 5, 5)))
    both("nn.BatchNorm2d(4)", lambda m, lib: m(lib.ones(2, 3, 5, 5)), message=False)
    both("nn.BatchNorm1d(4)", lambda m, lib: m(lib.ones(1, 4)), message=False)


def test_batchnorm_state_and_old_checkpoints():
    t_mod, e_mod = tnn.BatchNorm2d(3), enn.BatchNorm2d(3)
    assert e_mod.num_batches_tracked.dtype == ember.int64 and e_mod.num_batches_tracked.dim() == 0
    assert [n for n, _ in e_mod.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    # a version-1 checkpoint (before num_batches_tracked) loads strictly, the count at 0
    e_mod(ember.randn(4, 3, 2, 2))
    state = e_mod.state_dict()
    del state["num_batches_tracked"]
    state._metadata[""]["version"] = 1
    fresh = enn.BatchNorm2d(3)
    fresh.load_state_dict(state)
    assert fresh.num_batches_tracked.item() == 0
    assert fresh.running_mean.tolist() == e_mod.running_mean.tolist()
    assert t_mod.state_dict()._metadata[""]["version"] == e_mod.state_dict()._metadata[""]["version"] == 2
    # without num_batches_tracked at version 2, it is missing
    state._metadata[""]["version"] = 2
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        enn.BatchNorm2d(3).load_state_dict(state)
    e_mod.reset_running_stats()
    assert e_mod.num_batches_tracked.item() == 0 and e_mod.running_var.tolist() == [1.0] * 3


def test_module_dtype_conversion_keeps_the_counter_int64():
    bn = enn.BatchNorm2d(3).double()
    assert bn.running_mean.dtype == ember.float64 and bn.weight.dtype == ember.float64
    assert bn.num_batches_tracked.dtype == ember.int64
    conv = enn.Conv2d(2, 3, 3).double()
    assert conv.weight.dtype == ember.float64 and conv(ember.ones(1, 2, 4, 4, dtype=ember.float64)).dtype == \
        ember.float64


# ---- layer, group and RMS normalization ----

NORMS = [
    ("nn.LayerNorm(6)", (3, 4, 6)),
    ("nn.LayerNorm((4, 6), eps=1e-3)", (3, 4, 6)),
    ("nn.LayerNorm([6], bias=False)", (5, 6)),
    ("nn.LayerNorm(6, elementwise_affine=False)", (2, 3, 6)),
    ("nn.GroupNorm(2, 6)", (3, 6, 5)),
    ("nn.GroupNorm(3, 6, eps=1e-3)", (2, 6, 4, 3)),
    ("nn.GroupNorm(1, 4, affine=False)", (3, 4, 5)),
    ("nn.GroupNorm(2, 4, bias=False)", (3, 4, 5)),
    ("nn.RMSNorm(6)", (3, 4, 6)),
    ("nn.RMSNorm((4, 6), eps=1e-4)", (3, 4, 6)),
    ("nn.RMSNorm(6, elementwise_affine=False)", (2, 6)),
]


@pytest.mark.parametrize("dtype, layout", LAYOUTS)
@pytest.mark.parametrize("expr, shape", NORMS, ids=[n[0] for n in NORMS])
def test_norm_forward_backward(expr, shape, dtype, layout):
    t_mod, e_mod = build(expr, torch, dtype), build(expr, ember, dtype)
    with torch.no_grad():  # away from the initial ones/zeros, so the parameters matter
        for p in t_mod.parameters():
            p.add_(torch.tensor(rand(*p.shape, seed=3), dtype=p.dtype))
    copy_state(t_mod, e_mod)
    check_module(expr, [rand(*shape, scale=2.0) + 1], dtype, layout, t_mod=t_mod, e_mod=e_mod)


def test_norm_errors():
    both("nn.GroupNorm(3, 4)")
    both("nn.LayerNorm(4)", lambda m, lib: m(lib.ones(2, 3)))
    both("nn.GroupNorm(2, 4)", lambda m, lib: m(lib.ones(2, 6, 3)), message=False)


def test_norm_initialization():
    for expr in ["nn.LayerNorm((2, 3))", "nn.GroupNorm(2, 4)", "nn.RMSNorm(5)", "nn.BatchNorm1d(3)"]:
        t_mod, e_mod = build(expr, torch), build(expr, ember)
        for (en, ep), (tn, tp) in zip(e_mod.state_dict().items(), t_mod.state_dict().items()):
            assert en == tn
            assert_close(ep, tp, 0)


# ---- softmax family and PReLU ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("expr, shape", [
    ("nn.Softmax(dim=1)", (3, 5)), ("nn.Softmax(-1)", (2, 3, 4)), ("nn.LogSoftmax(dim=0)", (4, 3)),
    ("nn.LogSoftmax(2)", (2, 3, 4)), ("nn.Softmin(dim=1)", (3, 5)), ("nn.Softmax2d()", (2, 3, 4, 5)),
    ("nn.Softmax2d()", (3, 4, 5)), ("nn.PReLU()", (3, 4, 5)), ("nn.PReLU(4, init=0.1)", (3, 4, 5)),
    ("nn.PReLU(3)", (2, 3)), ("nn.PReLU()", (7,)),
])
def test_softmax_and_prelu_modules(expr, shape, dtype):
    check_module(expr, [rand(*shape, scale=3)], dtype)
    if len(shape) >= 2:
        check_module(expr, [rand(*shape, scale=3)], dtype, layout="transposed")


def test_prelu_gradient_at_zero_and_errors():
    x = np.array([[-1.0, 0.0, 2.0], [0.0, -3.0, 0.5]])
    check_module("nn.PReLU(3, 0.3)", [x], "float64")
    both("nn.PReLU(3)", lambda m, lib: m(lib.ones(2, 4)))
    both("nn.PReLU(4)", lambda m, lib: m(lib.ones(4)))
    same_error(lambda: TF.prelu(torch.tensor(2.0), torch.ones(2)), lambda: EF.prelu(ember.tensor(2.0), ember.ones(2)))
    check_module("nn.PReLU()", [np.array(-2.0)], "float64")  # one slope takes any input, 0-dim too
    same_error(lambda: TF.prelu(torch.ones(2, 3), torch.ones(1, 3)), lambda: EF.prelu(ember.ones(2, 3), ember.ones(1, 3)))
    same_error(lambda: TF.prelu(torch.ones(2, 3), torch.ones(3, dtype=torch.float64)),
               lambda: EF.prelu(ember.ones(2, 3), ember.ones(3, dtype=ember.float64)))


def test_softmax_implicit_dim_warns():
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.nn.Softmax()(lib.zeros(2, 4))
        assert out.tolist() == [[0.25] * 4] * 2  # dim 1 for a 2-D input
        assert len(caught) == 1 and "Implicit dimension choice for softmax" in str(caught[0].message)
    # ember's names the caller's line (torch 2.13's stacklevel stops inside its module.py)
    assert caught[0].filename == __file__
    both("nn.Softmax2d()", lambda m, lib: m(lib.ones(2, 2)))


# ---- losses ----

def class_targets(n, c, seed=1):
    return np.random.default_rng(seed).integers(0, c, n)


LOSSES = [
    ("nn.L1Loss()", lambda: [rand(4, 5), rand(4, 5, seed=1)]),
    ("nn.L1Loss(reduction='sum')", lambda: [rand(4, 5), rand(4, 5, seed=1)]),
    ("nn.MSELoss(reduction='none')", lambda: [rand(4, 5), rand(4, 5, seed=1)]),
    ("nn.MSELoss()", lambda: [rand(3, 2, 4), rand(3, 2, 4, seed=1)]),
    ("nn.CrossEntropyLoss()", lambda: [rand(6, 5), class_targets(6, 5)]),
    ("nn.CrossEntropyLoss(weight=torch.tensor([1., 2., .5, 3., 1.]), ignore_index=2, label_smoothing=0.1)",
     lambda: [rand(6, 5), class_targets(6, 5)]),
    ("nn.CrossEntropyLoss(reduction='none')", lambda: [rand(3, 4, 2, 2), class_targets(12, 4).reshape(3, 2, 2)]),
    ("nn.CrossEntropyLoss(reduction='sum', label_smoothing=0.2)",
     lambda: [rand(5, 4), np.abs(rand(5, 4, seed=2)) / np.abs(rand(5, 4, seed=2)).sum(1, keepdims=True)]),
    ("nn.CrossEntropyLoss()", lambda: [rand(5), np.array(3)]),
    ("nn.NLLLoss()", lambda: [np.log(np.abs(rand(6, 5)) + 0.1), class_targets(6, 5)]),
    ("nn.NLLLoss(weight=torch.tensor([1., 2., .5]), reduction='sum', ignore_index=1)",
     lambda: [rand(6, 3), class_targets(6, 3)]),
    ("nn.BCELoss()", lambda: [np.random.default_rng(0).uniform(0.05, 0.95, (4, 3)),
                              np.random.default_rng(1).uniform(0, 1, (4, 3))]),
    ("nn.BCELoss(weight=torch.tensor([1., 2., 3.]), reduction='sum')",
     lambda: [np.random.default_rng(0).uniform(0.05, 0.95, (4, 3)), np.random.default_rng(1).integers(0, 2, (4, 3))
              .astype(np.float64)]),
    ("nn.BCEWithLogitsLoss()", lambda: [rand(4, 3, scale=3), np.random.default_rng(1).uniform(0, 1, (4, 3))]),
    ("nn.BCEWithLogitsLoss(weight=torch.tensor([1., 2., 3.]), pos_weight=torch.tensor([.5, 1., 4.]), "
     "reduction='none')", lambda: [rand(4, 3, scale=3), np.random.default_rng(1).uniform(0, 1, (4, 3))]),
    ("nn.KLDivLoss(reduction='batchmean')", lambda: [np.log(np.full((3, 4), 0.25)) + rand(3, 4) * 0.1,
                                                     np.random.default_rng(1).dirichlet(np.ones(4), 3)]),
    ("nn.KLDivLoss(reduction='sum', log_target=True)", lambda: [rand(3, 4), rand(3, 4, seed=1)]),
    ("nn.SmoothL1Loss()", lambda: [rand(5, 4, scale=2), rand(5, 4, seed=1)]),
    ("nn.SmoothL1Loss(beta=0.5, reduction='none')", lambda: [rand(5, 4, scale=2), rand(5, 4, seed=1)]),
    ("nn.HuberLoss()", lambda: [rand(5, 4, scale=2), rand(5, 4, seed=1)]),
    ("nn.HuberLoss(reduction='sum', delta=0.3)", lambda: [rand(5, 4, scale=2), rand(5, 4, seed=1)]),
    ("nn.CosineEmbeddingLoss()", lambda: [rand(5, 4), rand(5, 4, seed=1), np.array([1, -1, 1, -1, -1])]),
    ("nn.CosineEmbeddingLoss(margin=0.2, reduction='none')",
     lambda: [rand(5, 4), rand(5, 4, seed=1), np.array([1, -1, 1, -1, -1])]),
    ("nn.MarginRankingLoss()", lambda: [rand(6), rand(6, seed=1), np.array([1.0, -1, 1, -1, 1, 1])]),
    ("nn.MarginRankingLoss(margin=0.5, reduction='sum')",
     lambda: [rand(6), rand(6, seed=1), np.array([1.0, -1, 1, -1, 1, 1])]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("expr, make", LOSSES, ids=[f"{i}-{l[0]}" for i, l in enumerate(LOSSES)])
def test_loss_modules(expr, make, dtype):
    arrays = make()
    t_mod, e_mod = build(expr, torch, dtype), build(expr, ember, dtype)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [n for n, _ in e_mod.named_buffers()] == [n for n, _ in t_mod.named_buffers()]
    copy_state(t_mod, e_mod)
    check_module(expr, arrays, dtype, t_mod=t_mod, e_mod=e_mod)
    if all(np.ndim(a) >= 2 for a in arrays):
        check_module(expr, arrays, dtype, layout="transposed", t_mod=t_mod, e_mod=e_mod)


def test_loss_legacy_arguments_set_the_reduction_and_warn():
    for kwargs in ({"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True},
                   {"size_average": False, "reduce": False}):
        for name in ("L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
                     "SmoothL1Loss", "CosineEmbeddingLoss", "MarginRankingLoss"):
            messages = {}
            for lib in (torch, ember):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    mod = getattr(lib.nn, name)(**kwargs)
                messages[lib.__name__] = (mod.reduction, [str(w.message) for w in caught])
            assert messages["ember"] == messages["torch"], (name, kwargs)
    for lib in (torch, ember):  # the functional forms name the same reduction
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.l1_loss(lib.ones(2), lib.zeros(2), reduce=False)
        assert "please use reduction='none' instead" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_module("nn.MSELoss(size_average=False)", [rand(3, 4), rand(3, 4, seed=1)], "float64")


def test_loss_errors():
    for expr in ("nn.L1Loss(reduction='foo')", "nn.CrossEntropyLoss(reduction='foo')", "nn.MSELoss(reduction='x')"):
        both(expr, lambda m, lib: m(lib.ones(2, 3), lib.zeros(2, dtype=lib.int64) if "Cross" in repr(m)
                                    else lib.ones(2, 3)), message=False)
    both("nn.BCELoss()", lambda m, lib: m(lib.full((2, 3), 0.5), lib.ones(3, 2)))
    both("nn.BCEWithLogitsLoss()", lambda m, lib: m(lib.ones(2, 3), lib.ones(3, 2)))


# ---- resampling, fold, pixel shuffle ----

RESAMPLE = [
    ("nn.Upsample(scale_factor=2)", (2, 3, 4, 5)),
    ("nn.Upsample(size=(5, 7), mode='bilinear')", (2, 3, 4, 5)),
    ("nn.Upsample(scale_factor=(1.5, 2), mode='bilinear', align_corners=True)", (2, 3, 4, 5)),
    ("nn.Upsample(size=9, mode='linear')", (2, 3, 4)),
    ("nn.Upsample(scale_factor=3, mode='nearest-exact')", (2, 3, 4)),
    ("nn.UpsamplingNearest2d(size=(6, 7))", (2, 3, 4, 5)),
    ("nn.UpsamplingBilinear2d(scale_factor=2)", (2, 3, 4, 5)),
    ("nn.Unfold(3)", (2, 3, 5, 6)),
    ("nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))", (2, 3, 5, 6)),
    ("nn.Unfold(2)", (3, 5, 6)),
    ("nn.Fold((4, 5), 2)", (2, 12, 12)),
    ("nn.Fold((5, 6), (2, 3), dilation=1, padding=1, stride=2)", (2, 18, 9)),
    ("nn.Fold((4, 5), 2)", (12, 12)),
    ("nn.PixelShuffle(2)", (2, 8, 3, 4)),
    ("nn.PixelShuffle(3)", (2, 3, 9, 2, 2)),
    ("nn.PixelShuffle(2)", (4, 3, 2)),
    ("nn.PixelUnshuffle(2)", (2, 3, 4, 6)),
    ("nn.PixelUnshuffle(3)", (3, 6, 3)),
]


@pytest.mark.parametrize("dtype, layout", LAYOUTS)
@pytest.mark.parametrize("expr, shape", RESAMPLE, ids=[r[0] + str(r[1]) for r in RESAMPLE])
def test_resampling_modules(expr, shape, dtype, layout):
    check_module(expr, [rand(*shape)], dtype, layout)


def test_pixel_shuffle_round_trip_and_errors():
    x = ember.randn(2, 12, 3, 4)
    assert EF.pixel_unshuffle(EF.pixel_shuffle(x, 2), 2).equal(x)
    y = EF.pixel_shuffle(x, 1)
    assert y.equal(x) and y.data_ptr() != x.data_ptr()  # a new tensor, as torch's
    for fn, args in ((lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(5, 2, 2), 2), None),
                     (lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(2, 2), 2), None),
                     (lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(4, 2, 2), 0), None),
                     (lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(4, 2, 2), 2.0), None),
                     (lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 3, 2), 2), None),
                     (lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 2, 3), 2), None),
                     (lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 2), 2), None),
                     (lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 2, 2), -1), None)):
        same_error(lambda: fn(torch), lambda: fn(ember))


def test_resampling_errors():
    both("nn.Unfold(2)", lambda m, lib: m(lib.ones(2, 3, 3, 3, 3)))
    both("nn.Fold((4, 5), 2)", lambda m, lib: m(lib.ones(2, 3, 4, 5)))
    both("nn.Fold((4, 5), 2)", lambda m, lib: m(lib.ones(2, 12, 11)))
    both("nn.Upsample(size=3, scale_factor=2)", lambda m, lib: m(lib.ones(1, 1, 2, 2)))


# ---- what every module shows: repr, state_dict, attributes ----

REPRS = [
    "nn.Conv1d(4, 6, 3)", "nn.Conv1d(4, 6, 3, padding='valid')", "nn.Conv1d(4, 6, (3,), stride=2, padding=1)",
    "nn.Conv2d(4, 4, 3, padding='same', padding_mode='reflect')",
    "nn.Conv2d(4, 4, (3, 2), padding=(1, 2), dilation=2, groups=2, bias=False, padding_mode='circular')",
    "nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1)",
    "nn.ConvTranspose2d(4, 4, (3, 2), padding=(1, 2), output_padding=1, groups=2, bias=False, dilation=2)",
    "nn.MaxPool1d(3)", "nn.MaxPool1d(3, 2, 1, 2, True, True)", "nn.MaxPool2d((3, 2))", "nn.MaxPool2d(3, stride=(1, 2))",
    "nn.AvgPool1d(3)", "nn.AvgPool1d(3, 2, 1, True, False)", "nn.AvgPool2d(3, (1, 2))",
    "nn.AvgPool2d(2, divisor_override=3)", "nn.AdaptiveAvgPool1d(3)", "nn.AdaptiveAvgPool2d((None, 3))",
    "nn.AdaptiveMaxPool1d(3, True)", "nn.AdaptiveMaxPool2d(4)",
    "nn.BatchNorm1d(3)", "nn.BatchNorm1d(3, momentum=None)", "nn.BatchNorm2d(3, eps=1e-3, affine=False)",
    "nn.BatchNorm2d(3, track_running_stats=False)", "nn.BatchNorm2d(3, bias=False)", "nn.BatchNorm3d(5)",
    "nn.LayerNorm(3)", "nn.LayerNorm((3, 4), eps=1e-6)", "nn.LayerNorm([3], bias=False)",
    "nn.LayerNorm(3, elementwise_affine=False)", "nn.GroupNorm(2, 4)", "nn.GroupNorm(2, 4, affine=False)",
    "nn.GroupNorm(2, 4, bias=False)", "nn.RMSNorm(4)", "nn.RMSNorm([3, 4], eps=1e-3)",
    "nn.RMSNorm(4, elementwise_affine=False)",
    "nn.Softmax()", "nn.Softmax(1)", "nn.LogSoftmax(-1)", "nn.Softmin(dim=0)", "nn.Softmax2d()", "nn.PReLU()",
    "nn.PReLU(3, 0.1)",
    "nn.L1Loss()", "nn.MSELoss(reduction='sum')", "nn.CrossEntropyLoss(weight=torch.ones(3))", "nn.NLLLoss()",
    "nn.BCELoss(weight=torch.ones(3))", "nn.BCEWithLogitsLoss(pos_weight=torch.ones(3))", "nn.BCEWithLogitsLoss()",
    "nn.KLDivLoss()", "nn.SmoothL1Loss()", "nn.HuberLoss()", "nn.CosineEmbeddingLoss()", "nn.MarginRankingLoss()",
    "nn.Upsample(scale_factor=2)", "nn.Upsample(size=(3, 4), mode='bilinear')", "nn.Upsample(scale_factor=(2, 3))",
    "nn.Upsample(size=3, scale_factor=2)", "nn.UpsamplingNearest2d(scale_factor=2)", "nn.UpsamplingBilinear2d(size=3)",
    "nn.Unfold(3)", "nn.Unfold((2, 3), 2, 1, 2)", "nn.Fold((4, 5), 2)", "nn.Fold(4, 2, padding=1)",
    "nn.PixelShuffle(2)", "nn.PixelUnshuffle(3)",
    "nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), "
    "nn.Linear(8, 4), nn.LogSoftmax(1))",
]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_state_dict_and_attributes(expr):
    t_mod, e_mod = build(expr, torch), build(expr, ember)
    assert repr(e_mod) == repr(t_mod)
    t_state, e_state = t_mod.state_dict(), e_mod.state_dict()
    assert list(e_state) == list(t_state)
    for k in t_state:
        assert tuple(e_state[k].shape) == tuple(t_state[k].shape), k
    assert [(n, p.requires_grad) for n, p in e_mod.named_parameters()] == \
           [(n, p.requires_grad) for n, p in t_mod.named_parameters()]
    assert list(e_mod._parameters) == list(t_mod._parameters)
    assert list(e_mod._buffers) == list(t_mod._buffers)
    public = {k: v for k, v in vars(t_mod).items() if not k.startswith("_") and not isinstance(v, torch.Tensor)
              and k != "training"}
    for k, v in public.items():
        assert getattr(e_mod, k) == v, k
    assert type(e_mod).__name__ == type(t_mod).__name__
    assert getattr(type(e_mod), "__constants__", None) == getattr(type(t_mod), "__constants__", None)


def test_all_exports():
    names = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d",
             "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
             "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "Softmax", "LogSoftmax",
             "Softmin", "Softmax2d", "PReLU", "L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
             "BCEWithLogitsLoss", "KLDivLoss", "SmoothL1Loss", "HuberLoss", "CosineEmbeddingLoss",
             "MarginRankingLoss", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Fold", "Unfold",
             "PixelShuffle", "PixelUnshuffle"]
    for name in names:
        assert name in enn.__all__ and name in enn.modules.__all__ and getattr(enn, name) is getattr(enn.modules, name)
        assert hasattr(tnn, name)
    for name in ("prelu", "pixel_shuffle", "pixel_unshuffle"):
        assert name in EF.__all__
    from ember.nn.modules.conv import _ConvNd
    from ember.nn.modules.utils import _pair, _single, _triple
    assert isinstance(enn.ConvTranspose2d(1, 1, 1), _ConvNd)
    assert _pair(3) == (3, 3) and _single((2,)) == (2,) and _triple([1, 2, 3]) == (1, 2, 3)


def test_copy_and_pickle():
    for mod in (enn.Conv2d(2, 3, 3, padding_mode="reflect"), enn.BatchNorm2d(3), enn.LayerNorm(4),
                enn.CrossEntropyLoss(weight=ember.ones(3)), enn.Softmax(1)):
        for clone in (copy.deepcopy(mod), pickle.loads(pickle.dumps(mod))):
            assert repr(clone) == repr(mod)
            for (n1, a), (n2, b) in zip(clone.state_dict().items(), mod.state_dict().items()):
                assert n1 == n2 and a.equal(b)


DOC_MODULES = ["conv", "pooling", "batchnorm", "normalization", "activation", "loss", "upsampling", "fold",
               "pixelshuffle", "utils"]


@pytest.mark.parametrize("name", DOC_MODULES)
def test_docstring_examples_run(name):
    import doctest
    import importlib

    module = importlib.import_module(f"ember.nn.modules.{name}")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, globs={"ember": ember, **vars(module)}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0


# ---- a small CNN trained a few steps on both ----

def test_cnn_training_steps_match_torch():
    def net(nn):
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(8, 8, 3, padding="same", groups=2, padding_mode="reflect"), nn.GroupNorm(2, 8),
                             nn.PReLU(8), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(32, 5))

    t_net, e_net = net(tnn).double(), net(enn).double()
    copy_state(t_net, e_net)
    e_opt = ember.optim.SGD(e_net.parameters(), lr=0.1)
    t_loss_fn, e_loss_fn = tnn.CrossEntropyLoss(label_smoothing=0.05), enn.CrossEntropyLoss(label_smoothing=0.05)
    for step in range(3):
        x, y = rand(4, 3, 8, 8, seed=step), class_targets(4, 5, seed=step)
        t_loss = t_loss_fn(t_net(torch.tensor(x)), torch.tensor(y))
        e_loss = e_loss_fn(e_net(ember.tensor(x)), ember.tensor(y))
        assert abs(e_loss.item() - t_loss.item()) < 1e-9
        t_net.zero_grad(), e_opt.zero_grad()
        t_loss.backward(), e_loss.backward()
        e_opt.step()
        with torch.no_grad():  # torch.optim's import is slow; plain SGD is one line
            for p in t_net.parameters():
                p.sub_(0.1 * p.grad)
    for (name, e), (_, t) in zip(e_net.state_dict().items(), t_net.state_dict().items()):
        assert_close(e, t, 1e-9)
    t_net.eval(), e_net.eval()
    x = rand(2, 3, 8, 8, seed=7)
    assert_close(e_net(ember.tensor(x)), t_net(torch.tensor(x)), 1e-9)
