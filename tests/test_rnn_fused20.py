"""The fused recurrent path (issue 20): nn.RNN/LSTM/GRU record one node per layer and
direction (_FusedRecurrence) when grad mode is on. Each case copies torch's weights into
ember's module, runs both and compares outputs, final states and the gradients of every
input, initial state and parameter; then float64 gradcheck of the node itself (packed
sizes, both directions), double backward through the composed fallback, and the cases
left to the composed path. float32 layers of small batches take the packed per-step
products (_rnn_packed_mm), larger ones and float64 OpenBLAS's."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from helpers import torch

from ember.nn.modules.rnn import _FusedRecurrence
from ember.nn.utils.rnn import pack_padded_sequence as e_pack, pad_packed_sequence as e_pad
from torch.nn.utils.rnn import pack_padded_sequence as t_pack, pad_packed_sequence as t_pad

TESTED_OPS = {"_lstm_cell_backward", "_gru_cell_backward", "_lstm_cell_forward", "_rnn_packed_mm"}
LIBS = {"torch": torch, "ember": ember}
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
TOL = {"float64": 1e-10, "float32": 2e-5}
I, H = 3, 5


@pytest.fixture(autouse=True, scope="module")
def torch_single_threaded():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def build(lib, kind, dtype, **kw):
    if kind == "lstm_proj":
        kind, kw = "lstm", dict(kw, proj_size=2)
    if kind.startswith("rnn_"):
        kind, kw = "rnn", dict(kw, nonlinearity=kind[4:])
    module = {"lstm": lib.nn.LSTM, "gru": lib.nn.GRU, "rnn": lib.nn.RNN}[kind](I, H, **kw)
    return module.to(getattr(lib, dtype))


def pair(kind, dtype, **kw):
    tm = build(torch, kind, dtype, **kw)
    em = build(ember, kind, dtype, **kw)
    for name, p in tm.named_parameters():
        getattr(em, name).data.copy_(ember.tensor(p.detach().numpy()))
    return tm, em


def as_np(t):
    return t.detach().numpy()


def loss_of(lib, out, states, seed=3):
    """(out * w).sum() + sum of sin(k * state): every output and state gets a gradient."""
    w = lib.tensor(np.random.default_rng(seed).standard_normal(tuple(out.shape)), dtype=out.dtype)
    total = (out * w).sum()
    for k, s in enumerate(states):
        total = total + (s * (k + 2)).sin().sum()
    return total


def states_of(result):
    out, h = result
    return out, (h if isinstance(h, tuple) else (h,))


def fused_nodes(t):
    """How many _FusedRecurrence nodes the graph under t holds."""
    seen, stack, count = set(), [t.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        count += type(node).__name__ == "_FusedRecurrenceBackward"
        stack.extend(f for f, _ in node.next_functions)
    return count


def initial_states(kind, kw, batch, dtype, rng):
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    out = 2 if kind == "lstm_proj" else H
    sizes = [out, H] if kind.startswith("lstm") else [out]
    arrays = [rng.standard_normal((layers, batch, s)) for s in sizes]
    made = {}
    for name, lib in LIBS.items():
        ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
        made[name] = (tuple(ts) if kind.startswith("lstm") else ts[0]), ts
    return made


def check(kind, dtype, kw, T=4, B=3, with_state=True, packed_lengths=None):
    tm, em = pair(kind, dtype, **kw)
    rng = np.random.default_rng(0)
    batch_first = kw.get("batch_first", False)
    shape = (B, T, I) if batch_first or packed_lengths else (T, B, I)
    x = rng.standard_normal(shape)
    hx = initial_states(kind, kw, B, dtype, rng) if with_state else None
    got = {}
    for name, lib, module in (("torch", torch, tm), ("ember", ember, em)):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        inp = xt
        if packed_lengths:
            pack = t_pack if name == "torch" else e_pack
            inp = pack(xt, packed_lengths, batch_first=True, enforce_sorted=False)
        args = (inp, hx[name][0]) if hx else (inp,)
        out, states = states_of(module(*args))
        if packed_lengths:
            out = (t_pad if name == "torch" else e_pad)(out, batch_first=True)[0]
        if name == "ember":
            assert fused_nodes(out) == kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        loss_of(lib, out, states).backward()
        grads = [xt.grad] + ([s.grad for s in hx[name][1]] if hx else [])
        grads += [p.grad for _, p in module.named_parameters()]
        got[name] = [out, *states], grads
    tol = TOL[dtype]
    for a, b in zip(got["torch"][0], got["ember"][0]):
        np.testing.assert_allclose(as_np(b), as_np(a), rtol=tol, atol=tol)
    assert len(got["torch"][1]) == len(got["ember"][1])
    for a, b in zip(got["torch"][1], got["ember"][1]):
        np.testing.assert_allclose(as_np(b), as_np(a), rtol=tol, atol=tol)


KINDS = ["lstm", "lstm_proj", "gru", "rnn_tanh", "rnn_relu"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_layer(kind, dtype):
    check(kind, dtype, {})


@pytest.mark.parametrize("kind", KINDS)
def test_two_layers_bidirectional_batch_first(kind):
    check(kind, "float64", dict(num_layers=2, bidirectional=True, batch_first=True))


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh"])
def test_no_bias_no_state(kind):
    check(kind, "float64", dict(bias=False), with_state=False)


@pytest.mark.parametrize("kind", KINDS)
def test_packed_sequences(kind):
    check(kind, "float64", dict(bidirectional=True, num_layers=2), T=5, B=4, packed_lengths=[3, 5, 1, 3])


def test_dropout_between_layers_in_eval():
    tm, em = pair("lstm", "float64", num_layers=2, dropout=0.5)
    tm.eval()
    em.eval()
    x = np.random.default_rng(1).standard_normal((4, 2, I))
    outs = []
    for lib, m in ((torch, tm), (ember, em)):
        xt = lib.tensor(x, requires_grad=True)
        out, _ = m(xt)
        out.sum().backward()
        outs.append((out, xt.grad, m.weight_ih_l0.grad))
    for a, b in zip(*outs):
        np.testing.assert_allclose(as_np(b), as_np(a), rtol=1e-10, atol=1e-10)
    em.train()  # dropout in training: the fused layers around F.dropout, shapes only
    out, (h, c) = em(ember.randn(4, 2, I, dtype=ember.float64))
    out.sum().backward()
    assert out.shape == (4, 2, H) and em.weight_hh_l1.grad is not None


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_node(mode, reverse):
    """The node itself in float64: packed step sizes 3, 3, 2, 1, with an initial state."""
    gen = ember.Generator().manual_seed(7)
    G = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    h, n_in, sizes = 2, 2, [3, 3, 2, 1]

    def r(*shape):
        return ember.randn(*shape, dtype=ember.float64, generator=gen).requires_grad_()

    x, h0 = r(sum(sizes), n_in), r(3, h)
    c0 = r(3, h) if mode == "LSTM" else None
    w = [r(G * h, n_in), r(G * h, h), r(G * h), r(G * h)]
    if mode == "RNN_RELU":
        x = (x.detach() + 3).requires_grad_()  # away from relu's kink
    inputs = [x, h0] + ([c0] if c0 is not None else []) + w

    def f(*args):
        c = args[2] if mode == "LSTM" else None
        rest = args[3:] if mode == "LSTM" else args[2:]
        return _FusedRecurrence.apply(mode, sizes, reverse, args[0], args[1], c, *rest, None)

    assert ember.autograd.gradcheck(f, inputs)


def test_gradcheck_projected_lstm():
    gen = ember.Generator().manual_seed(8)

    def r(*shape):
        return ember.randn(*shape, dtype=ember.float64, generator=gen).requires_grad_()

    sizes = [2, 2, 1]
    inputs = [r(5, 2), r(2, 1), r(2, 3), r(12, 2), r(12, 1), r(12), r(12), r(1, 3)]

    def f(x, h0, c0, *w):
        return _FusedRecurrence.apply("LSTM", sizes, False, x, h0, c0, *w)

    assert ember.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_double_backward_through_composed_fallback(kind):
    tm, em = pair(kind, "float64", bidirectional=True)
    x = np.random.default_rng(2).standard_normal((3, 2, I))
    results = []
    for lib, m in ((torch, tm), (ember, em)):
        xt = lib.tensor(x, requires_grad=True)
        out, _ = m(xt)
        params = list(m.parameters())
        grads = lib.autograd.grad(out.pow(2).sum(), [xt] + params, create_graph=True)
        sum((g * g).sum() for g in grads).backward()
        results.append([g.detach() for g in grads] + [xt.grad] + [p.grad for p in params])
    for a, b in zip(*results):
        np.testing.assert_allclose(as_np(b), as_np(a), rtol=1e-9, atol=1e-10)


def test_retain_graph_and_second_backward():
    em = ember.nn.GRU(I, H)
    out, h = em(ember.randn(3, 2, I))
    loss = out.sum() + h.sum()
    loss.backward(retain_graph=True)
    first = em.weight_hh_l0.grad.clone()
    loss.backward()
    np.testing.assert_allclose(as_np(em.weight_hh_l0.grad), 2 * as_np(first), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_weight_modified_in_place_after_forward():
    for lib in (torch, ember):
        m = lib.nn.LSTM(I, H)
        out, _ = m(lib.randn(3, 2, I))
        with lib.no_grad():
            m.weight_hh_l0.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def test_composed_path_cases():
    """no_grad and nothing requiring a gradient run the step kernels without a node;
    forward-mode AD runs the composed path; all with the same values."""
    em = ember.nn.LSTM(I, H, dtype=ember.float64)
    x = ember.randn(3, 2, I, dtype=ember.float64)
    fused, _ = em(x)
    assert fused_nodes(fused) == 1
    with ember.no_grad():
        plain, _ = em(x)
    assert plain.grad_fn is None
    np.testing.assert_allclose(as_np(plain), as_np(fused), rtol=1e-12, atol=1e-12)
    em.requires_grad_(False)
    assert em(x)[0].grad_fn is None
    em.requires_grad_(True)
    # forward-mode AD: the tangent of the output along v, against central differences
    import ember.autograd.forward_ad as fwAD
    v = ember.randn(3, 2, I, dtype=ember.float64)
    with fwAD.dual_level():
        out, _ = em(fwAD.make_dual(x, v))
        tangent = fwAD.unpack_dual(out).tangent
    with ember.no_grad():
        eps = 1e-6
        numeric = (em(x + eps * v)[0] - em(x - eps * v)[0]) / (2 * eps)
    np.testing.assert_allclose(as_np(tangent), as_np(numeric), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inference_runs_the_step_kernels(kind, dtype, monkeypatch):
    """Under no_grad (and with nothing requiring a gradient) the layers run _fused_run's
    step kernels, never the composed path, with torch's values: two bidirectional layers,
    initial states, packed sequences of unequal lengths, a batch over the packed cutoff."""
    import ember.nn.modules.rnn as rnn_module

    def refuse(*args, **kwargs):
        raise AssertionError("the composed path ran")
    monkeypatch.setattr(rnn_module, "_composed_direction", refuse)
    rng = np.random.default_rng(1)
    tol = TOL[dtype]
    for kw, B, lengths in (({"num_layers": 2, "bidirectional": True}, 3, None), ({}, 4, [4, 1, 3, 2]),
                           ({"batch_first": True}, 130, None)):
        tm, em = pair(kind, dtype, **kw)
        x = rng.standard_normal((B, 4, I) if kw.get("batch_first") or lengths else (4, B, I))
        hx = initial_states(kind, kw, B, dtype, rng)
        got = {}
        for name, lib, module in (("torch", torch, tm), ("ember", ember, em)):
            inp = lib.tensor(x, dtype=getattr(lib, dtype))
            if lengths:
                inp = (t_pack if name == "torch" else e_pack)(inp, lengths, batch_first=True, enforce_sorted=False)
            with lib.no_grad():
                out, states = states_of(module(inp, hx[name][0]))
            if lengths:
                out = (t_pad if name == "torch" else e_pad)(out, batch_first=True)[0]
            got[name] = [out, *states]
        for a, b in zip(got["torch"], got["ember"]):
            assert b.grad_fn is None
            np.testing.assert_allclose(as_np(b), as_np(a), rtol=tol, atol=tol)
    em.requires_grad_(False)  # grad mode on, nothing to differentiate: no node either
    out, _ = states_of(em(ember.tensor(x, dtype=getattr(ember, dtype))))
    assert out.grad_fn is None


def test_empty_batch():
    for kind in ("lstm", "gru"):
        tm, em = pair(kind, "float32", bidirectional=True)
        xe = ember.zeros(4, 0, I, requires_grad=True)
        out, _ = em(xe)
        out.sum().backward()
        assert out.shape == (4, 0, 2 * H) and xe.grad.shape == (4, 0, I)
        assert float(em.weight_hh_l0.grad.abs().sum()) == 0.0


def test_step_kernels_against_formulas():
    """The two backward step ops on a tiny float64 case, against autograd of the step's
    formulas written with ops."""
    gen = ember.Generator().manual_seed(3)

    def r(*shape):
        return ember.randn(*shape, dtype=ember.float64, generator=gen)

    n, h = 2, 3
    pre, cp, dh, dc_in = r(n, 4 * h), r(n, h), r(n, h), r(n, h)
    leaf_pre, leaf_cp = pre.clone().requires_grad_(), cp.clone().requires_grad_()
    i, f, _, o = leaf_pre.sigmoid().chunk(4, 1)
    g = leaf_pre[:, 2 * h:3 * h].tanh()
    c = f * leaf_cp + i * g
    ((o * c.tanh()) * dh + c * dc_in).sum().backward()
    with ember.no_grad():
        gates = ember.cat([i, f, g, o], 1)
        tc = c.tanh()
    dc, dg = dc_in.clone(), ember.empty(n, 4 * h, dtype=ember.float64)
    ember._lstm_cell_backward(gates, cp, tc, dh, dc, dg)
    np.testing.assert_allclose(as_np(dg), as_np(leaf_pre.grad), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(as_np(dc), as_np(leaf_cp.grad), rtol=1e-12, atol=1e-12)

    x, hg, hp = r(n, 3 * h), r(n, 3 * h), r(n, h)
    lx, lhg, lhp = x.clone().requires_grad_(), hg.clone().requires_grad_(), hp.clone().requires_grad_()
    rz = (lx[:, :2 * h] + lhg[:, :2 * h]).sigmoid()
    nn_ = (lx[:, 2 * h:] + rz[:, :h] * lhg[:, 2 * h:]).tanh()
    out = nn_ + rz[:, h:] * (lhp - nn_)
    (out * dh).sum().backward()
    with ember.no_grad():
        gates = ember.cat([rz, nn_], 1)
    dg, dgh, dhp = (ember.empty(n, k, dtype=ember.float64) for k in (3 * h, 3 * h, h))
    ember._gru_cell_backward(gates, hg, hp, dh, dg, dgh, dhp)
    for got, want in ((dg, lx.grad), (dgh, lhg.grad), (dhp, dh * gates[:, h:2 * h])):
        np.testing.assert_allclose(as_np(got), as_np(want), rtol=1e-12, atol=1e-12)


def test_step_kernel_errors():
    g, s = ember.zeros(2, 8), ember.zeros(2, 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        ember._lstm_cell_backward(g.half(), s.half(), s.half(), s.half(), s.half(), g.half())
    with pytest.raises(RuntimeError, match="expected a \\(2, 2\\) matrix"):
        ember._lstm_cell_backward(g, ember.zeros(2, 3), s, s, s, g)
    with pytest.raises(RuntimeError, match="expected Float, got Double"):
        ember._lstm_cell_backward(g, s.double(), s, s, s, g)
    g3 = ember.zeros(2, 6)
    with pytest.raises(RuntimeError, match="must be contiguous"):
        ember._gru_cell_backward(g3, g3, ember.zeros(2, 4)[:, ::2], s, g3, g3, s)
    with pytest.raises(RuntimeError, match="gates must be"):
        ember._gru_cell_backward(ember.zeros(2, 5), g3, s, s, g3, g3, s)


@pytest.mark.parametrize("kind", KINDS)
def test_packed_products_wider_layers(kind):
    """float32 layers through _rnn_packed_mm: 3 weight panels (the last partial), 4 + 2
    batch rows, a packed batch that shrinks; and a batch over _PACKED_MAX_ROWS (OpenBLAS)."""
    from ember.nn.modules import rnn
    global I, H
    old = I, H
    I, H = 4, 13
    try:
        check(kind, "float32", dict(bidirectional=True), T=3, B=6, packed_lengths=[3, 1, 2, 3, 3, 2])
        check(kind, "float32", {}, T=2, B=rnn._PACKED_MAX_ROWS + 1)
    finally:
        I, H = old


@pytest.mark.parametrize("m,k,n", [(1, 3, 1), (5, 7, 24), (7, 600, 50), (4, 0, 5), (0, 3, 30)])
def test_packed_mm_against_numpy(m, k, n, threads):
    """_rnn_packed_mm's tiles: row remainders, a partial last panel, k over one 512-row
    block, empty k (zeros, or result unchanged) and no rows; with and without accumulate."""
    from ember.nn.modules.rnn import _packed_panels
    rng = np.random.default_rng(m * 100 + k)
    a, w, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
    packed = _packed_panels(ember.tensor(w))
    assert tuple(packed.shape) == (-(-n // 24), k, 24)
    for accumulate in (False, True):
        out = ember.tensor(c)
        got = ember._rnn_packed_mm(ember.tensor(a), packed, out, accumulate)
        assert got is out or got.data_ptr() == out.data_ptr()
        want = a.astype(np.float64) @ w + (c if accumulate else 0)
        np.testing.assert_allclose(as_np(out), want, rtol=1e-4, atol=1e-4)


def test_packed_mm_errors():
    a, p, c = ember.zeros(2, 3), ember.zeros(1, 3, 24), ember.zeros(2, 5)
    with pytest.raises(NotImplementedError, match="not implemented for 'Double'"):
        ember._rnn_packed_mm(a.double(), p, c, False)
    with pytest.raises(RuntimeError, match="packed must be \\(panels, 3, 24\\)"):
        ember._rnn_packed_mm(a, ember.zeros(1, 4, 24), c, False)
    with pytest.raises(RuntimeError, match="1 panels of 24 columns do not make 30 columns"):
        ember._rnn_packed_mm(a, p, ember.zeros(2, 30), False)
    with pytest.raises(RuntimeError, match="dest must have 2 rows"):
        ember._rnn_packed_mm(a, p, ember.zeros(3, 5), False)
    with pytest.raises(RuntimeError, match="must be contiguous"):
        ember._rnn_packed_mm(ember.zeros(3, 2).t(), p, c, False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_cell_forward_against_ops(dtype, threads):
    """The forward step op against the sigmoid / tanh ops it replaces (the same functions:
    equal to rounding), on rows over the threads' grain."""
    dt = getattr(ember, dtype)
    gen = ember.Generator().manual_seed(5)
    n, h = 40, 300
    pre = ember.randn(n, 4 * h, dtype=dt, generator=gen) * 3
    cp = ember.randn(n, h, dtype=dt, generator=gen)
    i, f, o = (pre[:, k * h:(k + 1) * h].sigmoid() for k in (0, 1, 3))
    g = pre[:, 2 * h:3 * h].tanh()
    c = f * cp + i * g
    gates = pre.clone()
    cell, tc, hid = (ember.empty(n, h, dtype=dt) for _ in range(3))
    ember._lstm_cell_forward(gates, cp, cell, tc, hid)
    tol = 1e-6 if dtype == "float32" else 1e-14
    for got, want in ((gates, ember.cat([i, f, g, o], 1)), (cell, c), (tc, c.tanh()), (hid, o * c.tanh())):
        np.testing.assert_allclose(as_np(got), as_np(want), rtol=tol, atol=tol)
    with pytest.raises(RuntimeError, match="expected a \\(40, 300\\) matrix"):
        ember._lstm_cell_forward(gates, cp, cell, tc, ember.empty(n, h + 1, dtype=dt))
