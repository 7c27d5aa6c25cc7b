"""ember.onnx.export: every layer the issue lists, exported and run in onnxruntime, against
ember's own output (float32 tolerance), with a dynamic batch axis; a small GPT; the
recurrent layers as ONNX's LSTM/GRU/RNN nodes; the errors; the trace hook at rest."""
import io
import math
import subprocess
import sys

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
np = pytest.importorskip("numpy")


def _flat(x):
    if isinstance(x, ember.Tensor):
        return [x]
    if x is None:
        return []
    return [t for item in x for t in _flat(item)]


def export_and_run(model, inputs, batched=None, opset=None, atol=1e-5):
    """Exports model at inputs (batch axis 0 of every input dynamic when `batched` gives
    the inputs at another batch size), runs the ONNX model in onnxruntime at `batched`
    (or inputs), compares with ember's output; returns the ModelProto."""
    if isinstance(model, nn.Module):
        model.eval()
    names = [f"in{i}" for i in range(len(inputs))]
    buf = io.BytesIO()
    dyn = {n: {0: "batch"} for n in names} if batched is not None else None
    ember.onnx.export(model, tuple(inputs), buf, input_names=names, dynamic_axes=dyn, opset_version=opset)
    proto = onnx.load_from_string(buf.getvalue())
    run_inputs = batched if batched is not None else inputs
    with ember.no_grad():
        expected = _flat(model(*run_inputs))
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {n: t.numpy() for n, t in zip(names, run_inputs)})
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == tuple(e.shape)
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-4, atol=atol)
    return proto


def op_types(proto):
    return {n.op_type for n in proto.graph.node}


def rand(*shape):
    return ember.randn(*shape)


# (name, module factory, input factory taking the batch size)
LAYERS = [
    ("Linear", lambda: nn.Linear(6, 4), lambda b: [rand(b, 6)]),
    ("Linear (3-D input)", lambda: nn.Linear(6, 4), lambda b: [rand(b, 3, 6)]),
    ("MLP", lambda: nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2)), lambda b: [rand(b, 6)]),
    ("Conv1d", lambda: nn.Conv1d(3, 4, 3, padding=1), lambda b: [rand(b, 3, 10)]),
    ("Conv2d", lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1, dilation=1), lambda b: [rand(b, 3, 9, 9)]),
    ("Conv2d groups", lambda: nn.Conv2d(4, 4, 3, groups=2, bias=False), lambda b: [rand(b, 4, 7, 7)]),
    ("ConvTranspose2d", lambda: nn.ConvTranspose2d(3, 2, 3, stride=2), lambda b: [rand(b, 3, 5, 5)]),
    ("MaxPool1d", lambda: nn.MaxPool1d(2), lambda b: [rand(b, 3, 10)]),
    ("MaxPool2d", lambda: nn.MaxPool2d(3, stride=2, padding=1), lambda b: [rand(b, 3, 9, 9)]),
    ("MaxPool2d ceil_mode", lambda: nn.MaxPool2d(2, ceil_mode=True), lambda b: [rand(b, 3, 7, 7)]),
    ("AvgPool1d", lambda: nn.AvgPool1d(2), lambda b: [rand(b, 3, 10)]),
    ("AvgPool2d", lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), lambda b: [rand(b, 3, 9, 9)]),
    ("AdaptiveAvgPool2d(1)", lambda: nn.AdaptiveAvgPool2d(1), lambda b: [rand(b, 3, 8, 8)]),
    ("AdaptiveAvgPool2d(2)", lambda: nn.AdaptiveAvgPool2d(2), lambda b: [rand(b, 3, 8, 8)]),
    ("AdaptiveMaxPool2d(1)", lambda: nn.AdaptiveMaxPool2d(1), lambda b: [rand(b, 3, 8, 8)]),
    ("BatchNorm1d", lambda: _with_stats(nn.BatchNorm1d(3)), lambda b: [rand(b, 3, 10)]),
    ("BatchNorm2d", lambda: _with_stats(nn.BatchNorm2d(3)), lambda b: [rand(b, 3, 5, 5)]),
    ("LayerNorm", lambda: nn.LayerNorm(6), lambda b: [rand(b, 3, 6)]),
    ("LayerNorm 2-D shape", lambda: nn.LayerNorm([3, 6], elementwise_affine=False), lambda b: [rand(b, 3, 6)]),
    ("GroupNorm", lambda: nn.GroupNorm(2, 4), lambda b: [rand(b, 4, 5, 5)]),
    ("Embedding", lambda: nn.Embedding(10, 4), lambda b: [ember.randint(0, 10, (b, 5))]),
    ("Dropout (eval)", lambda: nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5)), lambda b: [rand(b, 6)]),
    ("Flatten", lambda: nn.Sequential(nn.Conv2d(3, 2, 3), nn.Flatten(), nn.Linear(2 * 3 * 3, 2)),
     lambda b: [rand(b, 3, 5, 5)]),
    ("Softmax", lambda: nn.Softmax(dim=-1), lambda b: [rand(b, 5)]),
    ("LogSoftmax", lambda: nn.LogSoftmax(dim=1), lambda b: [rand(b, 5)]),
    ("MultiheadAttention", lambda: _MHA(), lambda b: [rand(b, 5, 8)]),
    ("MultiheadAttention key_padding_mask", lambda: _MHA(padding_mask=True), lambda b: [rand(b, 5, 8)]),
    ("Conv2d padding modes", lambda: nn.Sequential(nn.Conv2d(3, 2, 3, padding=1, padding_mode="reflect"),
                                                   nn.Conv2d(2, 2, 3, padding="same"),
                                                   nn.Conv2d(2, 2, 3, padding=1, padding_mode="circular")),
     lambda b: [rand(b, 3, 6, 6)]),
    ("Upsample and F.pad", lambda: _fn_model(lambda x: F.pad(nn.Upsample(scale_factor=2)(x), (1, 2, 0, 1))),
     lambda b: [rand(b, 3, 4, 4)]),
    ("PReLU, Unflatten", lambda: nn.Sequential(nn.PReLU(), nn.Unflatten(1, (2, 3))), lambda b: [rand(b, 6)]),
    ("TransformerEncoderLayer", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True),
     lambda b: [rand(b, 5, 8)]),
    ("TransformerEncoder (norm_first, gelu)", lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True, batch_first=True), 2,
        enable_nested_tensor=False), lambda b: [rand(b, 5, 8)]),
    ("TransformerDecoderLayer", lambda: nn.TransformerDecoderLayer(8, 2, 16, batch_first=True),
     lambda b: [rand(b, 4, 8), rand(b, 5, 8)]),
    ("Transformer (seq-first)", lambda: _SeqFirst(nn.Transformer(8, 2, 1, 1, 16)),
     lambda b: [rand(b, 4, 8), rand(b, 3, 8)]),
    ("LSTM", lambda: nn.LSTM(4, 6), lambda b: [rand(3, b, 4).transpose(0, 1).contiguous()]),
    ("LSTM 2 layers bidirectional batch_first", lambda: nn.LSTM(4, 5, num_layers=2, bidirectional=True,
                                                                batch_first=True), lambda b: [rand(b, 3, 4)]),
    ("GRU", lambda: nn.GRU(4, 6, batch_first=True), lambda b: [rand(b, 3, 4)]),
    ("GRU 2 layers bidirectional", lambda: nn.GRU(4, 5, num_layers=2, bidirectional=True, batch_first=True),
     lambda b: [rand(b, 3, 4)]),
    ("RNN tanh", lambda: nn.RNN(4, 6, batch_first=True), lambda b: [rand(b, 3, 4)]),
    ("RNN relu no bias", lambda: nn.RNN(4, 6, nonlinearity="relu", bias=False, batch_first=True),
     lambda b: [rand(b, 3, 4)]),
]

ACTIVATIONS = [nn.ReLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.Tanh(), nn.Sigmoid(), nn.LeakyReLU(0.2),
               nn.ELU(0.5), nn.SiLU(), nn.Softplus(), nn.Softplus(beta=2.0), nn.Hardtanh(-0.5, 0.5), nn.ReLU6(),
               nn.Hardswish(), nn.Hardsigmoid(), nn.Mish(), nn.SELU(), nn.CELU(), nn.LogSigmoid(), nn.Softsign(),
               nn.Identity()]


def _with_stats(bn):
    with ember.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-1, 1)
    return bn


class _MHA(nn.Module):
    def __init__(self, padding_mask=False):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.padding_mask = padding_mask

    def forward(self, x):
        mask = x[:, :, 0] > 1 if self.padding_mask else None  # (B, S): True is left out
        return self.attn(x, x, x, key_padding_mask=mask)  # (output, averaged weights)


class _SeqFirst(nn.Module):
    """The Transformer takes (S, B, E): the test's inputs are batch-first."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, src, tgt):
        return self.inner(src.transpose(0, 1), tgt.transpose(0, 1)).transpose(0, 1)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("opset", [None, 13, 18])  # the default (17), and where forms change
@pytest.mark.parametrize("name, make, inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_exports_and_matches_with_dynamic_batch(name, make, inputs, opset):
    ember.manual_seed(0)
    model = make()
    export_and_run(model, inputs(2), batched=inputs(5), opset=opset)


@pytest.mark.parametrize("opset", [None, 13])
@pytest.mark.parametrize("act", ACTIVATIONS, ids=lambda a: repr(a))
def test_activation(act, opset):
    export_and_run(act, [rand(2, 7) * 3], batched=[rand(4, 7) * 3], opset=opset)


def _fn_model(fn):
    class M(nn.Module):
        def forward(self, *xs):
            return fn(*xs)
    return M()


FUNCTIONS = [
    ("elementwise", lambda x, y: (x + y * 2 - x / (y.abs() + 1)) ** 2 - (-x).neg() + x.sigmoid() * y.tanh()
     + x.pow(y.abs()), 2),
    ("scalars and alpha", lambda x, y: ember.add(x, y, alpha=3) - 0.5 * x + 2 - y.sub(x, alpha=2), 2),
    ("unary math", lambda x, y: x.abs().sqrt() + x.exp().clamp(max=5) + (x.abs() + 1).log() + x.sin() * x.cos()
     + x.abs().add(1).rsqrt() + x.floor() + x.ceil() + x.sign() + (x.abs() + 1).reciprocal() + x.erf(), 2),
    ("comparisons and where", lambda x, y: ember.where(x > y, x, y) + (x <= 0).float() + (x == x).float()
     + ember.maximum(x, y) - ember.minimum(x, y) + x.masked_fill(y < 0, -1.0), 2),
    ("division modes", lambda x, y: ember.div(x, y.abs() + 0.5, rounding_mode="floor")
     + ember.div(x, y.abs() + 0.5, rounding_mode="trunc") + x // (y.abs() + 0.5), 2),
    ("reductions", lambda x, y: ember.cat([x.sum(1, keepdim=True), x.mean(-1, keepdim=True), x.amax(1, keepdim=True),
                                           x.amin(1, keepdim=True), x.max(1, keepdim=True).values,
                                           x.logsumexp(1, keepdim=True), x.var(1, keepdim=True),
                                           x.std(1, keepdim=True)], 1), 2),
    ("argmax", lambda x, y: x.argmax(1) + x.argmin(-1) + x.max(1)[1], 2),
    ("matmul and bmm", lambda x, y: ember.bmm(x.unsqueeze(2), y.unsqueeze(1)).matmul(y.unsqueeze(2)).squeeze(2), 2),
    ("reshape view permute transpose", lambda x, y: x.view(x.size(0), 2, 3).permute(0, 2, 1).transpose(1, 2)
     .reshape(-1, 6) + y.unsqueeze(-1).flatten(1), 2),
    ("cat split slice gather", lambda x, y: ember.cat(list(x.split(2, 1))[::-1] + [y[:, 1:4], y[:, ::2],
                                                                                   y.narrow(1, 0, 2)], 1)
     + 0, 2),
    ("chunk stack unbind select", lambda x, y: ember.stack(x.chunk(3, 1), -1).sum(-1)
     + ember.stack(y.unbind(1)[:2], 1) + x[:, 0:1] * y[:, -1].unsqueeze(1), 2),
    ("gather index_select index", lambda x, y: x.gather(1, (y.abs() * 2).long().clamp(max=5))
     + x.index_select(1, ember.tensor([5, 0, 1, 2, 3, 4])) + x[:, ember.tensor([1, 1, 0, 2, 3, 4])], 2),
    ("expand repeat", lambda x, y: x[:, :1].expand(-1, 6) + x.mean(0, keepdim=True).expand_as(y)
     + x[:, :3].repeat(1, 2), 2),
    ("softmax functional", lambda x, y: F.softmax(x, -1) + F.log_softmax(y, dim=1) + F.softmax(x, 0), 2),
    ("casts", lambda x, y: (x.long() + y.int()).float() + x.double().float() + x.to(ember.float64).float(), 2),
    ("triu mask and zeros_like", lambda x, y: x.masked_fill(ember.ones(6, 6).triu(1).bool()[:1, :],
                                                            float("-inf")).softmax(-1)
     + ember.zeros_like(x) + ember.ones_like(y) * 2 + ember.full_like(x, 3.0), 2),
]


@pytest.mark.parametrize("name, fn, n", FUNCTIONS, ids=[c[0] for c in FUNCTIONS])
def test_ops(name, fn, n):
    ember.manual_seed(1)
    export_and_run(_fn_model(fn), [rand(2, 6) for _ in range(n)], batched=[rand(5, 6) for _ in range(n)])


class TinyGPT(nn.Module):
    """Token and position embeddings, causal self-attention blocks, a final LayerNorm and
    a linear head (weights tied to the token embedding)."""

    def __init__(self, vocab=11, block=8, dim=16, heads=2, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        self.blocks = nn.ModuleList([_Block(dim, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        B, T = idx.shape
        x = self.tok(idx) + self.pos(ember.arange(T))  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))  # (B, T, vocab)


class _Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(0.1))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        # (B, T, C) -> (B, heads, T, C/heads)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = ember.tril(ember.ones(T, T)).view(1, 1, T, T)
        att = F.softmax(att.masked_fill(mask == 0, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


def test_small_gpt():
    ember.manual_seed(0)
    gpt = TinyGPT()
    idx = ember.randint(0, 11, (2, 8))
    proto = export_and_run(gpt, [idx], batched=[ember.randint(0, 11, (5, 8))])
    names = {i.name for i in proto.graph.initializer}
    assert "tok.weight" in names and "head.weight" not in names  # the tied weight once


def test_example_char_transformer():
    """The example's model (torch code run on ember): embeddings, causal
    scaled_dot_product_attention, LayerNorm, GELU MLP, linear head."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "char_transformer.py"
    spec = importlib.util.spec_from_file_location("char_transformer_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    ember.manual_seed(0)
    model = example.make_model_class(ember)(20, 16, dim=16, layers=2, heads=2)
    export_and_run(model, [ember.randint(0, 20, (2, 16))], batched=[ember.randint(0, 20, (3, 16))])


def test_gpt_with_sdpa_and_transformer_causal_mask():
    ember.manual_seed(0)

    class SDPA(nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    export_and_run(SDPA(), [rand(2, 2, 5, 4) for _ in range(3)], batched=[rand(3, 2, 5, 4) for _ in range(3)])

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
                                             enable_nested_tensor=False)

        def forward(self, x):
            mask = nn.Transformer.generate_square_subsequent_mask(x.size(1))
            return self.enc(x, mask=mask, is_causal=True)

    export_and_run(Encoder(), [rand(2, 5, 8)], batched=[rand(4, 5, 8)])


@pytest.mark.parametrize("make, op", [(lambda: nn.LSTM(4, 6), "LSTM"), (lambda: nn.GRU(4, 6), "GRU"),
                                      (lambda: nn.RNN(4, 6), "RNN")])
def test_recurrent_layers_are_whole_onnx_nodes(make, op):
    ember.manual_seed(0)
    m = make()
    proto = export_and_run(m, [rand(3, 2, 4)])
    types = [n.op_type for n in proto.graph.node]
    assert types.count(op) == 1 and "MatMul" not in types and "Gemm" not in types


def test_recurrent_with_initial_state():
    ember.manual_seed(0)
    lstm = nn.LSTM(4, 5, num_layers=2, batch_first=True)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lstm

        def forward(self, x, h, c):
            out, (h, c) = self.lstm(x, (h, c))
            return out, h, c

    export_and_run(M(), [rand(2, 3, 4), rand(2, 2, 5), rand(2, 2, 5)])
    gru = nn.GRU(4, 5)
    export_and_run(gru, [rand(3, 2, 4), rand(1, 2, 5)])
    export_and_run(nn.RNN(4, 5), [rand(3, 4)])  # unbatched


@pytest.mark.parametrize("opset", [13, 14, 17, 18, 20])
def test_opsets(opset):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3), nn.LogSoftmax(-1))
    proto = export_and_run(model, [rand(2, 6)], batched=[rand(3, 6)], opset=opset)
    assert proto.opset_import[0].version == opset
    assert ("LayerNormalization" in op_types(proto)) == (opset >= 17)
    export_and_run(_fn_model(lambda x: x.mean(1) + x.amax(1) + x.sum(1)), [rand(2, 6)], opset=opset)


def test_dynamic_axes_names_and_list_form():
    m = nn.Linear(3, 2)
    buf = io.BytesIO()
    ember.onnx.export(m, (rand(2, 3),), buf, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": [0]})
    proto = onnx.load_from_string(buf.getvalue())
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "y_dynamic_axes_1"
    assert proto.graph.input[0].type.tensor_type.shape.dim[1].dim_value == 3
    assert {i.name for i in proto.graph.initializer} == {"weight", "bias"}
    proto = ember.onnx.export(m, rand(2, 3), None)  # f=None: the ModelProto back
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_value == 2  # static without dynamic_axes
    with pytest.warns(UserWarning, match="key z for dynamic axes is not a valid"):  # as torch: ignored
        ember.onnx.export(m, (rand(2, 3),), io.BytesIO(), input_names=["x"], dynamic_axes={"z": [0]})


def test_export_to_path_and_function(tmp_path):
    path = tmp_path / "f.onnx"
    ember.onnx.export(lambda x, y: (x * y).relu(), (rand(2, 3), rand(2, 3)), str(path))
    sess = ort.InferenceSession(str(path))
    a, b = rand(2, 3), rand(2, 3)
    got = sess.run(None, {"input_0": a.numpy(), "input_1": b.numpy()})[0]
    np.testing.assert_allclose(got, (a * b).relu().numpy(), rtol=1e-6)


def test_restores_training_mode_and_is_in_onnx_export():
    seen = []

    class M(nn.Module):
        def forward(self, x):
            seen.append((ember.onnx.is_in_onnx_export(), self.training))
            return x + 1
    m = M().train()
    ember.onnx.export(m, rand(2), io.BytesIO())
    assert seen == [(True, False)] and m.training and not ember.onnx.is_in_onnx_export()


def test_unmappable_op_raises_naming_it():
    with pytest.raises(ember.onnx.ExportError, match="'cumsum'"):
        ember.onnx.export(_fn_model(lambda x: x.cumsum(1)), rand(2, 3), io.BytesIO())
    with pytest.raises(ember.onnx.ExportError, match="bernoulli"):  # dropout in training mode
        ember.onnx.export(_fn_model(lambda x: F.dropout(x, 0.5, True)), rand(2, 3), io.BytesIO())
    with pytest.raises(ember.onnx.ExportError, match="shares memory"):
        def write_view(x):
            y = x * 1
            y[:, 0].add_(1)
            return y
        ember.onnx.export(write_view, rand(2, 3), io.BytesIO())
    with pytest.raises(ember.onnx.ExportError, match="changes with the dynamic axis 'batch'"):
        ember.onnx.export(_fn_model(lambda x: x + ember.arange(x.size(0) * 3.0).view(-1, 3)), rand(2, 3), io.BytesIO(),
                          input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    assert not ember._C._trace_active()  # a failed export leaves no trace running


def test_bad_arguments():
    m = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="opset_version 12"):
        ember.onnx.export(m, rand(2, 3), io.BytesIO(), opset_version=12)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ember.onnx.export(m, rand(2, 3), io.BytesIO(), bogus=1)
    with pytest.raises(ValueError, match="input_names"):
        ember.onnx.export(m, rand(2, 3), io.BytesIO(), input_names=["a", "b"])


def test_in_place_and_out_ops_are_recorded_as_functional():
    def f(x):
        y = x * 2
        y.add_(1).relu_()
        y.mul_(x)
        z = ember.empty(0)
        ember.mul(y, 3, out=z)  # out=: z now holds the product
        buf = x.new_zeros(x.shape)  # sized by the batch
        buf.copy_(z)
        return buf + ember.zeros(x.size(0), 4)  # a fill sized by the batch
    export_and_run(_fn_model(f), [rand(2, 4)], batched=[rand(3, 4)])


def test_no_recording_without_a_trace():
    assert not ember._C._trace_active()
    calls = []
    ember._C._trace_start(lambda *a: calls.append(a[0]))
    try:
        ember.ones(2).add(1)
        with pytest.raises(RuntimeError, match="already running"):
            ember._C._trace_start(print)
    finally:
        ember._C._trace_stop()
    assert calls == ["add.Tensor"]  # ones() takes no tensor: not reported
    ember.ones(2).add(1).mul(2)
    assert calls == ["add.Tensor"] and not ember._C._trace_active()
    with pytest.raises(TypeError):
        ember._C._trace_start(3)


def test_trace_callback_error_propagates():
    def boom(*a):
        raise KeyError("boom")
    ember._C._trace_start(boom)
    try:
        with pytest.raises(KeyError, match="boom"):
            ember.ones(2).add(1)
    finally:
        ember._C._trace_stop()
    assert ember.ones(2).add(1).tolist() == [2.0, 2.0]


def test_import_without_onnx():
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import ember.onnx, ember\n"
            "try:\n"
            "    ember.onnx.export(ember.nn.Linear(2, 2), ember.ones(1, 2), 'unused.onnx')\n"
            "except ImportError as e:\n"
            "    assert 'pip install onnx' in str(e), e\n"
            "    print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_import_torch_onnx_through_the_alias():
    code = ("import ember; ember.install_as_torch()\n"
            "import torch.onnx\n"
            "assert torch.onnx is ember.onnx and torch.onnx.export is ember.onnx.export\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_other_threads_are_not_traced():
    import threading

    calls = []
    ember._C._trace_start(lambda *a: calls.append(a[0]))
    try:
        worker = threading.Thread(target=lambda: ember.ones(2).mul(3))
        worker.start()
        worker.join()
        ember.ones(2).add(1)
    finally:
        ember._C._trace_stop()
    assert calls == ["add.Tensor"]


def test_ops_outside_the_api_layer_are_traced():
    # detach() and x[i] = number do not go through a generated api:: function; a trace
    # that missed them took the result for a constant (the ONNX model ignored its input)
    export_and_run(_fn_model(lambda x: x.detach() * 2 + x), [rand(2, 3)], batched=[rand(4, 3)])
    export_and_run(_fn_model(lambda x: (x * 100).round(decimals=-1) + x.round(decimals=2) + x.round()),
                   [rand(2, 3)], batched=[rand(4, 3)], atol=1e-4)

    def assign(x):
        y = x * 1
        y[0] = 5.0
        return y
    with pytest.raises(ember.onnx.ExportError, match="'fill_'"):
        ember.onnx.export(assign, rand(2, 3), io.BytesIO())
    with pytest.raises(ember.onnx.ExportError, match="bitcast"):
        ember.onnx.export(lambda x: x.view(ember.int32), rand(2, 3), io.BytesIO())


def test_exception_in_forward_ends_the_trace():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x, fail=False):
            y = self.lin(x)
            if fail:
                raise KeyError("boom")
            return y
    m = M().train()
    with pytest.raises(KeyError, match="boom"):
        ember.onnx.export(m, (rand(2, 3), {"fail": True}), io.BytesIO())
    assert not ember._C._trace_active() and not ember.onnx.is_in_onnx_export() and m.training
    export_and_run(m, [rand(2, 3)])  # a second export works


def test_args_forms():
    # a list is forward's one argument, a trailing dict its keyword arguments (torch's rules)
    class M(nn.Module):
        def forward(self, xs, scale=None):
            return xs[0] + xs[1] * (1 if scale is None else scale)
    a, b, s = rand(2, 3), rand(2, 3), rand(2, 3)
    buf = io.BytesIO()
    ember.onnx.export(M(), [a, b], buf)
    got = ort.InferenceSession(buf.getvalue()).run(None, {"input_0": a.numpy(), "input_1": b.numpy()})[0]
    np.testing.assert_allclose(got, (a + b).numpy(), rtol=1e-6)
    buf = io.BytesIO()
    ember.onnx.export(M(), ([a, b], {"scale": s}), buf)
    got = ort.InferenceSession(buf.getvalue()).run(None, {"input_0": a.numpy(), "input_1": b.numpy(),
                                                         "input_2": s.numpy()})[0]
    np.testing.assert_allclose(got, (a + b * s).numpy(), rtol=1e-6)


def test_nested_export_is_refused_and_leaves_the_outer_one_intact():
    seen = []
    inner = nn.Linear(3, 3)

    class M(nn.Module):
        def forward(self, x):
            try:
                ember.onnx.export(inner, rand(2, 3), io.BytesIO())
            except RuntimeError as e:
                seen.append((str(e), ember.onnx.is_in_onnx_export()))
            return x * 2
    export_and_run(M(), [rand(2, 3)])  # runs forward once more outside the export: the inner export works
    assert len(seen) == 1 and "exports cannot nest" in seen[0][0] and seen[0][1]
    assert not ember.onnx.is_in_onnx_export()
