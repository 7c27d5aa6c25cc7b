"""The layout of .grad, compared with torch's on the same values: nn.Linear's weight and bias
gradients for 1-d to 4-d, empty and non-contiguous inputs; leaves with unusual layouts
(transposed, size-1 dims, expanded, sliced, 0-dim) in mm, matmul, addmm, elementwise ops
and .t() products; accumulation over two backward calls; whether a .grad may alias a
gradient the caller still holds; .grad under create_graph=True and double backward through
it; matmul's folded (..., n, k) @ (k, m) gradients; and F.linear's shape errors.

Every check compares values (with a tolerance) and .grad.stride() / .grad.is_contiguous()
with what torch gives."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = (ember, torch)

# torch warns that backward(create_graph=True) makes a reference cycle; the tests want it.
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")


def rand(shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape).astype(dtype)


def tensor_of(L, a):
    """A contiguous tensor of numpy values (torch.tensor() of an empty array has strides 0)."""
    if L is torch:
        return torch.from_numpy(np.array(a, order="C")).clone(memory_format=torch.contiguous_format)
    return ember.tensor(a)


# ember leaves whose .grad may hold a graph, reset after each test (release_graphs)
_LEAVES = []


@pytest.fixture(autouse=True)
def release_graphs():
    """backward(create_graph=True) can make a reference cycle, leaf -> .grad -> its graph ->
    the leaf's accumulator -> leaf, in torch too (which warns, and says to reset .grad to
    None afterwards). The tests reset it, so the sanitizer build's leak check stays quiet."""
    yield
    for x in _LEAVES:
        x.grad = None
    _LEAVES.clear()


def ember_leaves(*xs):
    """Registers ember leaves made outside leaves() for release_graphs; returns the first."""
    _LEAVES.extend(xs)
    return xs[0]


def leaves(a, make=None):
    """The same values as an ember and a torch leaf: make(lib, tensor) shapes it (a .t(),
    a slice, an expand), then it is detached and made to require grad, strides and all."""
    out = []
    for L in LIBS:
        x = tensor_of(L, a)
        if make is not None:
            x = make(L, x)
        out.append(x.detach().requires_grad_())
    assert out[0].stride() == out[1].stride()
    _LEAVES.append(out[0])
    return out


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-5) if str(dtype).endswith("float32") else dict(rtol=1e-9, atol=1e-11)


def assert_same(e, t, what="", dtype="float64"):
    """An ember and a torch tensor: same shape and values, and the same strides."""
    assert tuple(e.shape) == tuple(t.shape), what
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), err_msg=what, **tol(dtype))
    assert tuple(e.stride()) == tuple(t.stride()), f"{what}: strides {e.stride()} vs torch {t.stride()}"
    assert e.is_contiguous() == t.is_contiguous(), what


def assert_grad_same(e, t, what="", dtype="float64"):
    if t.grad is None:
        assert e.grad is None, f"{what}: torch gives no gradient"
        return
    assert e.grad is not None, f"{what}: no gradient"
    assert_same(e.grad, t.grad, f"{what}.grad", dtype)


def check_view_flat(e, t, what=""):
    """.grad.view(-1) works in ember wherever it does in torch, as a view of .grad (whose
    values the caller has compared with torch's)."""
    try:
        t.grad.view(-1)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            e.grad.view(-1)
        return
    ev = e.grad.view(-1)
    assert ev.data_ptr() == e.grad.data_ptr(), what
    np.testing.assert_array_equal(ev.detach().numpy(), e.grad.detach().numpy().reshape(-1), err_msg=what)


def backward_weighted(out, L, seed=7):
    """backward() of sum(out * w) for fixed random w, so each gradient element differs."""
    w = rand(tuple(out.shape), seed, str(out.dtype).split(".")[-1])
    (out * tensor_of(L, w)).sum().backward()


# ---- nn.Linear ----

def linear_pair(n_in, n_out, bias, dtype, seed=0):
    """An ember and a torch nn.Linear holding the same weights."""
    torch.manual_seed(seed)
    tl = torch.nn.Linear(n_in, n_out, bias=bias).to(getattr(torch, dtype))
    el = ember.nn.Linear(n_in, n_out, bias=bias, dtype=getattr(ember, dtype))
    el.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    return el, tl


def linear_step(el, tl, e, t, dtype):
    """Both layers on the same input: outputs compared, then a weighted backward each."""
    eo, to = el(e), tl(t)
    assert_same(eo, to, "output", dtype)
    backward_weighted(eo, ember)
    backward_weighted(to, torch)


def assert_linear_grads_same(el, tl, bias, dtype):
    assert_grad_same(el.weight, tl.weight, "weight", dtype)
    if bias:
        assert_grad_same(el.bias, tl.bias, "bias", dtype)


def run_linear(n_in, n_out, shape, bias, dtype, make=None, twice=False):
    el, tl = linear_pair(n_in, n_out, bias, dtype)
    e, t = leaves(rand(shape, 1, dtype), make)
    for _ in range(2 if twice else 1):
        linear_step(el, tl, e, t, dtype)
    assert_linear_grads_same(el, tl, bias, dtype)
    assert_grad_same(e, t, "input", dtype)
    check_view_flat(el.weight, tl.weight, "weight")
    return el, tl


LINEAR_SHAPES = [(4,), (6, 4), (2, 3, 4), (2, 3, 2, 4), (0, 4), (0, 5, 4), (2, 0, 4), (2, 0, 3, 4), (1, 1, 4)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("shape", LINEAR_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_linear_grads_match_torch(shape, bias, dtype):
    run_linear(4, 3, shape, bias, dtype)


# (stored shape, make): the input Linear(4, 3) sees is make(stored)
NONCONTIGUOUS_INPUTS = [
    pytest.param((4, 6), lambda L, x: x.t(), id="transposed_2d"),
    pytest.param((2, 4, 5), lambda L, x: x.transpose(1, 2), id="transposed_3d"),
    pytest.param((4, 2, 5), lambda L, x: x.permute(1, 2, 0), id="permuted_3d"),
    pytest.param((8, 4), lambda L, x: x[::2], id="sliced_rows"),
    pytest.param((6, 8), lambda L, x: x[:, 1::2], id="sliced_cols"),
    pytest.param((2, 3, 9), lambda L, x: x[..., ::2][..., :4], id="sliced_3d"),
    pytest.param((3, 2, 5, 4), lambda L, x: x.transpose(0, 1), id="batch_transposed_4d"),
    pytest.param((1, 5, 4), lambda L, x: x.expand(3, 5, 4), id="expanded_3d"),
    pytest.param((4, 0, 5), lambda L, x: x.permute(1, 2, 0), id="transposed_empty"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("stored,make", NONCONTIGUOUS_INPUTS)
def test_linear_grads_for_noncontiguous_inputs_match_torch(stored, make, bias, dtype):
    el, tl = linear_pair(4, 3, bias, dtype)
    a = rand(stored, 1, dtype)
    # the input is a non-leaf view of a leaf, so its gradient goes through the view's backward
    eb, tb = leaves(a)
    linear_step(el, tl, make(ember, eb), make(torch, tb), dtype)
    assert_linear_grads_same(el, tl, bias, dtype)
    assert_grad_same(eb, tb, "input base", dtype)
    # and as a leaf that keeps the view's strides
    run_linear(4, 3, stored, bias, dtype, make=make)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("shape", [(6, 4), (2, 3, 4), (2, 0, 4)], ids=lambda s: "x".join(map(str, s)))
def test_linear_grads_accumulate_in_place_over_two_backwards(shape, bias):
    el, tl = run_linear(4, 3, shape, bias, "float32", twice=True)
    # a second step adds into the same .grad storage in both libraries
    for lin, L in ((el, ember), (tl, torch)):
        ptr = lin.weight.grad.data_ptr()
        backward_weighted(lin(tensor_of(L, rand(shape, 3, "float32"))), L)
        assert lin.weight.grad.data_ptr() == ptr
    assert_grad_same(el.weight, tl.weight, "weight", "float32")


@pytest.mark.parametrize("n_in,n_out", [(4, 1), (1, 3)], ids=["out1", "in1"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("shape", [(5,), (6, 5), (2, 3, 5)], ids=["1d", "2d", "3d"])
def test_linear_with_one_feature_grad_strides_match_torch(shape, bias, n_in, n_out):
    run_linear(n_in, n_out, shape[:-1] + (n_in,), bias, "float64")


@pytest.mark.parametrize("n_in,n_out", [(4, 1), (1, 3), (1, 1)], ids=["out1", "in1", "in1out1"])
def test_linear_with_one_feature_grads_are_contiguous_like_torch(n_in, n_out):
    el, tl = linear_pair(n_in, n_out, True, "float64")
    a = rand((2, 3, n_in), 1)
    for lin, L in ((el, ember), (tl, torch)):
        backward_weighted(lin(tensor_of(L, a)), L)
    np.testing.assert_allclose(el.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-9, atol=1e-11)
    assert el.weight.grad.is_contiguous() and tl.weight.grad.is_contiguous()
    check_view_flat(el.weight, tl.weight)


def test_functional_linear_folds_batch_dims_like_torch():
    a, w, b = rand((2, 3, 5, 4), 1), rand((6, 4), 2), rand((6,), 3)
    ex, tx = leaves(a)
    ew, tw = leaves(w)
    eb, tb = leaves(b)
    eo = ember.nn.functional.linear(ex, ew, eb)
    to = torch.nn.functional.linear(tx, tw, tb)
    assert_same(eo, to, "output")
    backward_weighted(eo, ember)
    backward_weighted(to, torch)
    for e, t, n in ((ex, tx, "input"), (ew, tw, "weight"), (eb, tb, "bias")):
        assert_grad_same(e, t, n)


def test_functional_linear_with_a_transposed_weight_leaf():
    # a weight stored column-major: its gradient takes the leaf's strides in both libraries
    a = rand((2, 3, 4), 1)
    ex, tx = leaves(a)
    ew, tw = leaves(rand((4, 6), 2), lambda L, x: x.t())
    eb, tb = leaves(rand((6,), 3))
    eo = ember.nn.functional.linear(ex, ew, eb)
    to = torch.nn.functional.linear(tx, tw, tb)
    assert_same(eo, to, "output")
    backward_weighted(eo, ember)
    backward_weighted(to, torch)
    for e, t, n in ((ex, tx, "input"), (ew, tw, "weight"), (eb, tb, "bias")):
        assert_grad_same(e, t, n)


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 3, 5, 4), (5, 4), (4,), (0, 5, 4)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_functional_linear_in_features_mismatch_matches_torch(shape, bias):
    errors = []
    for L in LIBS:
        with pytest.raises(Exception) as info:
            L.nn.functional.linear(L.ones(*shape), L.ones(3, 5), L.ones(3) if bias else None)
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1]) is RuntimeError
    assert str(errors[0]) == str(errors[1])  # "mat1 and mat2 shapes cannot be multiplied (10x4 and 5x3)"


# ---- leaves with unusual layouts ----

# (id, stored shape, make): the leaf is make(stored), detached, as a (3, 4) or 0-dim tensor
LEAVES = [
    ("contiguous", (3, 4), None),
    ("transposed", (4, 3), lambda L, x: x.t()),
    ("sliced", (3, 8), lambda L, x: x[:, ::2]),
    ("sliced_rows", (6, 4), lambda L, x: x[::2]),
    ("expanded", (3, 1), lambda L, x: x.expand(3, 4)),
    ("expanded_rows", (1, 4), lambda L, x: x.expand(3, 4)),
    ("offset", (5, 6), lambda L, x: x[1:4, 2:6]),
]

# (id, fn(lib, leaf, other operands...), shapes of the other operands) for a (3, 4) leaf
USES = [
    ("mm", lambda L, x, w: x @ w, [(4, 5)]),
    ("mm_rhs", lambda L, x, w: w @ x, [(5, 3)]),
    ("mm_method", lambda L, x, w: x.mm(w), [(4, 2)]),
    ("t_product", lambda L, x, w: x.t() @ w, [(3, 2)]),
    ("product_t", lambda L, x, w: w @ x.t(), [(2, 4)]),
    ("self_gram", lambda L, x: x @ x.t(), []),
    ("matmul_batched", lambda L, x, a: L.matmul(a, x), [(2, 5, 3)]),
    ("matmul_rhs_batched", lambda L, x, a: L.matmul(x, a), [(2, 4, 5)]),
    ("matmul_3d_2d", lambda L, x, a: L.matmul(a, x), [(2, 2, 3)]),
    ("matmul_vec", lambda L, x, v: L.matmul(x, v), [(4,)]),
    ("addmm", lambda L, x, b, w: L.addmm(b, x, w), [(5,), (4, 5)]),
    ("addmm_as_bias", lambda L, x, a, w: L.addmm(x, a, w, beta=0.5, alpha=2), [(3, 2), (2, 4)]),
    ("addmm_rhs", lambda L, x, b, a: L.addmm(b, a, x), [(2, 4), (2, 3)]),
    ("linear", lambda L, x, a: L.nn.functional.linear(a, x), [(2, 5, 4)]),
    ("mul", lambda L, x, w: x * w, [(3, 4)]),
    ("broadcast_mul", lambda L, x, w: x * w, [(4,)]),
    ("unary", lambda L, x: x.sin() + x.exp(), []),
    ("sum", lambda L, x: x.sum(), []),
    ("mean_dim", lambda L, x: x.mean(0), []),
    ("scalar_mul", lambda L, x: 3 * x, []),
    ("reshape", lambda L, x: x.reshape(2, 6) * 2, []),
]


def run_use(leaf_a, make, fn, other_shapes, twice=False, create_graph=False):
    ex, tx = leaves(leaf_a, make)
    others = [leaves(rand(s, 10 + i)) for i, s in enumerate(other_shapes)]
    eo_, to_ = [o[0] for o in others], [o[1] for o in others]
    for step in range(2 if twice else 1):
        eo, to = fn(ember, ex, *eo_), fn(torch, tx, *to_)
        assert_same(eo, to, "output")
        for out, L in ((eo, ember), (to, torch)):
            w = tensor_of(L, rand(tuple(out.shape), 20 + step))
            (out * w).sum().backward(create_graph=create_graph)
    assert_grad_same(ex, tx, "leaf")
    for i, (e, t) in enumerate(others):
        assert_grad_same(e, t, f"operand {i}")
    check_view_flat(ex, tx, "leaf")
    return ex, tx


@pytest.mark.parametrize("twice", [False, True], ids=["once", "twice"])
@pytest.mark.parametrize("fn,other_shapes", [u[1:] for u in USES], ids=[u[0] for u in USES])
@pytest.mark.parametrize("stored,make", [c[1:] for c in LEAVES], ids=[c[0] for c in LEAVES])
def test_leaf_layouts_grads_match_torch(stored, make, fn, other_shapes, twice):
    run_use(rand(stored), make, fn, other_shapes, twice=twice)


def test_expanded_leaf_is_allowed_and_gets_a_contiguous_grad():
    ex, tx = leaves(np.ones((3, 1)), lambda L, x: x.expand(3, 4))
    assert ex.stride() == tx.stride() == (1, 0)
    for x in (ex, tx):
        (x * 2).sum().backward()
    assert_grad_same(ex, tx, "expanded leaf")
    assert ex.grad.is_contiguous()


# leaves with a size-1 dim, in a product: (id, stored shape, make, fn, other shapes)
SIZE1_CASES = [
    ("row_of_column_mm", (4, 1), lambda L, x: x.t(), lambda L, x, w: x @ w, [(4, 2)]),
    ("column_of_row_mm_rhs", (1, 4), lambda L, x: x.t(), lambda L, x, w: w @ x, [(2, 4)]),
    ("row_mm", (1, 4), None, lambda L, x, w: x @ w, [(4, 2)]),
    ("column_mm_rhs", (4, 1), None, lambda L, x, w: w @ x, [(2, 4)]),
    ("row_of_column_mul", (4, 1), lambda L, x: x.t(), lambda L, x, w: x * w, [(3, 4)]),
    ("column_of_row_sum", (1, 4), lambda L, x: x.t(), lambda L, x: x.sum(), []),
    ("unsqueezed_transposed", (4, 3), lambda L, x: x.t().unsqueeze(1), lambda L, x, w: L.matmul(w, x), [(5, 1)]),
    ("sliced_to_one_column", (3, 5), lambda L, x: x[:, 1:2], lambda L, x, w: x @ w, [(1, 4)]),
    ("sliced_to_one_column_mul", (3, 5), lambda L, x: x[:, 1:2], lambda L, x, w: x * w, [(3, 4)]),
    ("one_element", (1, 1), None, lambda L, x: x.sum() * 3, []),
    ("one_element_vector", (1,), None, lambda L, x: x.sum(), []),
]


@pytest.mark.parametrize("twice", [False, True], ids=["once", "twice"])
@pytest.mark.parametrize("case", SIZE1_CASES, ids=[c[0] for c in SIZE1_CASES])
def test_size1_dim_leaves_match_torch(case, twice):
    _, stored, make, fn, other_shapes = case
    run_use(rand(stored), make, fn, other_shapes, twice=twice)


@pytest.mark.parametrize("fn,other", [
    (lambda L, x, w: x * w, (3, 4)),
    (lambda L, x, w: (x * w) @ w.t(), (3, 4)),
    (lambda L, x, w: L.addmm(w[:, 0], w * x, w.t()), (3, 4)),
    (lambda L, x, w: (x.exp() + w).sum(), (3, 4)),
    (lambda L, x, w: x, ()),
], ids=["mul", "mul_mm", "scaled_addmm", "exp_add_sum", "identity"])
@pytest.mark.parametrize("twice", [False, True], ids=["once", "twice"])
def test_zero_dim_leaf_matches_torch(fn, other, twice):
    ex, tx = run_use(np.array(0.7), None, fn, [other], twice=twice)
    assert ex.grad.dim() == 0


# ---- accumulation ----

@pytest.mark.parametrize("stored,make", [c[1:] for c in LEAVES], ids=[c[0] for c in LEAVES])
@pytest.mark.parametrize("fn,other_shapes", [
    (lambda L, x, w: x @ w, [(4, 5)]),
    (lambda L, x: x.sum(), []),
    (lambda L, x, w: x * w, [(3, 4)]),
], ids=["mm", "sum", "mul"])
def test_second_backward_adds_in_place_like_torch(stored, make, fn, other_shapes):
    ex, tx = leaves(rand(stored), make)
    others = [leaves(rand(s, 10 + i)) for i, s in enumerate(other_shapes)]
    ptrs, strides = [], []
    for step in range(2):
        for k, (x, L) in enumerate(((ex, ember), (tx, torch))):
            fn(L, x, *[o[k] for o in others]).sum().backward()
        if step == 0:
            ptrs = [ex.grad.data_ptr(), tx.grad.data_ptr()]
            strides = [ex.grad.stride(), tx.grad.stride()]
    assert_grad_same(ex, tx, "leaf")
    assert ex.grad.stride() == strides[0] and tx.grad.stride() == strides[1]
    assert (ex.grad.data_ptr() == ptrs[0]) == (tx.grad.data_ptr() == ptrs[1])
    check_view_flat(ex, tx)


def test_sum_twice_into_a_transposed_leaf():
    # the expanded gradient of sum() must not be kept as .grad: the second call adds into it
    ex, tx = leaves(rand((4, 3)), lambda L, x: x.t())
    for x in (ex, tx):
        s = x.sum()
        s.backward(retain_graph=True)
        s.backward()
    assert_grad_same(ex, tx)
    np.testing.assert_array_equal(ex.grad.numpy(), np.full((3, 4), 2.0))


# ---- stealing: a .grad must not alias a gradient the caller still holds ----

# (id, fn(lib, leaf) -> output whose gradient the caller passes, shape of that gradient)
PASS_THROUGH = [
    ("leaf_itself", lambda L, x: x, (2, 3)),
    ("mul_one", lambda L, x: x * 1, (2, 3)),
    ("add_zero", lambda L, x: x + 0, (2, 3)),
    ("clone", lambda L, x: x.clone(), (2, 3)),
    ("contiguous_noop", lambda L, x: x.contiguous(), (2, 3)),
    ("view", lambda L, x: x.view(6), (6,)),
    ("reshape", lambda L, x: x.reshape(3, 2), (3, 2)),
    ("t", lambda L, x: x.t(), (3, 2)),
    ("expand_sum", lambda L, x: x.unsqueeze(0).expand(4, 2, 3), (4, 2, 3)),
    ("to_same_dtype", lambda L, x: x.to(L.float64), (2, 3)),
]


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous_leaf", "transposed_leaf"])
@pytest.mark.parametrize("fn,gshape", [p[1:] for p in PASS_THROUGH], ids=[p[0] for p in PASS_THROUGH])
def test_grad_does_not_alias_the_callers_gradient_unless_torch_does(fn, gshape, transposed, create_graph):
    ex, tx = leaves(rand((3, 2)), lambda L, x: x.t()) if transposed else leaves(rand((2, 3)))
    g = rand(gshape, 5)
    eg, tg = ember.tensor(g), torch.tensor(g)
    try:
        to = fn(torch, tx)
    except RuntimeError:  # view() of a transposed leaf: ember must refuse too
        with pytest.raises(RuntimeError):
            fn(ember, ex)
        return
    fn(ember, ex).backward(eg, create_graph=create_graph)
    to.backward(tg, create_graph=create_graph)
    ebefore, tbefore = ex.grad.detach().numpy().copy(), tx.grad.detach().numpy().copy()
    eg.add_(100.0)
    tg.add_(100.0)
    # torch keeps a view's gradient without a copy (x.grad then follows g); otherwise not
    torch_aliases = not np.array_equal(tx.grad.detach().numpy(), tbefore)
    ember_aliases = not np.array_equal(ex.grad.detach().numpy(), ebefore)
    assert ember_aliases == torch_aliases, f"ember aliases the caller's gradient: {ember_aliases}, torch: {torch_aliases}"
    assert_grad_same(ex, tx)


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_two_leaves_do_not_share_one_grad(create_graph):
    # add's backward hands the same tensor to both leaves
    a = rand((2, 3))
    res = {}
    for L in LIBS:
        x, y = L.zeros(2, 3, requires_grad=True), L.zeros(2, 3, requires_grad=True)
        ember_leaves(x, y)
        ((x + y) * L.tensor(a)).sum().backward(create_graph=create_graph)
        assert x.grad.data_ptr() != y.grad.data_ptr()
        x.grad.detach().mul_(0)  # what optimizer.zero_grad(set_to_none=False) does
        res[L] = y.grad.detach().numpy().copy()
    np.testing.assert_array_equal(res[ember], res[torch])


def test_plain_backward_after_create_graph_does_not_leak_into_another_leaf():
    a = rand((2, 3))
    res = {}
    for L in LIBS:
        x, y = L.zeros(2, 3, requires_grad=True), L.zeros(2, 3, requires_grad=True)
        ember_leaves(x, y)
        ((x + y) * L.tensor(a)).sum().backward(create_graph=True)
        (x * 1).sum().backward()  # adds into x.grad only
        res[L] = (x.grad.detach().numpy().copy(), y.grad.detach().numpy().copy())
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e, t)


def test_expanded_gradient_of_sum_is_not_kept():
    # sum()'s gradient is one value expanded; .grad is a dense tensor of its own in both
    for L in LIBS:
        x = L.zeros(2, 3, requires_grad=True)
        x.sum().backward()
        assert x.grad.stride() == (3, 1)
        x.grad.add_(1.0)  # would fail on an expanded tensor
        assert x.grad.tolist() == [[2.0] * 3] * 2


# ---- create_graph=True ----

CG_LEAVES = [c for c in LEAVES if c[0] in ("contiguous", "transposed", "sliced", "expanded")]


@pytest.mark.parametrize("fn,other_shapes", [
    (lambda L, x, w: x @ w, [(4, 5)]),
    (lambda L, x, w: w @ x.t(), [(2, 4)]),
    (lambda L, x, w: L.addmm(w[0], x, w), [(4, 5)]),
    (lambda L, x, w: x * w, [(3, 4)]),
    (lambda L, x: x.sum(), []),
], ids=["mm", "product_t", "addmm", "mul", "sum"])
@pytest.mark.parametrize("stored,make", [c[1:] for c in CG_LEAVES], ids=[c[0] for c in CG_LEAVES])
def test_create_graph_grad_layout_matches_torch(stored, make, fn, other_shapes):
    # torch copies a gradient that breaks the layout contract into the leaf's layout even
    # under create_graph (the copy is differentiable); the .grad of a non-contiguous leaf
    # must not be kept in another layout, nor be sum()'s expanded (stride 0) gradient
    ex, tx = run_use(rand(stored), make, fn, other_shapes, create_graph=True)
    assert ex.grad.requires_grad == tx.grad.requires_grad


@pytest.mark.parametrize("stored,make", [c[1:] for c in CG_LEAVES], ids=[c[0] for c in CG_LEAVES])
def test_plain_backward_after_create_graph_sum(stored, make):
    # a create_graph backward then a plain one adds into .grad: it must be a writable, dense tensor
    ex, tx = leaves(rand(stored), make)
    for x in (ex, tx):
        x.sum().backward(create_graph=True)
        (x * 2).sum().backward()
    assert_grad_same(ex, tx)


@pytest.mark.parametrize("weight_layout", ["row_major_used_as_t", "column_major_leaf"])
def test_double_backward_through_grad_of_mm_with_transposed_weight(weight_layout):
    a, w = rand((4, 3), 1), rand((5, 3), 2)
    ex, tx = leaves(a)
    if weight_layout == "row_major_used_as_t":
        ew, tw = leaves(w)  # (5, 3) row-major; x @ W.t() multiplies by a column-major view
    else:
        ew, tw = leaves(np.ascontiguousarray(w.T), lambda L, x: x.t())  # (5, 3) stored column-major
    v, u = rand((4, 3), 3), rand((5, 3), 4)
    second = {}
    for L, x, W in ((ember, ex, ew), (torch, tx, tw)):
        y = x @ W.t()
        (y.tanh() * y).sum().backward(create_graph=True)
        assert x.grad.requires_grad and W.grad.requires_grad
        first = (x.grad.detach().numpy().copy(), W.grad.detach().numpy().copy(),
                 x.grad.stride(), W.grad.stride())
        gx, gw = L.autograd.grad((x.grad * L.tensor(v)).sum() + (W.grad * L.tensor(u)).pow(2).sum(), [x, W])
        second[L] = first + (gx.numpy(), gw.numpy())
    e, t = second[ember], second[torch]
    for i in (0, 1, 4, 5):
        np.testing.assert_allclose(e[i], t[i], rtol=1e-9, atol=1e-11)
    assert e[2:4] == t[2:4], f"grad strides {e[2:4]} vs torch {t[2:4]}"


def test_double_backward_accumulates_into_grad_like_torch():
    # backward through x.grad after create_graph adds the second-order gradient into x.grad
    a, w = rand((4, 3), 1), rand((5, 3), 2)
    ex, tx = leaves(a)
    ew, tw = leaves(w)
    for L, x, W in ((ember, ex, ew), (torch, tx, tw)):
        ((x @ W.t()).pow(3)).sum().backward(create_graph=True)
        (x.grad.pow(2).sum() + W.grad.sum()).backward()
    np.testing.assert_allclose(ex.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(ew.grad.detach().numpy(), tw.grad.detach().numpy(), rtol=1e-9)
    assert ex.grad.is_contiguous() == tx.grad.is_contiguous()
    assert ew.grad.is_contiguous() == tw.grad.is_contiguous()


# ---- matmul of (..., n, k) @ (k, m) ----

MATMUL_CASES = [
    # (id, lhs stored shape, lhs make, rhs stored shape, rhs make)
    ("3d_2d", (2, 3, 4), None, (4, 5), None),
    ("4d_2d", (2, 3, 2, 4), None, (4, 5), None),
    ("3d_2d_transposed_rhs", (2, 3, 4), None, (5, 4), lambda L, x: x.t()),
    ("4d_2d_transposed_rhs", (2, 3, 2, 4), None, (5, 4), lambda L, x: x.t()),
    ("3d_transposed_lhs", (2, 4, 3), lambda L, x: x.transpose(1, 2), (4, 5), None),
    ("4d_permuted_lhs", (3, 2, 4, 2), lambda L, x: x.permute(1, 0, 3, 2), (5, 4), lambda L, x: x.t()),
    ("3d_sliced_rhs", (2, 3, 4), None, (4, 10), lambda L, x: x[:, ::2]),
    ("3d_expanded_lhs", (1, 3, 4), lambda L, x: x.expand(2, 3, 4), (4, 5), None),
    ("empty_batch", (0, 3, 4), None, (4, 5), None),
    ("empty_batch_transposed_rhs", (0, 3, 4), None, (5, 4), lambda L, x: x.t()),
    ("empty_inner_batch_4d", (2, 0, 3, 4), None, (5, 4), lambda L, x: x.t()),
    ("empty_rows", (2, 0, 4), None, (5, 4), lambda L, x: x.t()),
    ("empty_k", (2, 3, 0), None, (0, 5), None),
    ("one_row", (1, 1, 4), None, (5, 4), lambda L, x: x.t()),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", MATMUL_CASES, ids=[c[0] for c in MATMUL_CASES])
def test_batched_matmul_by_a_matrix_grads_match_torch(case, dtype):
    _, sa, ma, sb, mb = case
    ea, ta = leaves(rand(sa, 1, dtype), ma)
    eb, tb = leaves(rand(sb, 2, dtype), mb)
    eo, to = ea @ eb, ta @ tb
    assert_same(eo, to, "output", dtype)
    backward_weighted(eo, ember)
    backward_weighted(to, torch)
    assert_grad_same(ea, ta, "lhs", dtype)
    assert_grad_same(eb, tb, "rhs", dtype)
    check_view_flat(eb, tb, "rhs")


@pytest.mark.parametrize("case", MATMUL_CASES[:4], ids=[c[0] for c in MATMUL_CASES[:4]])
def test_batched_matmul_double_backward_matches_torch(case):
    _, sa, ma, sb, mb = case
    ea, ta = leaves(rand(sa, 1), ma)
    eb, tb = leaves(rand(sb, 2), mb)
    res = {}
    for L, a, b in ((ember, ea, eb), (torch, ta, tb)):
        ga, gb = L.autograd.grad((L.matmul(a, b).sin()).sum(), [a, b], create_graph=True)
        res[L] = [g.detach().numpy() for g in (ga, gb)]
        res[L] += [g.numpy() for g in L.autograd.grad(ga.pow(2).sum() + gb.sum(), [a, b])]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-11)
