"""Layers, ember.nn.functional, ember.nn.init and ember.nn.utils against torch: outputs and
gradients given the same inputs and weights (copied from torch through numpy),
state_dict names and shapes, reprs, errors; initializers by their distributions (ember's
random stream is its own)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember
from helpers import torch

import ember.nn as enn
import ember.nn.functional as EF
import torch.nn as tnn
import torch.nn.functional as TF


def to_ember(t):
    return ember.tensor(t.detach().numpy())


def assert_close(e, t, tol):
    assert e is not None and t is not None, (e, t)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert repr(e.dtype).split(".")[1] == repr(t.dtype).split(".")[1]
    np.testing.assert_allclose(e.detach().to(ember.float64).numpy(), t.detach().double().numpy(), rtol=tol, atol=tol)


# float32: torch's vectorized kernels and ember's round differently in the last bits
TOL = {"float64": 1e-12, "float32": 1e-5}


def run_both(t_fn, e_fn, inputs, dtype="float64", grad=True, tol=None):
    """t_fn(*torch tensors) vs e_fn(*ember tensors): outputs, then the gradients of
    (output * a fixed random weight).sum() with respect to every input."""
    tol = TOL[dtype] if tol is None else tol
    t_in = [torch.tensor(np.asarray(x), dtype=getattr(torch, dtype), requires_grad=grad) for x in inputs]
    e_in = [ember.tensor(np.asarray(x), dtype=getattr(ember, dtype), requires_grad=grad) for x in inputs]
    t_out, e_out = t_fn(*t_in), e_fn(*e_in)
    assert_close(e_out, t_out, tol)
    if grad:
        w = torch.tensor(np.random.default_rng(99).standard_normal(tuple(t_out.shape)), dtype=t_out.dtype)
        (t_out * w).sum().backward()
        (e_out * to_ember(w)).sum().backward()
        for e, t in zip(e_in, t_in):
            assert (e.grad is None) == (t.grad is None)
            if t.grad is not None:
                assert_close(e.grad, t.grad, tol)
    return e_out, t_out


# points where the piecewise activations change behaviour, plus large magnitudes
SPECIAL = [-100.0, -20.0, -6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 20.0, 21.0, 100.0]

ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
    ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}), ("gelu", {}), ("gelu", {"approximate": "tanh"}),
    ("silu", {}), ("mish", {}), ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 5.0}), ("tanh", {}),
    ("sigmoid", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 0.5}), ("hardswish", {}),
    ("hardsigmoid", {}), ("threshold", {"threshold": 0.5, "value": -2.0}), ("logsigmoid", {}), ("softsign", {}),
    ("tanhshrink", {}), ("hardshrink", {}), ("softshrink", {"lambd": 1.0}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kwargs", ACTIVATIONS, ids=[f"{n}-{'-'.join(map(str, k.values()))}"
                                                           for n, k in ACTIVATIONS])
def test_activation_functional(name, kwargs, dtype):
    gen = np.random.default_rng(0)
    x = np.concatenate([np.array(SPECIAL), gen.standard_normal(50) * 4])
    # torch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32
    tol = 1e-7 if (name, dtype) == ("hardsigmoid", "float64") else None
    run_both(lambda t: getattr(TF, name)(t, **kwargs), lambda e: getattr(EF, name)(e, **kwargs), [x], dtype, tol=tol)


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh",
                                  "hardswish", "hardsigmoid"])
def test_activation_inplace(name):
    x = np.linspace(-5, 5, 21)
    t, e = torch.tensor(x), ember.tensor(x)
    t_out, e_out = getattr(TF, name)(t, inplace=True), getattr(EF, name)(e, inplace=True)
    assert e_out is e and t_out is t
    assert_close(e, t, 1e-12)


def test_inplace_underscore_forms():
    x = np.linspace(-5, 5, 11)
    for name, args in (("relu_", ()), ("leaky_relu_", (0.3,)), ("elu_", ()), ("selu_", ()), ("celu_", ()),
                       ("hardtanh_", ()), ("threshold_", (0.0, 9.0))):
        t, e = torch.tensor(x), ember.tensor(x)
        getattr(TF, name)(t, *args)
        getattr(EF, name)(e, *args)
        assert_close(e, t, 1e-12)


def test_gelu_bad_approximation():
    for lib, F in ((torch, TF), (ember, EF)):
        with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
            F.gelu(lib.ones(2), approximate="exact")


def test_softplus_and_elu_have_no_nan_gradient_for_large_inputs():
    for fn in (EF.softplus, EF.elu, EF.selu, EF.mish, EF.celu):
        x = ember.tensor([1e4, -1e4, 88.0, 89.0], requires_grad=True)
        fn(x).sum().backward()
        assert not x.grad.isnan().any().item(), fn.__name__


# ---- activation modules: repr and forward ----

MODULES = [
    ("ReLU", ()), ("ReLU", (True,)), ("ReLU6", ()), ("ReLU6", (True,)), ("LeakyReLU", ()), ("LeakyReLU", (0.2, True)),
    ("ELU", ()), ("ELU", (0.5, True)), ("CELU", ()), ("SELU", ()), ("SELU", (True,)), ("GELU", ()), ("GELU", ("tanh",)),
    ("SiLU", ()), ("SiLU", (True,)), ("Mish", ()), ("Softplus", ()), ("Softplus", (2, 10)), ("Tanh", ()),
    ("Sigmoid", ()), ("Hardtanh", ()), ("Hardtanh", (-2, 2, True)), ("Hardswish", ()), ("Hardsigmoid", ()),
    ("Threshold", (0.1, 20)), ("LogSigmoid", ()), ("Softsign", ()), ("Tanhshrink", ()), ("Hardshrink", ()),
    ("Softshrink", (0.3,)), ("Identity", ()), ("Flatten", ()), ("Flatten", (0, 1)), ("Unflatten", (1, (2, 3))),
    ("Dropout", ()), ("Dropout", (0.2, True)), ("Dropout1d", ()), ("Dropout2d", ()), ("Dropout3d", (0.1,)),
]


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_simple_module_repr_state_and_forward(name, args):
    t_mod, e_mod = getattr(tnn, name)(*args), getattr(enn, name)(*args)
    assert repr(e_mod) == repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict()) == []
    t_mod.eval(), e_mod.eval()
    x = np.random.default_rng(1).standard_normal((2, 6, 3, 2))
    if name in ("Unflatten", "Dropout1d"):
        x = x.reshape(2, 6, 6)
    inplace = getattr(t_mod, "inplace", False)
    tol = 1e-7 if name == "Hardsigmoid" else None  # see test_activation_functional
    # an in-place module needs a non-leaf input
    run_both(lambda t: t_mod(t * 1 if inplace else t), lambda e: e_mod(e * 1 if inplace else e), [x], tol=tol)


def test_module_attributes_match_torch():
    for name, args in MODULES:
        t_mod, e_mod = getattr(tnn, name)(*args), getattr(enn, name)(*args)
        public = [k for k in vars(t_mod) if not k.startswith("_") and k != "training"]
        assert {k: getattr(e_mod, k) for k in public} == {k: getattr(t_mod, k) for k in public}, name


def test_hardtanh_checks_bounds():
    with pytest.raises(AssertionError):
        enn.Hardtanh(1.0, -1.0)
    with pytest.raises(AssertionError):
        tnn.Hardtanh(1.0, -1.0)
    assert enn.Hardtanh(min_value=-3.0, max_value=3.0).max_val == 3.0


def test_unflatten_errors():
    for nn in (tnn, enn):
        with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found element of type float"):
            nn.Unflatten(1, (2, 3.0))
        with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
            nn.Unflatten(1, 6)


# ---- Linear, Bilinear ----

@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 4), (0, 4)])
def test_linear(bias, shape):
    t_mod = tnn.Linear(4, 3, bias=bias).double()
    e_mod = enn.Linear(4, 3, bias=bias).double()
    assert repr(e_mod) == repr(t_mod)
    assert [(k, tuple(v.shape)) for k, v in e_mod.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in t_mod.state_dict().items()]
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    x = np.random.default_rng(2).standard_normal(shape)
    run_both(t_mod, e_mod, [x])
    for (name, ep), tp in zip(e_mod.named_parameters(), t_mod.parameters()):
        assert_close(ep.grad, tp.grad, 1e-12)


def test_linear_float32_and_functional_errors():
    t_mod = tnn.Linear(6, 5)
    e_mod = enn.Linear(6, 5)
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    run_both(t_mod, e_mod, [np.random.default_rng(3).standard_normal((7, 6))], dtype="float32", tol=1e-5)
    for lib, F in ((torch, TF), (ember, EF)):
        with pytest.raises(RuntimeError):
            F.linear(lib.ones(2, 3), lib.ones(4, 5))
        with pytest.raises(RuntimeError):
            F.linear(lib.ones(2, 3), lib.ones(4, 3), lib.ones(3))


def test_linear_initialization_distribution():
    ember.manual_seed(0)
    m = enn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # U(-a, a) has std a / sqrt(3)
    assert np.abs(b).max() <= bound and abs(w.mean()) < 0.01 * bound
    assert m.weight.requires_grad and m.weight.is_leaf
    ember.manual_seed(0)
    again = enn.Linear(400, 300)
    assert again.weight.tolist() == m.weight.tolist()  # reproducible under the seed
    assert enn.Linear(3, 2, dtype=ember.float64).weight.dtype == ember.float64


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [(4,), (), (2, 3)])
def test_bilinear(bias, batch):
    t_mod = tnn.Bilinear(3, 5, 2, bias=bias).double()
    e_mod = enn.Bilinear(3, 5, 2, bias=bias).double()
    assert repr(e_mod) == repr(t_mod)
    assert [(k, tuple(v.shape)) for k, v in e_mod.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in t_mod.state_dict().items()]
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    gen = np.random.default_rng(4)
    run_both(t_mod, e_mod, [gen.standard_normal(batch + (3,)), gen.standard_normal(batch + (5,))])
    assert_close(e_mod.weight.grad, t_mod.weight.grad, 1e-12)
    bound = 1 / math.sqrt(3)
    fresh = enn.Bilinear(3, 5, 2)
    assert fresh.weight.abs().max().item() <= bound and fresh.bias.abs().max().item() <= bound


def test_bilinear_errors_match_torch():
    cases = [((2, 3), (2, 4), (5, 3, 3), None), ((2, 3), (3, 4), (5, 3, 4), None), ((2, 3), (2, 4), (5, 3, 4), (4,)),
             ((2, 3), (4,), (5, 3, 4), None), ((3, 2), (2, 4), (5, 3, 4), None)]
    for s1, s2, sw, sb in cases:
        try:
            TF.bilinear(torch.ones(s1), torch.ones(s2), torch.ones(sw), None if sb is None else torch.ones(sb))
        except RuntimeError as exc:
            with pytest.raises(RuntimeError, match=str(exc)[:40].replace("(", r"\(").replace(")", r"\)")):
                EF.bilinear(ember.ones(s1), ember.ones(s2), ember.ones(sw), None if sb is None else ember.ones(sb))
        else:
            raise AssertionError(f"torch accepted {s1, s2, sw, sb}")


# ---- Embedding ----

def test_embedding_forward_backward_and_state():
    t_mod = tnn.Embedding(10, 4).double()
    e_mod = enn.Embedding(10, 4).double()
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    assert list(e_mod.state_dict()) == ["weight"] and repr(e_mod) == repr(t_mod)
    idx = [[1, 2, 2], [9, 0, 1]]
    t_out = t_mod(torch.tensor(idx))
    e_out = e_mod(ember.tensor(idx))
    assert_close(e_out, t_out, 0)
    w = torch.randn(t_out.shape, dtype=torch.float64)
    (t_out * w).sum().backward()
    (e_out * to_ember(w)).sum().backward()
    assert_close(e_mod.weight.grad, t_mod.weight.grad, 1e-12)
    assert e_mod(ember.tensor([3], dtype=ember.int32)).shape == (1, 4)
    assert e_mod(ember.tensor(5)).shape == (4,)


@pytest.mark.parametrize("padding_idx", [0, 3, -1])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_padding_and_frequency_scaling(padding_idx, scale_grad_by_freq):
    t_mod = tnn.Embedding(6, 3, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq).double()
    e_mod = enn.Embedding(6, 3, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq).double()
    assert repr(e_mod) == repr(t_mod) and e_mod.padding_idx == t_mod.padding_idx
    pad_row = e_mod.weight[e_mod.padding_idx].tolist()
    assert pad_row == [0.0, 0.0, 0.0]
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    idx = [[0, 3, 3, 5], [5, 5, 1, 0]]
    t_out, e_out = t_mod(torch.tensor(idx)), e_mod(ember.tensor(idx))
    assert_close(e_out, t_out, 0)
    w = torch.randn(t_out.shape, dtype=torch.float64)
    (t_out * w).sum().backward()
    (e_out * to_ember(w)).sum().backward()
    assert_close(e_mod.weight.grad, t_mod.weight.grad, 1e-12)


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renormalizes_in_place(norm_type):
    t_mod = tnn.Embedding(5, 3, max_norm=1.0, norm_type=norm_type).double()
    e_mod = enn.Embedding(5, 3, max_norm=1.0, norm_type=norm_type).double()
    with torch.no_grad():
        t_mod.weight.mul_(3)
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    idx = [1, 1, 4]
    assert_close(e_mod(ember.tensor(idx)), t_mod(torch.tensor(idx)), 1e-12)
    assert_close(e_mod.weight, t_mod.weight, 1e-12)  # rows 1 and 4 rescaled, the rest untouched
    assert repr(e_mod) == repr(t_mod)


def test_embedding_from_pretrained_and_errors():
    table = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    e = enn.Embedding.from_pretrained(ember.tensor(table))
    t = tnn.Embedding.from_pretrained(torch.tensor(table))
    assert repr(e) == repr(t) and e.weight.requires_grad is False
    assert enn.Embedding.from_pretrained(ember.tensor(table), freeze=False, padding_idx=1).weight.requires_grad
    assert e(ember.tensor([2])).tolist() == [[5.0, 6.0]]
    for nn, lib in ((tnn, torch), (enn, ember)):
        with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
            nn.Embedding.from_pretrained(lib.ones(3))
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            nn.Embedding(3, 2, padding_idx=3)
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            nn.Embedding(3, 2, padding_idx=-4)
        with pytest.raises(AssertionError, match="Shape of weight does not match"):
            nn.Embedding(3, 2, _weight=lib.ones(2, 2))
        with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the "
                                               "following scalar types: Long, Int; but got"):
            nn.Embedding(3, 2)(lib.ones(2))
        with pytest.raises(IndexError):
            nn.Embedding(3, 2)(lib.tensor([3]))
    sparse = enn.Embedding(4, 2, sparse=True)
    assert repr(sparse) == repr(tnn.Embedding(4, 2, sparse=True))


def test_embedding_initialization():
    ember.manual_seed(1)
    w = enn.Embedding(1000, 50).weight.detach().numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01


# ---- dropout ----

def test_dropout_statistics_and_modes():
    ember.manual_seed(0)
    x = ember.ones(200, 500)
    for p in (0.2, 0.5, 0.9):
        y = EF.dropout(x, p)
        kept = (y != 0).to(ember.float64).mean().item()
        assert abs(kept - (1 - p)) < 0.01
        assert abs(y.max().item() - 1 / (1 - p)) < 1e-5 and y[y != 0].min().item() == y.max().item()
    assert EF.dropout(x, 0.5, training=False) is x and EF.dropout(x, 0.0) is x
    assert EF.dropout(x, 1.0).abs().sum().item() == 0
    m = enn.Dropout(0.5)
    assert (m(x) == 0).any().item() and m.eval()(x) is x
    z = ember.ones(10)
    assert EF.dropout(z, 0.5, inplace=True) is z and (z == 0).any().item()
    for lib, F in ((torch, TF), (ember, EF)):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            F.dropout(lib.ones(2), 1.5)
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
            F.dropout2d(lib.ones(2, 2, 2, 2), -0.1)


def test_dropout_gradient_is_the_mask():
    x = ember.ones(1000, requires_grad=True)
    y = EF.dropout(x, 0.3)
    y.sum().backward()
    assert x.grad.tolist() == y.detach().tolist()


@pytest.mark.parametrize("fn, shape", [("dropout1d", (4, 8, 50)), ("dropout1d", (8, 50)), ("dropout2d", (4, 8, 5, 5)),
                                       ("dropout3d", (4, 8, 2, 3, 3)), ("dropout3d", (8, 2, 3, 3))])
def test_channel_dropout_zeroes_whole_channels(fn, shape):
    ember.manual_seed(0)
    y = getattr(EF, fn)(ember.ones(shape), 0.5)
    spatial = {"dropout1d": 1, "dropout2d": 2, "dropout3d": 3}[fn]
    values = y.numpy().reshape(-1, int(np.prod(shape[-spatial:])))  # one row per channel
    assert all(len(set(row.tolist())) == 1 for row in values)  # each channel all 0 or all 2
    assert set(np.unique(values).tolist()) == {0.0, 2.0}


def test_channel_dropout_errors_and_warnings():
    for lib, F in ((torch, TF), (ember, EF)):
        with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
            F.dropout1d(lib.ones(2, 2, 2, 2))
        with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d"):
            F.dropout2d(lib.ones(2, 2, 2))
        with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d"):
            F.dropout2d(lib.ones(2, 2))
        with pytest.warns(UserWarning, match=r"Note that dropout3d exists .* \(i.e. 4D or 5D inputs\)"):
            F.dropout3d(lib.ones(2, 2, 2))


# ---- one_hot, normalize, pad ----

def test_one_hot():
    for data, n in (([0, 2, 1], -1), ([[1], [3]], 5), (3, 4), ([], 3), ([[0, 1], [1, 0]], 2)):
        t = TF.one_hot(torch.tensor(data, dtype=torch.long), n)
        e = EF.one_hot(ember.tensor(data, dtype=ember.int64), n)
        assert tuple(e.shape) == tuple(t.shape) and e.dtype == ember.int64 and e.tolist() == t.tolist()
    bad = [(lambda lib: lib.tensor([1.0, 2.0]), -1), (lambda lib: lib.tensor([1, 2], dtype=lib.int32), -1),
           (lambda lib: lib.tensor([], dtype=lib.int64), -1), (lambda lib: lib.tensor([-1, 2]), -1),
           (lambda lib: lib.tensor([1, 5]), 3), (lambda lib: lib.tensor([1, 2]), 0),
           (lambda lib: lib.tensor([1, 2]), 3.0)]
    for make, n in bad:
        with pytest.raises(Exception) as t_err:
            TF.one_hot(make(torch), n)
        with pytest.raises(t_err.type) as e_err:
            EF.one_hot(make(ember), n)
        assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("p, dim", [(2.0, 1), (1.0, 0), (3.0, -1), (float("inf"), 1)])
def test_normalize(p, dim):
    x = np.random.default_rng(5).standard_normal((4, 5))
    x[0] = 0  # rows of zeros hit eps
    run_both(lambda t: TF.normalize(t, p, dim), lambda e: EF.normalize(e, p, dim), [x])


def test_normalize_out():
    out = ember.empty(2, 2)
    EF.normalize(ember.tensor([[3.0, 4.0], [0.0, 2.0]]), out=out)
    assert out.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 1.0]]


PADS = [
    ((3, 4), (1, 2), "constant", None), ((3, 4), (1, 2, 0, 1), "constant", 2.5), ((2, 3, 4), (-1, 1, 2, -1), "constant",
                                                                                 0.0),
    ((3, 4), (0, 0), "constant", None), ((2, 3, 4), (1, 1, 1, 1, 1, 1), "constant", -1.0),
    ((2, 3, 5), (2, 1), "reflect", None), ((1, 2, 4, 5), (1, 2, 3, 0), "reflect", None),
    ((2, 3, 5), (2, 4), "replicate", None), ((1, 2, 3, 3), (1, 1, 2, 2), "replicate", None),
    ((2, 3, 5), (2, 3), "circular", None), ((1, 2, 3, 4), (1, 2, 3, 1), "circular", None),
    ((3, 4), (1, 1), "reflect", None), ((1, 1, 2, 2, 2), (1, 1, 1, 1, 1, 1), "replicate", None),
]


@pytest.mark.parametrize("shape, pad, mode, value", PADS)
def test_pad(shape, pad, mode, value):
    x = np.random.default_rng(6).standard_normal(shape)
    run_both(lambda t: TF.pad(t, pad, mode, value), lambda e: EF.pad(e, pad, mode, value), [x])


def test_pad_integer_input_and_errors():
    x = [[1, 2], [3, 4]]
    assert EF.pad(ember.tensor(x), (1, 1), value=7).tolist() == TF.pad(torch.tensor(x), (1, 1), value=7).tolist()
    assert EF.pad(ember.tensor(x), (1, 1)).dtype == ember.int64
    cases = [((2, 3), (1,), "constant", None), ((2, 3), (1, 1, 1, 1, 1, 1), "constant", None),
             ((2, 3), (-2, -2), "constant", None), ((1, 2, 3), (3, 1), "reflect", None),
             ((1, 2, 3), (1, 1), "foo", None), ((1, 2, 3), (1, 1), "reflect", 1.0)]
    for shape, pad, mode, value in cases:
        with pytest.raises(Exception) as t_err:
            TF.pad(torch.ones(shape), pad, mode, value)
        with pytest.raises(t_err.type) as e_err:
            EF.pad(ember.ones(shape), pad, mode, value)
        assert str(e_err.value) == str(t_err.value)


# ---- nn.init ----

def test_calculate_gain_and_fans():
    for args in (("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                 ("leaky_relu", 1), ("selu",)):
        assert enn.init.calculate_gain(*args) == tnn.init.calculate_gain(*args)
    for args in (("foo",), ("leaky_relu", "x"), ("leaky_relu", True)):
        with pytest.raises(ValueError) as t_err:
            tnn.init.calculate_gain(*args)
        with pytest.raises(ValueError, match=str(t_err.value)):
            enn.init.calculate_gain(*args)
    for shape in ((3, 5), (4, 2, 3, 3), (6, 1, 7), (2, 3, 0)):
        assert enn.init._calculate_fan_in_and_fan_out(ember.empty(shape)) == \
            tnn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
        enn.init._calculate_fan_in_and_fan_out(ember.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
        enn.init.kaiming_uniform_(ember.empty(2, 2), mode="fan_avg")


def stats(t):
    a = t.detach().to(ember.float64).numpy()
    return a.min(), a.max(), a.mean(), a.std()


@pytest.mark.parametrize("case", ["uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                  "kaiming_uniform_fan_out", "kaiming_normal", "kaiming_normal_relu", "trunc_normal"])
def test_random_initializers_follow_their_distribution(case):
    shape = (300, 200, 3)
    fan_in, fan_out = 200 * 3, 300 * 3
    w = ember.empty(shape, requires_grad=True)
    init = enn.init
    if case == "uniform":
        out, low, high, std = init.uniform_(w, -2.0, 3.0), -2.0, 3.0, 5 / math.sqrt(12)
    elif case == "normal":
        out, low, high, std = init.normal_(w, 1.0, 0.5), None, None, 0.5
    elif case == "xavier_uniform":
        bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
        out, low, high, std = init.xavier_uniform_(w, gain=2.0), -bound, bound, bound / math.sqrt(3)
    elif case == "xavier_normal":
        out, low, high, std = init.xavier_normal_(w), None, None, math.sqrt(2 / (fan_in + fan_out))
    elif case == "kaiming_uniform":
        bound = math.sqrt(2 / (1 + 0.1**2)) * math.sqrt(3 / fan_in)
        out, low, high, std = init.kaiming_uniform_(w, a=0.1), -bound, bound, bound / math.sqrt(3)
    elif case == "kaiming_uniform_fan_out":
        bound = math.sqrt(2) * math.sqrt(3 / fan_out)
        out, low, high, std = (init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"), -bound, bound,
                               bound / math.sqrt(3))
    elif case == "kaiming_normal":
        out, low, high, std = init.kaiming_normal_(w), None, None, math.sqrt(2 / 1.0001) / math.sqrt(fan_in)
    elif case == "kaiming_normal_relu":
        out, low, high, std = (init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"), None, None,
                               math.sqrt(2 / fan_out))
    else:
        # N(0.5, 1) truncated to [-1, 1.5]: mean and std are compared with torch's draws below
        out, low, high, std = init.trunc_normal_(w, mean=0.5, std=1.0, a=-1.0, b=1.5), -1.0, 1.5, None
    assert out is w and w.is_leaf and w.requires_grad
    lo, hi, mean, sd = stats(w)
    if low is not None:
        assert low <= lo and hi <= high and lo < low + 0.01 * (high - low) and hi > high - 0.01 * (high - low)
    if std is not None:
        assert abs(sd - std) < 0.01 * std
    if case == "normal":
        assert abs(mean - 1.0) < 0.01
    if case == "trunc_normal":
        ref = torch.empty(shape, dtype=torch.float64)
        torch.nn.init.trunc_normal_(ref, mean=0.5, std=1.0, a=-1.0, b=1.5)
        assert abs(mean - ref.mean().item()) < 0.01 and abs(sd - ref.std().item()) < 0.01


def test_initializers_take_a_generator():
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    for fn in (enn.init.uniform_, enn.init.normal_, enn.init.xavier_uniform_, enn.init.kaiming_normal_,
               enn.init.trunc_normal_, enn.init.orthogonal_):
        a, b = fn(ember.empty(4, 5), generator=g1), fn(ember.empty(4, 5), generator=g2)
        assert a.tolist() == b.tolist(), fn.__name__


def test_deterministic_initializers_match_torch():
    for fn, shape, args in ((enn.init.constant_, (2, 3), (0.25,)), (enn.init.zeros_, (2, 3), ()),
                            (enn.init.ones_, (3,), ()), (enn.init.eye_, (3, 5), ()), (enn.init.eye_, (4, 2), ()),
                            (enn.init.dirac_, (4, 2, 3), ()), (enn.init.dirac_, (6, 3, 3, 3), (2,)),
                            (enn.init.dirac_, (2, 2, 1, 3, 3), ())):
        t = getattr(tnn.init, fn.__name__)(torch.empty(shape), *args)
        e = fn(ember.empty(shape, requires_grad=True), *args)
        assert e.tolist() == t.tolist() and e.is_leaf, fn.__name__
    for fn, shape in ((enn.init.eye_, (2, 2, 2)), (enn.init.dirac_, (2, 2)), (enn.init.orthogonal_, (3,))):
        with pytest.raises(ValueError) as t_err:
            getattr(tnn.init, fn.__name__)(torch.empty(shape))
        with pytest.raises(ValueError, match=str(t_err.value)):
            fn(ember.empty(shape))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        enn.init.dirac_(ember.empty(3, 2, 3), groups=2)


@pytest.mark.parametrize("shape, gain", [((5, 5), 1.0), ((3, 7), 2.0), ((7, 3), 1.0), ((4, 2, 3), 0.5)])
def test_orthogonal(shape, gain):
    w = enn.init.orthogonal_(ember.empty(shape, dtype=ember.float64), gain=gain)
    flat = w.detach().reshape(shape[0], -1).numpy()
    gram = flat @ flat.T if shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, gain**2 * np.eye(gram.shape[0]), atol=1e-12)


def test_empty_tensors_and_warnings():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
        with pytest.warns(UserWarning, match="mean is more than 2 std from"):
            lib.nn.init.trunc_normal_(lib.empty(3), mean=10.0)
    assert enn.init.orthogonal_(ember.empty(0, 3)).shape == (0, 3)


def test_sparse_init():
    w = enn.init.sparse_(ember.empty(10, 6), sparsity=0.3, std=0.5)
    zeros_per_column = (w == 0).sum(0).tolist()
    assert zeros_per_column == [3] * 6


# ---- nn.utils ----

def grads_pair(shapes, seed=0):
    gen = np.random.default_rng(seed)
    t_params, e_params = [], []
    for shape in shapes:
        g = gen.standard_normal(shape)
        tp, ep = tnn.Parameter(torch.zeros(shape, dtype=torch.float64)), enn.Parameter(
            ember.zeros(shape, dtype=ember.float64))
        tp.grad, ep.grad = torch.tensor(g), ember.tensor(g)
        t_params.append(tp), e_params.append(ep)
    return t_params, e_params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(norm_type, max_norm):
    t_params, e_params = grads_pair([(3, 4), (5,), ()])
    t_total = tnn.utils.clip_grad_norm_(t_params, max_norm, norm_type)
    e_total = enn.utils.clip_grad_norm_(iter(e_params), max_norm, norm_type)  # any iterable
    assert_close(e_total, t_total, 1e-12)
    for e, t in zip(e_params, t_params):
        assert_close(e.grad, t.grad, 1e-12)


def test_clip_grad_norm_edge_cases():
    assert enn.utils.clip_grad_norm_([enn.Parameter(ember.ones(2))], 1.0).item() == 0.0
    single = enn.Parameter(ember.zeros(2))
    single.grad = ember.tensor([3.0, 4.0])
    assert enn.utils.clip_grad_norm_(single, 1.0).item() == 5.0
    bad = enn.Parameter(ember.zeros(2))
    bad.grad = ember.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        enn.utils.clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
    assert enn.utils.clip_grad_norm_([bad], 1.0).isnan().item()


def test_clip_grad_value_and_vector_conversions():
    t_params, e_params = grads_pair([(3, 4), (5,)], seed=1)
    assert tnn.utils.clip_grad_value_(t_params, 0.5) is None and enn.utils.clip_grad_value_(e_params, 0.5) is None
    for e, t in zip(e_params, t_params):
        assert_close(e.grad, t.grad, 0)
    t_mod, e_mod = tnn.Linear(3, 2), enn.Linear(3, 2)
    e_mod.load_state_dict({k: to_ember(v) for k, v in t_mod.state_dict().items()})
    t_vec = tnn.utils.parameters_to_vector(t_mod.parameters())
    e_vec = enn.utils.parameters_to_vector(e_mod.parameters())
    assert_close(e_vec, t_vec, 0)
    enn.utils.vector_to_parameters(ember.arange(8.0), e_mod.parameters())
    assert e_mod.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and e_mod.bias.tolist() == [6.0, 7.0]
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        enn.utils.vector_to_parameters([1.0], e_mod.parameters())
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        tnn.utils.vector_to_parameters([1.0], t_mod.parameters())


# ---- a small model end to end ----

def test_mlp_forward_backward_matches_torch():
    def build(nn):
        return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 16), nn.SiLU(), nn.Dropout(0.0),
                             nn.Linear(16, 4), nn.Tanh())

    t_net, e_net = build(tnn).double(), build(enn).double()
    e_net.load_state_dict({k: to_ember(v) for k, v in t_net.state_dict().items()})
    x = np.random.default_rng(7).standard_normal((5, 8))
    run_both(t_net, e_net, [x])
    for (name, ep), tp in zip(e_net.named_parameters(), t_net.parameters()):
        assert_close(ep.grad, tp.grad, 1e-12)
