"""bfloat16 products on bfloat16 instructions (issue 20, kernels/gemm_bf16.*): every path
this CPU can run (the emulated AVX512-BF16 and AMX drivers and the float32 conversion
everywhere, the hardware ones where /proc/cpuinfo lists their flags) against torch's
bfloat16 products and a float64 reference, over shapes that are not multiples of the
pair, tile and block sizes, transposed, strided and expanded operands, addmm's alpha and
beta, out=, and mm's backward."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import pytest

import ember
from helpers import torch


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


FLAGS = cpu_flags()
HAS_AVX512_BF16 = "avx512_bf16" in FLAGS
HAS_AMX = "amx_bf16" in FLAGS and "amx_tile" in FLAGS
PATHS = [
    "convert",
    "emulated",
    "emulated_amx",
    pytest.param("avx512_bf16", marks=pytest.mark.skipif(not HAS_AVX512_BF16, reason="no avx512_bf16 in cpuinfo")),
    pytest.param("amx", marks=pytest.mark.skipif(not HAS_AMX, reason="no amx_bf16 in cpuinfo")),
]


@pytest.fixture(params=PATHS)
def path(request):
    ember._C._set_bf16_gemm_path(request.param)
    yield request.param
    ember._C._set_bf16_gemm_path("auto")


def pair(shape, seed=0):
    """The same bfloat16 values as (ember, torch) tensors."""
    t = torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=torch.float32).bfloat16()
    return ember.tensor(t.float().numpy()).bfloat16(), t


def array(e):
    return np.asarray(e.float().numpy(), dtype=np.float64)


def close(e, t, scale, k):
    """e within one bfloat16 ulp (both round a float32 sum once; summed in another order,
    the two sums may round to neighbours) of torch's t, plus float32 summation error over
    k terms relative to scale (the sum of |products|); shape and dtype equal."""
    assert tuple(e.shape) == tuple(t.shape) and e.dtype == ember.bfloat16
    want = t.double().numpy()
    tol = 2.0 ** -7 * np.abs(want) + (k + 2) * 2.0 ** -22 * scale + 1e-30
    assert np.all(np.abs(array(e) - want) <= tol)


def abs_product(ta, tb):
    return (ta.double().abs() @ tb.double().abs()).numpy()


SHAPES = [(1, 1, 1), (15, 17, 33), (17, 33, 15), (33, 65, 130), (130, 1, 65), (2, 300, 3), (100, 40, 260)]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_mm_matches_torch_and_float64(path, m, k, n):
    ea, ta = pair((m, k), 1)
    eb, tb = pair((k, n), 2)
    got = ember.mm(ea, eb)
    close(got, torch.mm(ta, tb), abs_product(ta, tb), k)
    exact = ta.double() @ tb.double()
    tol = 2.0 ** -8 * exact.abs().numpy() + (k + 2) * 2.0 ** -22 * abs_product(ta, tb)
    assert np.all(np.abs(array(got) - exact.numpy()) <= tol)


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_mm_noncontiguous(path, layout):
    m, k, n = 19, 37, 45
    if layout == "transposed":
        ea, ta = pair((k, m), 3)
        eb, tb = pair((n, k), 4)
        ea, ta, eb, tb = ea.t(), ta.t(), eb.t(), tb.t()
    else:
        ea, ta = pair((m, 2 * k), 3)
        eb, tb = pair((2 * k, 3 * n), 4)
        ea, ta, eb, tb = ea[:, ::2], ta[:, ::2], eb[::2, ::3], tb[::2, ::3]
    close(ember.matmul(ea, eb), torch.matmul(ta, tb), abs_product(ta, tb), k)


def test_bmm_and_broadcast_batches(path):
    ea, ta = pair((3, 17, 33), 5)
    eb, tb = pair((3, 33, 20), 6)
    close(ember.bmm(ea, eb), torch.bmm(ta, tb), abs_product(ta, tb), 33)
    # expanded (stride 0) batch on either side, and matmul's broadcast of a matrix
    ec, tc = pair((1, 33, 20), 7)
    close(ember.bmm(ea, ec.expand(3, 33, 20)), torch.bmm(ta, tc.expand(3, 33, 20)), abs_product(ta, tc), 33)
    ed, td = pair((33, 20), 8)
    close(ember.matmul(ea, ed), torch.matmul(ta, td), abs_product(ta, td), 33)
    ee, te = pair((1, 5, 33), 9)
    close(ember.matmul(ee.expand(3, 5, 33), eb), torch.matmul(te.expand(3, 5, 33), tb), abs_product(te, tb), 33)


@pytest.mark.parametrize("alpha,beta", [(1, 1), (0.5, -2.0), (2.0, 0)])
def test_addmm_alpha_beta_and_out(path, alpha, beta):
    ec, tc = pair((18, 35), 10)
    ea, ta = pair((18, 40), 11)
    eb, tb = pair((40, 35), 12)
    scale = abs(alpha) * abs_product(ta, tb) + abs(beta) * tc.double().abs().numpy()
    want = torch.addmm(tc, ta, tb, alpha=alpha, beta=beta)
    close(ember.addmm(ec, ea, eb, alpha=alpha, beta=beta), want, scale, 40)
    out = ember.empty((18, 35), dtype=ember.bfloat16)
    ember.addmm(ec, ea, eb, alpha=alpha, beta=beta, out=out)
    close(out, want, scale, 40)
    eo = ember.empty((18, 35), dtype=ember.bfloat16)
    ember.mm(ea, eb, out=eo)
    close(eo, torch.mm(ta, tb), abs_product(ta, tb), 40)
    # beta == 0 ignores self's NaNs
    if beta == 0:
        nan = ember.full((18, 35), float("nan"), dtype=ember.bfloat16)
        assert not np.isnan(array(ember.addmm(nan, ea, eb, alpha=alpha, beta=0))).any()


def test_linear_and_baddbmm(path):
    ex, tx = pair((4, 7, 33), 13)
    ew, tw = pair((17, 33), 14)
    eb, tb = pair((17,), 15)
    got = ember.nn.functional.linear(ex, ew, eb)
    want = torch.nn.functional.linear(tx, tw, tb)
    scale = (tx.double().abs() @ tw.double().abs().t() + tb.double().abs()).numpy()
    close(got, want, scale, 33)
    ec, tc = pair((4, 7, 17), 16)
    ey, ty = pair((4, 33, 17), 17)
    close(ember.baddbmm(ec, ex, ey, alpha=0.5, beta=0.25), torch.baddbmm(tc, tx, ty, alpha=0.5, beta=0.25),
          0.5 * abs_product(tx, ty) + 0.25 * tc.double().abs().numpy(), 33)


def test_empty_and_k_zero(path):
    for m, k, n in [(0, 5, 3), (4, 0, 3), (4, 5, 0), (0, 0, 0)]:
        ea, ta = pair((m, k), 18)
        eb, tb = pair((k, n), 19)
        got = ember.mm(ea, eb)
        assert tuple(got.shape) == (m, n) and got.dtype == ember.bfloat16
        np.testing.assert_array_equal(array(got), torch.mm(ta, tb).double().numpy())
    ec, tc = pair((4, 3), 20)
    got = ember.addmm(ec, ember.empty((4, 0), dtype=ember.bfloat16), ember.empty((0, 3), dtype=ember.bfloat16), beta=2)
    np.testing.assert_array_equal(array(got), (2 * tc).double().numpy())


def test_mm_backward(path):
    ea, ta = pair((9, 33), 21)
    eb, tb = pair((33, 18), 22)
    ea.requires_grad_(True)
    eb.requires_grad_(True)
    ta.requires_grad_(True)
    tb.requires_grad_(True)
    eg, tg = pair((9, 18), 23)
    (ember.mm(ea, eb) * eg).sum().backward()
    (torch.mm(ta, tb) * tg).sum().backward()
    close(ea.grad, ta.grad, (tg.double().abs() @ tb.detach().double().abs().t()).numpy(), 18)
    close(eb.grad, tb.grad, (ta.detach().double().abs().t() @ tg.double().abs()).numpy(), 9)


def test_float16_keeps_the_conversion(path):
    a = np.random.default_rng(24).standard_normal((17, 33)).astype(np.float16)
    b = np.random.default_rng(25).standard_normal((33, 9)).astype(np.float16)
    got = ember.mm(ember.tensor(a), ember.tensor(b))
    want = torch.mm(torch.tensor(a), torch.tensor(b))
    assert got.dtype == ember.float16
    np.testing.assert_allclose(np.asarray(got.float().numpy()), want.float().numpy(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("emulated", ["emulated", "emulated_amx"])
def test_emulated_equals_convert_up_to_summation_order(emulated, threads):
    ea, ta = pair((130, 300), 26)  # two k blocks, two row blocks, a partial panel
    eb, tb = pair((300, 290), 27)
    ember._C._set_bf16_gemm_path("convert")
    try:
        want = array(ember.mm(ea, eb))
        ember._C._set_bf16_gemm_path(emulated)
        got = array(ember.mm(ea, eb))
    finally:
        ember._C._set_bf16_gemm_path("auto")
    # float32 sums in another order round to the same bfloat16 or a neighbour
    assert np.all(np.abs(got - want) <= 2.0 ** -7 * np.abs(want) + 300 * 2.0 ** -22 * abs_product(ta, tb))
    assert np.mean(got == want) > 0.95


def test_path_choice_and_errors():
    try:
        ember._C._set_bf16_gemm_path("auto")
        if "EMBER_BF16_GEMM" not in os.environ:
            expected = "amx" if HAS_AMX else "avx512_bf16" if HAS_AVX512_BF16 else "convert"
            assert ember._C._bf16_gemm_path() == expected
        with pytest.raises(ValueError, match="expected one of"):
            ember._C._set_bf16_gemm_path("sse2")
        a = ember.ones((3, 3), dtype=ember.bfloat16)
        for name, has in [("avx512_bf16", HAS_AVX512_BF16), ("amx", HAS_AMX)]:
            ember._C._set_bf16_gemm_path(name)
            assert ember._C._bf16_gemm_path() == name
            if not has:
                with pytest.raises(RuntimeError, match=f"the {name} path was forced"):
                    ember.mm(a, a)
                ember.mm(a.float(), a.float())  # other dtypes are unaffected
    finally:
        ember._C._set_bf16_gemm_path("auto")


def test_environment_variable_chooses_the_path():
    import subprocess

    code = ("import ember; a = ember.ones((3, 5), dtype=ember.bfloat16); print(ember._C._bf16_gemm_path());"
            "\ntry:\n    print(float((a @ a.t())[0, 0]))\nexcept Exception as e:\n    print(type(e).__name__)")
    env = dict(os.environ, EMBER_BF16_GEMM="emulated_amx")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["emulated_amx", "5.0"]
    env["EMBER_BF16_GEMM"] = "sse2"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["invalid", "ValueError"]
