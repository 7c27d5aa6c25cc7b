"""Autograd: gradients compared with torch's on the same inputs (float64, broadcasting,
non-contiguous inputs), double backward, the engine's errors, hooks, grad mode, views
and in-place ops, and that graphs are freed."""
import gc
import importlib
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def pair(shape, *, low=-2.0, high=2.0, seed=0, transpose=False, dtype="float64"):
    """The same random values as an ember and a torch leaf requiring grad."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(low, high, size=shape)
    if transpose:
        a = np.ascontiguousarray(a.T).T  # non-contiguous strides once viewed
    e = ember.tensor(a.tolist(), dtype=getattr(ember, dtype))
    t = torch.tensor(a.tolist(), dtype=getattr(torch, dtype))
    if transpose and len(shape) == 2:
        e, t = e.t().contiguous().t(), t.t().contiguous().t()
    return e.requires_grad_(), t.requires_grad_()


def check_grads(fn, shapes, *, domain=(-2.0, 2.0), seed=0, transpose=False, atol=1e-7, rtol=1e-6):
    """fn(lib, *inputs) under ember and torch: outputs and input gradients must agree."""
    pairs = [pair(s, low=domain[0], high=domain[1], seed=seed + i, transpose=transpose) for i, s in enumerate(shapes)]
    ein = [p[0] for p in pairs]
    tin = [p[1] for p in pairs]
    try:
        to = fn(torch, *tin)
    except RuntimeError:  # e.g. view() of a transposed input: ember must refuse too
        with pytest.raises(RuntimeError):
            fn(ember, *ein)
        return
    eo = fn(ember, *ein)
    if isinstance(to, (tuple, list)):
        eo, to = eo[0], to[0]
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=rtol, atol=atol)
    rng = np.random.default_rng(seed + 100)
    w = rng.uniform(-1, 1, size=tuple(to.shape)).tolist()
    (eo * ember.tensor(w, dtype=ember.float64)).sum().backward()
    (to * torch.tensor(w, dtype=torch.float64)).sum().backward()
    for i, (e, t) in enumerate(zip(ein, tin)):
        if t.grad is None:
            assert e.grad is None or not e.grad.any(), f"input {i}"
            continue
        assert e.grad is not None, f"input {i} got no gradient"
        assert tuple(e.grad.shape) == tuple(t.grad.shape)
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"input {i}")


# (id, fn, shapes, domain)
UNARY = [
    ("exp", lambda L, x: x.exp(), None), ("exp2", lambda L, x: L.exp2(x), None),
    ("expm1", lambda L, x: x.expm1(), None), ("log", lambda L, x: x.log(), (0.1, 3)),
    ("log2", lambda L, x: x.log2(), (0.1, 3)), ("log10", lambda L, x: x.log10(), (0.1, 3)),
    ("log1p", lambda L, x: x.log1p(), (-0.5, 3)), ("sqrt", lambda L, x: x.sqrt(), (0.1, 3)),
    ("rsqrt", lambda L, x: x.rsqrt(), (0.1, 3)), ("sin", lambda L, x: x.sin(), None),
    ("cos", lambda L, x: x.cos(), None), ("tan", lambda L, x: x.tan(), (-1, 1)),
    ("asin", lambda L, x: x.asin(), (-0.9, 0.9)), ("acos", lambda L, x: x.acos(), (-0.9, 0.9)),
    ("atan", lambda L, x: x.atan(), None), ("sinh", lambda L, x: x.sinh(), None),
    ("cosh", lambda L, x: x.cosh(), None), ("tanh", lambda L, x: x.tanh(), None),
    ("asinh", lambda L, x: x.asinh(), None), ("acosh", lambda L, x: x.acosh(), (1.1, 3)),
    ("atanh", lambda L, x: x.atanh(), (-0.9, 0.9)), ("erf", lambda L, x: x.erf(), None),
    ("erfc", lambda L, x: x.erfc(), None), ("erfinv", lambda L, x: x.erfinv(), (-0.9, 0.9)),
    ("sigmoid", lambda L, x: x.sigmoid(), None), ("reciprocal", lambda L, x: x.reciprocal(), (0.5, 2)),
    ("abs", lambda L, x: x.abs(), None), ("sign", lambda L, x: x.sign() * x, None),
    ("relu", lambda L, x: x.relu(), None), ("floor", lambda L, x: x.floor() + x, None),
    ("ceil", lambda L, x: x.ceil() * x, None), ("trunc", lambda L, x: x.trunc() + x, None),
    ("round", lambda L, x: x.round() + x, None), ("frac", lambda L, x: x.frac(), None),
    ("neg", lambda L, x: -x, None), ("positive", lambda L, x: +x, None),
    ("square", lambda L, x: x.square(), None), ("logit", lambda L, x: x.logit(), (0.1, 0.9)),
    ("logit_eps", lambda L, x: x.logit(eps=0.2), (0.05, 0.95)), ("nan_to_num", lambda L, x: x.nan_to_num(), None),
    ("pow_scalar", lambda L, x: x ** 3, None), ("rpow", lambda L, x: 2 ** x, None),
    ("clamp", lambda L, x: x.clamp(-0.5, 0.7), None), ("clamp_min", lambda L, x: x.clamp(min=0.1), None),
    ("mul_scalar", lambda L, x: 2 * x, None), ("div_scalar", lambda L, x: x / 3, None),
    ("rdiv", lambda L, x: 1 / x, (0.5, 2)), ("rsub", lambda L, x: 1 - x, None),
    ("sum", lambda L, x: x.sum(), None), ("sum_dim", lambda L, x: x.sum(1), None),
    ("sum_keep", lambda L, x: x.sum((0, 1), keepdim=True), None), ("mean", lambda L, x: x.mean(), None),
    ("mean_dim", lambda L, x: x.mean(-1, keepdim=True), None), ("nansum", lambda L, x: x.nansum(0), None),
    ("prod", lambda L, x: x.prod(), None), ("prod_dim", lambda L, x: x.prod(1), None),
    ("amax", lambda L, x: x.amax(1), None), ("amin", lambda L, x: x.amin(0, keepdim=True), None),
    ("max", lambda L, x: x.max(), None), ("min", lambda L, x: x.min(), None),
    ("max_dim", lambda L, x: x.max(1)[0], None), ("min_dim", lambda L, x: x.min(0, keepdim=True).values, None),
    ("median_dim", lambda L, x: x.median(1).values, None), ("kthvalue", lambda L, x: x.kthvalue(2, 1).values, None),
    ("var", lambda L, x: x.var(), None), ("var_dim", lambda L, x: x.var(1, unbiased=False), None),
    ("var_corr", lambda L, x: x.var(0, correction=0, keepdim=True), None),
    ("std", lambda L, x: x.std(), None), ("std_dim", lambda L, x: x.std(1, keepdim=True), None),
    ("var_mean", lambda L, x: L.var_mean(x, 1)[0] + L.var_mean(x, 1)[1], None),
    ("std_mean", lambda L, x: L.std_mean(x, 0)[0] * L.std_mean(x, 0)[1], None),
    ("logsumexp", lambda L, x: x.logsumexp(1), None),
    ("norm", lambda L, x: x.norm(), None), ("norm_dim", lambda L, x: x.norm(dim=1), None),
    ("norm_p1", lambda L, x: x.norm(p=1), None), ("norm_p3", lambda L, x: L.linalg.vector_norm(x, 3, dim=0), None),
    ("norm_inf", lambda L, x: L.linalg.vector_norm(x, float("inf")), None),
    ("cumsum", lambda L, x: x.cumsum(1), None), ("cumprod", lambda L, x: x.cumprod(1), None),
    ("cummax", lambda L, x: x.cummax(1)[0], None), ("cummin", lambda L, x: x.cummin(0).values, None),
    ("logcumsumexp", lambda L, x: x.logcumsumexp(1), None),
    ("view", lambda L, x: x.view(12) * 2, None), ("reshape", lambda L, x: x.reshape(2, 6).exp(), None),
    ("flatten", lambda L, x: x.flatten(), None), ("unflatten", lambda L, x: x.unflatten(1, (2, 2)), None),
    ("squeeze", lambda L, x: x.unsqueeze(0).squeeze(), None), ("unsqueeze", lambda L, x: x.unsqueeze(1), None),
    ("transpose", lambda L, x: x.transpose(0, 1), None), ("t", lambda L, x: x.t(), None),
    ("T", lambda L, x: x.T * 1, None), ("permute", lambda L, x: x.unsqueeze(0).permute(2, 0, 1), None),
    ("movedim", lambda L, x: x.movedim(0, 1), None), ("expand", lambda L, x: x[:, :1].expand(3, 5), None),
    ("narrow", lambda L, x: x.narrow(1, 1, 2), None), ("select", lambda L, x: x.select(1, 2), None),
    ("unfold", lambda L, x: x.unfold(1, 2, 1), None), ("diagonal", lambda L, x: x.diagonal(1), None),
    ("split", lambda L, x: x.split(2, 1)[1], None), ("chunk", lambda L, x: x.chunk(2, 0)[0], None),
    ("unbind", lambda L, x: x.unbind(1)[2], None), ("as_strided", lambda L, x: x.as_strided((2, 2), (1, 2), 1), None),
    ("clone", lambda L, x: x.clone(), None), ("contiguous", lambda L, x: x.t().contiguous(), None),
    ("to", lambda L, x: x.to(L.float32).to(L.float64), None), ("flip", lambda L, x: x.flip(0, 1), None),
    ("fliplr", lambda L, x: x.fliplr(), None), ("roll", lambda L, x: x.roll(1, 1), None),
    ("repeat", lambda L, x: x.repeat(2, 1, 2), None), ("tile", lambda L, x: x.tile((2,)), None),
    ("tril", lambda L, x: x.tril(), None), ("triu", lambda L, x: x.triu(1), None),
    ("index", lambda L, x: x[[0, 2, 2]], None), ("index_mask", lambda L, x: x[x > 0], None),
    ("getitem", lambda L, x: x[1:, ::2], None), ("getitem_int", lambda L, x: x[1, 2:], None),
    ("take", lambda L, x: x.take(L.tensor([0, 5, -1, 5])), None),
    ("index_select", lambda L, x: x.index_select(1, L.tensor([0, 2, 2])), None),
    ("gather", lambda L, x: x.gather(1, L.tensor([[0, 1], [2, 2], [3, 0]])), None),
    ("masked_select", lambda L, x: x.masked_select(x > 0), None),
    ("sort", lambda L, x: x.sort(1)[0], None), ("topk", lambda L, x: x.topk(2, 1).values, None),
    ("msort", lambda L, x: x.msort(), None), ("trace", lambda L, x: x.trace(), None),
    ("diag", lambda L, x: x.diag(), None), ("rot90", lambda L, x: x.rot90(1, (0, 1)), None),
    ("repeat_interleave", lambda L, x: x.repeat_interleave(2, 1), None),
    ("masked_fill", lambda L, x: x.masked_fill(x > 0.5, 1.0), None),
    ("where_scalar", lambda L, x: L.where(x > 0, x, 0.0), None),
    ("cat_self", lambda L, x: L.cat([x, x * 2], 1), None), ("stack_self", lambda L, x: L.stack([x, x], 0), None),
]


@pytest.mark.parametrize("name,fn,domain", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("transpose", [False, True])
def test_unary_gradients_match_torch(name, fn, domain, transpose):
    shape = (4, 3) if transpose else (3, 4)
    check_grads(fn, [shape], domain=domain or (-2.0, 2.0), transpose=transpose)


BINARY = [
    ("add", lambda L, a, b: a + b, None), ("add_alpha", lambda L, a, b: L.add(a, b, alpha=3), None),
    ("sub", lambda L, a, b: a - b, None), ("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=0.5), None),
    ("rsub", lambda L, a, b: L.rsub(a, b, alpha=2), None),
    ("mul", lambda L, a, b: a * b, None), ("div", lambda L, a, b: a / b, (0.5, 2)),
    ("div_floor", lambda L, a, b: L.div(a, b, rounding_mode="floor") + a, (0.5, 2)),
    ("remainder", lambda L, a, b: a % b, (0.5, 2)), ("fmod", lambda L, a, b: L.fmod(a, b), (0.5, 2)),
    ("pow", lambda L, a, b: a ** b, (0.5, 2)), ("atan2", lambda L, a, b: L.atan2(a, b), None),
    ("hypot", lambda L, a, b: L.hypot(a, b), None), ("copysign", lambda L, a, b: L.copysign(a, b), None),
    ("xlogy", lambda L, a, b: L.xlogy(a, b), (0.5, 2)), ("logaddexp", lambda L, a, b: L.logaddexp(a, b), None),
    ("logaddexp2", lambda L, a, b: L.logaddexp2(a, b), None), ("maximum", lambda L, a, b: L.maximum(a, b), None),
    ("minimum", lambda L, a, b: L.minimum(a, b), None), ("fmax", lambda L, a, b: L.fmax(a, b), None),
    ("fmin", lambda L, a, b: L.fmin(a, b), None), ("max_other", lambda L, a, b: L.max(a, b), None),
    ("clamp_tensor", lambda L, a, b: a.clamp(min=b), None),
    ("lerp", lambda L, a, b: L.lerp(a, b, 0.3), None), ("where", lambda L, a, b: L.where(a > b, a, b), None),
    ("float_power", lambda L, a, b: L.float_power(a, b), (0.5, 2)),
]


@pytest.mark.parametrize("name,fn,domain", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("shapes", [[(3, 4), (3, 4)], [(3, 1), (1, 4)], [(4,), (2, 3, 4)]],
                         ids=["same", "broadcast", "rank"])
def test_binary_gradients_match_torch(name, fn, domain, shapes):
    check_grads(fn, shapes, domain=domain or (-2.0, 2.0))


TERNARY = [
    ("addcmul", lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), [(3, 4), (3, 1), (4,)]),
    ("addcdiv", lambda L, a, b, c: L.addcdiv(a, b, c + 3, value=2), [(3, 4), (3, 4), (3, 4)]),
    ("lerp_tensor", lambda L, a, b, c: L.lerp(a, b, c), [(3, 4), (3, 4), (4,)]),
    ("clamp_both", lambda L, a, b, c: L.clamp(a, b - 1, c + 1), [(3, 4), (4,), (3, 1)]),
    ("mm", lambda L, a, b: a.mm(b), [(3, 4), (4, 5)]),
    ("matmul_2d", lambda L, a, b: a @ b, [(3, 4), (4, 5)]),
    ("cross_dim", lambda L, a, b: L.cross(a, b, dim=1), [(4, 3), (4, 3)]),
    ("bmm", lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    ("matmul_bcast", lambda L, a, b: L.matmul(a, b), [(2, 1, 3, 4), (3, 4, 2)]),
    ("matmul_vec_mat", lambda L, a, b: L.matmul(a, b), [(4,), (2, 4, 3)]),
    ("matmul_mat_vec", lambda L, a, b: L.matmul(a, b), [(2, 3, 4), (4,)]),
    ("matmul_vec_vec", lambda L, a, b: L.matmul(a, b), [(4,), (4,)]),
    ("mv", lambda L, a, b: L.mv(a, b), [(3, 4), (4,)]), ("dot", lambda L, a, b: L.dot(a, b), [(4,), (4,)]),
    ("outer", lambda L, a, b: L.outer(a, b), [(3,), (4,)]), ("inner", lambda L, a, b: L.inner(a, b), [(2, 4), (3, 4)]),
    ("addmm", lambda L, s, a, b: L.addmm(s, a, b, beta=0.5, alpha=2), [(3, 5), (3, 4), (4, 5)]),
    ("addmv", lambda L, s, a, b: L.addmv(s, a, b, alpha=2), [(3,), (3, 4), (4,)]),
    ("addr", lambda L, s, a, b: L.addr(s, a, b), [(3, 4), (3,), (4,)]),
    ("baddbmm", lambda L, s, a, b: L.baddbmm(s, a, b, beta=2), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ("addbmm", lambda L, s, a, b: L.addbmm(s, a, b, alpha=0.5), [(3, 5), (2, 3, 4), (2, 4, 5)]),
    ("kron", lambda L, a, b: L.kron(a, b), [(2, 3), (3, 2)]),
    ("cross", lambda L, a, b: L.linalg.cross(a, b), [(4, 3), (4, 3)]),
    ("cat", lambda L, a, b: L.cat([a, b], 0), [(2, 3), (4, 3)]),
    ("stack", lambda L, a, b: L.stack([a, b], 1), [(2, 3), (2, 3)]),
    ("hstack", lambda L, a, b: L.hstack([a, b]), [(2, 3), (2, 1)]),
    ("vstack", lambda L, a, b: L.vstack([a, b]), [(3,), (2, 3)]),
    ("dstack", lambda L, a, b: L.dstack([a, b]), [(2, 3), (2, 3)]),
    ("scatter", lambda L, a, b: a.scatter(1, L.tensor([[0, 1], [2, 0]]), b), [(2, 3), (2, 2)]),
    ("scatter_add", lambda L, a, b: a.scatter_add(1, L.tensor([[0, 0], [2, 0]]), b), [(2, 3), (2, 2)]),
    ("index_add", lambda L, a, b: a.index_add(0, L.tensor([0, 2, 0]), b, alpha=2), [(3, 2), (3, 2)]),
    ("index_copy", lambda L, a, b: a.index_copy(0, L.tensor([2, 0]), b), [(3, 2), (2, 2)]),
    ("index_put", lambda L, a, b: a.index_put((L.tensor([0, 2]),), b), [(3, 2), (2, 2)]),
    ("index_put_acc", lambda L, a, b: a.index_put((L.tensor([0, 0]),), b, accumulate=True), [(3, 2), (2,)]),
    ("masked_scatter", lambda L, a, b: a.masked_scatter(a > 0, b), [(3, 4), (12,)]),
    ("masked_fill_t", lambda L, a, b: a.masked_fill(a > 0, b.sum()), [(3, 4), (2,)]),
    ("diag_embed", lambda L, a: L.diag_embed(a), [(2, 3)]), ("diagflat", lambda L, a: L.diagflat(a), [(2, 2)]),
]


@pytest.mark.parametrize("name,fn,shapes", TERNARY, ids=[t[0] for t in TERNARY])
def test_multi_input_gradients_match_torch(name, fn, shapes):
    check_grads(fn, shapes)


def spd(L, n, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, size=(n, n))
    return (a @ a.T + n * np.eye(n)).tolist()


LINALG = [
    ("inv", lambda L, a: L.linalg.inv(a)),
    ("det", lambda L, a: L.linalg.det(a)),
    ("slogdet", lambda L, a: L.linalg.slogdet(a)[1]),
    ("solve", lambda L, a: L.linalg.solve(a, a[:, :2] * 3)),
    ("solve_vec", lambda L, a: L.linalg.solve(a, a[0] + 1)),
    ("cholesky", lambda L, a: L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=L.float64) * 3)),
    ("cholesky_upper", lambda L, a: L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=L.float64) * 3, upper=True)),
    ("eigvalsh", lambda L, a: L.linalg.eigvalsh(a + a.mT)),
    ("eigh_vals", lambda L, a: L.linalg.eigh(a + a.mT)[0]),
    ("eigh_vecs", lambda L, a: L.linalg.eigh(a + a.mT)[1].abs()),
    ("svdvals", lambda L, a: L.linalg.svdvals(a)),
    ("svd", lambda L, a: sum(t.abs().sum() for t in L.linalg.svd(a[:, :2], full_matrices=False))),
    ("svd_wide", lambda L, a: sum(t.abs().sum() for t in L.linalg.svd(a[:2], full_matrices=False))),
    ("svd_full", lambda L, a: L.linalg.svd(a, full_matrices=True)[1].sum() + L.linalg.svd(a)[0].abs().sum()),
    ("qr", lambda L, a: sum(t.abs().sum() for t in L.linalg.qr(a[:, :2]))),
    ("qr_square", lambda L, a: (L.linalg.qr(a)[0] * L.arange(9.0, dtype=L.float64).reshape(3, 3)).sum()),
    # factorizations (declarations/ops/linalg_factor.yaml; more cases in test_linalg15.py)
    ("lu_factor", lambda L, a: L.linalg.lu_factor(a).LU),
    ("lu", lambda L, a: L.linalg.lu(a)[1].sum() + L.linalg.lu(a)[2].sum()),
    ("lu_solve", lambda L, a: L.linalg.lu_solve(*L.linalg.lu_factor(a), a[:, :2] * 3)),
    ("solve_triangular", lambda L, a: L.linalg.solve_triangular(a, a[:, :2] + 1, upper=True)),
    ("cholesky_ex", lambda L, a: L.linalg.cholesky_ex(a).L),
    ("inv_ex", lambda L, a: L.linalg.inv_ex(a).inverse),
    ("solve_ex", lambda L, a: L.linalg.solve_ex(a, a[0] + 1).result),
]


def test_qr_not_differentiable_for_wide_inputs():
    a = ember.ones(2, 3, dtype=ember.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="not differentiable"):
        ember.linalg.qr(a)[0].sum().backward()


@pytest.mark.parametrize("name,fn", LINALG, ids=[x[0] for x in LINALG])
def test_linalg_gradients_match_torch(name, fn):
    e = ember.tensor(spd(ember, 3), dtype=ember.float64).requires_grad_()
    t = torch.tensor(spd(torch, 3), dtype=torch.float64).requires_grad_()
    fn(ember, e).sum().backward()
    fn(torch, t).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,fn,domain", [u for u in UNARY if u[0] in {
    "exp", "log", "sin", "tanh", "sigmoid", "sum_dim", "mean", "prod_dim", "var_dim", "norm", "cumsum", "cumprod",
    "max_dim", "logsumexp", "index", "getitem", "unfold", "as_strided", "select", "expand", "relu"}],
    ids=lambda v: v if isinstance(v, str) else "")
def test_gradcheck(name, fn, domain):
    x = ember.tensor(np.random.default_rng(1).uniform(*(domain or (-2, 2)), size=(3, 4)).tolist(),
                     dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: fn(ember, t), (x,))


@pytest.mark.parametrize("fn", [
    lambda L, x: (x * x * x).sum(), lambda L, x: x.exp().sin().sum(), lambda L, x: (x @ x).trace(),
    lambda L, x: x.tanh().pow(2).mean(), lambda L, x: (x / (x * x + 1)).sum(), lambda L, x: x.sigmoid().prod(),
    lambda L, x: x.log1p().var(), lambda L, x: L.logsumexp(x, 1).sum(), lambda L, x: x.norm(),
])
def test_double_backward_matches_torch(fn):
    e, t = pair((3, 3), low=0.1, high=1.0)
    (ge,) = ember.autograd.grad(fn(ember, e), e, create_graph=True)
    (gt,) = torch.autograd.grad(fn(torch, t), t, create_graph=True)
    np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-7)
    (gge,) = ember.autograd.grad(ge.sum(), e)
    (ggt,) = torch.autograd.grad(gt.sum(), t)
    np.testing.assert_allclose(gge.numpy(), ggt.numpy(), rtol=1e-6, atol=1e-9)


def test_gradgradcheck():
    x = ember.tensor([[0.5, 1.5], [2.0, 0.3]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t: (t.exp() * t).sum(1), (x,))


# ---- tensor state ----

def test_leaf_state_and_grad_fn_names():
    x = ember.ones(2, 2, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    y = x * 2
    assert not y.is_leaf and y.requires_grad
    tx = torch.ones(2, 2, requires_grad=True)
    pairs = [(lambda L, a: a * 2), (lambda L, a: a + a), (lambda L, a: a.sum()), (lambda L, a: a.sum(0)),
             (lambda L, a: a.exp()), (lambda L, a: a.view(4)), (lambda L, a: a.t()),
             (lambda L, a: a[0]), (lambda L, a: a.mean()), (lambda L, a: a.max(0)[0]), (lambda L, a: a.relu())]
    for f in pairs:
        assert f(ember, x).grad_fn.name() == f(torch, tx).grad_fn.name()
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert y.grad_fn.next_functions[0][0].variable is x
    assert y.grad_fn is y.grad_fn
    assert "MulBackward0" in repr(y.grad_fn)


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="floating point"):
        ember.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    y.requires_grad_(True)  # already true: fine
    assert ember.tensor([1.0]).requires_grad is False
    assert (ember.ones(2) + x).requires_grad
    assert not (ember.ones(2) + x).detach().requires_grad
    assert ember.zeros_like(x).requires_grad is False
    assert x.argmax().requires_grad is False and (x > 1).requires_grad is False
    assert x.data.requires_grad is False and x.data.is_leaf


def test_detach_shares_memory_and_version():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert d.data_ptr() == x.data_ptr()
    v = x._version
    d.add_(1)
    assert x._version == v + 1 and x.tolist() == [2.0, 3.0]
    y = x * 1
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad


def test_grad_setter_checks():
    x = ember.zeros(2, requires_grad=True)
    x.grad = ember.ones(2)
    assert x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = ember.ones(3)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = ember.ones(2, dtype=ember.float64)
    x.grad = None
    assert x.grad is None


# ---- backward and grad ----

def test_accumulates_and_frees_graph():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    z = (x * 3).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert x.grad.tolist() == [8.0, 10.0, 12.0]


def test_backward_errors_match_torch():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        ember.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(ember.ones(2))
    y = x * 2
    y.backward(ember.tensor([1.0, 0.0, 2.0]))
    assert x.grad.tolist() == [2.0, 0.0, 4.0]


def test_autograd_grad():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    w = ember.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).sum()
    gx, gw = ember.autograd.grad(y, (x, w))
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None
    u = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        ember.autograd.grad((x * 2).sum(), (x, u))
    g = ember.autograd.grad((x * 2).sum(), (x, u), allow_unused=True)
    assert g[1] is None and g[0].tolist() == [2.0, 2.0]
    g = ember.autograd.grad((x * 2).sum(), (x, u), materialize_grads=True)
    assert g[1].tolist() == [0.0, 0.0]
    # a non-leaf input
    h = x * 3
    (gh,) = ember.autograd.grad((h * h).sum(), h)
    assert gh.tolist() == (2 * h).tolist()


def test_backward_inputs_only_accumulates_into_them():
    x = ember.tensor([1.0], requires_grad=True)
    w = ember.tensor([2.0], requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [1.0]


def test_diamond_and_shared_inputs():
    for L in (ember, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x * 2
        b = x.exp()
        c = a * b + a + x
        c.sum().backward()
        if L is ember:
            e = x.grad.tolist()
        else:
            assert np.allclose(e, x.grad.tolist())


def test_same_tensor_to_two_leaves_is_not_shared():
    x = ember.ones(2, requires_grad=True)
    y = ember.ones(2, requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(5)
    assert y.grad.tolist() == [1.0, 1.0]


def test_dtype_of_gradient_follows_input():
    x = ember.ones(2, dtype=ember.float32, requires_grad=True)
    w = ember.ones(2, dtype=ember.float64, requires_grad=True)
    (x * w).sum().backward()
    assert x.grad.dtype == ember.float32 and w.grad.dtype == ember.float64


def test_integer_and_python_number_operands():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    y = (x * ember.tensor([3, 4]) + 2 ** 2 - x / 2).sum()
    y.backward()
    assert x.grad.tolist() == [2.5, 3.5]


# ---- in-place ----

def test_inplace_on_leaf_raises():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 2
    with pytest.raises(RuntimeError, match="view of a leaf"):
        x[0:1].mul_(2)
    with ember.no_grad():
        x.add_(1)  # allowed without grad mode
    assert x.tolist() == [2.0, 2.0]


def test_modified_saved_tensor_raises():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()
    z = y * 2
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    a = x * 1
    b = a.sin()
    a.mul_(2)
    with pytest.raises(RuntimeError, match="is at version [0-9]+; expected version"):
        b.sum().backward()


def test_out_requires_grad_raises():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out="):
        ember.exp(x, out=ember.empty(2))


@pytest.mark.parametrize("prog", [
    "y = x * 1; y.mul_(2); y.add_(x); out = y",
    "y = x.clone(); y[1] = 0; out = y * x",
    "y = x * 2; y[0, 1:] = x[1, :2] * 3; out = y",
    "y = x * 2; y[:, 0].mul_(3); out = y.exp()",
    "y = x * 1; y.view(-1)[2:4].add_(x[0, :2]); out = y",
    "y = x.clone(); y[y > 1] = 0.5; out = y.sin()",
    "y = x * 1; y[[0, 1], [2, 0]] = x[0, :2]; out = y",
    "y = x.t().contiguous(); y.t()[0].mul_(2); out = y.relu()",
    "y = L.zeros(2, 3, dtype=L.float64); y[0] = x[1] * 2; out = y * 2",
    "y = x * 1; v = y[1]; v.exp_(); out = y.sum(0) + v",
])
def test_inplace_and_views_match_torch(prog):
    grads = []
    for L in (ember, torch):
        x = L.tensor([[0.5, 1.5, 2.0], [-1.0, 0.25, 3.0]], dtype=L.float64, requires_grad=True)
        env = {"x": x, "L": L}
        exec(prog, env)
        out = env["out"]
        (out * L.arange(out.numel(), dtype=L.float64).reshape(out.shape)).sum().backward()
        grads.append((out.detach().numpy().copy(), x.grad.numpy().copy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_random_inplace_cuts_history():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# ---- hooks ----

def test_tensor_hooks():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[30.0, 30.0]] and x.grad.tolist() == [30.0, 30.0]
    h.remove()
    (x * 1).sum().backward()
    assert len(seen) == 1
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ember.ones(1).register_hook(lambda g: g)


def test_retain_grad():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    assert y.retains_grad
    z = (y * 3).sum()
    z.backward()
    assert y.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        ember.ones(1).retain_grad()


def test_node_hooks_and_prehooks():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda gout: calls.append("pre") or (gout[0] * 2,))
    h = y.grad_fn.register_hook(lambda gin, gout: calls.append("post"))
    y.sum().backward(retain_graph=True)
    assert calls == ["pre", "post"] and x.grad.tolist() == [4.0, 4.0]
    h.remove()
    y.sum().backward()
    assert calls == ["pre", "post", "pre"]


def test_hook_order_matches_torch():
    orders = []
    for L in (ember, torch):
        order = []
        x = L.tensor([1.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: order.append("tensor") or None)
        y.retain_grad()
        y.grad_fn.register_prehook(lambda g: order.append("pre") or None)
        y.grad_fn.register_hook(lambda gi, go: order.append("post") or None)
        y.backward()
        orders.append(order)
    assert orders[0] == orders[1]


# ---- grad mode ----

def test_grad_modes():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    assert ember.is_grad_enabled()

    @ember.no_grad()
    def f():
        return x * 2
    assert not f().requires_grad
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    ember.set_grad_enabled(False)
    assert not ember.is_grad_enabled()
    ember.set_grad_enabled(True)
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not (x * 2).requires_grad
    assert not ember.is_inference_mode_enabled()

    @ember.inference_mode()
    def g():
        return x + 1
    assert not g().requires_grad

    @ember.no_grad()
    def gen():
        yield (x * 2).requires_grad
    assert list(gen()) == [False]


def test_grad_mode_is_thread_local():
    result = []
    with ember.no_grad():
        t = threading.Thread(target=lambda: result.append(ember.is_grad_enabled()))
        t.start()
        t.join()
    assert result == [True]


# ---- custom Functions ----

class Exp(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class LinearFunction(ember.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


def test_custom_function_exp():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    assert type(y.grad_fn).__name__ == "ExpBackward" and y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()
    assert not Exp.apply(ember.ones(1)).requires_grad


def test_linear_function_matches_torch_and_gradchecks():
    rng = np.random.default_rng(0)
    a, w, b = rng.normal(size=(4, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2,))
    x = ember.tensor(a.tolist(), dtype=ember.float64, requires_grad=True)
    wt = ember.tensor(w.tolist(), dtype=ember.float64, requires_grad=True)
    bt = ember.tensor(b.tolist(), dtype=ember.float64, requires_grad=True)
    out = LinearFunction.apply(x, wt, bt)
    tx = torch.tensor(a, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    tout = torch.nn.functional.linear(tx, tw, tb)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    for e, t in ((x, tx), (wt, tw), (bt, tb)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())
    assert ember.autograd.gradcheck(LinearFunction.apply, (x.detach().requires_grad_(), wt.detach().requires_grad_()))
    only_w = LinearFunction.apply(x.detach(), wt)
    assert only_w.grad_fn.needs_input_grad == (False, True)


def test_custom_function_mark_dirty_non_differentiable_and_materialize():
    class AddOneInplace(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = ember.ones(2, requires_grad=True)
    b = a * 1
    c = AddOneInplace.apply(b)
    assert c is b and b.grad_fn.name() == "AddOneInplaceBackward"
    c.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]

    class SortWithIdx(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            ctx.set_materialize_grads(False)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            assert gi is None  # materialize_grads off
            (i,) = ctx.saved_tensors
            return ember.zeros_like(gv).scatter(0, i, gv)

    x = ember.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, i = SortWithIdx.apply(x)
    assert not i.requires_grad and v.requires_grad
    (v * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 2.0]


def test_non_differentiable_outputs_get_zero_gradients():
    class TwoOut(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mask = x > 0
            ctx.mark_non_differentiable(mask)
            return x * 2, mask

        @staticmethod
        def backward(ctx, g, gmask):
            assert gmask is not None and not gmask.any()
            return g * 2

    x = ember.tensor([1.0, -1.0], requires_grad=True)
    y, m = TwoOut.apply(x)
    assert not m.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_custom_function_errors():
    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Wrong.apply(x, 2).sum().backward()

    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @ember.autograd.function.once_differentiable
        def backward(ctx, g):
            return g * 2

    y = Double.apply(x)
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 2.0] and not g.requires_grad


def test_custom_function_returning_input_gives_a_view_with_history():
    class Identity(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = ember.ones(2, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


# ---- memory ----

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs /proc")
def test_graphs_are_freed():
    """10,000 forward/backward iterations (views, indexing, a custom Function, hooks):
    the process does not grow."""
    x = ember.randn(64, requires_grad=True)
    w = ember.randn(64, requires_grad=True)

    def step():
        y = (x * w).exp().sum() + (x[2:5] ** 2).mean() + Exp.apply(w[:8]).sum()
        h = x.view(8, 8).t()
        y = y + (h @ h).trace() * 1e-3
        y.register_hook(lambda g: g)
        y.backward()

    for _ in range(500):
        step()
    gc.collect()
    before = rss_bytes()
    for _ in range(10_000):
        step()
    gc.collect()
    grown = rss_bytes() - before
    if "libasan" not in __import__("os").environ.get("LD_PRELOAD", ""):  # ASan's quarantine holds freed memory
        assert grown < 4 * 2**20, f"grew {grown} bytes"


def test_graph_dies_with_its_output():
    import weakref

    class F(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    x = ember.ones(2, requires_grad=True)
    y = F.apply(x)
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


# ---- every derivative is exercised ----

def graph_names(t):
    """The names of every node reachable from t.grad_fn."""
    seen, stack, names, kept = set(), [t.grad_fn], set(), []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        kept.append(n)  # a freed node object's id may come back for another node
        names.add(n.name())
        stack.extend(f for f, _ in n.next_functions)
    return names


def _declared_node_names():
    import pathlib
    import sys

    root = pathlib.Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from tools.codegen.emit_autograd import node_class_names
    from tools.codegen.load import load

    model = load(root)
    classes = node_class_names(model)
    return {d.name: d.node or classes[d.name] for d in model.derivatives if d.differentiable}


EXTRA = [  # ops the tables above do not reach
    lambda L, x: L.nanmean(x, 1), lambda L, x: L.aminmax(x, dim=0)[1], lambda L, x: x.trace(),
    lambda L, x: x.median(), lambda L, x: L.kthvalue(x, 1, 0)[0], lambda L, x: x.sort(stable=True, dim=0)[0],
    lambda L, x: x.masked_fill(x > 0, L.tensor(1.0, dtype=L.float64) * x.sum()),
    lambda L, x: x.clone().fill_(2.0) + x, lambda L, x: x.clone().zero_() + x,
    lambda L, x: x.clone().copy_(x * 3), lambda L, x: x.index_fill(1, L.tensor([0, 2]), -1.0),
    lambda L, x: x.index_fill(1, L.tensor([1]), x.sum()), lambda L, x: x.clone().fill_(x[0, 0]),
    lambda L, x: x.clone().uniform_() + x, lambda L, x: x.clone().normal_() + x,
    lambda L, x: x.clone().bernoulli_(0.5) + x, lambda L, x: x.clone().bernoulli_(x.sigmoid().detach()) + x,
    lambda L, x: x.clone().random_(0, 3) + x, lambda L, x: x.clone().random_(3) + x,
    lambda L, x: x.clone().random_() * 0 + x, lambda L, x: x.clone().exponential_() + x,
    lambda L, x: x.clone().geometric_(0.5) + x, lambda L, x: x.clone().cauchy_() + x,
    lambda L, x: x.clone().log_normal_() + x, lambda L, x: x.squeeze(0), lambda L, x: x.unsqueeze(0).squeeze((0,)),
    lambda L, x: x.view_as(x), lambda L, x: x.reshape_as(x), lambda L, x: x.expand_as(x),
    lambda L, x: x.broadcast_to((2, 3, 4)), lambda L, x: x.movedim([0], [1]), lambda L, x: x.flipud(),
    lambda L, x: x.split([1, 3], 1)[0], lambda L, x: x.tensor_split(2, 1)[1],
    lambda L, x: x.tensor_split([1], 1)[0], lambda L, x: x.tensor_split(L.tensor([1]), 1)[1],
    lambda L, x: x.to(L.float32, copy=True).double(), lambda L, x: x.to(x), lambda L, x: x.to("cpu", L.float32),
    lambda L, x: L.div(x, 2.0, rounding_mode="trunc") + x, lambda L, x: x.sgn() * x,
    lambda L, x: L.clamp_max(x, L.zeros(4, dtype=L.float64)), lambda L, x: L.min(x, x.flip(0)),
    lambda L, x: x.norm(dim=1, p=2), lambda L, x: x.index_put_((L.tensor([0]),), L.ones(4, dtype=L.float64)) if False else x.clone().index_put_((L.tensor([0]),), x[1]),
    lambda L, x: x.std(0, True, True), lambda L, x: x.var(1, True, True), lambda L, x: x.std(correction=2),
    lambda L, x: x.sum(dtype=L.float64), lambda L, x: x.prod(1, keepdim=True), lambda L, x: L.var_mean(x)[0],
    lambda L, x: L.mv(x, x[0]), lambda L, x: L.vdot(x[0], x[1]), lambda L, x: x.round(decimals=1) + x,
    lambda L, x: x.scatter(1, L.tensor([[0], [2], [1]]), 0.5), lambda L, x: x.clamp_min(L.zeros(4, dtype=L.float64)),
    lambda L, x: x.repeat_interleave(L.tensor([1, 0, 2, 1]), 1), lambda L, x: x.repeat_interleave(L.tensor(2)),
    lambda L, x: L.take_along_dim(x, L.tensor([[0, 3], [1, 1], [2, 0]]), 1),
    lambda L, x: L.take_along_dim(x, L.tensor([[0], [2]]).unsqueeze(0), 0) if False else L.take_along_dim(x, L.tensor([1, 5, 11])),
    lambda L, x: L.take_along_dim(x, L.tensor([[2, 0, 1, 1]]), 0),
    lambda L, x: L.meshgrid(x[0], x[1, :2], indexing="ij")[0] * L.meshgrid(x[0], x[1, :2], indexing="xy")[1].t(),
    lambda L, x: L.cartesian_prod(x[0], x[1, :2]), lambda L, x: L.cartesian_prod(x[2]),
    lambda L, x: L.nanmedian(x), lambda L, x: L.nanmedian(x, 1)[0], lambda L, x: x.mode(1).values,
    *[(lambda how, inc: lambda L, x: x[:2].scatter_reduce(1, L.tensor([[0, 0, 2, 0], [1, 1, 1, 1]]), x[1:] * 2, how,
                                                          include_self=inc))(how, inc)
      for how in ("sum", "mean", "amax", "amin") for inc in (True, False)],
    lambda L, x: x[:2].scatter_reduce(1, L.tensor([[0, 0], [1, 1]]), x[:2, :2].round(), "amax"),  # ties
]


@pytest.mark.parametrize("k", range(len(EXTRA)))
def test_extra_gradients_match_torch(k):
    check_grads(EXTRA[k], [(3, 4)], seed=k) if k not in RANDOM_EXTRA else check_random_cut(EXTRA[k])


RANDOM_EXTRA = {13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}


def check_random_cut(fn):
    """Random in-place ops cut the history: the gradient flows only around them."""
    e, t = pair((3, 4))
    fn(ember, e).sum().backward()
    fn(torch, t).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())


def test_mode_and_normal_gradients():
    x = ember.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]], requires_grad=True)
    x.mode(1).values.sum().backward()
    t = torch.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]], requires_grad=True)
    t.mode(1).values.sum().backward()
    assert x.grad.tolist() == t.grad.tolist()
    mean = ember.zeros(3, requires_grad=True)
    std = ember.ones(3, requires_grad=True)
    s = ember.normal(mean, std)
    s.sum().backward()
    assert mean.grad.tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(std.grad.numpy(), s.detach().numpy(), rtol=1e-6)
    m2 = ember.zeros(3, requires_grad=True)
    ember.normal(m2, 2.0).sum().backward()
    assert m2.grad.tolist() == [1.0, 1.0, 1.0]
    s2 = ember.normal(1.0, std)
    std.grad = None
    s2.sum().backward()
    np.testing.assert_allclose(std.grad.numpy(), (s2.detach() - 1).numpy(), rtol=1e-6)


def test_scatter_reduce_prod_gradient_is_not_implemented():
    x = ember.ones(2, 3, requires_grad=True)
    y = x.scatter_reduce(1, ember.tensor([[0, 1], [2, 2]]), x[:, :2] * 2, "prod")
    with pytest.raises(NotImplementedError, match="scatter_reduce"):
        y.sum().backward()


def test_ops_without_a_derivative_refuse_to_record():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for 'floor_divide' is not implemented"):
        x // 2
    with pytest.raises(RuntimeError, match="not implemented"):
        ember.unique(x)
    assert not (x.detach() // 2).requires_grad
    assert (+x) is x  # positive returns its input, as torch's
    with ember.no_grad():
        assert (x // 2).tolist() == [0.0, 0.0, 0.0]


def test_every_derivative_is_exercised():
    """Each formula of declarations/derivatives.yaml runs in some test of this module."""
    declared = _declared_node_names()
    seen = set()
    tables = [(fn, [(3, 4)]) for _, fn, _ in UNARY] + [(fn, [(3, 4), (3, 4)]) for _, fn, _ in BINARY]
    tables += [(fn, shapes) for _, fn, shapes in TERNARY] + [(fn, [(3, 4)]) for fn in EXTRA]
    for fn, shapes in tables:
        ins = [pair(s, low=0.5, high=2.0)[0] for s in shapes]
        try:
            out = fn(ember, *ins)
        except RuntimeError:
            continue
        seen |= graph_names(out[0] if isinstance(out, (tuple, list)) else out)
    for _, fn in LINALG:
        seen |= graph_names(fn(ember, ember.tensor(spd(ember, 3), dtype=ember.float64, requires_grad=True)))
    for prog in test_inplace_and_views_match_torch.pytestmark[0].args[1]:
        x = ember.tensor([[0.5, 1.5, 2.0], [-1.0, 0.25, 3.0]], dtype=ember.float64, requires_grad=True)
        env = {"x": x, "L": ember}
        exec(prog, env)
        seen |= graph_names(env["out"])
    for sample in (lambda m, s: ember.normal(m, s), lambda m, s: ember.normal(m, 2.0), lambda m, s: ember.normal(1.0, s)):
        seen |= graph_names(sample(ember.zeros(2, requires_grad=True), ember.ones(2, requires_grad=True)))
    # nn's, complex numbers' and the FFT's ops are tested in their own modules, which list graphs
    # covering their formulas
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    for module in ("test_nn_ops", "test_complex", "test_fft15", "test_special15",
                   "test_distributions_gamma15", "test_linalg_complex15"):
        for make in importlib.import_module(module).DERIVATIVE_GRAPHS:
            seen |= graph_names(make())
    missing = sorted(name for name, node in declared.items() if node not in seen)
    assert not missing, f"derivatives no test runs: {missing}"


def test_backward_from_several_threads_into_shared_leaves():
    x = ember.zeros(1000, requires_grad=True)
    w = ember.arange(1000.0)

    def work():
        for _ in range(100):
            (x * w).sum().backward()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert x.grad.tolist() == (w * 400).tolist()
