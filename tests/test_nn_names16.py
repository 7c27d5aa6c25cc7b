"""The last names of issue 16 against torch 2.13: nn.Container, nn.SyncBatchNorm (and
convert_sync_batchnorm), conv_tbc, native_channel_shuffle, linear_cross_entropy with
LinearCrossEntropyLoss/LinearCrossEntropyOptions, and SummaryWriter.add_graph."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck

TF = torch.nn.functional


def to_e(t):
    e = ember.tensor(t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy())
    if t.dtype == torch.bfloat16:
        e = e.to(ember.bfloat16)
    return e.requires_grad_(t.requires_grad)


def as_np(x):
    if x.dtype in (torch.bfloat16, ember.bfloat16, torch.float16, ember.float16):
        return x.detach().float().numpy()
    return x.detach().numpy()


def assert_close(e, t, tol=1e-6):
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(as_np(e), as_np(t), rtol=tol, atol=tol)


def raises_like(e_fn, t_fn):
    """ember raises what torch raises: the same type and message."""
    with pytest.raises(Exception) as t_err:
        t_fn()
    with pytest.raises(type(t_err.value)) as e_err:
        e_fn()
    assert str(e_err.value) == str(t_err.value)


# ---------------------------------------------------------------- nn.Container
def test_container_warns_and_holds_its_keyword_modules():
    def build(lib):
        with pytest.warns(FutureWarning, match=r"`nn.Container` is deprecated"):
            return lib.nn.Container(fc=lib.nn.Linear(2, 3), act=lib.nn.ReLU())

    ec, tc = build(ember), build(torch)
    assert repr(ec) == repr(tc)
    assert list(ec.state_dict()) == list(tc.state_dict())
    assert ember.nn.modules.container.Container is ember.nn.Container
    with pytest.warns(FutureWarning):
        class Sub(ember.nn.Container):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Sub()  # a subclass warned when defined, not when made (as torch's)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        raises_like(lambda: ember.nn.Container(1), lambda: torch.nn.Container(1))


# ---------------------------------------------------------------- nn.SyncBatchNorm
def test_sync_batchnorm_is_batchnorm_without_a_process_group():
    em, tm = ember.nn.SyncBatchNorm(3, momentum=0.3), torch.nn.SyncBatchNorm(3, momentum=0.3)
    assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    assert isinstance(em, ember.nn.modules.batchnorm._BatchNorm)
    assert ember.nn.modules.batchnorm.SyncBatchNorm is ember.nn.SyncBatchNorm
    for shape in [(4, 3), (2, 3, 5), (2, 3, 2, 2, 2, 2)]:  # any rank >= 2, unlike BatchNorm*d
        t = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
        e = to_e(t)
        yt, ye = tm.double()(t), em.double()(e)
        assert_close(ye, yt, 1e-10)
        yt.pow(2).sum().backward()
        ye.pow(2).sum().backward()
        assert_close(e.grad, t.grad, 1e-9)
    assert_close(em.running_mean, tm.running_mean, 1e-10)
    assert_close(em.running_var, tm.running_var, 1e-10)
    assert em.num_batches_tracked.item() == tm.num_batches_tracked.item() == 3
    em.eval(), tm.eval()
    t = torch.randn(2, 3, 4, dtype=torch.float64)
    assert_close(em(to_e(t)), tm(t), 1e-10)


@pytest.mark.parametrize("shape", [(4,), (2, 0, 3)])
def test_sync_batchnorm_input_errors(shape):
    raises_like(lambda: ember.nn.SyncBatchNorm(3)(ember.randn(*shape)),
                lambda: torch.nn.SyncBatchNorm(3)(torch.randn(*shape)))


def test_sync_batchnorm_under_a_process_group_refuses_cpu_training(tmp_path):
    """As torch's: training under an initialized process group asks for a GPU input, even
    in a group of one; eval mode stays plain batch norm."""
    dist = ember.distributed
    if not dist.is_available():
        pytest.skip("ember.distributed is not built")
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        m = ember.nn.SyncBatchNorm(3)
        with pytest.raises(ValueError, match="SyncBatchNorm expected input tensor to be on GPU or XPU or "
                                             "privateuseone"):
            m(ember.randn(2, 3, 4))
        m.eval()
        assert m(ember.randn(2, 3, 4)).shape == (2, 3, 4)
    finally:
        dist.destroy_process_group()


def test_convert_sync_batchnorm():
    def build(lib):
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 1), lib.nn.BatchNorm2d(4, momentum=None),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(4, track_running_stats=False, bias=False)),
                                lib.nn.InstanceNorm2d(4))
        net[1].running_mean.fill_(3.0)
        net.eval()
        return net

    en, tn = build(ember), build(torch)
    e_bn = en[1]
    ec = ember.nn.SyncBatchNorm.convert_sync_batchnorm(en, process_group="pg")
    tc = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tn, process_group="pg")
    assert ec is en and repr(ec) == repr(tc)
    assert type(ec[1]) is ember.nn.SyncBatchNorm and type(ec[3]) is ember.nn.InstanceNorm2d
    # the same parameter and buffer objects, the training flag and the group carried over
    assert ec[1].weight is e_bn.weight and ec[1].running_mean is e_bn.running_mean
    assert ec[1].num_batches_tracked is e_bn.num_batches_tracked
    assert not ec[1].training and ec[1].process_group == "pg"
    assert ec[2][0].bias is None and ec[2][0].running_mean is None
    assert list(ec.state_dict()) == list(tc.state_dict())
    bn = ember.nn.BatchNorm1d(3)
    sbn = ember.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert type(sbn) is ember.nn.SyncBatchNorm and sbn is not bn and sbn.weight is bn.weight
    assert sbn.process_group is None


# ---------------------------------------------------------------- conv_tbc
@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_values_and_gradients(pad):
    g = torch.Generator().manual_seed(pad + 5)
    x, w, b = (torch.randn(*s, generator=g, dtype=torch.float64, requires_grad=True)
               for s in [(7, 2, 3), (3, 3, 4), (4,)])
    ex, ew, eb = to_e(x), to_e(w), to_e(b)
    yt, ye = torch.conv_tbc(x, w, b, pad), ember.conv_tbc(ex, ew, eb, pad)
    assert_close(ye, yt, 1e-10)
    assert ye.stride() == yt.stride()
    gy = torch.randn(yt.shape, generator=g, dtype=torch.float64)
    yt.backward(gy)
    ye.backward(to_e(gy))
    for e, t in [(ex, x), (ew, w), (eb, b)]:
        assert_close(e.grad, t.grad, 1e-10)
    assert gradcheck(lambda a, c, d: ember.conv_tbc(a, c, d, pad), (ex.detach().requires_grad_(),
                     ew.detach().requires_grad_(), eb.detach().requires_grad_()))


def test_conv_tbc_dtypes_and_edges():
    for dtype in (torch.int64, torch.float32, torch.bfloat16):
        g = torch.Generator().manual_seed(0)
        x, w, b = (torch.randint(-3, 4, s, generator=g).to(dtype) for s in [(5, 2, 3), (2, 3, 4), (4,)])
        assert_close(ember.conv_tbc(to_e(x), to_e(w), to_e(b), 1), torch.conv_tbc(x, w, b, 1), 1e-2)
    x, w, b = torch.randn(5, 2, 3), torch.randn(6, 3, 4), torch.randn(4)  # zero output steps
    assert_close(ember.conv_tbc(to_e(x), to_e(w), to_e(b)), torch.conv_tbc(x, w, b))
    assert ember.nn.functional.conv_tbc is ember.conv_tbc


@pytest.mark.parametrize("case", ["input_dim", "weight_dim", "bias_dim", "channels", "bias_size", "negative",
                                  "dtype", "bias_none", "pad_float"])
def test_conv_tbc_errors(case):
    def call(lib):
        x, w, b = lib.ones(5, 2, 3), lib.ones(3, 3, 4), lib.ones(4)
        args = {"input_dim": (x[0], w, b), "weight_dim": (x, w[0], b), "bias_dim": (x, w, b.view(1, 4)),
                "channels": (x, lib.ones(3, 2, 4), b), "bias_size": (x, w, lib.ones(5)),
                "negative": (x, lib.ones(7, 3, 4), b), "dtype": (x.double(), w, b), "bias_none": (x, w, None),
                "pad_float": (x, w, b, 1.5)}[case]
        return lib.conv_tbc(*args)

    raises_like(lambda: call(ember), lambda: call(torch))


# ---------------------------------------------------------------- native_channel_shuffle
def test_native_channel_shuffle():
    x = torch.arange(48.).view(2, 6, 2, 2)
    assert_close(ember.native_channel_shuffle(to_e(x), 3), torch.native_channel_shuffle(x, 3))
    assert ember.nn.functional.native_channel_shuffle is ember.native_channel_shuffle
    for args in [(x, 4), (x, 0), (x[0, 0], 2), (x, 2.0)]:
        raises_like(lambda: ember.native_channel_shuffle(to_e(args[0]), args[1]),
                    lambda: torch.native_channel_shuffle(*args))
    # as torch's, it has no derivative
    e = to_e(x).requires_grad_()
    y = ember.native_channel_shuffle(e, 2)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is not implemented"):
        y.sum().backward()


# ---------------------------------------------------------------- linear_cross_entropy
def _lce_both(options, reduction, class_weight, dtype=torch.float64, n=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    x, w, b = (torch.randn(*s, generator=g, dtype=torch.float64).to(dtype).requires_grad_()
               for s in [(n, 4), (10, 4), (10,)])
    t = torch.randint(0, 10, (n,), generator=g)
    t[2] = -100
    cw = None if class_weight is None else torch.rand(10, generator=g, dtype=torch.float64).to(dtype)
    to = None if options is None else torch.nn.LinearCrossEntropyOptions(**options)
    eo = None if options is None else ember.nn.LinearCrossEntropyOptions(**options)
    lt = TF.linear_cross_entropy(x, w, t, linear_bias=b, weight=cw, reduction=reduction, options=to)
    ex, ew, eb = to_e(x), to_e(w), to_e(b)
    le = EF.linear_cross_entropy(ex, ew, to_e(t), linear_bias=eb, weight=None if cw is None else to_e(cw),
                                 reduction=reduction, options=eo)
    return (le, ex, ew, eb), (lt, x, w, b)


@pytest.mark.parametrize("options", [None, {"batch_chunk_size": 3}, {}, {"chunking_method": "aspect_ratio"}])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("class_weight", [None, "rand"])
def test_linear_cross_entropy_values_and_gradients(options, reduction, class_weight):
    (le, *ei), (lt, *ti) = _lce_both(options, reduction, class_weight)
    assert_close(le, lt, 1e-10)
    gy = torch.arange(1.0, lt.numel() + 1, dtype=torch.float64).view(lt.shape)
    lt.backward(gy)
    le.backward(to_e(gy))
    for e, t in zip(ei, ti):
        assert_close(e.grad, t.grad, 1e-10)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_linear_cross_entropy_chunked_low_precision(dtype):
    (le, *ei), (lt, *ti) = _lce_both({"batch_chunk_size": 4}, "mean", None, dtype=dtype, n=9)
    tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
    assert_close(le, lt, tol)
    lt.backward()
    le.backward()
    for e, t in zip(ei, ti):
        assert_close(e.grad, t.grad, tol)


def test_linear_cross_entropy_chunks_never_hold_all_logits(monkeypatch):
    from ember.nn._functional import linear_cross_entropy as lce

    rows, step = [], lce._chunk_step

    def spy(x, *args):
        rows.append(x.shape[0])
        return step(x, *args)

    monkeypatch.setattr(lce, "_chunk_step", spy)
    x, w, t = ember.randn(10, 4, requires_grad=True), ember.randn(6, 4), ember.randint(0, 6, (10,))
    EF.linear_cross_entropy(x, w, t, options=ember.nn.LinearCrossEntropyOptions(batch_chunk_size=4)).backward()
    assert rows == [4, 4, 2]
    rows.clear()  # "aspect_ratio": next_pow2(ceil(N / ceil(C / in))) = 8 rows of 100 classes x 16 features
    EF.linear_cross_entropy(ember.randn(50, 16), ember.randn(100, 16), ember.randint(0, 100, (50,)),
                            options=ember.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio"))
    assert rows == [8] * 6 + [2]


def test_linear_cross_entropy_backward_once_unless_allowed():
    def loss(lib, **kw):
        x = lib.ones(4, 3, requires_grad=True)
        w = lib.ones(5, 3)
        out = lib.nn.functional.linear_cross_entropy(x, w, lib.tensor([0, 1, 2, 3]),
                                                     options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2,
                                                                                              **kw))
        return out, x

    for lib in (ember, torch):
        out, x = loss(lib)
        out.backward(retain_graph=True)
        with pytest.raises(RuntimeError, match="linear_cross_entropy chunked backward called twice"):
            out.backward()
        out, x = loss(lib, allow_retain_graph=True)
        out.backward(retain_graph=True)
        out.backward()
        assert abs(x.grad.sum().item()) < 1e-6  # twice the gradient of equal logits: rows sum to 0


def test_linear_cross_entropy_reference_path_forms():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(5, 4, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(6, 2, 3, 4, generator=g, dtype=torch.float64, requires_grad=True)  # K-dimensional
    b = torch.randn(6, 2, 3, generator=g, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 6, (5, 2, 3), generator=g)
    ex, ew, eb = to_e(x), to_e(w), to_e(b)
    lt = TF.linear_cross_entropy(x, w, t, linear_bias=b, label_smoothing=0.2)
    le = EF.linear_cross_entropy(ex, ew, to_e(t), linear_bias=eb, label_smoothing=0.2)
    assert_close(le, lt, 1e-10)
    lt.backward()
    le.backward()
    for e, tt in [(ex, x), (ew, w), (eb, b)]:
        assert_close(e.grad, tt.grad, 1e-10)
    probs = torch.randn(5, 6, generator=g, dtype=torch.float64).softmax(1)  # class probabilities
    w2 = torch.randn(6, 4, generator=g, dtype=torch.float64)
    assert_close(EF.linear_cross_entropy(ex, to_e(w2), to_e(probs)), TF.linear_cross_entropy(x, w2, probs), 1e-10)
    # unbatched, chunked and not
    opts = {"batch_chunk_size": 1}
    for o in (None, opts):
        for red in ("mean", "none"):
            lt = TF.linear_cross_entropy(x[0], w2, t[0, 0, 0], reduction=red,
                                         options=o and torch.nn.LinearCrossEntropyOptions(**o))
            le = EF.linear_cross_entropy(ex[0], to_e(w2), to_e(t[0, 0, 0]), reduction=red,
                                         options=o and ember.nn.LinearCrossEntropyOptions(**o))
            assert_close(le, lt, 1e-10)
    # what the chunked path lacks falls back to the reference path, with torch's warning
    with pytest.warns(UserWarning, match="linear_cross_entropy: ``options`` ignored"):
        le = EF.linear_cross_entropy(ex, to_e(w2), to_e(t[:, 0, 0]), label_smoothing=0.1,
                                     options=ember.nn.LinearCrossEntropyOptions())
    assert_close(le, TF.linear_cross_entropy(x, w2, t[:, 0, 0], label_smoothing=0.1), 1e-10)


@pytest.mark.parametrize("case", ["input_dim", "weight_dim", "in_features", "bias_shape", "unbatched_k",
                                  "probs_ignore_index", "target_range", "target_range_chunked",
                                  "target_negative_chunked", "target_int32_chunked"])
def test_linear_cross_entropy_errors(case):
    def call(lib):
        x, w, t = lib.ones(3, 4), lib.ones(5, 4), lib.tensor([0, 1, 2])
        chunked = {"options": lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2)}
        args, kw = {"input_dim": ((x[0, 0], w, t), {}), "weight_dim": ((x, w[0], t), {}),
                    "in_features": ((x, w[:, :3], t), {}), "bias_shape": ((x, w, t), {"linear_bias": lib.ones(4)}),
                    "unbatched_k": ((x[0], w.view(5, 1, 4), t[0]), {}),
                    "probs_ignore_index": ((x, w, lib.ones(3, 5) / 5), {"ignore_index": 1}),
                    "target_range": ((x, w, lib.tensor([0, 7, 1])), {}),
                    "target_range_chunked": ((x, w, lib.tensor([0, 7, 1])), chunked),
                    "target_negative_chunked": ((x, w, lib.tensor([0, -3, 1])), chunked),
                    "target_int32_chunked": ((x, w, t.int()), chunked)}[case]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # int32 targets: the chunked path falls back, warning
            return lib.nn.functional.linear_cross_entropy(*args, **kw)

    raises_like(lambda: call(ember), lambda: call(torch))


@pytest.mark.parametrize("kw", [{"acc_policy": "x"}, {"chunking_method": "foo"}, {"chunking_method": "aspect_ratio:0"},
                                {"batch_chunk_size": 0}, {"acc_dtype": "int32"}])
def test_linear_cross_entropy_options_validation(kw):
    def make(lib):
        args = {k: getattr(lib, v) if k == "acc_dtype" else v for k, v in kw.items()}
        return lib.nn.LinearCrossEntropyOptions(**args)

    with pytest.raises(ValueError) as t_err:
        make(torch)
    with pytest.raises(ValueError) as e_err:
        make(ember)
    assert str(e_err.value).replace("ember.", "torch.") == str(t_err.value)


def test_linear_cross_entropy_options_and_module():
    assert repr(ember.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    from ember.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions
    assert LinearCrossEntropyOptions is ember.nn.LinearCrossEntropyOptions
    conflict = {"batch_chunk_size": 4, "chunking_method": "aspect_ratio"}
    raises_like(lambda: EF.linear_cross_entropy(ember.ones(6, 4), ember.ones(10, 4), ember.zeros(6, dtype=ember.int64),
                                                options=ember.nn.LinearCrossEntropyOptions(**conflict)),
                lambda: TF.linear_cross_entropy(torch.ones(6, 4), torch.ones(10, 4), torch.zeros(6, dtype=torch.int64),
                                                options=torch.nn.LinearCrossEntropyOptions(**conflict)))

    def build(lib, **kw):
        return lib.nn.LinearCrossEntropyLoss(4, 6, out_features=(2, 3), bias=True, **kw)

    em, tm = build(ember), build(torch)
    assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: to_e(v) for k, v in tm.state_dict().items()})
    x = torch.randn(5, 4)
    t = torch.randint(0, 6, (5, 2, 3))
    assert_close(em(to_e(x), to_e(t)), tm(x, t), 1e-5)
    assert isinstance(em, ember.nn.modules.loss._WeightedLoss)
    for kw in ({"weight": torch.ones(3)}, {"label_smoothing": 2}):
        raises_like(lambda: ember.nn.LinearCrossEntropyLoss(4, 6, **{k: to_e(v) if k == "weight" else v
                                                                      for k, v in kw.items()}),
                    lambda: torch.nn.LinearCrossEntropyLoss(4, 6, **kw))
    chunked = ember.nn.LinearCrossEntropyLoss(4, 6, options=ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    assert repr(chunked) == repr(torch.nn.LinearCrossEntropyLoss(
        4, 6, options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2)))


# ---------------------------------------------------------------- SummaryWriter.add_graph
class _Net:
    """The same small model in either library: Linear, ReLU, Linear, then a scalar product."""

    @staticmethod
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(4, 3)
                self.act = lib.nn.ReLU()
                self.drop = lib.nn.Dropout(0.5)
                self.out = lib.nn.Linear(3, 2)

            def forward(self, x):
                return self.out(self.drop(self.act(self.fc(x)))) * 2

        return Net()


def _graph_nodes(log_dir):
    from ember.utils.tensorboard import _proto
    from ember.utils.tensorboard._record import read_records

    files = [f for f in os.listdir(log_dir) if f.startswith("events.out.tfevents.")]
    events = [_proto.decode_event(r) for r in read_records(os.path.join(log_dir, files[0]))]
    assert [e.get("run_metadata_tag") for e in events if "run_metadata_tag" in e] == ["step1"]
    (graph,) = [e["graph_def"] for e in events if "graph_def" in e]
    return {n["name"]: n for n in graph}


def test_add_graph_writes_scoped_nodes(tmp_path):
    from ember.utils.tensorboard import SummaryWriter

    model = _Net.build(ember)
    model.train()
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, ember.randn(5, 4))
    assert model.training  # traced in eval mode (dropout records nothing), then restored
    nodes = _graph_nodes(str(tmp_path))
    assert nodes["input/x"]["op"] == "IO Node" and nodes["input/x"]["attr"]["_output_shapes"] == [[5, 4]]
    assert nodes["output/output.1"]["input"] == ["Net/mul"]
    assert nodes["Net/Linear[fc]/weight"]["op"] == "prim::GetAttr"
    assert nodes["Net/Linear[fc]/weight"]["attr"]["attr"] == "{ name :  weight }"
    addmm = nodes["Net/Linear[fc]/addmm"]
    assert addmm["op"] == "aten::addmm" and addmm["attr"]["_output_shapes"] == [[5, 3]]
    assert addmm["input"][:3] == ["Net/Linear[fc]/bias", "input/x", "Net/Linear[fc]/t"]
    assert nodes["Net/ReLU[act]/relu"]["input"] == ["Net/Linear[fc]/addmm"]
    assert nodes["Net/Linear[out]/addmm"]["input"][1] == "Net/ReLU[act]/relu"
    assert not any("Dropout" in name for name in nodes)
    # every input names a node of the graph
    assert all(i in nodes for n in nodes.values() for i in n["input"])


def test_add_graph_several_inputs_and_outputs(tmp_path, capsys):
    from ember.utils.tensorboard import SummaryWriter

    class Two(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = ember.nn.BatchNorm1d(3)

        def forward(self, a, b):
            y = self.bn(a)
            return y + b, y.mean()

    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(Two(), (ember.randn(4, 3), ember.randn(4, 3)), verbose=True)
    printed = capsys.readouterr().out  # verbose: one line per node
    assert "input/a = IO Node()" in printed and "aten::native_batch_norm" in printed
    nodes = _graph_nodes(str(tmp_path))
    expected = {"input/a", "input/b", "output/output.1", "output/output.2", "Two/BatchNorm1d[bn]/running_mean"}
    assert expected <= set(nodes)
    assert nodes["output/output.2"]["attr"]["_output_shapes"] == [[]]
    assert "input/b" in nodes[nodes["output/output.1"]["input"][0]]["input"]


def test_add_graph_error_says_no_graph(tmp_path, capsys):
    from ember.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(RuntimeError):
            w.add_graph(ember.nn.Linear(3, 2), ember.randn(4, 5))
    assert "Error occurs, No graph saved" in capsys.readouterr().out


def test_add_graph_read_by_tensorboard_like_torchs(tmp_path):
    """TensorBoard's EventAccumulator reads the graph back; against torch's writer on the
    same model: the same inputs, outputs and parameter nodes, and each of torch's aten ops
    has ember's counterpart (torch's aten::linear is ember's t + addmm)."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from ember.utils.tensorboard import SummaryWriter

    def read(log_dir):
        acc = EventAccumulator(log_dir)
        acc.Reload()
        assert acc.Tags()["graph"] and acc.Tags()["run_metadata"] == ["step1"]
        return acc.Graph()

    with SummaryWriter(str(tmp_path / "ember")) as w:
        w.add_graph(_Net.build(ember), ember.randn(5, 4))
    with TorchWriter(str(tmp_path / "torch")) as w:
        w.add_graph(_Net.build(torch), torch.randn(5, 4))
    eg, tg = read(str(tmp_path / "ember")), read(str(tmp_path / "torch"))
    assert eg.versions.producer == tg.versions.producer == 22

    def io_and_params(graph):
        io = {n.name for n in graph.node if n.op == "IO Node"}
        params = {n.name.rsplit("/", 1)[0] for n in graph.node if n.op == "prim::GetAttr"}
        return io, params

    e_io, e_params = io_and_params(eg)
    t_io, t_params = io_and_params(tg)
    assert e_io == t_io == {"input/x", "output/output.1"}
    # torch names a parameter node <scope>/<name>/<debug name>; ember <scope>/<name>
    assert {n.name for n in eg.node if n.op == "prim::GetAttr"} == t_params
    e_ops = {n.op for n in eg.node}
    t_ops = {n.op for n in tg.node} - {"aten::dropout"}  # torch records eval-mode dropout, ember nothing
    assert {op for op in t_ops if op != "aten::linear"} <= e_ops and {"aten::t", "aten::addmm"} <= e_ops
    shapes = {n.name: [[d.size for d in s.dim] for s in n.attr["_output_shapes"].list.shape] for n in eg.node
              if "_output_shapes" in n.attr}
    assert shapes["output/output.1"] == [[5, 2]] and shapes["Net/ReLU[act]/relu"] == [[5, 3]]
