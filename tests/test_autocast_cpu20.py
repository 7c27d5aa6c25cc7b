"""CPU autocast (issue 20): each op of torch's CPU autocast lists run under
torch.autocast("cpu") and ember.autocast("cpu") gives a result of the same dtype; grads
come back in the parameters' dtype; nesting, enabled=False, the cast cache and
thread-locality behave as torch's. bfloat16/float16 products: one float32 product,
rounded once."""
import threading
import warnings

import numpy as np
import pytest
import torch

import ember

rng = np.random.default_rng(20)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def spd(n, batch=()):
    a = r(*batch, n, n)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def F(M):
    return M.nn.functional


# (name, fn(M, *tensors), arrays, input dtype name)
LOWER = [
    ("conv1d", lambda M, x, w, b: F(M).conv1d(x, w, b), [r(1, 2, 6), r(3, 2, 2), r(3)]),
    ("conv2d", lambda M, x, w: F(M).conv2d(x, w, padding=1), [r(1, 2, 4, 4), r(3, 2, 3, 3)]),
    ("conv3d", lambda M, x, w: F(M).conv3d(x, w), [r(1, 2, 3, 3, 3), r(2, 2, 2, 2, 2)]),
    ("conv_transpose1d", lambda M, x, w: F(M).conv_transpose1d(x, w), [r(1, 2, 5), r(2, 3, 2)]),
    ("conv_transpose2d", lambda M, x, w: F(M).conv_transpose2d(x, w), [r(1, 2, 3, 3), r(2, 3, 2, 2)]),
    ("conv_transpose3d", lambda M, x, w: F(M).conv_transpose3d(x, w), [r(1, 2, 2, 2, 2), r(2, 1, 2, 2, 2)]),
    ("conv_tbc", lambda M, x, w, b: M.conv_tbc(x, w, b), [r(5, 1, 2), r(2, 2, 3), r(3)]),
    ("bmm", lambda M, a, b: M.bmm(a, b), [r(2, 3, 4), r(2, 4, 5)]),
    ("mm", lambda M, a, b: M.mm(a, b), [r(3, 4), r(4, 5)]),
    ("Tensor.mm", lambda M, a, b: a.mm(b), [r(3, 4), r(4, 5)]),
    ("__matmul__", lambda M, a, b: a @ b, [r(2, 3, 4), r(4, 5)]),
    ("matmul", lambda M, a, b: M.matmul(a, b), [r(3, 4), r(4)]),
    ("linalg_vecdot", lambda M, a, b: M.linalg.vecdot(a, b), [r(3, 4), r(3, 4)]),
    ("baddbmm", lambda M, c, a, b: M.baddbmm(c, a, b), [r(2, 3, 5), r(2, 3, 4), r(2, 4, 5)]),
    ("addmm", lambda M, c, a, b: M.addmm(c, a, b, beta=0.5), [r(3, 5), r(3, 4), r(4, 5)]),
    ("addbmm", lambda M, c, a, b: M.addbmm(c, a, b), [r(3, 5), r(2, 3, 4), r(2, 4, 5)]),
    ("linear", lambda M, x, w, b: F(M).linear(x, w, b), [r(2, 3, 4), r(5, 4), r(5)]),
    ("prelu", lambda M, x, w: F(M).prelu(x, w), [r(2, 3, 4), r(3)]),
    ("scaled_dot_product_attention", lambda M, q, k, v: F(M).scaled_dot_product_attention(q, k, v),
     [r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 4)]),
]


def _pos(*shape):
    return np.abs(r(*shape)) + 0.1


FP32 = [
    ("avg_pool3d", lambda M, x: F(M).avg_pool3d(x, 2), [r(1, 1, 2, 2, 2)]),
    ("adaptive_avg_pool3d", lambda M, x: F(M).adaptive_avg_pool3d(x, 1), [r(1, 1, 2, 2, 2)]),
    ("adaptive_max_pool3d", lambda M, x: F(M).adaptive_max_pool3d(x, 1), [r(1, 1, 2, 2, 2)]),
    ("max_pool3d", lambda M, x: F(M).max_pool3d(x, 2), [r(1, 1, 2, 2, 2)]),
    ("max_unpool2d", lambda M, x: F(M).max_unpool2d(x, M.tensor([[[[0, 3]]]]), 2), [r(1, 1, 1, 2)]),
    ("fractional_max_pool2d", lambda M, x: F(M).fractional_max_pool2d(x, 2, output_size=2,
                                                                        _random_samples=M.full((1, 1, 2), 0.5)),
     [r(1, 1, 4, 4)]),
    ("binary_cross_entropy", lambda M, x, y: F(M).binary_cross_entropy(M.sigmoid(x), M.sigmoid(y)), [r(4), r(4)]),
    ("binary_cross_entropy_with_logits", lambda M, x, y: F(M).binary_cross_entropy_with_logits(x, M.sigmoid(y)),
     [r(4), r(4)]),
    ("mse_loss", lambda M, x, y: F(M).mse_loss(x, y), [r(4), r(4)]),
    ("l1_loss", lambda M, x, y: F(M).l1_loss(x, y), [r(4), r(4)]),
    ("smooth_l1_loss", lambda M, x, y: F(M).smooth_l1_loss(x, y), [r(4), r(4)]),
    ("huber_loss", lambda M, x, y: F(M).huber_loss(x, y), [r(4), r(4)]),
    ("soft_margin_loss", lambda M, x, y: F(M).soft_margin_loss(x, y), [r(4), r(4)]),
    ("kl_div", lambda M, x, y: F(M).kl_div(x, y, reduction="batchmean"), [r(2, 3), _pos(2, 3)]),
    ("nll_loss", lambda M, x: F(M).nll_loss(x, M.tensor([0, 2])), [r(2, 3)]),
    ("cross_entropy", lambda M, x, w: F(M).cross_entropy(x, M.tensor([0, 2]), weight=w), [r(2, 3), _pos(3)]),
    ("multi_margin_loss", lambda M, x: F(M).multi_margin_loss(x, M.tensor([0, 2])), [r(2, 3)]),
    ("multilabel_margin_loss", lambda M, x: F(M).multilabel_margin_loss(x, M.tensor([[0, -1, 1], [2, -1, 0]])),
     [r(2, 3)]),
    ("hinge_embedding_loss", lambda M, x: F(M).hinge_embedding_loss(x, M.tensor([1.0, -1.0, 1.0])), [r(3)]),
    ("poisson_nll_loss", lambda M, x, y: F(M).poisson_nll_loss(x, y), [r(4), _pos(4)]),
    ("margin_ranking_loss", lambda M, a, b: F(M).margin_ranking_loss(a, b, M.tensor([1.0, -1.0, 1.0])),
     [r(3), r(3)]),
    ("cosine_embedding_loss", lambda M, a, b: F(M).cosine_embedding_loss(a, b, M.tensor([1.0, -1.0])),
     [r(2, 3), r(2, 3)]),
    ("triplet_margin_loss", lambda M, a, p, n: F(M).triplet_margin_loss(a, p, n), [r(2, 3), r(2, 3), r(2, 3)]),
    ("ctc_loss", lambda M, x: F(M).ctc_loss(x.log_softmax(2), M.tensor([[1, 2]]), M.tensor([4]), M.tensor([2])),
     [r(4, 1, 3)]),
    ("cdist", lambda M, a, b: M.cdist(a, b), [r(3, 2), r(4, 2)]),
    ("prod", lambda M, x: M.prod(x), [r(4)]),
    ("prod.dim_int", lambda M, x: x.prod(1), [r(2, 3)]),
    ("quantile", lambda M, x: M.quantile(x, 0.3), [r(5)]),
    ("nanquantile", lambda M, x: M.nanquantile(x, 0.3), [r(5)]),
    ("polar", lambda M, a, t: M.polar(a, t), [_pos(3), r(3)]),
    ("view_as_complex", lambda M, x: M.view_as_complex(x), [r(3, 2)]),
    ("trace", lambda M, x: M.trace(x), [r(3, 3)]),
    ("stft", lambda M, x: M.stft(x, 4, return_complex=True), [r(16)]),
    ("grid_sample", lambda M, x, g: F(M).grid_sample(x, g.tanh(), align_corners=False),
     [r(1, 1, 3, 3), r(1, 2, 2, 2)]),
    ("cholesky", lambda M, a: M.cholesky(a), [spd(3)]),
    ("linalg.cholesky", lambda M, a: M.linalg.cholesky(a), [spd(3)]),
    ("linalg.cholesky_ex", lambda M, a: M.linalg.cholesky_ex(a)[0], [spd(3)]),
    ("cholesky_inverse", lambda M, a: M.cholesky_inverse(a.tril() + 3 * M.eye(3)), [r(3, 3)]),
    ("cholesky_solve", lambda M, b, a: M.cholesky_solve(b, a.tril() + 3 * M.eye(3)), [r(3, 2), r(3, 3)]),
    ("inverse", lambda M, a: M.inverse(a), [spd(3)]),
    ("linalg.inv", lambda M, a: M.linalg.inv(a), [spd(3)]),
    ("linalg.inv_ex", lambda M, a: M.linalg.inv_ex(a)[0], [spd(3)]),
    ("pinverse", lambda M, a: M.pinverse(a), [spd(3)]),
    ("linalg.solve", lambda M, a, b: M.linalg.solve(a, b), [spd(3), r(3, 2)]),
    ("linalg.svdvals", lambda M, a: M.linalg.svdvals(a), [spd(3)]),
    ("linalg.svd", lambda M, a: M.linalg.svd(a)[1], [spd(3)]),
    ("svd", lambda M, a: M.svd(a)[1], [spd(3)]),
    ("linalg.eigvals", lambda M, a: M.linalg.eigvals(a), [spd(3)]),
    ("linalg.eig", lambda M, a: M.linalg.eig(a)[0], [spd(3)]),
    ("linalg.eigvalsh", lambda M, a: M.linalg.eigvalsh(a), [spd(3)]),
    ("linalg.eigh", lambda M, a: M.linalg.eigh(a)[0], [spd(3)]),
    ("linalg.qr", lambda M, a: M.linalg.qr(a)[1], [r(3, 3)]),
    ("qr", lambda M, a: M.qr(a)[1], [r(3, 3)]),
    ("geqrf", lambda M, a: M.geqrf(a)[0], [r(3, 3)]),
    ("orgqr", lambda M, a, t: M.orgqr(a, t), [r(3, 3), r(2)]),
    ("ormqr", lambda M, a, t, c: M.ormqr(a, t, c), [r(3, 3), r(3), r(3, 2)]),
    ("linalg.householder_product", lambda M, a, t: M.linalg.householder_product(a, t), [r(3, 3), r(2)]),
    ("linalg.cond", lambda M, a: M.linalg.cond(a), [spd(3)]),
    ("linalg.matrix_rank", lambda M, a: M.linalg.matrix_rank(a, atol=0.5), [spd(3)]),
    ("linalg.tensorinv", lambda M, a: M.linalg.tensorinv(a.reshape(3, 3), ind=1), [spd(3)]),
    ("linalg.tensorsolve", lambda M, a, b: M.linalg.tensorsolve(a, b), [spd(3), r(3)]),
    ("linalg.lstsq", lambda M, a, b: M.linalg.lstsq(a, b)[0], [spd(3), r(3, 2)]),
    ("triangular_solve", lambda M, b, a: M.triangular_solve(b, a.triu() + 3 * M.eye(3))[0], [r(3, 2), r(3, 3)]),
    ("lu_solve", lambda M, b, a: M.lu_solve(b, *M.linalg.lu_factor(a.float())), [r(3, 2), spd(3)]),
    ("fft.fft", lambda M, x: M.fft.fft(x), [r(8)]),
    ("fft.ifft", lambda M, x: M.fft.ifft(x), [r(8)]),
    ("fft.fft2", lambda M, x: M.fft.fft2(x), [r(4, 4)]),
    ("fft.ifft2", lambda M, x: M.fft.ifft2(x), [r(4, 4)]),
    ("fft.fftn", lambda M, x: M.fft.fftn(x), [r(4, 4)]),
    ("fft.ifftn", lambda M, x: M.fft.ifftn(x), [r(4, 4)]),
    ("fft.rfft", lambda M, x: M.fft.rfft(x), [r(8)]),
    ("fft.irfft", lambda M, x: M.fft.irfft(x), [r(8)]),
    ("fft.rfft2", lambda M, x: M.fft.rfft2(x), [r(4, 4)]),
    ("fft.irfft2", lambda M, x: M.fft.irfft2(x), [r(4, 4)]),
    ("fft.rfftn", lambda M, x: M.fft.rfftn(x), [r(4, 4)]),
    ("fft.irfftn", lambda M, x: M.fft.irfftn(x), [r(4, 4)]),
    ("fft.hfft", lambda M, x: M.fft.hfft(x), [r(8)]),
    ("fft.ihfft", lambda M, x: M.fft.ihfft(x), [r(8)]),
]

PROMOTE = [
    ("cat", lambda M, a, b: M.cat([a, b.float()]), [r(2, 3), r(2, 3)]),
    ("stack", lambda M, a, b: M.stack([a.float(), b]), [r(2, 3), r(2, 3)]),
    ("index_copy", lambda M, a, s: a.index_copy(0, M.tensor([1, 0]), s.float()), [r(3, 2), r(2, 2)]),
    ("cat float64", lambda M, a, b: M.cat([a, b.double()]), [r(2, 3), r(2, 3)]),
]

UNLISTED = [
    ("add", lambda M, a, b: a + b, [r(3), r(3)]),
    ("relu", lambda M, a: F(M).relu(a), [r(3)]),
    ("softmax", lambda M, a: a.softmax(-1), [r(3)]),
]


def _first(out):
    while isinstance(out, (tuple, list)):
        out = out[0]
    return out


def _run(M, fn, arrays, dtype_name, **autocast_kwargs):
    tensors = [M.tensor(a).to(getattr(M, dtype_name)) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with M.autocast("cpu", **autocast_kwargs):
            out = _first(fn(M, *tensors))
    return out


def _compare(fn, arrays, dtype_name, **kw):
    want = _run(torch, fn, arrays, dtype_name, **kw)
    got = _run(ember, fn, arrays, dtype_name, **kw)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    tol = 0.1 if want.dtype in (torch.bfloat16, torch.float16) else 2e-2
    np.testing.assert_allclose(got.to(ember.complex64 if got.is_complex() else ember.float32).resolve_conj().numpy(),
                               want.to(torch.complex64 if want.is_complex() else torch.float32).resolve_conj().numpy(),
                               rtol=tol, atol=tol)
    return got.dtype


@pytest.mark.parametrize("name, fn, arrays", LOWER, ids=[c[0] for c in LOWER])
def test_lower_precision_list(name, fn, arrays):
    assert _compare(fn, arrays, "float32") == ember.bfloat16


@pytest.mark.parametrize("name, fn, arrays", LOWER[:3] + LOWER[7:11], ids=[c[0] for c in LOWER[:3] + LOWER[7:11]])
def test_lower_precision_float16(name, fn, arrays):
    got = _run(ember, fn, arrays, "float32", dtype=ember.float16)
    want = _run(torch, fn, arrays, "float32", dtype=torch.float16)
    assert got.dtype == ember.float16 and want.dtype == torch.float16


@pytest.mark.parametrize("name, fn, arrays", FP32, ids=[c[0] for c in FP32])
def test_fp32_list(name, fn, arrays):
    assert _compare(fn, arrays, "bfloat16") in (ember.float32, ember.complex64, ember.int64)  # int64: matrix_rank


@pytest.mark.parametrize("name, fn, arrays", PROMOTE + UNLISTED, ids=[c[0] for c in PROMOTE + UNLISTED])
def test_promote_and_unlisted(name, fn, arrays):
    _compare(fn, arrays, "bfloat16")
    _compare(fn, arrays, "float32")


def test_float64_and_integers_stay():
    for M in (ember, torch):
        a = M.ones(2, 2, dtype=M.float64)
        with M.autocast("cpu"):
            assert (a @ a).dtype == M.float64
            assert M.mm(M.ones(2, 2, dtype=M.int64), M.ones(2, 2, dtype=M.int64)).dtype == M.int64


def test_out_and_inplace_not_cast():
    for M in (ember, torch):
        a, b, o = M.ones(2, 2), M.ones(2, 2), M.empty(2, 2)
        with M.autocast("cpu"):
            assert M.mm(a, b, out=o) is o and o.dtype == M.float32
            c = M.zeros(2, 2)
            c.addmm_(a, b)
            assert c.dtype == M.float32 and c[0, 0].item() == 2


def test_grads_in_parameter_dtype():
    def step(M):
        M.manual_seed(0)
        lin = M.nn.Linear(4, 3)
        with M.no_grad():
            lin.weight.copy_(M.tensor(r0w))
            lin.bias.copy_(M.tensor(r0b))
        x = M.tensor(r0x)
        with M.autocast("cpu"):
            y = lin(x)
            loss = F(M).cross_entropy(y, M.tensor([0, 2]))
        assert y.dtype == M.bfloat16 and loss.dtype == M.float32
        loss.backward()
        return lin.weight.grad, lin.bias.grad, loss

    r0w, r0b, r0x = r(3, 4), r(3), r(2, 4)
    ew, eb, el = step(ember)
    tw, tb, tl = step(torch)
    assert ew.dtype == ember.float32 and eb.dtype == ember.float32
    np.testing.assert_allclose(ew.numpy(), tw.numpy(), rtol=0.05, atol=0.02)
    np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=0.05, atol=0.02)
    np.testing.assert_allclose(el.item(), tl.item(), rtol=0.02)


def test_nesting_and_state():
    for M in (ember, torch):
        a = M.ones(2, 2)
        assert not M.is_autocast_enabled("cpu")
        with M.autocast("cpu"):
            assert M.is_autocast_enabled("cpu") and M.get_autocast_dtype("cpu") == M.bfloat16
            with M.autocast("cpu", enabled=False):
                assert not M.is_autocast_enabled("cpu")
                assert (a @ a).dtype == M.float32
                with M.autocast("cpu", dtype=M.float16):
                    assert (a @ a).dtype == M.float16
            assert (a @ a).dtype == M.bfloat16
        assert not M.is_autocast_enabled("cpu") and (a @ a).dtype == M.float32
        assert M.get_autocast_dtype("cpu") == M.bfloat16

        @M.autocast("cpu")
        def f(x):
            return x @ x

        assert f(a).dtype == M.bfloat16 and (a @ a).dtype == M.float32


def test_cache():
    # torch caches the cast of a float32 leaf that requires grad within the outermost block
    for M in (ember, torch):
        w = M.ones(2, 2, requires_grad=True)
        x = M.ones(2, 2)
        for cache in (True, False):
            with M.autocast("cpu", cache_enabled=cache):
                y1, y2 = M.mm(x, w), M.mm(x, w)
                n1, n2 = y1.grad_fn.next_functions[1][0], y2.grad_fn.next_functions[1][0]
                assert (n1 is n2) == cache
                with M.autocast("cpu"):  # an inner block reuses the outer block's cache
                    n3 = M.mm(x, w).grad_fn.next_functions[1][0]
                    assert (n3 is n1) == cache
            with M.autocast("cpu", cache_enabled=cache):  # a new outermost block: a new cast
                assert M.mm(x, w).grad_fn.next_functions[1][0] is not n1
        (y1 + y2).sum().backward()
        assert w.grad.dtype == M.float32 and w.grad[0, 0].item() == 4


def test_thread_local():
    for M in (ember, torch):
        seen = {}

        def other():
            a = M.ones(2, 2)
            seen["enabled"] = M.is_autocast_enabled("cpu")
            seen["dtype"] = (a @ a).dtype

        with M.autocast("cpu"):
            t = threading.Thread(target=other)
            t.start()
            t.join()
            assert (M.ones(2, 2) @ M.ones(2, 2)).dtype == M.bfloat16
        assert seen == {"enabled": False, "dtype": M.float32}


def test_cpu_amp_and_custom_fwd():
    with pytest.warns(FutureWarning):
        ac = ember.cpu.amp.autocast()
    with ac:
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.bfloat16

    for M in (ember, torch):
        class Sq(M.autograd.Function):
            @staticmethod
            @M.amp.custom_fwd(device_type="cpu", cast_inputs=M.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x @ x

            @staticmethod
            @M.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g @ x.T + x.T @ g

        x = M.ones(2, 2, dtype=M.bfloat16, requires_grad=True)
        with M.autocast("cpu"):
            y = Sq.apply(x)
        assert y.dtype == M.float32
        y.sum().backward()
        assert x.grad.dtype == M.bfloat16


# ---- bfloat16/float16 products: both operands to float32, one sgemm, one rounding


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_products_round_one_float32_product(dtype):
    a, b, c = r(2, 33, 40), r(2, 40, 17), r(33, 17)
    ed = getattr(ember, dtype)
    A, B, C = (ember.tensor(v).to(ed) for v in (a, b, c))
    for got, want in [
        (A[0] @ B[0], A[0].float() @ B[0].float()),
        (A.bmm(B), A.float().bmm(B.float())),
        (A[0].T.contiguous().T @ B[1], A[0].float() @ B[1].float()),  # a transposed operand
        (A @ B[0], A.float() @ B[0].float()),  # broadcast batch
        (ember.addmm(C, A[0], B[0], beta=0.5, alpha=2), ember.addmm(C.float(), A[0].float(), B[0].float(), beta=0.5,
                                                                       alpha=2)),
    ]:
        assert got.dtype == ed
        np.testing.assert_array_equal(got.view(ember.int16).numpy(), want.to(ed).view(ember.int16).numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_products_match_torch_bitwise(dtype):
    # small integers: every partial sum is exact in float32, so any float32 accumulation
    # agrees; the rounding (ties to even, overflow to inf, NaN kept) is what is compared
    a = rng.integers(-8, 9, (16, 24)).astype(np.float32)
    b = rng.integers(-8, 9, (24, 12)).astype(np.float32)
    a[0, 0] = np.nan
    if dtype == "float16":
        b[:, 0] = 2048  # sums past 2048 round to even in float16
    else:
        b[:, 0] = 256 + 1  # 257 is not a bfloat16: rounds to 256 on the way in, as torch's
    got = ember.tensor(a).to(getattr(ember, dtype)) @ ember.tensor(b).to(getattr(ember, dtype))
    want = torch.tensor(a).to(getattr(torch, dtype)) @ torch.tensor(b).to(getattr(torch, dtype))
    g, w = got.float().numpy(), want.float().numpy()
    assert np.array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(g[~np.isnan(g)], w[~np.isnan(w)])
    empty = ember.ones(0, 3, dtype=getattr(ember, dtype)) @ ember.ones(3, 2, dtype=getattr(ember, dtype))
    assert empty.shape == (0, 2)
    zero_k = ember.ones(2, 0, dtype=getattr(ember, dtype)) @ ember.ones(0, 2, dtype=getattr(ember, dtype))
    assert zero_k.dtype == getattr(ember, dtype) and zero_k.float().sum().item() == 0


# ---- float16/bfloat16 elementwise maps: converted in blocks (Note [Half types in blocks])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_elementwise_bitwise(dtype):
    a = r(1000) * 300
    b = r(1000) * 300
    a[:6] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0]
    b[6:9] = [np.nan, 1e-30, 65504]
    et, tt = getattr(ember, dtype), getattr(torch, dtype)
    A, B = ember.tensor(a).to(et), ember.tensor(b).to(et)
    TA, TB = torch.tensor(a).to(tt), torch.tensor(b).to(tt)
    cases = [(lambda M, x, y: x + y), (lambda M, x, y: x * y), (lambda M, x, y: x / y),
             (lambda M, x, y: x - 2.5), (lambda M, x, y: 3 * y), (lambda M, x, y: x[::2] + y[1::2]),  # strided
             (lambda M, x, y: x.reshape(10, 100) + y[:100]), (lambda M, x, y: x.abs().sqrt()),
             (lambda M, x, y: -x), (lambda M, x, y: x[:0] + y[:0])]
    for fn in cases:
        got, want = fn(ember, A, B), fn(torch, TA, TB)
        assert got.dtype == et
        g = got.float().numpy()
        w = want.float().numpy()
        assert np.array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(g[~np.isnan(g)], w[~np.isnan(w)])
        assert np.array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(w[~np.isnan(w)]))
