"""F.ctc_loss, ember.ctc_loss and nn.CTCLoss against torch: both target layouts, lengths as
tensors, tuples and lists, unbatched input, every reduction, blank, zero_infinity, the
gradient with respect to log_probs (torch's alpha-beta gradient), and torch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import ember.nn.functional as EF  # noqa: E402

TESTED_OPS = {"_ctc_loss", "_ctc_loss_backward"}

T, N, C = 8, 3, 5
RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((T, N, C))
IN_LEN = [8, 6, 7]
TG_LEN = [3, 2, 0]
PADDED = np.array([[1, 2, 2, 4], [3, 1, 0, 0], [0, 0, 0, 0]])  # a repeated label needs a blank between
FLAT = np.array([1, 2, 2, 3, 1])


def log_probs(lib, dtype="float64", logits=LOGITS):
    """log_softmax of fixed logits, a leaf requiring grad (the log_softmax is outside the graph)."""
    x = lib.tensor(logits, dtype=getattr(lib, dtype)).log_softmax(-1).detach()
    return x.requires_grad_()


def both(fn, dtype="float64", tol=1e-6, logits=LOGITS, grad=True):
    """fn(lib, F, log_probs) in both libraries: values, then gradients of a weighted sum."""
    xt, xe = log_probs(torch, dtype, logits), log_probs(ember, dtype, logits)
    lt, le = fn(torch, TF, xt), fn(ember, EF, xe)
    assert tuple(le.shape) == tuple(lt.shape) and str(le.dtype)[-7:] == str(lt.dtype)[-7:]
    np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=tol, atol=tol)
    if grad:
        w = np.linspace(0.5, 1.5, lt.numel()).reshape(tuple(lt.shape))
        (lt * torch.tensor(w, dtype=lt.dtype)).sum().backward()
        (le * ember.tensor(w, dtype=le.dtype)).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    return le, lt


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["padded", "flat"])
def test_values_and_gradients(reduction, layout):
    targets = PADDED if layout == "padded" else FLAT
    both(lambda lib, F, x: F.ctc_loss(x, lib.tensor(targets), lib.tensor(IN_LEN), lib.tensor(TG_LEN),
                                      reduction=reduction))


def test_float32_int32_and_lengths_as_sequences():
    both(lambda lib, F, x: F.ctc_loss(x, lib.tensor(PADDED, dtype=lib.int32), tuple(IN_LEN), list(TG_LEN)),
         dtype="float32", tol=1e-5)
    both(lambda lib, F, x: F.ctc_loss(x, lib.tensor(FLAT), lib.tensor(IN_LEN, dtype=lib.int32),
                                      lib.tensor(TG_LEN, dtype=lib.int32), reduction="sum"), dtype="float32",
         tol=1e-4)


def test_blank_and_noncontiguous():
    targets = np.array([[0, 1, 3], [2, 2, 1], [1, 0, 0]])  # blank=4; 0 is an ordinary label
    for lib_fn in (lambda lib, F, x: F.ctc_loss(x, lib.tensor(targets), IN_LEN, [3, 3, 1], blank=4),
                   lambda lib, F, x: F.ctc_loss(x.transpose(0, 1).contiguous().transpose(0, 1),
                                                lib.tensor(targets.T.copy()).t(), IN_LEN, [3, 3, 1], blank=4,
                                                reduction="none")):
        both(lib_fn)


def test_unbatched():
    logits = RNG.standard_normal((6, C))
    both(lambda lib, F, x: F.ctc_loss(x, lib.tensor([1, 3, 3]), lib.tensor(6), lib.tensor(3), reduction="none"),
         logits=logits)
    both(lambda lib, F, x: F.ctc_loss(x, lib.tensor([1, 3, 3]), [6], [3]), logits=logits)
    both(lambda lib, F, x: F.ctc_loss(x, lib.tensor([2]), (6,), (1,), reduction="sum"), logits=logits)
    with pytest.raises(TypeError):  # plain ints are no lengths, as in torch
        EF.ctc_loss(log_probs(ember, logits=logits), ember.tensor([2]), 6, 1)


def test_zero_infinity():
    # sample 0 cannot align (4 labels with a repeat need 5 steps, it has 2): infinite loss
    fn = lambda zi, red: lambda lib, F, x: F.ctc_loss(  # noqa: E731
        x, lib.tensor(PADDED), lib.tensor([2, 6, 7]), lib.tensor([4, 2, 0]), reduction=red, zero_infinity=zi)
    le, lt = both(fn(True, "none"))
    assert le[0].item() == 0.0
    both(fn(True, "mean"))
    le, lt = both(fn(False, "none"), grad=False)
    assert le[0].item() == float("inf") and lt[0].item() == float("inf")


def test_gradcheck():
    x = log_probs(ember, "float64", LOGITS[:5, :2])
    assert ember.autograd.gradcheck(lambda x: EF.ctc_loss(x.log_softmax(-1), ember.tensor([[1, 1], [2, 0]]),
                                                          [5, 4], [2, 1], reduction="sum"), (x,))


def test_top_level_and_module():
    for args in ((), (0, 1, False), (0, 2, True), (0, 0, False)):
        both(lambda lib, F, x: lib.ctc_loss(x, lib.tensor(PADDED), lib.tensor(IN_LEN), lib.tensor(TG_LEN), *args))
    em, tm = ember.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True), torch.nn.CTCLoss(0, "sum", True)
    assert repr(em) == repr(tm)
    both(lambda lib, F, x: (em if lib is ember else tm)(x, lib.tensor(FLAT), IN_LEN, TG_LEN))
    both(lambda lib, F, x: lib.nn.CTCLoss()(x, lib.tensor(FLAT), IN_LEN, TG_LEN))


def _lp(lib, dtype=None):
    return lib.tensor(LOGITS, dtype=dtype or lib.float32).log_softmax(-1)


ERRORS = [
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), lib.tensor(IN_LEN).float(), lib.tensor(TG_LEN)),
     RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), [9, 6, 7], TG_LEN), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), [-1, 6, 7], TG_LEN), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), IN_LEN, [5, 2, 0]), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), IN_LEN, [-1, 2, 0]), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), IN_LEN, TG_LEN, blank=5), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), IN_LEN, TG_LEN, blank=-1), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib, lib.float16), lib.tensor(PADDED), IN_LEN, TG_LEN), NotImplementedError),
    (lambda lib, F: F.ctc_loss(_lp(lib, lib.bfloat16), lib.tensor(PADDED), IN_LEN, TG_LEN), NotImplementedError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), IN_LEN[:2], TG_LEN), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), IN_LEN, TG_LEN[:2]), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED[:, :2]), IN_LEN, TG_LEN), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(FLAT[:4]), IN_LEN, TG_LEN), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib), lib.tensor(PADDED), IN_LEN, TG_LEN, reduction="foo"), ValueError),
    (lambda lib, F: F.ctc_loss(_lp(lib)[:, :0], lib.tensor(PADDED[:0]), [], []), RuntimeError),
    (lambda lib, F: F.ctc_loss(_lp(lib)[None], lib.tensor(PADDED), IN_LEN, TG_LEN), RuntimeError),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    fn, exc = ERRORS[k]
    with pytest.raises(exc) as t_err:
        fn(torch, TF)
    with pytest.raises(exc) as e_err:
        fn(ember, EF)
    t_msg = str(t_err.value).split(" (while checking")[0]
    if "lengths" in t_msg or "label range" in t_msg or "not implemented" in t_msg or "Expected tensor" in t_msg:
        assert t_msg in str(e_err.value)


def test_targets_outside_the_labels_raise():
    # torch reads such targets out of bounds; ember refuses them
    for bad in (5, -1):
        with pytest.raises(RuntimeError, match="label range"):
            EF.ctc_loss(_lp(ember), ember.tensor([[1, bad, 2, 2], [1, 1, 0, 0], [0, 0, 0, 0]]), IN_LEN, TG_LEN)
