"""Recurrent layers: RNN (tanh or relu), LSTM (optionally projected), GRU, and their
one-step cells, with torch's parameter names, shapes, gate order and initialization.

Each layer and direction projects the inputs of all time steps with one matrix multiply,
then loops over time with one hidden-state multiply per step. Packed sequences run the
same loop on a batch that shrinks (or, backwards, grows) as sequences end. With grad mode
on, a layer and direction is one autograd node (_FusedRecurrence) whose backward forms
the weights' gradients as one product each over all steps; otherwise (and under
create_graph, forward-mode AD, other dtypes or devices) the loop is composed of ops."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import List

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ...autograd import Function, enable_grad
from ...autograd import grad as autograd_grad
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

# gates per mode, stacked in this order in weight_ih / weight_hh:
# LSTM (input, forget, cell, output), GRU (reset, update, new)
_NUM_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---- one time step, given the input's projection x = W_ih input + b_ih (+ b_hh where it
# ---- can be folded in) of shape (B, gates * H)

def _rnn_step(x, h, w_hh_t, relu: bool):
    """h' = act(x + h W_hh^T)."""
    pre = _C.addmm(x, h, w_hh_t)
    return pre.relu() if relu else pre.tanh()


def _lstm_step(x, h, c, w_hh_t, w_hr_t):
    """(h', c'): c' = f c + i g, h' = o tanh(c') (projected by W_hr when given)."""
    gates = _C.addmm(x, h, w_hh_t)  # (B, 4H): i, f, g, o
    hidden = c.size(1)
    i, f, _, o = gates.sigmoid().chunk(4, 1)
    g = gates.narrow(1, 2 * hidden, hidden).tanh()
    c = f * c + i * g
    h = o * c.tanh()
    if w_hr_t is not None:
        h = h.matmul(w_hr_t)
    return h, c


def _gru_step(x, h, w_hh_t, b_hh):
    """h' = (1 - z) n + z h, with r, z = sigmoid(x_rz + W_h{r,z} h + b_h{r,z}) and
    n = tanh(x_n + r (W_hn h + b_hn))."""
    gh = _C.addmm(b_hh, h, w_hh_t) if b_hh is not None else h.matmul(w_hh_t)  # (B, 3H): r, z, n
    hidden = h.size(1)
    r, z = (x.narrow(1, 0, 2 * hidden) + gh.narrow(1, 0, 2 * hidden)).sigmoid().chunk(2, 1)
    n = (x.narrow(1, 2 * hidden, hidden) + r * gh.narrow(1, 2 * hidden, hidden)).tanh()
    return n + z * (h - n)


def _folded_bias(mode: str, b_ih, b_hh):
    """The bias added to the input projection: b_ih + b_hh, except for the GRU, whose b_hn
    is multiplied by the reset gate and so stays with the hidden projection."""
    if b_ih is None or mode == "GRU":
        return b_ih
    return b_ih + b_hh


def _step_fn(mode: str, w_hh_t, b_hh, w_hr_t):
    if mode == "LSTM":
        return lambda x, state: _lstm_step(x, state[0], state[1], w_hh_t, w_hr_t)
    if mode == "GRU":
        return lambda x, state: (_gru_step(x, state[0], w_hh_t, b_hh),)
    relu = mode == "RNN_RELU"
    return lambda x, state: (_rnn_step(x, state[0], w_hh_t, relu),)


def _composed_direction(mode: str, x, sizes: List[int], packed: bool, state: tuple, params: tuple, reverse: bool):
    """One layer in one direction composed of ops: (outputs, final state). x is (T, B, in),
    or with packed (N, in) whose step t holds sizes[t] rows."""
    w_ih, w_hh, b_ih, b_hh, w_hr = params
    # every step's input projection in one multiply: (T, B, in) -> (T, B, gates * H)
    proj = F.linear(x, w_ih, _folded_bias(mode, b_ih, b_hh))
    steps = proj.split(sizes) if packed else proj.unbind(0)
    step = _step_fn(mode, w_hh.t(), b_hh, w_hr.t() if w_hr is not None else None)

    T = len(sizes)
    outputs = [None] * T
    if not reverse:
        # sequences that end leave the batch (the last rows); their final state is set aside
        ended = []
        for t in range(T):
            n = sizes[t]
            if n < state[0].size(0):
                ended.append(tuple(s[n:] for s in state))
                state = tuple(s[:n] for s in state)
            state = step(steps[t], state)
            outputs[t] = state[0]
        if ended:
            state = tuple(_C.cat([s] + [e[k] for e in reversed(ended)]) for k, s in enumerate(state))
    else:
        # backwards, sequences join the batch as their last step comes, from the initial state
        initial = state
        state = tuple(s[:sizes[-1]] for s in initial)
        for t in range(T - 1, -1, -1):
            n = sizes[t]
            if n > state[0].size(0):
                state = tuple(_C.cat([s, s0[s.size(0):n]]) for s, s0 in zip(state, initial))
            state = step(steps[t], state)
            outputs[t] = state[0]
    output = _C.cat(outputs) if packed else _C.stack(outputs)
    return output, state


def _composed_backward(ctx, inputs: tuple, grads: tuple) -> tuple:
    """_FusedRecurrence's backward under create_graph: the composed recurrence rerun from
    the saved inputs and differentiated with a graph, so double backward works as torch's."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = inputs
    need = ctx.needs_input_grad[3:]
    state = (h0, c0) if ctx.mode == "LSTM" else (h0,)
    with enable_grad():
        out, last = _composed_direction(ctx.mode, x, ctx.sizes, True, state, (w_ih, w_hh, b_ih, b_hh, w_hr),
                                        ctx.reverse)
    outs = (out,) + tuple(last)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    wanted = [i for i, t in enumerate(inputs) if t is not None and need[i]]
    found = autograd_grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                          create_graph=True, allow_unused=True)
    result = [None] * len(inputs)
    for i, gr in zip(wanted, found):
        result[i] = gr
    return (None, None, None) + tuple(result)
# ---- the fused path: one autograd node per layer and direction ----
#
# Forward runs the recurrence with every step's gate activations (and, for the LSTM, its
# cell states; for the GRU, its hidden projection W_hn h + b_hn) written into buffers of
# all N rows (N = T * B, or a packed batch's total), and the states each step started from
# stacked into one (N, out) buffer. Backward walks the steps back computing each step's
# gate gradients (a few pointwise ops) and the previous state's gradient (one product),
# then forms W_hh's, W_ih's and the input's gradients as one product each over all N rows
# and the biases as one sum.

def _fused_mode(x, tensors) -> str:
    """How a layer runs: "record" (the fused path as one autograd node: grad mode on and
    something needs a gradient), "run" (the fused path's step kernels, nothing recorded:
    inference) or "composed" (composed of ops: other dtypes or devices, or a forward-mode
    tangent). The fused path takes float32/float64 CPU inputs."""
    if x.dtype not in (_C.float32, _C.float64) or x.device.type != "cpu":
        return "composed"
    tensors = [t for t in tensors if t is not None]
    if not all(_C._fw_tangent(t) is None for t in tensors):
        return "composed"
    if _C.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return "record"
    return "run"


# The per-step products (h W_hh^T forward, dgates W_hh backward) of a float32 layer whose
# batch is at most this many rows run through _C._rnn_packed_mm with W_hh packed once per
# call (kernels/nn_rnn.cpp): OpenBLAS would repack the whole weight every step.
_PANEL = 24
_PACKED_MAX_ROWS = 128


def _packed_panels(w):
    """w (k, n) as _rnn_packed_mm's weight: ceil(n / 24) panels, each (k, 24) row-major,
    the last padded with zeros."""
    k, n = w.shape
    panels = -(-n // _PANEL)
    if panels * _PANEL != n:
        w = F.pad(w, (0, panels * _PANEL - n))
    return w.reshape(k, panels, _PANEL).permute(1, 0, 2).contiguous()


def _uses_packed(x, sizes: List[int]) -> bool:
    return x.dtype == _C.float32 and max(sizes) <= _PACKED_MAX_ROWS


def _offsets(sizes: List[int]) -> List[int]:
    offs = [0]
    for n in sizes:
        offs.append(offs[-1] + n)
    return offs


def _fused_run(mode, sizes, reverse, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
    """One layer in one direction by the step kernels: (outputs, buffers, order, offs,
    packed), outputs (output (N, out), h_n (B, out)[, c_n (B, H)]), buffers what backward
    reads. sizes[t] rows of x belong to step t. Also the path of inference (no_grad)."""
    T = len(sizes)
    offs = _offsets(sizes)
    N, G = offs[-1], _NUM_GATES[mode]
    H = w_hh.size(0) // G
    out_size = w_hh.size(1)
    bias = _folded_bias(mode, b_ih, b_hh)
    w_ih_t = w_ih.t()
    gates = _C.addmm(bias, x, w_ih_t) if bias is not None else _C.mm(x, w_ih_t)  # (N, G * H)
    packed = _uses_packed(x, sizes)
    w_hh_t = _packed_panels(w_hh.t()) if packed else w_hh.t().contiguous()
    w_hr_t = w_hr.t().contiguous() if w_hr is not None else None
    lstm, gru = mode == "LSTM", mode == "GRU"
    out = x.new_empty((N, out_size))
    hprev = x.new_empty((N, out_size))  # the state each step starts from
    if lstm:
        cells = x.new_empty((N, H))
        cprev = x.new_empty((N, H))
        tanh_c = x.new_empty((N, H))
        hfull = x.new_empty((N, H)) if w_hr is not None else None
    if gru:
        gh = x.new_empty((N, G * H))  # W_hh h + b_hh per step
        if packed and b_hh is not None:
            gh.copy_(b_hh)
    relu = mode == "RNN_RELU"
    order = range(T - 1, -1, -1) if reverse else range(T)
    first = sizes[order[0]]
    h = h0[:first]
    c = c0[:first] if lstm else None
    ended = []  # (h, c) rows whose sequence ended: their final state
    for t in order:
        n, lo = sizes[t], offs[t]
        hi = lo + n
        hp = hprev[lo:hi]
        have = h.size(0)
        if n <= have:
            hp.copy_(h[:n])
            if n < have:
                ended.append((h[n:], c[n:] if lstm else None))
        else:  # backwards, sequences join from the initial state
            hp[:have].copy_(h)
            hp[have:].copy_(h0[have:n])
        g = gates[lo:hi]
        if lstm:
            cp = cprev[lo:hi]
            if n <= have:
                cp.copy_(c[:n])
            else:
                cp[:have].copy_(c)
                cp[have:].copy_(c0[have:n])
            if packed:
                _C._rnn_packed_mm(hp, w_hh_t, g, True)
            else:
                g.addmm_(hp, w_hh_t)
            cc = cells[lo:hi]
            if hfull is not None:
                hf = hfull[lo:hi]
                _C._lstm_cell_forward(g, cp, cc, tanh_c[lo:hi], hf)
                _C.mm(hf, w_hr_t, out=out[lo:hi])
            else:
                _C._lstm_cell_forward(g, cp, cc, tanh_c[lo:hi], out[lo:hi])
            c = cc
        elif gru:
            gg = gh[lo:hi]
            if packed:
                _C._rnn_packed_mm(hp, w_hh_t, gg, b_hh is not None)
            elif b_hh is not None:
                _C.addmm(b_hh, hp, w_hh_t, out=gg)
            else:
                _C.mm(hp, w_hh_t, out=gg)
            rz = g[:, :2 * H]
            rz.add_(gg[:, :2 * H]).sigmoid_()
            nn_ = g[:, 2 * H:]
            nn_.addcmul_(g[:, :H], gg[:, 2 * H:]).tanh_()
            o = out[lo:hi]
            _C.sub(hp, nn_, out=o)
            o.mul_(g[:, H:2 * H]).add_(nn_)  # n + z (h - n)
        else:
            if packed:
                _C._rnn_packed_mm(hp, w_hh_t, g, True)
            else:
                g.addmm_(hp, w_hh_t)
            if relu:
                g.relu_()
            else:
                g.tanh_()
            out[lo:hi].copy_(g)
        h = out[lo:hi]
    h_n = _C.cat([h] + [e[0] for e in reversed(ended)])
    c_n = _C.cat([c] + [e[1] for e in reversed(ended)]) if lstm else None
    if lstm:
        buffers = (gates, hprev, cells, cprev, tanh_c, hfull)
    else:
        buffers = (gates, hprev, gh if gru else None, None, None, None)
    outputs = (out, h_n, c_n) if lstm else (out, h_n)
    return outputs, buffers, list(order), offs, packed


class _FusedRecurrence(Function):
    """One layer in one direction recorded as one node: _fused_run forward, the steps
    walked back in backward."""

    @staticmethod
    def forward(ctx, mode, sizes, reverse, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
        outputs, buffers, ctx.order, ctx.offs, ctx.packed = _fused_run(mode, sizes, reverse, x, h0, c0, w_ih,
                                                                       w_hh, b_ih, b_hh, w_hr)
        ctx.mode, ctx.sizes, ctx.reverse = mode, sizes, reverse
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, *buffers)
        return outputs

    @staticmethod
    def backward(ctx, grad_out, grad_hn, grad_cn=None):
        saved = ctx.saved_tensors
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = saved[:8]
        if _C.is_grad_enabled():  # create_graph: differentiate the composed recurrence instead
            return _composed_backward(ctx, saved[:8], (grad_out, grad_hn, grad_cn))
        mode, sizes, order, offs = ctx.mode, ctx.sizes, ctx.order, ctx.offs
        lstm, gru = mode == "LSTM", mode == "GRU"
        gates, hprev = saved[8], saved[9]
        if lstm:
            cells, cprev, tanh_c, hfull = saved[10:]
        else:
            gh = saved[10]
        N, G = offs[-1], _NUM_GATES[mode]
        H = w_hh.size(0) // G
        B, out_size = h0.size(0), w_hh.size(1)
        dgates = gates.new_empty((N, G * H))  # the pre-activation gradients, W_ih side
        dgh = gates.new_empty((N, G * H)) if gru else dgates  # W_hh side (the GRU's differs in n)
        if grad_out is not None:  # one copy, also of an expanded gradient (a sum's)
            dh_all = gates.new_empty((N, out_size))
            dh_all.copy_(grad_out)
        else:
            dh_all = gates.new_zeros((N, out_size))
        dh0 = h0.new_zeros((B, out_size))
        dhp = h0.new_empty((B, out_size))  # the gradient of the state a step started from
        if lstm:
            dc0 = h0.new_zeros((B, H))
            dc = h0.new_empty((B, H))  # the cell's gradient; after a step's kernel, c_prev's
            dhf = h0.new_empty((B, H)) if hfull is not None else None
        # the step's product dgates W_hh, with W_hh packed (see _uses_packed) or by mm
        if ctx.packed:
            w_hh_p = _packed_panels(w_hh)

            def step_mm(dg, dst, accumulate):
                _C._rnn_packed_mm(dg, w_hh_p, dst, accumulate)
        else:
            def step_mm(dg, dst, accumulate):
                if accumulate:
                    dst.addmm_(dg, w_hh)
                else:
                    _C.mm(dg, w_hh, out=dst)
        K = len(order)
        for k in range(K - 1, -1, -1):
            t = order[k]
            n, lo = sizes[t], offs[t]
            hi = lo + n
            nxt = sizes[order[k + 1]] if k + 1 < K else 0
            m = min(n, nxt)
            dh = dh_all[lo:hi]
            if m:
                dh[:m].add_(dhp[:m])
            if nxt < n and grad_hn is not None:
                dh[nxt:].add_(grad_hn[nxt:n])
            if nxt > n:
                dh0[n:nxt].copy_(dhp[n:nxt])
            g = gates[lo:hi]
            dg = dgates[lo:hi]
            if lstm:
                dcn = dc[:n]  # rows below m hold the later step's c_prev gradient already
                if nxt > n:
                    dc0[n:nxt].copy_(dc[n:nxt])
                if nxt < n:
                    if grad_cn is not None:
                        dcn[nxt:].copy_(grad_cn[nxt:n])
                    else:
                        dcn[nxt:].zero_()
                if dhf is not None:
                    dhh = dhf[:n]
                    _C.mm(dh, w_hr, out=dhh)
                else:
                    dhh = dh
                _C._lstm_cell_backward(g, cprev[lo:hi], tanh_c[lo:hi], dhh, dcn, dg)
                step_mm(dg, dhp[:n], False)
            elif gru:  # the kernel writes dh z into dhp, the product adds to it
                _C._gru_cell_backward(g, gh[lo:hi], hprev[lo:hi], dh, dg, dgh[lo:hi], dhp[:n])
                step_mm(dgh[lo:hi], dhp[:n], True)
            else:
                if mode == "RNN_RELU":
                    _C.mul(dh, g > 0, out=dg)
                else:
                    _C.mul(dh, g, out=dg)
                    _C.sub(dh, dg.mul_(g), out=dg)
                step_mm(dg, dhp[:n], False)
        first = sizes[order[0]]
        dh0[:first].copy_(dhp[:first])
        if lstm:
            dc0[:first].copy_(dc[:first])
        need = ctx.needs_input_grad
        dx = _C.mm(dgates, w_ih) if need[3] else None
        dw_ih = _C.mm(dgates.t(), x) if need[6] else None
        dw_hh = _C.mm(dgh.t(), hprev) if need[7] else None
        db_ih = dgates.sum(0) if need[8] else None
        db_hh = (db_ih if db_ih is not None and not gru else dgh.sum(0)) if need[9] else None
        dw_hr = _C.mm(dh_all.t(), hfull) if lstm and need[10] else None
        return (None, None, None, dx, dh0 if need[4] else None, dc0 if lstm and need[5] else None,
                dw_ih, dw_hh, db_ih, db_hh, dw_hr)


def _int_arg(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be greater than zero")


class RNNBase(Module):
    """The multi-layer recurrent network shared by RNN, LSTM and GRU (mode 'RNN_TANH',
    'RNN_RELU', 'LSTM' or 'GRU'). Parameters, per layer k and direction:
    weight_ih_l{k} (gates * hidden, layer input), weight_hh_l{k} (gates * hidden, hidden or
    proj_size), bias_ih_l{k}, bias_hh_l{k}, weight_hr_l{k} (proj_size, hidden) for a
    projected LSTM; '_reverse' names the backward direction. All start from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        _int_arg("hidden_size", hidden_size)
        _int_arg("input_size", input_size)
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _NUM_GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size

        directions = 2 if bidirectional else 1
        out_size = proj_size if proj_size > 0 else hidden_size
        gate_size = _NUM_GATES[mode] * hidden_size
        self._flat_weights_names: List[str] = []
        self._all_weights: List[List[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else out_size * directions
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = [f"{kind}_l{layer}{suffix}" for kind, _ in shapes]
                for name, (_, shape) in zip(names, shapes):
                    setattr(self, name, Parameter(_C.empty(shape, dtype=dtype, device=device)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> List[list]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: ember keeps no fused weight buffer (torch's is for cuDNN)."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ----

    def _name(self) -> str:
        return "RNN" if self.mode in ("RNN_TANH", "RNN_RELU") else self.mode

    def _out_size(self) -> int:
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    def _check_input(self, input, packed: bool) -> None:
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if packed else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def _check_hidden(self, hx, expected, what: str) -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    def _initial_states(self, hx, batch: int, is_batched: bool, like, sorted_indices) -> tuple:
        """(h0,) or, for the LSTM, (h0, c0): each (layers * directions, B, size), zeros of
        like's dtype and device when hx is None."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        sizes = (self._out_size(), self.hidden_size) if self.mode == "LSTM" else (self.hidden_size,)
        if hx is None:
            return tuple(like.new_zeros((layers, batch, size)) for size in sizes)
        if self.mode == "LSTM":
            states = (hx[0], hx[1])
            dims = f"({states[0].dim()}-D, {states[1].dim()}-D) tensors"
            what = "hx and cx should also be"
        else:
            states = (hx,)
            dims = f"{hx.dim()}-D tensor"
            what = "hx should also be"
        want = 3 if is_batched else 2
        if any(s.dim() != want for s in states):
            kind = "batched 3-D" if is_batched else "unbatched 2-D"
            raise RuntimeError(f"For {kind} input, {what} {want}-D but got {dims}")
        if not is_batched:
            states = tuple(s.unsqueeze(1) for s in states)
        if sorted_indices is not None:
            states = tuple(s.index_select(1, sorted_indices) for s in states)
        for i, (s, size) in enumerate(zip(states, sizes)):
            what = f"hidden[{i}]" if self.mode == "LSTM" else "hidden"
            self._check_hidden(s, (layers, batch, size), what)
        return states

    def forward(self, input, hx=None):
        """input (T, B, input_size) ((B, T, input_size) with batch_first, unbatched
        (T, input_size), or a PackedSequence) -> (output (T, B, D * out), h_n (D * layers,
        B, out)), for the LSTM (output, (h_n, c_n)); hx the initial state(s), zeros by
        default. out is hidden_size, or proj_size for a projected LSTM."""
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            self._check_input(data, packed=True)
            sizes = [int(n) for n in batch_sizes.tolist()]
            batch, is_batched = sizes[0], True
            x = data
        else:
            if input.dim() not in (2, 3):
                tail = "tensor instead" if self._name() == "RNN" else "instead"
                raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got {input.dim()}D {tail}")
            is_batched = input.dim() == 3
            sorted_indices = unsorted_indices = None
            if not is_batched:
                x = input.unsqueeze(1)  # (T, in) -> (T, 1, in)
            else:
                x = input.transpose(0, 1) if self.batch_first else input  # time-major (T, B, in)
            self._check_input(x, packed=False)
            if x.size(0) == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            batch = x.size(1)
            sizes = [batch] * x.size(0)
        states = self._initial_states(hx, batch, is_batched, x, sorted_indices)

        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                weights = [getattr(self, name) for name in self._all_weights[index]]
                out, last = self._run_direction(x, sizes, packed, tuple(s[index] for s in states), weights,
                                                reverse=direction == 1)
                outputs.append(out)
                for acc, s in zip(finals, last):
                    acc.append(s)
            x = outputs[0] if directions == 1 else _C.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        finals = [_C.stack(acc) for acc in finals]  # (layers * directions, B, size)

        if packed:
            if unsorted_indices is not None:
                finals = [s.index_select(1, unsorted_indices) for s in finals]
            output = PackedSequence(x, batch_sizes, sorted_indices, unsorted_indices)
        elif not is_batched:
            output = x.squeeze(1)
            finals = [s.squeeze(1) for s in finals]
        else:
            output = x.transpose(0, 1) if self.batch_first else x
        if self.mode == "LSTM":
            return output, (finals[0], finals[1])
        return output, finals[0]

    def _run_direction(self, x, sizes: List[int], packed: bool, state: tuple, weights: list, reverse: bool):
        """One layer in one direction over the whole sequence: (outputs, final state).
        sizes[t] is the batch at step t (non-increasing: sequences are sorted by length).
        By the step kernels (_fused_run; recorded as one _FusedRecurrence node where a gradient
        is needed), or composed of ops (_fused_mode)."""
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
        w_hr = weights[-1] if self.proj_size > 0 else None
        params = (w_ih, w_hh, b_ih, b_hh, w_hr)
        c0 = state[1] if self.mode == "LSTM" else None
        how = _fused_mode(x, (x, state[0], c0) + params)
        if how == "composed":
            return _composed_direction(self.mode, x, sizes, packed, state, params, reverse)
        x2d = x if packed else x.reshape(x.size(0) * x.size(1), x.size(2))
        if how == "record":
            res = _FusedRecurrence.apply(self.mode, sizes, reverse, x2d, state[0], c0, *params)
        else:
            res = _fused_run(self.mode, sizes, reverse, x2d, state[0], c0, *params)[0]
        out = res[0] if packed else res[0].view(x.size(0), x.size(1), res[0].size(1))
        return out, tuple(res[1:])


class RNN(RNNBase):
    """Elman RNN: h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh), act tanh or relu
    (nonlinearity), over num_layers layers (dropout between them in training), optionally
    bidirectional.

    >>> rnn = ember.nn.RNN(3, 4, num_layers=2)
    >>> output, h_n = rnn(ember.ones(5, 2, 3))
    >>> output.shape, h_n.shape
    (ember.Size([5, 2, 4]), ember.Size([2, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of
    W_ih x_t + b_ih + W_hh h_(t-1) + b_hh; c_t = f c_(t-1) + i g, h_t = o tanh(c_t),
    projected by W_hr to proj_size when proj_size > 0.

    >>> lstm = ember.nn.LSTM(3, 4, batch_first=True)
    >>> output, (h_n, c_n) = lstm(ember.ones(2, 5, 3))
    >>> output.shape, h_n.shape, c_n.shape
    (ember.Size([2, 5, 4]), ember.Size([1, 2, 4]), ember.Size([1, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent unit: r, z = sigmoid(W_i{r,z} x_t + b_i{r,z} + W_h{r,z} h + b_h{r,z}),
    n = tanh(W_in x_t + b_in + r (W_hn h + b_hn)), h_t = (1 - z) n + z h_(t-1).

    >>> gru = ember.nn.GRU(3, 4, bidirectional=True)
    >>> output, h_n = gru(ember.ones(5, 2, 3))
    >>> output.shape, h_n.shape
    (ember.Size([5, 2, 8]), ember.Size([2, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


# ---- cells ----

class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih (chunks * hidden, input), weight_hh
    (chunks * hidden, hidden), bias_ih, bias_hh, from U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_C.empty((num_chunks * hidden_size, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(_C.empty((num_chunks * hidden_size, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(_C.empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(_C.empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, name: str, input, states, state_name):
        """input as (B, input_size) and the states as (B, hidden) (zeros when None), after
        torch's checks; and whether the input had a batch dim."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, s in enumerate(states):
            if s is not None and s.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {state_name(i)} to be 1D or 2D, got {s.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        batch = input.size(0)
        states = [input.new_zeros((batch, self.hidden_size)) if s is None
                  else (s if is_batched else s.unsqueeze(0)) for s in states]
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for i, s in enumerate(states):
            if s.size(0) != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{i} batch size {s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, states, is_batched

    def _input_projection(self, mode: str, input):
        return F.linear(input, self.weight_ih, _folded_bias(mode, self.bias_ih, self.bias_hh))


class RNNCell(RNNCellBase):
    """h' = act(W_ih x + b_ih + W_hh h + b_hh), act tanh or relu: (B, input) and (B, hidden)
    (or unbatched) -> (B, hidden).

    >>> ember.nn.RNNCell(3, 4)(ember.ones(2, 3)).shape
    ember.Size([2, 4])
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._batched("RNNCell", input, [hx], lambda i: "hidden")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = _rnn_step(self._input_projection("RNN_TANH", input), h, self.weight_hh.t(), self.nonlinearity == "relu")
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (input (B, input), (h, c) each (B, hidden), zeros when omitted) ->
    (h', c') (or unbatched).

    >>> h, c = ember.nn.LSTMCell(3, 4)(ember.ones(2, 3))
    >>> h.shape, c.shape
    (ember.Size([2, 4]), ember.Size([2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        states = [None, None] if hx is None else [hx[0], hx[1]]
        input, (h, c), is_batched = self._batched("LSTMCell", input, states, lambda i: f"hx[{i}]")
        h, c = _lstm_step(self._input_projection("LSTM", input), h, c, self.weight_hh.t(), None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: (B, input) and (B, hidden) (or unbatched) -> (B, hidden).

    >>> ember.nn.GRUCell(3, 4)(ember.ones(3)).shape
    ember.Size([4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._batched("GRUCell", input, [hx], lambda i: "hidden")
        h = _gru_step(self._input_projection("GRU", input), h, self.weight_hh.t(), self.bias_hh)
        return h if is_batched else h.squeeze(0)
