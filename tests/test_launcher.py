"""python -m ember.distributed.run (torchrun for ember): the workers' environment, -m and
as_torch, a failing rank ending the others with its error shown, signals forwarded."""
import os
import signal
import subprocess
import sys
import textwrap
import time


import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)
LAUNCH = [sys.executable, "-m", "ember.distributed.run"]

SHOW_ENV = """
import os, sys
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "MASTER_ADDR",
        "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT", "OMP_NUM_THREADS"]
os.write(1, (" ".join(f"{k}={os.environ.get(k)}" for k in keys) + " ARGS=" + ",".join(sys.argv[1:]) + "\\n").encode())
"""


def script(tmp_path, source, name="job.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def launch(args, tmp_path, timeout=60):
    return subprocess.run(LAUNCH + args, capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=timeout)


def records(stdout):
    out = []
    for line in stdout.splitlines():
        fields = dict(f.split("=", 1) for f in line.split())
        out.append(fields)
    return sorted(out, key=lambda r: int(r["RANK"]))


@pytest.mark.timeout(60)
def test_two_workers_get_torchruns_environment(tmp_path):
    r = launch(["--nproc-per-node", "2", script(tmp_path, SHOW_ENV), "a", "--flag"], tmp_path)
    assert r.returncode == 0, r.stderr
    recs = records(r.stdout)
    assert [(x["RANK"], x["LOCAL_RANK"]) for x in recs] == [("0", "0"), ("1", "1")]
    for x in recs:
        assert (x["WORLD_SIZE"], x["LOCAL_WORLD_SIZE"], x["GROUP_RANK"], x["GROUP_WORLD_SIZE"]) == ("2", "2", "0", "1")
        assert x["MASTER_ADDR"] == "127.0.0.1" and x["ARGS"] == "a,--flag"
        assert x["TORCHELASTIC_RESTART_COUNT"] == "0" and x["OMP_NUM_THREADS"] == "1"
    # a free port, chosen at run time, the same for all ranks
    assert recs[0]["MASTER_PORT"] == recs[1]["MASTER_PORT"] and int(recs[0]["MASTER_PORT"]) > 0


@pytest.mark.timeout(60)
def test_multi_node_ranks_underscore_spelling_and_module(tmp_path):
    script(tmp_path, SHOW_ENV, name="show_env_mod.py")
    r = launch(["--nnodes", "2", "--node_rank", "1", "--nproc_per_node", "2", "--master_addr", "10.1.2.3",
                "--master_port", "23456", "-m", "show_env_mod", "x"], tmp_path)
    assert r.returncode == 0, r.stderr
    recs = records(r.stdout)
    assert [(x["RANK"], x["LOCAL_RANK"], x["GROUP_RANK"]) for x in recs] == [("2", "0", "1"), ("3", "1", "1")]
    assert {(x["WORLD_SIZE"], x["LOCAL_WORLD_SIZE"], x["MASTER_ADDR"], x["MASTER_PORT"], x["ARGS"]) for x in recs} == \
        {("4", "2", "10.1.2.3", "23456", "x")}
    r = launch(["--nproc-per-node", "1", "--rdzv-endpoint", "localhost:29411", script(tmp_path, SHOW_ENV)], tmp_path)
    assert records(r.stdout)[0]["MASTER_ADDR"] == "localhost" and records(r.stdout)[0]["MASTER_PORT"] == "29411"


@pytest.mark.timeout(60)
def test_failing_rank_stops_the_others_and_is_reported(tmp_path):
    job = script(tmp_path, """
        import os, time
        open(f"pid{os.environ['RANK']}", "w").write(str(os.getpid()))
        if os.environ["RANK"] == "1":
            time.sleep(0.5)
            raise ValueError("rank one broke")
        time.sleep(120)
    """)
    start = time.monotonic()
    r = launch(["--nproc-per-node", "3", job], tmp_path)
    assert time.monotonic() - start < 30
    assert r.returncode == 1
    assert "ValueError: rank one broke" in r.stderr  # forwarded as it happened
    summary = r.stderr[r.stderr.index("=" * 60):]
    assert f"{job} FAILED" in summary and "<NO_OTHER_FAILURES>" in summary
    assert "rank      : 1 (local_rank: 1)" in summary and "exitcode  : 1 (pid:" in summary
    assert "traceback : Traceback (most recent call last)" in summary and "ValueError: rank one broke" in summary
    for rank in (0, 2):
        pid = int((tmp_path / f"pid{rank}").read_text())
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.timeout(60)
def test_worker_killed_by_a_signal(tmp_path):
    job = script(tmp_path, "import os, signal\nif os.environ['RANK'] == '0':\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    r = launch(["--nproc-per-node", "2", job], tmp_path)
    assert r.returncode == 1
    assert "exitcode  : -9" in r.stderr and "Signal 9 (SIGKILL) received by PID" in r.stderr


@pytest.mark.timeout(60)
def test_restarts(tmp_path):
    job = script(tmp_path, """
        import os
        if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0" and os.environ["RANK"] == "0":
            raise SystemExit(7)
        os.write(1, ("done " + os.environ["RANK"] + "\\n").encode())
    """)
    r = launch(["--nproc-per-node", "2", "--max-restarts", "1", job], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "done 0" in r.stdout and "restarting (1/1)" in r.stderr
    r = launch(["--nproc-per-node", "2", "--max-restarts", "0", job], tmp_path)
    assert r.returncode == 1 and "exitcode  : 7" in r.stderr


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_are_forwarded(tmp_path, sig):
    job = script(tmp_path, """
        import os, signal, sys, time
        def stop(s, f):
            # one write per line: print writes the text and the newline apart, so lines of two ranks interleave
            os.write(1, f"rank {os.environ['RANK']} got {s}\\n".encode())
            sys.exit(3)
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        os.write(1, b"ready\\n")
        time.sleep(120)
    """)
    p = subprocess.Popen(LAUNCH + ["--nproc-per-node", "2", job], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=ENV, cwd=tmp_path)
    try:
        assert p.stdout.readline() == "ready\n" and p.stdout.readline() == "ready\n"
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 128 + sig
    assert sorted(out.splitlines()) == [f"rank 0 got {int(sig)}", f"rank 1 got {int(sig)}"]


@pytest.mark.timeout(60)
def test_combines_with_as_torch_both_ways(tmp_path):
    job = script(tmp_path, """
        import os, torch
        os.write(1, f"{os.environ['RANK']} {torch.__name__} {torch.ones(3).sum().item()}\\n".encode())
    """)
    r = launch(["--nproc-per-node", "2", "-m", "ember.as_torch", job], tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["0 ember 3.0", "1 ember 3.0"]
    r = subprocess.run([sys.executable, "-m", "ember.as_torch", "-m", "torch.distributed.run", "--nproc-per-node", "2",
                        job], capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["0 ember 3.0", "1 ember 3.0"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("args, message", [
    (["--nproc-per-node", "0"], "--nproc-per-node must be positive, got 0"),
    (["--nproc-per-node", "gpu"], "ember runs on the CPU"),
    (["--nnodes", "2"], "--node-rank is needed with --nnodes > 1"),
    (["--nnodes", "1:2"], "elastic node ranges are not supported"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank 2 is not in [0, 1]"),
])
def test_bad_arguments(tmp_path, args, message):
    r = launch(args + ["job.py"], tmp_path)
    assert r.returncode == 2 and message in r.stderr


def test_console_script_is_declared():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts["emberrun"] == "ember.distributed.run:main"
    from ember.distributed.run import main
    assert callable(main)


TORCHRUN_PROGRAM = """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(rank)  # different on each rank: DDP copies rank 0's
model = DDP(torch.nn.Linear(3, 1))
data = TensorDataset(torch.arange(30.0).reshape(10, 3), torch.arange(10.0).reshape(10, 1))
sampler = DistributedSampler(data, shuffle=True, seed=5)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
seen = []
for epoch in range(2):
    sampler.set_epoch(epoch)
    seen += list(sampler)
    for x, y in DataLoader(data, batch_size=2, sampler=sampler):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
weights = torch.cat([p.detach().flatten() for p in model.parameters()])
gathered = [torch.zeros_like(weights) for _ in range(world)]
dist.all_gather(gathered, weights)
same = all(torch.equal(g, gathered[0]) for g in gathered)
os.write(1, f"{rank} {world} {same} {','.join(map(str, seen))} {sorted(model.state_dict())}\\n".encode())
dist.destroy_process_group()
"""


@pytest.mark.timeout(120)
def test_an_unchanged_torchrun_program_runs_on_ember(tmp_path):
    import torch.utils.data.distributed as tdist
    job = script(tmp_path, TORCHRUN_PROGRAM)
    r = launch(["--nproc-per-node", "2", "-m", "ember.as_torch", job], tmp_path, timeout=100)
    assert r.returncode == 0, r.stderr[-3000:]
    for rank, line in enumerate(sorted(r.stdout.splitlines())):
        sampler = tdist.DistributedSampler(range(10), num_replicas=2, rank=rank, shuffle=True, seed=5)
        seen = []
        for epoch in range(2):
            sampler.set_epoch(epoch)
            seen += list(sampler)
        # the ranks agree on the weights, draw torch's indices, and name the state as torch's DDP
        assert line == f"{rank} 2 True {','.join(map(str, seen))} ['module.bias', 'module.weight']"
