"""Autograd's object model against torch: node classes and their names, next_functions,
metadata, node hooks, saved values (_saved_<name>), ember.autograd.graph (Node,
saved_tensors_hooks, save_on_cpu, register_multi_grad_hook), inference mode,
grad-mode decorators, ember.autograd.functional and ember.func."""
import gc

import numpy as np
import pytest
import torch

import ember
import ember.func
import ember.autograd.functional as EAF
import torch.autograd.functional as TAF
import torch.func


def _pair(shape=(3, 4), seed=0):
    rs = np.random.RandomState(seed)
    out = []
    for _ in range(2):
        v = rs.randn(*shape).astype(np.float32)
        out.append((ember.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)))
    return out


# expressions whose graphs ember records as torch does (name and next_functions)
EXPRS = [
    "a+b", "a-b", "a*b", "a/b", "a+2", "a*2", "a-2", "a/2", "-a", "a.exp()", "a.log()", "a.sin()", "a.tanh()",
    "a.sigmoid()", "a.relu()", "a.abs()", "a.sqrt()", "a.sum()", "a.sum(0)", "a.mean()", "a.mean(1)", "a.max()",
    "a.amax(0)", "a.view(12)", "a.reshape(4,3)", "a[0]", "a[0:2]", "a[[0,1]]", "a.t()", "a.transpose(0,1)",
    "a.permute(1,0)", "a.unsqueeze(0)", "a.squeeze()", "a.expand(2,3,4)", "a.flatten()", "T.cat([a,b])",
    "T.stack([a,b])", "a.clone()", "a.to(T.float64)", "a.softmax(1)", "a.log_softmax(1)", "T.where(a>0,a,b)",
    "a.clamp(0,1)", "a.clamp(b,b)", "a.norm()", "a.std()", "a.var()", "a.split(2)[0]", "a.narrow(0,0,2)",
    "a.diagonal()", "a.prod()", "a.cumsum(0)", "a.exp().log()", "a.masked_fill(a>0, 0.)", "a.unbind(0)[0]",
    "(a*1).mul_(2)", "a.floor()", "a.repeat(2,1)", "a.maximum(b)", "a.lerp(b, 0.5)", "a.rsqrt()", "a.square()",
    "a.log1p()", "a.expm1()", "a.flip(0)", "a.sort(0)[0]", "a.topk(2)[0]", "T.nn.functional.mse_loss(a,b)",
    "T.nn.functional.silu(a)",
]


def _structure(fn, depth=3):
    """(class name, [(child structure, input_nr)]) down to depth."""
    if fn is None:
        return None
    name = type(fn).__name__
    if depth == 0:
        return name
    return name, [(_structure(f, depth - 1), nr) for f, nr in fn.next_functions]


@pytest.mark.parametrize("expr", EXPRS)
def test_node_classes_and_structure_match_torch(expr):
    (ea, ta), (eb, tb) = _pair()
    ey = eval(expr, {"a": ea, "b": eb, "T": ember})
    ty = eval(expr, {"a": ta, "b": tb, "T": torch})
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    assert ey.grad_fn.name() == ty.grad_fn.name()
    assert _structure(ey.grad_fn) == _structure(ty.grad_fn)


def test_cross_entropy_node_is_fused():
    """cross_entropy of class indices is one native op (_cross_entropy_loss): its node has
    torch's name, NllLossBackward0, but reads the logits directly where torch's reads
    LogSoftmaxBackward0's output."""
    (ea, ta), _ = _pair()
    ey = ember.nn.functional.cross_entropy(ea, ember.zeros(3, dtype=ember.long))
    ty = torch.nn.functional.cross_entropy(ta, torch.zeros(3, dtype=torch.long))
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__ == "NllLossBackward0"
    assert _structure(ey.grad_fn) == ("NllLossBackward0", [(("AccumulateGrad", []), 0)])
    assert _structure(ty.grad_fn)[1][0][0][0] == "LogSoftmaxBackward0"


def test_setitem_copyslices_and_accumulate_grad():
    (ea, ta), (eb, tb) = _pair()
    res = []
    for a, b in ((ea, eb), (ta, tb)):
        x = a * 1
        x[0] = b[0]
        res.append(_structure(x.grad_fn))
    assert res[0] == res[1]
    assert res[0][0] == "CopySlices"
    assert type(ea.exp().grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert ea.exp().grad_fn.next_functions[0][0].variable is ea


def test_one_class_per_kind_and_node_base():
    from ember.autograd.graph import Node
    (a, _), (b, _) = _pair()
    t1, t2 = type((a + b).grad_fn), type((b + a).grad_fn)
    assert t1 is t2 and t1.__name__ == "AddBackward0"
    assert t1 is not type((a * b).grad_fn)
    assert repr((a + b).grad_fn).startswith("<AddBackward0 object at ")

    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    y = Twice.apply(a)
    for fn in ((a + b).grad_fn, a.exp().grad_fn.next_functions[0][0], y.grad_fn):
        assert isinstance(fn, Node)
        assert issubclass(type(fn), Node)
    assert type(y.grad_fn).__name__ == "TwiceBackward"
    assert not isinstance(a, Node) and not issubclass(int, Node)
    assert ember.autograd.graph.Node is not ember._C._Node


def test_metadata_lives_with_the_node():
    (a, _), (b, _) = _pair()
    y = a * b
    y.grad_fn.metadata["tag"] = 7
    gc.collect()
    assert y.grad_fn.metadata == {"tag": 7}
    assert (a + b).grad_fn.metadata == {}


def test_node_hooks_match_torch():
    results = []
    for T, (a, b) in ((ember, _pair()[0]), (torch, _pair()[0])):
        a = a.detach().requires_grad_()
        y = a.exp()
        z = (y * 3).sum()
        calls = []

        def post(grad_inputs, grad_outputs):
            calls.append(("post", len(grad_inputs), len(grad_outputs)))
            return (grad_inputs[0] * 2,)

        def pre(grad_outputs):
            calls.append(("pre", len(grad_outputs)))
            return (grad_outputs[0] + 1,)
        h1 = y.grad_fn.register_hook(post)
        h2 = y.grad_fn.register_prehook(pre)
        z.backward(retain_graph=True)
        first = a.grad.detach().clone().numpy()
        h1.remove()
        h2.remove()
        a.grad = None
        z.backward()
        results.append((calls, first, a.grad.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-5)


def test_saved_values():
    (a, ta), (b, tb) = _pair()
    y = a * b
    assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b
    e = a.exp()
    np.testing.assert_allclose(e.grad_fn._saved_result.detach().numpy(), e.detach().numpy())
    v = a.view(12)
    assert v.grad_fn._saved_self_sym_sizes == ta.view(12).grad_fn._saved_self_sym_sizes == (3, 4)
    s = a.sum(1, keepdim=True)
    assert s.grad_fn._saved_keepdim is True
    c = a.clamp(0, 1)
    assert c.grad_fn._saved_min == ta.clamp(0, 1).grad_fn._saved_min == 0
    p = a ** b
    assert p.grad_fn._saved_self is a and p.grad_fn._saved_exponent is b
    with pytest.raises(AttributeError):
        y.grad_fn._saved_nothing
    # only what a gradient needs is saved (torch's rule): None for the rest
    w = a * b.detach()
    assert w.grad_fn._saved_self is None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn._saved_self
    tz = ta * tb
    tz.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        tz.grad_fn._saved_self


def test_saved_tensors_hooks():
    from ember.autograd.graph import saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks
    (a, ta), (b, tb) = _pair()
    counts = {"pack": 0, "unpack": 0}

    def pack(t):
        counts["pack"] += 1
        return ("box", t.detach().clone())

    def unpack(p):
        counts["unpack"] += 1
        return p[1]
    with saved_tensors_hooks(pack, unpack):
        y = (a * b).exp().sum()
    assert counts == {"pack": 3, "unpack": 0}  # self, other, exp's result
    y.backward()
    assert counts["unpack"] == 3
    (ta * tb).exp().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5)
    with saved_tensors_hooks(pack, unpack):
        q = a * b
    saved = q.grad_fn._saved_self  # read through the unpack hook: the packed copy
    assert counts["unpack"] == 4 and saved is not a
    np.testing.assert_array_equal(saved.detach().numpy(), a.detach().numpy())
    a.grad = None
    with save_on_cpu(pin_memory=True):
        z = (a.sin() * b).sum()
    z.backward()
    np.testing.assert_allclose(a.grad.numpy(), (ta.detach().cos() * tb.detach()).numpy(), rtol=1e-5)
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(pack, unpack):
                pass
    with saved_tensors_hooks(pack, lambda p: 3):
        q = a * b
    with pytest.raises(TypeError, match="unpack_hook"):
        q.sum().backward()


def test_register_multi_grad_hook():
    from ember.autograd.graph import register_multi_grad_hook
    for T in (ember, torch):
        a = T.ones(2, requires_grad=True)
        b = T.ones(2, requires_grad=True)
        c = T.ones(2, requires_grad=True)
        seen = []
        reg = register_multi_grad_hook if T is ember else torch.autograd.graph.register_multi_grad_hook
        h = reg((a, b, c), lambda grads: seen.append(tuple(g is not None for g in grads)))
        (a * 2 + b).sum().backward()
        (c * 3).sum().backward()
        h.remove()
        (a * 2).sum().backward()
        anys = []
        h = reg((a, b), lambda g: anys.append(float(g.sum())), mode="any")
        (a * 2 + b * 5).sum().backward()
        h.remove()
        if T is ember:
            got = (seen, len(anys))
        else:
            assert (seen, len(anys)) == got
    assert got[0] == [(True, True, False), (False, False, True)]


def test_increment_version():
    a = ember.ones(3)
    v = a._version
    ember.autograd.graph.increment_version(a)
    assert a._version == v + 1


def test_inference_mode_tensors_and_errors():
    n = ember.ones(3)
    w = ember.ones(3, requires_grad=True)
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not ember.is_grad_enabled()
        x = ember.ones(3)
        view_of_normal = n[0:2]
        n.add_(1)  # in-place on a normal tensor is allowed inside
        with ember.inference_mode(False):
            assert not ember.is_inference_mode_enabled() and ember.is_grad_enabled()
            assert not ember.ones(2).is_inference()
    assert x.is_inference() and x[0:2].is_inference()
    assert not view_of_normal.is_inference() and not n.is_inference()
    assert not ember.is_inference_mode_enabled()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        x.zero_()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        ember.add(n, n, out=x)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"):
        x.requires_grad_()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        w * x
    y = w + x  # add saves nothing: allowed, and the result is a normal tensor
    assert not y.is_inference() and y.requires_grad
    z = x.clone()
    z.add_(1)
    with ember.no_grad():
        assert not ember.ones(1).is_inference()


def test_grad_mode_bare_decorators():
    for T in (ember, torch):
        @T.no_grad
        def f(x):
            return x * 2

        @T.enable_grad
        def g(x):
            return x * 2

        @T.inference_mode
        def h(x):
            return T.is_inference_mode_enabled()

        @T.no_grad()
        def f2(x):
            return x * 2
        x = T.ones(1, requires_grad=True)
        assert not f(x).requires_grad and not f2(x).requires_grad
        with T.no_grad():
            assert g(x).requires_grad
        assert h(x) is True
        assert f.__name__ == "f"


def test_post_accumulate_grad_hook_matches_torch():
    out = []
    for T in (ember, torch):
        p = T.ones(3, requires_grad=True)
        seen = []
        h = p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (p * 2).sum().backward()
        (p * 3).sum().backward()
        h.remove()
        (p * 3).sum().backward()
        out.append([s.tolist() for s in seen] + [p.grad.tolist()])
    assert out[0] == out[1]
    x = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        x.register_post_accumulate_grad_hook(lambda t: None)


# ---- autograd.functional ----

def _np(r):
    if isinstance(r, tuple):
        return tuple(_np(e) for e in r)
    return (r.detach().numpy(), r.requires_grad, tuple(r.shape))


def _same(er, tr):
    if isinstance(tr, tuple):
        assert isinstance(er, tuple) and len(er) == len(tr)
        for e, t in zip(er, tr):
            _same(e, t)
        return
    assert not isinstance(er, tuple)
    assert tuple(er.shape) == tuple(tr.shape)
    assert er.requires_grad == tr.requires_grad
    np.testing.assert_allclose(er.detach().numpy(), tr.detach().numpy(), rtol=1e-6, atol=1e-9)


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])
Y = np.array([0.2, 0.4, -0.1])


def _inputs(T, which):
    x, y = T.tensor(X, dtype=T.float64), T.tensor(Y, dtype=T.float64)
    return {"x": x, "xy": (x, y), "y": y}[which]


def _fns(T):
    return {
        "cube": lambda a: (a ** 3).sum(1),
        "two": lambda a, b: (a * b).exp().sum() + (b ** 2).sum(),
        "pair": lambda a, b: (a * b, a.sin()),
        "scalar": lambda a: (a ** 3).sum(),
    }


CASES = [
    ("jacobian", "cube", "x", {}), ("jacobian", "two", "xy", {}), ("jacobian", "pair", "xy", {}),
    ("jacobian", "cube", "x", {"create_graph": True}), ("hessian", "scalar", "y", {}), ("hessian", "two", "xy", {}),
    ("vjp", "cube", "x", {"v": "ones2"}), ("vjp", "pair", "xy", {"v": "pair"}), ("vjp", "scalar", "y", {}),
    ("jvp", "cube", "x", {"v": "onesx"}), ("jvp", "pair", "xy", {"v": "onesxy"}),
    ("vhp", "two", "xy", {"v": "onesxy"}), ("hvp", "two", "xy", {"v": "onesxy"}),
    ("hvp", "scalar", "y", {"v": "onesy", "create_graph": True}),
    ("vjp", "cube", "x", {"v": "ones2", "create_graph": True}),
]


def _v(T, name):
    o = lambda *s: T.ones(*s, dtype=T.float64)  # noqa: E731
    return {"ones2": o(2), "pair": (o(2, 3), o(2, 3)), "onesx": o(2, 3), "onesxy": (o(2, 3), o(3)),
            "onesy": o(3)}[name]


@pytest.mark.parametrize("fn_name,func,inp,kw", CASES)
def test_autograd_functional_matches_torch(fn_name, func, inp, kw):
    res = []
    for T, mod in ((ember, EAF), (torch, TAF)):
        k = dict(kw)
        if "v" in k:
            k["v"] = _v(T, k["v"])
        res.append(getattr(mod, fn_name)(_fns(T)[func], _inputs(T, inp), **k))
    _same(res[0], res[1])


@pytest.mark.parametrize("call", [
    lambda M, T: M.vjp(lambda a: (a ** 3).sum(1), _inputs(T, "x")),
    lambda M, T: M.jacobian(lambda a: (a ** 3).sum(1), 3),
    lambda M, T: M.hessian(lambda a: (a ** 3).sum(1), _inputs(T, "x")),
    lambda M, T: M.jacobian(lambda a: _inputs(T, "y") * 2, _inputs(T, "y"), strict=True),
    lambda M, T: M.vjp(lambda a: (a * 2, _inputs(T, "y") * 2), _inputs(T, "y"), (_inputs(T, "y"),) * 2, strict=True),
    lambda M, T: M.vjp(lambda a: (a ** 3).sum(1), _inputs(T, "x"), T.ones(3, dtype=T.float64)),
    lambda M, T: M.jvp(lambda a: _inputs(T, "y").clone(), _inputs(T, "y"), _inputs(T, "y"), strict=True),
    lambda M, T: M.jacobian(lambda a: a, _inputs(T, "y"), strategy="x"),
    lambda M, T: M.vhp(lambda a: a * 2, _inputs(T, "y"), _inputs(T, "y")),
    # strict mode: every round of gradients names what its result does not depend on
    lambda M, T: M.hvp(lambda a: (a * 2).sum(), _inputs(T, "y"), _inputs(T, "y"), strict=True),
    lambda M, T: M.vhp(lambda a: (a * 2).sum(), _inputs(T, "y"), _inputs(T, "y"), strict=True),
    lambda M, T: M.jvp(lambda a: a * 2, _inputs(T, "y"), _inputs(T, "y"), strict=True, create_graph=True),
    lambda M, T: M.vjp(lambda a: a * 2, _inputs(T, "y"), _inputs(T, "y"), strict=True, create_graph=True),
    lambda M, T: M.jacobian(lambda a: a * 2, _inputs(T, "y"), strict=True, create_graph=True),
    lambda M, T: M.jacobian(lambda a, b: a * 2, (_inputs(T, "y"), _inputs(T, "y")), strict=True),
    lambda M, T: M.hessian(lambda a: (a * 2).sum(), _inputs(T, "y"), strict=True),
    lambda M, T: M.hessian(lambda a: a ** 3, _inputs(T, "y")),
    lambda M, T: M.vhp(lambda a, b: (a ** 3).sum(), (_inputs(T, "y"), _inputs(T, "y")), (_inputs(T, "y"),)),
])
def test_autograd_functional_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TAF, torch)
    with pytest.raises(type(te.value)) as ee:
        call(EAF, ember)
    assert str(ee.value).replace("ember.Size", "torch.Size") == str(te.value)


# ---- func ----

def _func_cases(M, T):
    x, y = T.tensor(Y * 5, dtype=T.float64), T.tensor(Y, dtype=T.float64)
    f = lambda a, b: (a.sin() * b).sum()  # noqa: E731
    out = [
        M.grad(f)(x, y), M.grad(f, argnums=1)(x, y), M.grad(f, argnums=(0, 1))(x, y), M.grad_and_value(f)(x, y),
        M.grad(lambda a, b: (f(a, b), a * 2), has_aux=True)(x, y),
        M.grad_and_value(lambda a, b: (f(a, b), a * 2), has_aux=True)(x, y),
        tuple(M.grad(lambda d: (d["a"] * d["b"].exp()).sum())({"a": x, "b": y}).values()),
        M.grad(lambda a: M.grad(lambda b: (b ** 3).sum())(a).sum())(x),
        M.jacrev(lambda a: a.sin() * 2)(x), M.jacrev(lambda a, b: (a * b, a.sum()), argnums=(0, 1))(x, y),
        M.hessian(lambda a: (a ** 3).sum())(x), M.hessian(f, argnums=(0, 1))(x, y),
    ]
    o, fn = M.vjp(lambda a, b: a * b, x, y)
    out += [o, fn(T.ones(3, dtype=T.float64))]
    o, fn, aux = M.vjp(lambda a: (a * 2, a.cos()), x, has_aux=True)
    out += [o, fn(T.ones(3, dtype=T.float64)), aux]
    z = x.clone().requires_grad_()
    g = M.grad(lambda a: (a ** 3).sum())(z)
    g.sum().backward()
    out += [g, z.grad]
    m = T.nn.Linear(3, 2).double()
    with T.no_grad():
        m.weight.copy_(T.arange(6, dtype=T.float64).view(2, 3))
        m.bias.fill_(0.5)
    p = {k: v.detach() for k, v in m.named_parameters()}
    out += [M.functional_call(m, p, (x,)), M.functional_call(m, {"weight": T.ones(2, 3, dtype=T.float64)}, x),
            tuple(M.grad(lambda p: M.functional_call(m, p, (x,)).sum())(p).values()), m.weight.detach()]
    return out


def test_func_matches_torch():
    er, tr = _func_cases(ember.func, ember), _func_cases(torch.func, torch)
    assert len(er) == len(tr)
    for e, t in zip(er, tr):
        _same(e, t)


@pytest.mark.parametrize("call", [
    lambda M, T: M.grad(lambda a: a)(T.ones(3)),
    lambda M, T: M.grad(lambda a: 1.0)(T.ones(3)),
    lambda M, T: M.grad(lambda a: a.sum(), argnums=2)(T.ones(3)),
    lambda M, T: M.grad(lambda a: a.sum(), argnums=1.0)(T.ones(3)),
    lambda M, T: M.grad(lambda a: a.sum(), has_aux=True)(T.ones(3)),
    lambda M, T: M.functional_call(T.nn.Linear(2, 2), {"weight": T.ones(2, 2), "foo": T.ones(1)}, (T.ones(2),),
                                   strict=True),
    lambda M, T: M.functional_call(T.nn.Linear(2, 2), ({"weight": T.ones(2, 2)}, {"weight": T.ones(2, 2)}),
                                   (T.ones(2),)),
])
def test_func_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(torch.func, torch)
    with pytest.raises(type(te.value)) as ee:
        call(ember.func, ember)
    assert str(ee.value) == str(te.value)


def test_func_tied_weights_and_vmap_absent():
    class Tied(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = ember.nn.Linear(2, 2, bias=False)
            self.b = ember.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    m = Tied()
    x = ember.ones(1, 2)
    out = ember.func.functional_call(m, {"a.weight": ember.eye(2) * 2}, (x,))
    assert out.tolist() == [[4.0, 4.0]]
    out = ember.func.functional_call(m, {"a.weight": ember.eye(2) * 2}, (x,), tie_weights=False)
    np.testing.assert_allclose(out.detach().numpy(), (2 * x @ m.b.weight.T).detach().numpy(), rtol=1e-6)
    assert isinstance(m.a.weight, ember.nn.Parameter)
    assert not hasattr(ember.func, "vmap")
    assert callable(ember.func.jvp) and callable(ember.func.jacfwd)
    assert "func" in dir(ember)
