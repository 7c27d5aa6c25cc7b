"""Loading a 1 GiB safetensors file (16 float32 tensors of 64 MiB): ember.utils.safetensors
against safetensors.torch, each load_file in a fresh process.

    python -m benchmarks.safetensors_load              # 16 x 64 MiB
    python -m benchmarks.safetensors_load --tensors 4  # a quicker 256 MiB

Prints, per library: the load_file time, the process's resident memory growth across it
and its peak RSS, then the same after every tensor is summed once (which faults the
pages in). The file is written just before, so its pages come from the page cache, not
the disk: the load figures say what is read, not how fast the disk is.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

def peak():  # VmHWM starts afresh at exec; ru_maxrss would carry the parent's peak over
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))

if sys.argv[1] == "ember":
    import ember
    from ember.utils.safetensors import load_file
else:
    import torch
    from safetensors.torch import load_file
before = resident()
t0 = time.perf_counter()
tensors = load_file(sys.argv[3])
t1 = time.perf_counter()
loaded, peak_load = resident(), peak()
total = sum(float(t.sum()) for t in tensors.values())
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "grow_load": loaded - before, "peak_load": peak_load,
                  "touch_s": t2 - t1, "grow_touch": resident() - before,
                  "peak_touch": peak(), "total": total}))
"""


def write_file(path, count, numel):
    sys.path.insert(0, str(ROOT))
    import ember
    from ember.utils.safetensors import save_file

    save_file({f"layer{i:02d}": ember.full((numel,), float(i)) for i in range(count)}, path)


def measure(library, path):
    out = subprocess.run([sys.executable, "-c", CHILD, library, str(ROOT), str(path)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tensors", type=int, default=16, help="number of 64 MiB float32 tensors")
    args = parser.parse_args()
    numel = (64 << 20) // 4
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.safetensors")
        write_file(path, args.tensors, numel)
        size = os.path.getsize(path)
        print(f"file: {args.tensors} x 64 MiB float32, {size / 2**30:.3f} GiB")
        print(f"{'library':<20} {'load_file':>10} {'RSS growth':>11} {'peak RSS':>9} | "
              f"{'sum all':>8} {'RSS growth':>11} {'peak RSS':>9}")
        expected = sum(float(i) * numel for i in range(args.tensors))
        for library, label in (("ember", "ember"), ("torch", "safetensors.torch")):
            r = measure(library, path)
            assert r["total"] == expected, (library, r["total"], expected)
            mib = 2**20
            print(f"{label:<20} {r['load_s'] * 1e3:>8.2f}ms {r['grow_load'] / mib:>8.1f}MiB "
                  f"{r['peak_load'] / mib:>6.0f}MiB | {r['touch_s']:>7.2f}s {r['grow_touch'] / mib:>8.1f}MiB "
                  f"{r['peak_touch'] / mib:>6.0f}MiB")


if __name__ == "__main__":
    main()
