"""Threads: ops called from several Python threads at once -- on separate tensors, on shared
inputs, writing disjoint parts of one shared output, resizing a tensor others compute with,
and changing set_num_threads meanwhile -- give what the same calls give one after another,
and never crash. Inputs are large enough (>= 65536 elements) that kernels release the GIL
and split across the intra-op pool, so the threads really overlap. Results are compared
exactly: the ops used are exact (integer math, elementwise float math, sorting, indexing)
so they cannot depend on how a reduction was split."""
from __future__ import annotations

import threading

import pytest

import ember

N = 1 << 17  # past kGilWork: the GIL is released
THREADS = 4
ROUNDS = 8


def workload(seed: int):
    """A fixed sequence of ops on tensors made from seed; returns plain values to compare."""
    g = ember.Generator()
    g.manual_seed(seed)
    x = ember.randint(-1000, 1000, (N,), generator=g)
    f = x.to(ember.float32) / 7
    out = []
    out.append((x * 3 + 1).sum().item())
    out.append((x.abs() % 13).sum().item())
    out.append(f.exp().clamp(max=1e6).mul(0).add(f).floor().sum().item())
    out.append(x.sort().values[::4096].tolist())
    out.append(x.view(256, -1).t().contiguous()[3].tolist()[:20])
    out.append(x.cumsum(0)[-1].item())
    out.append(x[x > 500].numel())
    out.append(ember.cat([x, x.flip(0)]).view(2, -1).sum(1).tolist())
    out.append(x.to(ember.float64).max().item())
    out.append(f.view(512, -1).amax(1)[:8].tolist())
    idx = ember.randint(0, N, (1000,), generator=g)
    out.append(x[idx].tolist()[:10])
    out.append(x.gather(0, idx).sum().item())
    m = ember.randint(-3, 4, (128, 128), generator=g).to(ember.float64)
    out.append((m @ m).sum().item())  # small integers in float64: exact
    out.append(x.to(ember.int16).to(ember.float16).to(ember.int64).sum().item())
    return out


def run_threads(fn, args_list):
    """fn(*args) in one thread each, started together; their results, or their exceptions re-raised."""
    results = [None] * len(args_list)
    errors = []
    barrier = threading.Barrier(len(args_list))

    def run(i, args):
        try:
            barrier.wait()
            results[i] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(args_list)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


@pytest.fixture(autouse=True)
def restore_threads():
    n = ember.get_num_threads()
    yield
    ember.set_num_threads(n)


def test_separate_tensors_in_threads_match_sequential():
    expected = [workload(seed) for seed in range(THREADS)]
    for _ in range(2):
        assert run_threads(workload, [(seed,) for seed in range(THREADS)]) == expected


def test_shared_inputs_read_by_threads():
    x = ember.arange(N, dtype=ember.int64) % 1009 - 500
    f = x.to(ember.float64)

    def readers(k):
        out = []
        for _ in range(ROUNDS):
            out.append([(x * k).sum().item(), x.sort(descending=True).values[:5].tolist(),
                        (f + k).max().item(), x.view(64, -1)[k].sum().item(), x.eq(k).sum().item(),
                        x.t().contiguous().equal(x) if x.dim() == 2 else x.flip(0).flip(0).equal(x)])
        return out
    expected = [readers(k) for k in range(THREADS)]
    assert run_threads(readers, [(k,) for k in range(THREADS)]) == expected


def test_threads_writing_disjoint_slices_of_one_tensor():
    y = ember.zeros(THREADS, N // THREADS, dtype=ember.int64)

    def writer(k):
        row = y[k]
        for r in range(ROUNDS):
            row.add_(k + 1)
            row.mul_(2)
            y[k, ::3] = y[k, ::3] - 1
        return None
    run_threads(writer, [(k,) for k in range(THREADS)])
    z = ember.zeros(THREADS, N // THREADS, dtype=ember.int64)
    for k in range(THREADS):
        for r in range(ROUNDS):
            z[k].add_(k + 1)
            z[k].mul_(2)
            z[k, ::3] = z[k, ::3] - 1
    assert y.equal(z)


def test_set_num_threads_changed_while_others_compute():
    expected = [workload(seed) for seed in range(THREADS)]
    stop = threading.Event()

    def flipper():
        n = 0
        while not stop.is_set():
            ember.set_num_threads(1 + n % 4)
            n += 1
        return n

    def worker(seed):
        try:
            return [workload(seed) for _ in range(2)]
        finally:
            stop.set()
    results = run_threads(lambda kind, arg: flipper() if kind == "flip" else worker(arg),
                          [("flip", None)] + [("work", seed) for seed in range(THREADS)])
    assert results[0] > 0
    for seed, got in enumerate(results[1:]):
        assert got == [expected[seed]] * 2


def test_resizing_a_tensor_others_compute_with():
    """Another thread's kernel pins the storage: resize_ then raises RuntimeError, or
    succeeds between kernels; the readers see a consistent tensor either way."""
    x = ember.ones(N, dtype=ember.int64)
    stop = threading.Event()

    reading = threading.Event()

    def reader():
        sums = set()
        while True:
            sums.add((x + 0).sum().item())
            reading.set()
            if stop.is_set():
                return sums

    def resizer():
        refused = 0
        reading.wait()
        try:
            for k in range(200):
                try:
                    x.resize_(N + (k % 2) * N)
                    x.fill_(1)
                except RuntimeError:
                    refused += 1
        finally:
            stop.set()
        return refused
    results = run_threads(lambda kind: reader() if kind == "r" else resizer(), [("r",), ("r",), ("w",)])
    for sums in results[:2]:
        # a sum is of N or 2N elements, each 1 -- or read while fill_ was writing fresh memory
        assert sums and all(isinstance(s, int) for s in sums)
    assert x.numel() in (N, 2 * N)


def test_python_objects_from_threads():
    """Construction from Python data, tolist, repr, item and indexing hold the GIL: many
    small calls from many threads interleave safely."""
    def small(k):
        out = []
        for i in range(300):
            t = ember.tensor([[i, k], [k, i]], dtype=ember.float64)
            out.append((t[0, 1].item(), t.tolist(), repr(t[1]), t.sum().item(), t[t > k].numel()))
        return out
    expected = [small(k) for k in range(THREADS)]
    assert run_threads(small, [(k,) for k in range(THREADS)]) == expected


@pytest.mark.parametrize("value, expected", [("1", 1), ("3", 3), ("0", None), ("x", None), ("", None)])
def test_pool_size_from_omp_num_threads(value, expected):
    # launchers set OMP_NUM_THREADS=1 for several workers on one machine; torch reads it too
    import os
    import subprocess
    import sys

    env = dict(os.environ, OMP_NUM_THREADS=value)
    out = subprocess.run([sys.executable, "-c", "import ember, os; print(ember.get_num_threads(), os.cpu_count())"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) == (expected if expected is not None else int(out[1]))
