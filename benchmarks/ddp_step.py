"""A DistributedDataParallel training step of the example's transformer
(examples/char_transformer.py: forward, cross_entropy, backward, clipping, AdamW; 16
sequences of 64 characters per process): ember on 1 process and on 2 processes with
DDP, against torch on 1 process and torch DDP on gloo, in the same run. Both libraries
start their processes with ember.distributed.run and use cores / processes threads each.

    python -m benchmarks.ddp_step                  # 2 processes, 30 timed steps
    python -m benchmarks.ddp_step --nproc 3 --steps 50

Printed per configuration: median time per step and sequences per second; for DDP the
communication: ember's time all_reduce takes for all buckets run alone (`comm`), the part
of it still waited for after backward (`exposed`: the wait in the last bucket's hook of
the rank that finished backward last, since the others' waits include waiting for it)
and the share hidden behind backward (1 - exposed / comm); torch's from its own DDP
logging (avg_backward_comm_time and avg_backward_compute_comm_overlap_time).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

from .timing import REPO_ROOT

BATCH, CONTEXT = 16, 64


def _example():
    spec = importlib.util.spec_from_file_location("char_transformer_example",
                                                  REPO_ROOT / "examples" / "char_transformer.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def worker(lib_name: str, steps: int, warmup: int, out: str, threads: int) -> None:
    lib = importlib.import_module(lib_name)
    dist = importlib.import_module(f"{lib_name}.distributed")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    lib.set_num_threads(threads or max(1, (os.cpu_count() or 1) // world))
    example = _example()
    lib.manual_seed(0)
    generator = lib.Generator().manual_seed(rank)
    text = example.Text(lib)
    net = example.make_model_class(lib)(len(text.chars), CONTEXT)
    model = net
    if world > 1:
        dist.init_process_group("gloo")
        model = importlib.import_module(f"{lib_name}.nn.parallel").DistributedDataParallel(net)
        if lib_name == "torch":
            model._set_ddp_runtime_logging_sample_rate(1)
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def step():
        x, y = text.batch(BATCH, CONTEXT, generator)
        _, loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for _ in range(warmup):
        step()
    if world > 1:
        dist.barrier()
        if lib_name == "ember":
            model.comm_stats.update(launch_s=0.0, wait_s=0.0, reductions=0)
    times, arrivals = [], []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
        if world > 1 and lib_name == "ember":
            arrivals.append((model.comm_stats["last_arrival"], model.comm_stats["last_wait_s"]))
    result = {"step_s": statistics.median(times), "world": world}
    if world > 1 and lib_name == "ember":
        everyone = [None] * world
        dist.all_gather_object(everyone, arrivals)
        # per step, the wait of the rank that finished backward last: the others also
        # waited for it, which is imbalance, not communication
        last = [max((r[k] for r in everyone), key=lambda a: a[0])[1] for k in range(steps)]
        result["exposed_s"] = statistics.median(last)
        result["wait_s"] = model.comm_stats["wait_s"] / model.comm_stats["reductions"]
        result["launch_s"] = model.comm_stats["launch_s"] / model.comm_stats["reductions"]
        result["buckets"] = len(model._buckets)
        dist.barrier()
        alone = []
        for _ in range(10):  # the same all_reduces, with nothing else running
            start = time.perf_counter()
            for b in model._buckets:
                dist.all_reduce(b.buffer)
            alone.append(time.perf_counter() - start)
        result["comm_s"] = statistics.median(alone)
    elif world > 1:
        data = model._get_ddp_logging_data()
        result["comm_s"] = data.get("avg_backward_comm_time", 0) / 1e9
        result["overlap_s"] = data.get("avg_backward_compute_comm_overlap_time", 0) / 1e9
        result["backward_s"] = data.get("avg_backward_compute_time", 0) / 1e9
        result["buckets"] = data.get("num_buckets_reduced", None)
    if world > 1:
        dist.destroy_process_group()
    if rank == 0:
        with open(out, "w") as f:
            json.dump(result, f)


def measure(lib: str, nproc: int, steps: int, warmup: int, threads: int) -> dict:
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ddp_step_{lib}_{nproc}_{os.getpid()}.json")
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), "-m", "benchmarks.ddp_step",
           "--worker", lib, "--steps", str(steps), "--warmup", str(warmup), "--out", out, "--threads", str(threads)]
    subprocess.run(cmd, cwd=REPO_ROOT, check=True, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    with open(out) as f:
        result = json.load(f)
    os.unlink(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="threads per process (default: cores / processes)")
    parser.add_argument("--worker", choices=["ember", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.steps, args.warmup, args.out, args.threads)
        return
    print(f"char transformer train step, {BATCH}x{CONTEXT} chars per process, {os.cpu_count()} cores, "
          f"{args.threads or 'cores / processes'} threads per process")
    for lib in ("ember", "torch"):
        for nproc in (1, args.nproc):
            r = measure(lib, nproc, args.steps, args.warmup, args.threads)
            line = (f"{lib:5} {nproc} process{'es' if nproc > 1 else '  '}  {r['step_s'] * 1e3:7.1f} ms/step  "
                    f"{nproc * BATCH / r['step_s']:7.1f} seq/s")
            if nproc > 1 and lib == "ember":
                hidden = 1 - r["exposed_s"] / r["comm_s"] if r["comm_s"] else 0.0
                line += (f"  comm {r['comm_s'] * 1e3:.2f} ms in {r['buckets']} buckets, exposed "
                         f"{r['exposed_s'] * 1e3:.2f} ms, hidden {max(0.0, hidden):.0%} (mean wait with "
                         f"imbalance {r['wait_s'] * 1e3:.2f} ms)")
            elif nproc > 1:
                hidden = r["overlap_s"] / r["comm_s"] if r["comm_s"] else 0.0
                line += (f"  comm {r['comm_s'] * 1e3:.2f} ms (torch's logging), overlapped "
                         f"{r['overlap_s'] * 1e3:.2f} ms, hidden {hidden:.0%}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
