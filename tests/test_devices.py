"""The device dimension (issue 17): device arguments, the rules for mixing devices, the
meta device's metadata-only ops, and conversions. Compared with torch 2.13's CPU build,
which has the meta device."""
import pytest
import torch

import ember


def meta(*shape, **kw):
    return ember.empty(*shape, device="meta", **kw)


@pytest.mark.parametrize("spec", ["meta", ember.device("meta"), "cpu", "cpu:0", ember.device("cpu")])
def test_device_argument_forms(spec):
    t = ember.zeros(2, 3, device=spec)
    expected = torch.zeros(2, 3, device=str(spec))
    assert str(t.device) == str(expected.device)
    assert t.is_meta == expected.is_meta and t.is_cpu == expected.is_cpu and t.is_cuda is False
    assert t.get_device() == expected.get_device() == -1


@pytest.mark.parametrize("factory", [
    lambda m, d: m.empty(2, 3, device=d), lambda m, d: m.zeros(4, device=d), lambda m, d: m.ones(2, 2, device=d),
    lambda m, d: m.full((3,), 2.5, device=d), lambda m, d: m.arange(5, device=d), lambda m, d: m.eye(3, device=d),
    lambda m, d: m.rand(2, 3, device=d), lambda m, d: m.randn(4, device=d), lambda m, d: m.randint(0, 5, (3,), device=d),
    lambda m, d: m.linspace(0, 1, 5, device=d), lambda m, d: m.tensor([[1, 2], [3, 4]], device=d),
    lambda m, d: m.empty_like(m.ones(2, 3), device=d), lambda m, d: m.zeros_like(m.ones(2, 3).t(), device=d),
    lambda m, d: m.full_like(m.ones(2), 7, device=d), lambda m, d: m.ones(2, dtype=m.int32, device=d),
])
def test_factories_on_meta_match_torch(factory):
    e, t = factory(ember, "meta"), factory(torch, "meta")
    assert e.is_meta and t.is_meta
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride() and str(e.dtype) == str(t.dtype).replace("torch", "ember")


def test_meta_tensors_hold_no_memory():
    big = ember.empty(1 << 20, 1 << 20, device="meta")  # 4 TiB of float32 on the CPU
    assert big.untyped_storage().nbytes() == 4 << 40
    assert big.untyped_storage().data_ptr() == 0
    assert (big @ big).shape == (1 << 20, 1 << 20)


def test_like_and_new_keep_the_source_device():
    m = meta(2, 3)
    for t in (ember.zeros_like(m), ember.empty_like(m), ember.rand_like(m), m.new_zeros(4), m.new_ones(1),
              m.new_full((2,), 1.0), m.new_empty(3), m.clone(), m.to(ember.float64), m.t().contiguous()):
        assert t.is_meta
    assert ember.zeros_like(m, device="cpu").is_cpu


def test_mixing_devices_raises_torchs_error():
    m, c = meta(2, 3), ember.ones(2, 3)
    for f in (lambda: m + c, lambda: c * m, lambda: ember.cat([m, c]), lambda: ember.where(m > 0, m, c),
              lambda: ember.mm(m, c.t()), lambda: ember.add(c, c, out=meta(2, 3))):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            f()
    # a CPU scalar (0 dims) mixes with any device, as in torch
    for r in (m + ember.tensor(2.0), ember.tensor(2.0) * m, m.add(ember.tensor(1)), ember.where(m > 0, m, ember.tensor(0.0))):
        assert r.is_meta and r.shape == (2, 3)


def test_meta_ops_compute_torchs_metadata():
    cases = [
        lambda m, a: (a + 1).sum(1), lambda m, a: a.transpose(0, 2).contiguous(), lambda m, a: a.softmax(-1),
        lambda m, a: m.nn.functional.layer_norm(a, (5,)), lambda m, a: a @ a.transpose(-1, -2),
        lambda m, a: m.nn.functional.gelu(a).mean((0, 1), keepdim=True), lambda m, a: a.max(1)[1],
        lambda m, a: a.sort(-1, descending=True)[1], lambda m, a: a.cumsum(2), lambda m, a: a.view(5, 6),
        lambda m, a: a[:, 1:, ::2], lambda m, a: a.permute(2, 0, 1).reshape(-1), lambda m, a: a.half().to(m.float64),
        lambda m, a: m.stack([a, a], 1), lambda m, a: m.nn.functional.conv1d(a, m.ones(2, 3, 2, device=a.device)),
        lambda m, a: m.nn.functional.max_pool1d(a, 2), lambda m, a: a.topk(2, -1)[0], lambda m, a: a.argmax(),
        lambda m, a: a.gather(2, m.zeros(2, 3, 1, dtype=m.int64, device=a.device)),
        lambda m, a: a.index_select(1, m.tensor([0, 2], device=a.device)), lambda m, a: a[m.tensor([1, 0])],
        lambda m, a: a[:, m.tensor([[0], [2]], device=a.device)], lambda m, a: a[1:, ::2, m.tensor([4, 0, 1])],
        lambda m, a: m.nn.functional.embedding(m.zeros(4, dtype=m.int64, device=a.device), a[0]),
        lambda m, a: m.nn.functional.cross_entropy(a.reshape(6, 5), m.zeros(6, dtype=m.int64, device=a.device)),
        lambda m, a: a.masked_fill(a > 0, 1.0), lambda m, a: m.tril(a[0]), lambda m, a: a.expand(4, 2, 3, 5),
        lambda m, a: a.std(1), lambda m, a: a.to(m.bfloat16).exp(),
    ]
    for case in cases:  # shapes and dtypes as torch's; strides as ember's own on the CPU
        e = case(ember, ember.empty(2, 3, 5, device="meta"))
        c = case(ember, ember.rand(2, 3, 5))
        t = case(torch, torch.empty(2, 3, 5, device="meta"))
        assert e.is_meta and tuple(e.shape) == tuple(t.shape) == tuple(c.shape) and e.stride() == c.stride()
        assert e.dtype == c.dtype and str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]


def test_meta_backward_gives_meta_gradients():
    w = meta(5, 4, requires_grad=True)
    x = meta(3, 5)
    loss = ember.nn.functional.mse_loss((x @ w).tanh(), meta(3, 4))
    loss.backward()
    assert w.grad.is_meta and w.grad.shape == (5, 4) and loss.is_meta and loss.shape == ()


def test_operations_that_need_data_raise():
    m = meta(2, 3)
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        meta(1).item()
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        bool(m.sum())
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        m.item()
    for f in (m.tolist, m.cpu, lambda: m.to("cpu"), lambda: ember.ones(2, 3).copy_(m), m.nonzero,
              lambda: m.masked_select(m > 0)):
        with pytest.raises(NotImplementedError):
            f()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        m.numpy()


def test_meta_printing_matches_torch():
    assert repr(ember.ones(2, 3, device="meta")) == repr(torch.ones(2, 3, device="meta"))
    assert repr(ember.ones(2, dtype=ember.int64, device="meta")) == \
        repr(torch.ones(2, dtype=torch.int64, device="meta")).replace("torch", "ember")
    assert repr(ember.ones(0, device="meta")) == repr(torch.ones(0, device="meta"))
    e = ember.ones(2, device="meta", requires_grad=True) * 2
    assert repr(e) == repr(torch.ones(2, device="meta", requires_grad=True) * 2)


def test_copies_between_cpu_and_meta():
    m, c = meta(2, 3), ember.arange(6.0).view(2, 3)
    assert m.copy_(c) is m and m.is_meta
    assert c.to("meta").is_meta and c.to("meta").shape == (2, 3)
    assert c.to("cpu") is c and m.to("meta") is m
    assert ember.tensor([[1, 2]], device="meta").shape == (1, 2)
    assert ember.ones(2, 3).to(m).is_meta
    with pytest.raises(RuntimeError, match="must match the size|cannot be broadcast"):
        m.copy_(ember.ones(4))


def test_default_device_and_context():
    assert ember.get_default_device() == ember.device("cpu")
    with ember.device("meta"):
        assert ember.get_default_device() == ember.device("meta")
        assert ember.ones(2).is_meta and ember.tensor([1.0]).is_meta and ember.arange(3).is_meta
        assert ember.ones_like(ember.ones(2, device="cpu")).is_cpu  # like follows its source, as torch
        assert ember.nn.Linear(3, 4).weight.is_meta
    assert ember.ones(2).is_cpu
    ember.set_default_device("meta")
    try:
        assert ember.zeros(1).is_meta
    finally:
        ember.set_default_device(None)
    assert ember.zeros(1).is_cpu and ember.get_default_device() == ember.device("cpu")


def test_bad_devices():
    with pytest.raises(RuntimeError):
        ember.zeros(2, device="xpu")
    with pytest.raises(RuntimeError):
        ember.zeros(2, device="meta:x")
    with pytest.raises(RuntimeError):
        ember.device("nodevice")
