"""The machine's limits, measured by the runner on the machine it runs on, so that each
rate can be read as a fraction of what the hardware allows, not only as a ratio to torch:

- memory bandwidth: the best of numpy's and torch's copy of 256 MB (bytes read +
  written per second, the same count the cases' GB/s use), libraries other than ember
  so that ember is never its own yardstick;
- peak float32 FLOP/s: a C loop of independent fused multiply-adds on the widest
  vectors the compiler targets here (`-march=native`), compiled at run time with the
  system's C compiler and run on as many threads as ember uses (ctypes releases the
  GIL, so the threads run at once). Without a C compiler the peak is unknown and the
  column says so.

A case's fraction is its ember rate over the limit of its kind: GB/s over bandwidth,
GFLOP/s over the float32 peak (bfloat16 products too: a CPU without bfloat16 hardware
has no faster peak for them). A reduction reads without writing, so it can pass 100%
of a copy's rate.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

COPY_BYTES = 256 << 20

# Independent chains of multiply-adds: enough to cover the FMA latency (4-5 cycles) on
# two ports; 16 vector registers without AVX-512, 32 with it.
FMA_SOURCE = r"""
#include <stddef.h>
#ifdef __AVX512F__
typedef float vec __attribute__((vector_size(64)));
#define CHAINS 24
#else
typedef float vec __attribute__((vector_size(32)));
#define CHAINS 12
#endif
int lanes(void) { return (int)(sizeof(vec) / sizeof(float)); }
int chains(void) { return CHAINS; }
float fma_loop(long iterations) {
  vec acc[CHAINS];
  vec m, a;
  for (int l = 0; l < (int)(sizeof(vec) / sizeof(float)); ++l) { m[l] = 0.999999f; a[l] = 1e-7f; }
  for (int c = 0; c < CHAINS; ++c) acc[c] = m * (float)(c + 1);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 32
    for (int c = 0; c < CHAINS; ++c) acc[c] = acc[c] * m + a;
  }
  float s = 0;
  for (int c = 0; c < CHAINS; ++c)
    for (int l = 0; l < (int)(sizeof(vec) / sizeof(float)); ++l) s += acc[c][l];
  return s;
}
"""


@dataclass(frozen=True)
class Limits:
    bandwidth_gb_s: float | None  # copy: bytes read + written per second, 1e9
    peak_gflop_s: float | None  # float32 FMA peak on `threads` threads
    threads: int
    how: str  # one line: how each was measured


def _best_time(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def memory_bandwidth(libraries: dict) -> tuple[float | None, str]:
    """Best copy rate of numpy and torch (GB/s), and which gave it."""
    rates = {}
    numpy = libraries.get("numpy")
    if numpy is not None:
        a = numpy.full(COPY_BYTES // 4, 1.0, dtype=numpy.float32)
        b = numpy.full_like(a, 2.0)
        rates["numpy copyto"] = 2 * COPY_BYTES / _best_time(lambda: numpy.copyto(b, a))
    torch = libraries.get("torch")
    if torch is not None:
        a = torch.full((COPY_BYTES // 4,), 1.0)
        b = torch.full_like(a, 2.0)
        rates["torch copy_"] = 2 * COPY_BYTES / _best_time(lambda: b.copy_(a))
    if not rates:
        return None, "no numpy or torch to measure a copy"
    name = max(rates, key=rates.get)
    return rates[name] / 1e9, name


def _compile_fma() -> ctypes.CDLL | None:
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    directory = Path(tempfile.mkdtemp(prefix="ember-limits-"))
    source, library = directory / "fma.c", directory / "fma.so"
    source.write_text(FMA_SOURCE)
    try:
        subprocess.run([cc, "-O2", "-march=native", "-ffp-contract=fast", "-shared", "-fPIC", str(source),
                        "-o", str(library)], check=True, capture_output=True, timeout=60)
        return ctypes.CDLL(str(library))
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        shutil.rmtree(directory, ignore_errors=True)  # the loaded library stays mapped


def peak_flops(threads: int, seconds: float = 0.2) -> tuple[float | None, str]:
    """float32 multiply-add peak on `threads` threads (GFLOP/s), or None without a C compiler."""
    lib = _compile_fma()
    if lib is None:
        return None, "no C compiler: peak unknown"
    lib.fma_loop.argtypes = [ctypes.c_long]
    lib.fma_loop.restype = ctypes.c_float
    per_iteration = 2 * lib.lanes() * lib.chains()
    iterations = 1000
    while True:  # calibrate one thread's call to ~seconds
        elapsed = _best_time(lambda: lib.fma_loop(iterations), 1)
        if elapsed >= seconds / 4:
            iterations = max(1, int(iterations * seconds / elapsed))
            break
        iterations *= 4

    def all_threads() -> None:
        workers = [threading.Thread(target=lib.fma_loop, args=(iterations,)) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    elapsed = _best_time(all_threads, 3)
    return threads * iterations * per_iteration / elapsed / 1e9, (
        f"{lib.chains()} chains of {lib.lanes()}-lane float32 FMAs on {threads} threads")


def measure(libraries: dict, threads: int) -> Limits:
    bandwidth, how_bw = memory_bandwidth(libraries)
    peak, how_peak = peak_flops(threads)
    return Limits(bandwidth, peak, threads, f"bandwidth: {how_bw}; peak: {how_peak}")


def fraction(limits: Limits | None, bytes_: int, flops: int, seconds: float) -> float | None:
    """The rate of one call of `seconds` as a fraction of the machine's limit of its kind."""
    if limits is None or seconds <= 0:
        return None
    if bytes_ and limits.bandwidth_gb_s:
        return bytes_ / seconds / 1e9 / limits.bandwidth_gb_s
    if flops and limits.peak_gflop_s:
        return flops / seconds / 1e9 / limits.peak_gflop_s
    return None
