"""python -m ember.distributed.run (console script: emberrun): torchrun for ember.

Starts --nproc-per-node copies of a training script on this node, each with the
environment torch.distributed's env:// rendezvous reads (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, ...), forwards SIGINT, SIGTERM,
SIGHUP and SIGQUIT to them, and when one fails stops the others and exits 1 with a
summary naming the failed rank, its exit code and the end of its traceback.

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m ember.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 4 \\
        --master-addr 10.0.0.1 --master-port 29500 train.py
    python -m ember.distributed.run --nproc-per-node 2 -m ember.as_torch train.py   # a torch program

The launcher itself needs no communication engine: it only starts and watches processes.
"""
from __future__ import annotations

import argparse
import collections
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime

__all__ = ["main", "get_args_parser", "parse_args", "run"]

_STOP_GRACE_S = 15.0   # how long stopped workers get between SIGTERM and SIGKILL
_POLL_S = 0.05
_KEPT_LINES = 200      # the end of each worker's stderr, kept for the failure summary
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def get_args_parser() -> argparse.ArgumentParser:
    """torchrun's arguments (both spellings: --nproc-per-node and --nproc_per_node)."""
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Starts and watches the processes of a distributed training job.")

    def opt(*names, **kw):
        spellings = []
        for n in names:
            spellings.append(n)
            if n.startswith("--") and "-" in n[2:]:
                spellings.append("--" + n[2:].replace("-", "_"))
        p.add_argument(*spellings, **kw)

    opt("--nnodes", default="1", help="number of nodes, or MIN:MAX (elastic ranges need MIN == MAX)")
    opt("--nproc-per-node", default="1", help="workers per node: a number, 'cpu' or 'auto' (the CPU count)")
    opt("--node-rank", type=int, default=None, help="this node's rank among the nodes (multi-node)")
    opt("--master-addr", default=None, help="address of the rank-0 node (default 127.0.0.1)")
    opt("--master-port", type=int, default=None,
        help="port of the rendezvous on the rank-0 node (default: a free port on one node, 29500 on several)")
    opt("--rdzv-endpoint", default="", help="HOST[:PORT], the same as --master-addr/--master-port")
    opt("--rdzv-backend", default="static", help="accepted for torchrun's command lines; ranks are static")
    opt("--rdzv-id", default="none", help="job id (TORCHELASTIC_RUN_ID)")
    opt("--rdzv-conf", default="", help="accepted and ignored")
    opt("--standalone", action="store_true", help="one node, a free port")
    opt("--max-restarts", type=int, default=0, help="times the whole group is restarted after a failure")
    opt("--monitor-interval", type=float, default=_POLL_S, help="seconds between checks of the workers")
    opt("--role", default="default")
    opt("--start-method", default="spawn", help="accepted; workers are always new processes")
    opt("--module", "-m", action="store_true", dest="module", help="run the script as a module (python -m)")
    opt("--no-python", action="store_true", help="run the script as an executable, not with python")
    p.add_argument("training_script", help="the script (or, with -m, the module) each worker runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(argv=None) -> argparse.Namespace:
    return get_args_parser().parse_args(argv)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nproc(value: str) -> int:
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise ValueError("--nproc-per-node=gpu: ember runs on the CPU; use a number, 'cpu' or 'auto'")
    n = int(value)
    if n < 1:
        raise ValueError(f"--nproc-per-node must be positive, got {n}")
    return n


def _nnodes(value: str) -> int:
    lo, _, hi = value.partition(":")
    if hi and int(lo) != int(hi):
        raise ValueError(f"--nnodes={value}: elastic node ranges are not supported; give a fixed number of nodes")
    n = int(lo)
    if n < 1:
        raise ValueError(f"--nnodes must be positive, got {n}")
    return n


class _Config:
    def __init__(self, args):
        self.nproc = _nproc(args.nproc_per_node)
        self.nnodes = _nnodes(args.nnodes)
        if args.standalone and self.nnodes != 1:
            raise ValueError("--standalone runs on one node; it cannot be combined with --nnodes > 1")
        self.node_rank = args.node_rank if args.node_rank is not None else 0
        if self.nnodes > 1 and args.node_rank is None:
            raise ValueError("--node-rank is needed with --nnodes > 1 (ranks are assigned statically)")
        if not 0 <= self.node_rank < self.nnodes:
            raise ValueError(f"--node-rank {self.node_rank} is not in [0, {self.nnodes - 1}]")
        addr, port = args.master_addr, args.master_port
        if args.rdzv_endpoint and not args.standalone:
            host, _, p = args.rdzv_endpoint.rpartition(":") if ":" in args.rdzv_endpoint else (
                args.rdzv_endpoint, "", "")
            addr = addr or host
            if port is None and p:
                port = int(p)
        self.master_addr = addr or "127.0.0.1"
        if port is None or args.standalone:
            port = 29500 if self.nnodes > 1 and not args.standalone else _free_port()
        self.master_port = port
        self.world_size = self.nnodes * self.nproc
        self.args = args

    def command(self) -> list:
        a = self.args
        if a.no_python:
            if a.module:
                raise ValueError("--no-python and -m cannot be combined")
            cmd = [a.training_script]
        else:
            cmd = [sys.executable, "-u"]
            if _as_torch_active():
                cmd += ["-m", "ember.as_torch"]
            cmd += ["-m", a.training_script] if a.module else [a.training_script]
        return cmd + list(a.training_script_args)

    def env(self, local_rank: int, restart: int) -> dict:
        rank = self.node_rank * self.nproc + local_rank
        env = dict(os.environ)
        env.update({
            "LOCAL_RANK": str(local_rank), "RANK": str(rank), "GROUP_RANK": str(self.node_rank),
            "ROLE_RANK": str(rank), "ROLE_NAME": self.args.role,
            "LOCAL_WORLD_SIZE": str(self.nproc), "WORLD_SIZE": str(self.world_size),
            "GROUP_WORLD_SIZE": str(self.nnodes), "ROLE_WORLD_SIZE": str(self.world_size),
            "MASTER_ADDR": self.master_addr, "MASTER_PORT": str(self.master_port),
            "TORCHELASTIC_RESTART_COUNT": str(restart), "TORCHELASTIC_MAX_RESTARTS": str(self.args.max_restarts),
            "TORCHELASTIC_RUN_ID": self.args.rdzv_id,
        })
        if self.nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
            env["OMP_NUM_THREADS"] = "1"  # as torchrun: N workers with N threads each oversubscribe the cores
        return env


def _as_torch_active() -> bool:
    """True when this launcher runs under `python -m ember.as_torch` (say, as
    `python -m ember.as_torch -m torch.distributed.run ...`): its workers then run under
    it too."""
    alias = sys.modules.get("ember._torch_alias")
    return alias is not None and alias._finder in sys.meta_path


class _Worker:
    def __init__(self, local_rank: int, rank: int, cmd: list, env: dict):
        self.local_rank, self.rank = local_rank, rank
        self.tail = collections.deque(maxlen=_KEPT_LINES)
        # Its own session, so that a signal reaches it once (from us) and stopping it
        # reaches its own children (DataLoader workers) too.
        self.proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, start_new_session=True)
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()
        self.stopped = False

    def _pump(self):
        out = sys.stderr.buffer if hasattr(sys.stderr, "buffer") else None
        for line in iter(self.proc.stderr.readline, b""):
            self.tail.append(line)
            try:
                if out is not None:
                    out.write(line)
                    out.flush()
                else:
                    sys.stderr.write(line.decode(errors="replace"))
            except (OSError, ValueError):
                pass
        self.proc.stderr.close()

    def signal(self, sig) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def traceback(self) -> str:
        lines = [b.decode(errors="replace").rstrip("\n") for b in self.tail]
        start = max((i for i, ln in enumerate(lines) if "Traceback (most recent call last)" in ln),
                    default=max(0, len(lines) - 10))
        return "\n".join(lines[start:])


def _stop(workers, sig=signal.SIGTERM) -> None:
    """Sends sig (None: it was sent already) to the live workers, then SIGKILL to those
    still running after the grace period."""
    live = [w for w in workers if w.proc.poll() is None]
    for w in live:
        w.stopped = True
        if sig is not None:
            w.signal(sig)
    deadline = time.monotonic() + _STOP_GRACE_S
    for w in live:
        try:
            w.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            w.signal(signal.SIGKILL)
            w.proc.wait()


def _describe_exit(code: int, pid: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "?"
        return f"Signal {-code} ({name}) received by PID {pid}"
    return ""


def _summary(script: str, failures: list) -> str:
    bar, rule = "=" * 60, "-" * 60

    def block(i, w, when):
        tb = w.traceback() or _describe_exit(w.proc.returncode, w.proc.pid) or "<N/A>"
        tb = tb.replace("\n", "\n" + " " * 14)
        return (f"[{i}]:\n  time      : {when}\n  host      : {socket.gethostname()}\n"
                f"  rank      : {w.rank} (local_rank: {w.local_rank})\n"
                f"  exitcode  : {w.proc.returncode} (pid: {w.proc.pid})\n  traceback : {tb}")

    first, others = failures[0], failures[1:]
    other_text = "\n".join(block(i + 1, w, t) for i, (w, t) in enumerate(others)) or "  <NO_OTHER_FAILURES>"
    return (f"{bar}\n{script} FAILED\n{rule}\nFailures:\n{other_text}\n{rule}\n"
            f"Root Cause (first observed failure):\n{block(0, *first)}\n{bar}")


def _run_group(cfg: _Config, restart: int, received: list) -> list:
    """Starts the workers and watches them; returns the failures, first observed first
    (empty when all succeeded)."""
    cmd = cfg.command()
    workers = [_Worker(lr, cfg.node_rank * cfg.nproc + lr, cmd, cfg.env(lr, restart)) for lr in range(cfg.nproc)]
    _run_group.current = workers
    failures = []
    try:
        while True:
            if received:  # forwarded by the handler already
                _stop(workers, None)
                break
            running = False
            for w in workers:
                code = w.proc.poll()
                if code is None:
                    running = True
                elif code != 0 and not w.stopped and all(w is not f for f, _ in failures):
                    failures.append((w, datetime.now().strftime("%Y-%m-%d_%H:%M:%S")))
            if failures:
                _stop(workers)
                break
            if not running:
                break
            time.sleep(cfg.args.monitor_interval)
    finally:
        _stop(workers, signal.SIGKILL)  # only when the loop itself failed: workers are done otherwise
        for w in workers:
            w.reader.join(5.0)
        _run_group.current = []
    return failures


_run_group.current = []


def run(args: argparse.Namespace) -> int:
    """Runs the job the parsed arguments describe; returns the launcher's exit status."""
    try:
        cfg = _Config(args)
    except ValueError as e:
        print(f"ember.distributed.run: error: {e}", file=sys.stderr)
        return 2
    received = []

    def forward(sig, frame):
        if not received:
            received.append(sig)
        for w in list(_run_group.current):
            w.signal(sig)

    old = {s: signal.signal(s, forward) for s in _FORWARDED}
    try:
        for restart in range(cfg.args.max_restarts + 1):
            failures = _run_group(cfg, restart, received)
            if received:
                return 128 + received[0]
            if not failures:
                return 0
            if restart < cfg.args.max_restarts:
                print(f"ember.distributed.run: worker group failed (rank {failures[0][0].rank}); restarting "
                      f"({restart + 1}/{cfg.args.max_restarts})", file=sys.stderr)
        print(_summary(args.training_script, failures), file=sys.stderr)
        return 1
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def main(argv=None) -> None:
    """The console entry point: `emberrun ...` or `python -m ember.distributed.run ...`."""
    sys.exit(run(parse_args(argv)))


if __name__ == "__main__":
    main()
