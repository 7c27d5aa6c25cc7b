"""Loading a checkpoint written by torch.save: ember.load against torch.load, with and
without mmap, each in a fresh process. Prints wall time of the load call and peak RSS
(VmHWM, restarted after the import and read right after the load) above the process's RSS after importing the
library, then the time to sum every tensor (which reads mapped pages in) and the RSS after it.

    python -m benchmarks.checkpoint_load                   # 16 float32 tensors of 64 MiB (1 GiB)
    python -m benchmarks.checkpoint_load --tensors 4 --mib 16

The file is read once before the runs, so every run finds it in the page cache.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from .timing import REPO_ROOT

_WRITE = """
import sys, torch
n, mib = int(sys.argv[2]), int(sys.argv[3])
torch.save({f"layer{i}.weight": torch.full((mib << 18,), float(i)) for i in range(n)}, sys.argv[1])
"""

_LOAD = """
import json, sys, time
import importlib
lib = importlib.import_module(sys.argv[2])
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
def peak_rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
with open("/proc/self/clear_refs", "w") as f:  # restarts the peak: importing may have passed it
    f.write("5")
base = rss()
start = time.perf_counter()
state = lib.load(sys.argv[1], mmap=sys.argv[3] == "1", weights_only=True)
load_s = time.perf_counter() - start
peak = peak_rss()  # the load's peak (the sum below maps pages in)
start = time.perf_counter()
total = sum(float(t.sum()) for t in state.values())  # touches every byte
sum_s = time.perf_counter() - start
print(json.dumps({"load_s": load_s, "sum_s": sum_s, "peak_mib": (peak - base) / 2**20,
                  "after_sum_mib": (rss() - base) / 2**20, "total": total}))
"""


def run(code, *args):
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                         cwd=REPO_ROOT, check=True)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tensors", type=int, default=16)
    parser.add_argument("--mib", type=int, default=64, help="size of each tensor in MiB")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per case; the median is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "checkpoint.pt")
        run(_WRITE, path, args.tensors, args.mib)
        with open(path, "rb") as f:  # into the page cache
            while f.read(64 << 20):
                pass
        print(f"checkpoint: {args.tensors} float32 tensors x {args.mib} MiB = "
              f"{os.path.getsize(path) / 2**20:.0f} MiB, written by torch.save")
        print(f"{'library':<8} {'mmap':<6} {'load s':>8} {'peak RSS MiB':>13} {'sum s':>7} {'RSS after sum':>14}")
        for lib in ("ember", "torch"):
            for mmap in (False, True):
                runs = [json.loads(run(_LOAD, path, lib, int(mmap))) for _ in range(args.repeats)]
                runs.sort(key=lambda r: r["load_s"])
                r = runs[len(runs) // 2]
                print(f"{lib:<8} {str(mmap):<6} {r['load_s']:>8.3f} {r['peak_mib']:>13.0f} {r['sum_s']:>7.3f} "
                      f"{r['after_sum_mib']:>14.0f}")


if __name__ == "__main__":
    main()
