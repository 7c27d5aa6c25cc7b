"""Forward-mode AD (ember.autograd.forward_ad, ember.func.jvp/jacfwd/hessian) against
torch's: tangents of every rule (linear, element_wise, the transposed backward), views
and in-place ops, reverse over forward and forward over reverse, and the errors."""
import sys

import numpy as np
import pytest
import torch

import ember
import ember.autograd.forward_ad as fwAD
import torch.autograd.forward_ad as tfwAD

RNG = np.random.default_rng(0)


def _arr(shape, kind="f", dtype=np.float64):
    if kind == "pos":
        return (RNG.random(shape) + 0.5).astype(dtype)
    if kind == "unit":
        return (RNG.random(shape) * 1.6 - 0.8).astype(dtype)
    if kind == "i":
        return RNG.integers(0, 3, shape).astype(np.int64)
    if kind == "b":
        return RNG.random(shape) > 0.5
    if kind == "spd":
        a = RNG.standard_normal(shape)
        return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# (name, function of the module (ember or torch) and the inputs, input specs: (shape, kind));
# float inputs are made dual, integer/bool ones are passed as they are.
CASES = [
    # element_wise: unary
    *[(n, (lambda n: lambda M, x: getattr(M, n)(x))(n), [((3, 4), k)]) for n, k in [
        ("exp", "f"), ("log", "pos"), ("log1p", "pos"), ("expm1", "f"), ("sqrt", "pos"), ("rsqrt", "pos"),
        ("sin", "f"), ("cos", "f"), ("tan", "unit"), ("asin", "unit"), ("acos", "unit"), ("atan", "f"),
        ("sinh", "f"), ("cosh", "f"), ("tanh", "f"), ("asinh", "f"), ("atanh", "unit"), ("erf", "f"),
        ("erfc", "f"), ("erfinv", "unit"), ("sigmoid", "f"), ("reciprocal", "pos"), ("abs", "f"), ("neg", "f"),
        ("square", "f"), ("relu", "f"), ("floor", "f"), ("sign", "f"), ("frac", "f"), ("exp2", "f"),
        ("log2", "pos"), ("log10", "pos"), ("trunc", "f")]],
    # element_wise: binary with broadcasting, Python scalars
    ("add", lambda M, x, y: M.add(x, y, alpha=2), [((3, 4), "f"), ((4,), "f")]),
    ("sub", lambda M, x, y: x - y, [((3, 1), "f"), ((4,), "f")]),
    ("mul", lambda M, x, y: x * y, [((3, 4), "f"), ((3, 1), "f")]),
    ("div", lambda M, x, y: x / y, [((3, 4), "f"), ((4,), "pos")]),
    ("rsub", lambda M, x: 2 - x, [((3,), "f")]),
    ("pow", lambda M, x, y: M.pow(x, y), [((3, 4), "pos"), ((4,), "f")]),
    ("pow_scalar", lambda M, x: x ** 3, [((3, 4), "f")]),
    ("rpow", lambda M, x: 2 ** x, [((3, 4), "f")]),
    ("atan2", lambda M, x, y: M.atan2(x, y), [((3, 4), "f"), ((3, 4), "pos")]),
    ("hypot", lambda M, x, y: M.hypot(x, y), [((3, 4), "pos"), ((3, 4), "pos")]),
    ("maximum", lambda M, x, y: M.maximum(x, y), [((3, 4), "f"), ((4,), "f")]),
    ("clamp", lambda M, x: M.clamp(x, -0.5, 0.5), [((3, 4), "f")]),
    ("clamp_t", lambda M, x, lo: M.clamp(x, min=lo), [((3, 4), "f"), ((4,), "f")]),
    ("lerp", lambda M, x, y, w: M.lerp(x, y, w), [((3, 4), "f"), ((3, 4), "f"), ((4,), "unit")]),
    ("addcmul", lambda M, x, y, z: M.addcmul(x, y, z, value=0.5), [((3, 4), "f"), ((4,), "f"), ((3, 1), "f")]),
    ("addcdiv", lambda M, x, y, z: M.addcdiv(x, y, z, value=0.5), [((3, 4), "f"), ((4,), "f"), ((3, 1), "pos")]),
    ("where", lambda M, c, x, y: M.where(c, x, y), [((3, 4), "b"), ((3, 4), "f"), ((4,), "f")]),
    ("masked_fill", lambda M, x, m: x.masked_fill(m, 2.0), [((3, 4), "f"), ((3, 4), "b")]),
    ("xlogy", lambda M, x, y: M.xlogy(x, y), [((3, 4), "f"), ((3, 4), "pos")]),
    ("logaddexp", lambda M, x, y: M.logaddexp(x, y), [((3, 4), "f"), ((3, 4), "f")]),
    ("remainder", lambda M, x, y: M.remainder(x, y), [((3, 4), "f"), ((3, 4), "pos")]),
    # activations
    *[(n, (lambda n: lambda M, x: getattr(M.nn.functional, n)(x))(n), [((3, 4), "f")]) for n in [
        "gelu", "silu", "mish", "softplus", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardswish",
        "hardsigmoid", "logsigmoid", "relu6", "softsign", "tanhshrink"]],
    # linear: views and shape ops
    ("view", lambda M, x: x.view(4, 3), [((3, 4), "f")]),
    ("reshape_t", lambda M, x: x.t().reshape(-1), [((3, 4), "f")]),
    ("permute", lambda M, x: x.permute(2, 0, 1), [((2, 3, 4), "f")]),
    ("expand", lambda M, x: x.expand(3, 4), [((1, 4), "f")]),
    ("select_slice", lambda M, x: x[1, 1:3], [((3, 4), "f")]),
    ("index", lambda M, x, i: x[i], [((3, 4), "f"), ((5,), "i")]),
    ("squeeze", lambda M, x: x.unsqueeze(0).squeeze(0).flatten(), [((3, 4), "f")]),
    ("narrow", lambda M, x: x.narrow(1, 1, 2), [((3, 4), "f")]),
    ("diagonal", lambda M, x: x.diagonal(), [((3, 4), "f")]),
    ("unfold", lambda M, x: x.unfold(1, 2, 1), [((3, 4), "f")]),
    ("split", lambda M, x: x.split(2, dim=1), [((3, 4), "f")]),
    ("chunk", lambda M, x: x.chunk(3, 0), [((3, 4), "f")]),
    ("unbind", lambda M, x: x.unbind(1), [((3, 4), "f")]),
    ("cat", lambda M, x, y: M.cat([x, y], 0), [((3, 4), "f"), ((2, 4), "f")]),
    ("stack", lambda M, x, y: M.stack([x, y], 1), [((3, 4), "f"), ((3, 4), "f")]),
    ("flip_roll", lambda M, x: M.roll(M.flip(x, [0]), 1, 1), [((3, 4), "f")]),
    ("repeat", lambda M, x: x.repeat(2, 1), [((3, 4), "f")]),
    ("tril", lambda M, x: M.tril(x), [((3, 4), "f")]),
    ("gather", lambda M, x, i: M.gather(x, 1, i), [((3, 4), "f"), ((3, 2), "i")]),
    ("index_select", lambda M, x, i: M.index_select(x, 1, i), [((3, 4), "f"), ((5,), "i")]),
    ("masked_select", lambda M, x, m: M.masked_select(x, m), [((3, 4), "f"), ((3, 4), "b")]),
    ("scatter_add", lambda M, x, i, s: x.scatter_add(0, i, s), [((3, 4), "f"), ((2, 4), "i"), ((2, 4), "f")]),
    ("index_add", lambda M, x, i, s: x.index_add(0, i, s), [((3, 4), "f"), ((5,), "i"), ((5, 4), "f")]),
    ("index_put", lambda M, x, i, v: x.index_put((i,), v, accumulate=True), [((3, 4), "f"), ((5,), "i"),
                                                                               ((5, 4), "f")]),
    ("to", lambda M, x: x.to(M.float32), [((3, 4), "f")]),
    ("clone_contig", lambda M, x: x.t().contiguous(), [((3, 4), "f")]),
    ("sum", lambda M, x: x.sum(), [((3, 4), "f")]),
    ("sum_dim", lambda M, x: x.sum(1, keepdim=True), [((3, 4), "f")]),
    ("mean", lambda M, x: x.mean((0,)), [((3, 4), "f")]),
    ("cumsum", lambda M, x: x.cumsum(1), [((3, 4), "f")]),
    ("trace", lambda M, x: M.trace(x), [((3, 3), "f")]),
    # the transposed backward (default rule)
    ("prod", lambda M, x: x.prod(1), [((3, 4), "pos")]),
    ("amax", lambda M, x: x.amax(1), [((3, 4), "f")]),
    ("max_dim", lambda M, x: x.max(1), [((3, 4), "f")]),
    ("sort", lambda M, x: x.sort(1), [((3, 4), "f")]),
    ("topk", lambda M, x: x.topk(2), [((3, 4), "f")]),
    ("var", lambda M, x: x.var(1), [((3, 4), "f")]),
    ("std", lambda M, x: x.std(), [((3, 4), "f")]),
    ("norm", lambda M, x: M.linalg.vector_norm(x, 3, dim=1), [((3, 4), "f")]),
    ("logsumexp", lambda M, x: M.logsumexp(x, 1), [((3, 4), "f")]),
    ("cumprod", lambda M, x: x.cumprod(1), [((3, 4), "pos")]),
    ("mm", lambda M, x, y: x @ y, [((3, 4), "f"), ((4, 2), "f")]),
    ("matmul_b", lambda M, x, y: M.matmul(x, y), [((2, 3, 4), "f"), ((4, 5), "f")]),
    ("bmm", lambda M, x, y: M.bmm(x, y), [((2, 3, 4), "f"), ((2, 4, 2), "f")]),
    ("mv", lambda M, x, y: M.mv(x, y), [((3, 4), "f"), ((4,), "f")]),
    ("dot", lambda M, x, y: M.dot(x, y), [((4,), "f"), ((4,), "f")]),
    ("addmm", lambda M, b, x, y: M.addmm(b, x, y, beta=0.5, alpha=2), [((2,), "f"), ((3, 4), "f"), ((4, 2), "f")]),
    ("outer", lambda M, x, y: M.outer(x, y), [((3,), "f"), ((4,), "f")]),
    ("linear", lambda M, x, w, b: M.nn.functional.linear(x, w, b), [((2, 4), "f"), ((3, 4), "f"), ((3,), "f")]),
    ("softmax", lambda M, x: M.softmax(x, 1), [((3, 4), "f")]),
    ("log_softmax", lambda M, x: M.log_softmax(x, 0), [((3, 4), "f")]),
    ("layer_norm", lambda M, x, w, b: M.nn.functional.layer_norm(x, (4,), w, b), [((3, 4), "f"), ((4,), "f"),
                                                                                   ((4,), "f")]),
    ("batch_norm", lambda M, x, w, b: M.nn.functional.batch_norm(x, None, None, w, b, training=True),
     [((4, 3), "f"), ((3,), "f"), ((3,), "f")]),
    ("group_norm", lambda M, x: M.nn.functional.group_norm(x, 2), [((2, 4, 3), "f")]),
    ("conv2d", lambda M, x, w, b: M.nn.functional.conv2d(x, w, b, padding=1), [((1, 2, 5, 5), "f"),
                                                                               ((3, 2, 3, 3), "f"), ((3,), "f")]),
    ("max_pool2d", lambda M, x: M.nn.functional.max_pool2d(x, 2), [((1, 2, 4, 4), "f")]),
    ("avg_pool2d", lambda M, x: M.nn.functional.avg_pool2d(x, 2), [((1, 2, 4, 4), "f")]),
    ("adaptive_avg", lambda M, x: M.nn.functional.adaptive_avg_pool2d(x, 2), [((1, 2, 4, 4), "f")]),
    ("mse", lambda M, x, y: M.nn.functional.mse_loss(x, y), [((3, 4), "f"), ((3, 4), "f")]),
    ("cross_entropy", lambda M, x, t: M.nn.functional.cross_entropy(x, t), [((3, 4), "f"), ((3,), "i")]),
    ("bce_logits", lambda M, x, y: M.nn.functional.binary_cross_entropy_with_logits(x, y),
     [((3, 4), "f"), ((3, 4), "unit")]),
    ("embedding", lambda M, i, w: M.nn.functional.embedding(i, w), [((5,), "i"), ((3, 4), "f")]),
    ("inv", lambda M, x: M.linalg.inv(x), [((3, 3), "spd")]),
    ("det", lambda M, x: M.linalg.det(x), [((3, 3), "spd")]),
    ("solve", lambda M, a, b: M.linalg.solve(a, b), [((3, 3), "spd"), ((3, 2), "f")]),
    ("cholesky", lambda M, x: M.linalg.cholesky(x), [((3, 3), "spd")]),
    # torch's CPU kernel has no forward AD: torch's side is the formula
    ("scaled_dot", lambda M, q, k, v: M.nn.functional.scaled_dot_product_attention(q, k, v) if M is ember else
     M.softmax(q @ k.transpose(-2, -1) / 2.0, -1) @ v,
     [((1, 2, 3, 4), "f"), ((1, 2, 3, 4), "f"), ((1, 2, 3, 4), "f")]),
    ("mlp", lambda M, x, w1, w2: (M.tanh(x @ w1) @ w2).sum(), [((2, 3), "f"), ((3, 4), "f"), ((4, 1), "f")]),
]


def _outputs(r):
    if isinstance(r, (tuple, list)):
        return [x for y in r for x in _outputs(y)]
    return [r]


def _run(M, ad, fn, arrays, tangents):
    with ad.dual_level():
        args = []
        for a, t in zip(arrays, tangents):
            x = M.tensor(a)
            args.append(ad.make_dual(x, M.tensor(t)) if t is not None else x)
        outs = _outputs(fn(M, *args))
        return [(ad.unpack_dual(o).primal, ad.unpack_dual(o).tangent) for o in outs]


@pytest.mark.parametrize("name,fn,specs", CASES, ids=[c[0] for c in CASES])
def test_tangents_match_torch(name, fn, specs):
    arrays = [_arr(s, k) for s, k in specs]
    tangents = [RNG.standard_normal(a.shape) if a.dtype == np.float64 else None for a in arrays]
    for (_, kind), i in zip(specs, range(len(specs))):
        if kind == "spd":  # the functions of symmetric matrices are differentiated along symmetric tangents
            tangents[i] = tangents[i] + tangents[i].T
    got = _run(ember, fwAD, fn, arrays, tangents)
    want = _run(torch, tfwAD, fn, arrays, tangents)
    assert len(got) == len(want)
    for (gp, gt), (wp, wt) in zip(got, want):
        np.testing.assert_allclose(gp.numpy(), wp.numpy(), rtol=1e-6, atol=1e-8)
        if wt is None or not wp.dtype.is_floating_point:
            assert gt is None
            continue
        assert gt is not None, name
        assert gt.shape == gp.shape and str(gt.dtype) == str(wt.dtype).replace("torch", "ember")
        np.testing.assert_allclose(gt.numpy(), wt.numpy(), rtol=1e-6, atol=1e-8)


# ---- shapes and dtypes off the common path ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(0, 4), (3, 4), ()])
def test_dtypes_and_empty(dtype, shape):
    a = _arr(shape).astype(dtype)
    t = _arr(shape).astype(dtype)

    def f(M, x):
        return (x.exp() * 2 + x.sum()).sin()

    got = _run(ember, fwAD, f, [a], [t])
    want = _run(torch, tfwAD, f, [a], [t])
    assert str(got[0][1].dtype) == f"ember.{dtype}" and got[0][1].shape == want[0][1].shape
    np.testing.assert_allclose(got[0][1].numpy(), want[0][1].numpy(), rtol=1e-5, atol=1e-6)


def test_non_contiguous_primal_and_tangent():
    a, t = _arr((4, 3)), _arr((3, 8))

    def run(M, ad):
        with ad.dual_level():
            x = ad.make_dual(M.tensor(a).t(), M.tensor(t)[:, ::2])
            tan = ad.unpack_dual(x).tangent
            y = (x * x).cumsum(1)
            return tan.stride(), ad.unpack_dual(y).tangent

    (gs, gt), (ws, wt) = run(ember, fwAD), run(torch, tfwAD)
    assert gs == ws  # copied into the primal's layout
    np.testing.assert_allclose(gt.numpy(), wt.numpy(), rtol=1e-12)


# ---- views and in-place ops ----

def _both(f):
    return f(ember, fwAD), f(torch, tfwAD)


def _same(got, want):
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)


def test_inplace_on_view_updates_base_tangent():
    p, t = _arr((3, 4)), _arr((3, 4))

    def f(M, ad):
        with ad.dual_level():
            x = ad.make_dual(M.tensor(p), M.tensor(t))
            v = x[1:]
            v.mul_(3)
            x.t()[0].add_(x[:, 2])
            return ad.unpack_dual(x).tangent.clone(), ad.unpack_dual(v).tangent.clone()

    _same(*_both(f))


def test_inplace_into_plain_tensor_and_setitem():
    p, t = _arr((3, 4)), _arr((3, 4))

    def f(M, ad):
        with ad.dual_level():
            d = ad.make_dual(M.tensor(p), M.tensor(t))
            z = M.zeros(3, 4, dtype=M.float64)
            z.copy_(d)
            w = M.ones(3, 4, dtype=M.float64)
            w += d
            w[0] = 1.0
            w[:, 1] = d[:, 2] * 2
            with pytest.raises(NotImplementedError, match="Trying to use forward AD with mul_out that does not support "
                                                          "it because it is an out= function"):
                M.mul(d, d, out=M.zeros(3, 4, dtype=M.float64))
            return [ad.unpack_dual(x).tangent.clone() for x in (z, w)]

    _same(*_both(f))


def test_tangents_are_not_shared():
    p, t = _arr((3,)), _arr((3,))

    def f(M, ad):
        with ad.dual_level():
            x = ad.make_dual(M.tensor(p), M.tensor(t))
            y = x + 1
            y.mul_(2)  # must not change x's tangent through a shared tensor
            c = x.contiguous()
            return ad.unpack_dual(x).tangent.clone(), ad.unpack_dual(y).tangent.clone(), c is x

    (gx, gy, gc), (wx, wy, wc) = _both(f)
    _same([gx, gy], [wx, wy])
    assert gc == wc


def test_integer_results_and_detach_have_no_tangent():
    with fwAD.dual_level():
        x = fwAD.make_dual(ember.tensor([1.0, 3.0, 2.0]), ember.ones(3))
        assert fwAD.unpack_dual(x.argmax()).tangent is None
        assert fwAD.unpack_dual(x > 1).tangent is None
        assert fwAD.unpack_dual(x.detach()).tangent is None
        vals, idx = x.max(0)
        assert fwAD.unpack_dual(idx).tangent is None and fwAD.unpack_dual(vals).tangent.item() == 1.0


# ---- levels, make_dual and unpack_dual ----

def test_level_lifecycle_and_errors():
    p = ember.randn(3)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(p, ember.randn(3))
    assert fwAD.unpack_dual(p) == (p, None)
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
            with fwAD.dual_level():
                pass
        with pytest.raises(RuntimeError, match=r"different size .* Tensor is of size \[3\] while the given forward "
                                               r"gradient is of size \[4\]\."):
            fwAD.make_dual(p, ember.randn(4))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, but got: ember.int32"):
            fwAD.make_dual(p.int(), p.int())
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex, but got: "
                                             "ember.int64"):
            fwAD.make_dual(p, ember.ones(3, dtype=ember.int64))
        d = fwAD.make_dual(p, ember.ones(3))
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level 0"):
            fwAD.make_dual(d, ember.ones(3))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(p, ember.ones(3), level=5)
        primal, tangent = fwAD.unpack_dual(d)
        assert fwAD.unpack_dual(primal).tangent is None and tangent.tolist() == [1.0, 1.0, 1.0]
        y = d * 2
    # leaving the level frees the tangents
    assert fwAD.unpack_dual(d).tangent is None and fwAD.unpack_dual(y).tangent is None
    with pytest.raises(RuntimeError, match="Dual level must be a positive number."):
        fwAD.exit_dual_level()
    assert fwAD.enter_dual_level() == 0
    with pytest.raises(RuntimeError, match="was not the last one that was created"):
        fwAD.exit_dual_level(level=3)
    fwAD.exit_dual_level()
    with fwAD.dual_level():  # a new level sees no tangents of the old one
        assert fwAD.unpack_dual(d).tangent is None


def test_tangent_stored_as_given_and_printing():
    p, t = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0], dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, t)
        assert fwAD.unpack_dual(d).tangent is t
        assert repr(d) == "tensor([1., 2.], tangent=tensor([3., 4.], dtype=ember.float64))"
        q = fwAD.make_dual(ember.tensor([1.0], requires_grad=True), ember.tensor([2.0]))
        assert repr(q) == "tensor([1.], grad_fn=<ViewBackward0>, tangent=tensor([2.]))"
    assert repr(d) == "tensor([1., 2.])"


def test_unsupported_op_raises():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.randn(3), ember.randn(3))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with .* that does not support it"):
            ember.histc(d, bins=4)


# ---- custom Functions ----

class _Exp(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_forward(y)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        y, = ctx.saved_tensors
        return t * y


class _NoJvp(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_function_jvp():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.tensor([1.0, 2.0]))
        y = _Exp.apply(d)
        assert type(y.grad_fn).__name__ == "_ExpBackward"
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.detach().numpy(), [1.0, 2 * np.e], rtol=1e-6)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [1.0, np.e], rtol=1e-6)
        with pytest.raises(NotImplementedError, match="You must implement the jvp function for custom "
                                                      "autograd.Function to use it with forward mode AD."):
            _NoJvp.apply(d)
    assert _NoJvp.apply(x).tolist() == [0.0, 2.0]  # without a level, jvp is not needed


# ---- reverse over forward, forward over reverse ----

def test_reverse_over_forward():
    a, t = _arr((3, 4)), _arr((3, 4))

    def f(M, ad):
        x = M.tensor(a, requires_grad=True)
        v = M.tensor(t, requires_grad=True)
        with ad.dual_level():
            d = ad.make_dual(x, v)
            y = (d.tanh() * d.sin()).sum() + (d @ d.t()).trace() + d.prod(1).sum()
            tangent = ad.unpack_dual(y).tangent
        gx, gv = M.autograd.grad(tangent, (x, v))
        return tangent.detach(), gx, gv

    _same(*_both(f))


def test_func_transforms_match_torch():
    a, b, t = _arr((3,)), _arr((2, 3)), _arr((3,))

    def f(M, x, w):
        return (M.tanh(w @ x) ** 2).sum() + x.norm()

    def run(M):
        F = M.func
        x, w, v = M.tensor(a), M.tensor(b), M.tensor(t)
        out, jv = F.jvp(lambda x: f(M, x, w), (x,), (v,))
        hvp = F.jvp(F.grad(lambda x: f(M, x, w)), (x,), (v,))[1]
        jf = F.jacfwd(lambda x, w: M.sin(w @ x), argnums=(0, 1))(x, w)
        jr = F.jacrev(lambda x, w: M.sin(w @ x), argnums=(0, 1))(x, w)
        h = F.hessian(lambda x: f(M, x, w))(x)
        aux = F.jvp(lambda x: (x.exp(), {"n": x.sum()}), (x,), (v,), has_aux=True)
        jaux = F.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(x)
        return [out, jv, hvp, *jf, *jr, h, aux[0], aux[1], aux[2]["n"], *jaux]

    got, want = run(ember), run(torch)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_func_jvp_errors():
    F, x = ember.func, ember.ones(2)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        F.jvp(ember.sin, x, (x,))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        F.jvp(ember.sin, (x,), [x])
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python structure"):
        F.jvp(ember.sin, (x,), (x, x))
    with pytest.raises(RuntimeError, match=r"expected f\(\*primals\) to return only tensors, got unsupported type"):
        F.jvp(lambda x: 3, (x,), (x,))
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        F.jvp(lambda x: x, (x,), (x,), has_aux=True)
    with pytest.raises(RuntimeError, match="different size"):
        F.jvp(ember.sin, (x,), (ember.ones(3),))
    with pytest.raises(RuntimeError, match="Only allowed values for randomness are"):
        F.jacfwd(ember.sin, randomness="x")
    with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
        F.jvp(lambda y: F.jvp(ember.sin, (y,), (y,))[1], (x,), (x,))


class _WrongJvp(_NoJvp):
    @staticmethod
    def jvp(ctx, t):
        return t * 3


def test_gradcheck_checks_forward_mode():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, w: (x @ w).tanh().softmax(0), (x, w), check_forward_ad=True)
    assert ember.autograd.gradcheck(lambda x: ember.nn.functional.max_pool2d(x.view(1, 1, 3, 4), 2), (x,),
                                    check_forward_ad=True, check_backward_ad=False)
    with pytest.raises(sys.modules["ember.autograd.gradcheck"].GradcheckError, match="Jacobian computed with forward mode mismatch for "
                                                            "output 0 with respect to input 0"):
        ember.autograd.gradcheck(_WrongJvp.apply, (x,), check_forward_ad=True)
    assert ember.autograd.gradcheck(_WrongJvp.apply, (x,))  # the backward is right
