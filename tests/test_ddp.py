"""DistributedDataParallel: gradients and parameters after several steps on 2 and 3
ranks equal to one process training on the whole batch (float64, to 1e-12), with
no_sync, unused parameters, buffers, small buckets and gradient_as_bucket_view; the
workers run under ember.distributed.run (tests/ddp_cases.py)."""
import importlib.util
import os
import subprocess
import sys

import pytest
import torch

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("ddp_cases", os.path.join(ROOT, "tests", "ddp_cases.py"))
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def ddp_run(request, tmp_path_factory):
    world = request.param
    out = tmp_path_factory.mktemp(f"ddp{world}")
    r = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(world),
                        os.path.join(ROOT, "tests", "ddp_cases.py"), str(out)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return world, [ember.load(out / f"rank{k}.pt") for k in range(world)]


def assert_close(a, b, what):
    if a is None or b is None:
        assert a is None and b is None, what
        return
    assert a.dtype == b.dtype == ember.float64, what
    assert (a - b).abs().max().item() <= 1e-12, what


@pytest.mark.timeout(150)
@pytest.mark.parametrize("case", list(cases.CASES))
def test_matches_single_process_training(ddp_run, case):
    world, results = ddp_run
    expected = cases.reference(case, world)
    for rank, result in enumerate(results):
        got = result[case]
        for step in range(cases.STEPS):
            for kind in ("grads", "params"):
                assert got[step][kind].keys() == expected[step][kind].keys()
                for name in expected[step][kind]:
                    assert_close(got[step][kind][name], expected[step][kind][name], (rank, step, kind, name))
    if case == "unused":
        assert all(r[case][-1]["grads"]["never.weight"] is None for r in results)  # unused everywhere: no grad
        assert expected[-1]["grads"]["sometimes.weight"] is not None
    if case == "buffers":
        # rank 0's buffers are broadcast before each forward: after the last one every
        # rank has updated them from rank 0's with its own shard; rank 0's are the reference's
        for name, value in expected[-1]["buffers"].items():
            if value.is_floating_point():
                assert_close(results[0][case][-1]["buffers"][name], value, name)
            else:
                assert results[0][case][-1]["buffers"][name].item() == value.item() == cases.STEPS
        assert not ember.equal(results[1][case][-1]["buffers"]["norm.running_mean"],
                               results[0][case][-1]["buffers"]["norm.running_mean"])


@pytest.mark.timeout(150)
def test_a_group_without_rank_0(ddp_run):
    world, results = ddp_run
    if world != 3:
        pytest.skip("needs 3 ranks")
    expected = cases.reference("plain", 2, seed=101)  # the group's first member, global rank 1, broadcasts
    for r in results[1:]:
        for step in range(cases.STEPS):
            for kind in ("grads", "params"):
                for name in expected[step][kind]:
                    assert_close(r["subgroup"][step][kind][name], expected[step][kind][name], (step, kind, name))
    assert "subgroup" not in results[0]


@pytest.mark.timeout(150)
def test_unused_parameter_without_find_unused_is_torchs_error(ddp_run):
    world, results = ddp_run
    for rank, r in enumerate(results):
        msg = r["unused_error"]
        assert msg.startswith("Expected to have finished reduction in the prior iteration before starting a new one.")
        assert msg.endswith(f"Parameter indices which did not receive grad for rank {rank}: 4 5 6 7")


@pytest.mark.timeout(150)
def test_state_dict_keys_are_torchs(ddp_run):
    world, results = ddp_run
    tnet = torch.nn.Module()
    tnet.center = torch.nn.Module()
    tnet.center.register_buffer("running_mean", torch.zeros(4))
    tnet.fc1, tnet.norm, tnet.fc2 = torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 3)
    expected = ["module." + k for k in tnet.state_dict()]  # what torch's DDP gives: the wrapped module's keys
    assert results[0]["state_dict_keys"] == expected
    assert results[0]["module_is"] == "Net"


def test_post_accumulate_grad_hook_as_torch():
    seen = {}
    for lib in (ember, torch):
        p = lib.ones(3, requires_grad=True)
        calls = []
        h = p.register_post_accumulate_grad_hook(lambda t: calls.append((t is p, t.grad.tolist())))
        (p * 2).sum().backward()
        h.remove()
        (p * 2).sum().backward()
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(print)
        with pytest.raises(RuntimeError, match="non-leaf"):
            (p * 2).register_post_accumulate_grad_hook(print)
        seen[lib.__name__] = (calls, p.grad.tolist())
    assert seen["ember"] == seen["torch"] == ([(True, [2.0, 2.0, 2.0])], [4.0, 4.0, 4.0])


def test_data_parallel_on_the_cpu_wraps_the_module():
    m = ember.nn.Linear(2, 3)
    dp = ember.nn.DataParallel(m)
    x = ember.randn(4, 2)
    assert ember.equal(dp(x), m(x))
    tdp = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert list(dp.state_dict()) == list(tdp.state_dict()) and dp.device_ids == tdp.device_ids == []
    from ember.nn.parallel.distributed import DistributedDataParallel
    assert ember.nn.parallel.DistributedDataParallel is DistributedDataParallel


def test_constructor_errors_without_a_process_group():
    with pytest.raises(RuntimeError, match="DistributedDataParallel is not needed when a module doesn't have any "
                                           "parameter that requires a gradient."):
        ember.nn.parallel.DistributedDataParallel(ember.nn.ReLU())
    with pytest.raises(ValueError, match=r"but got device_ids \[0\], output_device None, and module parameters "
                                         r"\{device\(type='cpu'\)\}\."):
        ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2), device_ids=[0])
