"""Sparse COO tensors against torch's: construction and its checks, coalescing, the
accessors, arithmetic, torch.sparse's functions, products with dense matrices and their
gradients (into the dense operand and the sparse values), printing, pickling and
ember.save/load both ways, the refusal of every other op, and a GCN trained a few steps."""
import copy
import io
import math
import pickle

import pytest

import ember
from helpers import assert_same, from_torch, torch

TESTED_OPS = {"_sparse_csr_mm", "_sparse_sampled_dot"}

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")  # torch's, on every construction

# indices with a duplicate (0, 2) and out of order: uncoalesced
INDICES = [[0, 1, 1, 0], [2, 0, 2, 2]]
VALUES = [3.0, 4.0, 5.0, 1.0]
DTYPES = ["float32", "float64", "int64"]


def both(lib, dtype="float32", indices=INDICES, values=VALUES, size=(2, 3), **kwargs):
    return lib.sparse_coo_tensor(lib.tensor(indices), lib.tensor(values, dtype=getattr(lib, dtype)), size, **kwargs)


def same_sparse(e, t, tol=0.0):
    """Same layout, shape, dtype, nnz, coalesced flag, indices and values."""
    assert e.layout is ember.sparse_coo and e.is_sparse
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert (e.sparse_dim(), e.dense_dim(), e._nnz()) == (t.sparse_dim(), t.dense_dim(), t._nnz())
    assert e.is_coalesced() == t.is_coalesced()
    assert_same(e._indices(), t._indices())
    assert_same(e._values().detach(), t._values().detach(), tol=tol)


def same_dense_value(e, t, tol=1e-6):
    """Same tensor once made dense (for results whose nnz or order may differ)."""
    assert e.layout is ember.sparse_coo
    assert_same(e.to_dense().detach(), t.to_dense().detach(), tol=tol)


# ---- construction ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_construct_accessors_and_to_dense(dtype):
    e, t = both(ember, dtype), both(torch, dtype)
    same_sparse(e, t)
    assert_same(e.to_dense(), t.to_dense())
    c, tc = e.coalesce(), t.coalesce()
    same_sparse(c, tc)
    assert_same(c.indices(), tc.indices())
    assert_same(c.values(), tc.values())
    assert c.coalesce() is c
    assert e.dtype == getattr(ember, dtype) and e.numel() == 6 and e.dim() == 2 and len(e) == 2
    assert e.stride() == t.stride() and e.is_contiguous() is False


def test_size_inferred_dtype_and_lists():
    same_sparse(ember.sparse_coo_tensor(INDICES, VALUES), torch.sparse_coo_tensor(INDICES, VALUES))
    e = ember.sparse_coo_tensor(ember.tensor(INDICES), ember.tensor(VALUES), dtype=ember.float64)
    same_sparse(e, torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor(VALUES), dtype=torch.float64))
    e = ember.sparse_coo_tensor(ember.tensor(INDICES), ember.tensor(VALUES), (4, 5), is_coalesced=False)
    assert e.shape == (4, 5) and not e.is_coalesced()


def test_empty_nnz():
    e = ember.sparse_coo_tensor(ember.zeros(2, 0, dtype=ember.int64), ember.zeros(0), (2, 3))
    t = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.int64), torch.zeros(0), (2, 3))
    same_sparse(e, t)
    same_sparse(e.coalesce(), t.coalesce())
    assert_same(e.to_dense(), t.to_dense())
    assert_same(ember.mm(e, ember.ones(3, 2)), torch.mm(t, torch.ones(3, 2)))
    assert repr(e) == repr(t).replace("torch.", "ember.")
    same_sparse(ember.zeros(2, 3).to_sparse(), torch.zeros(2, 3).to_sparse())


def test_hybrid_values():
    values = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    e, t = both(ember, values=values, size=(2, 3, 2)), both(torch, values=values, size=(2, 3, 2))
    same_sparse(e, t)
    same_sparse(e.coalesce(), t.coalesce())
    assert_same(e.to_dense(), t.to_dense())
    assert repr(e.coalesce()) == repr(t.coalesce()).replace("torch.", "ember.")


@pytest.mark.parametrize("make, message", [
    (lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES[:3])), "same nnz"),
    (lambda lib: lib.sparse_coo_tensor(lib.tensor(INDICES), lib.tensor(VALUES), (1, 3), check_invariants=True),
     "size is inconsistent with indices"),
    (lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, -1]]), lib.tensor([1.0, 2.0]), (3,), check_invariants=True),
     "negative index"),
    (lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 1], [1, 0]]), lib.tensor([1.0, 2.0]), (3,)),
     r"'len\(size\) == sparse_dim \+ dense_dim' is not satisfied"),
])
def test_construction_errors(make, message):
    with pytest.raises(RuntimeError, match=message):
        make(torch)
    with pytest.raises(RuntimeError, match=message):
        make(ember)


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_sparse(dtype):
    base = [[0, 1, 0], [2, 0, 0], [0, 0, 3]]
    d_e, d_t = ember.tensor(base, dtype=getattr(ember, dtype)), torch.tensor(base, dtype=getattr(torch, dtype))
    same_sparse(d_e.to_sparse(), d_t.to_sparse())
    same_sparse(d_e.to_sparse(1), d_t.to_sparse(1))
    same_sparse(d_e.t().to_sparse(), d_t.t().to_sparse())  # non-contiguous input
    assert d_e.to_dense() is d_e


# ---- arithmetic ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_add_mul_div_neg(dtype):
    e, t = both(ember, dtype), both(torch, dtype)
    same_dense_value(e + e, t + t)
    same_dense_value(e.coalesce() + e.coalesce(), t.coalesce() + t.coalesce())
    assert (e.coalesce() + e.coalesce()).is_coalesced()
    same_dense_value(e - e.coalesce(), t - t.coalesce())
    same_sparse(e * 2, t * 2)
    same_sparse(2 * e, 2 * t)
    same_sparse(-e, -t)
    same_sparse(e.coalesce() * 3, t.coalesce() * 3)
    if dtype != "int64":
        same_sparse(e / 2, t / 2)
    dense_e, dense_t = ember.ones(2, 3, dtype=e.dtype), torch.ones(2, 3, dtype=t.dtype)
    assert_same(dense_e + e, dense_t + t)
    same_dense_value(e * (dense_e * 2), t * (dense_t * 2))
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        e + dense_e


def test_in_place_add_and_mul():
    e, t = both(ember), both(torch)
    e.add_(e.coalesce())
    t.add_(t.coalesce())
    same_dense_value(e, t)
    e.mul_(2)
    t.mul_(2)
    same_dense_value(e, t)


def test_sum_softmax_log_softmax():
    e, t = both(ember), both(torch)
    assert_same(ember.sparse.sum(e), torch.sparse.sum(t))
    same_sparse(ember.sparse.sum(e, 0), torch.sparse.sum(t, 0))
    same_sparse(ember.sparse.sum(e, 1), torch.sparse.sum(t, 1))
    assert_same(ember.sparse.sum(e, (0, 1)), torch.sparse.sum(t, (0, 1)))
    assert_same(e.sum(), t.sum())
    for dim in (0, 1, -1):
        same_sparse(ember.sparse.softmax(e, dim), torch.sparse.softmax(t, dim), tol=1e-6)
        same_sparse(ember.sparse.log_softmax(e, dim), torch.sparse.log_softmax(t, dim), tol=1e-6)


def test_softmax_gradient():
    i = [[0, 0, 1, 2, 2], [0, 2, 1, 0, 2]]
    v = [0.5, -1.0, 2.0, 0.25, 1.5]
    ve, vt = ember.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    w = [1.0, 2.0, 3.0, 4.0, 5.0]
    (ember.sparse.softmax(ember.sparse_coo_tensor(i, ve, (3, 3)), 1).values() * ember.tensor(w)).sum().backward()
    (torch.sparse.softmax(torch.sparse_coo_tensor(i, vt, (3, 3)), 1).values() * torch.tensor(w)).sum().backward()
    assert_same(ve.grad, vt.grad, tol=1e-6)


# ---- products ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_times_dense(dtype):
    e, t = both(ember, dtype), both(torch, dtype)
    m = [[1, 2], [3, 4], [5, 6]]
    me, mt = ember.tensor(m, dtype=e.dtype), torch.tensor(m, dtype=t.dtype)
    assert_same(ember.mm(e, me), torch.mm(t, mt))
    assert_same(e @ me, t @ mt)
    assert_same(ember.matmul(e, me), torch.matmul(t, mt))
    assert_same(e.mm(me), t.mm(mt))
    assert_same(ember.spmm(e, me), torch.spmm(t, mt))
    assert_same(ember.sparse.mm(e, me), torch.sparse.mm(t, mt))
    assert_same(e @ me[:, 0], t @ mt[:, 0])
    left = [[1, 2], [3, 4], [5, 6], [7, 8]]
    le, lt = ember.tensor(left, dtype=e.dtype), torch.tensor(left, dtype=t.dtype)
    assert_same(le @ e, lt @ t, strides=True)
    assert_same(ember.mm(le, e), torch.mm(lt, t))
    if dtype != "int64":
        assert_same(ember.sparse.addmm(ember.ones(2, 2, dtype=e.dtype), e, me, beta=0.5, alpha=2),
                    torch.sparse.addmm(torch.ones(2, 2, dtype=t.dtype), t, mt, beta=0.5, alpha=2))


def test_products_larger_threaded_and_transposed_dense():
    g = torch.Generator().manual_seed(0)
    dense_t = torch.rand(300, 200, generator=g)
    dense_t[dense_t < 0.9] = 0
    st = dense_t.to_sparse()
    se = from_torch(dense_t).to_sparse()
    xt = torch.randn(40, 200, generator=g).t()  # non-contiguous
    xe = from_torch(xt.t().contiguous()).t()
    assert_same(ember.mm(se, xe), torch.mm(st, xt), tol=1e-5)
    yt = torch.randn(7, 300, generator=g)
    assert_same(from_torch(yt) @ se, yt @ st, tol=1e-5)


def test_product_errors():
    e, t = both(ember), both(torch)
    for lib, s in ((ember, e), (torch, t)):
        with pytest.raises(RuntimeError):
            lib.mm(s, lib.ones(4, 2))
        with pytest.raises(RuntimeError):
            lib.mm(s, lib.ones(3, 2, dtype=lib.float64))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_into_dense_and_values(dtype):
    m = [[1.0, -2.0], [0.5, 4.0], [3.0, 1.5]]
    results = {}
    for lib in (ember, torch):
        v = lib.tensor(VALUES, dtype=getattr(lib, dtype), requires_grad=True)
        x = lib.tensor(m, dtype=v.dtype, requires_grad=True)
        y = lib.tensor([[1.0, 2.0], [-1.0, 0.5], [2.0, 3.0], [0.0, 1.0]], dtype=v.dtype, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(INDICES), v, (2, 3))
        assert s.requires_grad and not s.is_leaf
        out = lib.sparse.mm(s, x) * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=v.dtype)
        (out.sum() + (y @ s).pow(2).sum()).backward()
        results[lib] = (v.grad, x.grad, y.grad)
    assert_same(results[ember], results[torch], tol=1e-6)


def test_gradcheck_dense_and_values():
    i = ember.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    v = ember.tensor([0.5, -1.0, 2.0, 0.25], dtype=ember.float64, requires_grad=True)
    x = ember.randn(3, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v, x: ember.mm(ember.sparse_coo_tensor(i, v, (3, 3)), x), (v, x))
    assert ember.autograd.gradcheck(lambda v, x: ember.mm(x.t(), ember.sparse_coo_tensor(i, v, (3, 3))), (v, x))


def test_sparse_leaf_gradient_is_sparse():
    m = [[1.0, -2.0], [0.5, 4.0], [3.0, 1.5]]
    e = both(ember, requires_grad=True)
    t = both(torch, requires_grad=True)
    assert e.requires_grad and e.is_leaf and e.grad is None
    ember.sparse.mm(e, ember.tensor(m)).sum().backward()
    torch.sparse.mm(t, torch.tensor(m)).sum().backward()
    same_sparse(e.grad, t.grad, tol=1e-6)
    e.grad = None
    assert e.grad is None


# ---- printing, pickling, saving ----

def test_printing():
    for make in (lambda lib: both(lib), lambda lib: both(lib).coalesce(), lambda lib: both(lib, "int64"),
                 lambda lib: both(lib, "float64", requires_grad=True),
                 lambda lib: both(lib, "float64", values=[[1.0, 2.0]] * 4, size=(2, 3, 2))):
        assert repr(make(ember)) == repr(make(torch)).replace("torch.", "ember.")
    v = torch.tensor(VALUES, requires_grad=True)
    t = torch.sparse_coo_tensor(INDICES, v * 2, (2, 3))
    e = ember.sparse_coo_tensor(INDICES, ember.tensor(VALUES, requires_grad=True) * 2, (2, 3))
    assert "grad_fn=<" in repr(e) and "grad_fn=<" in repr(t)


def test_pickle_and_copy():
    e = both(ember, "float64")
    for got in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e), e.clone(), e.detach(), e.data):
        same_sparse(got, both(torch, "float64"))
    r = pickle.loads(pickle.dumps(both(ember, requires_grad=True)))
    assert r.requires_grad and r.is_leaf


def test_save_load_both_ways():
    e, t = both(ember), both(torch)
    buffer = io.BytesIO()
    ember.save({"adj": e, "coalesced": e.coalesce()}, buffer)
    loaded = torch.load(io.BytesIO(buffer.getvalue()))
    same_sparse(e, loaded["adj"])
    same_sparse(e.coalesce(), loaded["coalesced"])
    buffer = io.BytesIO()
    torch.save({"adj": t, "coalesced": t.coalesce()}, buffer)
    for weights_only in (True, False):
        got = ember.load(io.BytesIO(buffer.getvalue()), weights_only=weights_only)
        same_sparse(got["adj"], t)
        same_sparse(got["coalesced"], t.coalesce())


# ---- everything else refuses a sparse tensor ----

@pytest.mark.parametrize("op, name", [
    (lambda lib, s: s.view(6), "view"),
    (lambda lib, s: s.exp(), "exp"),
    (lambda lib, s: lib.exp(s), "exp"),
    (lambda lib, s: s.mean(), "mean"),
    (lambda lib, s: s == s, "eq"),
    (lambda lib, s: lib.cat([lib.ones(2, 3), s]), "cat"),
    (lambda lib, s: lib.ones(2, 3).copy_(s), ""),
])
def test_unsupported_ops_raise(op, name):
    e, t = both(ember), both(torch)
    try:
        op(torch, t)
    except Exception as exc:
        expected = type(exc)
    else:
        expected = NotImplementedError  # torch supports it; ember refuses it with torch's error
    with pytest.raises(expected) as info:
        op(ember, e)
    if expected is NotImplementedError:
        assert "with arguments from the 'SparseCPU' backend" in str(info.value)
        assert f"'aten::{name}" in str(info.value)


@pytest.mark.parametrize("op", [
    lambda s: s.data_ptr(), lambda s: s.numpy(), lambda s: s.untyped_storage(), lambda s: s.tolist(),
    lambda s: s.item(), lambda s: bool(s), lambda s: s.indices(), lambda s: s.values(), lambda s: s.__dlpack__(),
    lambda s: s.share_memory_(),
])
def test_element_access_raises_as_torch(op):
    t = both(torch)
    with pytest.raises(Exception) as expected:
        op(t)
    with pytest.raises(expected.type):
        op(both(ember))


def test_kernel_ops_check_their_input():
    crow, col = ember.tensor([0, 1, 2]), ember.tensor([1, 0])
    with pytest.raises(IndexError):
        ember._sparse_csr_mm(crow, ember.tensor([1, 5]), ember.ones(2), ember.ones(2, 2))
    with pytest.raises(RuntimeError, match="crow_indices"):
        ember._sparse_csr_mm(ember.tensor([0, 2, 1]), col, ember.ones(2), ember.ones(2, 2))
    with pytest.raises(NotImplementedError):
        ember._sparse_csr_mm(crow, col, ember.ones(2, dtype=ember.int64), ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(IndexError):
        ember._sparse_sampled_dot(ember.tensor([0, 3]), col, ember.ones(2, 2), ember.ones(2, 2))
    assert ember._sparse_sampled_dot(ember.tensor([0, 1]), col, ember.eye(2), ember.ones(2, 2)).tolist() == [1.0, 1.0]


# ---- a GCN (pytorch/examples' gcn: Linear layers and sparse.mm over a normalized adjacency) ----

def _gcn_run(lib, weights, adjacency, features, labels):
    nn, F = lib.nn, lib.nn.functional

    class GraphConv(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.linear = nn.Linear(n_in, n_out)

        def forward(self, x, adj):
            return lib.sparse.mm(adj, self.linear(x))

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gc1, self.gc2 = GraphConv(8, 16), GraphConv(16, 3)

        def forward(self, x, adj):
            return F.log_softmax(self.gc2(F.relu(self.gc1(x, adj)), adj), dim=1)

    model = GCN()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    i, v, n = adjacency
    adj = lib.sparse_coo_tensor(lib.tensor(i), lib.tensor(v), (n, n))
    x, y = lib.tensor(features), lib.tensor(labels)
    opt = lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = F.nll_loss(model(x, adj), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_gcn_trains_as_torch():
    g = torch.Generator().manual_seed(1)
    n = 30
    a = (torch.rand(n, n, generator=g) < 0.15).float()
    a = ((a + a.t() + torch.eye(n)) > 0).float()
    d = a.sum(1).pow(-0.5)
    norm = d[:, None] * a * d[None, :]  # D^-1/2 (A + I) D^-1/2
    sp = norm.to_sparse()
    adjacency = (sp.indices().tolist(), sp.values().tolist(), n)
    shapes = [(16, 8), (16,), (3, 16), (3,)]
    weights = [(torch.randn(s, generator=g) * 0.3).tolist() for s in shapes]
    features = torch.randn(n, 8, generator=g).tolist()
    labels = torch.randint(0, 3, (n,), generator=g).tolist()
    got = _gcn_run(ember, weights, adjacency, features, labels)
    expected = _gcn_run(torch, weights, adjacency, features, labels)
    assert all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for a, b in zip(got, expected)), (got, expected)
    assert got[-1] < got[0]
