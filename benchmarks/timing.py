"""The timing engine: in-process timing of a callable, import time in fresh processes,
and the busy neighbour that keeps one core occupied while we measure.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    target_s: float  # wall time of one measurement (a batch of `loops` calls)
    repeats: int  # measurements per case and library; we report their median
    call_overhead_s: float = 0.0  # cost of calling an empty closure once, subtracted


FULL = Settings(target_s=0.030, repeats=9)
QUICK = Settings(target_s=0.005, repeats=3)


@dataclass(frozen=True)
class Timing:
    samples_s: tuple[float, ...]  # per-call time of each measurement
    loops: int  # calls per measurement

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)


def _batch(fn: Callable[[], object], loops: int) -> float:
    # The loop runs inside the timed region so microsecond calls are measurable;
    # itertools.repeat is the cheapest Python loop (what timeit uses).
    start = time.perf_counter()
    for _ in itertools.repeat(None, loops):
        fn()
    return time.perf_counter() - start


def calibrate(fn: Callable[[], object], target_s: float) -> int:
    """Number of calls that makes one measurement last about target_s."""
    loops = 1
    while True:
        elapsed = _batch(fn, loops)
        if elapsed >= target_s / 5:
            return max(1, round(loops * target_s / elapsed))
        loops *= 10


def measure(fn: Callable[[], object], settings: Settings) -> Timing:
    """Median-friendly timing of fn(): warm up, calibrate, then settings.repeats batches."""
    fn()  # the first call fails fast and pays one-time costs
    loops = calibrate(fn, settings.target_s)  # calibration batches also warm up
    _batch(fn, loops)  # one discarded batch at the final loop count
    samples = []
    for _ in range(settings.repeats):
        per_call = _batch(fn, loops) / loops - settings.call_overhead_s
        samples.append(max(per_call, 0.0))
    return Timing(tuple(samples), loops)


def call_overhead(settings: Settings) -> float:
    """Per-call cost of the benchmark loop with an empty closure, to subtract from cases.

    A constant cost, so the minimum is its best estimate: a median taken while the
    machine is busy would overstate it and shrink every small case.
    """
    empty = measure(lambda: None, Settings(settings.target_s, max(settings.repeats, 5)))
    return min(empty.samples_s)


def run_python(code: str) -> float:
    """Wall time of a fresh interpreter running code; raises RuntimeError if it fails."""
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,  # so the repository's ember is the one imported
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if result.returncode < 0:
        raise RuntimeError(f"python -c {code!r} was killed by signal {-result.returncode}")
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or ["(no output)"]
        raise RuntimeError(f"python -c {code!r} failed: {lines[-1]}")
    return elapsed


def import_times(modules: list[str], runs: int) -> tuple[dict[str, Timing], dict[str, str]]:
    """Import time of each module in fresh interpreters, minus `python -c "pass"`.

    Runs are interleaved (pass, a, b, pass, a, b, ...) so slow drift in the machine's
    state affects every module alike. Returns timings and, for modules whose import
    failed, the error.
    """
    startup: list[float] = []
    raw: dict[str, list[float]] = {name: [] for name in modules}
    errors: dict[str, str] = {}
    run_python("pass")  # warm the file cache
    for _ in range(runs):
        startup.append(run_python("pass"))
        for name in modules:
            if name in errors:
                continue
            try:
                raw[name].append(run_python(f"import {name}"))
            except RuntimeError as error:
                errors[name] = str(error)
    base = statistics.median(startup)
    timings = {
        name: Timing(tuple(max(t - base, 0.0) for t in times), loops=1)
        for name, times in raw.items()
        if name not in errors
    }
    return timings, errors


# A pure Python spin loop that stops by itself if its parent dies (it gets re-parented),
# so a killed runner never leaves a core busy.
_SPIN = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


@contextlib.contextmanager
def busy_neighbour(enabled: bool = True) -> Iterator[subprocess.Popen | None]:
    """Keep one core busy with another process for the duration of the block."""
    if not enabled:
        yield None
        return
    # A session of its own: Ctrl-C reaches only the runner, which then kills it.
    proc = subprocess.Popen(
        [sys.executable, "-c", _SPIN], stdin=subprocess.DEVNULL, start_new_session=True
    )
    try:
        time.sleep(0.2)  # let it start spinning
        if proc.poll() is not None:
            raise RuntimeError(f"busy neighbour exited early (code {proc.returncode})")
        yield proc
    finally:
        proc.kill()
        proc.wait()


def cpu_model() -> str | None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return None


def usable_cpus() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()
