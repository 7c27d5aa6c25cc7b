"""Key-value stores for the rendezvous, with torch's Store API: HashStore (one process),
TCPStore (a server thread in the master process, one socket per client), FileStore (a
file shared by processes on one machine) and PrefixStore. gloo exchanges its TCP
addresses through them (see ember._C_gloo's PyStore); tensors never pass through."""
from __future__ import annotations

import datetime
import fcntl
import os
import pickle
import socket
import struct
import threading
import time

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class DistError(RuntimeError):
    """The base of ember.distributed's errors (torch.distributed.DistError)."""


class DistBackendError(DistError):
    """A collective failed in the engine (gloo): a timeout, a lost peer."""


class DistStoreError(DistError):
    """A store operation failed: most often a key that did not appear in time."""


class DistNetworkError(DistError):
    """A store could not connect."""


def _as_bytes(value) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"store values must be str or bytes, not {type(value).__name__}")


def _seconds(timeout) -> float:
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


def _timeout_error(timeout: float, keys) -> DistStoreError:
    return DistStoreError(f"wait timeout after {round(timeout * 1000)}ms, keys: {', '.join('/' + k for k in keys)}")


class Store:
    """The API every store has (torch.distributed.Store)."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = timeout

    @property
    def timeout(self) -> datetime.timedelta:
        return self._timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self._timeout = timeout

    def get(self, key: str) -> bytes:
        self.wait([key])
        return self._get_now(key)

    def wait(self, keys, timeout=None) -> None:
        self._wait(list(keys), _seconds(self._timeout if timeout is None else timeout))

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values) -> None:
        for k, v in zip(keys, values):
            self.set(k, v)

    def append(self, key: str, value) -> None:
        while True:  # compare_set loop: correct for any store
            old = self._get_or_none(key)
            new = (old or b"") + _as_bytes(value)
            if self.compare_set(key, old if old is not None else b"", new) == new:
                return


class _Table:
    """The state behind HashStore and TCPStore's server: a dict and a condition."""

    def __init__(self):
        self.data: dict[str, bytes] = {}
        self.cond = threading.Condition()

    def do(self, op, args, timeout):
        with self.cond:
            if op == "set":
                self.data[args[0]] = args[1]
                self.cond.notify_all()
                return None
            if op == "get":  # blocks until the key exists
                if not self.cond.wait_for(lambda: args[0] in self.data, timeout):
                    return _timeout_error(timeout, args)
                return self.data[args[0]]
            if op == "wait":
                if not self.cond.wait_for(lambda: all(k in self.data for k in args[0]), timeout):
                    return _timeout_error(timeout, args[0])
                return None
            if op == "get_now":
                return self.data.get(args[0])
            if op == "add":
                value = int(self.data.get(args[0], b"0")) + args[1]
                self.data[args[0]] = str(value).encode()
                self.cond.notify_all()
                return value
            if op == "compare_set":
                key, expected, desired = args
                current = self.data.get(key)
                if (current is None and expected == b"") or current == expected:
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return expected if current is None else current
            if op == "check":
                return all(k in self.data for k in args[0])
            if op == "delete":
                return self.data.pop(args[0], None) is not None
            if op == "num_keys":
                return len(self.data)
        raise ValueError(f"unknown store operation {op!r}")


class _TableStore(Store):
    """A store whose every operation is one request to a _Table (_do): in this process
    (HashStore) or in the TCPStore master's."""

    def set(self, key, value):
        self._do("set", key, _as_bytes(value))

    def get(self, key):
        return self._do("get", key)

    def _wait(self, keys, timeout):
        self._do("wait", keys, timeout=timeout)

    def _get_or_none(self, key):
        return self._do("get_now", key)

    def add(self, key, amount):
        return self._do("add", key, int(amount))

    def compare_set(self, key, expected_value, desired_value):
        return self._do("compare_set", key, _as_bytes(expected_value), _as_bytes(desired_value))

    def check(self, keys):
        return self._do("check", list(keys))

    def delete_key(self, key):
        return self._do("delete", key)

    def num_keys(self):
        return self._do("num_keys")


class HashStore(_TableStore):
    """A store inside one process (threads share it)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _do(self, op, *args, timeout=None):
        result = self._table.do(op, args, _seconds(self._timeout) if timeout is None else timeout)
        if isinstance(result, DistError):
            raise result
        return result


# ---- TCPStore: length-prefixed pickles over one socket per client ----------------------

def _send_msg(sock, obj):
    data = pickle.dumps(obj)
    sock.sendall(struct.pack("<Q", len(data)) + data)


def _recv_exact(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("store connection closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv_msg(sock):
    (n,) = struct.unpack("<Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, n))


class _Server:
    def __init__(self, port):
        self.table = _Table()
        # every interface, as torch's master listens: workers on other machines connect to it
        self.listener = socket.create_server(("", port), backlog=128)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, name="ember-tcpstore", daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            while True:
                try:
                    op, args, timeout = _recv_msg(conn)
                except (ConnectionError, OSError, EOFError):
                    return
                try:
                    result = self.table.do(op, args, timeout)
                except Exception as e:  # noqa: BLE001 (the client re-raises it)
                    result = DistStoreError(str(e))
                try:
                    _send_msg(conn, result)
                except OSError:
                    return

    def close(self):
        self.closed = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()


class TCPStore(_TableStore):
    """torch.distributed.TCPStore: the master (is_master=True) serves the keys from a
    thread in its process (port 0: a free port, then read .port); every instance, the
    master's too, is a client. wait_for_workers: the master's constructor returns once
    world_size clients have connected."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None, is_master: bool = False,
                 timeout: datetime.timedelta = _DEFAULT_TIMEOUT, wait_for_workers: bool = True,
                 multi_tenant: bool = False, master_listen_fd=None, use_libuv: bool = True):
        super().__init__(timeout)
        self.host = host_name
        self._server = _Server(port) if is_master else None
        self.port = self._server.port if is_master else port
        self._world_size = world_size
        self._lock = threading.Lock()
        self._sock = self._connect(_seconds(timeout))
        self._do("add", "__ember_workers", 1)
        if is_master and wait_for_workers and world_size:
            self._do("wait_count", world_size)

    def _connect(self, timeout):
        deadline = time.monotonic() + timeout
        delay = 0.01
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=max(deadline - time.monotonic(), 0.01))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
                return sock
            except OSError as e:  # the master may not listen yet
                if time.monotonic() >= deadline:
                    raise DistNetworkError(f"failed to connect to the TCPStore at {self.host}:{self.port} within "
                                           f"{round(timeout * 1000)}ms: {e}") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _do(self, op, *args, timeout=None):
        timeout = _seconds(self._timeout) if timeout is None else timeout
        if op == "wait_count":  # the master waits for world_size clients
            deadline = time.monotonic() + timeout
            while int(self._do("get_now", "__ember_workers") or 0) < args[0]:
                if time.monotonic() >= deadline:
                    raise DistStoreError(f"timed out after {round(timeout * 1000)}ms waiting for {args[0]} clients "
                                         "to join the TCPStore")
                time.sleep(0.005)
            return None
        with self._lock:
            try:
                _send_msg(self._sock, (op, args, timeout))
                result = _recv_msg(self._sock)
            except (OSError, EOFError, ConnectionError) as e:
                raise DistNetworkError(f"TCPStore at {self.host}:{self.port}: {e}") from None
        if isinstance(result, DistError):
            raise result
        return result

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        if getattr(self, "_server", None) is not None:
            self._server.close()


class FileStore(Store):
    """Keys in one file that processes on one machine share (init_method "file://path"):
    a pickled dict, read and rewritten under an flock; blocking reads poll."""

    def __init__(self, file_name: str, world_size: int = -1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        open(self.path, "ab").close()

    def _transact(self, fn):
        with open(self.path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            raw = f.read()
            data = pickle.loads(raw) if raw else {}
            result, changed = fn(data)
            if changed:
                f.seek(0)
                f.truncate()
                f.write(pickle.dumps(data))
            return result

    def set(self, key, value):
        value = _as_bytes(value)
        self._transact(lambda d: (d.__setitem__(key, value), True))

    def _get_or_none(self, key):
        return self._transact(lambda d: (d.get(key), False))

    def _get_now(self, key):
        return self._get_or_none(key)

    def _wait(self, keys, timeout):
        deadline = time.monotonic() + timeout
        delay = 0.001
        while not self.check(keys):
            if time.monotonic() >= deadline:
                raise _timeout_error(timeout, keys)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def add(self, key, amount):
        def fn(d):
            d[key] = str(int(d.get(key, b"0")) + int(amount)).encode()
            return int(d[key]), True
        return self._transact(fn)

    def compare_set(self, key, expected_value, desired_value):
        expected, desired = _as_bytes(expected_value), _as_bytes(desired_value)

        def fn(d):
            current = d.get(key)
            if (current is None and expected == b"") or current == expected:
                d[key] = desired
                return desired, True
            return (expected if current is None else current), False
        return self._transact(fn)

    def check(self, keys):
        keys = list(keys)
        return self._transact(lambda d: (all(k in d for k in keys), False))

    def delete_key(self, key):  # True even for a missing key, as torch's FileStore answers
        return self._transact(lambda d: (d.pop(key, None) is not None or True, True))

    def num_keys(self):
        return self._transact(lambda d: (len(d), False))


class PrefixStore(Store):
    """Every key of `store` seen under "prefix/"."""

    def __init__(self, prefix: str, store: Store):
        super().__init__(store.timeout)
        self.underlying_store = store
        self._prefix = prefix

    def _k(self, key):
        return f"{self._prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k) for k in keys], timeout)

    def _get_or_none(self, key):
        return self.underlying_store._get_or_none(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()
