"""Recurrent layers: RNN (tanh or relu), LSTM (optionally projected), GRU, and their
one-step cells, with torch's parameter names, shapes, gate order and initialization.

Each layer and direction projects the inputs of all time steps with one matrix multiply,
then loops over time with one hidden-state multiply per step. Packed sequences run the
same loop on a batch that shrinks (or, backwards, grows) as sequences end."""
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
        sizes[t] is the batch at step t (non-increasing: sequences are sorted by length)."""
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
        w_hr = weights[-1] if self.proj_size > 0 else None
        # every step's input projection in one multiply: (T, B, in) -> (T, B, gates * H)
        proj = F.linear(x, w_ih, _folded_bias(self.mode, b_ih, b_hh))
        steps = proj.split(sizes) if packed else proj.unbind(0)
        step = self._step_fn(w_hh.t(), b_hh, w_hr.t() if w_hr is not None else None)

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

    def _step_fn(self, w_hh_t, b_hh, w_hr_t):
        mode = self.mode
        if mode == "LSTM":
            return lambda x, state: _lstm_step(x, state[0], state[1], w_hh_t, w_hr_t)
        if mode == "GRU":
            return lambda x, state: (_gru_step(x, state[0], w_hh_t, b_hh),)
        relu = mode == "RNN_RELU"
        return lambda x, state: (_rnn_step(x, state[0], w_hh_t, relu),)


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
