"""The DistributedDataParallel cases of tests/test_ddp.py: models, data and the training
loops, shared by the worker processes (run as a script under ember.distributed.run) and
by the single-process reference the test computes."""
import os
import sys

import ember
import ember.nn as nn

STEPS = 3
BATCH = 12  # divisible by 2 and 3 ranks
LR = 0.1


class RunningCenter(nn.Module):
    """Subtracts a running mean of its inputs kept in a buffer (BatchNorm's running
    statistics in miniature: a buffer that forward both reads and updates)."""

    def __init__(self, n):
        super().__init__()
        self.register_buffer("running_mean", ember.zeros(n, dtype=ember.float64))

    def forward(self, x):
        out = x - self.running_mean
        if self.training:
            with ember.no_grad():
                self.running_mean.mul_(0.75).add_(x.mean(0), alpha=0.25)
        return out


class Net(nn.Module):
    def __init__(self, buffers=False, extra=False):
        super().__init__()
        self.center = RunningCenter(4) if buffers else None
        self.fc1 = nn.Linear(4, 8)
        self.norm = nn.BatchNorm1d(8) if buffers else None
        self.fc2 = nn.Linear(8, 3)
        self.extra = extra
        if extra:
            self.sometimes = nn.Linear(4, 3)  # used by rank 0 only
            self.never = nn.Linear(4, 3)      # used by nobody

    def forward(self, x, use_sometimes=False):
        if self.center is not None:
            x = self.center(x)
        h = self.fc1(x)
        if self.norm is not None:
            h = self.norm(h)
        out = self.fc2(ember.tanh(h))
        if use_sometimes and self.extra:
            out = out + self.sometimes(x)
        return out


# case -> (model options, DDP options, micro-batches per step, whether the reference is per rank)
CASES = {
    "plain": (dict(), dict(), 1, False),
    "buckets_view": (dict(), dict(bucket_cap_mb=1e-4, gradient_as_bucket_view=True), 1, False),
    "no_sync": (dict(), dict(), 2, False),
    "unused": (dict(extra=True), dict(find_unused_parameters=True, bucket_cap_mb=1e-4), 1, True),
    "buffers": (dict(buffers=True), dict(), 1, True),
    "group": (dict(), dict(bucket_cap_mb=1e-4), 1, False),  # on a process group of its own (new_group)
}


def build(case, seed):
    ember.manual_seed(seed)
    return Net(**CASES[case][0]).double()


def data(case):
    g = ember.Generator().manual_seed(len(case))
    micro = CASES[case][2]
    x = ember.randn(STEPS, micro, BATCH, 4, generator=g, dtype=ember.float64)
    y = ember.randn(STEPS, micro, BATCH, 3, generator=g, dtype=ember.float64)
    return x, y


def shard(t, rank, world):
    n = t.shape[0] // world
    return t[rank * n:(rank + 1) * n]


def loss_fn(out, y):
    return ((out - y) ** 2).mean()


def state(model):
    return {"grads": {n: (p.grad.clone() if p.grad is not None else None) for n, p in model.named_parameters()},
            "params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "buffers": {n: b.clone() for n, b in model.named_buffers()}}


def reference(case, world, seed=100):
    """One process: the full batch (or, where ranks do different things, the mean of
    each rank's loss computed from the same starting buffers, rank 0's buffers kept)."""
    model = build(case, seed)
    opt = ember.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    x, y = data(case)
    per_rank, micro = CASES[case][3], CASES[case][2]
    history = []
    for step in range(STEPS):
        opt.zero_grad()
        for m in range(micro):
            if not per_rank:
                loss_fn(model(x[step, m]), y[step, m]).backward()
                continue
            start = {n: b.clone() for n, b in model.named_buffers()}
            for r in reversed(range(world)):  # rank 0 last: its buffer updates are the ones kept
                with ember.no_grad():
                    for n, b in model.named_buffers():
                        b.copy_(start[n])
                out = model(shard(x[step, m], r, world), use_sometimes=(r == 0))
                (loss_fn(out, shard(y[step, m], r, world)) / world).backward()
        history.append(state(model))
        opt.step()
        history[-1]["params"] = state(model)["params"]
    return history


def run_ddp(case, rank, world, group=None, global_rank=None):
    """rank and world within `group` (None: all processes)."""
    from ember.nn.parallel import DistributedDataParallel as DDP
    model = build(case, 100 + (rank if global_rank is None else global_rank))  # DDP must copy the first rank's
    options = dict(CASES[case][1])
    if case == "group":
        import ember.distributed as dist
        options["process_group"] = dist.new_group(list(range(world)))
    if group is not None:
        options["process_group"] = group
    ddp = DDP(model, **options)
    opt = ember.optim.SGD(ddp.parameters(), lr=LR, momentum=0.9)
    x, y = data(case)
    micro = CASES[case][2]
    history = []
    for step in range(STEPS):
        opt.zero_grad(set_to_none=(case != "buckets_view"))
        for m in range(micro):
            xs, ys = shard(x[step, m], rank, world), shard(y[step, m], rank, world)
            if m < micro - 1:
                with ddp.no_sync():
                    loss_fn(ddp(xs), ys).backward()
            else:
                loss_fn(ddp(xs, use_sometimes=(rank == 0)), ys).backward()
        history.append(state(model))
        opt.step()
        history[-1]["params"] = state(model)["params"]
    return history


def unused_error(rank, world):
    """The second forward after a backward that left a parameter without a gradient."""
    from ember.nn.parallel import DistributedDataParallel as DDP
    ddp = DDP(build("unused", 100))
    x = ember.randn(2, 4, dtype=ember.float64)
    ddp(x).sum().backward()
    try:
        ddp(x)
    except RuntimeError as e:
        return str(e)
    return None


def main(outdir):
    import ember.distributed as dist
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    from ember.nn.parallel import DistributedDataParallel as DDP
    result = {case: run_ddp(case, rank, world) for case in CASES}
    if world == 3:  # a group without global rank 0: ranks 1 and 2 train, broadcasting from rank 1
        group = dist.new_group([1, 2])
        if rank > 0:
            result["subgroup"] = run_ddp("plain", rank - 1, 2, group=group, global_rank=rank)
    result["unused_error"] = unused_error(rank, world)
    result["state_dict_keys"] = list(DDP(build("buffers", 1)).state_dict().keys())
    result["module_is"] = DDP(build("plain", 1)).module.__class__.__name__
    ember.save(result, os.path.join(outdir, f"rank{rank}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
