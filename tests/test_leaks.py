"""Leaks: every declared op (a call that returns and a call that raises, for each Python
binding the generator makes), the common views and indexing forms, storages, numpy and
pickling, run over and over; the live TensorImpls and StorageImpls (ember._C._live_objects),
the memory Python allocates (tracemalloc) and the process's RSS must not grow.

The default run is short; the long one is its own command:

    EMBER_LEAK_ITERATIONS=10000 python -m pytest -q tests/test_leaks.py -s

and prints what it measured (the README's "Reliability" figures). One pass over every
declared op is ~1300 calls (~0.15 s), so EMBER_LEAK_OP_ITERATIONS may set that loop's count
apart. The long run leaves tracemalloc off (it triples the time); the live-object count
and RSS are checked at every length."""
from __future__ import annotations

import contextlib
import gc
import os
import pickle
import random
import resource
import sys
import tracemalloc
from pathlib import Path

import pytest

import ember

np = pytest.importorskip("numpy")
pytest.importorskip("atheris")
pytest.importorskip("yaml")
sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import fuzz_args  # noqa: E402
from _common import Values, expected  # noqa: E402

ITERATIONS = int(os.environ.get("EMBER_LEAK_ITERATIONS", "0"))
OP_ITERATIONS = int(os.environ.get("EMBER_LEAK_OP_ITERATIONS", str(ITERATIONS)))


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@contextlib.contextmanager
def capped_memory(extra=5 << 29):
    """Allocations past `extra` more bytes of address space fail (ember's RuntimeError)
    instead of filling gigabytes, as in the fuzz harnesses: a size like (2, 2**31 - 1) is
    fair game for the argument fuzzer, but `tile` filling 4 GiB for minutes is no leak test.
    Under ASan, whose shadow memory needs terabytes of address space, run.sh caps single
    allocations instead (max_allocation_size_mb)."""
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (mapped + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def binding_inputs():
    """For each declared binding, fuzzer inputs (found from a fixed seed) making one call
    that returns and one that raises, where the binding has such calls."""
    rnd = random.Random(6)
    found = []
    for binding in fuzz_args.BINDINGS:
        outcomes = {}
        for _ in range(60):
            data = bytes(rnd.randrange(256) for _ in range(rnd.randrange(8, 120)))
            try:
                with capped_memory():
                    ok = bool(fuzz_args.call(Values(data), binding))
            except Exception as e:  # noqa: BLE001
                assert expected(e), f"{binding.name}: {e!r}"
                ok = False
            outcomes.setdefault(ok, data)
            if len(outcomes) == 2:
                break
        found += [(binding, data) for data in outcomes.values()]
    return found


def run_bindings(inputs):
    with capped_memory():
        for binding, data in inputs:
            fuzz_args.call(Values(data), binding)


def raises(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        assert expected(e), repr(e)
        return
    raise AssertionError(f"{fn} did not raise")


def views_and_indexing():
    """The common views, indexing forms, conversions and their error paths."""
    x = ember.arange(24, dtype=ember.float32).reshape(2, 3, 4)
    idx = ember.tensor([1, 0])
    mask = x > 10
    views = [x.view(-1), x.view(6, 4), x.reshape(4, 6), x[0].t(), x.transpose(0, 2),
             x.permute(2, 0, 1), x.unsqueeze(1).expand(2, 5, 3, 4), x.narrow(2, 1, 2), x.select(1, 2),
             x.unfold(2, 2, 1), x.as_strided((2, 2), (1, 2), 3), x.flatten(), x.squeeze(), x[0].unsqueeze(0),
             x.movedim(0, 2), x.diagonal(0, 1, 2), x.view(ember.int32)]
    views += list(x.split(1, 1)) + list(x.chunk(2, 2)) + list(x.unbind(0))
    reads = [x[0], x[:, 1], x[..., None], x[1, ::2, 1:], x[idx], x[:, idx], x[mask], x[idx, 1, idx],
             x[None, ..., 0], x[ember.tensor(1)], x[[0, 1], [1, 2]], x[True]]
    y = x.clone()
    y[0] = 1
    y[:, 1] = ember.tensor([1.0, 2.0, 3.0, 4.0])
    y[mask] = 0
    y[idx] = y[0].clone()
    y[idx, 1] += 1
    y[..., 0] = 2.5
    y.index_put_((idx,), ember.tensor(3.0), accumulate=True)
    conv = [x.to(ember.float64), x.half(), x.int(), x.bool(), x.contiguous(), x.transpose(0, 1).contiguous(),
            x.tolist(), x[0, 0, 0].item(), repr(x), str(x[0]),
            x.numpy(), ember.from_numpy(np.arange(6.0).reshape(2, 3)[:, ::2]), ember.tensor(np.ones(3)),
            pickle.loads(pickle.dumps(x[1:])), x.untyped_storage()[2:10], x.storage().tolist(),
            ember.FloatTensor(2, 3), ember.LongTensor([1, 2]), ember.tensor([[1, 2], [3, 4]]), x.new_zeros(3)]
    # error paths: each raises, and must release what it took
    raises(x.__getitem__, 10)
    raises(x.__getitem__, (0, 0, 0, 0))
    raises(x.__getitem__, "a")
    raises(x.__getitem__, ember.tensor([5]))
    raises(x.__getitem__, ember.tensor([True, False, True]))
    raises(x.__setitem__, (0, 5), 1)
    raises(x.__setitem__, 0, ember.ones(7))
    raises(x.__setitem__, 0, "a")
    raises(x.view, 5, 5)
    raises(x.view, -1, -1)
    raises(x.reshape, (2**62, 4))
    raises(x.expand, 3, 3, 4)
    raises(x.permute, 0, 0, 1)
    raises(x.as_strided, (100,), (1,))
    raises(x.narrow, 0, 5, 1)
    raises(ember.tensor, [[1, 2], [3]])
    raises(ember.tensor, [1, "a"])
    raises(ember.tensor, object())
    raises(ember.empty, -1)
    raises(ember.zeros, 2**62, 4)
    raises(ember.FloatTensor, "x")
    raises(ember.from_numpy, np.array(["a"]))
    raises(ember.cat, [x, ember.ones(3)])
    raises(x.add, "a")
    raises(x.add, ember.ones(5))
    raises(x.sum, dim=7)
    raises(x.to, "bogus")
    raises(pickle.loads, pickle.dumps(x)[:-5])
    raises(ember.UntypedStorage.from_buffer, b"abc", "bogus")
    return len(views) + len(reads) + len(conv)


def measure(work, iterations, warmup=3, trace=not ITERATIONS):
    for _ in range(warmup):
        work()
    gc.collect()
    live0 = ember._C._live_objects()
    if trace:
        tracemalloc.start()
    traced0 = tracemalloc.get_traced_memory()[0]
    rss0 = rss_bytes()
    for _ in range(iterations):
        work()
    gc.collect()
    traced1 = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"iterations": iterations, "live_before": live0, "live_after": ember._C._live_objects(),
            "python_bytes_growth": traced1 - traced0, "rss_growth": rss_bytes() - rss0, "rss_after": rss_bytes()}


def report(name, m):
    if ITERATIONS:
        print(f"\nleaks[{name}]: {m['iterations']} iterations, live (TensorImpls, StorageImpls) "
              f"{m['live_before']} -> {m['live_after']}, Python-allocated memory {m['python_bytes_growth']:+d} B, "
              f"RSS {m['rss_growth'] / 2**20:+.1f} MiB (now {m['rss_after'] / 2**20:.0f} MiB)")


def assert_flat(m, per_iteration_bytes=64):
    assert m["live_after"] == m["live_before"], f"live ember objects grew: {m}"
    # a leak of one small object per iteration is caught; tracemalloc's own bookkeeping is not a leak
    assert m["python_bytes_growth"] < 64 * 1024 + per_iteration_bytes * m["iterations"], m
    if "libasan" not in os.environ.get("LD_PRELOAD", ""):  # ASan holds freed memory in quarantine
        assert m["rss_growth"] < 32 * 2**20, m


def test_views_and_indexing_do_not_leak():
    m = measure(views_and_indexing, ITERATIONS or 100)
    report("views and indexing", m)
    assert_flat(m)


def test_every_declared_op_does_not_leak():
    inputs = binding_inputs()
    names = {b.name for b, _ in inputs}
    assert len(names) == len({b.name for b in fuzz_args.BINDINGS})
    m = measure(lambda: run_bindings(inputs), OP_ITERATIONS or 3)
    report(f"every declared op ({len(inputs)} calls)", m)
    assert_flat(m, per_iteration_bytes=16 * len(inputs))


def test_in_place_write_through_as_strided_frees_its_graph():
    """as_strided's backward keeps the input's geometry, not the input: the input written in
    place through the view has CopySlices for history, which would reach that node again."""
    def work():
        x = ember.ones(6, requires_grad=True).clone()
        x.as_strided((2, 2), (1, 2), 1).copy_(ember.full((2, 2), 3.0))
        x.sum().backward()

    m = measure(work, 50)
    assert_flat(m)


def test_the_leak_check_can_fail():
    """A deliberate leak of tensors (kept in a list) is seen, so the checks above can fail."""
    kept = []
    m = measure(lambda: kept.append(ember.ones(3)), 50, trace=True)
    tensors, storages = m["live_before"]
    assert m["live_after"] == (tensors + 50, storages + 50)
    with pytest.raises(AssertionError):
        assert_flat(m)
