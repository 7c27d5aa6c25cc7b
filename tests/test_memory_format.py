"""Memory formats (channels_last, channels_last_3d, contiguous_format, preserve_format)
against torch: strides of every result, values, gradients' layouts, errors."""
import pickle

import numpy as np
import pytest
import torch

import ember

CL, CL3 = "channels_last", "channels_last_3d"


def fmt(lib, name):
    return getattr(lib, name)


def pair(shape, dtype="float32", seed=0):
    if 0 in shape:  # torch.tensor of an empty array has all-zero strides: start both from ones
        return ember.ones(shape), torch.ones(shape)
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a), torch.tensor(a)


def both(make):
    """make(lib) for ember and torch."""
    return make(ember), make(torch)


def check(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride(), (e.stride(), t.stride())
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=1e-5, atol=1e-5)


def from_layout(shape, perm, seed=0):
    """ember and torch tensors of `shape` whose memory is in dim order `perm` (outermost first)."""
    e, t = pair(tuple(shape[p] for p in perm), seed=seed)
    inv = np.argsort(perm).tolist()
    return e.permute(*inv), t.permute(*inv)


NHWC = (0, 2, 3, 1)
# shapes with the ambiguous size-1 cases: C == 1, H == W == 1, N == 1, all ones, empty
SHAPES = [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 3, 4, 5), (1, 1, 1, 1), (2, 3, 1, 4), (0, 3, 4, 5),
          (2, 0, 3, 4), (2, 3, 0, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_empty_and_is_contiguous(shape):
    for name in ("contiguous_format", CL):
        e, t = ember.empty(shape, memory_format=fmt(ember, name)), torch.empty(shape, memory_format=fmt(torch, name))
        assert e.stride() == t.stride()
        for q in ("contiguous_format", CL, CL3, "preserve_format"):
            assert e.is_contiguous(memory_format=fmt(ember, q)) == t.is_contiguous(memory_format=fmt(torch, q)), q
        assert e.is_contiguous() == t.is_contiguous()


@pytest.mark.parametrize("shape", [(2, 3, 4, 5, 6), (2, 1, 3, 4, 5), (2, 3, 1, 1, 1), (0, 2, 3, 4, 5)])
def test_channels_last_3d(shape):
    e = ember.empty(shape, memory_format=ember.channels_last_3d)
    t = torch.empty(shape, memory_format=torch.channels_last_3d)
    assert e.stride() == t.stride()
    assert e.is_contiguous(memory_format=ember.channels_last_3d) == t.is_contiguous(memory_format=torch.channels_last_3d)
    assert e.is_contiguous() == t.is_contiguous()
    (ec, tc) = pair(shape)
    check(ec.contiguous(memory_format=ember.channels_last_3d), tc.contiguous(memory_format=torch.channels_last_3d))
    check(ec.clone(memory_format=ember.channels_last_3d) + 1, tc.clone(memory_format=torch.channels_last_3d) + 1)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("source", ["contiguous", "nhwc", "sliced_nhwc", "transposed"])
def test_conversions(shape, source):
    if source == "contiguous":
        e, t = pair(shape)
    elif source == "nhwc":
        e, t = from_layout(shape, NHWC)
    elif source == "sliced_nhwc":
        e, t = from_layout((shape[0], shape[1], shape[2] * 2, shape[3]), NHWC)
        e, t = e[:, :, ::2], t[:, :, ::2]
    else:
        e, t = from_layout(shape, (0, 1, 3, 2))
    for name in ("contiguous_format", CL, "preserve_format"):
        fe, ft = fmt(ember, name), fmt(torch, name)
        check(e.to(memory_format=fe), t.to(memory_format=ft))
        assert (e.to(memory_format=fe) is e) == (t.to(memory_format=ft) is t), name
        check(e.clone(memory_format=fe), t.clone(memory_format=ft))
        check(e.double(memory_format=fe), t.double(memory_format=ft))
        check(e.to(ember.float64, memory_format=fe), t.to(torch.float64, memory_format=ft))
        check(e.to("cpu", ember.float16, memory_format=fe), t.to("cpu", torch.float16, memory_format=ft))
        check(e.half(memory_format=fe), t.half(memory_format=ft))
        check(e.to(e, memory_format=fe), t.to(t, memory_format=ft))
        for like in ("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like"):
            a, b = getattr(ember, like)(e, memory_format=fe), getattr(torch, like)(t, memory_format=ft)
            assert a.stride() == b.stride(), like
        assert ember.full_like(e, 2, memory_format=fe).stride() == torch.full_like(t, 2, memory_format=ft).stride()
        if name != "preserve_format":
            check(e.contiguous(memory_format=fe), t.contiguous(memory_format=ft))
            assert (e.contiguous(memory_format=fe) is e) == (t.contiguous(memory_format=ft) is t)
        assert e.is_contiguous(memory_format=fe) == t.is_contiguous(memory_format=ft)
    # preserve_format is the default of clone, to and the *_like factories
    check(e.clone(), t.clone())
    assert ember.empty_like(e).stride() == torch.empty_like(t).stride()
    assert ember.randint_like(e, 5).stride() == torch.randint_like(t, 5).stride()
    check(e.float(), t.float())
    check(e.cpu(memory_format=ember.channels_last), t.cpu(memory_format=torch.channels_last))


def test_dtypes():
    for dt in ("float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"):
        e = ember.ones(2, 3, 4, 5, dtype=getattr(ember, dt)).contiguous(memory_format=ember.channels_last)
        t = torch.ones(2, 3, 4, 5, dtype=getattr(torch, dt)).contiguous(memory_format=torch.channels_last)
        check(e, t)
        check(e + e, t + t)
        check(e.float(), t.float())


def test_contiguous_preserve_errors():
    e, t = from_layout((2, 3, 4, 5), NHWC)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        e.contiguous(memory_format=ember.preserve_format)
    with pytest.raises(RuntimeError):
        t.contiguous(memory_format=torch.preserve_format)
    # a tensor that is contiguous already is returned, as torch does
    c = ember.ones(2, 3)
    assert c.contiguous(memory_format=ember.preserve_format) is c


@pytest.mark.parametrize("call", [
    lambda lib, x: x.contiguous(memory_format=lib.channels_last),
    lambda lib, x: x.to(memory_format=lib.channels_last),
    lambda lib, x: x.float(memory_format=lib.channels_last),
    lambda lib, x: x.clone(memory_format=lib.channels_last),
    lambda lib, x: lib.empty_like(x, memory_format=lib.channels_last),
    lambda lib, x: lib.zeros_like(x, memory_format=lib.channels_last),
    lambda lib, x: lib.empty(2, 3, memory_format=lib.channels_last),
    lambda lib, x: lib.empty(2, 3, 4, 5, 6, memory_format=lib.channels_last),
    lambda lib, x: lib.empty(2, 3, 4, 5, memory_format=lib.channels_last_3d),
    lambda lib, x: x.contiguous(memory_format=lib.channels_last_3d),
    lambda lib, x: lib.empty(2, 3, memory_format=lib.preserve_format),
])
def test_rank_errors(call):
    with pytest.raises(RuntimeError) as te:
        call(torch, torch.ones(2, 3))
    with pytest.raises(RuntimeError, match=str(te.value).split("\n")[0]):
        call(ember, ember.ones(2, 3))


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2, 3, 4, 5, memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5, memory_format=lib.channels_last),
    lambda lib: lib.full((2, 3, 4, 5), 1.0, memory_format=lib.channels_last),
    lambda lib: lib.rand(2, 3, 4, 5, memory_format=lib.channels_last),
    lambda lib: lib.empty_strided((2, 3, 4, 5), (60, 20, 5, 1), memory_format=lib.channels_last),
])
def test_factories_without_memory_format(call):
    # torch's zeros, ones, full, rand, empty_strided take no memory_format: TypeError in both
    with pytest.raises(TypeError):
        call(torch)
    with pytest.raises(TypeError):
        call(ember)


def test_memory_format_objects():
    assert repr(ember.channels_last) == "ember.channels_last"
    assert repr(ember.channels_last_3d) == "ember.channels_last_3d"
    for f in (ember.channels_last, ember.channels_last_3d, ember.contiguous_format, ember.preserve_format):
        assert pickle.loads(pickle.dumps(f)) is f
    with pytest.raises(TypeError):
        ember.ones(2, 3, 4, 5).contiguous(memory_format="channels_last")


def layouts(shape):
    return {"contiguous": pair(shape), "nhwc": from_layout(shape, NHWC, seed=1),
            "transposed": from_layout(shape, (0, 1, 3, 2), seed=2)}


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 3, 4, 5)])
def test_elementwise_propagation(shape):
    ls = layouts(shape)
    for a in ls:
        ea, ta = ls[a]
        check(ea.relu(), ta.relu())
        check(ember.sigmoid(ea), torch.sigmoid(ta))
        check(ea * 2, ta * 2)
        check(ea.to(ember.int32) + 1.5, ta.to(torch.int32) + 1.5)
        for b in ls:
            eb, tb = ls[b]
            check(ea + eb, ta + tb)
            check(ember.where(ea > 0, ea, eb), torch.where(ta > 0, ta, tb))
        # broadcasting a per-channel bias and a per-sample scale, on either side
        eb, tb = pair((shape[1], 1, 1), seed=3)
        check(ea + eb, ta + tb)
        check(eb * ea, tb * ta)
        es, ts = pair((shape[0], 1, 1, 1), seed=4)
        check(ea * es, ta * ts)
        check(es - ea, ts - ta)
        # in place keeps self's layout
        c, d = ea.clone(), ta.clone()
        c.add_(eb)
        d.add_(tb)
        check(c, d)


def test_conv_pool_norm_layouts():
    import ember.nn.functional as EF
    import torch.nn.functional as TF

    ex, tx = from_layout((2, 3, 6, 7), NHWC)
    ew, tw = pair((4, 3, 3, 3), seed=5)
    eb, tb = pair((4,), seed=6)
    check(EF.conv2d(ex, ew, eb, padding=1), TF.conv2d(tx, tw, tb, padding=1))
    check(EF.conv2d(ex, ew, stride=2), TF.conv2d(tx, tw, stride=2))
    ewc, twc = from_layout((4, 3, 3, 3), NHWC, seed=5)
    exc, txc = pair((2, 3, 6, 7))
    check(EF.conv2d(exc, ewc), TF.conv2d(txc, twc))  # a channels_last weight decides too
    check(EF.conv2d(exc, ew), TF.conv2d(txc, tw))
    check(EF.max_pool2d(ex, 2), TF.max_pool2d(tx, 2))
    eo, ei = EF.max_pool2d(ex, 2, return_indices=True)
    to, ti = TF.max_pool2d(tx, 2, return_indices=True)
    check(eo, to)
    check(ei, ti)
    check(EF.avg_pool2d(ex, 2), TF.avg_pool2d(tx, 2))
    check(EF.adaptive_avg_pool2d(ex, (2, 3)), TF.adaptive_avg_pool2d(tx, (2, 3)))
    check(EF.adaptive_avg_pool2d(ex, 1), TF.adaptive_avg_pool2d(tx, 1))
    check(EF.adaptive_max_pool2d(ex, (2, 3)), TF.adaptive_max_pool2d(tx, (2, 3)))
    check(EF.relu(ex), TF.relu(tx))
    erm, trm = pair((3,), seed=7)
    erv, trv = pair((3,), seed=8)
    for training in (True, False):
        check(EF.batch_norm(ex, erm.clone(), erv.abs(), training=training),
              TF.batch_norm(tx, trm.clone(), trv.abs(), training=training))
    # 3-d inputs of the same ops stay as they were
    check(EF.max_pool2d(ex[0], 2), TF.max_pool2d(tx[0], 2))


CONV_CASES = [  # (input shape, weight shape, keyword arguments): groups, strides, dilation, 1x1, transposed
    ((2, 4, 7, 6), (8, 4, 3, 3), dict(padding=1)),
    ((2, 4, 7, 6), (8, 2, 3, 3), dict(stride=2, groups=2)),
    ((2, 4, 7, 6), (8, 1, 3, 3), dict(padding=2, dilation=2, groups=4)),
    ((2, 4, 7, 6), (8, 4, 3, 2), dict(stride=(2, 1), padding=(1, 0))),
    ((2, 4, 7, 6), (8, 4, 1, 1), dict()),
    ((2, 4, 7, 6), (8, 2, 1, 1), dict(groups=2)),
    ((0, 4, 5, 5), (3, 4, 3, 3), dict(padding=1)),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1, transposed=True)),
    ((2, 4, 5, 5), (4, 1, 3, 3), dict(groups=4, transposed=True)),
    ((2, 4, 3, 5, 5), (6, 2, 3, 3, 3), dict(padding=1, groups=2)),
    ((2, 4, 3, 5, 5), (4, 3, 2, 3, 3), dict(stride=2, transposed=True)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("xs,ws,kw", CONV_CASES)
def test_channels_last_convolution(xs, ws, kw, dtype):
    """The channels_last kernels (Note [Channels-last convolution]): values, gradients and
    their layouts, as torch's, with the bias added in both passes."""
    kw = dict(kw)
    transposed = kw.pop("transposed", False)
    nd = len(xs) - 2
    name = f"conv{'_transpose' if transposed else ''}{nd}d"
    f = CL if nd == 2 else CL3
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    cout = ws[1] * kw.get("groups", 1) if transposed else ws[0]
    b = rng.standard_normal(cout).astype(dtype)
    res = []
    for lib in (ember, torch):
        X = lib.tensor(x).to(memory_format=fmt(lib, f)).requires_grad_()
        W = lib.tensor(w).to(memory_format=fmt(lib, f)).requires_grad_()
        B = lib.tensor(b).requires_grad_()
        y = getattr(lib.nn.functional, name)(X, W, B, **kw)
        if y.numel():
            (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape).sin()).sum().backward()
        res.append((y, X.grad, W.grad, B.grad))
    for e, t in zip(*res):
        if t is None:
            assert e is None or not e.abs().sum().item()
            continue
        assert tuple(e.shape) == tuple(t.shape)
        if e.numel() > 1 and not (nd == 3 and dtype == "float64"):  # torch's float64 3-d is contiguous
            assert e.stride() == t.stride(), (e.stride(), t.stride())
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["int64", "float16", "bfloat16"])
def test_channels_last_convolution_dtypes(dtype):
    rng = np.random.default_rng(4)
    x, w = rng.integers(-3, 4, (2, 4, 5, 5)), rng.integers(-3, 4, (6, 2, 3, 3))
    e, t = both(lambda lib: lib.nn.functional.conv2d(
        lib.tensor(x).to(getattr(lib, dtype)).to(memory_format=lib.channels_last),
        lib.tensor(w).to(getattr(lib, dtype)), padding=1, groups=2))
    check(e, t)


POOL_CASES = [  # (name, input shape, arguments, returns indices)
    ("max_pool2d", (2, 5, 9, 8), dict(kernel_size=3, stride=2, padding=1), True),
    ("max_pool2d", (2, 5, 9, 8), dict(kernel_size=(2, 3), dilation=2, ceil_mode=True), True),
    ("avg_pool2d", (2, 5, 9, 8), dict(kernel_size=3, stride=2, padding=1), False),
    ("avg_pool2d", (2, 5, 9, 8), dict(kernel_size=2, count_include_pad=False, padding=1, divisor_override=3), False),
    ("adaptive_avg_pool2d", (2, 5, 9, 8), dict(output_size=(4, 3)), False),
    ("adaptive_max_pool2d", (2, 5, 9, 8), dict(output_size=(4, 3)), True),
    ("max_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 2)), True),
    ("avg_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=3, padding=1), False),
    ("adaptive_avg_pool3d", (2, 3, 5, 6, 7), dict(output_size=(2, 3, 4)), False),
    ("adaptive_max_pool3d", (2, 3, 5, 6, 7), dict(output_size=(2, 3, 4)), True),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shape,kw,has_indices", POOL_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(POOL_CASES)])
def test_channels_last_pooling(name, shape, kw, has_indices, dtype):
    """Pooling computed in channels_last (Note [Channels-last pooling]): values, indices,
    gradients and every layout as torch's; ties and NaNs pick torch's index."""
    f = CL if len(shape) == 4 else CL3
    a = np.random.default_rng(5).integers(-2, 3, shape).astype(dtype)  # many ties
    a.reshape(-1)[::17] = np.nan
    res = []
    for lib in (ember, torch):
        x = lib.tensor(a).to(memory_format=fmt(lib, f)).requires_grad_()
        fn = getattr(lib.nn.functional, name)
        out = fn(x, **kw, return_indices=True) if has_indices else fn(x, **kw)
        y, idx = out if has_indices else (out, None)
        (y.nan_to_num() * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape).cos()).sum().backward()
        res.append((y, idx, x.grad))
    for e, t in zip(*res):
        if t is None:
            continue
        assert e.stride() == t.stride(), (e.stride(), t.stride())
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["int64", "int8", "float16", "bfloat16"])
def test_channels_last_pooling_dtypes(dtype):
    a = np.random.default_rng(6).integers(-5, 5, (2, 4, 6, 6))
    for name in ("max_pool2d", "avg_pool2d"):
        if name == "avg_pool2d" and dtype == "int8":
            continue  # torch averages int64 only
        e, t = both(lambda lib: getattr(lib.nn.functional, name)(
            lib.tensor(a).to(getattr(lib, dtype)).to(memory_format=lib.channels_last), 2))
        check(e, t)


def test_gradients_keep_layout():
    import ember.nn.functional as EF
    import torch.nn.functional as TF

    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        x = lib.tensor(np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype("float32"))
        x = x.to(memory_format=lib.channels_last).requires_grad_()
        w = lib.tensor(np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype("float32"), requires_grad=True)
        y = F.conv2d(x, w, padding=1)
        y = F.batch_norm(y, None, None, training=True)
        y = F.max_pool2d(F.relu(y), 2) + F.avg_pool2d(y, 2)
        y = F.adaptive_avg_pool2d(y, 1)
        g = lib.ones(y.shape).to(memory_format=lib.channels_last)
        y.backward(g)
        res.append((y, x.grad, w.grad))
    for e, t in zip(*res):
        check(e, t)


def test_module_to():
    for lib in (ember, torch):
        lib.manual_seed(0)
    em = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4), ember.nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Linear(4, 2))
    assert em.to(memory_format=ember.channels_last) is em
    tm.to(memory_format=torch.channels_last)
    for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        assert p.stride() == q.stride(), n
        assert type(p) is ember.nn.Parameter
    assert em[0].weight.is_contiguous(memory_format=ember.channels_last)
    em.to(ember.float64, memory_format=ember.channels_last)
    assert em[0].weight.dtype == ember.float64 and em[0].weight.is_contiguous(memory_format=ember.channels_last)
    em.to(memory_format=ember.contiguous_format)
    assert em[0].weight.is_contiguous()
    # channels_last on a 5-d parameter raises, as torch's does
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        torch.nn.Conv3d(1, 1, 1).to(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        ember.nn.Conv3d(1, 1, 1).to(memory_format=ember.channels_last) if hasattr(ember.nn, "Conv3d") else \
            ember.nn.Module.to(_ParamHolder(), memory_format=ember.channels_last)


class _ParamHolder(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = ember.nn.Parameter(ember.ones(1, 1, 1, 1, 1))
