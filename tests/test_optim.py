"""Optimizers and learning-rate schedulers against torch.optim: from the same parameters
and the same gradient at every step, the parameters after each step equal torch's
(float64); state_dict layouts, param groups, hooks and errors match; schedulers produce
torch's learning rates over many steps."""
from __future__ import annotations

import importlib
import math
import pickle
import warnings

import numpy as np
import pytest

import ember
from helpers import torch

import ember.optim as eoptim
import torch.optim as toptim

SHAPES = [(3, 4), (5,), ()]


def make_params(lib, seed=0, dtype="float64"):
    gen = np.random.default_rng(seed)
    return [lib.nn.Parameter(lib.tensor(gen.standard_normal(s), dtype=getattr(lib, dtype))) for s in SHAPES]


def grads_for(step, seed=100):
    gen = np.random.default_rng(seed + step)
    return [gen.standard_normal(s) for s in SHAPES]


def run(lib, name, kwargs, steps=5, groups=None, skip=None, dtype="float64"):
    """The parameters after each of `steps` steps (gradients set by hand)."""
    params = make_params(lib, dtype=dtype)
    spec = params if groups is None else [dict(g, params=[params[i] for i in g["params"]]) for g in groups]
    opt = getattr(lib.optim, name)(spec, **kwargs)
    history = []
    for step in range(steps):
        for i, (p, g) in enumerate(zip(params, grads_for(step))):
            p.grad = None if skip == (step, i) else lib.tensor(g, dtype=getattr(lib, dtype))
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt


def assert_histories_equal(e_hist, t_hist, tol=1e-12):
    for step, (es, ts) in enumerate(zip(e_hist, t_hist)):
        for e, t in zip(es, ts):
            np.testing.assert_allclose(e, t, rtol=tol, atol=tol, err_msg=f"step {step}")


CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.02, "amsgrad": True}),
    ("Adam", {"lr": 0.02, "amsgrad": True, "maximize": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "maximize": True, "eps": 1e-4}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6, "maximize": True}),
]


@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_updates_equal_torch_step_for_step(name, kwargs):
    e_hist, e_opt = run(ember, name, kwargs)
    t_hist, t_opt = run(torch, name, kwargs)
    assert_histories_equal(e_hist, t_hist)


@pytest.mark.parametrize("name, kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01}),
                                          ("RMSprop", {"lr": 0.01, "centered": True}), ("Adagrad", {"lr": 0.1})])
def test_float32_updates(name, kwargs):
    e_hist, _ = run(ember, name, kwargs, dtype="float32")
    t_hist, _ = run(torch, name, kwargs, dtype="float32")
    assert_histories_equal(e_hist, t_hist, tol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_param_groups_and_missing_gradients(name):
    groups = [{"params": [0, 2], "lr": 0.05}, {"params": [1], "weight_decay": 0.2}]
    kwargs = {"lr": 0.01} if name != "SGD" else {"lr": 0.01, "momentum": 0.9}
    e_hist, e_opt = run(ember, name, kwargs, groups=groups, skip=(2, 0))
    t_hist, t_opt = run(torch, name, kwargs, groups=groups, skip=(2, 0))
    assert_histories_equal(e_hist, t_hist)
    assert [sorted(g) for g in e_opt.param_groups] == [sorted(g) for g in t_opt.param_groups]
    assert [{k: v for k, v in g.items() if k != "params"} for g in e_opt.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in t_opt.param_groups]


def describe_state_dict(sd):
    """A state_dict with tensors replaced by (dtype, shape, values)."""
    def walk(v):
        if isinstance(v, (ember.Tensor, torch.Tensor)):
            return ("tensor", repr(v.dtype).split(".")[1], tuple(v.shape), np.round(v.detach().double().numpy(), 10)
                    .tolist())
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(walk(x) for x in v)
        return v
    return walk(sd)


@pytest.mark.parametrize("name, kwargs", CONFIGS[::2], ids=[f"{n}-{k}" for n, k in CONFIGS[::2]])
def test_state_dict_layout_equals_torch(name, kwargs):
    _, e_opt = run(ember, name, kwargs, steps=2)
    _, t_opt = run(torch, name, kwargs, steps=2)
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert list(e_sd) == list(t_sd) == ["state", "param_groups"]
    assert [list(s) for s in e_sd["state"].values()] == [list(s) for s in t_sd["state"].values()]
    assert describe_state_dict(e_sd) == describe_state_dict(t_sd)


def test_state_dict_resume_continues_identically():
    kwargs = {"lr": 0.01, "amsgrad": True}
    full, _ = run(ember, "Adam", kwargs, steps=6)
    params = make_params(ember)
    opt = eoptim.Adam(params, **kwargs)
    for step in range(3):
        for p, g in zip(params, grads_for(step)):
            p.grad = ember.tensor(g, dtype=ember.float64)
        opt.step()
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    fresh = eoptim.Adam(params, lr=0.5)  # lr comes back from the state_dict
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == 0.01 and fresh.param_groups[0]["params"][0] is params[0]
    for step in range(3, 6):
        for p, g in zip(params, grads_for(step)):
            p.grad = ember.tensor(g, dtype=ember.float64)
        fresh.step()
    for p, expected in zip(params, full[-1]):
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


def test_load_state_dict_from_torch_format_and_dtype_cast():
    _, t_opt = run(torch, "Adam", {"lr": 0.01}, steps=2)
    t_sd = t_opt.state_dict()

    def convert(v):
        if isinstance(v, torch.Tensor):
            return ember.tensor(v.numpy())
        if isinstance(v, dict):
            return {k: convert(x) for k, x in v.items()}
        return v

    params = make_params(ember, dtype="float32")
    opt = eoptim.Adam(params)
    opt.load_state_dict(convert(t_sd))
    state = opt.state[params[0]]
    assert state["exp_avg"].dtype == ember.float32  # cast to the parameter's dtype
    assert state["step"].dtype == ember.float32 and state["step"].item() == 2.0
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that doesn't match the size "
                                         "of optimizer's group"):
        eoptim.Adam(params[:2]).load_state_dict(opt.state_dict())


def test_zero_grad_closure_and_repr():
    for lib in (ember, torch):
        params = make_params(lib)
        opt = lib.optim.SGD(params, lr=0.1)
        for p in params:
            p.grad = lib.ones(p.shape, dtype=lib.float64)
        opt.zero_grad(set_to_none=False)
        assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in params)
        opt.zero_grad()
        assert all(p.grad is None for p in params)

        calls = []

        def closure():
            calls.append(lib.is_grad_enabled())
            opt.zero_grad()
            loss = sum((p * p).sum() for p in params)
            loss.backward()
            return loss

        with lib.no_grad():
            loss = opt.step(closure)
        assert calls == [True] and loss.item() > 0
    e_opt = eoptim.Adam(make_params(ember), lr=0.01)
    t_opt = toptim.Adam(make_params(torch), lr=0.01)
    assert repr(e_opt) == repr(t_opt)
    assert repr(eoptim.SGD([{"params": make_params(ember)[:1]}, {"params": make_params(ember)[1:], "lr": 1}],
                           lr=0.5)) == \
        repr(toptim.SGD([{"params": make_params(torch)[:1]}, {"params": make_params(torch)[1:], "lr": 1}], lr=0.5))


def test_named_parameters_in_groups():
    for lib in (ember, torch):
        net = lib.nn.Linear(2, 2)
        opt = lib.optim.SGD(net.named_parameters(), lr=0.1)
        assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
        assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
        with pytest.raises(ValueError, match="all optimizer param groups should be with/without names"):
            opt.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))]})


def errors_of(make):
    """(type, message) of what make(lib) raises, for each library."""
    out = []
    for lib in (torch, ember):
        try:
            make(lib)
        except Exception as exc:
            out.append((type(exc).__name__, str(exc).replace("ember", "torch")))
        else:
            out.append(None)
    return out


@pytest.mark.parametrize("case", [
    lambda lib: lib.optim.SGD(lib.nn.Parameter(lib.ones(1))),
    lambda lib: lib.optim.SGD([]),
    lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True) * 2]),
    lambda lib: lib.optim.SGD([1.0]),
    lambda lib: lib.optim.SGD([{"params": {lib.nn.Parameter(lib.ones(1))}}]),
    lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=-1),
    lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], momentum=-1),
    lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], weight_decay=-1),
    lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], nesterov=True),
    lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], momentum=0.9, dampening=0.1, nesterov=True),
    lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], lr=-0.1),
    lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], eps=-1),
    lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], betas=(1.0, 0.9)),
    lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], betas=(0.9, -0.1)),
    lambda lib: lib.optim.AdamW([lib.nn.Parameter(lib.ones(1))], weight_decay=-1),
    lambda lib: lib.optim.RMSprop([lib.nn.Parameter(lib.ones(1))], alpha=-1),
    lambda lib: lib.optim.RMSprop([lib.nn.Parameter(lib.ones(1))], momentum=-1),
    lambda lib: lib.optim.Adagrad([lib.nn.Parameter(lib.ones(1))], lr_decay=-1),
    lambda lib: lib.optim.Adagrad([lib.nn.Parameter(lib.ones(1))], initial_accumulator_value=-1),
    lambda lib: lib.optim.Adagrad([lib.nn.Parameter(lib.ones(1))], eps=-1),
    lambda lib: (lambda p: lib.optim.SGD([{"params": [p]}, {"params": [p]}]))(lib.nn.Parameter(lib.ones(1))),
    lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))]).add_param_group([1]),
    lambda lib: lib.optim.SGD([("a", lib.nn.Parameter(lib.ones(1))), lib.nn.Parameter(lib.ones(1))]),
])
def test_construction_errors(case):
    t_err, e_err = errors_of(case)
    assert t_err is not None and e_err == t_err


def test_duplicate_parameters_warn():
    p = ember.nn.Parameter(ember.ones(1))
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate parameters"):
        eoptim.SGD([p, p], lr=0.1)


def test_required_lr_and_defaults():
    class Plain(eoptim.Optimizer):
        def __init__(self, params, lr=eoptim.optimizer.required):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            return "stepped"

    with pytest.raises(ValueError, match="parameter group didn't specify a value of required optimization "
                                         "parameter lr"):
        Plain([ember.nn.Parameter(ember.ones(1))])
    assert Plain([{"params": [ember.nn.Parameter(ember.ones(1))], "lr": 1.0}]).step() == "stepped"


def test_step_hooks_order():
    log = {}
    for lib in (torch, ember):
        seen = log[lib.__name__] = []
        p = lib.nn.Parameter(lib.ones(1))
        p.grad = lib.ones(1)
        opt = lib.optim.SGD([p], lr=0.1)
        module = importlib.import_module(lib.__name__ + ".optim.optimizer")
        handles = [module.register_optimizer_step_pre_hook(lambda o, a, k: seen.append("global pre")),
                   module.register_optimizer_step_post_hook(lambda o, a, k: seen.append("global post")),
                   opt.register_step_pre_hook(lambda o, a, k: seen.append("pre")),
                   opt.register_step_post_hook(lambda o, a, k: seen.append(("post", round(p.item(), 6))))]
        opt.step()
        for h in handles:
            h.remove()
        opt.step()
        hook = opt.register_step_pre_hook(lambda o, a, k: 5)
        try:
            opt.step()
        except RuntimeError:
            seen.append("bad pre hook result")
        hook.remove()
    assert log["ember"] == log["torch"]


def test_step_hooks_run_once_for_a_subclass_calling_super():
    class Logged(eoptim.SGD):
        def step(self, closure=None):
            self.calls = getattr(self, "calls", 0) + 1
            return super().step(closure)

    p = ember.nn.Parameter(ember.ones(1))
    p.grad = ember.ones(1)
    eoptim.SGD([ember.nn.Parameter(ember.ones(1))])  # SGD's own step is hooked as well
    opt = Logged([p], lr=0.5)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: seen.append("post"))
    opt.step()
    assert seen == ["pre", "post"] and opt.calls == 1 and p.item() == 0.5


def test_state_dict_hooks():
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.1)
        seen = []
        opt.register_state_dict_pre_hook(lambda o: seen.append("pre"))
        opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
        opt.register_load_state_dict_pre_hook(lambda o, sd: seen.append("load pre"))
        opt.register_load_state_dict_post_hook(lambda o: seen.append("load post"))
        sd = opt.state_dict()
        opt.load_state_dict(sd)
        assert sd["extra"] == 1 and seen == ["pre", "load pre", "load post"]


def test_optimizer_trains_a_model():
    """A small regression fit: the loss falls, and matches torch's run from the same weights."""
    gen = np.random.default_rng(3)
    x = gen.standard_normal((64, 4))
    y = x @ np.array([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    losses = {}
    t_net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    init = {k: v.detach().numpy().copy() for k, v in t_net.state_dict().items()}
    for lib in (torch, ember):
        net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1)).double()
        net.load_state_dict({k: lib.tensor(v) for k, v in init.items()})
        opt = lib.optim.Adam(net.parameters(), lr=0.05)
        sched = lib.optim.lr_scheduler.StepLR(opt, 10, 0.5)
        xs, ys = lib.tensor(x), lib.tensor(y)
        history = []
        for _ in range(30):
            opt.zero_grad()
            loss = ((net(xs) - ys) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
            history.append(loss.item())
        losses[lib.__name__] = history
    assert losses["ember"][-1] < 0.2 * losses["ember"][0]
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-9)


# ---- schedulers ----

def lr_trace(lib, make, steps=30, groups=2, metrics=None):
    params = [lib.nn.Parameter(lib.ones(1)) for _ in range(groups)]
    opt = lib.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)], lr=0.1,
                        momentum=0.9)
    sched = make(lib.optim.lr_scheduler, opt)
    trace = [sched.get_last_lr()]
    momenta = [[g["momentum"] for g in opt.param_groups]]
    for step in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[step])
        trace.append(sched.get_last_lr())
        momenta.append([g["momentum"] for g in opt.param_groups])
    return trace, momenta, sched


SCHEDULERS = {
    "StepLR": lambda L, o: L.StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=6),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "LambdaLR": lambda L, o: L.LambdaLR(o, lr_lambda=lambda e: 1 / (1 + e)),
    "LambdaLR-per-group": lambda L, o: L.LambdaLR(o, lr_lambda=[lambda e: 0.9**e, lambda e: 1 + 0.1 * e]),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lr_lambda=lambda e: 0.95),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=8),
    "LinearLR-default": lambda L, o: L.LinearLR(o),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=12, power=2.0),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=30),
    "OneCycleLR-linear-3phase": lambda L, o: L.OneCycleLR(o, max_lr=0.5, epochs=3, steps_per_epoch=10,
                                                          anneal_strategy="linear", three_phase=True,
                                                          pct_start=0.25),
    "OneCycleLR-no-momentum": lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=40, cycle_momentum=False,
                                                        div_factor=10.0, final_div_factor=100.0),
    "SequentialLR": lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=5), L.ExponentialLR(o, 0.9),
                                                    L.StepLR(o, 3)], milestones=[5, 15]),
    "SequentialLR-cosine": lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=3),
                                                           L.CosineAnnealingLR(o, T_max=10)], milestones=[4]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler([L.ExponentialLR(o, 0.9), L.StepLR(o, 5, 0.5)]),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.01),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_rates_equal_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_trace, e_mom, e_sched = lr_trace(ember, SCHEDULERS[name])
        t_trace, t_mom, t_sched = lr_trace(torch, SCHEDULERS[name])
    np.testing.assert_allclose(e_trace, t_trace, rtol=1e-14, atol=0)
    np.testing.assert_allclose(e_mom, t_mom, rtol=1e-14, atol=0)
    e_state, t_state = e_sched.state_dict(), t_sched.state_dict()
    assert sorted(e_state) == sorted(t_state)


def test_reduce_lr_on_plateau():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7,
               0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]
    cases = [dict(patience=2), dict(mode="max", factor=0.5, patience=1, threshold_mode="abs", threshold=0.01),
             dict(patience=1, cooldown=2, min_lr=[0.05, 0.01]), dict(patience=0, min_lr=0.02, eps=1e-3)]
    for kwargs in cases:
        e_trace, _, e_sched = lr_trace(ember, lambda L, o: L.ReduceLROnPlateau(o, **kwargs), metrics=metrics)
        t_trace, _, t_sched = lr_trace(torch, lambda L, o: L.ReduceLROnPlateau(o, **kwargs), metrics=metrics)
        assert e_trace == t_trace, kwargs
        assert list(e_sched.state_dict()) == list(t_sched.state_dict())
        assert e_sched.state_dict() == t_sched.state_dict()


def test_scheduler_state_dict_round_trip():
    trace, _, sched = lr_trace(ember, SCHEDULERS["SequentialLR"], steps=8)
    state = pickle.loads(pickle.dumps(sched.state_dict()))
    _, _, fresh = lr_trace(ember, SCHEDULERS["SequentialLR"], steps=0)
    fresh.load_state_dict(state)
    assert fresh.last_epoch == sched.last_epoch and fresh.get_last_lr() == sched.get_last_lr()
    assert fresh._schedulers[1].last_epoch == sched._schedulers[1].last_epoch

    class Factor:
        def __init__(self):
            self.k = 0.5

        def __call__(self, epoch):
            return self.k ** epoch

    opt = eoptim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    lam = eoptim.lr_scheduler.LambdaLR(opt, [Factor()])
    state = lam.state_dict()
    assert state["lr_lambdas"] == [{"k": 0.5}]
    lam.lr_lambdas[0].k = 0.1
    lam.load_state_dict(state)
    assert lam.lr_lambdas[0].k == 0.5
    assert eoptim.lr_scheduler.LambdaLR(opt, lambda e: 1.0).state_dict()["lr_lambdas"] == [None]


def test_scheduler_warnings_and_errors():
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
            sched.step()
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            sched.step(4)
        assert sched.get_last_lr() == [1.0 * 0.1 ** 2]  # the closed form at epoch 4
        with pytest.raises(TypeError, match="int is not an Optimizer"):
            lib.optim.lr_scheduler.StepLR(3, 2)
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
            lib.optim.lr_scheduler.StepLR(lib.optim.SGD([lib.nn.Parameter(lib.ones(1))]), 2, last_epoch=3)

    def make_errors(L, opt):
        return [lambda: L.LinearLR(opt, start_factor=0), lambda: L.LinearLR(opt, end_factor=2),
                lambda: L.ConstantLR(opt, factor=2), lambda: L.LambdaLR(opt, [lambda e: 1, lambda e: 1]),
                lambda: L.OneCycleLR(opt, 1.0), lambda: L.OneCycleLR(opt, 1.0, total_steps=0),
                lambda: L.OneCycleLR(opt, 1.0, epochs=0, steps_per_epoch=2),
                lambda: L.OneCycleLR(opt, 1.0, total_steps=5, pct_start=1),
                lambda: L.OneCycleLR(opt, 1.0, total_steps=5, anneal_strategy="step"),
                lambda: L.OneCycleLR(opt, [1.0, 2.0], total_steps=5),
                lambda: L.ReduceLROnPlateau(opt, factor=1.0), lambda: L.ReduceLROnPlateau(opt, mode="up"),
                lambda: L.ReduceLROnPlateau(opt, threshold_mode="pct"), lambda: L.ReduceLROnPlateau(opt, min_lr=[1, 2]),
                lambda: L.SequentialLR(opt, [], []), lambda: L.SequentialLR(opt, [L.StepLR(opt, 2)], [3]),
                lambda: L.SequentialLR(opt, [L.ReduceLROnPlateau(opt)], []),
                lambda: L.CosineAnnealingWarmRestarts(opt, T_0=0)]

    results = {}
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0, momentum=0.9)
        out = []
        for make in make_errors(lib.optim.lr_scheduler, opt):
            try:
                make()
                out.append(None)
            except Exception as exc:
                out.append((type(exc).__name__, str(exc)))
        results[lib.__name__] = out
    assert results["ember"] == results["torch"] and None not in results["ember"]


def test_one_cycle_with_adam_cycles_beta1_and_stops_at_total_steps():
    traces = {}
    for lib in (torch, ember):
        opt = lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=10)
        betas = []
        for _ in range(10):
            opt.step()
            sched.step()
            betas.append(opt.param_groups[0]["betas"])
        with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of total steps is 10"):
            sched.step()
        traces[lib.__name__] = betas
    np.testing.assert_allclose(traces["ember"], traces["torch"], rtol=1e-14)


def test_cosine_annealing_resumed_from_epoch():
    out = {}
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
        opt.param_groups[0]["initial_lr"] = 1.0
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, last_epoch=3)
        rates = [sched.get_last_lr()[0]]
        for _ in range(5):
            opt.step()
            sched.step()
            rates.append(sched.get_last_lr()[0])
        out[lib.__name__] = rates
    np.testing.assert_allclose(out["ember"], out["torch"], rtol=1e-14)
    assert not math.isnan(out["ember"][-1])
