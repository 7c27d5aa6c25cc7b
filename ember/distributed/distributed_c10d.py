"""Process groups and collectives (torch.distributed's API) on gloo, through the small
binding ember._C_gloo: Python hands it the address, size and dtype code of contiguous
tensors; the collective runs there with the GIL released. Each process group runs its
operations in call order on one background thread (async_op=True returns the Work at
once; a synchronous call waits on it), so every rank issues the same sequence of gloo
tags; send/recv are posted at once and complete on their own."""
from __future__ import annotations

import datetime
import enum
import io
import os
import pickle
import queue
import socket
import threading
import urllib.parse

from ._store import (DistBackendError, DistError, FileStore, HashStore, PrefixStore, Store, TCPStore,
                     _seconds)

default_pg_timeout = datetime.timedelta(minutes=30)

_INSTALL_HINT = ("ember.distributed needs gloo: install it (Debian/Ubuntu: apt-get install libgloo-dev), then "
                 "rebuild ember (pip install . or python setup.py build_ext --inplace)")


def _binding():
    import importlib
    try:
        return importlib.import_module("ember._C_gloo")
    except ImportError:
        raise RuntimeError(f"ember was built without gloo, so ember.distributed is unavailable. "
                           f"{_INSTALL_HINT}") from None


def is_available() -> bool:
    """True when ember was built with gloo (ember._C_gloo loads)."""
    try:
        _binding()
    except RuntimeError:
        return False
    return True


def is_gloo_available() -> bool:
    return is_available()


def is_nccl_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """A backend name: Backend("GLOO") == Backend.GLOO == "gloo"."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


class ReduceOp:
    """The reduction of all_reduce, reduce and reduce_scatter: ReduceOp.SUM, ..."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


# ember._C_gloo's op codes
_GLOO_OPS = {ReduceOp.SUM: 0, ReduceOp.PRODUCT: 1, ReduceOp.MIN: 2, ReduceOp.MAX: 3, ReduceOp.BAND: 4,
             ReduceOp.BOR: 5, ReduceOp.BXOR: 6}


def _dtype_codes():
    import ember
    return {ember.bool: 0, ember.uint8: 1, ember.int8: 2, ember.int16: 3, ember.int32: 4, ember.int64: 5,
            ember.float16: 6, ember.float32: 7, ember.float64: 8}


# ---- work handles --------------------------------------------------------------------

class Work:
    """What an async_op=True call returns: wait() blocks until the operation finished
    (re-raising its error), is_completed() asks without blocking."""

    def __init__(self, name: str, keep=(), outputs=()):
        self._name = name
        self._outputs = list(outputs)  # result(): the tensors written, as torch's Work gives
        self._done = threading.Event()
        self._exception: BaseException | None = None
        self._keep = keep  # the tensors the engine reads and writes stay alive until the end
        self._result = None

    def _finish(self, exception=None, result=None):
        self._exception = exception
        self._result = result
        self._keep = ()
        self._done.set()

    def is_completed(self) -> bool:
        return self._done.is_set()

    def is_success(self) -> bool:
        if not self._done.is_set():
            raise RuntimeError("Work.is_success() is only valid once the work has completed")
        return self._exception is None

    def exception(self):
        return self._exception

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        if not self._done.wait(None if timeout is None else _seconds(timeout)):
            raise DistBackendError(f"{self._name}: timed out after {_seconds(timeout)}s waiting for the work")
        if self._exception is not None:
            raise self._exception
        return True

    def result(self):
        self.wait()
        return self._result if self._result is not None else self._outputs

    def synchronize(self) -> None:
        self.wait()

    def source_rank(self) -> int:
        self.wait()
        return self._result

    def get_future(self):
        """A future with torch.futures.Future's wait(), value(), done() and then(callback)
        (a concurrent.futures.Future underneath); its value is result()."""
        fut = _future()

        def finish():
            try:
                self.wait()
                fut.set_result(self.result())
            except BaseException as e:  # noqa: BLE001 (handed to the future)
                fut.set_exception(e)
        if self.is_completed():
            finish()
        else:
            threading.Thread(target=finish, daemon=True).start()
        return fut


def _future():
    import concurrent.futures

    fut = concurrent.futures.Future()
    fut.wait = fut.result
    fut.value = fut.result

    def then(callback):
        nxt = _future()

        def run(_):
            try:
                nxt.set_result(callback(fut))
            except BaseException as e:  # noqa: BLE001 (handed to the next future)
                nxt.set_exception(e)
        fut.add_done_callback(run)
        return nxt
    fut.then = then
    return fut


# ---- process groups --------------------------------------------------------------------

class ProcessGroup:
    """A set of ranks with one gloo context. Its operations run in call order on its own
    thread."""

    def __init__(self, ctx, rank: int, size: int, global_ranks: list[int], name: str, timeout, store):
        self._ctx = ctx
        self._rank = rank
        self._size = size
        self._global_ranks = global_ranks
        self._group_name = name
        self._timeout = timeout
        self._store = store
        self._tag = 0
        self._lock = threading.Lock()
        self._pending = 0  # operations queued or running on the group's thread
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"ember-pg-{name}", daemon=True)
        self._thread.start()

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return Backend.GLOO

    @property
    def group_name(self) -> str:
        return self._group_name

    def _get_backend_name(self) -> str:
        return Backend.GLOO

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup {self._group_name!r} rank {self._rank} of {self._size} (gloo)>"

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, work = item
            try:
                result = fn()
            except RuntimeError as e:
                work._finish(self._error(work._name, e))
            except BaseException as e:  # noqa: BLE001 (handed to the caller)
                work._finish(e)
            else:
                work._finish(result=result)
            with self._lock:
                self._pending -= 1

    def _error(self, name, e):
        return DistBackendError(f"ember.distributed.{name} failed on rank {self._rank} of {self._size}: {e}"
                                + (_TIMEOUT_HINT if "Timed out" in str(e) else ""))

    def _submit(self, name: str, fn, async_op: bool, keep=(), outputs=()):
        """fn(binding, ctx, tag) runs on the group's thread; the tag, taken here in call
        order, is what makes the ranks' gloo operations match."""
        if self._ctx is None:
            raise RuntimeError(f"{name}: the process group has been destroyed")
        tag = self._tag
        self._tag = (self._tag + 1) & 0xFFFFFFFF
        binding, ctx = _binding(), self._ctx
        with self._lock:
            # a synchronous call with nothing queued before it runs here: two thread
            # hand-offs fewer, which small collectives feel (most under load)
            inline = not async_op and self._pending == 0
            if not inline:
                self._pending += 1
        if inline:
            try:
                fn(binding, ctx, tag)
            except RuntimeError as e:
                raise self._error(name, e) from None
            return None
        work = Work(name, keep, outputs)
        self._queue.put((lambda: fn(binding, ctx, tag), work))
        if async_op:
            return work
        work.wait()
        return None

    def _shutdown(self):
        if self._ctx is None:
            return
        self._queue.put(None)
        self._thread.join(timeout=self._timeout.total_seconds() + 5)
        self._ctx = None


_TIMEOUT_HINT = (" (every rank of a group must call the same collectives in the same order, with the same "
                 "sizes, dtypes, roots and ops; one that calls another, or none, leaves the others waiting until "
                 "the group's timeout; after a timeout the group can no longer be used)")


class _GroupMember:
    NON_GROUP_MEMBER = object()

    @property
    def WORLD(self):
        return _state.default


GroupMember = _GroupMember()
group = GroupMember


class _State:
    def __init__(self):
        self.default: ProcessGroup | None = None
        self.store: Store | None = None
        self.groups: list[ProcessGroup] = []
        self.group_count = 0
        self.rank = -1
        self.world_size = -1
        self.host = "127.0.0.1"


_state = _State()


def _not_initialized():
    return ValueError("Default process group has not been initialized, please make sure to call init_process_group.")


def _resolve(group) -> ProcessGroup | None:
    """The group to run on; None for a rank outside it (torch then does nothing)."""
    if _state.default is None:
        raise _not_initialized()
    if group is None or group is GroupMember.WORLD:
        return _state.default
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, not {type(group).__name__}")
    if group._ctx is None:
        raise ValueError("Invalid process group specified")
    return group


def is_initialized() -> bool:
    return _state.default is not None


def _local_address(master_host: str) -> str:
    """The address this process's gloo device listens on: the one that reaches the
    master (a loopback master gives 127.0.0.1)."""
    try:
        infos = socket.getaddrinfo(master_host, None, socket.AF_INET)
        master_ip = infos[0][4][0]
        if master_ip.startswith("127."):
            return "127.0.0.1"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((master_ip, 9))  # no packet is sent: this only picks the route
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def _rendezvous(init_method: str, rank: int, world_size: int, timeout):
    """(store, rank, world_size, master host) from an init_method URL."""
    url = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(url.query))
    if "rank" in query:
        rank = int(query["rank"])
    if "world_size" in query:
        world_size = int(query["world_size"])
    if url.scheme == "env":
        def env(name):
            value = os.environ.get(name)
            if value is None:
                raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {name} expected, but not set")
            return value
        rank = int(env("RANK")) if rank < 0 else rank
        world_size = int(env("WORLD_SIZE")) if world_size < 0 else world_size
        host, port = env("MASTER_ADDR"), int(env("MASTER_PORT"))
    elif url.scheme == "tcp":
        if rank < 0:
            raise ValueError("rank parameter missing")
        if world_size < 0:
            raise ValueError("size parameter missing")
        if url.hostname is None or url.port is None:
            raise ValueError(f"tcp:// init_method needs a host and a port: {init_method!r}")
        host, port = url.hostname, url.port
    elif url.scheme == "file":
        if rank < 0:
            raise ValueError("rank parameter missing")
        if world_size < 0:
            raise ValueError("size parameter missing")
        path = url.path if not url.netloc else url.netloc + url.path
        store = FileStore(path, world_size)
        store.set_timeout(timeout)
        return store, rank, world_size, socket.gethostname()
    else:
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    store = TCPStore(host, port, world_size, rank == 0, timeout, wait_for_workers=False)
    return store, rank, world_size, host


def _new_pg(store: Store, rank: int, size: int, global_ranks, name: str, timeout, host: str) -> ProcessGroup:
    binding = _binding()
    prefixed = PrefixStore(name, store)
    try:
        ctx = binding.new_context(prefixed, rank, size, max(1, int(_seconds(timeout) * 1000)), host)
    except RuntimeError as e:
        raise DistBackendError(f"ember.distributed: connecting process group {name!r} (rank {rank} of {size}) "
                               f"failed: {e}") from None
    return ProcessGroup(ctx, rank, size, list(global_ranks), name, timeout, store)


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Store | None = None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Joins this process to the default process group (torch.distributed's contract).
    backend: "gloo" (or None, or "cpu:gloo"); init_method: "env://" (MASTER_ADDR,
    MASTER_PORT, RANK, WORLD_SIZE), "tcp://host:port", "file://path"; or a store with
    rank and world_size."""
    if _state.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = str(backend).lower() if backend is not None else "gloo"
    for part in name.split(","):
        engine = part.split(":")[-1]
        if engine == "nccl":
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        if engine in ("mpi", "ucc", "xccl"):
            raise RuntimeError(f"Distributed package doesn't have {engine.upper()} built in")
        if engine != "gloo":
            raise ValueError(f"Invalid backend: '{backend}'")
    _binding()  # a build without gloo fails here, with how to install it
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    if store is not None:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        if world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if rank < 0:
            raise ValueError("rank must be non-negative if using store")
        host = store.host if isinstance(store, TCPStore) else socket.gethostname()
    else:
        store, rank, world_size, host = _rendezvous(init_method or "env://", rank, world_size, timeout)
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank} for world size {world_size}")
    pg = _new_pg(store, rank, world_size, range(world_size), "default_pg", timeout, _local_address(host))
    _state.default, _state.store, _state.rank, _state.world_size = pg, store, rank, world_size
    _state.host = host
    _state.groups = [pg]
    _state.group_count = 0


def destroy_process_group(group=None) -> None:
    """Ends one group, or (group None) every group and the default one."""
    if _state.default is None:
        raise _not_initialized()
    if group is None or group is GroupMember.WORLD:
        for pg in _state.groups:
            pg._shutdown()
        store = _state.store
        _state.__init__()
        del store
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    group._shutdown()
    if group in _state.groups:
        _state.groups.remove(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some ranks; every rank of the default group must call it (with the
    same ranks), members get the group, the others GroupMember.NON_GROUP_MEMBER."""
    if _state.default is None:
        raise _not_initialized()
    if backend is not None and Backend(str(backend).split(":")[-1]) != Backend.GLOO:
        raise RuntimeError(f"Distributed package doesn't have {str(backend).upper()} built in")
    ranks = sorted(range(_state.world_size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError("ranks must be unique")
    for r in ranks:
        if not 0 <= r < _state.world_size:
            raise ValueError(f"Invalid rank {r} in new_group: the world has {_state.world_size} ranks")
    _state.group_count += 1
    name = str(_state.group_count)
    if _state.rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg = _new_pg(_state.store, ranks.index(_state.rank), len(ranks), ranks, name,
                 timeout or _state.default._timeout, _local_address(_state.host))
    _state.groups.append(pg)
    return pg


def get_rank(group=None) -> int:
    if _state.default is None:
        raise _not_initialized()
    pg = _resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    if _state.default is None:
        raise _not_initialized()
    pg = _resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    _resolve(group)
    return Backend.GLOO


def get_process_group_ranks(group) -> list[int]:
    pg = _resolve(group)
    return list(pg._global_ranks)


def get_group_rank(group, global_rank: int) -> int:
    pg = _resolve(group)
    if global_rank not in pg._global_ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._global_ranks.index(global_rank)


def get_global_rank(group, group_rank: int) -> int:
    pg = _resolve(group)
    return pg._global_ranks[group_rank]


def get_default_backend_for_device(device) -> str:
    return Backend.GLOO


def _get_default_group() -> ProcessGroup:
    if _state.default is None:
        raise _not_initialized()
    return _state.default


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """LOCAL_RANK, as a launcher sets it."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


# ---- tensors to addresses --------------------------------------------------------------

def _check_tensor(t, name="tensor"):
    import ember
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_list(ts, name):
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} instead.")
    for t in ts:
        _check_tensor(t, name)


def _check_like(ts, tensor, what):
    """Every tensor of a collective's list has tensor's dtype and element count."""
    for t in ts:
        if t.dtype != tensor.dtype or t.numel() != tensor.numel():
            raise ValueError(what)


def _unflatten_into(flat, ts):
    """Copies consecutive chunks of flat into the tensors ts (each of its own shape)."""
    offset = 0
    for t in ts:
        t.copy_(flat[offset:offset + t.numel()].view(t.shape))
        offset += t.numel()


def _dense(t):
    """t itself when contiguous, else a contiguous copy (torch 2.13's gloo accepts
    non-contiguous tensors too); _write_back copies a result into the caller's tensor."""
    return t if t.is_contiguous() else t.contiguous()


def _write_back(t, buf):
    buf = _unstaged(buf, t)
    if buf is not t and buf.data_ptr() != t.data_ptr():
        t.copy_(buf)


def _nbytes(t) -> int:
    return t.numel() * t.element_size()


def _group_rank(pg: ProcessGroup, global_rank, group_rank, what: str) -> int:
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError(f"Can not specify both group_{what} and {what}")
        r = int(group_rank)
    else:
        global_rank = 0 if global_rank is None else int(global_rank)
        if pg is _state.default:
            r = global_rank
        elif global_rank not in pg._global_ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
        else:
            r = pg._global_ranks.index(global_rank)
    if not 0 <= r < pg.size():
        raise RuntimeError(f"invalid {what} rank: {r} (the group has {pg.size()} ranks)")
    return r


def _staged(t):
    """(buffer the engine reduces, code): float16 and bfloat16 go through float32 so
    that a sum or product rounds once, as it would in one process."""
    import ember
    codes = _dtype_codes()
    if t.dtype in (ember.float16, ember.bfloat16):
        return t.float().contiguous(), codes[ember.float32]
    if t.dtype.is_complex:
        # a complex sum is the sum of the parts: the engine reduces the (n, 2) real view
        buf = ember.view_as_real(_dense(t))
        return buf, codes[buf.dtype]
    if t.dtype not in codes:
        raise TypeError(f"ember.distributed: unsupported dtype {t.dtype}")
    return _dense(t), codes[t.dtype]


def _unstaged(buf, t):
    """A staged buffer of t's as t's dtype: the complex view of a complex t's real view."""
    import ember
    return ember.view_as_complex(buf) if t.dtype.is_complex and not buf.dtype.is_complex else buf


def _reduce_code(op, dtype, name="all_reduce"):
    import ember
    op = ReduceOp.RedOpType(int(op)) if isinstance(op, (int, ReduceOp.RedOpType)) else op
    # complex tensors reduce by SUM or AVG only, refused as torch's gloo refuses them
    if dtype.is_complex and op not in (ReduceOp.SUM, ReduceOp.AVG):
        if name == "all_reduce":
            raise ValueError(f"all_reduce does not support RedOpType.{op.name} on complex tensors")
        raise RuntimeError(f"{'reduce' if name == 'reduce' else 'all_reduce'} does not supporton complex tensors")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op == ReduceOp.AVG:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError("Cannot use ReduceOp.AVG with an integral or bool dtype")
        return _GLOO_OPS[ReduceOp.SUM]
    if op not in _GLOO_OPS:
        raise ValueError(f"ember.distributed: unsupported reduction {op!r}")
    if dtype == ember.bool and op == ReduceOp.PRODUCT:
        return _GLOO_OPS[ReduceOp.MIN]
    return _GLOO_OPS[op]


# ---- collectives ----------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces `tensor` over the group in place: every rank ends with the result."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    code = _reduce_code(op, tensor.dtype)
    avg = op == ReduceOp.AVG

    def fn(b, ctx, tag):
        buf, dt = _staged(tensor)
        b.allreduce(ctx, buf.data_ptr(), buf.numel(), dt, code, tag)
        if avg:
            buf.div_(pg.size())
        _write_back(tensor, buf)
    return pg._submit("all_reduce", fn, async_op, (tensor,), [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies rank `src`'s tensor (a global rank; group_src: a rank of the group) to all."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "src")

    def fn(b, ctx, tag):
        buf = _dense(tensor)
        b.broadcast(ctx, buf.data_ptr(), _nbytes(buf), root, tag)
        _write_back(tensor, buf)
    return pg._submit("broadcast", fn, async_op, (tensor,), [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces into rank `dst`'s tensor; the other ranks' tensors are left as they were."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst, "dst")
    code = _reduce_code(op, tensor.dtype, "reduce")
    avg = op == ReduceOp.AVG

    def fn(b, ctx, tag):
        src, dt = _staged(tensor)
        src = src.clone() if src.data_ptr() == tensor.data_ptr() else src
        out = src.clone()
        b.reduce(ctx, src.data_ptr(), out.data_ptr(), out.numel(), dt, code, root, tag)
        if pg.rank() == root:
            if avg:
                out.div_(pg.size())
            tensor.copy_(_unstaged(out, tensor))
    return pg._submit("reduce", fn, async_op, (tensor,), [tensor])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor (world_size * input's elements, concatenated or stacked) gets every
    rank's input_tensor in rank order."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _resolve(group)
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise ValueError("output tensor must have the same type as input tensor")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise RuntimeError(f"ProcessGroupGloo::allgather: output tensor size must be equal to world_size times "
                           f"input tensor size (expected {input_tensor.numel() * pg.size()} elements, got "
                           f"{output_tensor.numel()})")

    def fn(b, ctx, tag):
        inp, out = _dense(input_tensor), _dense(output_tensor)
        b.allgather(ctx, inp.data_ptr(), out.data_ptr(), _nbytes(inp), tag)
        _write_back(output_tensor, out)
    return pg._submit("all_gather_into_tensor", fn, async_op, (output_tensor, input_tensor))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] gets rank i's tensor."""
    import ember
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list must have {pg.size()} tensors, got {len(tensor_list)}")
    _check_like(tensor_list, tensor, "all_gather: every tensor in tensor_list must have the input's dtype and size")

    def fn(b, ctx, tag):
        flat = ember.empty(pg.size() * tensor.numel(), dtype=tensor.dtype)
        inp = _dense(tensor)
        b.allgather(ctx, inp.data_ptr(), flat.data_ptr(), _nbytes(inp), tag)
        _unflatten_into(flat, tensor_list)
    return pg._submit("all_gather", fn, async_op, (tensor_list, tensor))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank `dst`'s gather_list[i] gets rank i's tensor (gather_list: dst only)."""
    import ember
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst, "dst")
    if pg.rank() == root:
        if gather_list is None or len(gather_list) != pg.size():
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_list(gather_list, "gather_list")
        _check_like(gather_list, tensor, "gather: every tensor in gather_list must have the input's dtype and size")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")

    def fn(b, ctx, tag):
        is_root = pg.rank() == root
        flat = ember.empty(pg.size() * tensor.numel() if is_root else 0, dtype=tensor.dtype)
        inp = _dense(tensor)
        b.gather(ctx, inp.data_ptr(), flat.data_ptr(), _nbytes(inp), root, tag)
        if is_root:
            _unflatten_into(flat, gather_list)
    return pg._submit("gather", fn, async_op, (tensor, gather_list))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank i's tensor gets rank `src`'s scatter_list[i] (scatter_list: src only)."""
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "src")
    if pg.rank() == root:
        if scatter_list is None or len(scatter_list) != pg.size():
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_list(scatter_list, "scatter_list")
        _check_like(scatter_list, tensor,
                    "scatter: every tensor in scatter_list must have the output's dtype and size")
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    ins = [_dense(t) for t in scatter_list] if pg.rank() == root else []

    def fn(b, ctx, tag):
        out = _dense(tensor)
        b.scatter(ctx, [t.data_ptr() for t in ins], out.data_ptr(), _nbytes(out), root, tag)
        _write_back(tensor, out)
    return pg._submit("scatter", fn, async_op, (tensor, ins))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank i's output gets chunk i of the reduction of every rank's input."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _resolve(group)
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise ValueError("input tensor must be the same type as the output tensor.")
    if input.numel() != output.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    code = _reduce_code(op, input.dtype, "reduce_scatter")
    avg = op == ReduceOp.AVG

    def fn(b, ctx, tag):
        buf, dt = _staged(input)
        buf = buf.clone() if buf.data_ptr() == input.data_ptr() else buf
        b.allreduce(ctx, buf.data_ptr(), buf.numel(), dt, code, tag)
        buf = _unstaged(buf, input)
        n = output.numel()
        mine = buf.reshape(-1)[pg.rank() * n:(pg.rank() + 1) * n]
        if avg:
            mine = mine / pg.size()
        output.copy_(mine.view(output.shape))
    return pg._submit("reduce_scatter_tensor", fn, async_op, (output, input))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    import ember
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = _resolve(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list must have {pg.size()} tensors")
    flat = ember.cat([t.reshape(-1) for t in input_list]) if input_list else ember.empty(0)
    return reduce_scatter_tensor(output, flat, op, group, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """Splits input along dim 0 (input_split_sizes, or evenly), sends part i to rank i,
    and fills output with what every rank sent this one, in rank order."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _resolve(group)
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise ValueError("all_to_all_single: output and input must have the same dtype")
    n = pg.size()

    def split_bytes(t, sizes, what):
        rows = t.shape[0] if t.dim() > 0 else 1
        row = _nbytes(t) // rows if rows else t.element_size() * (t[0].numel() if t.dim() > 1 else 1)
        if not sizes:
            if rows % n:
                raise ValueError(f"all_to_all_single: the {what}'s first dimension ({rows}) must divide by the "
                                 f"group size ({n})")
            return [rows // n * row] * n
        sizes = list(sizes)
        if len(sizes) != n or sum(sizes) != rows:
            raise ValueError(f"all_to_all_single: {what}_split_sizes {sizes} must have {n} entries summing to "
                             f"the {what}'s first dimension ({rows})")
        return [s * row for s in sizes]
    in_bytes = split_bytes(input, input_split_sizes, "input")
    out_bytes = split_bytes(output, output_split_sizes, "output")

    def fn(b, ctx, tag):
        inp, out = _dense(input), _dense(output)
        b.alltoallv(ctx, inp.data_ptr() if _nbytes(inp) else 0, in_bytes, out.data_ptr() if _nbytes(out) else 0,
                    out_bytes, tag)
        _write_back(output, out)
    return pg._submit("all_to_all_single", fn, async_op, (output, input))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    import ember
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    pg = _resolve(group)
    if pg is None:
        return None
    flat_in = ember.cat([t.reshape(-1) for t in input_tensor_list])
    flat_out = ember.empty(sum(t.numel() for t in output_tensor_list), dtype=flat_in.dtype)
    work = all_to_all_single(flat_out, flat_in, [t.numel() for t in output_tensor_list],
                             [t.numel() for t in input_tensor_list], group, async_op=True)

    # the unpack runs on the group's thread after the exchange, in order
    after = pg._submit("all_to_all", lambda b, ctx, tag: (work.wait(), _unflatten_into(flat_out, output_tensor_list)),
                       True, (output_tensor_list, flat_in, flat_out))
    if async_op:
        return after
    after.wait()
    return None


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank of the group has called barrier."""
    pg = _resolve(group)
    if pg is None:
        return None
    return pg._submit("barrier", lambda b, ctx, tag: b.barrier(ctx, tag), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    barrier(group)


# ---- point to point --------------------------------------------------------------------

def _p2p(name, tensor, peer, group, tag, group_peer, what):
    _check_tensor(tensor)
    pg = _resolve(group)
    if pg is None:
        return None
    if name.endswith("recv") and peer is None and group_peer is None:
        other = -1
    else:
        other = _group_rank(pg, peer, group_peer, what)
        if other == pg.rank():
            raise ValueError(f"Invalid {what} rank: {peer if peer is not None else group_peer} is this rank")
    binding, ctx = _binding(), pg._ctx
    work = Work(name, (tensor,))

    buf = _dense(tensor)

    def run():
        try:
            if name.endswith("send"):
                binding.send(ctx, buf.data_ptr(), _nbytes(buf), other, int(tag))
                result = None
            else:
                result = pg._global_ranks[binding.recv(ctx, buf.data_ptr(), _nbytes(buf), other, int(tag))]
                _write_back(tensor, buf)
        except RuntimeError as e:
            work._finish(pg._error(name, e))
        else:
            work._finish(result=result)
    threading.Thread(target=run, name=f"ember-{name}", daemon=True).start()
    return work


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Starts sending tensor to rank dst; returns a Work."""
    return _p2p("isend", tensor, dst, group, tag, group_dst, "dst")


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Starts receiving into tensor from rank src (None: any rank); returns a Work."""
    return _p2p("irecv", tensor, src, group, tag, group_src, "src")


def send(tensor, dst=None, group=None, tag=0, group_dst=None) -> None:
    work = _p2p("send", tensor, dst, group, tag, group_dst, "dst")
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None) -> int:
    """Receives into tensor; returns the sender's rank (-1 outside the group)."""
    work = _p2p("recv", tensor, src, group, tag, group_src, "src")
    if work is None:
        return -1
    work.wait()
    return work._result


class P2POp:
    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    return [op.op(op.tensor, op.peer, op.group, op.tag, op.group_peer) for op in p2p_op_list]


# ---- Python objects ---------------------------------------------------------------------

def _to_tensor(obj):
    import ember
    import numpy as np
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    return ember.from_numpy(np.frombuffer(bytearray(buf.getvalue()), dtype=np.uint8))


def _from_tensor(t, size):
    return pickle.loads(t[:size].numpy().tobytes())


def all_gather_object(object_list, obj, group=None):
    """object_list[i] gets rank i's obj (pickled)."""
    import ember
    pg = _resolve(group)
    if pg is None:
        return
    data = _to_tensor(obj)
    sizes = ember.zeros(pg.size(), dtype=ember.int64)
    all_gather_into_tensor(sizes, ember.tensor([data.numel()], dtype=ember.int64), group)
    longest = int(sizes.max())
    padded = ember.zeros(longest, dtype=ember.uint8)
    padded[:data.numel()] = data
    out = ember.empty(longest * pg.size(), dtype=ember.uint8)
    all_gather_into_tensor(out, padded, group)
    for i in range(pg.size()):
        object_list[i] = _from_tensor(out[i * longest:(i + 1) * longest], int(sizes[i]))


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    import ember
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, dst, group_dst, "dst")
    data = _to_tensor(obj)
    sizes = ember.zeros(pg.size(), dtype=ember.int64)
    all_gather_into_tensor(sizes, ember.tensor([data.numel()], dtype=ember.int64), group)
    longest = int(sizes.max())
    padded = ember.zeros(longest, dtype=ember.uint8)
    padded[:data.numel()] = data
    is_root = pg.rank() == root
    outs = [ember.empty(longest, dtype=ember.uint8) for _ in range(pg.size())] if is_root else None
    gather(padded, outs, group=group, group_dst=root)
    if is_root:
        for i in range(pg.size()):
            object_gather_list[i] = _from_tensor(outs[i], int(sizes[i]))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Every rank's object_list gets rank src's objects (same length on every rank)."""
    import ember
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, src, group_src, "src")
    if pg.rank() == root:
        datas = [_to_tensor(o) for o in object_list]
        sizes = ember.tensor([d.numel() for d in datas], dtype=ember.int64)
    else:
        sizes = ember.zeros(len(object_list), dtype=ember.int64)
    broadcast(sizes, group=group, group_src=root)
    flat = ember.cat(datas) if pg.rank() == root and datas else ember.empty(int(sizes.sum()), dtype=ember.uint8)
    broadcast(flat, group=group, group_src=root)
    if pg.rank() != root:
        offset = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _from_tensor(flat[offset:offset + n], n)
            offset += n


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    import ember
    pg = _resolve(group)
    if pg is None:
        return
    root = _group_rank(pg, src, group_src, "src")
    is_root = pg.rank() == root
    datas = [_to_tensor(o) for o in scatter_object_input_list] if is_root else []
    longest = ember.tensor([max((d.numel() for d in datas), default=0)], dtype=ember.int64)
    broadcast(longest, group=group, group_src=root)
    n = int(longest)
    padded = []
    for d in datas:
        p = ember.zeros(n, dtype=ember.uint8)
        p[:d.numel()] = d
        padded.append(p)
    mine = ember.empty(n, dtype=ember.uint8)
    scatter(mine, padded if is_root else None, group=group, group_src=root)
    my_size = ember.zeros(1, dtype=ember.int64)
    scatter(my_size, [ember.tensor([d.numel()], dtype=ember.int64) for d in datas] if is_root else None,
            group=group, group_src=root)
    scatter_object_output_list[0] = _from_tensor(mine, int(my_size))
