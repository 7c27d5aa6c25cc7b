"""all_reduce bandwidth between 2 local processes: ember.distributed against
torch.distributed, both on gloo over loopback TCP, in the same run.

    python -m benchmarks.allreduce                    # 1 MiB, 16 MiB, 256 MiB float32
    python -m benchmarks.allreduce --sizes-mib 1 16   # fewer

Reports algorithm bandwidth: the tensor's bytes / the time of one all_reduce (SUM), the
median of --repeats timed calls after a warm-up, per library, each in its own pair of
processes (spawned, so neither library's threads meet the other's); the median of
--rounds such runs, ember's and torch's alternating.
"""
from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _worker(lib, rank, port, sizes_mib, repeats, q):
    sys.path.insert(0, str(ROOT))
    if lib == "ember":
        import ember as torch
        import ember.distributed as dist
    else:
        import torch
        import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=120))
    out = {}
    for mib in sizes_mib:
        t = torch.ones(mib * (1 << 20) // 4, dtype=torch.float32)
        n = max(2, min(repeats, int(2048 // mib)))  # fewer repeats of the large sizes
        dist.all_reduce(t)  # warm-up: connections, buffers
        times = []
        for _ in range(n):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - t0)
        out[mib] = statistics.median(times)
    dist.destroy_process_group()
    q.put((rank, out))


def measure(lib, sizes_mib, repeats):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(lib, r, port, sizes_mib, repeats, q)) for r in range(2)]
    for p in procs:
        p.start()
    try:
        results = dict(q.get(timeout=600) for _ in procs)
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    # the slower rank's time is the collective's time
    return {mib: max(results[0][mib], results[1][mib]) for mib in sizes_mib}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 16, 256])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="alternating ember/torch rounds (median kept)")
    args = parser.parse_args()
    rounds = {"ember": [], "torch": []}
    for _ in range(args.rounds):  # alternating, so a burst of load hits both
        for lib in rounds:
            rounds[lib].append(measure(lib, args.sizes_mib, args.repeats))
    times = {lib: {mib: statistics.median(r[mib] for r in runs) for mib in args.sizes_mib}
             for lib, runs in rounds.items()}
    print(f"{'size':>8}  {'ember GB/s':>10}  {'torch GB/s':>10}  {'ember ms':>9}  {'torch ms':>9}")
    for mib in args.sizes_mib:
        nbytes = mib * (1 << 20)
        e, t = times["ember"][mib], times["torch"][mib]
        print(f"{mib:>5} MiB  {nbytes / e / 1e9:>10.2f}  {nbytes / t / 1e9:>10.2f}  {e * 1e3:>9.2f}  {t * 1e3:>9.2f}")


if __name__ == "__main__":
    main()
