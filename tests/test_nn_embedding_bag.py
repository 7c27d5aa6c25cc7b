"""F.embedding_bag, ember.embedding_bag and nn.EmbeddingBag against torch: every mode and
input layout (2-D bags, 1-D with offsets, include_last_offset), per_sample_weights,
padding_idx, max_norm, scale_grad_by_freq, empty bags, dtypes, the weight's and the
per-sample weights' gradients, torch's errors, and a small EmbeddingBag text classifier
trained for a few SGD steps from torch's initial weights."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import ember.nn.functional as EF  # noqa: E402

TESTED_OPS = {"embedding_bag", "_embedding_bag_backward", "_embedding_bag_per_sample_weights_backward"}

TDT = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16}
EDT = {"float32": ember.float32, "float64": ember.float64, "float16": ember.float16, "bfloat16": ember.bfloat16}


def pair(values, dtype=None, grad=False):
    """The same values as a torch and an ember tensor (floating ones of dtype)."""
    a = np.asarray(values)
    t, e = torch.tensor(a), ember.tensor(a)
    if dtype is not None:
        t, e = t.to(TDT[dtype]), e.to(EDT[dtype])
    return t.requires_grad_(grad), e.requires_grad_(grad)


def close(e, t, tol=1e-5):
    t = t.detach()
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().float().numpy(), t.float().numpy(), rtol=tol, atol=tol)


def run_both(args_t, args_e, kw, grads=True, tol=1e-5):
    """Both libraries' embedding_bag on (input, weight, offsets, per_sample_weights), the
    output compared, then the weight's and per_sample_weights' gradients."""
    (ti, tw, to, tp), (ei, ew, eo, ep) = args_t, args_e
    out_t = TF.embedding_bag(ti, tw, to, per_sample_weights=tp, **kw)
    out_e = EF.embedding_bag(ei, ew, eo, per_sample_weights=ep, **kw)
    close(out_e, out_t, tol)
    if grads and tw.requires_grad:
        g = np.random.default_rng(1).standard_normal(tuple(out_t.shape))
        out_t.backward(torch.tensor(g, dtype=out_t.dtype))
        out_e.backward(ember.tensor(g, dtype=out_e.dtype))
        close(ew.grad, tw.grad)
        if tp is not None and tp.requires_grad:
            close(ep.grad, tp.grad)
    return out_e, out_t


RNG = np.random.default_rng(0)
W = RNG.standard_normal((10, 4))
IX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 1, 1, 0, 7])


def layouts(layout):
    """(input, offsets, include_last_offset) for three ways to give 4 bags of 3."""
    if layout == "2d":
        return IX.reshape(4, 3), None, False
    if layout == "offsets":  # bags of 4, 0 (empty), 5 and 3 indices
        return IX, np.array([0, 4, 4, 9]), False
    return IX, np.array([0, 2, 2, 7, 12]), True  # include_last_offset


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("layout", ["2d", "offsets", "last"])
@pytest.mark.parametrize("padding_idx", [None, 1, -6])
def test_modes_layouts_padding(mode, layout, padding_idx):
    ix, off, last = layouts(layout)
    (ti, ei), (tw, ew) = pair(ix), pair(W, "float64", grad=True)
    to, eo = pair(off) if off is not None else (None, None)
    run_both((ti, tw, to, None), (ei, ew, eo, None),
             dict(mode=mode, padding_idx=padding_idx, include_last_offset=last))


@pytest.mark.parametrize("layout", ["2d", "offsets"])
def test_per_sample_weights(layout):
    ix, off, _ = layouts(layout)
    (ti, ei), (tw, ew) = pair(ix), pair(W, "float64", grad=True)
    tp, ep = pair(RNG.standard_normal(ix.shape), "float64", grad=True)
    to, eo = pair(off) if off is not None else (None, None)
    run_both((ti, tw, to, tp), (ei, ew, eo, ep), dict(mode="sum", padding_idx=2))


def test_gradcheck_sum_with_weights():
    w = ember.tensor(W[:6], dtype=ember.float64, requires_grad=True)
    p = ember.tensor(RNG.standard_normal(7), dtype=ember.float64, requires_grad=True)
    ix, off = ember.tensor([0, 1, 1, 5, 3, 2, 0]), ember.tensor([0, 3, 3])
    assert ember.autograd.gradcheck(
        lambda w, p: EF.embedding_bag(ix, w, off, mode="sum", per_sample_weights=p), (w, p))
    for mode in ("mean", "max"):
        assert ember.autograd.gradcheck(lambda w: EF.embedding_bag(ix, w, off, mode=mode), (w,))


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq(mode):
    """Each row's gradient divided by how often it occurs in the batch, as torch's
    documentation (and its F.embedding) says. torch 2.13's embedding_bag divides the k-th
    distinct row by the count of sorted_indices[k] instead (a bug), so the reference is
    torch's embedding with scale_grad_by_freq, reduced over each bag."""
    (ti, ei), (tw, ew) = pair(IX.reshape(3, 4)), pair(W, "float64", grad=True)
    out_t = TF.embedding(ti, tw, scale_grad_by_freq=True)
    out_t = out_t.sum(1) if mode == "sum" else out_t.mean(1)
    out_e = EF.embedding_bag(ei, ew, mode=mode, scale_grad_by_freq=True)
    close(out_e, out_t)
    g = RNG.standard_normal(tuple(out_t.shape))
    out_t.backward(torch.tensor(g))
    out_e.backward(ember.tensor(g))
    close(ew.grad, tw.grad)


def test_max_norm_renormalizes_in_place():
    (ti, ei), (tw, ew) = pair(IX.reshape(4, 3)), pair(W * 3, "float64")
    run_both((ti, tw, None, None), (ei, ew, None, None), dict(mode="mean", max_norm=1.5, norm_type=1.0))
    close(ew, tw)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["sum", "max"])
def test_dtypes(dtype, mode):
    ix, off, _ = layouts("offsets")
    (ti, ei), (tw, ew) = pair(ix), pair(W, dtype, grad=True)
    (to, eo) = pair(off)
    tol = 1e-5 if dtype == "float32" else 2e-2
    out_e, out_t = run_both((ti, tw, to, None), (ei, ew, eo, None), dict(mode=mode), grads=False, tol=tol)
    out_t.sum().backward()
    out_e.sum().backward()
    close(ew.grad, tw.grad, tol)


def test_int32_indices_and_offsets_and_noncontiguous():
    ix, off, _ = layouts("offsets")
    ti, ei = pair(ix.astype(np.int32))
    to, eo = pair(off.astype(np.int32))
    tw = torch.tensor(W.T.copy()).t().requires_grad_()  # a transposed (non-contiguous) table
    ew = ember.tensor(W.T.copy()).t().requires_grad_()
    assert not ew.is_contiguous()
    run_both((ti, tw, to, None), (ei, ew, eo, None), dict(mode="mean"))
    t2, e2 = pair(np.stack([IX, IX[::-1]], 1))  # (12, 2): column 0 is a strided view
    run_both((t2[:, 0], tw, to, None), (e2[:, 0], ew, eo, None), dict(mode="sum"), grads=False)


def test_empty_bags_and_inputs():
    tw, ew = pair(W, "float32", grad=True)
    for ix, off in ([[], [0, 0, 0]], [[3, 4], [0, 0, 2, 2]], [[], []]):
        ti, ei = torch.tensor(ix, dtype=torch.int64), ember.tensor(ix, dtype=ember.int64)
        to, eo = pair(np.array(off, dtype=np.int64))
        for mode in ("sum", "mean", "max"):
            tw.grad = ew.grad = None
            run_both((ti, tw, to, None), (ei, ew, eo, None), dict(mode=mode))
    t2, e2 = pair(np.zeros((3, 0), dtype=np.int64))  # bags of no index: torch gives arange's error too
    with pytest.raises(RuntimeError):
        TF.embedding_bag(t2, tw)
    with pytest.raises(RuntimeError):
        EF.embedding_bag(e2, ew)
    # include_last_offset with one offset: no bag
    close(EF.embedding_bag(ember.tensor([1, 2]), ew, ember.tensor([0]), include_last_offset=True),
          TF.embedding_bag(torch.tensor([1, 2]), tw, torch.tensor([0]), include_last_offset=True))


def test_top_level():
    ix, off, _ = layouts("offsets")
    (ti, ei), (tw, ew), (to, eo) = pair(ix), pair(W, "float64"), pair(off)
    for mode in (0, 1, 2):
        rt = torch.embedding_bag(tw, ti, to, False, mode)
        re = ember.embedding_bag(ew, ei, eo, False, mode)
        assert len(re) == 4
        close(re[0], rt[0])
        assert tuple(re[3].shape) == tuple(rt[3].shape)
    close(ember.embedding_bag(ew, ei, eo, mode=1, padding_idx=4)[0],
          torch.embedding_bag(tw, ti, to, False, 1, False, None, False, 4)[0])


ERRORS = [
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([1])), RuntimeError),  # offsets[0] != 0
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0, 3])), RuntimeError),  # past the input
    (lambda F, L, w: F.embedding_bag(L([1, 2, 3]), w, L([0, 3, 1])), RuntimeError),  # decreasing
    (lambda F, L, w: F.embedding_bag(L([1, 10]), w, L([0])), RuntimeError),
    (lambda F, L, w: F.embedding_bag(L([1, -1]), w, L([0])), RuntimeError),
    (lambda F, L, w: F.embedding_bag(L([1., 2.]), w, L([0])), RuntimeError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0.])), RuntimeError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0]), mode="max", per_sample_weights=w[0, :2]),
     NotImplementedError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0]), mode="sum", per_sample_weights=w[0, :3]), ValueError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0]), mode="sum", per_sample_weights=w[0, :2].double()),
     RuntimeError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0]), mode="foo"), ValueError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w), ValueError),
    (lambda F, L, w: F.embedding_bag(L([[1, 2]]), w, L([0])), ValueError),
    (lambda F, L, w: F.embedding_bag(L([[[1, 2]]]), w), ValueError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([[0]])), ValueError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w[0], L([0])), ValueError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w.long(), L([0])), RuntimeError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0]), padding_idx=10), RuntimeError),
    (lambda F, L, w: F.embedding_bag(L([1, 2]), w, L([0]), padding_idx=-11), RuntimeError),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    fn, exc = ERRORS[k]
    w = torch.tensor(W, dtype=torch.float32)
    with pytest.raises(exc) as t_err:
        fn(TF, torch.tensor, w)
    with pytest.raises(exc) as e_err:
        fn(EF, ember.tensor, ember.tensor(W, dtype=ember.float32))
    if "offsets[0]" in str(t_err.value) or "valid range" in str(t_err.value):
        assert str(t_err.value).split("\n")[0].split("[ torch")[0].strip() in str(e_err.value)


def test_sparse_is_refused():
    with pytest.raises(NotImplementedError, match="sparse"):
        EF.embedding_bag(ember.tensor([[1, 2]]), ember.tensor(W), sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        ember.nn.EmbeddingBag(10, 3, sparse=True)(ember.tensor([[1, 2]]))


def test_module():
    e, t = ember.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-2), torch.nn.EmbeddingBag(10, 3, mode="max",
                                                                                          padding_idx=-2)
    assert repr(e) == repr(t) and e.padding_idx == t.padding_idx == 8
    assert (e.weight[8] == 0).all().item() and e.weight.requires_grad
    assert list(e.state_dict()) == list(t.state_dict()) == ["weight"]
    assert repr(ember.nn.EmbeddingBag(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)) == \
        repr(torch.nn.EmbeddingBag(5, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True))
    with torch.no_grad():
        t.weight.copy_(torch.tensor(W[:, :3]))
    e.load_state_dict({"weight": ember.tensor(W[:, :3], dtype=ember.float32)})
    ix, off, _ = layouts("offsets")
    (ti, ei), (to, eo) = pair(ix), pair(off)
    close(e(ei, eo), t(ti, to))
    close(e(ei.view(3, 4)), t(ti.view(3, 4)))
    ps = RNG.standard_normal(12).astype(np.float32)
    es = ember.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True, _weight=ember.tensor(W[:, :3]).float())
    ts = torch.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True, _weight=torch.tensor(W[:, :3]).float())
    close(es(ei, ember.tensor([0, 5, 12]), ember.tensor(ps)), ts(ti, torch.tensor([0, 5, 12]), torch.tensor(ps)))
    with pytest.raises(AssertionError):
        ember.nn.EmbeddingBag(4, 2, padding_idx=4)
    with pytest.raises(AssertionError):
        ember.nn.EmbeddingBag(4, 2, _weight=ember.zeros(3, 2))


def test_from_pretrained():
    table = ember.tensor(W)
    bag = ember.nn.EmbeddingBag.from_pretrained(table, mode="sum")
    assert bag.weight.data_ptr() == table.data_ptr() and not bag.weight.requires_grad
    assert bag.mode == "sum" and (bag.num_embeddings, bag.embedding_dim) == (10, 4)
    assert ember.nn.EmbeddingBag.from_pretrained(table, freeze=False).weight.requires_grad
    close(bag(ember.tensor([[1, 2]])),
          torch.nn.EmbeddingBag.from_pretrained(torch.tensor(W), mode="sum")(torch.tensor([[1, 2]])))
    with pytest.raises(AssertionError):
        ember.nn.EmbeddingBag.from_pretrained(ember.zeros(3))


def _classifier(nn, vocab, dim, classes):
    class TextClassifier(nn.Module):  # pytorch/examples' text classification model
        def __init__(self):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab, dim, mode="mean")
            self.fc = nn.Linear(dim, classes)

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))

    return TextClassifier()


def test_text_classifier_training_matches_torch():
    vocab, dim, classes = 50, 8, 3
    tm, em = _classifier(torch.nn, vocab, dim, classes), _classifier(ember.nn, vocab, dim, classes)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    topt, eopt = torch.optim.SGD(tm.parameters(), lr=0.5), ember.optim.SGD(em.parameters(), lr=0.5)
    rng = np.random.default_rng(3)
    losses_t, losses_e = [], []
    for _ in range(5):
        lengths = rng.integers(1, 7, size=6)
        text = rng.integers(0, vocab, size=int(lengths.sum()))
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        label = rng.integers(0, classes, size=6)
        for lib, m, opt, losses in ((torch, tm, topt, losses_t), (ember, em, eopt, losses_e)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(text), lib.tensor(offsets)), lib.tensor(label))
            loss.backward()
            opt.step()
            losses.append(loss.item())
    np.testing.assert_allclose(losses_e, losses_t, rtol=1e-5)
    assert losses_t[-1] != losses_t[0]
    close(em.embedding.weight, tm.embedding.weight)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_sizes_split_across_threads(mode):
    """Enough bags and table rows that the forward splits bags and the backward splits
    rows across ember's threads (repeated rows land in one thread's range)."""
    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 9, size=3000)
    ix = rng.integers(0, 5000, size=int(lengths.sum()))
    off = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    (ti, ei), (to, eo), (tw, ew) = pair(ix), pair(off), pair(rng.standard_normal((5000, 16)), "float32", grad=True)
    tp, ep = (pair(rng.standard_normal(ix.shape), "float32", grad=True) if mode == "sum" else (None, None))
    run_both((ti, tw, to, tp), (ei, ew, eo, ep), dict(mode=mode, padding_idx=7), tol=1e-4)
