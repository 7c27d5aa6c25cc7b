"""The vectorized float math (csrc/kernels/vec_math.h): ulp error against a more precise
reference over the whole float range, never worse than torch's own error on the same
points + 1 ulp, and torch's exact values at the special points."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from helpers import torch

F = torch.nn.functional
EF = ember.nn.functional

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754944e-38, 3.4028235e38,
           -3.4028235e38, 88.72283, 88.72284, 89.0, -87.33655, -103.27893, -103.97208, -104.0, 1e30, -1e30,
           262144.0, 262145.0, -262145.0, 1e6, 3.0e9, 0.5, -0.5, 1.0, -1.0, 2.0, 0.921875, -0.921875, 20.0, -20.0,
           709.78, 709.79, -745.0, -746.0, 5e-324, 1e308, -1e-310]


def sample(dtype):
    """Log-spaced magnitudes over the dtype's range, both signs, a dense linear stretch
    around 0, and the special points."""
    lo, hi = (-45, 38.5) if dtype == np.float32 else (-320, 308)
    m = np.logspace(lo, hi, 50000)
    x = np.concatenate([m, -m, np.linspace(-12, 12, 20001), np.array(SPECIAL)])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def ulp_error(y, ref, dtype):
    """|y - ref| in units of the dtype's spacing at ref (subnormal spacing at the bottom);
    0 where y equals ref rounded to the dtype (infinities, NaNs included)."""
    ref = np.asarray(ref)
    with np.errstate(all="ignore"):
        rounded = ref.astype(dtype)
        same = (y == rounded) | (np.isnan(y) & np.isnan(rounded))
        tiny = np.finfo(dtype).smallest_subnormal
        spacing = np.maximum(np.spacing(np.abs(rounded)).astype(ref.dtype), tiny)
        e = (np.abs(y.astype(ref.dtype) - ref) / spacing).astype(np.float64)
    e = np.where(np.isnan(e), np.inf, e)
    return np.where(same, 0.0, e)


def t64(fn):
    """A float64 reference through torch (libm-accurate in float64): good for float32."""
    return lambda x: fn(torch.from_numpy(x.astype(np.float64))).numpy()


def gelu_tanh_ref(x):
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    return x / (1 + np.exp(-2 * u))


def softplus_ref(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


# name -> (ember function, torch function, float64 reference of a float64 array,
#          longdouble reference or None)
CASES = {
    "exp": (ember.exp, torch.exp, np.exp, np.exp),
    "expm1": (ember.expm1, torch.expm1, np.expm1, np.expm1),
    "log": (ember.log, torch.log, np.log, np.log),
    "log1p": (ember.log1p, torch.log1p, np.log1p, np.log1p),
    "sin": (ember.sin, torch.sin, np.sin, np.sin),
    "cos": (ember.cos, torch.cos, np.cos, np.cos),
    "tan": (ember.tan, torch.tan, np.tan, np.tan),
    "sqrt": (ember.sqrt, torch.sqrt, np.sqrt, np.sqrt),
    "rsqrt": (ember.rsqrt, torch.rsqrt, lambda x: 1 / np.sqrt(x), lambda x: 1 / np.sqrt(x)),
    "sigmoid": (ember.sigmoid, torch.sigmoid, lambda x: 1 / (1 + np.exp(-x)), lambda x: 1 / (1 + np.exp(-x))),
    "erf": (ember.erf, torch.erf, t64(torch.erf), None),
    "gelu": (EF.gelu, F.gelu, t64(lambda x: 0.5 * x * torch.erfc(-x / math.sqrt(2))), None),
    "gelu_tanh": (lambda x: EF.gelu(x, approximate="tanh"), lambda x: F.gelu(x, approximate="tanh"), gelu_tanh_ref,
                  gelu_tanh_ref),
    "silu": (EF.silu, F.silu, lambda x: x / (1 + np.exp(-x)), lambda x: x / (1 + np.exp(-x))),
    "softplus": (EF.softplus, F.softplus, softplus_ref, softplus_ref),
    "pow2.5": (lambda x: ember.pow(x, 2.5), lambda x: torch.pow(x, 2.5), lambda x: np.power(x, 2.5),
               lambda x: np.power(x, 2.5)),
    "pow3": (lambda x: ember.pow(x, 3.0), lambda x: torch.pow(x, 3.0), lambda x: np.power(x, 3.0),
             lambda x: np.power(x, 3.0)),
    "pow-1.7": (lambda x: ember.pow(x, -1.7), lambda x: torch.pow(x, -1.7), lambda x: np.power(x, -1.7),
                lambda x: np.power(x, -1.7)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_ulp_within_torch(name, dtype):
    ef, tf, ref64, refld = CASES[name]
    x = sample(dtype)
    with np.errstate(all="ignore"):
        if dtype == np.float32 or refld is None:
            # float64 without a longdouble formula (erf, gelu): a float64 reference from
            # libm, itself within about an ulp, so one more ulp of slack
            ref = ref64(x.astype(np.float64))
        else:
            ref = refld(x.astype(np.longdouble))
    slack = 2 if dtype == np.float64 and refld is None else 1
    ty = tf(torch.from_numpy(x)).numpy()
    ey = ef(ember.from_numpy(x)).numpy()
    bound = ulp_error(ty, ref, dtype).max() + slack
    err = ulp_error(ey, ref, dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, f"{name}: {err[worst]} ulp at {x[worst]!r} (bound {bound})"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_special_values_as_torch(name, dtype):
    ef, tf, _, _ = CASES[name]
    with np.errstate(over="ignore"):
        x = np.array(SPECIAL, dtype=dtype)
    ty = tf(torch.from_numpy(x)).numpy()
    ey = ef(ember.from_numpy(x)).numpy()
    # exact where torch's result is a special value: NaN, an infinity, +-1, a zero with its
    # sign; where torch flushes a subnormal result to 0 (log1p(1e-45)), the true value
    # (within one subnormal step) is fine too. torch's own float and double gelu disagree on
    # the sign of gelu(-0) and of underflowed negatives, so gelu's zero signs are not compared.
    np.testing.assert_array_equal(np.isnan(ey), np.isnan(ty))
    exact = np.isinf(ty) | (np.abs(ty) == 1)
    np.testing.assert_array_equal(ey[exact], ty[exact])
    zero = ty == 0
    if not name.startswith("gelu"):  # torch's gelu cancels to 0 where the true value is not
        assert (np.abs(ey[zero]) <= np.finfo(dtype).smallest_subnormal).all(), (x[zero], ey[zero])
    both_zero = zero & (ey == 0)
    if name != "gelu":
        np.testing.assert_array_equal(np.signbit(ey[both_zero]), np.signbit(ty[both_zero]))


def test_float16_bfloat16_compute_in_float():
    x = torch.linspace(-20, 20, 1001)
    for dt in (torch.float16, torch.bfloat16):
        for name in ("exp", "sin", "log1p", "erf", "sigmoid"):
            t = getattr(torch, name)(x.to(dt).abs() if name == "log1p" else x.to(dt))
            e = getattr(ember, name)(ember.from_numpy((x.abs() if name == "log1p" else x).numpy()).to(getattr(ember, str(dt)[6:])))
            # one rounding to the half type from float results within an ulp or two
            np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=2 ** -7 if dt == torch.bfloat16 else 2 ** -10, atol=1e-6)


def test_non_contiguous_and_large_arguments():
    # every fourth column of a transposed matrix, mixing lanes that take the vectorized
    # path with ones beyond the reduction's range (libm), and in place
    base = np.concatenate([np.linspace(-30, 30, 600), np.array([1e30, -3e9, 262145.0, 7e5] * 25)])
    x = base.astype(np.float32).reshape(20, 35)
    tx, ex = torch.from_numpy(x).t()[::4], ember.from_numpy(x).t()[::4]
    for name in ("sin", "cos", "tan", "exp", "log1p", "erf"):
        np.testing.assert_allclose(getattr(ember, name)(ex).numpy(), getattr(torch, name)(tx).numpy(), rtol=3e-7,
                                   atol=1e-30)
    flat = np.tile(base.astype(np.float32), 3)
    ey = ember.from_numpy(flat.copy())
    ember.sin_(ey)
    np.testing.assert_allclose(ey.numpy(), torch.sin(torch.from_numpy(flat)).numpy(), rtol=3e-7, atol=1e-30)


def test_empty_and_errors():
    for name in ("exp", "log", "sin", "erf", "sigmoid"):
        assert getattr(ember, name)(ember.zeros(0, 3)).shape == (0, 3)
    with pytest.raises(RuntimeError):
        ember.sin_(ember.arange(3))  # an int64 result cannot hold sin, as torch refuses
    with pytest.raises(RuntimeError):
        torch.sin_(torch.arange(3))


def test_backward_formulas_use_fast_functions():
    x = np.linspace(-8, 8, 257).astype(np.float32)
    # gelu is left out: its float gradients (both approximations) still cancel in the tails
    for name, kw in (("sigmoid", {}), ("silu", {}), ("softplus", {})):
        tf = getattr(F, name) if name != "sigmoid" else torch.sigmoid
        ef = getattr(EF, name) if name != "sigmoid" else ember.sigmoid
        # against torch in float64: the float gradients cancel (gelu's Phi(x) + x phi(x))
        tx = torch.from_numpy(x.astype(np.float64)).requires_grad_()
        ex = ember.from_numpy(x).requires_grad_()
        tf(tx, **kw).sum().backward()
        ef(ex, **kw).sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=5e-7, err_msg=name)


def test_pow_tensor_exponent_special_grid():
    # every base of SPECIAL to every exponent of a grid of signs, parities, fractions,
    # large integers (odd below 2^24, even above) and non-finite values, as tensors of
    # both: NaN, infinities, zeros' signs exact, the rest within 1 ulp of torch's
    ys = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 2.5, 3.4, -3.4, 7.0, 1.7, 8388609.0, 8388610.0,
          16777217.0, 1e10, math.inf, -math.inf, math.nan]
    x32 = np.array(SPECIAL, dtype=np.float64).astype(np.float32)
    bx, by = np.meshgrid(x32, np.array(ys, dtype=np.float32))
    bx, by = bx.ravel().copy(), by.ravel().copy()
    ty = torch.pow(torch.from_numpy(bx), torch.from_numpy(by)).numpy()
    ey = ember.pow(ember.from_numpy(bx), ember.from_numpy(by)).numpy()
    np.testing.assert_array_equal(np.isnan(ey), np.isnan(ty))
    special = np.isinf(ty) | (ty == 0) | (np.abs(ty) == 1)
    np.testing.assert_array_equal(ey[special], ty[special])
    np.testing.assert_array_equal(np.signbit(ey[special]), np.signbit(ty[special]))
    finite = ~special & ~np.isnan(ty)
    assert (ulp_error(ey[finite], ty[finite].astype(np.float64), np.float32) <= 1).all()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("e", [2, 3, 0.5, -0.5, -1, -2, 2.0, 3.0, -1.0, -2.0])
def test_pow_special_exponents_as_torch(e, dtype):
    # torch computes these exponents as x*x, x*x*x, sqrt, rsqrt, 1/x, 1/(x*x): so does
    # ember, values and signs alike (pow(-0., .5) is -0., pow(-inf, .5) NaN), in place too
    with np.errstate(over="ignore"):
        x = np.array(SPECIAL + [3.7, -3.7, 1e20, -1e-20], dtype=np.float64)
    tx = torch.from_numpy(x).to(getattr(torch, dtype))
    ex = ember.from_numpy(x).to(getattr(ember, dtype))
    ty, ey = torch.pow(tx, e), ember.pow(ex, e)
    assert ey.dtype == getattr(ember, dtype)
    t64, e64 = ty.double().numpy(), ey.double().numpy()
    nan = np.isnan(t64)
    np.testing.assert_array_equal(np.isnan(e64), nan)
    special = np.isinf(t64) | (t64 == 0)  # exact, sign included
    np.testing.assert_array_equal(e64[special], t64[special])
    np.testing.assert_array_equal(np.signbit(e64[special]), np.signbit(t64[special]))
    rest = ~nan & ~special  # within an ulp (torch's own float sqrt is not always rounded right)
    eps = {"float32": 2.0 ** -23, "float64": 2.0 ** -52, "bfloat16": 2.0 ** -7}[dtype]
    assert (np.abs(e64[rest] - t64[rest]) <= eps * np.abs(t64[rest])).all()
    ex2 = ex.clone()
    assert ex2.pow_(e) is ex2
    np.testing.assert_array_equal(ex2.double().numpy(), e64)
    # a non-contiguous base and the gradient of the general formula
    tb = torch.tensor([[1.5, 2.0], [3.0, 0.25]], dtype=torch.float64, requires_grad=True)
    eb = ember.tensor([[1.5, 2.0], [3.0, 0.25]], dtype=ember.float64, requires_grad=True)
    torch.pow(tb.t(), e).sum().backward()
    ember.pow(eb.t(), e).sum().backward()
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


def test_pow_special_exponent_out_and_integer_base():
    # out= (which may cast) and integer bases keep the general path: torch's dtypes
    out = ember.empty(3, dtype=ember.float64)
    ember.pow(ember.tensor([4.0, 9.0, -1.0]), 0.5, out=out)
    np.testing.assert_array_equal(out.numpy(), torch.pow(torch.tensor([4.0, 9.0, -1.0]), 0.5).double().numpy())
    for e in (0.5, -1.0, 2, 3):
        ty = torch.pow(torch.tensor([2, 3]), e)
        ey = ember.pow(ember.tensor([2, 3]), e)
        assert str(ey.dtype) == str(ty.dtype).replace("torch", "ember")
        np.testing.assert_allclose(ey.double().numpy(), ty.double().numpy(), rtol=1e-7)


@pytest.mark.parametrize("e", [0, 0.0, 1, 1.0, 3, 2.5, 0.5, -1.0, -1.5])
def test_pow_number_exponent_gradient_as_torch(e):
    # the gradient of x ** v for a Python number v is v x^(v-1), computed with v - 1 as a
    # number (its special kernels); zero bases and negative ones give torch's inf/nan/0
    vals = [0.0, -0.0, 2.0, -2.0, 0.5, 3.0]
    tx = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    ex = ember.tensor(vals, dtype=ember.float64, requires_grad=True)
    g = [1.0, 2.0, -1.0, 0.5, 3.0, 1.0]
    torch.pow(tx, e).backward(torch.tensor(g, dtype=torch.float64))
    ember.pow(ex, e).backward(ember.tensor(g, dtype=ember.float64))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-12, equal_nan=True)
    # float32 with a float64 gradient flowing in through a cast, and double backward
    ty = torch.tensor([1.5, 2.0], requires_grad=True)
    ey = ember.tensor([1.5, 2.0], requires_grad=True)
    (tgrad,) = torch.autograd.grad(torch.pow(ty, e).sum(), ty, create_graph=True)
    (egrad,) = ember.autograd.grad(ember.pow(ey, e).sum(), ey, create_graph=True)
    np.testing.assert_allclose(egrad.detach().numpy(), tgrad.detach().numpy(), rtol=1e-6)
    if tgrad.requires_grad:
        (t2,) = torch.autograd.grad(tgrad.sum(), ty)
        (e2,) = ember.autograd.grad(egrad.sum(), ey)
        np.testing.assert_allclose(e2.numpy(), t2.numpy(), rtol=1e-6)


def _within_torch(ef, tf, ref64, x, name):
    ref = ref64(x.astype(np.float64))
    bound = ulp_error(tf(torch.from_numpy(x)).numpy(), ref, np.float32).max() + 1
    err = ulp_error(ef(ember.from_numpy(x)).numpy(), ref, np.float32)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, f"{name}: {err[worst]} ulp at {x[worst]!r} (bound {bound})"


def test_trig_tiers_and_hard_arguments():
    # float sin/cos run in float up to |x| = 4096, through the double reduction up to
    # 2^18, libm beyond (per block of 256): floats next to multiples of pi/2 (where the
    # reduction cancels) in each tier, the tiers' edges, and blocks that mix the tiers
    k = np.arange(1, 170000, 7, dtype=np.float64)
    near = (k * (np.pi / 2)).astype(np.float32)
    near = np.concatenate([near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(0))])
    edges = np.array([4095.9998, 4096.0, 4096.0005, 262143.98, 262144.0, 262144.03, 1e7], dtype=np.float32)
    rng = np.random.default_rng(0)
    mixed = rng.uniform(-5000, 5000, 4096).astype(np.float32)
    mixed[::300] = rng.uniform(-3e5, 3e5, mixed[::300].size)
    x = np.concatenate([near, -near, edges, -edges, mixed])
    for name in ("sin", "cos", "tan"):
        ef, tf, ref64, _ = CASES[name]
        _within_torch(ef, tf, ref64, x, name)
        if name != "cos":  # odd functions, bit for bit
            np.testing.assert_array_equal(ef(ember.from_numpy(-x)).numpy(), -ef(ember.from_numpy(x)).numpy())
    np.testing.assert_array_equal(ember.cos(ember.from_numpy(-x)).numpy(), ember.cos(ember.from_numpy(x)).numpy())


def test_log_reduction_edges():
    # m = bits(x) - bits(sqrt(1/2)) splits at sqrt(1/2) * 2^e: floats on both sides of
    # every such point, subnormals among them, and powers of two
    e = np.arange(-149, 128, dtype=np.float64)
    centre = np.float32(np.sqrt(0.5)) * 2.0 ** e
    with np.errstate(over="ignore"):
        c = centre.astype(np.float32)
    c = c[np.isfinite(c) & (c > 0)]
    x = np.concatenate([c, np.nextafter(c, np.float32(np.inf)), np.nextafter(c, np.float32(0)),
                        (2.0 ** e[e < 128]).astype(np.float32)])
    x = x[x > 0]
    for name in ("log", "log1p"):
        ef, tf, ref64, _ = CASES[name]
        _within_torch(ef, tf, ref64, x, name)


def test_pow_float_random_pairs():
    # float x^y through log_of_float and exp_to_float (kernels/vec_math.h): random bases
    # over the whole float range and exponents of every scale, against float64
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.integers(0, 0x7F800000, 20000, dtype=np.uint32).view(np.float32),
                        rng.uniform(0, 8, 20000).astype(np.float32)])
    y = (rng.uniform(-1, 1, x.size) * 2.0 ** rng.integers(-6, 8, x.size)).astype(np.float32)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    ty = torch.pow(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    ey = ember.pow(ember.from_numpy(x), ember.from_numpy(y)).numpy()
    bound = ulp_error(ty, ref, np.float32).max() + 1
    err = ulp_error(ey, ref, np.float32)
    assert err.max() <= min(bound, 1.0), (err.max(), x[np.argmax(err)], y[np.argmax(err)])
