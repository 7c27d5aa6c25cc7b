"""The native nn ops (declarations/ops/nn_*.yaml) through ember.nn.functional,
against torch.nn.functional: forward values in float32, gradients (and double
backward where declared) in float64, shapes including batch size 1 and empty batches,
non-contiguous inputs, dtypes, and torch's error types."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import ember.nn.functional as EF  # noqa: E402

TESTED_OPS = {
    "softmax", "log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    "nll_loss_nd", "_nll_loss_backward", "mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "gelu", "gelu_backward", "silu", "silu_backward", "mish", "mish_backward", "softplus", "softplus_backward",
    "elu", "elu_backward", "selu", "celu", "leaky_relu", "leaky_relu_backward", "hardtanh", "hardtanh_backward",
    "hardswish", "hardswish_backward", "hardsigmoid", "hardsigmoid_backward", "log_sigmoid", "log_sigmoid_backward",
    "convolution", "_convolution_backward_input", "_convolution_backward_weight",
    "max_pool2d_with_indices", "avg_pool2d", "avg_pool2d_backward", "adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d",
    "native_batch_norm", "native_batch_norm_backward", "native_layer_norm", "native_layer_norm_backward",
    "native_group_norm", "native_group_norm_backward", "_fused_rms_norm", "_fused_rms_norm_backward",
    "embedding", "embedding_backward",
}  # interpolate, unfold/fold and scaled_dot_product_attention are Python compositions: tested at the end


# ---------------------------------------------------------------- helpers

class Arg:
    """An input given to both libraries: values (numpy), dtype, whether it requires grad,
    and whether it is made non-contiguous (a transposed copy, transposed back)."""

    def __init__(self, values, dtype="float64", grad=True, transpose=False):
        self.values = np.asarray(values)
        self.dtype = dtype
        self.grad = grad and dtype.startswith("float")
        self.transpose = transpose and self.values.ndim >= 2

    def make(self, lib):
        a = self.values
        dtype = getattr(lib, self.dtype)
        if self.transpose:
            b = np.ascontiguousarray(np.swapaxes(a, -1, -2))
            t = lib.tensor(b.tolist(), dtype=dtype).reshape(b.shape).transpose(-1, -2)
        else:
            t = lib.tensor(a.tolist(), dtype=dtype).reshape(a.shape)
        return t.requires_grad_() if self.grad else t


def rand(*shape, low=-2.0, high=2.0, seed=0, **kw):
    return Arg(np.random.default_rng(seed).uniform(low, high, size=shape), **kw)


def ints(values, dtype="int64"):
    return Arg(np.asarray(values), dtype=dtype, grad=False)


def lib_pair(fn):
    """fn(F, lib, *tensors) for ember (EF, ember) and torch (TF, torch)."""
    return (lambda *a: fn(EF, ember, *a)), (lambda *a: fn(TF, torch, *a))


def to_np(t):
    return t.detach().to(ember.float64 if isinstance(t, ember.Tensor) else torch.float64).numpy()


def compare_outputs(eo, to, rtol, atol):
    if isinstance(to, (tuple, list)):
        assert len(eo) == len(to)
        for e, t in zip(eo, to):
            compare_outputs(e, t, rtol, atol)
        return
    assert tuple(eo.shape) == tuple(to.shape), f"shape {tuple(eo.shape)} != torch's {tuple(to.shape)}"
    assert repr(eo.dtype).split(".")[-1] == repr(to.dtype).split(".")[-1], f"dtype {eo.dtype} != {to.dtype}"
    np.testing.assert_allclose(to_np(eo), to_np(to), rtol=rtol, atol=atol)


def check(fn, *args, rtol=1e-6, atol=1e-8, grad=True, double=False, seed=1):
    """Runs fn on both libraries with the same inputs; compares outputs, then the inputs'
    gradients of sum(out * w) for a random w, then (double) the gradients of
    sum(grads * v) taken with create_graph."""
    efn, tfn = lib_pair(fn)
    ein = [a.make(ember) for a in args]
    tin = [a.make(torch) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to = tfn(*tin)
        eo = efn(*ein)
    compare_outputs(eo, to, rtol, atol)
    if not grad:
        return
    to0 = to[0] if isinstance(to, (tuple, list)) else to
    eo0 = eo[0] if isinstance(eo, (tuple, list)) else eo
    if not to0.requires_grad:
        return
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, size=tuple(to0.shape))
    tw, ew = torch.tensor(w, dtype=to0.dtype), ember.tensor(w.tolist(), dtype=eo0.dtype).reshape(w.shape)
    tdiff = [t for t in tin if t.requires_grad]
    ediff = [e for e in ein if e.requires_grad]
    tg = torch.autograd.grad((to0 * tw).sum(), tdiff, create_graph=double, allow_unused=True)
    eg = ember.autograd.grad((eo0 * ew).sum(), ediff, create_graph=double, allow_unused=True)
    for i, (e, t) in enumerate(zip(eg, tg)):
        if t is None:
            assert e is None or not e.any(), f"input {i}: torch has no gradient"
            continue
        if e is None:
            assert not t.any(), f"input {i} got no gradient"
            continue
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(to_np(e), to_np(t), rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")
    if not double:
        return
    pairs = [(e, t) for e, t in zip(eg, tg) if t is not None and t.requires_grad]
    if not pairs:
        return
    vs = [rng.uniform(-1, 1, size=tuple(t.shape)) for _, t in pairs]
    tsum = sum((t * torch.tensor(v, dtype=t.dtype)).sum() for (_, t), v in zip(pairs, vs))
    esum = sum((e * ember.tensor(v.tolist(), dtype=e.dtype).reshape(v.shape)).sum() for (e, _), v in zip(pairs, vs))
    tgg = torch.autograd.grad(tsum, tdiff, allow_unused=True)
    if not esum.requires_grad:  # the gradients do not depend on the inputs: torch's second ones are 0
        assert all(t is None or not t.any() for t in tgg)
        return
    egg = ember.autograd.grad(esum, ediff, allow_unused=True)
    for i, (e, t) in enumerate(zip(egg, tgg)):
        if t is None:
            assert e is None or not e.any(), f"input {i}: torch has no second gradient"
            continue
        if e is None:  # ember records no edge where the second derivative is 0
            assert not t.any(), f"input {i} got no second gradient"
            continue
        np.testing.assert_allclose(to_np(e), to_np(t), rtol=rtol * 10, atol=atol * 10,
                                   err_msg=f"second gradient of input {i}")


def check_forward32(fn, *args, rtol=2e-5, atol=1e-6):
    """The same call on float32 inputs (no gradients)."""
    args32 = [Arg(a.values, "float32", grad=False, transpose=a.transpose) if a.dtype == "float64" else a for a in args]
    check(fn, *args32, rtol=rtol, atol=atol, grad=False)


def check_error(fn, *args):
    """torch raises: ember raises the same exception type."""
    efn, tfn = lib_pair(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as terr:
            tfn(*[a.make(torch) for a in args])
        with pytest.raises(terr.type):
            efn(*[a.make(ember) for a in args])


# ---------------------------------------------------------------- softmax

SOFTMAX_SHAPES = [((5,), 0), ((3, 7), 1), ((3, 7), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), 0), ((1, 1), 1),
                  ((4, 300), 1), ((300, 5), 0)]


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape, dim", SOFTMAX_SHAPES)
def test_softmax(log, shape, dim):
    name = "log_softmax" if log else "softmax"
    fn = lambda F, L, x: getattr(F, name)(x, dim)  # noqa: E731
    check(fn, rand(*shape), double=True)
    check_forward32(fn, rand(*shape, low=-30, high=30))
    if len(shape) >= 2:
        check(fn, rand(*shape, transpose=True))


@pytest.mark.parametrize("log", [False, True])
def test_softmax_special_values(log):
    name = "log_softmax" if log else "softmax"
    vals = [[1000., 1000., -1000.], [-np.inf, 0., 1.], [-np.inf, -np.inf, -np.inf], [np.nan, 1., 2.], [np.inf, 1., 2.]]
    check(lambda F, L, x: getattr(F, name)(x, 1), Arg(vals, "float32", grad=False), grad=False)
    check(lambda F, L, x: getattr(F, name)(x, 0), Arg(np.array(vals).T, "float32", grad=False), grad=False)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_dtypes_and_edges(log):
    name = "log_softmax" if log else "softmax"
    check(lambda F, L, x: getattr(F, name)(x, 0), Arg(2.5), double=True)  # 0-dim
    check(lambda F, L, x: getattr(F, name)(x, 1), rand(0, 4))  # empty
    check(lambda F, L, x: getattr(F, name)(x, 1, dtype=L.float64), rand(3, 4, dtype="float32"))
    check(lambda F, L, x: getattr(F, name)(x, 1, dtype=L.float32), ints([[1, 2], [3, 4]]), grad=False)
    check(lambda F, L, x: getattr(F, name)(x.to(L.bfloat16), 1).float(), rand(3, 4, dtype="float32", grad=False),
          rtol=1e-2, atol=1e-2, grad=False)
    check(lambda F, L, x: getattr(F, name)(x), rand(2, 3, 4), grad=False)  # implicit dim (warns)
    check(lambda F, L, x: getattr(L, name)(x, 1) + x.softmax(0), rand(3, 4))  # ember.softmax, Tensor.softmax
    check_error(lambda F, L, x: getattr(F, name)(x, 0), ints([1, 2]))
    check_error(lambda F, L, x: getattr(F, name)(x, 2), rand(3, 4))
    check(lambda F, L, x: F.softmin(x, 1), rand(3, 4))


def test_softmax_backward_ops():
    check(lambda F, L, g, y: L._softmax_backward_data(g, y, 1, y.dtype), rand(3, 4), rand(3, 4, low=0, high=1, seed=2),
          double=True)
    check(lambda F, L, g, y: L._log_softmax_backward_data(g, y, 1, y.dtype), rand(3, 4),
          rand(3, 4, low=-3, high=0, seed=2), double=True)


# ---------------------------------------------------------------- nll_loss and cross_entropy

REDUCTIONS = ["mean", "sum", "none"]


def nll_cases():
    rng = np.random.default_rng(5)
    yield rand(5), ints(2)
    yield rand(4, 5), ints([0, 4, 2, 2])
    yield rand(1, 3), ints([1])
    yield rand(2, 3, 4), ints(rng.integers(0, 3, size=(2, 4)))
    yield rand(2, 3, 4, 5), ints(rng.integers(0, 3, size=(2, 4, 5)))
    yield rand(0, 3), ints(np.zeros(0, dtype=np.int64))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", range(6))
def test_nll_loss(reduction, case):
    x, t = list(nll_cases())[case]
    c = x.values.shape[0 if x.values.ndim == 1 else 1]
    w = rand(c, low=0.1, high=2, seed=9, grad=False)
    check(lambda F, L, x, t: F.nll_loss(x, t, reduction=reduction), x, t, double=True)
    check(lambda F, L, x, t, w: F.nll_loss(x, t, w, reduction=reduction), x, t, w)
    check(lambda F, L, x, t: F.nll_loss(x, t, reduction=reduction, ignore_index=1), x, t)
    check_forward32(lambda F, L, x, t: F.nll_loss(x, t, reduction=reduction), x, t)


def test_nll_loss_errors_and_targets():
    x = rand(3, 5)
    check(lambda F, L, x, t: F.nll_loss(x, t), x, ints([1, 2, 0], "uint8"))
    check(lambda F, L, x, t: F.nll_loss(x, t), x, ints([-100, -100, -100]))  # all ignored: nan
    check(lambda F, L, x, t: F.nll_loss(x, t, ignore_index=7), x, ints([1, 7, 0]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), x, ints([1, 5, 0]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), x, ints([1, -1, 0]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t, reduction="none"), x, ints([1, 5, 0]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), x, ints([1, 2]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), x, Arg([1., 2., 0.], grad=False))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), x, ints([1, 2, 0], "int32"))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), x, ints([[1], [2], [0]]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t, L.ones(4, dtype=L.float64)), x, ints([1, 2, 0]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t, reduction="foo"), x, ints([1, 2, 0]))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), Arg(1.), ints(0))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), rand(2, 3, 4), ints(np.zeros((2, 5), dtype=np.int64)))
    check_error(lambda F, L, x, t: F.nll_loss(x, t), ints([[1, 2], [3, 4]]), ints([0, 1]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy(reduction, smoothing):
    rng = np.random.default_rng(3)
    for x, t in [(rand(4, 5), ints([0, 4, 2, 1])), (rand(2, 3, 4), ints(rng.integers(0, 3, size=(2, 4)))),
                 (rand(5), ints(3))]:
        c = x.values.shape[0 if x.values.ndim == 1 else 1]
        w = rand(c, low=0.1, high=2, seed=9, grad=False)
        kw = dict(reduction=reduction, label_smoothing=smoothing)
        check(lambda F, L, x, t: F.cross_entropy(x, t, **kw), x, t, double=True)
        check(lambda F, L, x, t, w: F.cross_entropy(x, t, w, **kw), x, t, w)
        if x.values.ndim > 1:
            check(lambda F, L, x, t, w: F.cross_entropy(x, t, w, ignore_index=2, **kw), x, t, w)
            check(lambda F, L, x, t: F.cross_entropy(x, t, ignore_index=1, **kw), x, t)
        if x.values.ndim == 1:
            probs = Arg(rng.dirichlet(np.ones(c)))
        else:
            batch = x.values.shape[:1] + x.values.shape[2:]
            probs = Arg(np.moveaxis(rng.dirichlet(np.ones(c), size=batch), -1, 1))
        check(lambda F, L, x, p: F.cross_entropy(x, p, **kw), x, probs)
        check(lambda F, L, x, p, w: F.cross_entropy(x, p, w, **kw), x, probs, w)
        check_forward32(lambda F, L, x, t: F.cross_entropy(x, t, **kw), x, t)


def test_cross_entropy_errors():
    x = rand(3, 5)
    check_error(lambda F, L, x, t: F.cross_entropy(x, t), x, ints([1, 5, 0]))
    check_error(lambda F, L, x, t: F.cross_entropy(x, t), x, rand(3, 4, grad=False))
    check_error(lambda F, L, x, t: F.cross_entropy(x, t, ignore_index=2), x, rand(3, 5, grad=False))
    check_error(lambda F, L, x, t: F.cross_entropy(x, t), Arg(1.), ints(0))
    check(lambda F, L, x, t: F.cross_entropy(x, t), rand(3, 5, dtype="float32"), rand(3, 5, low=0, high=1))


# ---------------------------------------------------------------- regression losses

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, kw", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}),
                                      ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                                      ("huber_loss", {}), ("huber_loss", {"delta": 0.3})])
def test_pointwise_losses(reduction, name, kw):
    fn = lambda F, L, x, y: getattr(F, name)(x, y, reduction=reduction, **kw)  # noqa: E731
    check(fn, rand(3, 4), rand(3, 4, seed=2), double=name not in ("l1_loss",) and kw.get("beta") != 0.0)
    check(fn, rand(3, 4, transpose=True), rand(3, 4, seed=2))
    check(fn, rand(1), rand(1, seed=2))
    check(fn, rand(0, 2), rand(0, 2, seed=2))
    check(fn, rand(3, 4), rand(4, seed=2))  # broadcast (torch warns)
    check_forward32(fn, rand(3, 4), rand(3, 4, seed=2))
    if name != "smooth_l1_loss":
        w = rand(3, 4, low=0.1, high=1, seed=4, grad=False)
        check(lambda F, L, x, y, w: getattr(F, name)(x, y, reduction=reduction, weight=w, **kw), rand(3, 4),
              rand(3, 4, seed=2), w)


def test_pointwise_loss_errors():
    check_error(lambda F, L, x, y: F.mse_loss(x, y, reduction="avg"), rand(3), rand(3, seed=1))
    check_error(lambda F, L, x, y: F.smooth_l1_loss(x, y, beta=-1.0), rand(3), rand(3, seed=1))
    check_error(lambda F, L, x, y: F.huber_loss(x, y, delta=0.0), rand(3), rand(3, seed=1))
    check_error(lambda F, L, x, y: F.mse_loss(x, y, weight=L.ones(2, dtype=L.float64)), rand(3), rand(3, seed=1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    x = rand(3, 4, low=0.01, high=0.99)
    t = rand(3, 4, low=0, high=1, seed=2)
    w = rand(3, 4, low=0.1, high=2, seed=3, grad=False)
    check(lambda F, L, x, t: F.binary_cross_entropy(x, t, reduction=reduction), x, t, double=True)
    check(lambda F, L, x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction), x, t, w)
    check(lambda F, L, x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction), x, t, rand(4, seed=3, grad=False))
    check(lambda F, L, x, t: F.binary_cross_entropy(x, t, reduction=reduction),  # log clamped at -100
          Arg([0.0, 1.0, 0.5, 1e-50], grad=False), Arg([1.0, 0.0, 0.5, 1.0], grad=False))
    check_forward32(lambda F, L, x, t: F.binary_cross_entropy(x, t, reduction=reduction), x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction):
    x, t = rand(3, 4, low=-5, high=5), rand(3, 4, low=0, high=1, seed=2)
    w, pw = rand(3, 4, low=0.1, high=2, seed=3, grad=False), rand(4, low=0.5, high=3, seed=4, grad=False)
    check(lambda F, L, x, t: F.binary_cross_entropy_with_logits(x, t, reduction=reduction), x, t, double=True)
    check(lambda F, L, x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, reduction=reduction, pos_weight=pw),
          x, t, w, pw, double=True)
    check(lambda F, L, x, t: F.binary_cross_entropy_with_logits(x, t, reduction=reduction),
          Arg([0.0, 100.0, -100.0]), Arg([1.0, 0.0, 1.0]))
    check_forward32(lambda F, L, x, t: F.binary_cross_entropy_with_logits(x, t, reduction=reduction), x, t)


def test_binary_cross_entropy_errors():
    check_error(lambda F, L, x, t: F.binary_cross_entropy(x, t), Arg([0.5, 1.5]), Arg([1.0, 0.0]))
    check_error(lambda F, L, x, t: F.binary_cross_entropy(x, t), Arg([[0.5, 0.5]]), Arg([1.0, 0.0]))
    check_error(lambda F, L, x, t: F.binary_cross_entropy_with_logits(x, t), Arg([[0.5, 0.5]]), Arg([1.0, 0.0]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = rand(3, 4, low=-3, high=0)
    t = rand(3, 4, low=-3, high=0, seed=2) if log_target else rand(3, 4, low=0, high=1, seed=2)
    check(lambda F, L, x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target), x, t)
    if not log_target:
        check(lambda F, L, x, t: F.kl_div(x, t, reduction=reduction), x, Arg([[0., 0.5, 0.5, 0.]] * 3, grad=False))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_and_margin_ranking(reduction):
    t = ints([1, -1, 1])
    check(lambda F, L, a, b, t: F.cosine_embedding_loss(a, b, t.to(a.dtype), reduction=reduction), rand(3, 5),
          rand(3, 5, seed=2), t)
    check(lambda F, L, a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.3, reduction=reduction), rand(3, 5),
          rand(3, 5, seed=2), t)
    check(lambda F, L, a, b, t: F.cosine_embedding_loss(a, b, t, reduction=reduction), rand(5), rand(5, seed=2),
          ints(-1))
    check(lambda F, L, a, b, t: F.margin_ranking_loss(a, b, t.to(a.dtype), margin=0.5, reduction=reduction), rand(3),
          rand(3, seed=2), t)
    check_error(lambda F, L, a, b, t: F.margin_ranking_loss(a, b, t), rand(3), rand(3, 1, seed=2), Arg([1.0, -1, 1]))


# ---------------------------------------------------------------- activations

ACTIVATIONS = [
    ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}), ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 3.0}), ("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}),
    ("celu", {}), ("celu", {"alpha": 2.0}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("hardtanh", {}), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("relu6", {}), ("hardswish", {}),
    ("hardsigmoid", {}), ("logsigmoid", {}),
]
INPLACE = {"silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh", "relu6", "hardswish", "hardsigmoid"}


@pytest.mark.parametrize("name, kw", ACTIVATIONS, ids=[f"{n}{k}" for n, k in ACTIVATIONS])
def test_activation(name, kw):
    fn = lambda F, L, x: getattr(F, name)(x, **kw)  # noqa: E731
    # avoid the kinks (0, +-3, the clamp bounds) where torch's and any gradient are a convention
    vals = np.random.default_rng(0).uniform(-7, 7, size=(4, 6))
    vals = np.where(np.abs(np.abs(vals) - np.round(np.abs(vals))) < 0.05, vals + 0.1, vals)
    double = name != "hardsigmoid"  # torch has no double backward for it
    check(fn, Arg(vals), double=double)
    check(fn, Arg(vals, transpose=True))
    check_forward32(fn, Arg(vals))
    check_forward32(fn, Arg([-1e3, -30., -20.5, 0., 1e-8, 20.5, 30., 1e3]))
    check(fn, rand(0, 3))
    check(fn, Arg(0.7), double=double)
    if name != "hardtanh" and name != "relu6":
        check_error(fn, ints([1, 2]))
    if name in INPLACE:
        def inplace(F, L, x):
            y = x * 1
            return getattr(F, name)(y, inplace=True, **kw)
        check(inplace, Arg(vals))


def test_activation_kinks_and_dtypes():
    # torch's conventions at the kinks: the gradients there
    at = Arg([-3.0, 0.0, 3.0, -1.0, 1.0, 6.0])
    for name in ["elu", "selu", "celu", "leaky_relu", "hardtanh", "relu6", "hardswish", "hardsigmoid"]:
        check(lambda F, L, x: getattr(F, name)(x), at)
    check(lambda F, L, x: F.hardtanh(x, -1.0, 1.0), ints([-3, 0, 3]), grad=False)
    check(lambda F, L, x: F.relu6(x), ints([-3, 0, 9]), grad=False)
    check_error(lambda F, L, x: F.hardtanh(x), Arg([True, False], dtype="bool"))
    check_error(lambda F, L, x: F.hardtanh(x, 2.0, 1.0), rand(3))
    check_error(lambda F, L, x: F.gelu(x, approximate="foo"), rand(3))
    for dt in ["float16", "bfloat16"]:
        check(lambda F, L, x: F.silu(x.to(getattr(L, dt))).float(), rand(5, dtype="float32", grad=False), grad=False,
              rtol=1e-2, atol=1e-2)


def aten(L, name):
    """torch keeps the backward ops under torch.ops.aten; ember declares them as functions."""
    return getattr(torch.ops.aten, name) if L is torch else getattr(ember, name)


def test_activation_backward_ops():
    g, x = rand(3, 4), rand(3, 4, seed=2)
    for name, args in [("silu_backward", ()), ("softplus_backward", (1.0, 20.0)), ("hardswish_backward", ()),
                       ("hardtanh_backward", (-1.0, 1.0)), ("hardsigmoid_backward", ())]:
        check(lambda F, L, g, x: aten(L, name)(g, x, *args), g, x, grad=False)
    for approximate in ["none", "tanh"]:
        check(lambda F, L, g, x: aten(L, "gelu_backward")(g, x, approximate=approximate), g, x, double=True)
    check(lambda F, L, g, x: (aten(L, "elu_backward")(g, 1.0, 1.0, 1.0, False, x) if L is torch
                              else L.elu_backward(g, x, 1.0, 1.0, 1.0)), g, x, double=True)
    check(lambda F, L, g, x: (aten(L, "leaky_relu_backward")(g, x, 0.1, False) if L is torch
                              else L.leaky_relu_backward(g, x, 0.1)), g, x)
    check(lambda F, L, g, x: g * L.sigmoid(-x) if L is torch else L.log_sigmoid_backward(g, x), g, x, double=True)


# ---------------------------------------------------------------- convolution

CONV2D = [  # (input shape, weight shape, kwargs)
    ((2, 3, 7, 8), (4, 3, 3, 3), {}),
    ((1, 3, 7, 8), (4, 3, 3, 2), {"stride": 2, "padding": 1}),
    ((2, 4, 9, 9), (6, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": (2, 1)}),
    ((2, 3, 5, 5), (4, 3, 1, 1), {}),
    ((2, 3, 6, 5), (2, 3, 1, 1), {"stride": (2, 1)}),
    ((2, 3, 8, 8), (4, 3, 3, 3), {"padding": "same"}),
    ((2, 3, 8, 8), (4, 3, 2, 4), {"padding": "same", "dilation": (1, 3)}),
    ((2, 3, 8, 8), (4, 3, 3, 3), {"padding": "valid", "stride": 3}),
    ((3, 6, 6), (3, 1, 3, 3), {"groups": 3}),  # unbatched, depthwise
    ((0, 3, 5, 5), (4, 3, 3, 3), {}),
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("ins, ws, kw", CONV2D)
def test_conv2d(ins, ws, kw, bias):
    args = [rand(*ins), rand(*ws, seed=2)] + ([rand(ws[0], seed=3)] if bias else [])
    fn = lambda F, L, x, w, *b: F.conv2d(x, w, *b, **kw)  # noqa: E731
    check(fn, *args, double=True, rtol=1e-6, atol=1e-9)
    check_forward32(fn, *args, rtol=1e-4, atol=1e-5)


CONV1D = [((2, 3, 10), (4, 3, 3), {}), ((1, 4, 9), (2, 2, 2), {"stride": 2, "padding": 1, "groups": 2}),
          ((2, 3, 10), (4, 3, 4), {"padding": "same", "dilation": 2}), ((3, 10), (4, 3, 3), {"dilation": 3})]


@pytest.mark.parametrize("ins, ws, kw", CONV1D)
def test_conv1d(ins, ws, kw):
    fn = lambda F, L, x, w, b: F.conv1d(x, w, b, **kw)  # noqa: E731
    check(fn, rand(*ins), rand(*ws, seed=2), rand(ws[0], seed=3), double=True)


CONV_T = [((2, 3, 5, 6), (3, 4, 3, 3), {}),
          ((1, 4, 4, 5), (4, 2, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
          ((2, 4, 5, 5), (4, 3, 3, 3), {"groups": 2, "dilation": 2, "stride": (1, 2)}),
          ((4, 5, 5), (4, 2, 1, 1), {"stride": 2})]


@pytest.mark.parametrize("ins, ws, kw", CONV_T)
def test_conv_transpose2d(ins, ws, kw):
    cout = ws[1] * kw.get("groups", 1)
    fn = lambda F, L, x, w, b: F.conv_transpose2d(x, w, b, **kw)  # noqa: E731
    check(fn, rand(*ins), rand(*ws, seed=2), rand(cout, seed=3), double=True)
    check_forward32(fn, rand(*ins), rand(*ws, seed=2), rand(cout, seed=3), rtol=1e-4, atol=1e-5)


def test_conv_transpose1d_and_noncontiguous():
    check(lambda F, L, x, w: F.conv_transpose1d(x, w, stride=2, padding=1), rand(2, 3, 6), rand(3, 2, 3, seed=2))
    check(lambda F, L, x, w: F.conv2d(x, w, padding=1), rand(2, 3, 5, 6, transpose=True),
          rand(4, 3, 3, 3, seed=2, transpose=True))


def test_conv_errors():
    check_error(lambda F, L, x, w: F.conv2d(x, w), rand(2, 4, 5, 5), rand(3, 3, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w), rand(2, 3, 2, 2), rand(3, 3, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w, groups=2), rand(2, 4, 5, 5), rand(3, 2, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w), rand(2, 5), rand(3, 3, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w, L.ones(4, dtype=L.float64)), rand(2, 3, 5, 5), rand(3, 3, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w, stride=0), rand(2, 3, 5, 5), rand(3, 3, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w, padding=-1), rand(2, 3, 5, 5), rand(3, 3, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w, padding="same", stride=2), rand(2, 3, 5, 5), rand(3, 3, 3, 3))
    check_error(lambda F, L, x, w: F.conv2d(x, w), rand(2, 3, 5, 5, dtype="float32"), rand(3, 3, 3, 3))


def test_convolution_backward_ops():
    g, w, x = rand(2, 4, 5, 5), rand(4, 3, 3, 3, seed=2), rand(2, 3, 7, 7, seed=3)
    ref = lambda L, g, w, x: L.ops.aten.convolution_backward(  # noqa: E731
        g, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, False])
    check(lambda F, L, g, w, x: (ref(torch, g, w, x)[0] if L is torch else
                                 L._convolution_backward_input(g, w, [2, 3, 7, 7], [1, 1], [0, 0], [1, 1], False,
                                                               [0, 0], 1)), g, w, x, double=True)
    check(lambda F, L, g, w, x: (ref(torch, g, w, x)[1] if L is torch else
                                 L._convolution_backward_weight(g, x, [4, 3, 3, 3], [1, 1], [0, 0], [1, 1], False,
                                                                [0, 0], 1)), g, w, x, double=True)


# ---------------------------------------------------------------- pooling

MAX_POOL2D = [((2, 3, 8, 9), dict(kernel_size=2)), ((1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
              ((2, 2, 9, 8), dict(kernel_size=(3, 2), stride=(2, 1), dilation=(2, 1))),
              ((2, 2, 7, 7), dict(kernel_size=2, ceil_mode=True)),
              ((2, 2, 8, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
              ((3, 5, 5), dict(kernel_size=2, stride=1)), ((0, 2, 4, 4), dict(kernel_size=2))]


@pytest.mark.parametrize("ins, kw", MAX_POOL2D)
def test_max_pool2d(ins, kw):
    fn = lambda F, L, x: F.max_pool2d(x, return_indices=True, **kw)  # noqa: E731
    check(fn, rand(*ins), double=True)
    check_forward32(fn, rand(*ins))
    check(lambda F, L, x: F.max_pool2d(x, **kw), rand(*ins, transpose=True))


def test_max_pool_ties_nan_and_1d():
    check(lambda F, L, x: F.max_pool2d(x, 2, return_indices=True), Arg(np.ones((1, 1, 4, 4))))
    check(lambda F, L, x: F.max_pool2d(x, 2, return_indices=True),
          Arg([[[[1., np.nan], [np.nan, 0.]]]], grad=False), grad=False)
    check(lambda F, L, x: F.max_pool2d(x, 2, padding=1, return_indices=True),
          Arg(np.full((1, 1, 3, 3), -np.inf), grad=False), grad=False)
    for kw in [dict(kernel_size=3), dict(kernel_size=2, stride=1, padding=1), dict(kernel_size=3, dilation=2),
               dict(kernel_size=2, ceil_mode=True)]:
        check(lambda F, L, x: F.max_pool1d(x, return_indices=True, **kw), rand(2, 3, 9), double=True)
        check(lambda F, L, x: F.max_pool1d(x, **kw), rand(3, 9))


def test_max_pool_errors():
    check_error(lambda F, L, x: F.max_pool2d(x, 2, padding=2), rand(1, 1, 5, 5))
    check_error(lambda F, L, x: F.max_pool2d(x, 4), rand(1, 1, 3, 3))
    check_error(lambda F, L, x: F.max_pool2d(x, 2), rand(5, 5))
    check_error(lambda F, L, x: F.max_pool2d(x, 2, stride=0), rand(1, 1, 5, 5))
    check_error(lambda F, L, x: F.max_pool1d(x, 2), rand(5))


AVG_POOL2D = [((2, 3, 8, 9), dict(kernel_size=2)), ((1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
              ((1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
              ((2, 2, 7, 6), dict(kernel_size=(3, 2), ceil_mode=True)),
              ((2, 2, 8, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
              ((2, 2, 6, 6), dict(kernel_size=2, divisor_override=3)), ((3, 5, 5), dict(kernel_size=2, stride=1))]


@pytest.mark.parametrize("ins, kw", AVG_POOL2D)
def test_avg_pool2d(ins, kw):
    fn = lambda F, L, x: F.avg_pool2d(x, **kw)  # noqa: E731
    check(fn, rand(*ins), double=True)
    check_forward32(fn, rand(*ins))
    check(fn, rand(*ins, transpose=True))


def test_avg_pool1d_and_errors():
    for kw in [dict(kernel_size=3), dict(kernel_size=2, stride=1, padding=1, count_include_pad=False),
               dict(kernel_size=2, ceil_mode=True)]:
        check(lambda F, L, x: F.avg_pool1d(x, **kw), rand(2, 3, 9), double=True)
    check_error(lambda F, L, x: F.avg_pool2d(x, 2, padding=2), rand(1, 1, 5, 5))
    check_error(lambda F, L, x: F.avg_pool2d(x, 2, divisor_override=0), rand(1, 1, 5, 5))


@pytest.mark.parametrize("ins, out", [((2, 3, 8, 9), (3, 4)), ((1, 2, 7, 5), 3), ((3, 5, 5), (1, 1)),
                                      ((2, 2, 4, 4), (None, 2)), ((2, 2, 3, 3), (5, 4))])
def test_adaptive_pool2d(ins, out):
    check(lambda F, L, x: F.adaptive_avg_pool2d(x, out), rand(*ins), double=True)
    check(lambda F, L, x: F.adaptive_max_pool2d(x, out, return_indices=True), rand(*ins), double=True)
    check_forward32(lambda F, L, x: F.adaptive_avg_pool2d(x, out), rand(*ins, transpose=True))


def test_adaptive_pool1d():
    for out in [1, 3, 4, 7]:
        check(lambda F, L, x: F.adaptive_avg_pool1d(x, out), rand(2, 3, 9), double=True)
        check(lambda F, L, x: F.adaptive_max_pool1d(x, out, return_indices=True), rand(2, 3, 9))
    check_error(lambda F, L, x: F.adaptive_avg_pool2d(x, 2), rand(3, 4))


def test_pool_backward_ops():
    x = rand(1, 2, 6, 6)
    g = rand(1, 2, 3, 3, seed=3)
    check(lambda F, L, g, x: aten(L, "avg_pool2d_backward")(g, x, [2, 2], [2, 2], [0, 0], False, True, None), g, x,
          double=True)
    check(lambda F, L, g, x: aten(L, "_adaptive_avg_pool2d_backward")(g, x), g, x, double=True)


# ---------------------------------------------------------------- normalization

@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5), (1, 3, 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_training(shape, affine):
    c = shape[1]
    w, b = (rand(c, low=0.5, high=2, seed=5), rand(c, seed=6)) if affine else (None, None)

    def fn(F, L, x, *wb):
        rm, rv = L.zeros(c, dtype=x.dtype), L.ones(c, dtype=x.dtype)
        out = F.batch_norm(x, rm, rv, *wb, training=True, momentum=0.3, eps=1e-4)
        return out, rm, rv
    args = [rand(*shape)] + ([w, b] if affine else [])
    check(fn, *args, double=True)
    check_forward32(fn, *args)
    check(fn, *[rand(*shape, transpose=True)] + args[1:])


def test_batch_norm_eval_and_errors():
    x = rand(4, 3, 5)
    rm, rv = rand(3, grad=False, seed=7), rand(3, low=0.5, high=2, grad=False, seed=8)
    check(lambda F, L, x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False), x, rm, rv, rand(3, seed=5),
          rand(3, seed=6), double=True)
    check(lambda F, L, x, b: F.batch_norm(x, None, None, None, b, training=True), x, rand(3, seed=6))
    check(lambda F, L, x, m, v: F.batch_norm(x, m, v, training=False), x, rm, rv)
    check(lambda F, L, x: F.batch_norm(x, None, None, training=True), x)
    check_error(lambda F, L, x: F.batch_norm(x, None, None, training=True), rand(1, 3))
    check(lambda F, L, x: F.batch_norm(x, None, None, training=True), rand(0, 3, 2), grad=False)


@pytest.mark.parametrize("shape, normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4)), ((2, 3, 4), (4,)), ((7,), (7,)),
                                               ((0, 4), (4,))])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm(shape, normalized, affine):
    args = [rand(*shape)]
    if affine != "none":
        args.append(rand(*normalized, low=0.5, high=2, seed=5))
    if affine == "both":
        args.append(rand(*normalized, seed=6))
    fn = lambda F, L, x, *wb: F.layer_norm(x, normalized, *wb, eps=1e-4)  # noqa: E731
    check(fn, *args, double=True)
    check_forward32(fn, *args)
    check(fn, *[rand(*shape, transpose=True)] + args[1:])
    check(lambda F, L, x, *wb: L.native_layer_norm(x, list(normalized), *wb, *([None] * (2 - len(wb))), 1e-4)[1:],
          *args, grad=False)


def test_layer_norm_errors():
    check_error(lambda F, L, x: F.layer_norm(x, (3,)), rand(2, 4))
    check_error(lambda F, L, x, w: F.layer_norm(x, (4,), w), rand(2, 4), rand(3))
    check_error(lambda F, L, x: F.layer_norm(x, (4,)), ints([[1, 2, 3, 4]]))


@pytest.mark.parametrize("shape, groups", [((2, 4, 5), 2), ((2, 6, 3, 3), 3), ((1, 4, 3), 4), ((3, 4), 1),
                                           ((2, 4, 5), 1)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm(shape, groups, affine):
    c = shape[1]
    args = [rand(*shape)] + ([rand(c, low=0.5, high=2, seed=5), rand(c, seed=6)] if affine else [])
    fn = lambda F, L, x, *wb: F.group_norm(x, groups, *wb, eps=1e-4)  # noqa: E731
    check(fn, *args, double=True)
    check_forward32(fn, *args)


def test_group_norm_errors():
    check_error(lambda F, L, x: F.group_norm(x, 3), rand(2, 4, 5))
    check_error(lambda F, L, x: F.group_norm(x, 2), rand(4))
    check_error(lambda F, L, x: F.group_norm(x, 4), rand(1, 4))


@pytest.mark.parametrize("shape, normalized", [((4, 5), (5,)), ((2, 3, 4), (3, 4)), ((7,), (7,))])
@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(shape, normalized, weight, eps):
    args = [rand(*shape)] + ([rand(*normalized, low=0.5, high=2, seed=5)] if weight else [])
    fn = lambda F, L, x, *w: F.rms_norm(x, normalized, *w, eps=eps)  # noqa: E731
    check(fn, *args, double=True)
    check_forward32(fn, *args)


def test_norm_backward_ops_directly():
    g, x = rand(4, 5, grad=False), rand(4, 5, seed=2, grad=False)
    w, b = rand(5, seed=3, grad=False), rand(5, seed=4, grad=False)

    def ln(F, L, g, x, w, b):
        _, mean, rstd = L.native_layer_norm(x, [5], w, b, 1e-5)
        mask = ([True, True, True],) if L is torch else ()
        return aten(L, "native_layer_norm_backward")(g, x, [5], mean, rstd, w, b, *mask)
    check(ln, g, x, w, b, grad=False)


# ---------------------------------------------------------------- embedding

@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"padding_idx": -2}, {"scale_grad_by_freq": True},
                                {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding(kw):
    idx = ints([[1, 2, 1], [4, 0, 1]])
    check(lambda F, L, i, w: F.embedding(i, w, **kw), idx, rand(5, 3), double=True)
    check(lambda F, L, i, w: F.embedding(i, w, **kw), ints([3, 3, 0], "int32"), rand(5, 3))
    check(lambda F, L, i, w: F.embedding(i, w, **kw), ints(2), rand(5, 3))
    check(lambda F, L, i, w: F.embedding(i, w, **kw), ints(np.zeros((0, 2), dtype=np.int64)), rand(5, 3))


def test_embedding_max_norm_and_errors():
    def fn(F, L, i, w):
        w = w.detach().clone()
        out = F.embedding(i, w, max_norm=1.0)
        return out, w
    check(fn, ints([0, 2, 2]), rand(4, 3, low=-3, high=3), grad=False)
    check_error(lambda F, L, i, w: F.embedding(i, w), ints([5]), rand(5, 3))
    check_error(lambda F, L, i, w: F.embedding(i, w), Arg([1.0], grad=False), rand(5, 3))
    check(lambda F, L, g, i: (aten(L, "embedding_dense_backward")(g, i, 5, -1, False) if L is torch
                              else L.embedding_backward(g, i, 5, -1, False, False)),
          rand(3, 2), ints([1, 1, 4]), double=True)


# ---------------------------------------------------------------- compositions: interpolate, unfold/fold, attention

@pytest.mark.parametrize("shape, kw", [
    ((2, 3, 5), dict(size=8)), ((2, 3, 5), dict(scale_factor=2.5)), ((1, 2, 4, 5), dict(size=(7, 3))),
    ((1, 2, 4, 5), dict(scale_factor=1.7)), ((1, 2, 6, 6), dict(scale_factor=0.5)),
    ((1, 2, 4, 5), dict(scale_factor=(2, 3), recompute_scale_factor=True))])
@pytest.mark.parametrize("mode, align", [("nearest", None), ("nearest-exact", None), ("area", None), ("linear", False),
                                         ("linear", True), ("bilinear", False), ("bilinear", True)])
def test_interpolate(shape, kw, mode, align):
    if (mode == "linear") != (len(shape) == 3) and mode in ("linear", "bilinear"):
        return
    check(lambda F, L, x: F.interpolate(x, mode=mode, align_corners=align, **kw), rand(*shape), double=True)


def test_interpolate_errors():
    check_error(lambda F, L, x: F.interpolate(x, size=3, scale_factor=2), rand(1, 1, 4))
    check_error(lambda F, L, x: F.interpolate(x, size=3, align_corners=True), rand(1, 1, 4))
    check_error(lambda F, L, x: F.interpolate(x), rand(1, 1, 4))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2, padding=1),
                                dict(kernel_size=3, dilation=2, padding=2, stride=(1, 2))])
def test_unfold_fold(kw):
    check(lambda F, L, x: F.unfold(x, **kw), rand(2, 3, 7, 8), double=True)
    check(lambda F, L, x: F.unfold(x, **kw), rand(3, 7, 8))
    cols = TF.unfold(torch.zeros(2, 3, 7, 8), **kw)
    check(lambda F, L, c: F.fold(c, (7, 8), **kw), rand(*cols.shape), double=True)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask", [None, "bool", "float"])
def test_scaled_dot_product_attention(causal, mask):
    if causal and mask is not None:
        return
    q, k, v = rand(2, 3, 4, 8), rand(2, 3, 5, 8, seed=2), rand(2, 3, 5, 6, seed=3)
    if causal:
        k, v = rand(2, 3, 4, 8, seed=2), rand(2, 3, 4, 6, seed=3)
    args = [q, k, v]
    if mask == "bool":
        args.append(Arg(np.random.default_rng(4).uniform(size=(4, 5)) > 0.3, dtype="bool"))
    elif mask == "float":
        args.append(rand(4, 5, seed=4, grad=False))
    check(lambda F, L, q, k, v, *m: F.scaled_dot_product_attention(q, k, v, *m, is_causal=causal), *args)
    check(lambda F, L, q, k, v, *m: F.scaled_dot_product_attention(q, k, v, *m, is_causal=causal, scale=0.3), *args)


# ---------------------------------------------------------------- every formula runs

def _first_and_second_order(fn, *shapes, ints_at=None):
    """A graph through fn's node and, built with create_graph, its backward ops' nodes."""
    def make():
        gen = np.random.default_rng(0)
        ins = [ember.tensor(gen.uniform(0.5, 1.5, size=s).tolist(), dtype=ember.float64).reshape(s).requires_grad_()
               for s in shapes]
        out = fn(*ins)
        out = out[0] if isinstance(out, (tuple, list)) else out
        grads = ember.autograd.grad((out * out).sum(), ins, create_graph=True, allow_unused=True)
        return out.sum() + sum(g.sum() for g in grads if g is not None and g.requires_grad)
    return make


# For tests/test_autograd.py::test_every_derivative_is_exercised: graphs whose nodes cover
# every formula of the nn section of declarations/derivatives.yaml.
DERIVATIVE_GRAPHS = [
    _first_and_second_order(lambda x: EF.softmax(x, 1), (3, 4)),
    _first_and_second_order(lambda x: EF.log_softmax(x, 1), (3, 4)),
    _first_and_second_order(lambda x: EF.nll_loss(x, ember.tensor([0, 2, 1])), (3, 4)),
    _first_and_second_order(lambda x, y: EF.mse_loss(x, y), (3, 4), (3, 4)),
    _first_and_second_order(lambda x, y: EF.smooth_l1_loss(x, y, beta=0.5), (3, 4), (3, 4)),
    _first_and_second_order(lambda x, y: EF.huber_loss(x, y), (3, 4), (3, 4)),
    _first_and_second_order(lambda x, y: EF.binary_cross_entropy(x * 0.5, y * 0.5), (3, 4), (3, 4)),
    _first_and_second_order(lambda x, y: EF.binary_cross_entropy_with_logits(x, y), (3, 4), (3, 4)),
    *[_first_and_second_order(lambda x, n=name: getattr(EF, n)(x - 1.0), (3, 4))
      for name in ("gelu", "silu", "mish", "softplus", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardswish",
                   "hardsigmoid", "logsigmoid")],
    _first_and_second_order(lambda x, w, b: EF.conv2d(x, w, b, padding=1), (2, 3, 5, 5), (4, 3, 3, 3), (4,)),
    _first_and_second_order(lambda x: EF.max_pool2d(x, 2), (1, 2, 4, 4)),
    _first_and_second_order(lambda x: EF.adaptive_max_pool2d(x, 2), (1, 2, 4, 4)),
    _first_and_second_order(lambda x: EF.avg_pool2d(x, 2), (1, 2, 4, 4)),
    _first_and_second_order(lambda x: EF.adaptive_avg_pool2d(x, 3), (1, 2, 4, 4)),
    _first_and_second_order(lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True), (4, 3), (3,), (3,)),
    _first_and_second_order(lambda x, w, b: EF.layer_norm(x, (4,), w, b), (3, 4), (4,), (4,)),
    _first_and_second_order(lambda x, w, b: EF.group_norm(x, 2, w, b), (2, 4, 3), (4,), (4,)),
    _first_and_second_order(lambda x, w: EF.rms_norm(x, (4,), w), (3, 4), (4,)),
    _first_and_second_order(lambda w: EF.embedding(ember.tensor([0, 2, 2]), w), (3, 4)),
    _first_and_second_order(lambda x: EF.max_pool3d(x, 2), (1, 2, 4, 4, 4)),
    _first_and_second_order(lambda x: EF.adaptive_max_pool3d(x, 2), (1, 2, 4, 4, 4)),
    _first_and_second_order(lambda x: EF.avg_pool3d(x, 2), (1, 2, 4, 4, 4)),
    _first_and_second_order(lambda x: EF.adaptive_avg_pool3d(x, 3), (1, 2, 4, 4, 4)),
    # embedding_bag's and ctc_loss's backward ops have no derivative (neither has torch's)
    lambda: EF.embedding_bag(ember.tensor([0, 2, 2, 1]), ember.ones(3, 4, requires_grad=True),
                             ember.tensor([0, 2])).sum(),
    lambda: EF.ctc_loss(ember.full((4, 1, 3), -1.0986, requires_grad=True), ember.tensor([[1, 2]]), [4], [2]),
]


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_types_forward(dt):
    """float16/bfloat16 compute in float32 and round back, as torch's CPU kernels."""
    def half(fn):
        return lambda F, L, *xs: fn(F, L, *[x.to(getattr(L, dt)) for x in xs]).float()
    x4 = rand(2, 3, 6, 6, dtype="float32", grad=False)
    kw = dict(grad=False, rtol=2e-2, atol=2e-2)
    check(half(lambda F, L, x, w: F.conv2d(x, w, padding=1)), x4, rand(4, 3, 3, 3, dtype="float32", grad=False), **kw)
    check(half(lambda F, L, x: F.max_pool2d(x, 2)), x4, **kw)
    check(half(lambda F, L, x: F.avg_pool2d(x, 2)), x4, **kw)
    check(half(lambda F, L, x: F.adaptive_avg_pool2d(x, 4)), x4, **kw)
    check(half(lambda F, L, x: F.layer_norm(x, (6,))), x4, **kw)
    check(half(lambda F, L, x: F.group_norm(x, 3)), x4, **kw)
    check(half(lambda F, L, x: F.batch_norm(x, None, None, training=True)), x4, **kw)
    check(half(lambda F, L, x: F.softmax(x, 1)), x4, **kw)
    check(half(lambda F, L, x: F.gelu(x)), x4, **kw)
