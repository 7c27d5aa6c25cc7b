"""Complex tensors in ember.distributed's collectives (issue 15), as torch 2.13's gloo
treats them: all_reduce, reduce and reduce_scatter take SUM and AVG (the engine reduces
the tensor's real view) and refuse the other reductions with torch's exceptions; the
collectives that move elements (broadcast, all_gather, gather, scatter, all_to_all,
send/recv) move complex numbers as they move any other dtype. One spawned 2-rank group
runs every case (ranks are slow to start). One difference from torch: torch's gloo
gather raises "Invalid scalar type" for a complex tensor; ember's gathers it."""
import pytest

import ember
import ember.distributed as dist
from test_distributed import run_ranks

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="ember built without gloo (libgloo-dev)")
R = dist.ReduceOp


def base(rank, dtype=ember.complex64):
    return ember.tensor([1 + 2j, 3 - 1j, -0.5 + 0.25j], dtype=dtype) * (rank + 1)


def values(t):
    return [complex(z) for z in t.reshape(-1).tolist()] if t.dim() else [complex(t.item())]


def _collectives(rank, world):
    out = {}
    for dtype in (ember.complex64, ember.complex128):
        key = str(dtype)
        t = base(rank, dtype)
        dist.all_reduce(t)
        out[key, "all_reduce_sum"] = (str(t.dtype), values(t))
        t = base(rank, dtype)
        dist.all_reduce(t, R.AVG)
        out[key, "all_reduce_avg"] = values(t)
        # a non-contiguous tensor: the strided elements only
        big = ember.stack([base(rank, dtype), base(rank, dtype) * 100], 1)
        col = big[:, 0]
        dist.all_reduce(col)
        out[key, "all_reduce_strided"] = (values(col), values(big[:, 1]))
        t = base(rank, dtype)
        dist.reduce(t, 0)
        out[key, "reduce_sum"] = values(t)
        t = base(rank, dtype)
        dist.reduce(t, 1, R.AVG)
        out[key, "reduce_avg"] = values(t)
        inp = ember.tensor([1 + 1j, 2 - 3j], dtype=dtype) * (rank + 1)
        o = ember.empty(1, dtype=dtype)
        dist.reduce_scatter_tensor(o, inp)
        out[key, "reduce_scatter_sum"] = (values(o), values(inp))  # the input is left as it was
        dist.reduce_scatter_tensor(o, inp, R.AVG)
        out[key, "reduce_scatter_avg"] = values(o)
        dist.reduce_scatter(o, [inp[:1], inp[1:]])
        out[key, "reduce_scatter_list"] = values(o)
    t = base(rank)
    dist.broadcast(t, 1)
    out["broadcast"] = values(t)
    lst = [ember.empty(3, dtype=ember.complex64) for _ in range(world)]
    dist.all_gather(lst, base(rank))
    out["all_gather"] = [values(x) for x in lst]
    o = ember.empty(3 * world, dtype=ember.complex64)
    dist.all_gather_into_tensor(o, base(rank))
    out["all_gather_into_tensor"] = values(o)
    lst = [ember.empty(3, dtype=ember.complex64) for _ in range(world)] if rank == 0 else None
    dist.gather(base(rank), lst, 0)
    out["gather"] = [values(x) for x in lst] if rank == 0 else None
    o = ember.empty(3, dtype=ember.complex128)
    dist.scatter(o, [base(0, ember.complex128) * 10, base(0, ember.complex128) * 20] if rank == 0 else None, 0)
    out["scatter"] = values(o)
    lst = [ember.empty(1, dtype=ember.complex64) for _ in range(world)]
    dist.all_to_all(lst, [ember.tensor([rank + 1j]), ember.tensor([rank + 2j])])
    out["all_to_all"] = [values(x) for x in lst]
    o = ember.empty(2, dtype=ember.complex64)
    dist.all_to_all_single(o, base(rank)[:2])
    out["all_to_all_single"] = values(o)
    t = base(rank, ember.complex128)
    if rank == 0:
        dist.recv(t, 1)
    else:
        dist.send(t * 5, 0)
    out["send_recv"] = values(t)
    errors = []
    for call in (lambda: dist.all_reduce(base(rank), R.PRODUCT), lambda: dist.all_reduce(base(rank), R.MAX),
                 lambda: dist.all_reduce(base(rank), R.BAND), lambda: dist.reduce(base(rank), 0, R.MIN),
                 lambda: dist.reduce_scatter_tensor(ember.empty(1, dtype=ember.complex64), base(rank)[:2], R.MAX)):
        try:
            call()
            errors.append(None)
        except (ValueError, RuntimeError) as e:
            errors.append(f"{type(e).__name__}: {e}")
    out["errors"] = errors
    dist.barrier()
    return out


def test_complex_collectives():
    r0, r1 = run_ranks(2, _collectives)
    b0, b1 = [1 + 2j, 3 - 1j, -0.5 + 0.25j], [2 + 4j, 6 - 2j, -1 + 0.5j]
    total = [x + y for x, y in zip(b0, b1)]
    for key in ("ember.complex64", "ember.complex128"):
        for r in (r0, r1):
            assert r[key, "all_reduce_sum"] == (key, total)
            assert r[key, "all_reduce_avg"] == [z / 2 for z in total]
        assert r0[key, "all_reduce_strided"] == (total, [z * 100 for z in b0])
        assert r1[key, "all_reduce_strided"] == (total, [z * 100 for z in b1])
        assert r0[key, "reduce_sum"] == total and r1[key, "reduce_sum"] == b1  # not the root: as it was
        assert r0[key, "reduce_avg"] == b0 and r1[key, "reduce_avg"] == [z / 2 for z in total]
        assert r0[key, "reduce_scatter_sum"] == ([3 + 3j], [1 + 1j, 2 - 3j])
        assert r1[key, "reduce_scatter_sum"] == ([6 - 9j], [2 + 2j, 4 - 6j])
        assert r0[key, "reduce_scatter_avg"] == [1.5 + 1.5j] and r1[key, "reduce_scatter_avg"] == [3 - 4.5j]
        assert r0[key, "reduce_scatter_list"] == [3 + 3j] and r1[key, "reduce_scatter_list"] == [6 - 9j]
    for r in (r0, r1):
        assert r["broadcast"] == b1
        assert r["all_gather"] == [b0, b1] and r["all_gather_into_tensor"] == b0 + b1
    assert r0["gather"] == [b0, b1]
    assert r0["scatter"] == [z * 10 for z in b0] and r1["scatter"] == [z * 20 for z in b0]
    assert r0["all_to_all"] == [[1j], [1 + 1j]] and r1["all_to_all"] == [[2j], [1 + 2j]]
    assert r0["all_to_all_single"] == [b0[0], b1[0]] and r1["all_to_all_single"] == [b0[1], b1[1]]
    assert r0["send_recv"] == [z * 5 for z in b1]
    # torch 2.13 gloo's messages, word for word (its missing space included)
    assert r0["errors"] == r1["errors"] == [
        "ValueError: all_reduce does not support RedOpType.PRODUCT on complex tensors",
        "ValueError: all_reduce does not support RedOpType.MAX on complex tensors",
        "ValueError: all_reduce does not support RedOpType.BAND on complex tensors",
        "RuntimeError: reduce does not supporton complex tensors",
        "RuntimeError: all_reduce does not supporton complex tensors"]
