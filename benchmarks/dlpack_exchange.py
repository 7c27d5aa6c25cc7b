"""DLPack exchange time, ember <-> numpy and ember <-> torch, for 1 MiB and 64 MiB float32
tensors: zero-copy, so the time must not depend on the size. torch <-> numpy is timed
alongside for scale.

    python benchmarks/dlpack_exchange.py [--quick]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from benchmarks.timing import FULL, QUICK, Settings, call_overhead, measure  # noqa: E402

SIZES = {"1 MiB": 1 << 18, "64 MiB": 1 << 24}  # float32 elements


def cases(n):
    e = ember.ones(n)
    a = np.ones(n, dtype=np.float32)
    t = torch.ones(n)
    return {
        "ember -> numpy": lambda: np.from_dlpack(e),
        "numpy -> ember": lambda: ember.from_dlpack(a),
        "ember -> torch": lambda: torch.from_dlpack(e),
        "torch -> ember": lambda: ember.from_dlpack(t),
        "torch -> numpy (reference)": lambda: np.from_dlpack(t),
        "numpy -> torch (reference)": lambda: torch.from_dlpack(a),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    settings = QUICK if parser.parse_args().quick else FULL
    settings = Settings(settings.target_s, settings.repeats, call_overhead(settings))
    rows = {}
    for size, n in SIZES.items():
        for name, fn in cases(n).items():
            rows.setdefault(name, {})[size] = measure(fn, settings).median_s * 1e6
    print(f"{'exchange (µs per call)':28}" + "".join(f"{s:>10}" for s in SIZES))
    for name, by_size in rows.items():
        print(f"{name:28}" + "".join(f"{by_size[s]:10.2f}" for s in SIZES))


if __name__ == "__main__":
    main()
