"""Modules exported whole: ember runs LSTM/GRU/RNN as a per-step composition, ONNX has
one operator for each layer of them (gates reordered: torch's LSTM rows are i, f, g, o
and ONNX's i, o, f, c; torch's GRU rows r, z, n and ONNX's z, r, h, with
linear_before_reset=1, torch's GRU form)."""
from __future__ import annotations

import numpy as np

from ._symbolic import to_numpy

_GATES = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}


def _reorder(array: np.ndarray, mode: str) -> np.ndarray:
    blocks = np.split(array, len(_GATES[mode]), axis=0)
    return np.concatenate([blocks[k] for k in _GATES[mode]], axis=0)


def _recurrent(b):
    r = b.record
    m = r.module
    mode = m.mode
    if m.proj_size:
        b.fail("an LSTM with proj_size is not mapped")
    x_t = r.args[0]
    if not hasattr(x_t, "dim"):
        b.fail("a PackedSequence input is not mapped")
    hx = r.args[1] if len(r.args) > 1 else None
    states = [] if hx is None else (list(hx) if mode == "LSTM" else [hx])
    batched = x_t.dim() == 3
    x = b.value(x_t)
    if not batched:
        x = b.unsqueeze(x, [1])  # (T, in) -> (T, 1, in)
    elif m.batch_first:
        x = b.node("Transpose", [x], perm=[1, 0, 2])  # (B, T, in) -> (T, B, in)
    states = [b.value(s) if batched else b.unsqueeze(b.value(s), [1]) for s in states]
    D = 2 if m.bidirectional else 1
    H = m.hidden_size
    op = "LSTM" if mode == "LSTM" else "GRU" if mode == "GRU" else "RNN"
    attrs = {"hidden_size": H, "direction": "bidirectional" if D == 2 else "forward"}
    if op == "GRU":
        attrs["linear_before_reset"] = 1
    if op == "RNN":
        attrs["activations"] = ["Relu" if mode == "RNN_RELU" else "Tanh"] * D
    finals = [[] for _ in range(2 if op == "LSTM" else 1)]
    dtype = to_numpy(x_t[:0]).dtype
    for layer in range(m.num_layers):
        W, R, B = [], [], []
        for d in range(D):
            weights = [to_numpy(getattr(m, n)) for n in m._all_weights[layer * D + d]]
            W.append(_reorder(weights[0], mode))
            R.append(_reorder(weights[1], mode))
            gh = len(_GATES[mode]) * H
            biases = [_reorder(w, mode) for w in weights[2:4]] if m.bias else [np.zeros(gh, dtype)] * 2
            B.append(np.concatenate(biases))
        inputs = [x, b.initializer(np.stack(W)), b.initializer(np.stack(R)), b.initializer(np.stack(B)), ""]
        for s in states:  # this layer's initial states: rows layer*D .. layer*D + D
            inputs.append(b.node("Slice", [s, b.ints([layer * D]), b.ints([layer * D + D]), b.ints([0])]))
        while inputs and inputs[-1] == "":
            inputs.pop()
        outs = b.node(op, inputs, outputs=1 + len(finals), **attrs)
        y = outs[0]
        for acc, o in zip(finals, outs[1:]):
            acc.append(o)
        # Y (T, D, B, H) -> (T, B, D * H)
        x = b.node("Reshape", [b.node("Transpose", [y], perm=[0, 2, 1, 3]), b.ints([0, 0, -1])])
    if not batched:
        out = b.squeeze(x, [1])
    elif m.batch_first:
        out = b.node("Transpose", [x], perm=[1, 0, 2])
    else:
        out = x
    results = [out]
    for acc in finals:
        h = acc[0] if len(acc) == 1 else b.node("Concat", acc, axis=0)
        results.append(h if batched else b.squeeze(h, [1]))
    return results


MODULES = {"LSTM": _recurrent, "GRU": _recurrent, "RNN": _recurrent}
