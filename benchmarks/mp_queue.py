"""Sending a float32 tensor of 1, 64 and 256 MiB through ember.multiprocessing.Queue and
torch.multiprocessing.Queue to another process, in the same run. Tensors travel by their
shared memory (a file descriptor), so once a tensor is in shared memory the time must not
grow with its size; the first send of an unshared tensor also copies it into shared
memory (share_memory_), which does grow with the size and is timed on its own.

    python benchmarks/mp_queue.py [--quick]

A round trip is timed: the parent puts the tensor, the child gets it (mapping its memory)
and puts back a small acknowledgement; the figure is the median over the repeats.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SIZES = {"1 MiB": 1 << 18, "64 MiB": 1 << 24, "256 MiB": 1 << 26}  # float32 elements


def _echo(inbox, outbox):
    while True:
        t = inbox.get()
        if t is None:
            return
        outbox.put(t.numel())
        del t


def _median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(lib_name, repeats):
    import importlib

    lib = importlib.import_module(lib_name)
    mp = importlib.import_module(f"{lib_name}.multiprocessing").get_context("fork")
    inbox, outbox = mp.Queue(), mp.Queue()
    child = mp.Process(target=_echo, args=(inbox, outbox), daemon=True)
    child.start()
    rows = {}
    try:
        for size, n in SIZES.items():
            shared = lib.ones(n).share_memory_()

            def send(t=shared):
                inbox.put(t)
                assert outbox.get(timeout=60) == t.numel()

            send()  # warm: the child's first mapping, the resource sharer's thread
            rows.setdefault("send shared tensor", {})[size] = _median_ms(send, repeats)

            def first_send():
                t = lib.ones(n)  # not shared: moved to shared memory on put
                inbox.put(t)
                assert outbox.get(timeout=60) == n

            rows.setdefault("first send (copy to shm)", {})[size] = _median_ms(first_send, max(3, repeats // 4))
    finally:
        inbox.put(None)
        child.join(30)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    repeats = 5 if parser.parse_args().quick else 30
    print(f"{'Queue round trip (ms)':36}" + "".join(f"{s:>10}" for s in SIZES))
    for lib_name in ("ember", "torch"):
        for name, by_size in measure(lib_name, repeats).items():
            print(f"{lib_name + ': ' + name:36}" + "".join(f"{by_size[s]:10.3f}" for s in SIZES))


if __name__ == "__main__":
    main()
