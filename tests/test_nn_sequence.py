"""Sequence layers against torch.nn: MultiheadAttention, the transformer layers and model,
RNN/LSTM/GRU and their cells, nn.utils.rnn, scaled_dot_product_attention.

Each parity test builds the same module in both libraries, loads torch's state_dict into
ember (through numpy), runs both on the same inputs (dropout off: eval mode) and compares
outputs, then the gradients of (outputs * fixed random weights).sum() with respect to
every input and every parameter. Dropout itself is checked in train mode by shapes and
statistics only (ember's random stream is its own)."""
from __future__ import annotations

import doctest
import importlib
import math
import warnings

import numpy as np
import pytest

import ember
from helpers import torch

import ember.nn as enn
import ember.nn.functional as EF
import torch.nn as tnn

LIBS = {"torch": torch, "ember": ember}


@pytest.fixture(autouse=True, scope="module")
def torch_single_threaded():
    """torch's thread pool spins: on these tiny sizes, with a busy neighbour, its RNN and
    attention ops run 50x slower than on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
# float32: the two libraries' kernels round differently in the last bits
TOL = {"float64": 1e-10, "float32": 1e-5}


class Const:
    """An input that takes no gradient (masks, lengths)."""

    def __init__(self, value):
        self.value = np.asarray(value)


def to_lib(lib, value, dtype, grad):
    if isinstance(value, Const):
        arr = value.value
        if arr.dtype == np.bool_:
            return lib.tensor(arr)
        if arr.dtype.kind in "iu":
            return lib.tensor(arr, dtype=lib.int64)
        return lib.tensor(arr, dtype=getattr(lib, dtype))
    if value is None:
        return None
    return lib.tensor(np.asarray(value), dtype=getattr(lib, dtype), requires_grad=grad)


def flat(out):
    """The tensors of a nested result (tuples, PackedSequences), None kept in place."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def assert_close(e, t, tol, what="output"):
    if t is None:
        assert e is None, f"{what}: expected None"
        return
    assert e is not None, f"{what}: got None, torch has a tensor"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != torch's {tuple(t.shape)}"
    assert repr(e.dtype).split(".")[1] == repr(t.dtype).split(".")[1], f"{what}: dtype {e.dtype} vs {t.dtype}"
    if t.dtype in (torch.int64, torch.bool):
        assert e.tolist() == t.tolist(), what
        return
    np.testing.assert_allclose(e.detach().to(ember.float64).numpy(), t.detach().double().numpy(), rtol=tol,
                               atol=tol, err_msg=what)


def load_from(t_mod, e_mod):
    """torch's parameters and buffers into ember's module (state_dict keys must agree)."""
    t_state = t_mod.state_dict()
    assert list(e_mod.state_dict().keys()) == list(t_state.keys())
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_state.items()})


def pair(factory, dtype="float64", train=False):
    """factory(lib.nn) built in both libraries, ember's holding torch's weights."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod = factory(tnn).to(getattr(torch, dtype))
        e_mod = factory(enn).to(getattr(ember, dtype))
    load_from(t_mod, e_mod)
    t_mod.train(train)
    e_mod.train(train)
    return t_mod, e_mod


def compare(t_mod, e_mod, inputs, call=None, dtype="float64", grad=True, tol=None):
    """call(module, *inputs) in both libraries: outputs, then input and parameter grads."""
    tol = TOL[dtype] if tol is None else tol
    call = call or (lambda m, *xs: m(*xs))
    t_in = [to_lib(torch, x, dtype, grad) for x in inputs]
    e_in = [to_lib(ember, x, dtype, grad) for x in inputs]
    t_out, e_out = flat(call(t_mod, *t_in)), flat(call(e_mod, *e_in))
    assert len(t_out) == len(e_out)
    for i, (e, t) in enumerate(zip(e_out, t_out)):
        assert_close(e, t, tol, f"output {i}")
    if not grad:
        return e_out, t_out
    gen = np.random.default_rng(7)
    t_loss, e_loss = 0, 0
    for e, t in zip(e_out, t_out):
        if t is None or not t.requires_grad:
            continue
        w = gen.standard_normal(tuple(t.shape))
        w = np.where(np.isnan(t.detach().numpy()), 0.0, w)
        t_loss = t_loss + (t.nan_to_num(0.0) * torch.tensor(w, dtype=t.dtype)).sum()
        e_loss = e_loss + (e.nan_to_num(0.0) * ember.tensor(w, dtype=e.dtype)).sum()
    t_loss.backward()
    e_loss.backward()
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        if t is not None and t.requires_grad:
            assert_close(e.grad, t.grad, tol, f"grad of input {i}")
    e_params = dict(e_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        assert_close(e_params[name].grad, p.grad, tol, f"grad of {name}")
    return e_out, t_out


def rand(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def bool_mask(*shape, seed=1, p=0.3):
    return Const(np.random.default_rng(seed).uniform(size=shape) < p)


def float_mask(*shape, seed=2):
    m = np.random.default_rng(seed).standard_normal(shape)
    m[np.random.default_rng(seed + 1).uniform(size=shape) < 0.2] = -np.inf
    return Const(m)


def padding_mask(lengths, total):
    return Const(np.arange(total)[None, :] >= np.asarray(lengths)[:, None])


def causal_mask(n):
    return Const(np.triu(np.full((n, n), -np.inf), 1))


def same_error(fn):
    """fn(lib) raises in torch; ember must raise the same exception type."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as t_exc:
            fn(torch)
        with pytest.raises(type(t_exc.value)):
            fn(ember)


def same_warnings(fn):
    """The warning messages fn(lib) emits, torch's and ember's (names mapped)."""
    got = {}
    for name, lib in LIBS.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(lib)
        got[name] = [str(w.message).replace("ember", "torch") for w in caught]
    assert got["ember"] == got["torch"]
    return got["torch"]


# ---------------------------------------------------------------- scaled_dot_product_attention

def sdpa_case(lib, dtype):
    q = lib.tensor(rand(2, 3, 4, 8), dtype=dtype, requires_grad=True)
    k = lib.tensor(rand(2, 3, 5, 8, seed=1), dtype=dtype, requires_grad=True)
    v = lib.tensor(rand(2, 3, 5, 6, seed=2), dtype=dtype, requires_grad=True)
    return q, k, v


@pytest.mark.parametrize("mask", ["bool", "float"])
def test_sdpa_fully_masked_rows_give_zeros(mask):
    """A query that may attend to nothing gets zeros and no gradient (torch's safe softmax)."""
    m = np.random.default_rng(3).uniform(size=(4, 5)) > 0.3
    m[1] = False
    results = {}
    for name, lib in LIBS.items():
        q, k, v = sdpa_case(lib, lib.float64)
        mk = lib.tensor(m) if mask == "bool" else lib.tensor(np.where(m, 0.0, -np.inf))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, mk)
        (out * lib.tensor(rand(*out.shape, seed=4))).sum().backward()
        results[name] = [out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()]
    for e, t in zip(results["ember"], results["torch"]):
        assert not np.isnan(e).any()
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10)
    assert (results["ember"][0][:, :, 1] == 0).all()


def test_sdpa_gqa_and_causal():
    results = {}
    for name, lib in LIBS.items():
        q = lib.tensor(rand(2, 6, 4, 8), dtype=lib.float64)
        k = lib.tensor(rand(2, 3, 7, 8, seed=1), dtype=lib.float64)
        v = lib.tensor(rand(2, 1, 7, 5, seed=2), dtype=lib.float64)
        F = lib.nn.functional
        results[name] = [F.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True).numpy(),
                         F.scaled_dot_product_attention(q[0], k[0], v[0], enable_gqa=True, scale=0.2).numpy()]
    for e, t in zip(results["ember"], results["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10)


def test_sdpa_dropout():
    q = ember.tensor(rand(2, 2, 64, 8), dtype=ember.float32)
    v = ember.ones(2, 2, 64, 8)
    assert EF.scaled_dot_product_attention(q, q, v, dropout_p=1.0).abs().max().item() == 0.0
    out = EF.scaled_dot_product_attention(q, q, v, dropout_p=0.25)
    # each output is sum(kept weights) / 0.75: its mean over many queries is about 1
    assert abs(out.mean().item() - 1.0) < 0.05
    assert out.shape == (2, 2, 64, 8)


@pytest.mark.parametrize("case", ["gqa_indivisible", "dtypes", "int_mask", "double_mask", "rank1", "causal_and_mask",
                                  "dropout_above_1"])
def test_sdpa_errors(case):
    def fn(lib):
        F = lib.nn.functional
        q, k, v = lib.ones(2, 4, 3, 8), lib.ones(2, 3, 5, 8), lib.ones(2, 3, 5, 8)
        if case == "gqa_indivisible":
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        q = lib.ones(2, 3, 3, 8)
        if case == "dtypes":
            return F.scaled_dot_product_attention(q, k.double(), v)
        if case == "int_mask":
            return F.scaled_dot_product_attention(q, k, v, lib.ones(3, 5, dtype=lib.int64))
        if case == "double_mask":
            return F.scaled_dot_product_attention(q, k, v, lib.zeros(3, 5, dtype=lib.float64))
        if case == "rank1":
            return F.scaled_dot_product_attention(lib.ones(8), k[0, 0], v[0, 0])
        if case == "causal_and_mask":
            # (torch's fused kernels, taken when v's head dim equals q's, ignore the mask instead; its docs and
            # its reference path raise, as ember does)
            return F.scaled_dot_product_attention(q, k, v[..., :6], lib.ones(3, 5, dtype=lib.bool), is_causal=True)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
    same_error(fn)


# ---------------------------------------------------------------- MultiheadAttention

def mha(E=8, H=2, **kw):
    return lambda nn: nn.MultiheadAttention(E, H, **kw)


def attend(kind="self", **kw):
    """call(module, q, [k, v,] *masks) with the masks named in kw's order."""
    names = list(kw.get("masks", ()))
    opts = {k: v for k, v in kw.items() if k != "masks"}

    def call(m, *xs):
        if kind == "self":
            q, rest = xs[0], xs[1:]
            k = v = q
        elif kind == "kv":
            q, k, rest = xs[0], xs[1], xs[2:]
            v = k
        else:
            q, k, v, rest = xs[0], xs[1], xs[2], xs[3:]
        return m(q, k, v, **dict(zip(names, rest)), **opts)
    return call


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
def test_mha_self_attention(dtype, batch_first, need_weights, average):
    t, e = pair(mha(batch_first=batch_first), dtype)
    compare(t, e, [rand(5, 3, 8)], attend(need_weights=need_weights, average_attn_weights=average), dtype)


@pytest.mark.parametrize("kind", ["kv", "qkv"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_cross_attention(kind, batch_first):
    t, e = pair(mha(batch_first=batch_first))
    inputs = [rand(4, 3, 8), rand(6, 3, 8, seed=1)] + ([rand(6, 3, 8, seed=2)] if kind == "qkv" else [])
    if batch_first:
        inputs = [x.transpose(1, 0, 2) for x in inputs]
    compare(t, e, inputs, attend(kind))
    compare(t, e, inputs, attend(kind, need_weights=False))


@pytest.mark.parametrize("bias", [True, False])
def test_mha_kdim_vdim(bias):
    t, e = pair(mha(8, 4, kdim=5, vdim=3, bias=bias))
    assert e.in_proj_weight is None and e.q_proj_weight.shape == (8, 8) and e.k_proj_weight.shape == (8, 5)
    inputs = [rand(4, 2, 8), rand(6, 2, 5, seed=1), rand(6, 2, 3, seed=2)]
    compare(t, e, inputs, attend("qkv"))
    compare(t, e, inputs, attend("qkv", need_weights=False))


MASKS = {
    "attn_bool": lambda L, S, N, H: {"attn_mask": bool_mask(L, S)},
    "attn_float": lambda L, S, N, H: {"attn_mask": float_mask(L, S)},
    "attn_3d_bool": lambda L, S, N, H: {"attn_mask": bool_mask(N * H, L, S)},
    "attn_3d_float": lambda L, S, N, H: {"attn_mask": float_mask(N * H, L, S)},
    "kpm_bool": lambda L, S, N, H: {"key_padding_mask": padding_mask([S, S - 2, 1], S)},
    "kpm_float": lambda L, S, N, H: {"key_padding_mask": Const(np.where(padding_mask([S, 2, S - 1], S).value,
                                                                         -np.inf, 0.0))},
    "both_bool": lambda L, S, N, H: {"attn_mask": bool_mask(L, S, p=0.2),
                                     "key_padding_mask": padding_mask([S, S - 1, 3], S)},
    "both_float": lambda L, S, N, H: {"attn_mask": float_mask(N * H, L, S),
                                      "key_padding_mask": Const(rand(N, S, seed=9))},
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("masks", list(MASKS))
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_masks(masks, need_weights, dtype):
    L = S = 5
    N, H = 3, 2
    kw = MASKS[masks](L, S, N, H)
    t, e = pair(mha(8, H), dtype)
    compare(t, e, [rand(L, N, 8), *kw.values()], attend(masks=kw, need_weights=need_weights), dtype)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_kpm", [False, True])
def test_mha_is_causal(need_weights, with_kpm):
    t, e = pair(mha(8, 2, batch_first=True))
    kw = {"attn_mask": causal_mask(6)}
    if with_kpm:
        kw["key_padding_mask"] = padding_mask([6, 4], 6)
    compare(t, e, [rand(2, 6, 8), *kw.values()], attend(masks=kw, need_weights=need_weights, is_causal=True))


@pytest.mark.parametrize("add_bias_kv, add_zero_attn", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_bias_kv_zero_attn(add_bias_kv, add_zero_attn, need_weights):
    t, e = pair(mha(8, 2, add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn))
    kw = {"attn_mask": bool_mask(4, 4), "key_padding_mask": padding_mask([4, 2], 4)}
    compare(t, e, [rand(4, 2, 8), *kw.values()], attend(masks=kw, need_weights=need_weights))


@pytest.mark.parametrize("need_weights, average", [(True, True), (True, False), (False, True)])
def test_mha_unbatched(need_weights, average):
    t, e = pair(mha(8, 2, batch_first=True))
    compare(t, e, [rand(5, 8)], attend(need_weights=need_weights, average_attn_weights=average))
    kw = {"attn_mask": bool_mask(2, 5, 5), "key_padding_mask": padding_mask([3], 5).value[0]}
    kw["key_padding_mask"] = Const(kw["key_padding_mask"])
    compare(t, e, [rand(5, 8), rand(5, 8, seed=1), *kw.values()], attend("kv", masks=kw, need_weights=need_weights))


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_masked_rows(need_weights):
    """torch gives NaN rows with need_weights (plain softmax), zeros without (attention's
    safe softmax); so does ember."""
    t, e = pair(mha(8, 2))
    kpm = Const(np.array([[False] * 5, [True] * 5]))
    e_out, _ = compare(t, e, [rand(5, 2, 8), kpm], attend(masks=["key_padding_mask"],
                                                           need_weights=need_weights))
    assert bool(e_out[0][:, 1].isnan().all()) == need_weights


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_inference(need_weights):
    """Eval mode without gradients: torch takes its fused path; the values agree."""
    t, e = pair(mha(8, 2, batch_first=True))
    kw = {"key_padding_mask": padding_mask([5, 3, 4], 5)}
    with torch.no_grad(), ember.no_grad():
        compare(t, e, [rand(3, 5, 8), *kw.values()], attend(masks=kw, need_weights=need_weights), grad=False)


def test_mha_state_dict_repr_and_init():
    for kw in [{}, {"add_bias_kv": True}, {"kdim": 4, "vdim": 6, "bias": False}, {"batch_first": True}]:
        t, e = pair(mha(8, 2, **kw))
        assert repr(e) == repr(t)
        assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    m = enn.MultiheadAttention(64, 4)
    bound = math.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ over the (3E, E) in_proj_weight
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert m.in_proj_bias.abs().max().item() == 0 and m.out_proj.bias.abs().max().item() == 0
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear" and isinstance(m.out_proj, enn.Linear)
    assert (m.head_dim, m.batch_first, m._qkv_same_embed_dim, m.dropout) == (16, False, True, 0.0)
    assert enn.MultiheadAttention(8, 2, add_bias_kv=True).bias_k.shape == (1, 1, 8)


def test_mha_dropout_train_mode():
    m = enn.MultiheadAttention(16, 2, dropout=0.5)
    x = ember.tensor(rand(64, 4, 16), dtype=ember.float32)
    out, weights = m(x, x, x, average_attn_weights=False)
    assert out.shape == (64, 4, 16) and weights.shape == (4, 2, 64, 64)
    zeros = (weights == 0).to(ember.float64).mean().item()
    assert abs(zeros - 0.5) < 0.02
    # kept weights are scaled by 1 / (1 - p): rows still sum to 1 on average
    assert abs(weights.sum(-1).mean().item() - 1.0) < 0.05
    m.eval()
    a, b = m(x, x, x)[0], m(x, x, x)[0]
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("case", [
    "not_divisible", "zero_dim", "zero_heads", "mask_2d_shape", "mask_3d_shape", "mask_4d", "kpm_shape", "kpm_rank",
    "int_mask", "int_kpm", "embed_dim", "kv_shapes", "kv_batch", "value_rank", "unbatched_key_rank", "query_rank",
    "unbatched_mask_3d", "causal_without_mask", "kdim_value_width", "kdim_key_width"])
def test_mha_errors(case):
    def fn(lib):
        nn = lib.nn
        if case == "not_divisible":
            return nn.MultiheadAttention(8, 3)
        if case == "zero_dim":
            return nn.MultiheadAttention(0, 2)
        if case == "zero_heads":
            return nn.MultiheadAttention(8, 0)
        m = nn.MultiheadAttention(8, 2)
        x = lib.ones(5, 2, 8)
        args = {
            "mask_2d_shape": dict(attn_mask=lib.ones(5, 4, dtype=lib.bool)),
            "mask_3d_shape": dict(attn_mask=lib.ones(3, 5, 5, dtype=lib.bool)),
            "mask_4d": dict(attn_mask=lib.ones(1, 1, 5, 5, dtype=lib.bool)),
            "kpm_shape": dict(key_padding_mask=lib.ones(2, 4, dtype=lib.bool)),
            "kpm_rank": dict(key_padding_mask=lib.ones(2, dtype=lib.bool)),
            "int_mask": dict(attn_mask=lib.ones(5, 5, dtype=lib.int64)),
            "int_kpm": dict(key_padding_mask=lib.zeros(2, 5, dtype=lib.int64)),
            "causal_without_mask": dict(is_causal=True),
        }
        if case in args:
            return m(x, x, x, **args[case])
        if case == "embed_dim":
            return m(lib.ones(5, 2, 4), x, x)
        if case == "kv_shapes":
            return m(x, x[:4], x)
        if case == "kv_batch":
            return m(x, x[:, :1], x)
        if case == "value_rank":
            return m(x, x, x[0])
        if case == "unbatched_key_rank":
            return m(x[0], x, x)
        if case == "query_rank":
            return m(x.unsqueeze(0), x, x)
        if case == "unbatched_mask_3d":
            return m(x[0], x[0], x[0], attn_mask=lib.ones(4, 2, 2, dtype=lib.bool))
        m = nn.MultiheadAttention(8, 2, kdim=4, vdim=6)
        if case == "kdim_value_width":
            return m(x, lib.ones(5, 2, 4), lib.ones(5, 2, 5))
        return m(x, lib.ones(5, 2, 5), lib.ones(5, 2, 6))
    same_error(fn)


def test_mha_mismatched_mask_types_warn():
    def fn(lib):
        m = lib.nn.MultiheadAttention(8, 2)
        x = lib.ones(5, 2, 8)
        m(x, x, x, key_padding_mask=lib.zeros(2, 5, dtype=lib.bool), attn_mask=lib.zeros(5, 5))
    assert same_warnings(fn)


def test_functional_multi_head_attention_forward():
    E, H = 8, 2
    t, e = pair(mha(E, H, add_bias_kv=True))

    def call(m, q, k, v, kpm):
        lib = torch if isinstance(m, tnn.Module) else ember
        return lib.nn.functional.multi_head_attention_forward(
            q, k, v, E, H, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, True, 0.0, m.out_proj.weight,
            m.out_proj.bias, training=False, key_padding_mask=kpm, average_attn_weights=False)
    compare(t, e, [rand(4, 2, E), rand(6, 2, E, seed=1), rand(6, 2, E, seed=2), padding_mask([6, 3], 6)], call)


# ---------------------------------------------------------------- transformer layers

def enc_layer(d=8, h=2, ff=16, **kw):
    return lambda nn: nn.TransformerEncoderLayer(d, h, ff, **kw)


def dec_layer(d=8, h=2, ff=16, **kw):
    return lambda nn: nn.TransformerDecoderLayer(d, h, ff, **kw)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer(dtype, norm_first, batch_first, activation):
    t, e = pair(enc_layer(norm_first=norm_first, batch_first=batch_first, activation=activation), dtype)
    masks = {"src_mask": float_mask(5, 5), "src_key_padding_mask": padding_mask([5, 3, 4], 5)}
    x = rand(3, 5, 8) if batch_first else rand(5, 3, 8)
    compare(t, e, [x, *masks.values()], lambda m, x, a, k: m(x, src_mask=a, src_key_padding_mask=k), dtype)


@pytest.mark.parametrize("variant", ["bias_false", "module_activation", "callable_activation", "bool_masks",
                                     "causal", "unbatched"])
def test_encoder_layer_variants(variant):
    if variant == "bias_false":
        t, e = pair(enc_layer(bias=False, layer_norm_eps=1e-6))
        assert "norm1.bias" not in e.state_dict()
        compare(t, e, [rand(5, 2, 8)])
    elif variant == "module_activation":
        t, e = pair(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU(approximate="tanh")))
        assert repr(e) == repr(t) and e.activation_relu_or_gelu == t.activation_relu_or_gelu == 2
        compare(t, e, [rand(5, 2, 8)])
    elif variant == "callable_activation":
        t, e = pair(lambda nn: nn.TransformerEncoderLayer(
            8, 2, 16, activation=(torch if nn is tnn else ember).nn.functional.silu))
        assert e.activation_relu_or_gelu == t.activation_relu_or_gelu == 0
        compare(t, e, [rand(5, 2, 8)])
    elif variant == "bool_masks":
        t, e = pair(enc_layer(batch_first=True))
        compare(t, e, [rand(3, 5, 8), bool_mask(5, 5, p=0.2), padding_mask([5, 2, 4], 5)],
                lambda m, x, a, k: m(x, a, k))
    elif variant == "causal":
        t, e = pair(enc_layer(batch_first=True))
        compare(t, e, [rand(2, 6, 8), causal_mask(6)], lambda m, x, a: m(x, a, is_causal=True))
    else:
        t, e = pair(enc_layer(batch_first=True))
        compare(t, e, [rand(5, 8), bool_mask(5, 5, p=0.2), padding_mask([3], 5).value[0]],
                lambda m, x, a, k: m(x, a, k))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer(dtype, norm_first, batch_first):
    t, e = pair(dec_layer(norm_first=norm_first, batch_first=batch_first, activation="gelu"), dtype)
    masks = [causal_mask(4), bool_mask(4, 6, p=0.2), padding_mask([4, 3], 4), padding_mask([6, 2], 6)]
    shape = (2, 4, 8) if batch_first else (4, 2, 8)
    mem = (2, 6, 8) if batch_first else (6, 2, 8)
    compare(t, e, [rand(*shape), rand(*mem, seed=1), *masks],
            lambda m, x, y, a, b, c, d: m(x, y, a, b, c, d), dtype)
    compare(t, e, [rand(*shape), rand(*mem, seed=1), causal_mask(4)],
            lambda m, x, y, a: m(x, y, tgt_mask=a, tgt_is_causal=True), dtype)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_norm", [False, True])
def test_encoder_and_decoder_stacks(batch_first, with_norm):
    def encoder(nn):
        return nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first), 2,
                                     norm=nn.LayerNorm(8) if with_norm else None)

    def decoder(nn):
        return nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, batch_first=batch_first), 2,
                                     norm=nn.LayerNorm(8) if with_norm else None)
    x = rand(3, 5, 8) if batch_first else rand(5, 3, 8)
    t, e = pair(encoder)
    assert repr(e) == repr(t)
    compare(t, e, [x, causal_mask(5), padding_mask([5, 4, 2], 5)], lambda m, x, a, k: m(x, a, k))
    compare(t, e, [x, causal_mask(5)], lambda m, x, a: m(x, a, is_causal=True))
    t, e = pair(decoder)
    assert repr(e) == repr(t)
    compare(t, e, [x[:, :4] if batch_first else x[:4], x, causal_mask(4)],
            lambda m, y, x, a: m(y, x, tgt_mask=a))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer(batch_first, norm_first):
    def model(nn):
        return nn.Transformer(8, 2, 2, 1, 16, batch_first=batch_first, norm_first=norm_first)
    t, e = pair(model)
    assert repr(e) == repr(t)
    src = rand(3, 5, 8) if batch_first else rand(5, 3, 8)
    tgt = rand(3, 4, 8, seed=1) if batch_first else rand(4, 3, 8, seed=1)
    compare(t, e, [src, tgt, causal_mask(4), padding_mask([5, 3, 4], 5), padding_mask([5, 3, 4], 5)],
            lambda m, s, y, a, k, mk: m(s, y, tgt_mask=a, src_key_padding_mask=k, memory_key_padding_mask=mk))


def test_transformer_float32_unbatched():
    t, e = pair(lambda nn: nn.Transformer(8, 2, 1, 1, 16), "float32")
    compare(t, e, [rand(5, 8), rand(4, 8, seed=1), causal_mask(4)], lambda m, s, y, a: m(s, y, tgt_mask=a),
            "float32")


def test_detect_is_causal_mask():
    from ember.nn.modules.transformer import _detect_is_causal_mask as e_detect
    from torch.nn.modules.transformer import _detect_is_causal_mask as t_detect
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    almost = causal.copy()
    almost[3, 0] = -np.inf
    for mask in [None, causal, almost, causal[:3, :3], np.zeros((4, 4))]:
        for is_causal in [None, False, True]:
            for size in [None, 4]:
                e_mask = None if mask is None else ember.tensor(mask, dtype=ember.float32)
                t_mask = None if mask is None else torch.tensor(mask, dtype=torch.float32)
                assert e_detect(e_mask, is_causal, size) == t_detect(t_mask, is_causal, size)


def test_transformer_init_and_mask():
    m = enn.Transformer(16, 2, 1, 1, 32)
    for name, p in m.named_parameters():
        if p.dim() > 1:  # xavier_uniform_
            fan_out, fan_in = p.shape
            assert np.abs(p.detach().numpy()).max() <= math.sqrt(6 / (fan_in + fan_out)), name
        elif "norm" in name:
            assert p.tolist() == ([1.0] * 16 if name.endswith("weight") else [0.0] * 16)
    assert (m.d_model, m.nhead, m.batch_first) == (16, 2, False)
    for n, dtype in [(1, None), (4, None), (3, "float64")]:
        e = enn.Transformer.generate_square_subsequent_mask(n, dtype=getattr(ember, dtype) if dtype else None)
        t = tnn.Transformer.generate_square_subsequent_mask(n, dtype=getattr(torch, dtype) if dtype else None)
        assert_close(e, t, 0.0)
    assert_close(enn.Transformer.generate_square_subsequent_mask(3), tnn.Transformer.generate_square_subsequent_mask(3),
                 0.0)


def test_transformer_state_dict_interchange():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tnn.Transformer(8, 2, 2, 2, 16, bias=False).double().eval()
        e = enn.Transformer(8, 2, 2, 2, 16, bias=False).double().eval()
    assert list(e.state_dict()) == list(t.state_dict())
    assert [tuple(v.shape) for v in e.state_dict().values()] == [tuple(v.shape) for v in t.state_dict().values()]
    # and back: ember's weights into torch
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in e.state_dict().items()})
    compare(t, e, [rand(5, 2, 8), rand(3, 2, 8, seed=1)])


@pytest.mark.parametrize("layer_kw", [{}, {"batch_first": True}, {"batch_first": True, "norm_first": True},
                                      {"batch_first": True, "bias": False},
                                      {"batch_first": True, "activation": "gelu"}])
def test_encoder_nested_tensor_warning(layer_kw):
    same_warnings(lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, **layer_kw), 1))
    same_warnings(lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, **layer_kw), 1,
                                                        enable_nested_tensor=False))


@pytest.mark.parametrize("lengths", [[5, 3, 1], [2, 5, 4], [5, 5, 5]])
@pytest.mark.parametrize("with_norm", [False, True])
def test_encoder_inference_zeroes_padding(lengths, with_norm):
    """torch's eval-mode, no-grad encoder runs on nested tensors and returns zeros at the
    padded positions (then the final norm); ember's output agrees."""
    t, e = pair(lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
                                                 norm=nn.LayerNorm(8) if with_norm else None))
    if with_norm:
        with torch.no_grad():
            t.norm.bias.fill_(0.5)
        e.norm.bias.detach().fill_(0.5)
    kpm = padding_mask(lengths, 5)
    with torch.no_grad(), ember.no_grad():
        compare(t, e, [rand(3, 5, 8), kpm], lambda m, x, k: m(x, src_key_padding_mask=k), grad=False)
    # padding not at the end: torch computes densely
    kpm.value[0, 0] = True
    with torch.no_grad(), ember.no_grad():
        compare(t, e, [rand(3, 5, 8), kpm], lambda m, x, k: m(x, src_key_padding_mask=k), grad=False)


def test_transformer_dropout_train_mode():
    m = enn.TransformerEncoderLayer(16, 2, 32, dropout=0.5)
    x = ember.tensor(rand(6, 3, 16), dtype=ember.float32)
    a, b = m(x), m(x)
    assert a.shape == (6, 3, 16) and a.tolist() != b.tolist()
    m.eval()
    assert m(x).tolist() == m(x).tolist()


@pytest.mark.parametrize("case", ["activation", "heads", "batch", "features", "dec_activation", "causal_no_mask"])
def test_transformer_errors(case):
    def fn(lib):
        nn = lib.nn
        if case == "activation":
            return nn.TransformerEncoderLayer(8, 2, activation="tanh")
        if case == "dec_activation":
            return nn.TransformerDecoderLayer(8, 2, activation="sigmoid")
        if case == "heads":
            return nn.TransformerEncoderLayer(8, 3)
        if case == "causal_no_mask":
            return nn.TransformerEncoderLayer(8, 2, 16)(lib.ones(5, 2, 8), is_causal=True)
        m = nn.Transformer(8, 2, 1, 1, 16)
        if case == "batch":
            return m(lib.ones(5, 2, 8), lib.ones(4, 3, 8))
        return m(lib.ones(5, 2, 8), lib.ones(4, 2, 6))
    same_error(fn)


# ---------------------------------------------------------------- RNN, LSTM, GRU

RNN_KINDS = {
    "rnn_tanh": lambda nn, **kw: nn.RNN(3, 5, **kw),
    "rnn_relu": lambda nn, **kw: nn.RNN(3, 5, nonlinearity="relu", **kw),
    "lstm": lambda nn, **kw: nn.LSTM(3, 5, **kw),
    "lstm_proj": lambda nn, **kw: nn.LSTM(3, 5, proj_size=2, **kw),
    "gru": lambda nn, **kw: nn.GRU(3, 5, **kw),
}


def initial_state(kind, layers, batch):
    """h0 (and c0) for RNN_KINDS[kind] with layers * directions layers."""
    out = 2 if kind == "lstm_proj" else 5
    h0 = rand(layers, batch, out, seed=5) * 0.5 if batch else rand(layers, out, seed=5) * 0.5
    if not kind.startswith("lstm"):
        return [h0]
    c0 = rand(layers, batch, 5, seed=6) * 0.5 if batch else rand(layers, 5, seed=6) * 0.5
    return [h0, c0]


def run_rnn(m, x, *state):
    if not state:
        return m(x)
    return m(x, tuple(state) if len(state) == 2 else state[0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", list(RNN_KINDS))
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_rnn_layers(kind, bidirectional, with_state, dtype):
    t, e = pair(lambda nn: RNN_KINDS[kind](nn, num_layers=2, bidirectional=bidirectional), dtype)
    state = initial_state(kind, 4 if bidirectional else 2, 3) if with_state else []
    compare(t, e, [rand(6, 3, 3), *state], run_rnn, dtype)


@pytest.mark.parametrize("kind", list(RNN_KINDS))
@pytest.mark.parametrize("batch_first", [False, True])
def test_rnn_batch_first_and_no_bias(kind, batch_first):
    t, e = pair(lambda nn: RNN_KINDS[kind](nn, batch_first=batch_first, bias=False, bidirectional=True))
    x = rand(2, 4, 3) if batch_first else rand(4, 2, 3)
    compare(t, e, [x], run_rnn)


@pytest.mark.parametrize("kind", list(RNN_KINDS))
@pytest.mark.parametrize("with_state", [False, True])
def test_rnn_unbatched(kind, with_state):
    t, e = pair(lambda nn: RNN_KINDS[kind](nn, num_layers=2, batch_first=True))
    compare(t, e, [rand(4, 3), *(initial_state(kind, 2, 0) if with_state else [])], run_rnn)


@pytest.mark.parametrize("kind", list(RNN_KINDS))
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_rnn_packed_sequences(kind, enforce_sorted):
    lengths = [6, 4, 4, 1] if enforce_sorted else [4, 6, 1, 4]
    t, e = pair(lambda nn: RNN_KINDS[kind](nn, num_layers=2, bidirectional=True))
    state = initial_state(kind, 4, 4)

    def call(m, x, *state):
        U = (torch if isinstance(m, tnn.Module) else ember).nn.utils.rnn
        packed = U.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
        out, h = run_rnn(m, packed, *state)
        padded, out_lengths = U.pad_packed_sequence(out, padding_value=-1.0)
        return padded, out_lengths, out.data, out.batch_sizes, h
    compare(t, e, [rand(6, 4, 3), *state], call)
    compare(t, e, [rand(6, 4, 3)], call)


def test_rnn_dropout_between_layers():
    x = ember.tensor(rand(5, 4, 3), dtype=ember.float32)
    m = enn.LSTM(3, 16, num_layers=2, dropout=0.5)
    a, b = m(x)[0], m(x)[0]
    assert a.shape == (5, 4, 16) and a.tolist() != b.tolist()
    m.eval()
    assert m(x)[0].tolist() == m(x)[0].tolist()
    m = enn.GRU(3, 16, num_layers=2, dropout=0.0)
    assert m(x)[0].tolist() == m.eval()(x)[0].tolist()


def test_rnn_state_dict_repr_and_init():
    configs = [lambda nn: nn.RNN(3, 4), lambda nn: nn.RNN(3, 4, 2, nonlinearity="relu", bias=False, batch_first=True,
                                                          dropout=0.5, bidirectional=True),
               lambda nn: nn.LSTM(3, 4, 2, proj_size=2, bidirectional=True), lambda nn: nn.GRU(3, 4, 3, dropout=0.25),
               lambda nn: nn.RNNCell(3, 4), lambda nn: nn.RNNCell(3, 4, False, "relu"), lambda nn: nn.LSTMCell(3, 4),
               lambda nn: nn.GRUCell(3, 4, bias=False)]
    for factory in configs:
        t, e = pair(factory)
        assert repr(e) == repr(t)
        assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == \
               [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
        if hasattr(t, "_flat_weights_names"):
            assert e._flat_weights_names == t._flat_weights_names and e._all_weights == t._all_weights
            assert all(a is b for a, b in zip(e._flat_weights, e.parameters()))
            assert [[tuple(w.shape) for w in ws] for ws in e.all_weights] == \
                   [[tuple(w.shape) for w in ws] for ws in t.all_weights]
            e.flatten_parameters()
    m = enn.LSTM(10, 64, num_layers=2)
    bound = 1 / math.sqrt(64)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert (m.mode, enn.RNN(2, 3, nonlinearity="relu").mode, enn.GRU(2, 3).mode) == ("LSTM", "RNN_RELU", "GRU")


def test_rnn_dropout_warning():
    same_warnings(lambda lib: lib.nn.GRU(3, 4, dropout=0.3))
    same_warnings(lambda lib: lib.nn.GRU(3, 4, 2, dropout=0.3))


@pytest.mark.parametrize("case", [
    "nonlinearity", "dropout_range", "dropout_bool", "hidden_zero", "hidden_float", "input_float", "layers_zero",
    "rnn_proj", "gru_proj", "proj_too_big", "proj_negative", "input_rank4", "input_rank1", "input_size", "hidden_batch",
    "hx_rank_batched", "hx_rank_unbatched", "dtype", "empty_sequence", "lstm_c_size", "lstm_cx_rank",
    "lstm_h_proj_size", "packed_rank", "pack_unsorted", "pack_zero_length", "pack_lengths_count",
    "pad_total_length", "pad_side", "pad_empty"])
def test_rnn_errors(case):
    def fn(lib):
        nn, U = lib.nn, lib.nn.utils.rnn
        ctor = {"nonlinearity": lambda: nn.RNN(3, 4, nonlinearity="sigmoid"),
                "dropout_range": lambda: nn.RNN(3, 4, dropout=1.5),
                "dropout_bool": lambda: nn.RNN(3, 4, dropout=True),
                "hidden_zero": lambda: nn.LSTM(3, 0),
                "hidden_float": lambda: nn.GRU(3, 4.0),
                "input_float": lambda: nn.GRU(3.5, 4),
                "layers_zero": lambda: nn.RNN(3, 4, num_layers=0),
                "rnn_proj": lambda: nn.RNN(3, 4, proj_size=2),
                "gru_proj": lambda: nn.GRU(3, 4, proj_size=0),
                "proj_too_big": lambda: nn.LSTM(3, 4, proj_size=4),
                "proj_negative": lambda: nn.LSTM(3, 4, proj_size=-1),
                "pack_unsorted": lambda: U.pack_padded_sequence(lib.ones(4, 3, 1), [2, 4, 1]),
                "pack_zero_length": lambda: U.pack_padded_sequence(lib.ones(4, 3, 1), [4, 2, 0]),
                "pack_lengths_count": lambda: U.pack_padded_sequence(lib.ones(4, 3, 1), [4, 2]),
                "pad_total_length": lambda: U.pad_packed_sequence(U.pack_sequence([lib.ones(4), lib.ones(2)]),
                                                                  total_length=3),
                "pad_side": lambda: U.pad_sequence([lib.ones(2)], padding_side="middle"),
                "pad_empty": lambda: U.pad_sequence([])}
        if case in ctor:
            return ctor[case]()
        rnn, lstm = nn.GRU(3, 4, 2), nn.LSTM(3, 4, 2)
        lstm_proj = nn.LSTM(3, 4, proj_size=2)
        x = lib.ones(5, 2, 3)
        calls = {"input_rank4": lambda: rnn(lib.ones(5, 2, 3, 1)),
                 "input_rank1": lambda: lstm(lib.ones(5)),
                 "input_size": lambda: rnn(lib.ones(5, 2, 4)),
                 "hidden_batch": lambda: rnn(x, lib.zeros(2, 3, 4)),
                 "hx_rank_batched": lambda: rnn(x, lib.zeros(2, 4)),
                 "hx_rank_unbatched": lambda: rnn(lib.ones(5, 3), lib.zeros(2, 1, 4)),
                 "dtype": lambda: lstm(x.double()),
                 "empty_sequence": lambda: rnn(lib.ones(0, 2, 3)),
                 "lstm_c_size": lambda: lstm(x, (lib.zeros(2, 2, 4), lib.zeros(2, 2, 5))),
                 "lstm_cx_rank": lambda: lstm(x, (lib.zeros(2, 2, 4), lib.zeros(2, 4))),
                 "lstm_h_proj_size": lambda: lstm_proj(x, (lib.zeros(1, 2, 4), lib.zeros(1, 2, 4))),
                 "packed_rank": lambda: rnn(U.PackedSequence(lib.ones(3, 2, 3), lib.tensor([2, 1])))}
        return calls[case]()
    same_error(fn)


def test_rnn_error_messages():
    """The messages users search for are torch's."""
    for fn in [lambda lib: lib.nn.RNN(3, 4)(lib.ones(5, 2, 4)),
               lambda lib: lib.nn.GRU(3, 4)(lib.ones(5, 2, 3), lib.zeros(1, 3, 4)),
               lambda lib: lib.nn.LSTM(3, 4)(lib.ones(2, 3, 1, 1)),
               lambda lib: lib.nn.RNN(3, 4)(lib.ones(5, 3), lib.zeros(1, 1, 4)),
               lambda lib: lib.nn.RNN(3, 4, nonlinearity="x"),
               lambda lib: lib.nn.LSTMCell(3, 4)(lib.ones(2, 3), (lib.zeros(2, 4), lib.zeros(3, 4)))]:
        messages = []
        for lib in (torch, ember):
            with pytest.raises(Exception) as exc:
                fn(lib)
            messages.append(str(exc.value).replace("ember", "torch"))
        assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("cell", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_cells(cell, batched, with_state, dtype):
    factory = {"rnn_tanh": lambda nn: nn.RNNCell(3, 5), "rnn_relu": lambda nn: nn.RNNCell(3, 5, nonlinearity="relu"),
               "lstm": lambda nn: nn.LSTMCell(3, 5), "gru": lambda nn: nn.GRUCell(3, 5)}[cell]
    t, e = pair(factory, dtype)
    x = rand(4, 3) if batched else rand(3)
    state = []
    if with_state:
        state = [rand(4, 5, seed=1) if batched else rand(5, seed=1)]
        if cell == "lstm":
            state.append(rand(4, 5, seed=2) if batched else rand(5, seed=2))
    compare(t, e, [x, *state], run_rnn, dtype)


def test_cell_without_bias_over_a_sequence():
    t, e = pair(lambda nn: nn.GRUCell(3, 4, bias=False))

    def call(m, x):
        h = None
        for step in x:
            h = m(step, h)
        return h
    compare(t, e, [rand(5, 2, 3)], call)


@pytest.mark.parametrize("case", ["input_rank", "input_size", "batch", "hidden_size", "hidden_rank", "lstm_c_batch",
                                  "lstm_h_rank", "nonlinearity"])
def test_cell_errors(case):
    def fn(lib):
        nn = lib.nn
        cells = {"input_rank": lambda: nn.RNNCell(3, 4)(lib.ones(2, 3, 1)),
                 "input_size": lambda: nn.GRUCell(3, 4)(lib.ones(2, 4)),
                 "batch": lambda: nn.RNNCell(3, 4)(lib.ones(2, 3), lib.zeros(3, 4)),
                 "hidden_size": lambda: nn.GRUCell(3, 4)(lib.ones(2, 3), lib.zeros(2, 5)),
                 "hidden_rank": lambda: nn.RNNCell(3, 4)(lib.ones(2, 3), lib.zeros(2, 4, 1)),
                 "lstm_c_batch": lambda: nn.LSTMCell(3, 4)(lib.ones(2, 3), (lib.zeros(2, 4), lib.zeros(3, 4))),
                 "lstm_h_rank": lambda: nn.LSTMCell(3, 4)(lib.ones(2, 3), (lib.zeros(2, 4, 1), lib.zeros(2, 4))),
                 "nonlinearity": lambda: nn.RNNCell(3, 4, nonlinearity="x")(lib.ones(2, 3))}
        return cells[case]()
    same_error(fn)


# ---------------------------------------------------------------- nn.utils.rnn

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    seqs = [rand(2, 3), rand(5, 3, seed=1), rand(1, 3, seed=2)]

    def call(m, *xs):
        U = (torch if m == "torch" else ember).nn.utils.rnn
        return U.pad_sequence(list(xs), batch_first=batch_first, padding_value=-2.0, padding_side=padding_side)
    compare("torch", "ember", seqs, call, grad=False)
    t_in = [torch.tensor(s, requires_grad=True) for s in seqs]
    e_in = [ember.tensor(s, requires_grad=True) for s in seqs]
    w = rand(5, 3, 3) if not batch_first else rand(3, 5, 3)
    (call("torch", *t_in) * torch.tensor(w)).sum().backward()
    (call("ember", *e_in) * ember.tensor(w)).sum().backward()
    for e, t in zip(e_in, t_in):
        assert_close(e.grad, t.grad, 1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_round_trip(batch_first, enforce_sorted):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = rand(4, 5, 2) if batch_first else rand(5, 4, 2)
    results = {}
    for name, lib in LIBS.items():
        U = lib.nn.utils.rnn
        packed = U.pack_padded_sequence(lib.tensor(x), lib.tensor(lengths), batch_first=batch_first,
                                        enforce_sorted=enforce_sorted)
        padded, out_lengths = U.pad_packed_sequence(packed, batch_first=batch_first, padding_value=9.0,
                                                    total_length=6)
        seqs = U.unpack_sequence(packed)
        # (torch's unpad_sequence transposes a time-major input in place: it gets a copy)
        unpadded = U.unpad_sequence(padded.clone(), out_lengths, batch_first=batch_first)
        repacked = U.pack_sequence(seqs, enforce_sorted=False)
        results[name] = [packed.data, packed.batch_sizes, padded, out_lengths, *seqs, *unpadded, repacked.data,
                         repacked.batch_sizes]
        if not enforce_sorted:
            results[name] += [packed.sorted_indices, packed.unsorted_indices, repacked.sorted_indices]
        assert isinstance(packed, tuple) and packed.double().data.dtype == lib.float64
    for e, t in zip(results["ember"], results["torch"]):
        assert_close(e, t, 0.0)


def test_packed_sequence_and_invert_permutation():
    U = ember.nn.utils.rnn
    p = U.PackedSequence(ember.ones(3, 2), ember.tensor([2, 1]), ember.tensor([1, 0]))
    assert p.unsorted_indices.tolist() == [1, 0] and p.is_cuda is False
    assert U.PackedSequence((p.data, p.batch_sizes)).sorted_indices is None
    perm = [3, 0, 2, 1]
    assert U.invert_permutation(ember.tensor(perm)).tolist() == tnn.utils.rnn.invert_permutation(
        torch.tensor(perm)).tolist()
    assert U.invert_permutation(None) is None
    assert set(U.__all__) == set(tnn.utils.rnn.__all__)


# ---------------------------------------------------------------- docs

@pytest.mark.parametrize("module", ["ember.nn.modules.attention", "ember.nn.modules.transformer",
                                    "ember.nn.modules.rnn", "ember.nn.modules.normalization", "ember.nn.utils.rnn"])
def test_docstring_examples(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(importlib.import_module(module), extraglobs={"ember": ember})
    assert result.failed == 0 and result.attempted > 0
