"""Matrix products and ember.linalg against torch: values (tolerance by dtype), dtypes,
shapes, every matmul rank combination with batch broadcasting, non-contiguous inputs
(transposed, sliced), empty and 1x1 inputs, the integer/half fallback kernel, and the
error cases with torch's exception types (LinAlgError for singular inputs)."""
from __future__ import annotations

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import check, from_torch, torch

# declared ops this module compares with torch (see test_op_coverage.py)
TESTED_OPS = {
    "mm", "bmm", "matmul", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "addbmm",
    "baddbmm", "kron", "cross", "linalg_cross", "linalg_inv", "linalg_solve", "linalg_det", "linalg_slogdet",
    "linalg_cholesky", "linalg_qr", "linalg_svd", "linalg_svdvals", "linalg_eigh", "linalg_eigvalsh",
}
# Python-level functions tested here too (ember/linalg.py): linalg.lstsq, matrix_norm, norm, multi_dot and
# torch's top-level det, inverse, slogdet, logdet, pinverse, matrix_power, chain_matmul, norm('fro'/'nuc').

TOL = {"float64": 1e-10, "float32": 1e-4, "float16": 1e-2, "bfloat16": 3e-2}
PRODUCT_DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "float16", "bfloat16"]
LAYOUTS = ["contiguous", "transposed", "sliced"]


def data(shape, dtype="float32", layout="contiguous", seed=0):
    """A torch tensor of this shape and dtype in a layout (small integers for integer
    dtypes, so products are exact); pass it through lib() to get the ember twin."""
    g = torch.Generator().manual_seed(seed + 17 * len(shape) + sum(shape))
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        base = shape[:-2] + (shape[-1], shape[-2])
    elif layout == "sliced" and len(shape) >= 1:
        base = shape[:-1] + (2 * shape[-1],)
    else:
        base = shape
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        t = torch.randn(base, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
    else:
        low = 0 if dtype == "uint8" else -4
        t = torch.randint(low, 5, base, generator=g).to(getattr(torch, dtype))
    if layout == "transposed" and len(shape) >= 2:
        return t.transpose(-1, -2)
    if layout == "sliced" and len(shape) >= 1:
        return t[..., ::2]
    return t


def on(lib, t):
    """t itself for torch; for ember, a tensor with t's values and the same strides and
    offset into a copy of t's storage."""
    if lib is torch:
        return t
    flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
    return ember.as_strided(from_torch(flat), tuple(t.shape), t.stride(), t.storage_offset())


def tol_for(dtype):
    return TOL.get(dtype, 0.0)


# ---------------------------------------------------------------------------- products
@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_mm(dtype, layout):
    a, b = data((5, 7), dtype, layout), data((7, 3), dtype, layout, seed=1)
    got = check(lambda lib: lib.mm(on(lib, a), on(lib, b)), tol=tol_for(dtype))
    assert got.is_contiguous()
    check(lambda lib: on(lib, a).mm(on(lib, b)), tol=tol_for(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
@pytest.mark.parametrize("shapes", [((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (3, 0)), ((1, 1), (1, 1)),
                                    ((1, 5), (5, 1)), ((4, 1), (1, 3))])
def test_mm_edge_shapes(dtype, shapes):
    a, b = data(shapes[0], dtype), data(shapes[1], dtype, seed=1)
    check(lambda lib: lib.mm(on(lib, a), on(lib, b)), tol=tol_for(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bfloat16"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_bmm(dtype, layout):
    a, b = data((3, 4, 5), dtype, layout), data((3, 5, 2), dtype, layout, seed=1)
    check(lambda lib: lib.bmm(on(lib, a), on(lib, b)), tol=tol_for(dtype))
    check(lambda lib: on(lib, a).bmm(on(lib, b)), tol=tol_for(dtype))


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((7, 1, 2, 3), (5, 3, 4)), ((1, 2, 3), (6, 3, 4)), ((2, 1, 2, 3), (1, 4, 3, 2)),
    ((0, 2, 3), (3, 4)), ((2, 0, 3), (2, 3, 4)), ((2, 2, 0), (2, 0, 4)), ((0,), (0,)), ((1, 1), (1,)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_ranks(shapes, dtype):
    a, b = data(shapes[0], dtype), data(shapes[1], dtype, seed=1)
    check(lambda lib: lib.matmul(on(lib, a), on(lib, b)), tol=tol_for(dtype))
    check(lambda lib: on(lib, a).matmul(on(lib, b)), tol=tol_for(dtype))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_matmul_noncontiguous_batches(layout):
    a, b = data((4, 3, 5), "float32", layout), data((4, 5, 6), "float32", layout, seed=1)
    check(lambda lib: lib.matmul(on(lib, a), on(lib, b)), tol=1e-4)
    # a batch dim broadcast with stride 0, and a permuted batch
    check(lambda lib: lib.matmul(on(lib, a[:1]).expand(4, 3, 5), on(lib, b)), tol=1e-4)
    check(lambda lib: lib.matmul(on(lib, a).permute(1, 0, 2).transpose(0, 1), on(lib, b)), tol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_mv_dot_vdot_inner_outer(dtype, layout):
    m, v, w = data((4, 6), dtype, layout), data((6,), dtype, layout, seed=1), data((6,), dtype, layout, seed=2)
    tol = tol_for(dtype) * 10
    check(lambda lib: lib.mv(on(lib, m), on(lib, v)), tol=tol)
    check(lambda lib: on(lib, m).mv(on(lib, v)), tol=tol)
    check(lambda lib: lib.dot(on(lib, v), on(lib, w)), tol=tol)
    check(lambda lib: on(lib, v).dot(on(lib, w)), tol=tol)
    check(lambda lib: lib.vdot(on(lib, v), on(lib, w)), tol=tol)
    check(lambda lib: lib.inner(on(lib, m), on(lib, m)), tol=tol)
    check(lambda lib: lib.inner(on(lib, v), on(lib, w)), tol=tol)
    check(lambda lib: lib.outer(on(lib, v), on(lib, w)), tol=tol)
    check(lambda lib: lib.ger(on(lib, v), on(lib, w)), tol=tol)
    check(lambda lib: on(lib, v).outer(on(lib, w[:3])), tol=tol)


def test_outer_inner_promotion_and_bool():
    check(lambda lib: lib.outer(lib.tensor([1, 2], dtype=lib.int32), lib.tensor([1.5, 2.0])))
    check(lambda lib: lib.outer(lib.tensor([True, False]), lib.tensor([True, True])))
    check(lambda lib: lib.inner(lib.tensor(2), lib.tensor([1.5, 2.0])))
    check(lambda lib: lib.inner(lib.tensor([[1, 2], [3, 4]]), lib.tensor(3)))
    check(lambda lib: lib.dot(lib.tensor([], dtype=lib.float32), lib.tensor([], dtype=lib.float32)))


def test_integer_overflow_wraps():
    check(lambda lib: lib.mm(lib.full((2, 3), 100, dtype=lib.int8), lib.full((3, 2), 3, dtype=lib.int8)))
    check(lambda lib: lib.mm(lib.full((1, 2), 2**62, dtype=lib.int64), lib.full((2, 1), 2, dtype=lib.int64)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_addmm_family(dtype):
    tol = tol_for(dtype) * 10
    s, m1, m2 = data((3, 4), dtype), data((3, 5), dtype, "transposed", 1), data((5, 4), dtype, seed=2)
    scal = {"beta": 2, "alpha": 3}
    check(lambda lib: lib.addmm(on(lib, s), on(lib, m1), on(lib, m2)), tol=tol)
    check(lambda lib: lib.addmm(on(lib, s[0]), on(lib, m1), on(lib, m2), **scal), tol=tol)
    check(lambda lib: on(lib, s).addmm(on(lib, m1), on(lib, m2), beta=0), tol=tol)
    v, vec = data((3,), dtype), data((5,), dtype, seed=3)
    check(lambda lib: lib.addmv(on(lib, v), on(lib, m1), on(lib, vec), **scal), tol=tol)
    check(lambda lib: on(lib, v).addmv(on(lib, m1), on(lib, vec)), tol=tol)
    v4 = data((4,), dtype, seed=4)
    check(lambda lib: lib.addr(on(lib, s), on(lib, v), on(lib, v4), **scal), tol=tol)
    b1, b2 = data((2, 3, 5), dtype, seed=5), data((2, 5, 4), dtype, "sliced", 6)
    check(lambda lib: lib.baddbmm(on(lib, s), on(lib, b1), on(lib, b2), **scal), tol=tol)
    check(lambda lib: lib.addbmm(on(lib, s), on(lib, b1), on(lib, b2), **scal), tol=tol)
    check(lambda lib: on(lib, s).addbmm(on(lib, b1), on(lib, b2)), tol=tol)


def test_addmm_beta_zero_ignores_nan():
    check(lambda lib: lib.addmm(lib.full((2, 2), float("nan")), lib.ones(2, 3), lib.ones(3, 2), beta=0))
    check(lambda lib: lib.addmm(lib.full((2, 2), 1.0), lib.ones(2, 0), lib.ones(0, 2), beta=0.5, alpha=2))


def test_addr_promotes_and_checks_factors():
    check(lambda lib: lib.addr(lib.ones(2, 3), lib.tensor([1, 2]), lib.ones(3)))
    check(lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.bool), lib.tensor([True, False]), lib.ones(3, dtype=lib.bool)))
    check(lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, dtype=lib.int64), lib.ones(3, dtype=lib.int64),
                               alpha=1.5))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_kron_and_cross(dtype):
    a, b = data((2, 3), dtype), data((3, 2), dtype, seed=1)
    check(lambda lib: lib.kron(on(lib, a), on(lib, b)))
    check(lambda lib: lib.kron(on(lib, a[0]), on(lib, b)))
    check(lambda lib: on(lib, a).kron(on(lib, b[0])))
    x, y = data((4, 3), dtype, seed=2), data((1, 3), dtype, seed=3)
    check(lambda lib: lib.linalg.cross(on(lib, x), on(lib, y)), tol=tol_for(dtype))
    check(lambda lib: lib.cross(on(lib, x), on(lib, x.flip(0)), dim=1), tol=tol_for(dtype))
    check(lambda lib: lib.cross(on(lib, x.t()), on(lib, x.t().contiguous()), dim=0), tol=tol_for(dtype))
    check(lambda lib: on(lib, x).cross(on(lib, x), dim=-1))


PRODUCT_ERRORS = {
    "mm dtypes": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64)),
    "mm shapes": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(2, 3)),
    "mm rank": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3)),
    "mm rank self": lambda lib: lib.mm(lib.ones(3), lib.ones(3, 2)),
    "mm bool": lambda lib: lib.mm(lib.ones(2, 3, dtype=lib.bool), lib.ones(3, 2, dtype=lib.bool)),
    "bmm rank": lambda lib: lib.bmm(lib.ones(2, 3), lib.ones(3, 4)),
    "bmm batch": lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(3, 3, 4)),
    "bmm dtypes": lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 3, 4, dtype=lib.float64)),
    "matmul 0-d": lambda lib: lib.matmul(lib.ones(()), lib.ones(3)),
    "matmul 1x1 sizes": lambda lib: lib.matmul(lib.ones(3), lib.ones(4)),
    "matmul mv sizes": lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(4)),
    "matmul batch": lambda lib: lib.matmul(lib.ones(2, 2, 3), lib.ones(3, 3, 4)),
    "matmul inner": lambda lib: lib.matmul(lib.ones(2, 2, 3), lib.ones(2, 4, 4)),
    "matmul dtypes": lambda lib: lib.matmul(lib.ones(2, 2, 3), lib.ones(2, 3, 4, dtype=lib.float64)),
    "matmul folded dtypes": lambda lib: lib.matmul(lib.ones(2, 2, 3), lib.ones(3, 4, dtype=lib.float64)),
    "mv rank": lambda lib: lib.mv(lib.ones(2, 3), lib.ones(3, 1)),
    "mv dtypes": lambda lib: lib.mv(lib.ones(2, 3), lib.ones(3, dtype=lib.float64)),
    "mv bool": lambda lib: lib.mv(lib.ones(2, 3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    "dot rank": lambda lib: lib.dot(lib.ones(2, 3), lib.ones(2, 3)),
    "dot sizes": lambda lib: lib.dot(lib.ones(3), lib.ones(4)),
    "dot dtypes": lambda lib: lib.dot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "dot bool": lambda lib: lib.dot(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    "inner sizes": lambda lib: lib.inner(lib.ones(3), lib.ones(4)),
    "inner dtypes": lambda lib: lib.inner(lib.ones(2, 3, dtype=lib.int64), lib.ones(3)),
    "outer rank": lambda lib: lib.outer(lib.ones(2, 3), lib.ones(3)),
    "addmm self shape": lambda lib: lib.addmm(lib.ones(3), lib.ones(2, 3), lib.ones(3, 4)),
    "addmm dtypes": lambda lib: lib.addmm(lib.ones(2, 4, dtype=lib.float64), lib.ones(2, 3), lib.ones(3, 4)),
    "addmm rank": lambda lib: lib.addmm(lib.ones(2, 2), lib.ones(3), lib.ones(3, 2)),
    "addmv sizes": lambda lib: lib.addmv(lib.ones(3), lib.ones(2, 3), lib.ones(3)),
    "addr rank": lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2, 2), lib.ones(3)),
    "addr self shape": lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2), lib.ones(4)),
    "baddbmm dtypes": lambda lib: lib.baddbmm(lib.ones(2, 2, 2), lib.ones(2, 2, 3),
                                              lib.ones(2, 3, 2, dtype=lib.float64)),
    "addbmm dtypes": lambda lib: lib.addbmm(lib.ones(2, 2), lib.ones(2, 2, 3), lib.ones(2, 3, 2, dtype=lib.float64)),
    "cross length": lambda lib: lib.linalg.cross(lib.ones(2, 4), lib.ones(2, 4)),
    "cross no dim 3": lambda lib: lib.cross(lib.ones(2, 4), lib.ones(2, 4)),
    "cross dim": lambda lib: lib.cross(lib.ones(2, 3), lib.ones(2, 3), dim=0),
    "cross dtypes": lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)),
    "cross bool": lambda lib: lib.linalg.cross(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    "cross dim range": lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(2, 3), dim=2),
}


@pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim")
@pytest.mark.parametrize("name", PRODUCT_ERRORS)
def test_product_errors(name):
    fn = PRODUCT_ERRORS[name]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(ember)
    assert type(ours.value) is type(theirs.value)


def test_product_error_messages():
    for fn in [PRODUCT_ERRORS["mm dtypes"], PRODUCT_ERRORS["mm shapes"], PRODUCT_ERRORS["bmm batch"],
               PRODUCT_ERRORS["dot sizes"], PRODUCT_ERRORS["mv dtypes"], PRODUCT_ERRORS["matmul 0-d"]]:
        with pytest.raises(Exception) as theirs:
            fn(torch)
        with pytest.raises(Exception) as ours:
            fn(ember)
        assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------------------- linalg
def spd(n, batch=(), dtype="float64", seed=0):
    """A symmetric positive-definite matrix (batch)."""
    a = data(batch + (n, n), "float64", seed=seed)
    return (a @ a.transpose(-1, -2) + n * torch.eye(n, dtype=torch.float64)).to(getattr(torch, dtype))


def as_torch(t):
    return torch.tensor(t.tolist(), dtype=getattr(torch, repr(t.dtype).split(".")[1])) if t.numel() else \
        torch.empty(tuple(t.shape), dtype=getattr(torch, repr(t.dtype).split(".")[1]))


FLOATS = ["float32", "float64"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3)], ids=str)
def test_inv_det_slogdet(dtype, shape):
    a = data(shape, dtype) + (3 * torch.eye(shape[-1], dtype=getattr(torch, dtype)) if shape[-1] else 0)
    tol = tol_for(dtype) * 10
    check(lambda lib: lib.linalg.inv(on(lib, a)), tol=tol)
    check(lambda lib: lib.linalg.det(on(lib, a)), tol=tol)
    check(lambda lib: tuple(lib.linalg.slogdet(on(lib, a))), tol=tol)
    if len(shape) == 2 and shape[0]:
        check(lambda lib: lib.linalg.inv(on(lib, a).t()), tol=tol)
        check(lambda lib: lib.linalg.det(on(lib, a)[:, :]), tol=tol)


def test_det_singular_and_signs():
    check(lambda lib: lib.linalg.det(lib.tensor([[1., 2.], [2., 4.]])), tol=1e-6)
    check(lambda lib: tuple(lib.linalg.slogdet(lib.zeros(2, 2))))
    check(lambda lib: tuple(lib.linalg.slogdet(lib.tensor([[0., 1.], [1., 0.]]))))
    check(lambda lib: lib.linalg.det(lib.tensor([[0., 1.], [1., 0.]], dtype=lib.float64)))
    r = ember.linalg.slogdet(ember.eye(2))
    assert r.sign.item() == 1.0 and r.logabsdet.item() == 0.0 and type(r).__name__ == "linalg_slogdet"


@pytest.mark.parametrize("dtype", FLOATS)
def test_solve(dtype):
    A = data((3, 3), dtype) + 3 * torch.eye(3, dtype=getattr(torch, dtype))
    tol = tol_for(dtype) * 10
    check(lambda lib: lib.linalg.solve(on(lib, A), on(lib, data((3,), dtype, seed=1))), tol=tol)
    check(lambda lib: lib.linalg.solve(on(lib, A), on(lib, data((3, 2), dtype, "transposed", 1))), tol=tol)
    check(lambda lib: lib.linalg.solve(on(lib, A).expand(4, 3, 3), on(lib, data((4, 3), dtype, seed=2))), tol=tol)
    check(lambda lib: lib.linalg.solve(on(lib, A), on(lib, data((5, 3, 1), dtype, seed=2))), tol=tol)
    check(lambda lib: lib.linalg.solve(on(lib, A), on(lib, data((2, 3), dtype, seed=3)), left=False), tol=tol)
    check(lambda lib: lib.linalg.solve(on(lib, A), on(lib, data((3, 0), dtype))), tol=tol)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky(dtype):
    tol = tol_for(dtype) * 10
    for A in [spd(4, dtype=dtype), spd(3, (2,), dtype=dtype), spd(1, dtype=dtype)]:
        check(lambda lib: lib.linalg.cholesky(on(lib, A)), tol=tol)
        check(lambda lib: lib.linalg.cholesky(on(lib, A), upper=True), tol=tol)
    check(lambda lib: lib.linalg.cholesky(lib.zeros(0, 0, dtype=getattr(lib, dtype))))


def reconstructs(parts, expected, tol):
    """parts multiply back to expected (torch tensors)."""
    got = parts[0]
    for p in parts[1:]:
        got = got @ p
    assert torch.allclose(got, expected, atol=tol, rtol=tol), (got, expected)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (0, 3), (3, 0)], ids=str)
def test_qr_svd(dtype, shape):
    A = data(shape, dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for mode in ["reduced", "complete", "r"]:
        q, r = ember.linalg.qr(on(ember, A), mode=mode)
        tq, tr = torch.linalg.qr(A, mode=mode)
        assert q.shape == tq.shape and r.shape == tr.shape and q.dtype == r.dtype == ember_dtype(dtype)
        if mode != "r":
            reconstructs([as_torch(q), as_torch(r)], A, tol)
        assert torch.allclose(as_torch(r).abs(), tr.abs(), atol=tol, rtol=tol)
    for full in [True, False]:
        res = ember.linalg.svd(on(ember, A), full_matrices=full)
        tres = torch.linalg.svd(A, full_matrices=full)
        assert [tuple(x.shape) for x in res] == [tuple(x.shape) for x in tres]
        assert torch.allclose(as_torch(res.S), tres.S, atol=tol, rtol=tol)
        k = min(shape[-2:])
        u, s, vh = as_torch(res.U), as_torch(res.S), as_torch(res.Vh)
        reconstructs([u[..., :, :k] * s.unsqueeze(-2), vh[..., :k, :]], A, tol * 10)
    check(lambda lib: lib.linalg.svdvals(on(lib, A)), tol=tol)


def ember_dtype(name):
    return getattr(ember, name)


@pytest.mark.parametrize("dtype", FLOATS)
def test_eigh(dtype):
    tol = 1e-3 if dtype == "float32" else 1e-9
    for A in [spd(4, dtype=dtype), spd(3, (2,), dtype=dtype, seed=1), spd(1, dtype=dtype)]:
        for uplo in ["L", "U"]:
            check(lambda lib: lib.linalg.eigvalsh(on(lib, A), UPLO=uplo), tol=tol)
            w, v = ember.linalg.eigh(on(ember, A), UPLO=uplo)
            tw = torch.linalg.eigvalsh(A)
            assert torch.allclose(as_torch(w), tw, atol=tol, rtol=tol)
            reconstructs([as_torch(v) * as_torch(w).unsqueeze(-2), as_torch(v).transpose(-1, -2)], A, tol * 10)
    # only the named triangle is read
    A = spd(3, dtype=dtype)
    check(lambda lib: lib.linalg.eigvalsh(on(lib, A.tril()), UPLO="L"), tol=tol)
    check(lambda lib: lib.linalg.eigvalsh(on(lib, A.triu()), UPLO="U"), tol=tol)


def test_linalg_error_is_runtime_error():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError, match="singular"):
        ember.linalg.inv(ember.zeros(2, 2))
    with pytest.raises(ember.linalg.LinAlgError, match=r"\(Batch element 1\)"):
        ember.linalg.inv(ember.tensor([[[1., 0.], [0., 1.]], [[0., 0.], [0., 0.]]]))
    with pytest.raises(ember.linalg.LinAlgError, match="positive-definite"):
        ember.linalg.cholesky(ember.tensor([[1., 2.], [2., 1.]]))


LINALG_ERRORS = {
    "inv singular": lambda lib: lib.linalg.inv(lib.zeros(2, 2)),
    "inv not square": lambda lib: lib.linalg.inv(lib.ones(2, 3)),
    "inv 1-d": lambda lib: lib.linalg.inv(lib.ones(3)),
    "inv int": lambda lib: lib.linalg.inv(lib.ones(2, 2, dtype=lib.int64)),
    "inv half": lambda lib: lib.linalg.inv(lib.ones(2, 2, dtype=lib.float16)),
    "det int": lambda lib: lib.linalg.det(lib.ones(2, 2, dtype=lib.int64)),
    "det not square": lambda lib: lib.linalg.det(lib.ones(2, 3)),
    "cholesky not pd": lambda lib: lib.linalg.cholesky(lib.tensor([[1., 0., 0.], [0., -1., 0.], [0., 0., 1.]])),
    "cholesky not square": lambda lib: lib.linalg.cholesky(lib.ones(2, 3)),
    "solve singular": lambda lib: lib.linalg.solve(lib.zeros(2, 2), lib.ones(2)),
    "solve dtypes": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float64)),
    "solve shapes": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(3)),
    "solve batch": lambda lib: lib.linalg.solve(lib.eye(2).expand(3, 2, 2), lib.ones(4, 2, 1)),
    "eigh not square": lambda lib: lib.linalg.eigh(lib.ones(2, 3)),
    "eigh uplo": lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X"),
    "qr mode": lambda lib: lib.linalg.qr(lib.ones(2, 3), mode="x"),
    "svd int": lambda lib: lib.linalg.svd(lib.ones(2, 3, dtype=lib.int32)),
}


@pytest.mark.parametrize("name", LINALG_ERRORS)
def test_linalg_errors(name):
    fn = LINALG_ERRORS[name]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    is_linalg_error = isinstance(theirs.value, torch.linalg.LinAlgError)
    with pytest.raises(RuntimeError) as ours:
        fn(ember)
    assert isinstance(ours.value, ember.linalg.LinAlgError) == is_linalg_error
    assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------------------- BLAS loading
def run_python(code):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True).stdout


def test_blas_is_loaded_on_first_use_and_single_threaded():
    # ember splits products across its own pool: see Note [ember threads BLAS]
    out = run_python(
        "import ember, sys\n"
        "maps = lambda: open('/proc/self/maps').read()\n"
        "print('openblas' in maps(), 'scipy_openblas32' in sys.modules)\n"
        "ember.mm(ember.ones(2, 2), ember.ones(2, 2))\n"
        "print('openblas' in maps())\n"
        "import ctypes, ember.linalg as L\n"
        "lib = ctypes.CDLL(L._blas_library_path())\n"
        "print(lib.scipy_openblas_get_num_threads())\n"
        "ember.set_num_threads(1)\n"
        "a = ember.rand(300, 200)\n"
        "print(ember.allclose(a @ a.t(), ember.mm(a, a.t().contiguous())) if hasattr(ember, 'allclose') else True)\n")
    assert out.split() == ["False", "False", "True", "1", "True"]


@pytest.mark.parametrize("caller_value", [None, "3"])
def test_blas_starts_no_threads_and_leaves_the_environment_as_it_was(caller_value):
    # Note [OpenBLAS starts no threads] (kernels/blas.cpp): OpenBLAS would start its server
    # threads at load; OPENBLAS_NUM_THREADS=1 holds for the dlopen alone.
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if caller_value is not None:
        env["OPENBLAS_NUM_THREADS"] = caller_value
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import ctypes, os, ember\n"
            "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p\n"
            "ember.set_num_threads(1)\n"
            "ember.mm(ember.ones(2, 2), ember.ones(2, 2))\n"
            "print(len(os.listdir('/proc/self/task')), libc.getenv(b'OPENBLAS_NUM_THREADS'))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1", repr(None if caller_value is None else caller_value.encode())]


def test_products_split_across_threads_match_single_thread():
    # each product at least 2 * 2^18 multiply-adds, so it is split when alone
    a, b = data((3, 130, 64), "float64"), data((64, 90), "float64", seed=1)
    c, d = data((20, 300), "float64", "transposed", 2), data((300, 130), "float64", seed=3)
    for threads in [1, 2]:
        old = ember.get_num_threads()
        ember.set_num_threads(threads)
        try:
            check(lambda lib: lib.matmul(on(lib, a), on(lib, b)), tol=1e-10)  # batch entries
            check(lambda lib: lib.mm(on(lib, a[0]), on(lib, b)), tol=1e-10)  # row blocks
            check(lambda lib: lib.mm(on(lib, c), on(lib, d)), tol=1e-10)  # column blocks
        finally:
            ember.set_num_threads(old)


def test_blas_missing_is_a_clear_error():
    code = ("import ember, ember.linalg as L\n"
            "L._blas_library_path = lambda: None\n"
            "try:\n    ember.mm(ember.ones(2, 2), ember.ones(2, 2))\n"
            "except RuntimeError as e:\n    print('scipy-openblas32' in str(e))\n"
            "print(ember.mm(ember.ones(2, 2, dtype=ember.int64), ember.ones(2, 2, dtype=ember.int64)).tolist())\n")
    assert run_python(code).split()[0] == "True"


# ---------------------------------------------------------------------------- composed in Python
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 5)]), ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 6)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij, ij ->", [(2, 3), (2, 3)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("ji", [(2, 3)]),
    ("ij,kj->ik", [(0, 3), (4, 3)]), ("i...->...", [(2, 3, 4)]), ("iij->j", [(3, 3, 2)]), ("i,i", [(1,), (3,)]),
    ("ij,j->i", [(2, 0), (0,)]),
    # errors
    ("ij,jk->ik", [(2, 3), (4, 4)]), ("ij->k", [(2, 3)]), ("ii", [(2, 3)]), ("ij,jk", [(2, 3)]), ("ij", [(2, 3, 4)]),
]


@pytest.mark.parametrize("case", EINSUM_CASES, ids=lambda c: c[0] + str(c[1]))
def test_einsum(case):
    eq, shapes = case
    ts = [data(s, "float64", seed=i) for i, s in enumerate(shapes)]
    check(lambda lib: lib.einsum(eq, *[on(lib, t) for t in ts]), tol=1e-10)
    check(lambda lib: lib.einsum(eq, [on(lib, t) for t in ts]), tol=1e-10)


def test_einsum_integer_and_dtype_error():
    check(lambda lib: lib.einsum("i,i", lib.tensor([1, 2]), lib.tensor([3, 4])))
    check(lambda lib: lib.einsum("ij,jk", lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64)))


TENSORDOT_CASES = [((2, 3, 4), (3, 4, 5), 2), ((2, 3, 4), (4, 5), 1), ((2, 3), (4, 5), 0), ((2, 3), (3, 2), ([0, 1], [1, 0])),
                   ((2, 3), (3, 4), ([1], [0])), ((2, 3), (3, 4), (1, 0)),
                   ((2, 3, 4), (3, 4, 5), 1), ((2, 3), (3, 4), -1), ((2, 3), (3, 4), 3), ((2, 3), (3, 4), ([1], [1]))]


@pytest.mark.parametrize("case", TENSORDOT_CASES, ids=str)
def test_tensordot(case):
    sa, sb, dims = case
    a, b = data(sa, "float64"), data(sb, "float64", seed=1)
    check(lambda lib: lib.tensordot(on(lib, a), on(lib, b), dims=dims), tol=1e-10)
    check(lambda lib: lib.tensordot(lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64), dims=1))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    A = data((2, 3, 3), "float64") + 3 * torch.eye(3, dtype=torch.float64)
    check(lambda lib: lib.linalg.matrix_power(on(lib, A), n), tol=1e-9)
    if n >= 0:
        check(lambda lib: lib.linalg.matrix_power(lib.tensor([[1, 1], [0, 1]]), n))
    check(lambda lib: lib.linalg.matrix_power(lib.ones(2, 3), n))
    check(lambda lib: lib.linalg.matrix_power(lib.ones(3), n))


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (0, 3)], ids=str)
def test_pinv_matrix_rank(shape):
    A = data(shape, "float64")
    low_rank = data(shape[:-1] + (1,), "float64") @ data((1, shape[-1]), "float64", seed=1)
    for M in [A, low_rank]:
        check(lambda lib: lib.linalg.pinv(on(lib, M)), tol=1e-8)
        check(lambda lib: lib.linalg.matrix_rank(on(lib, M)))
        check(lambda lib: lib.linalg.matrix_rank(on(lib, M), atol=0.5, rtol=0.0))
        check(lambda lib: lib.linalg.pinv(on(lib, M), rtol=0.5), tol=1e-8)
    S = spd(3)
    check(lambda lib: lib.linalg.matrix_rank(on(lib, S), hermitian=True))


# ---------------------------------------------------------------------------- lstsq, norms, aliases
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((5, 3), (5,)),
                                    ((2, 5, 3), (2, 5)), ((0, 3), (0, 2))], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstsq(shapes, dtype):
    A, B = data(shapes[0], dtype), data(shapes[1], dtype, seed=1)
    tol = 1e-8 if dtype == "float64" else 1e-3
    for driver in [None, "gelsy", "gels", "gelsd", "gelss"]:
        check(lambda lib: tuple(lib.linalg.lstsq(on(lib, A), on(lib, B), driver=driver)), tol=tol)
    check(lambda lib: lib.linalg.lstsq(on(lib, A), on(lib, B)).solution, tol=tol)
    Z = torch.zeros(A.shape[:-1] + (0,), dtype=A.dtype)
    check(lambda lib: tuple(lib.linalg.lstsq(on(lib, A), on(lib, Z))), tol=tol)


def test_lstsq_errors():
    cases = [
        lambda lib: lib.linalg.lstsq(lib.ones(3), lib.ones(3)),
        lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(4, 2)),
        lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(5, 2, dtype=lib.float64)),
        lambda lib: lib.linalg.lstsq(lib.ones(5, 3, dtype=lib.int64), lib.ones(5, 2, dtype=lib.int64)),
        lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(5, 2), driver="foo"),
        lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(1, 5, 2)),
    ]
    for case in cases:
        check(case)


MATRIX_ORDS = ["fro", "nuc", float("inf"), float("-inf"), 1, -1, 2, -2]


@pytest.mark.parametrize("shape,layout", [((3, 4), "contiguous"), ((4, 3), "transposed"), ((2, 3, 3), "sliced"),
                                          ((2, 0, 3), "contiguous")], ids=str)
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm(shape, layout, ord):
    A = data(shape, "float64", layout)
    if 0 in shape and ord not in ("fro", "nuc"):
        return  # torch: reductions over an empty dim raise; covered by test_norm_errors
    for dim in [(-2, -1), (-1, -2)] + ([(0, 2), (2, 0)] if len(shape) == 3 else []):
        for keepdim in (False, True):
            check(lambda lib: lib.linalg.matrix_norm(on(lib, A), ord, dim, keepdim), tol=1e-9)
    check(lambda lib: lib.linalg.norm(on(lib, A), ord, (-2, -1)), tol=1e-9)
    check(lambda lib: lib.linalg.matrix_norm(on(lib, A).float(), ord), tol=1e-4)


def test_norm_dispatch():
    A = data((3, 4), "float64")
    V = data((5,), "float64", "sliced")
    B = data((2, 3, 4), "float64")
    cases = [
        lambda lib: lib.linalg.norm(on(lib, A)), lambda lib: lib.linalg.norm(on(lib, B)),
        lambda lib: lib.linalg.norm(on(lib, A), 1), lambda lib: lib.linalg.norm(on(lib, A), "nuc"),
        lambda lib: lib.linalg.norm(on(lib, V), 3), lambda lib: lib.linalg.norm(on(lib, V), float("inf")),
        lambda lib: lib.linalg.norm(on(lib, B), dim=1), lambda lib: lib.linalg.norm(on(lib, B), 1, dim=(0, 1)),
        lambda lib: lib.linalg.norm(on(lib, B), dim=(2, 1), keepdim=True),
        lambda lib: lib.linalg.norm(on(lib, B), 0.5, dim=-1, keepdim=True),
        lambda lib: lib.linalg.norm(on(lib, A), dtype=lib.float32),
        lambda lib: lib.norm(on(lib, A)), lambda lib: lib.norm(on(lib, A), "fro"), lambda lib: on(lib, B).norm("fro"),
        lambda lib: on(lib, B).norm("fro", dim=(0, 2)), lambda lib: on(lib, B).norm("fro", dim=1, keepdim=True),
        lambda lib: lib.norm(on(lib, A), "nuc"), lambda lib: on(lib, B).norm("nuc", dim=(1, 2)),
        lambda lib: on(lib, B).norm(3), lambda lib: on(lib, B).norm(1, dim=1), lambda lib: lib.norm(on(lib, V), p=2),
    ]
    for case in cases:
        check(case, tol=1e-9)


def test_norm_errors():
    cases = [
        lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), 2), lambda lib: lib.linalg.norm(lib.ones(3), "fro"),
        lambda lib: lib.linalg.matrix_norm(lib.ones(3)), lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), 3),
        lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, dtype=lib.int64)),
        lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), dim=(0, 0)),
        lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), dim=(0, 2)),
        lambda lib: lib.linalg.matrix_norm(lib.ones(0, 2), 1),
        lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), dim=(0, 1, 2)),
    ]
    for case in cases:
        check(case)


def test_top_level_aliases():
    A = data((2, 3, 3), "float64") + 3 * torch.eye(3, dtype=torch.float64)
    N = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)  # det < 0
    R = data((3, 4), "float64")
    cases = [
        lambda lib: lib.det(on(lib, A)), lambda lib: on(lib, A).det(), lambda lib: lib.inverse(on(lib, A)),
        lambda lib: on(lib, A).inverse(), lambda lib: tuple(lib.slogdet(on(lib, A))), lambda lib: on(lib, A).logdet(),
        lambda lib: lib.logdet(on(lib, N)), lambda lib: lib.logdet(lib.zeros(2, 2)),
        lambda lib: lib.slogdet(on(lib, N)).logabsdet, lambda lib: on(lib, A).slogdet().sign,
        lambda lib: lib.pinverse(on(lib, R)), lambda lib: on(lib, R).pinverse(rcond=0.5),
        lambda lib: lib.matrix_power(on(lib, A), 3), lambda lib: on(lib, A).matrix_power(-1),
        lambda lib: lib.chain_matmul(on(lib, R), on(lib, R).t(), on(lib, R)),
        lambda lib: lib.chain_matmul(on(lib, R)), lambda lib: lib.det(lib.ones(2, 3)),
        lambda lib: lib.linalg.multi_dot([on(lib, R), on(lib, R).t()]),
        lambda lib: lib.linalg.multi_dot([on(lib, R)[0], on(lib, R).t(), on(lib, R), on(lib, R)[1]]),
        lambda lib: lib.linalg.multi_dot([on(lib, R)[:, 0], on(lib, R)]),
        lambda lib: lib.linalg.multi_dot([on(lib, R)]), lambda lib: lib.linalg.multi_dot([on(lib, R), on(lib, R)]),
        lambda lib: lib.linalg.multi_dot([on(lib, A), on(lib, A)]),
        lambda lib: lib.linalg.multi_dot([on(lib, R), on(lib, R).t().float()]),
    ]
    for case in cases:
        check(case, tol=1e-9)
    assert type(ember.slogdet(ember.eye(2))).__name__ == "slogdet"


def test_qr_complete_ignores_stale_memory():
    # regression: the columns past A's in the complete-mode buffer were uninitialized, and
    # LAPACKE's NaN check on them left Q unwritten when the memory held NaNs
    A = ember.tensor(data((5, 3), "float64").tolist(), dtype=ember.float64)
    for _ in range(20):
        del_me = ember.full((5, 5), float("nan"), dtype=ember.float64)
        del del_me
        Q, R = ember.linalg.qr(A, mode="complete")
        assert not bool(Q.isnan().any())


# ---------------------------------------------------------------------------- out= and in-place
def T(lib, *shape, seed=0, dtype="float32", layout="contiguous"):
    return on(lib, data(shape, dtype, layout, seed))


AB = {"beta": 2, "alpha": 3}
OUT_FORMS = {
    "mm": lambda lib, **o: lib.mm(T(lib, 3, 4), T(lib, 4, 5, seed=1, layout="transposed"), **o),
    "mm int": lambda lib, **o: lib.mm(T(lib, 3, 4, dtype="int64"), T(lib, 4, 5, seed=1, dtype="int64"), **o),
    "bmm": lambda lib, **o: lib.bmm(T(lib, 2, 3, 4), T(lib, 2, 4, 5, seed=1), **o),
    "matmul 1x1": lambda lib, **o: lib.matmul(T(lib, 4), T(lib, 4, seed=1), **o),
    "matmul 1x2": lambda lib, **o: lib.matmul(T(lib, 4), T(lib, 4, 5, seed=1), **o),
    "matmul 2x1": lambda lib, **o: lib.matmul(T(lib, 3, 4), T(lib, 4, seed=1), **o),
    "matmul 2x2": lambda lib, **o: lib.matmul(T(lib, 3, 4), T(lib, 4, 5, seed=1), **o),
    "matmul 3x1": lambda lib, **o: lib.matmul(T(lib, 2, 3, 4), T(lib, 4, seed=1), **o),
    "matmul 3x2": lambda lib, **o: lib.matmul(T(lib, 2, 3, 4), T(lib, 4, 5, seed=1), **o),
    "matmul 4x3": lambda lib, **o: lib.matmul(T(lib, 2, 1, 3, 4), T(lib, 3, 4, 5, seed=1), **o),
    "mv": lambda lib, **o: lib.mv(T(lib, 3, 4, layout="transposed"), T(lib, 4, seed=1), **o),
    "dot": lambda lib, **o: lib.dot(T(lib, 4), T(lib, 4, seed=1), **o),
    "inner": lambda lib, **o: lib.inner(T(lib, 2, 4), T(lib, 3, 4, seed=1), **o),
    "inner 0-d": lambda lib, **o: lib.inner(T(lib, 2, 4), lib.tensor(2.0), **o),
    "outer": lambda lib, **o: lib.outer(T(lib, 3), T(lib, 4, seed=1, dtype="int64"), **o),
    "ger": lambda lib, **o: lib.ger(T(lib, 3), T(lib, 4, seed=1), **o),
    "kron": lambda lib, **o: lib.kron(T(lib, 2, 3), T(lib, 3, 2, seed=1), **o),
    "cross": lambda lib, **o: lib.cross(T(lib, 4, 3), T(lib, 4, 3, seed=1), dim=1, **o),
    "linalg.cross": lambda lib, **o: lib.linalg.cross(T(lib, 4, 3), T(lib, 1, 3, seed=1), **o),
    "addmm": lambda lib, **o: lib.addmm(T(lib, 5), T(lib, 3, 4, seed=1), T(lib, 4, 5, seed=2), **AB, **o),
    "addmv": lambda lib, **o: lib.addmv(T(lib, 3), T(lib, 3, 4, seed=1), T(lib, 4, seed=2), **AB, **o),
    "addr": lambda lib, **o: lib.addr(T(lib, 3, 4), T(lib, 3, seed=1), T(lib, 4, seed=2), **AB, **o),
    "addbmm": lambda lib, **o: lib.addbmm(T(lib, 3, 5), T(lib, 2, 3, 4, seed=1), T(lib, 2, 4, 5, seed=2), **AB, **o),
    "baddbmm": lambda lib, **o: lib.baddbmm(T(lib, 3, 5), T(lib, 2, 3, 4, seed=1), T(lib, 2, 4, 5, seed=2), **AB, **o),
}


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized", "ignore:torch.ger is deprecated")
@pytest.mark.parametrize("kind", ["exact", "resized", "strided", "wider dtype"])
@pytest.mark.parametrize("name", OUT_FORMS)
def test_out_forms(name, kind):
    expected = OUT_FORMS[name](torch)
    shape, dtype = tuple(expected.shape), str(expected.dtype).split(".")[1]
    dtype = "float64" if kind == "wider dtype" else dtype  # allowed where out= casts as elementwise ops do

    def run(lib):
        out = {"resized": lambda: lib.full((7,), 9, dtype=getattr(lib, dtype)),
               "strided": lambda: lib.full(shape + (2,), 9, dtype=getattr(lib, dtype))[..., 1]}.get(
            kind, lambda: lib.full(shape, 9, dtype=getattr(lib, dtype)))()
        assert OUT_FORMS[name](lib, out=out) is out and tuple(out.shape) == shape
        return out
    check(run, tol=1e-4)


def S(*shape, **kw):
    return lambda lib: T(lib, *shape, **kw)


INPLACE_FORMS = {  # name: (self, call(lib, self))
    "addmm_": (S(3, 5), lambda lib, s: s.addmm_(T(lib, 3, 4, seed=1), T(lib, 4, 5, seed=2), **AB)),
    "addmm_ strided": (S(3, 5, layout="transposed"), lambda lib, s: s.addmm_(T(lib, 3, 4), T(lib, 4, 5, seed=2))),
    "addmv_": (S(3, layout="sliced"), lambda lib, s: s.addmv_(T(lib, 3, 4, seed=1), T(lib, 4, seed=2), **AB)),
    "addr_": (S(3, 4), lambda lib, s: s.addr_(T(lib, 3, seed=1), T(lib, 4, seed=2), **AB)),
    "addr_ promotes": (S(3, 4), lambda lib, s: s.addr_(T(lib, 3, dtype="int64"), T(lib, 4, dtype="float64"))),
    "addbmm_": (S(3, 5), lambda lib, s: s.addbmm_(T(lib, 2, 3, 4, seed=1), T(lib, 2, 4, 5, seed=2), **AB)),
    "baddbmm_": (S(2, 3, 5), lambda lib, s: s.baddbmm_(T(lib, 2, 3, 4, seed=1), T(lib, 2, 4, 5, seed=2), **AB)),
    "baddbmm_ int": (S(2, 3, 5, dtype="int32"),
                     lambda lib, s: s.baddbmm_(T(lib, 2, 3, 4, dtype="int32"), T(lib, 2, 4, 5, dtype="int32"), **AB)),
}


@pytest.mark.parametrize("name", INPLACE_FORMS)
def test_inplace_forms(name):
    make, call = INPLACE_FORMS[name]

    def run(lib):
        assert call(lib, s := make(lib)) is s
        return s
    check(run, tol=1e-4)


def f64(lib, *shape):
    return lib.empty(*shape, dtype=lib.float64)


OUT_ERRORS = {  # out= dtypes and in-place shapes; messages as torch's
    "mm": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 4), out=f64(lib, 2, 4)),
    "mm int": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 4), out=lib.empty(0, dtype=lib.int64)),
    "matmul 1x1": lambda lib: lib.matmul(lib.ones(3), lib.ones(3), out=f64(lib, 0)),
    "matmul 3x2": lambda lib: lib.matmul(lib.ones(2, 2, 3), lib.ones(3, 4), out=f64(lib, 0)),
    "matmul int": lambda lib: lib.matmul(lib.ones(2, 3, dtype=lib.int64), lib.ones(3, 2, dtype=lib.int64),
                                         out=lib.empty(0)),
    "mv": lambda lib: lib.mv(lib.ones(2, 3), lib.ones(3), out=f64(lib, 2)),
    "mv int": lambda lib: lib.mv(lib.ones(2, 3), lib.ones(3), out=lib.empty(0, dtype=lib.int64)),
    "dot": lambda lib: lib.dot(lib.ones(3), lib.ones(3), out=f64(lib, 0)),
    "inner": lambda lib: lib.inner(lib.ones(2, 3), lib.ones(4, 3), out=f64(lib, 0)),
    "inner 0-d": lambda lib: lib.inner(lib.tensor(2.0), lib.ones(4, 3), out=lib.empty(0, dtype=lib.int64)),
    "outer": lambda lib: lib.outer(lib.ones(2), lib.ones(3), out=lib.empty(0, dtype=lib.int64)),
    "linalg.cross": lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(3), out=lib.empty(0, dtype=lib.int64)),
    "addmm": lambda lib: lib.addmm(lib.ones(2, 4), lib.ones(2, 3), lib.ones(3, 4), out=f64(lib, 0)),
    "addmv": lambda lib: lib.addmv(lib.ones(2), lib.ones(2, 3), lib.ones(3), out=lib.empty(0, dtype=lib.int64)),
    "addr": lambda lib: lib.addr(lib.ones(2, 3), lib.ones(2), lib.ones(3), out=lib.empty(0, dtype=lib.int64)),
    "addbmm": lambda lib: lib.addbmm(lib.ones(2, 4), lib.ones(5, 2, 3), lib.ones(5, 3, 4), out=f64(lib, 0)),
    "baddbmm": lambda lib: lib.baddbmm(lib.ones(5, 2, 4), lib.ones(5, 2, 3), lib.ones(5, 3, 4), out=f64(lib, 0)),
    "addmm_ broadcast": lambda lib: lib.ones(4).addmm_(lib.ones(2, 3), lib.ones(3, 4)),
    "addmv_ 0-d": lambda lib: lib.tensor(1.0).addmv_(lib.ones(2, 3), lib.ones(3)),
    "addr_ 1-D": lambda lib: lib.ones(3).addr_(lib.ones(2), lib.ones(3)),
    "addr_ shape": lambda lib: lib.ones(1, 3).addr_(lib.ones(2), lib.ones(3)),
    "addr_ int self": lambda lib: lib.ones(2, 3, dtype=lib.int64).addr_(lib.ones(2), lib.ones(3)),
    "baddbmm_ broadcast": lambda lib: lib.ones(2, 4).baddbmm_(lib.ones(5, 2, 3), lib.ones(5, 3, 4)),
}


@pytest.mark.parametrize("name", OUT_ERRORS)
def test_out_and_inplace_errors(name):
    with pytest.raises(Exception) as theirs:
        OUT_ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        OUT_ERRORS[name](ember)
    assert str(ours.value) == str(theirs.value)


def test_addbmm_inplace_keeps_self_shape():
    with pytest.raises(RuntimeError, match="Bad in-place call"):  # torch resizes self to [2, 4] here
        ember.ones(4).addbmm_(ember.ones(5, 2, 3), ember.ones(5, 3, 4))


OVERLAPS = {  # (inputs, call(lib, inputs, out)): out shares memory with an input
    "mm out=self": (lambda lib: [T(lib, 3, 3)], lambda lib, x, out: lib.mm(x[0], x[0], out=out(x[0]))),
    "mm out=self.T": (lambda lib: [T(lib, 3, 3)], lambda lib, x, out: lib.mm(x[0], x[0], out=out(x[0].t()))),
    "dot": (lambda lib: [T(lib, 3)], lambda lib, x, out: lib.dot(x[0], x[0], out=out(x[0][1]))),
    "outer": (lambda lib: [T(lib, 9)], lambda lib, x, out: lib.outer(x[0][:3], x[0][3:6], out=out(x[0].view(3, 3)))),
    "addmm_ self in product": (lambda lib: [T(lib, 3, 3)], lambda lib, x, out: out(x[0]).addmm_(x[0], x[0], **AB)),
    "addmv out=vec": (lambda lib: [T(lib, 3), T(lib, 3, 3)], lambda lib, x, o: lib.addmv(x[0], x[1], x[0], out=o(x[0]))),
    "baddbmm out=batch": (lambda lib: [T(lib, 2, 3, 3), T(lib, 2, 3, 3, seed=1)],
                          lambda lib, x, out: lib.baddbmm(x[1], x[0], x[1], out=out(x[0]), **AB)),
    "cross": (lambda lib: [T(lib, 2, 3), T(lib, 2, 3, seed=1)], lambda lib, x, o: lib.linalg.cross(*x, out=o(x[1]))),
}


@pytest.mark.parametrize("name", OVERLAPS)
def test_out_overlapping_an_input(name):
    inputs, call = OVERLAPS[name]

    def run(lib):  # torch writes into a fresh tensor (its own overlapping mm gives zeros)
        x = inputs(lib)
        outs = []
        assert call(lib, x, lambda t: outs.append(t.clone() if lib is torch else t) or outs[0]) is outs[0]
        return outs[0]
    check(run, tol=1e-4)


# ---------------------------------------------------------------------------- out= of the Python compositions
A2 = [[1.0, -2.0], [3.0, 4.0]]
COMPOSED_OUT = {  # torch's out= semantics for functions composed in ember/linalg.py
    "tensordot": lambda lib, **o: lib.tensordot(lib.ones(2, 3), T(lib, 3, 4), 1, **o),
    "tensordot dims": lambda lib, **o: lib.tensordot(T(lib, 2, 3, 4), T(lib, 3, 4, 5, seed=1), ([1, 2], [0, 1]), **o),
    "matrix_norm": lambda lib, **o: lib.linalg.matrix_norm(lib.tensor(A2), **o),
    "matrix_norm 1": lambda lib, **o: lib.linalg.matrix_norm(lib.tensor(A2), 1, **o),
    "matrix_norm nuc keepdim": lambda lib, **o: lib.linalg.matrix_norm(T(lib, 3, 2, 2), "nuc", keepdim=True, **o),
    "matrix_norm dtype": lambda lib, **o: lib.linalg.matrix_norm(lib.tensor(A2), dtype=lib.float64, **o),
    "norm": lambda lib, **o: lib.linalg.norm(lib.tensor(A2), **o),
    "norm vector": lambda lib, **o: lib.linalg.norm(T(lib, 3, 4), 3, 1, **o),
    "norm 2": lambda lib, **o: lib.linalg.norm(lib.tensor(A2), 2, **o),
    "multi_dot": lambda lib, **o: lib.linalg.multi_dot([T(lib, 2, 3), T(lib, 3, 4, seed=1), T(lib, 4, seed=2)], **o),
    "torch.norm fro": lambda lib, **o: lib.norm(lib.tensor(A2), "fro", **o),
    "torch.norm nuc": lambda lib, **o: lib.norm(lib.tensor(A2), "nuc", **o),
    "chain_matmul": lambda lib, **o: lib.chain_matmul(lib.tensor(A2), lib.tensor(A2), **o),
}


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("kind", ["empty", "exact", "strided", "resized", "wrong dtype", "int dtype"])
@pytest.mark.parametrize("name", COMPOSED_OUT)
def test_composed_out(name, kind):
    import warnings

    expected = COMPOSED_OUT[name](torch)
    shape, dtype = tuple(expected.shape), str(expected.dtype).split(".")[1]
    dtype = {"wrong dtype": "float64" if dtype == "float32" else "float32", "int dtype": "int64"}.get(kind, dtype)

    def run(lib):
        out = {"empty": lambda: lib.empty(0, dtype=getattr(lib, dtype)),
               "resized": lambda: lib.full((7,), 9, dtype=getattr(lib, dtype)),
               "strided": lambda: lib.full(shape + (2,), 9, dtype=getattr(lib, dtype))[..., 1]}.get(
            kind, lambda: lib.full(shape, 9, dtype=getattr(lib, dtype)))()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert COMPOSED_OUT[name](lib, out=out) is out and tuple(out.shape) == shape
        resized = [str(w.message) for w in caught if "was resized" in str(w.message)]
        return out, [m.split(" (Triggered")[0] for m in resized]
    try:
        run(torch)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError) as ours:
            run(ember)
        assert str(ours.value) == str(exc)
        return
    check(run, tol=1e-5)
