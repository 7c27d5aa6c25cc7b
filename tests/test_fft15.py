"""ember.fft against torch.fft: values, dtypes, shapes, norms, n / s padding and trimming,
odd / even / prime lengths (mixed radix and Bluestein), non-contiguous and batched inputs,
errors, and gradients of a real loss; the native _fft_c2c / _fft_r2c / _fft_c2r ops."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
import ember.fft as efft

torch = pytest.importorskip("torch")

TESTED_OPS = {"_fft_c2c", "_fft_r2c", "_fft_c2r"}

RNG = np.random.default_rng(15)
NORMS = [None, "backward", "ortho", "forward"]
LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 15, 16, 17, 25, 30, 49, 60, 64, 67, 97, 100, 127, 210, 256, 1009]


def data(shape, kind):
    a = RNG.standard_normal(shape)
    if kind in ("complex64", "complex128"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(kind)


def pair(a):
    """The same values as an ember and a torch tensor."""
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def to_np(t):
    return t.detach().resolve_conj().numpy()


def close(e, t, what=""):
    assert isinstance(e, ember.Tensor)
    assert tuple(e.shape) == tuple(t.shape), (what, tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1], (what, e.dtype, t.dtype)
    a, b = to_np(e), to_np(t)
    single = a.dtype in (np.float32, np.complex64)
    scale = max(np.abs(b).max(), 1e-30) if b.size else 1.0
    tol = (2e-6 if single else 1e-13) * max(1.0, np.log2(max(b.size, 2)))
    assert np.abs(a - b).max(initial=0) <= tol * scale, (what, np.abs(a - b).max(initial=0) / scale)


def both(fn, *arrays, what=""):
    es, ts = zip(*(pair(a) for a in arrays))
    close(fn(efft, *es), fn(torch.fft, *ts), what)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_dim_lengths_and_norms(dtype):
    cdtype = "complex64" if dtype == "float32" else "complex128"
    for i, n in enumerate(LENGTHS):
        for norm in (NORMS[i % 4], NORMS[(i + 2) % 4]):
            x, z = data((2, n), dtype), data((2, n), cdtype)
            for name in ("fft", "ifft", "hfft", "irfft") if n > 1 else ("fft", "ifft"):
                both(lambda lib, t: getattr(lib, name)(t, norm=norm), z, what=(name, n, norm))
            for name in ("fft", "ifft", "rfft", "ihfft"):
                both(lambda lib, t: getattr(lib, name)(t, norm=norm), x, what=(name, n, norm))
            # irfft / hfft of odd output lengths, with imaginary parts at 0 and n / 2 to ignore
            both(lambda lib, t: lib.irfft(t, n=2 * n - 1, norm=norm), z, what=("irfft odd", n))
            both(lambda lib, t: lib.hfft(t, n=2 * n - 1, norm=norm), z, what=("hfft odd", n))


def test_large_and_prime_lengths():
    # 2^14 * 3 (mixed radix), 10007 and 2 * 10007 (Bluestein), 3 * 5 * 7 * 11 * 13
    for n in (3 * 2**14, 10007, 2 * 10007, 15015, 59 * 61, 67 * 2):
        for dtype in ("complex64", "complex128"):
            both(lambda lib, t: lib.fft(t), data((n,), dtype), what=("fft", n))
            both(lambda lib, t: lib.ifft(t, norm="ortho"), data((n,), dtype), what=("ifft", n))
        for dtype in ("float32", "float64"):
            both(lambda lib, t: lib.rfft(t), data((n,), dtype), what=("rfft", n))
            both(lambda lib, t: lib.irfft(t, n=n), data((n // 2 + 1,), "complex128"), what=("irfft", n))


def test_n_pads_and_trims():
    x = data((3, 10), "complex128")
    for n in (4, 10, 13, 16):
        both(lambda lib, t: lib.fft(t, n=n), x)
        both(lambda lib, t: lib.ifft(t, n=n, dim=0), x)
        both(lambda lib, t: lib.irfft(t, n=n), x)
        both(lambda lib, t: lib.hfft(t, n=n, dim=0), x)
        both(lambda lib, t: lib.rfft(t, n=n), x.real.copy())
        both(lambda lib, t: lib.ihfft(t, n=n), x.real.copy())


def test_n_dim_forms():
    z, x = data((3, 4, 5), "complex128"), data((3, 4, 5), "float32")
    for kw in ({}, {"dim": (0, 2)}, {"s": (6, 3)}, {"s": (2, -1), "dim": (2, 0)}, {"dim": [1]}, {"dim": -1},
               {"norm": "ortho"}, {"s": (5, 4, 8), "norm": "forward"}):
        for name in ("fftn", "ifftn", "irfftn", "hfftn"):
            both(lambda lib, t: getattr(lib, name)(t, **kw), z, what=(name, kw))
        for name in ("fftn", "ifftn", "rfftn", "ihfftn"):
            both(lambda lib, t: getattr(lib, name)(t, **kw), x, what=(name, kw))
    for kw in ({}, {"s": (3, 6)}, {"dim": (0, 1)}, {"norm": "ortho"}):
        for name in ("fft2", "ifft2", "irfft2", "hfft2"):
            both(lambda lib, t: getattr(lib, name)(t, **kw), z, what=(name, kw))
        for name in ("fft2", "ifft2", "rfft2", "ihfft2"):
            both(lambda lib, t: getattr(lib, name)(t, **kw), x, what=(name, kw))


def test_non_contiguous_and_batched():
    ember.set_num_threads(2)
    base = data((40, 30, 6), "complex64")
    for view in (lambda t: t.transpose(0, 2), lambda t: t[::2, 1::3], lambda t: t.permute(1, 2, 0)[:, ::2]):
        for dim in (0, 1, 2, -1):
            both(lambda lib, t: lib.fft(view(t), dim=dim), base, what=("fft", dim))
            both(lambda lib, t: lib.irfft(view(t), dim=dim), base, what=("irfft", dim))
            both(lambda lib, t: lib.rfft(view(t).real, dim=dim), base, what=("rfft", dim))
        both(lambda lib, t: lib.fftn(view(t), dim=(0, 2)), base)
        both(lambda lib, t: lib.irfftn(view(t), dim=(2, 0)), base)
        both(lambda lib, t: lib.rfftn(view(t).real, dim=(1, 0)), base)
    # many short rows across threads give what one thread gives
    x = ember.from_numpy(data((3000, 12), "complex128"))
    many = efft.fft(x)
    ember.set_num_threads(1)
    try:
        assert ember.equal(many, efft.fft(x))
    finally:
        ember.set_num_threads(2)


def test_dtypes():
    assert efft.fft(ember.arange(4)).dtype == ember.complex64
    assert efft.fft(ember.arange(4.0, dtype=ember.float64)).dtype == ember.complex128
    assert efft.rfft(ember.tensor([True, False, True])).dtype == ember.complex64
    assert efft.irfft(ember.ones(3)).dtype == ember.float32
    assert efft.hfft(ember.ones(3, dtype=ember.float64)).dtype == ember.float64
    assert efft.ifft(ember.ones(3, dtype=ember.complex128)).dtype == ember.complex128
    both(lambda lib, t: lib.fft(t), np.arange(6, dtype=np.int64))
    both(lambda lib, t: lib.rfftn(t), np.arange(6, dtype=np.int32).reshape(2, 3))
    both(lambda lib, t: lib.irfft(t), np.arange(6, dtype=np.float64))
    # 0-size batches (torch 2.13's MKL backend raises "Inconsistent configuration parameters")
    for fn, shape, dtype in ((efft.fft, (0, 4), ember.complex64), (efft.rfft, (0, 3), ember.complex64),
                             (efft.irfft, (0, 6), ember.float32), (efft.fft2, (0, 2, 4), ember.complex64),
                             (lambda x: efft.irfftn(x, dim=(1, 2)), (0, 2, 6), ember.float32)):
        r = fn(ember.zeros((0, 2, 4) if len(shape) == 3 else (0, 4)))
        assert tuple(r.shape) == shape and r.dtype == dtype
    both(lambda lib, t: lib.fftn(t, dim=()), data((3,), "float32"))


def errors(fn):
    try:
        fn(torch.fft, torch)
    except Exception as t_err:  # noqa: BLE001
        with pytest.raises(type(t_err)) as e_err:
            fn(efft, ember)
        assert str(e_err.value).splitlines()[0] == str(t_err).splitlines()[0]
    else:
        raise AssertionError("torch did not raise")


@pytest.mark.parametrize("fn", [
    lambda f, m: f.rfft(m.zeros(4, dtype=m.complex64)),
    lambda f, m: f.ihfft(m.zeros(4, dtype=m.complex128)),
    lambda f, m: f.fft(m.zeros(0)),
    lambda f, m: f.fft(m.zeros(4), n=0),
    lambda f, m: f.irfft(m.zeros(1)),
    lambda f, m: f.fft(m.zeros(4), norm="x"),
    lambda f, m: f.fftn(m.zeros(4, 4), s=(2, 2, 2)),
    lambda f, m: f.fftn(m.zeros(4, 4), dim=(0, 0)),
    lambda f, m: f.fftn(m.zeros(4, 4), s=(2,), dim=(0, 1)),
    lambda f, m: f.fft(m.zeros(4, dtype=m.float16)),
    lambda f, m: f.fft(m.zeros(4), dim=3),
    lambda f, m: f.fft(m.zeros(())),
    lambda f, m: f.rfftn(m.zeros(3), dim=()),
    lambda f, m: f.irfftn(m.zeros(3), dim=()),
    lambda f, m: f.fft(m.zeros(4), out=m.zeros(4)),
    lambda f, m: m._fft_c2c(m.zeros(4), [0], 0, True),
    lambda f, m: m._fft_r2c(m.zeros(4, dtype=m.complex64), [0], 0, True),
    lambda f, m: m._fft_c2r(m.zeros(4), [0], 0, 6),
])
def test_errors(fn):
    errors(fn)


def test_out():
    x = data((5,), "complex64")
    e_out = ember.empty(0, dtype=ember.complex64)
    r = efft.fft(ember.from_numpy(x), out=e_out)
    assert r is e_out
    close(e_out, torch.fft.fft(torch.from_numpy(x)))


def test_native_ops():
    for n in (5, 8):
        z = data((3, n), "complex128")
        for norm in (0, 1, 2):
            both(lambda lib, t: (ember if lib is efft else torch)._fft_c2c(t, [0, 1], norm, norm != 1), z)
            both(lambda lib, t: (ember if lib is efft else torch)._fft_r2c(t.real, [1, 0], norm, False), z)
            both(lambda lib, t: (ember if lib is efft else torch)._fft_r2c(t.real, [1], norm, True), z)
            both(lambda lib, t: (ember if lib is efft else torch)._fft_c2r(t, [1], norm, 2 * n - 2), z)
            both(lambda lib, t: (ember if lib is efft else torch)._fft_c2r(t[:, : n // 2 + 1], [0, 1], norm, n), z)


def test_helpers():
    for n in (1, 4, 5, 8):
        for d in (1.0, 0.3):
            assert np.allclose(efft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
            assert np.allclose(efft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    assert efft.fftfreq(4, dtype=ember.float64).dtype == ember.float64
    x = np.arange(30).reshape(5, 6)
    for dim in (None, 0, 1, (0, 1), [-1]):
        for name in ("fftshift", "ifftshift"):
            e = getattr(efft, name)(ember.from_numpy(x), dim=dim)
            assert (e.numpy() == getattr(torch.fft, name)(torch.from_numpy(x), dim=dim).numpy()).all()


def grads(fn, a, kind):
    """x.grad of sum(w * f(x)) (real and imaginary parts weighted) in ember and torch."""
    out = []
    for lib, mod in ((ember, efft), (torch, torch.fft)):
        x = (ember.from_numpy if lib is ember else torch.from_numpy)(a.copy()).requires_grad_()
        y = fn(mod, x)
        w = np.cos(np.arange(int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape)))
        wt = (ember.from_numpy if lib is ember else torch.from_numpy)(w)
        loss = (y.real * wt).sum() + (y.imag * (wt + 0.5)).sum() if kind == "c" else (y * wt).sum()
        loss.backward()
        out.append(x.grad)
    return out


@pytest.mark.parametrize("name, real_in, real_out, kw", [
    ("fft", False, False, {}), ("ifft", False, False, {"norm": "ortho"}), ("fft", True, False, {"n": 7}),
    ("ifft", True, False, {}), ("rfft", True, False, {}), ("rfft", True, False, {"n": 5, "norm": "forward"}),
    ("ihfft", True, False, {}), ("irfft", False, True, {}), ("irfft", False, True, {"n": 7}),
    ("hfft", False, True, {"norm": "ortho"}), ("hfft", False, True, {"n": 9}), ("irfft", True, True, {}),
    ("fftn", True, False, {}), ("ifft2", False, False, {"s": (3, 8)}), ("rfftn", True, False, {"dim": (1, 0)}),
    ("irfftn", False, True, {}), ("irfft2", False, True, {"s": (4, 5)}), ("hfftn", False, True, {}),
    ("ihfftn", True, False, {"norm": "forward"}), ("rfft2", True, False, {"s": (5, 4)}),
])
def test_gradients_against_torch(name, real_in, real_out, kw):
    a = data((4, 6), "float64" if real_in else "complex128")
    ge, gt = grads(lambda mod, x: getattr(mod, name)(x, **kw), a, "r" if real_out else "c")
    close(ge, gt, name)


def test_gradcheck():
    x = ember.from_numpy(data((2, 5), "float64")).requires_grad_()
    c = ember.from_numpy(data((2, 3), "complex128"))
    assert ember.autograd.gradcheck(lambda x: efft.irfft(efft.rfft(x) * c, n=5), (x,))
    assert ember.autograd.gradcheck(lambda x: efft.hfft(efft.ifft(x, norm="ortho")[:, :3] * c, n=4), (x,))
    assert ember.autograd.gradcheck(lambda x: efft.irfftn(efft.fftn(x)[:, :3], s=(2, 5)), (x,))
    z = ember.from_numpy(data((5,), "complex128")).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gradcheck's complex Jacobian columns
        for fn in (lambda z: efft.fft(z) * 2, lambda z: efft.irfft(z, n=7), lambda z: efft.hfft(z, n=8, norm="ortho"),
                   lambda z: efft.ifftn(z.reshape(1, 5), s=(2, 6)), lambda z: efft.ihfft(efft.irfft(z, n=9))):
            assert ember.autograd.gradcheck(fn, (z,))


@pytest.mark.parametrize("kw", [
    {"n_fft": 16}, {"n_fft": 16, "hop_length": 5, "win_length": 12, "window": "hann"},
    {"n_fft": 15, "center": False, "normalized": True, "window": "hann15"},
    {"n_fft": 16, "pad_mode": "constant", "onesided": False}, {"n_fft": 8, "batch": True, "window": "hann8"},
])
def test_stft_istft(kw):
    kw = dict(kw)
    batch = kw.pop("batch", False)
    a = data((2, 60) if batch else (60,), "float64")
    win = kw.pop("window", None)
    wlen = kw.get("win_length", kw["n_fft"])
    results = []
    for lib in (ember, torch):
        x = (ember.from_numpy if lib is ember else torch.from_numpy)(a.copy()).requires_grad_()
        window = None if win is None else (ember.from_numpy if lib is ember else torch.from_numpy)(
            np.hanning(wlen + 2)[1:-1].copy())
        with warnings.catch_warnings():  # torch warns once per process
            warnings.simplefilter("ignore")
            s = lib.stft(x, window=window, return_complex=True, **kw)
        loss = (s.real * 0.3 + s.imag * 0.7).sum()
        loss.backward()
        ikw = {k: v for k, v in kw.items() if k not in ("pad_mode",)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = lib.istft(s.detach(), window=window, length=60 if kw.get("center", True) else None, **ikw)
        results.append((s, x.grad, y))
    for e, t in zip(*results):
        close(e, t)
    # ember's Tensor method and the real-pairs form
    e = ember.from_numpy(a.copy()).stft(16, window=ember.ones(16), return_complex=True)
    with pytest.warns(UserWarning):
        r = ember.stft(ember.from_numpy(a.copy()), 16, window=ember.ones(16), return_complex=False)
    assert tuple(r.shape) == tuple(e.shape) + (2,)


@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_stft_errors():
    x = ember.ones(100)
    for fn in (lambda: ember.stft(x, 16), lambda: ember.stft(x, 200, center=False, return_complex=True),
               lambda: ember.stft(x, 16, hop_length=0, return_complex=True),
               lambda: ember.stft(x, 16, win_length=20, return_complex=True),
               lambda: ember.stft(x, 16, window=ember.ones(10), return_complex=True),
               lambda: ember.stft(x.to(ember.complex64), 16, onesided=True, return_complex=True),
               lambda: ember.stft(x.view(2, 5, 10), 4, return_complex=True),
               lambda: ember.istft(ember.ones(9, 26), 16, window=ember.ones(16)),
               lambda: ember.istft(ember.ones(9, 26, dtype=ember.complex64), 15, window=ember.ones(15))):
        with pytest.raises(RuntimeError):
            fn()


# graphs running the three formulas, for test_autograd.py's test_every_derivative_is_exercised
DERIVATIVE_GRAPHS = [
    lambda: efft.fft(ember.ones(4, dtype=ember.complex64, requires_grad=True)),
    lambda: efft.rfft(ember.ones(4, requires_grad=True)),
    lambda: efft.irfft(ember.ones(3, dtype=ember.complex64, requires_grad=True)),
]
