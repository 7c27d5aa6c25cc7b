"""Shared-memory storages and ember.multiprocessing: tensors sent between processes by their
memory, spawn/start_processes, sharing strategies; compared to torch where it makes sense."""
import gc
import os
import pickle
import signal
import sys
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp

fork = mp.get_context("fork")
TIMEOUT = 20  # seconds for any one get() or join()


def _fds():
    return len(os.listdir("/proc/self/fd"))


# ---- storages and tensors in one process ----

def test_share_memory_in_place_keeps_views():
    t = ember.arange(12, dtype=ember.float32)
    view = t[2:8:2]
    before = t.untyped_storage().data_ptr()
    assert not t.is_shared() and not view.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and view.is_shared() and t.storage().is_shared()
    assert t.untyped_storage().data_ptr() != before  # moved into the memory file
    assert t.tolist() == list(range(12))
    t[4] = 100.0
    assert view.tolist() == [2.0, 100.0, 6.0]  # the view sees the same (new) memory
    ptr = t.untyped_storage().data_ptr()
    t.share_memory_()  # already shared: a no-op
    assert t.untyped_storage().data_ptr() == ptr


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_untyped_and_typed_storage_share_memory():
    import torch

    for lib in (ember, torch):
        s = lib.UntypedStorage(8)
        assert s.is_shared() is False
        assert s.share_memory_() is s and s.is_shared() is True
        fd, nbytes = s._share_fd_cpu_()
        assert fd >= 0 and nbytes == 8
        typed = lib.TypedStorage(4, dtype=lib.float32)
        assert typed.share_memory_() is typed and typed.is_shared()


def test_empty_storage_is_shared_without_a_file():
    import torch

    for lib in (ember, torch):
        s = lib.empty(0).untyped_storage()
        assert s._share_fd_cpu_() == (-1, 0)
        assert s.is_shared()
        t = lib.empty(0)
        assert t.share_memory_().is_shared()


def test_shared_storage_cannot_resize():
    t = ember.ones(4).share_memory_()
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.untyped_storage().resize_(32)
    with pytest.raises(RuntimeError, match="not resizable"):
        t.resize_(100)
    assert t.tolist() == [1.0] * 4


def test_share_memory_after_numpy_keeps_the_array_valid():
    t = ember.arange(4, dtype=ember.float64)
    a = t.numpy()
    t.share_memory_()  # numpy holds the old memory: kept alive, no longer aliased (as torch)
    t[0] = 9.0
    a[1] = 7.0
    assert a.tolist() == [0.0, 7.0, 2.0, 3.0]
    assert t.tolist() == [9.0, 1.0, 2.0, 3.0]


def test_share_memory_of_a_numpy_backed_tensor_matches_torch():
    import torch

    for lib in (ember, torch):
        a = np.ones(3, dtype=np.float32)
        t = lib.from_numpy(a)
        t.share_memory_()
        a[0] = 5
        assert t.tolist() == [1.0, 1.0, 1.0] and t.is_shared()


def test_module_share_memory():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    model(ember.randn(5, 3)).sum().backward()
    params = list(model.parameters())
    values = [p.detach().clone() for p in params]
    assert model.share_memory() is model
    assert [p is q for p, q in zip(params, model.parameters())] == [True] * len(params)
    assert all(p.is_shared() and p.grad.is_shared() for p in model.parameters())
    assert all(b.is_shared() for b in model.buffers())
    assert all(ember.equal(p, v) for p, v in zip(model.parameters(), values))


def test_sharing_strategies():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor"}
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy 'bogus', expected one of"):
        mp.set_sharing_strategy("bogus")


def test_namespace_is_multiprocessing_s():
    import multiprocessing

    import torch.multiprocessing as tmp

    for name in multiprocessing.__all__:
        assert hasattr(mp, name), name
    ours = {n for n in dir(mp) if not n.startswith("_")}
    theirs = {n for n in dir(tmp) if not n.startswith("_")}
    missing = theirs - ours - {"torch", "sys", "multiprocessing", "ENV_VAR_PARALLEL_START", "reducer", "reductions"}
    assert not missing


def test_non_leaf_requires_grad_is_refused_as_torch():
    import torch
    import torch.multiprocessing  # noqa: F401 (registers torch's reductions)

    messages = []
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as err:
            ForkingPickler.dumps(x)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("Cowardly refusing to serialize non-leaf tensor which requires_grad")
    ForkingPickler.dumps(ember.ones(3, requires_grad=True))  # a leaf is fine
    ForkingPickler.dumps((ember.ones(3, requires_grad=True) * 2).detach())


def test_plain_pickle_still_copies():
    t = ember.arange(3.0)
    back = pickle.loads(pickle.dumps(t))
    assert not t.is_shared() and not back.is_shared() and back.tolist() == [0.0, 1.0, 2.0]


def test_bad_fd_is_a_clear_error():
    with pytest.raises(RuntimeError, match="file descriptor 987654: Bad file descriptor"):
        ember.UntypedStorage._new_shared_fd_cpu(987654, 16)
    r, w = os.pipe()
    try:
        with pytest.raises(RuntimeError, match="does not hold 16 bytes"):
            ember.UntypedStorage._new_shared_fd_cpu(r, 16)
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.UntypedStorage._new_shared_fd_cpu(0, -1)


# ---- between processes ----

def _echo(inbox, outbox):
    """Child: sends back what it receives, with what it saw of it, until None."""
    while True:
        item = inbox.get(timeout=TIMEOUT)
        if item is None:
            return
        seen = [(x.untyped_storage().data_ptr(), x.is_shared(), x.storage_offset(), tuple(x.stride()))
                for x in item]
        outbox.put((item, seen))


@pytest.fixture
def echo():
    inbox, outbox = fork.Queue(), fork.Queue()
    child = fork.Process(target=_echo, args=(inbox, outbox), daemon=True)
    child.start()

    def send(*tensors):
        inbox.put(tensors)
        return outbox.get(timeout=TIMEOUT)

    yield send
    inbox.put(None)
    child.join(TIMEOUT)
    assert child.exitcode == 0
    _close(inbox, outbox)


def _close(*queues):
    """Ends the queues' feeder threads now: a thread ending while the next test forks is
    what the sanitizer runtime's fork cannot survive (see .ci/run)."""
    for q in queues:
        q.close()
        q.join_thread()


@pytest.mark.timeout(60)
def test_views_offsets_strides_and_dtypes_travel_by_memory(echo):
    import torch

    base = ember.arange(24, dtype=ember.float64).reshape(4, 6)
    tensors = [base, base[1:, 2:].t(), base[:, ::3], ember.tensor([True, False, True]),
               ember.arange(5, dtype=ember.float16), ember.arange(7, dtype=ember.int64)[2:], ember.empty(0),
               ember.empty(3, 0), ember.ones(2, 3, dtype=ember.bfloat16)[:, 1]]
    back, seen = echo(*tensors)
    for t, b, (ptr, shared, offset, stride) in zip(tensors, back, seen):
        ref = torch.from_numpy(np.array(t.float().tolist())) if t.numel() else None
        assert b.dtype == t.dtype and b.shape == t.shape and b.stride() == t.stride()
        assert b.storage_offset() == t.storage_offset() == offset and stride == t.stride()
        assert ember.equal(b, t)
        if ref is not None:
            assert b.float().tolist() == ref.float().tolist()
        if t.untyped_storage().nbytes():
            assert t.is_shared() and shared  # moved to shared memory on send
            # sent back, it is the sender's own storage again
            assert b.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    assert seen[0][0] == seen[1][0] == seen[2][0]  # three views, one storage in the child


@pytest.mark.timeout(60)
def test_storage_sent_twice_maps_once(echo):
    t = ember.arange(10.0)
    _, (first,) = echo(t[:5])
    _, (second,) = echo(t[5:])
    assert first[0] == second[0]  # the same mapping in the child
    s = ember.UntypedStorage(16)
    back, _ = echo(ember.tensor([], dtype=ember.uint8).set_(s, 0, (16,), (1,)))
    assert back[0].untyped_storage().data_ptr() == s.data_ptr()


@pytest.mark.timeout(60)
def test_parameter_and_requires_grad_travel(echo):
    import torch

    p = ember.nn.Parameter(ember.randn(3))
    q = ember.nn.Parameter(ember.randn(2), requires_grad=False)
    r = ember.ones(2, requires_grad=True)
    (bp, bq, br), _ = echo(p, q, r)
    tp = torch.nn.Parameter(torch.randn(3))
    assert type(bp) is ember.nn.Parameter and type(tp) is torch.nn.Parameter
    assert bp.requires_grad and not bq.requires_grad and br.requires_grad and br.is_leaf
    assert type(bq) is ember.nn.Parameter and type(br) is ember.Tensor
    assert ember.equal(bp.detach(), p.detach())


def _add_one(t, done):
    t += 1
    done.set()


def _wait_then_read(t, go, outbox):
    go.wait(TIMEOUT)
    outbox.put(t.tolist())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_mutations_are_seen_both_ways(method):
    ctx = mp.get_context(method)
    t = ember.zeros(2, 3)[:, 1:]  # a view, sent as Process arguments
    done = ctx.Event()
    child = ctx.Process(target=_add_one, args=(t, done))
    child.start()
    assert done.wait(TIMEOUT)
    child.join(TIMEOUT)
    assert child.exitcode == 0
    if method == "spawn":
        assert t.tolist() == [[1.0, 1.0], [1.0, 1.0]]  # the child's write, seen here
    t.share_memory_()
    go, outbox = ctx.Event(), ctx.Queue()
    child = ctx.Process(target=_wait_then_read, args=(t, go, outbox))
    child.start()
    t.fill_(5.0)  # after the child got t
    go.set()
    assert outbox.get(timeout=TIMEOUT) == [[5.0, 5.0], [5.0, 5.0]]
    child.join(TIMEOUT)
    assert child.exitcode == 0


def _fill_and_return(args):
    t, value = args
    t.fill_(value)
    return t


@pytest.mark.timeout(60)
def test_pool_map_shares():
    ts = [ember.zeros(4), ember.zeros(2, 2).t()]
    with fork.Pool(2) as pool:
        out = pool.map(_fill_and_return, [(ts[0], 3.0), (ts[1], 4.0)], chunksize=1)
    assert ts[0].tolist() == [3.0] * 4 and ts[1].tolist() == [[4.0, 4.0], [4.0, 4.0]]
    assert [o.untyped_storage().data_ptr() for o in out] == [t.untyped_storage().data_ptr() for t in ts]


def _receive_many(inbox, outbox, n):
    gc.collect()
    before = _fds()
    for _ in range(n):
        t = inbox.get(timeout=TIMEOUT)
        del t
    gc.collect()
    outbox.put((before, _fds()))


@pytest.mark.timeout(120)
def test_no_fd_leak_over_thousands_of_transfers():
    n = 2000
    inbox, outbox = fork.Queue(), fork.Queue()
    child = fork.Process(target=_receive_many, args=(inbox, outbox, n), daemon=True)
    child.start()
    t = ember.ones(4)
    inbox.put(t)  # warms the resource sharer's thread and connection up
    n -= 1
    gc.collect()
    before = _fds()
    for i in range(n):
        inbox.put(ember.full((8,), float(i)) if i % 2 else t)  # fresh storages and the same one
    child_before, child_after = outbox.get(timeout=100)
    child.join(TIMEOUT)
    gc.collect()
    assert child.exitcode == 0
    assert child_after <= child_before
    assert _fds() <= before
    _close(inbox, outbox)


def _ok(i, outbox):
    outbox.put(i)


def _raise_in_one(i):
    if i == 1:
        raise ValueError("boom from 1")
    import time

    time.sleep(30)  # terminated by the parent once process 1 failed


def _exit_with(i, code):
    sys.exit(code)


def _kill_self(i):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.timeout(60)
def test_spawn_runs_and_joins():
    ctx = mp.get_context("spawn")
    outbox = ctx.SimpleQueue()
    assert mp.spawn(_ok, args=(outbox,), nprocs=2) is None
    assert sorted([outbox.get(), outbox.get()]) == [0, 1]
    context = mp.start_processes(_ok, args=(outbox,), nprocs=1, join=False, start_method="fork")
    assert isinstance(context, mp.ProcessContext) and len(context.pids()) == 1
    while not context.join(TIMEOUT):
        pass
    assert outbox.get() == 0


@pytest.mark.timeout(60)
def test_spawn_errors_as_torch():
    with pytest.raises(mp.ProcessRaisedException) as err:
        mp.start_processes(_raise_in_one, nprocs=2, start_method="fork")
    assert str(err.value).startswith("\n\n-- Process 1 terminated with the following error:\nTraceback")
    assert "ValueError: boom from 1" in str(err.value) and err.value.error_index == 1
    with pytest.raises(mp.ProcessExitedException, match=r"^process 0 terminated with exit code 3$") as err:
        mp.start_processes(_exit_with, args=(3,), nprocs=1, start_method="fork")
    assert err.value.exit_code == 3 and err.value.error_pid > 0
    with pytest.raises(mp.ProcessExitedException, match=r"^process 0 terminated with signal SIGKILL$") as err:
        mp.start_processes(_kill_self, nprocs=1, start_method="fork")
    assert err.value.exit_code == -signal.SIGKILL and err.value.signal_name == "SIGKILL"
    copy = pickle.loads(pickle.dumps(err.value))
    assert (copy.msg, copy.error_pid, copy.exit_code) == (err.value.msg, err.value.error_pid, err.value.exit_code)
    with pytest.warns(FutureWarning, match="This method only supports start_method=spawn"):
        mp.spawn(_ok, args=(mp.get_context("spawn").SimpleQueue(),), nprocs=1, start_method="fork")


@pytest.mark.timeout(60)
def test_dataloader_batches_arrive_in_shared_memory():
    from ember.utils.data import DataLoader, TensorDataset

    x = ember.arange(64, dtype=ember.float32).reshape(16, 4)
    y = ember.arange(16)
    loader = DataLoader(TensorDataset(x, y), batch_size=4, num_workers=2)
    list(loader)  # the workers' first start and the resource sharer's threads
    gc.collect()
    before = _fds()
    for _ in range(3):
        batches = list(loader)
        assert all(bx.is_shared() and by.is_shared() for bx, by in batches)  # mapped, not unpickled
        assert ember.equal(ember.cat([bx for bx, _ in batches]), x)
        assert ember.equal(ember.cat([by for _, by in batches]), y)
        del batches
    gc.collect()
    assert _fds() <= before
