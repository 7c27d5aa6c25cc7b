"""nn.Module, Parameter and the containers against torch.nn: registration, hooks (order,
replacement, removal), state_dict/load_state_dict, traversal, conversions, printing,
copying and pickling. Most tests run one scenario with each library and compare what it
observed; messages are compared with ember's names mapped to torch's."""
from __future__ import annotations

import copy
import pickle
import warnings
from collections import OrderedDict

import pytest

import ember
from helpers import torch

import ember.nn as enn
import torch.nn as tnn

LIBS = {"torch": torch, "ember": ember}


def nn_of(lib):
    return lib.nn


def normalized(value):
    """value with ember's names spelled as torch's, tensors as lists, errors as (type, message)."""
    if isinstance(value, BaseException):
        return (type(value).__name__, normalized(str(value)))
    if isinstance(value, str):
        return value.replace("ember.", "torch.").replace("ember", "torch")
    if isinstance(value, (torch.Size, ember.Size)):
        return ("Size", tuple(value))
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return ("tensor", type(value).__name__, value.tolist())
    if isinstance(value, (list, tuple)):
        return type(value)(normalized(v) for v in value)
    if isinstance(value, dict):
        return {normalized(k): normalized(v) for k, v in value.items()}
    return value


def close(a, b, rel=1e-9) -> bool:
    """Equal, except that floats may differ in their last bits."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= rel * max(abs(a), abs(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(close(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], rel) for k in a)
    return a == b


def same(scenario):
    """Runs scenario(lib) for torch and ember; what each returns (or raises) must match."""
    results = {}
    for name, lib in LIBS.items():
        try:
            results[name] = normalized(scenario(lib))
        except Exception as exc:  # the scenario's own assertions fail loudly below
            results[name] = normalized(exc)
    assert close(results["ember"], results["torch"]), f"\nember: {results['ember']}\ntorch: {results['torch']}"
    return results["ember"]


def raised(fn):
    try:
        fn()
    except Exception as exc:
        return exc
    return "no error"


# ---- module classes at module level, so that they pickle ----

def make_net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.act = nn.ReLU()
            self.seq = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Dropout(0.1))
            self.ml = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
            self.md = nn.ModuleDict({"a": nn.Tanh(), "b": nn.Embedding(5, 3, padding_idx=0)})
            self.pl = nn.ParameterList([nn.Parameter(lib.zeros(2)), lib.ones(3, 4)])
            self.pd = nn.ParameterDict({"x": nn.Parameter(lib.zeros(2))})
            self.register_buffer("rm", lib.zeros(3))
            self.register_buffer("tmp", lib.zeros(3), persistent=False)
            self.shared = self.fc1

        def forward(self, x):
            return self.seq(self.act(self.fc1(x)))

    return Net()


class EmberPicklable(enn.Module):
    def __init__(self):
        super().__init__()
        self.lin = enn.Linear(3, 2)
        self.alias = self.lin
        self.register_buffer("steps", ember.tensor(3))
        self.note = "kept"

    def forward(self, x):
        return self.lin(x)


def copy_weights(src, dst):
    """torch module src's parameters and buffers into ember module dst, through numpy."""
    dst.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


# ---- Parameter ----

def test_parameter_basics():
    def scenario(lib):
        data = lib.arange(6.).view(2, 3)
        p = lib.nn.Parameter(data)
        frozen = lib.nn.Parameter(lib.ones(2), requires_grad=False)
        empty = lib.nn.Parameter()
        return [isinstance(p, lib.Tensor), p.requires_grad, frozen.requires_grad, p.is_leaf, repr(p), repr(frozen),
                repr(lib.nn.Parameter(lib.ones(2, dtype=lib.float64))), tuple(empty.shape),
                type(p + 1).__name__, type(p.data).__name__, type(p.detach()).__name__,
                p.data_ptr() == data.data_ptr()]
    same(scenario)


def test_parameter_deepcopy_and_pickle():
    p = enn.Parameter(ember.arange(4.), requires_grad=False)
    q = copy.deepcopy(p)
    assert type(q) is enn.Parameter and q.requires_grad is False and q.tolist() == p.tolist()
    assert q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(enn.Parameter(ember.arange(3.))))
    assert type(r) is enn.Parameter and r.requires_grad and r.tolist() == [0.0, 1.0, 2.0]
    memo_a = enn.Parameter(ember.ones(1))
    pair = copy.deepcopy([memo_a, memo_a])
    assert pair[0] is pair[1]


def test_buffer_class():
    def scenario(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Buffer(lib.ones(2))
                self.b = lib.nn.Buffer(lib.zeros(1), persistent=False)

        m = M()
        return [isinstance(m.a, lib.nn.Buffer), isinstance(lib.ones(1), lib.nn.Buffer), list(m.state_dict()),
                [n for n, _ in m.named_buffers()]]
    same(scenario)


# ---- registration ----

def test_attribute_registration():
    def scenario(lib):
        nn = lib.nn
        m = nn.Module()
        m.w = nn.Parameter(lib.ones(2))
        m.sub = nn.Linear(1, 1)
        m.register_buffer("buf", lib.zeros(1))
        m.plain = 3
        out = [list(m._parameters), list(m._modules), list(m._buffers), "plain" in m.__dict__]
        m.w = None  # stays registered, as None
        out.append((list(m._parameters), m.w))
        m.buf = lib.ones(2)  # a tensor assigned to a buffer name replaces the buffer
        out.append(m.buf.tolist())
        m.sub = nn.Parameter(lib.ones(1))  # a Parameter under a module's name: now a parameter
        out.append((list(m._parameters), list(m._modules)))
        del m.sub, m.buf, m.plain
        out.append((list(m._parameters), list(m._buffers), hasattr(m, "plain")))
        m.register_parameter("none", None)
        out.append([n for n, _ in m.named_parameters()])
        return out
    same(scenario)


@pytest.mark.parametrize("case", [
    "param_before_init", "module_before_init", "buffer_before_init", "tensor_as_param", "int_as_module",
    "bad_buffer", "buffer_dot", "buffer_empty", "buffer_exists", "buffer_name_type", "param_dot", "param_empty",
    "param_exists", "param_not_parameter", "param_non_leaf", "module_dot", "module_empty", "module_exists",
    "module_not_module", "module_name_type", "no_forward", "bad_init_kwargs", "bad_init_args", "missing_attr",
    "buffer_via_setattr_type",
])
def test_registration_errors(case):
    def scenario(lib):
        nn = lib.nn

        class Early(nn.Module):
            def __init__(self, what):
                if what == "param":
                    self.p = nn.Parameter(lib.ones(1))
                elif what == "module":
                    self.m = nn.Linear(1, 1)
                else:
                    self.register_buffer("b", lib.ones(1))

        m = nn.Module()
        m.w = nn.Parameter(lib.ones(1))
        m.sub = nn.Identity()
        m.register_buffer("buf", lib.ones(1))
        m.attr = 1
        actions = {
            "param_before_init": lambda: Early("param"),
            "module_before_init": lambda: Early("module"),
            "buffer_before_init": lambda: Early("buffer"),
            "tensor_as_param": lambda: setattr(m, "w", lib.ones(1)),
            "int_as_module": lambda: setattr(m, "sub", 3),
            "bad_buffer": lambda: m.register_buffer("x", [1.0]),
            "buffer_dot": lambda: m.register_buffer("a.b", lib.ones(1)),
            "buffer_empty": lambda: m.register_buffer("", lib.ones(1)),
            "buffer_exists": lambda: m.register_buffer("attr", lib.ones(1)),
            "buffer_name_type": lambda: m.register_buffer(3, lib.ones(1)),
            "param_dot": lambda: m.register_parameter("a.b", nn.Parameter(lib.ones(1))),
            "param_empty": lambda: m.register_parameter("", nn.Parameter(lib.ones(1))),
            "param_exists": lambda: m.register_parameter("attr", nn.Parameter(lib.ones(1))),
            "param_not_parameter": lambda: m.register_parameter("q", lib.ones(1)),
            "param_non_leaf": lambda: m.register_parameter("q", nn.Parameter(lib.ones(1)) * 2),
            "module_dot": lambda: m.add_module("a.b", nn.Identity()),
            "module_empty": lambda: m.add_module("", nn.Identity()),
            "module_exists": lambda: m.add_module("attr", nn.Identity()),
            "module_not_module": lambda: m.add_module("x", 3),
            "module_name_type": lambda: m.add_module(3, nn.Identity()),
            "no_forward": lambda: m(1),
            "bad_init_kwargs": lambda: nn.Module(foo=1),
            "bad_init_args": lambda: nn.Module(1, 2),
            "missing_attr": lambda: m.nothing,
            "buffer_via_setattr_type": lambda: setattr(m, "buf", 3),
        }
        return raised(actions[case])
    result = same(scenario)
    assert result != "no error"


def test_get_submodule_parameter_buffer():
    def scenario(lib):
        nn = lib.nn
        net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 3)))
        net[1].register_buffer("stat", lib.zeros(1))
        out = [repr(net.get_submodule("1.0")), net.get_submodule("") is net,
               tuple(net.get_parameter("1.0.bias").shape), net.get_buffer("1.stat").tolist()]
        for action in (lambda: net.get_submodule("2"), lambda: net.get_submodule("0.weight"),
                       lambda: net.get_parameter("0.nope"), lambda: net.get_parameter("1.stat"),
                       lambda: net.get_buffer("0.weight"), lambda: net.get_buffer("0.zz")):
            out.append(raised(action))
        net.set_submodule("1.0", nn.Identity())
        out.append(repr(net))
        out.append(raised(lambda: net.set_submodule("", nn.Identity())))
        return out
    same(scenario)


# ---- traversal ----

def test_named_members_and_sharing():
    def scenario(lib):
        net = make_net(lib)
        return [[n for n, _ in net.named_parameters()], [n for n, _ in net.named_parameters(remove_duplicate=False)],
                [n for n, _ in net.named_parameters(prefix="top", recurse=False)],
                [n for n, _ in net.named_parameters(recurse=False)], len(list(net.parameters())),
                [n for n, _ in net.named_buffers()], [n for n, _ in net.named_buffers(prefix="p")],
                [n for n, _ in net.named_children()], len(list(net.children())),
                [n for n, _ in net.named_modules()], [n for n, _ in net.named_modules(prefix="root")],
                [n for n, _ in net.named_modules(remove_duplicate=False)], len(list(net.modules())),
                [tuple(p.shape) for p in net.parameters()]]
    same(scenario)


def test_dir_lists_members():
    net = make_net(ember)
    names = dir(net)
    assert {"fc1", "rm", "tmp", "forward", "training", "state_dict"} <= set(names)
    assert names == sorted(names)
    seq_names = dir(ember.nn.Sequential(ember.nn.ReLU()))
    assert "0" not in seq_names and "append" in seq_names


# ---- calling, forward hooks ----

def test_forward_hook_order_and_replacement():
    def scenario(lib):
        nn = lib.nn
        log = []
        inner = nn.Linear(2, 2)
        outer = nn.Sequential(inner)
        outer.register_forward_pre_hook(lambda m, a: log.append(("outer pre", type(m).__name__, len(a))))
        inner.register_forward_pre_hook(lambda m, a: log.append(("inner pre", a[0].tolist())) or (a[0] * 2,))
        inner.register_forward_pre_hook(lambda m, a: log.append(("inner pre 2", a[0].tolist())))
        inner.register_forward_pre_hook(lambda m, a: log.append("prepended"), prepend=True)
        inner.register_forward_hook(lambda m, a, out: log.append(("inner fwd", a[0].tolist())) or out * 0 + 7)
        inner.register_forward_hook(lambda m, a, out: log.append(("inner fwd 2", out.tolist())))
        outer.register_forward_hook(lambda m, a, out: log.append(("outer fwd", out.tolist())))
        inner.register_forward_hook(lambda m, a, out: log.append("fwd prepended"), prepend=True)
        result = outer(lib.ones(1, 2))
        return log, result.tolist()
    same(scenario)


def test_forward_hooks_with_kwargs():
    def scenario(lib):
        nn = lib.nn
        log = []

        class Scale(nn.Module):
            def forward(self, x, *, factor=1.0):
                return x * factor

        m = Scale()

        def pre(mod, args, kwargs):
            log.append(("pre", sorted(kwargs.items())))
            return (args[0] + 1,), {"factor": kwargs["factor"] * 10}

        m.register_forward_pre_hook(pre, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("fwd", sorted(kwargs), out.tolist())),
                                with_kwargs=True)
        out = m(lib.ones(2), factor=2.0)
        bad = m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        err = raised(lambda: m(lib.ones(2), factor=1.0))
        bad.remove()
        return log, out.tolist(), err
    same(scenario)


def test_forward_pre_hook_non_tuple_result_is_wrapped():
    def scenario(lib):
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args: lib.zeros(1))
        return m(lib.ones(3)).tolist()
    same(scenario)


def test_always_call_hooks_run_when_forward_raises():
    def scenario(lib):
        nn = lib.nn
        log = []

        class Boom(nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, a, out: log.append("normal"))
        m.register_forward_hook(lambda mod, a, out: log.append(("always", out)), always_call=True)
        err = raised(lambda: m(lib.ones(1)))
        return log, err
    same(scenario)


def test_hook_handles_remove_and_context_manager():
    def scenario(lib):
        log = []
        m = lib.nn.Identity()
        h1 = m.register_forward_hook(lambda *a: log.append(1))
        h2 = m.register_forward_pre_hook(lambda *a: log.append(2), with_kwargs=True)
        m(lib.ones(1))
        h1.remove()
        h1.remove()  # twice is fine
        m(lib.ones(1))
        h2.remove()
        with m.register_forward_hook(lambda *a: log.append(3)):
            m(lib.ones(1))
        m(lib.ones(1))
        return log, len(m._forward_hooks), len(m._forward_pre_hooks), len(m._forward_pre_hooks_with_kwargs)
    same(scenario)


def test_handle_ids_increase():
    from ember.utils.hooks import RemovableHandle

    hooks = OrderedDict()
    a, b = RemovableHandle(hooks), RemovableHandle(hooks)
    assert b.id == a.id + 1
    hooks[a.id] = print
    restored = pickle.loads(pickle.dumps(a))
    assert restored.id == a.id and RemovableHandle.next_id > a.id


def test_global_forward_hooks():
    def scenario(lib):
        mm = lib.nn.modules.module
        log = []
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, a: log.append("own pre"))
        m.register_forward_hook(lambda mod, a, out: log.append("own fwd"))
        handles = [mm.register_module_forward_pre_hook(lambda mod, a: log.append("global pre")),
                   mm.register_module_forward_hook(lambda mod, a, out: log.append("global fwd")),
                   mm.register_module_forward_hook(lambda mod, a, kw, out: log.append(("global kw", kw)),
                                                   with_kwargs=True)]
        try:
            m(lib.ones(1))
        finally:
            for h in handles:
                h.remove()
        m(lib.ones(1))
        return log
    same(scenario)


def test_global_registration_hooks():
    def scenario(lib):
        mm = lib.nn.modules.module
        log = []
        handles = [mm.register_module_parameter_registration_hook(lambda m, n, p: log.append(("param", n))),
                   mm.register_module_buffer_registration_hook(lambda m, n, b: log.append(("buffer", n))),
                   mm.register_module_module_registration_hook(lambda m, n, s: log.append(("module", n)))]
        try:
            lib.nn.Sequential(lib.nn.Linear(1, 1))
            m = lib.nn.Module()
            m.register_buffer("b", None)
        finally:
            for h in handles:
                h.remove()
        return log
    same(scenario)


# ---- backward hooks ----

def test_full_backward_hooks_grads_and_order():
    def scenario(lib):
        nn = lib.nn
        lib.manual_seed(0)
        first, second = nn.Linear(3, 2).double(), nn.Linear(2, 1).double()
        with lib.no_grad():
            first.weight.copy_(lib.tensor([[1., 2., 3.], [-1., 0.5, 2.]], dtype=lib.float64))
            first.bias.copy_(lib.tensor([0.1, -0.2], dtype=lib.float64))
            second.weight.copy_(lib.tensor([[0.5, -1.5]], dtype=lib.float64))
            second.bias.fill_(0.0)
        net = nn.Sequential(first, nn.Tanh(), second)
        log = []

        def bw(name):
            return lambda m, gin, gout: log.append((name, "hook", [None if g is None else g.tolist() for g in gin],
                                                    [None if g is None else g.tolist() for g in gout]))

        def pre(name):
            return lambda m, gout: log.append((name, "pre", [g.tolist() for g in gout]))

        for name, m in (("first", first), ("second", second), ("net", net)):
            m.register_full_backward_pre_hook(pre(name))
            m.register_full_backward_hook(bw(name))
        x = lib.tensor([[1., -1., 0.5], [0.2, 0.3, -0.4]], dtype=lib.float64, requires_grad=True)
        net(x).sum().backward()
        return log, x.grad.tolist(), first.weight.grad.tolist()
    same(scenario)


def test_backward_hooks_replace_gradients():
    def scenario(lib):
        nn = lib.nn
        m = nn.Linear(2, 2).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64))
        m.register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 10,))
        m.register_full_backward_hook(lambda mod, gin, gout: (gin[0] + 1,))
        x = lib.ones(1, 2, dtype=lib.float64, requires_grad=True)
        m(x).sum().backward()
        return x.grad.tolist(), m.weight.grad.tolist()
    same(scenario)


def test_backward_hook_when_no_input_requires_grad():
    def scenario(lib):
        log = []
        m = lib.nn.Linear(2, 1)
        m.register_full_backward_hook(lambda mod, gin, gout: log.append((gin, [g.shape for g in gout])))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(lib.ones(3, 2)).sum().backward()
        bad = lib.nn.Linear(2, 1)
        bad.register_full_backward_hook(lambda mod, gin, gout: (lib.ones(1),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            err = raised(lambda: bad(lib.ones(3, 2)).sum().backward())
        return log, err, [str(w.message) for w in caught]
    same(scenario)


def test_backward_hook_non_tensor_arguments():
    def scenario(lib):
        log = []

        class Mix(lib.nn.Module):
            def forward(self, x, scale, y):
                return x * scale + y

        m = Mix()
        m.register_full_backward_hook(lambda mod, gin, gout: log.append([None if g is None else g.tolist()
                                                                          for g in gin]))
        x = lib.ones(2, requires_grad=True)
        y = lib.ones(2)
        m(x, 3.0, y).sum().backward()
        return log, x.grad.tolist()
    same(scenario)


def test_backward_hooks_on_tuple_outputs_and_repeated_calls():
    def scenario(lib):
        log = []

        class Split(lib.nn.Module):
            def forward(self, x):
                return x * 2, x.sum()

        m = Split()
        m.register_full_backward_pre_hook(lambda mod, gout: log.append(("pre", [g.tolist() for g in gout])))
        m.register_full_backward_hook(lambda mod, gin, gout: log.append(("hook", [g.tolist() for g in gin])))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = m(x)
        c, d = m(a)  # the second call gets its own hook state
        (c.sum() * 3 + d + b).backward()
        return log, x.grad.tolist()
    same(scenario)


def test_backward_hook_kinds_do_not_mix():
    def scenario(lib):
        m = lib.nn.Identity()
        m.register_full_backward_hook(lambda *a: None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return raised(lambda: m.register_backward_hook(lambda *a: None))
    same(scenario)


def test_global_full_backward_hooks():
    def scenario(lib):
        mm = lib.nn.modules.module
        log = []
        m = lib.nn.Linear(2, 1)
        m.register_full_backward_hook(lambda mod, gin, gout: log.append("own"))
        handles = [mm.register_module_full_backward_hook(lambda mod, gin, gout: log.append("global")),
                   mm.register_module_full_backward_pre_hook(lambda mod, gout: log.append("global pre"))]
        try:
            m(lib.ones(1, 2, requires_grad=True)).sum().backward()
        finally:
            for h in handles:
                h.remove()
        return log
    same(scenario)


# ---- state_dict ----

def test_state_dict_contents_and_metadata():
    def scenario(lib):
        net = make_net(lib)
        sd = net.state_dict()
        kept = net.state_dict(keep_vars=True)
        prefixed = net.state_dict(prefix="model.")
        return [list(sd), [tuple(v.shape) for v in sd.values()], dict(sd._metadata), type(sd).__name__,
                [v.requires_grad for v in sd.values()], kept["fc1.weight"] is net.fc1.weight,
                sd["fc1.weight"] is net.fc1.weight, list(prefixed)[:2], list(prefixed._metadata)[:3]]
    same(scenario)


def test_state_dict_hooks():
    def scenario(lib):
        nn = lib.nn
        log = []
        m = nn.Sequential(nn.Linear(1, 1))
        m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))

        def post(mod, sd, prefix, meta):
            log.append(("post", prefix, sorted(sd)))
            sd[prefix + "extra"] = lib.zeros(1)

        m[0].register_state_dict_post_hook(post)
        m._register_state_dict_hook(lambda mod, sd, prefix, meta: OrderedDict(renamed=lib.ones(1)))
        sd = m.state_dict(keep_vars=True)
        bad = nn.Linear(1, 1)
        bad.register_state_dict_post_hook(lambda mod, sd, prefix, meta: {})
        return log, list(sd), raised(bad.state_dict), raised(lambda: bad._register_state_dict_hook(post))
    same(scenario)


def test_load_state_dict_strict_errors_and_nonstrict_result():
    def scenario(lib):
        nn = lib.nn
        net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        good = {k: v.clone() + 1 for k, v in net.state_dict().items()}
        out = [repr(net.load_state_dict(good)), net[0].bias.tolist() == good["0.bias"].tolist()]
        missing = dict(good)
        del missing["2.bias"]
        missing["2.extra"] = lib.ones(1)
        missing["9.weight"] = lib.ones(1)
        missing["0.weight"] = lib.ones(5, 5)
        out.append(raised(lambda: net.load_state_dict(missing)))
        del missing["0.weight"]
        result = net.load_state_dict(missing, strict=False)
        out += [repr(result), str(result), result.missing_keys, result.unexpected_keys, type(result).__name__]
        out.append(raised(lambda: net.load_state_dict([1, 2])))
        out.append(raised(lambda: net.load_state_dict({"0.weight": [1.0]}, strict=False)))
        return out
    same(scenario)


def test_load_state_dict_assign():
    def scenario(lib):
        nn = lib.nn
        m = nn.Linear(2, 2)
        old = m.weight
        new = {"weight": lib.full((2, 2), 3.0), "bias": lib.zeros(2)}
        m.load_state_dict(new, assign=True)
        frozen = nn.Linear(2, 2).requires_grad_(False)
        frozen.load_state_dict(new, assign=True)
        return [m.weight is old, type(m.weight).__name__, m.weight.requires_grad, m.weight.tolist(),
                m.weight.data_ptr() == new["weight"].data_ptr(), frozen.weight.requires_grad]
    same(scenario)


def test_load_state_dict_hooks_and_extra_state():
    def scenario(lib):
        nn = lib.nn
        log = []

        class WithExtra(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(1, 1)
                self.value = 0

            def get_extra_state(self):
                return {"value": self.value}

            def set_extra_state(self, state):
                self.value = state["value"]

        src, dst = WithExtra(), WithExtra()
        src.value = 42
        dst.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, missing, unexpected, errors: log.append(("pre", prefix, strict)))

        def post(mod, keys):
            log.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.unexpected_keys.clear()

        dst.register_load_state_dict_post_hook(post)
        sd = src.state_dict()
        extra = dict(sd)
        extra["lin.junk"] = lib.ones(1)
        dst.load_state_dict(extra)  # the post hook cleared the unexpected key
        no_extra = dict(sd)
        del no_extra["_extra_state"]
        plain = nn.Linear(1, 1)
        return [list(sd), dst.value, log, raised(lambda: WithExtra().load_state_dict(no_extra)),
                raised(lambda: plain.load_state_dict({**plain.state_dict(), "_extra_state": 1}))]
    same(scenario)


def test_state_dict_round_trip_between_libraries():
    t, e = make_net(torch), make_net(ember)
    copy_weights(t, e)
    t.eval(), e.eval()
    x = torch.randn(5, 4)
    got = e(ember.tensor(x.numpy())).detach().numpy()
    want = t(x).detach().numpy()
    assert abs(got - want).max() < 1e-5
    back = tnn.Sequential(tnn.Linear(4, 8))
    back.load_state_dict({"0." + k.split(".", 1)[1]: torch.tensor(v.numpy()) for k, v in e.state_dict().items()
                          if k.startswith("fc1.")})


# ---- modes, gradients, conversions ----

def test_train_eval_requires_grad_zero_grad():
    def scenario(lib):
        net = make_net(lib)
        out = [net.training, net.eval() is net, [m.training for m in net.modules()].count(True)]
        net.train()
        out.append(all(m.training for m in net.modules()))
        out.append(raised(lambda: net.train("yes")))
        net.requires_grad_(False)
        out.append([p.requires_grad for p in net.parameters()].count(True))
        net.requires_grad_()
        net.eval()
        net(lib.ones(2, 4)).sum().backward()
        out.append([p.grad is None for p in net.parameters()])
        net.zero_grad(set_to_none=False)
        out.append([None if p.grad is None else p.grad.abs().sum().item() for p in net.parameters()])
        net.zero_grad()
        out.append([p.grad is None for p in net.parameters()])
        return out
    same(scenario)


def test_dtype_conversions():
    def scenario(lib):
        nn = lib.nn
        m = nn.Linear(2, 2)
        m.register_buffer("count", lib.tensor(3))
        m.register_buffer("scale", lib.tensor(1.5))
        out = []
        for convert in (lambda: m.double(), lambda: m.float(), lambda: m.half(), lambda: m.bfloat16(),
                        lambda: m.to(lib.float64), lambda: m.to("cpu"), lambda: m.to("cpu", lib.float32),
                        lambda: m.to(dtype=lib.float64), lambda: m.to(lib.ones(1, dtype=lib.float32)),
                        lambda: m.cpu(), lambda: m.type(lib.float64)):
            out.append(convert() is m)
            out.append([str(t.dtype) for t in (m.weight, m.bias, m.count, m.scale)])
            out.append(type(m.weight).__name__)
        out.append(raised(lambda: m.to(lib.int64)))
        fresh = nn.Linear(2, 2)
        keep = fresh.bias
        fresh.float()
        fresh.to(lib.float32)
        fresh.to("cpu")
        out.append(keep is fresh.bias)  # a same-dtype conversion keeps the Parameter objects
        return out
    same(scenario)


def test_dtype_conversion_keeps_parameter_identity():
    m = enn.Linear(2, 2)
    weight = m.weight
    m.double()
    assert m.weight is weight


def test_conversion_converts_grads():
    m = enn.Linear(2, 1)
    m(ember.ones(1, 2)).sum().backward()
    grad = m.weight.grad
    m.to("cpu")
    assert m.weight.grad is grad
    m.double()
    assert m.weight.grad.dtype == ember.float64 and m.weight.dtype == ember.float64


def test_apply_order_and_to_empty():
    def scenario(lib):
        net = make_net(lib)
        seen = []
        assert net.apply(lambda m: seen.append(type(m).__name__)) is net
        return seen, net.share_memory() is net
    same(scenario)
    m = enn.Linear(3, 2).to_empty(device="cpu")
    assert tuple(m.weight.shape) == (2, 3)


def test_apply_initializes_weights():
    net = enn.Sequential(enn.Linear(2, 2), enn.ReLU(), enn.Linear(2, 2))

    def init(m):
        if isinstance(m, enn.Linear):
            enn.init.constant_(m.weight, 0.5)

    net.apply(init)
    assert net[0].weight.tolist() == [[0.5, 0.5], [0.5, 0.5]] and net[2].weight.tolist() == [[0.5, 0.5], [0.5, 0.5]]


# ---- printing ----

def test_repr_of_a_composite_model():
    assert normalized(repr(make_net(ember))) == repr(make_net(torch))


def test_repr_extra_repr_and_module_list_runs():
    def scenario(lib):
        nn = lib.nn

        class Custom(nn.Module):
            def __init__(self, lines):
                super().__init__()
                self.lines = lines

            def extra_repr(self):
                return self.lines

        single = Custom("size=3")
        multi = Custom("a=1\nb=2")
        multi.child = nn.Linear(1, 1)
        runs = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(1, 2), nn.ReLU(), nn.ReLU(), nn.ReLU()])
        nested = nn.Sequential(OrderedDict(block=nn.Sequential(nn.Linear(1, 1), nn.ReLU())))
        return [repr(nn.Module()), repr(single), repr(multi), repr(runs), repr(nn.ModuleList()), repr(nested),
                repr(nn.ParameterList()), repr(nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.ones(1))})),
                repr(nn.ParameterList([lib.ones(2, dtype=lib.float64), "text"]))]
    same(scenario)


# ---- copying and pickling ----

def test_deepcopy_module():
    net = make_net(ember)
    twin = copy.deepcopy(net)
    assert twin.shared is twin.fc1 and twin.fc1 is not net.fc1
    assert type(twin.fc1.weight) is enn.Parameter and twin.fc1.weight.requires_grad
    assert twin.fc1.weight.data_ptr() != net.fc1.weight.data_ptr()
    assert twin.fc1.weight.tolist() == net.fc1.weight.tolist()
    assert list(twin.state_dict()) == list(net.state_dict())
    assert "tmp" in twin._non_persistent_buffers_set


def test_pickle_module():
    m = EmberPicklable()
    m.register_forward_hook(print)  # hook dicts pickle too
    back = pickle.loads(pickle.dumps(m))
    assert type(back) is EmberPicklable and back.alias is back.lin and back.note == "kept"
    assert back.lin.weight.tolist() == m.lin.weight.tolist() and type(back.lin.weight) is enn.Parameter
    assert back.steps.item() == 3 and len(back._forward_hooks) == 1
    assert back(ember.ones(1, 3)).shape == (1, 2)


# ---- containers ----

def test_sequential():
    def scenario(lib):
        nn = lib.nn
        a, b, c, d = nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity()
        s = nn.Sequential(a, b, c)
        named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
        out = [len(s), s[0] is a, s[-1] is c, type(s[1:]).__name__, list(s[1:]._modules), list(s[::-1]._modules),
               [m is n for m, n in zip(s, (a, b, c))], list(named._modules), named[1] is b,
               raised(lambda: s[3]), raised(lambda: s[-4]), raised(lambda: s["x"])]
        s[1] = d
        out.append(s[1] is d)
        s.append(b)
        s.insert(0, nn.ELU())
        s.insert(-1, nn.GELU())
        out.append(repr(s))
        out.append(raised(lambda: s.insert(9, nn.ReLU())))
        out.append(raised(lambda: s.insert(0, "x")))
        s.extend([nn.ReLU6()])
        popped = s.pop(0)
        del s[1]
        del s[-2:]
        out += [type(popped).__name__, list(s._modules), repr(s)]
        out += [repr(s + nn.Sequential(nn.Identity())), raised(lambda: s + nn.Identity()), repr(s * 2), repr(2 * s),
                raised(lambda: s * 0), raised(lambda: s * 1.5)]
        t = nn.Sequential(nn.ReLU())
        t += nn.Sequential(nn.Tanh())
        t *= 2
        out.append(repr(t))
        out.append(nn.Sequential(nn.Linear(2, 3), nn.ReLU())(lib.ones(1, 2)).shape)
        del named[0]
        out.append(list(named._modules))
        return out
    same(scenario)


def test_module_list():
    def scenario(lib):
        nn = lib.nn
        mods = [nn.ReLU(), nn.Tanh(), nn.Sigmoid()]
        ml = nn.ModuleList(mods)
        out = [len(ml), ml[0] is mods[0], ml[-1] is mods[2], type(ml[1:]).__name__, len(ml[::2]),
               raised(lambda: ml[3]), raised(lambda: ml[-4])]
        ml.append(nn.Identity())
        ml.extend([nn.ELU()])
        ml += [nn.GELU()]
        ml.insert(1, nn.ReLU6())
        ml[0] = nn.SiLU()
        out.append(repr(ml))
        out.append(type(ml.pop(1)).__name__)
        del ml[0]
        del ml[1:3]
        out += [list(ml._modules), repr(ml), repr(ml + nn.ModuleList([nn.Tanh()])),
                raised(lambda: ml.extend(3)), raised(lambda: ml(1)), [type(m).__name__ for m in ml]]
        return out
    same(scenario)


def test_module_dict():
    def scenario(lib):
        nn = lib.nn
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
        out = [list(md.keys()), len(md), "a" in md, type(md["b"]).__name__, list(md)]
        md["c"] = nn.Identity()
        md.update([("d", nn.ELU())])
        md.update(nn.ModuleDict({"e": nn.GELU()}))
        out.append(list(md.keys()))
        out.append(type(md.pop("a")).__name__)
        del md["b"]
        out += [list(md.items())[0][0], len(list(md.values())), repr(md),
                raised(lambda: md.update(3)), raised(lambda: md.update([("x",)])), raised(lambda: md.update([1]))]
        md.clear()
        out.append(len(md))
        return out
    same(scenario)


def test_parameter_list():
    def scenario(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.ones(3))])
        out = [len(pl), [type(p).__name__ for p in pl], [n for n, _ in pl.named_parameters()],
               [tuple(p.shape) for p in pl[1:]], type(pl[-1]).__name__, raised(lambda: pl[2])]
        pl.append(lib.ones(1))
        pl.extend([lib.ones(4)])
        pl += [lib.zeros(5)]
        pl[0] = lib.full((2,), 7.0)
        out += [len(pl), pl[0].tolist(), type(pl[0]).__name__, raised(lambda: pl.extend(lib.ones(2))),
                raised(lambda: pl(1)), repr(pl)]
        return out
    same(scenario)


def test_parameter_dict():
    def scenario(lib):
        nn = lib.nn
        pd = nn.ParameterDict({"b": lib.zeros(1), "a": lib.ones(2)})  # a plain dict goes in sorted
        out = [list(pd.keys()), [type(v).__name__ for v in pd.values()], [n for n, _ in pd.named_parameters()]]
        pd["c"] = lib.ones(3)
        pd.update(OrderedDict([("z", lib.ones(1)), ("y", lib.ones(1))]))
        pd.update([("x", lib.ones(1))])
        out += [list(pd), "c" in pd, pd.get("nope"), tuple(pd.get("a").shape), len(pd)]
        out.append(pd.pop("c").tolist())
        out.append(pd.popitem()[0])
        out.append(pd.setdefault("w", lib.zeros(2)).tolist())
        del pd["a"]
        out += [list(pd), list(reversed(pd)), list(pd.copy()), list(pd.fromkeys(["p", "q"])),
                raised(lambda: pd[1]), raised(lambda: pd.update(3)), raised(lambda: pd.update([("k",)])),
                raised(lambda: pd(1)), repr(pd)]
        out.append(list(pd | nn.ParameterDict({"n": lib.ones(1)})))
        pd.clear()
        out.append(len(pd))
        return out
    same(scenario)


def test_import_paths_like_torch():
    import ember.nn.functional as F
    from ember.nn import Module, Parameter
    from ember.nn.modules.module import register_module_forward_hook
    from ember.nn.utils import clip_grad_norm_

    assert ember.nn.Module is Module and Parameter is ember.nn.parameter.Parameter
    assert callable(F.relu) and callable(register_module_forward_hook) and callable(clip_grad_norm_)
    assert ember.optim.lr_scheduler.StepLR is not None


DOC_MODULES = ["ember.nn.parameter", "ember.nn.modules.module", "ember.nn.modules.container",
               "ember.nn.modules.linear", "ember.nn.modules.activation", "ember.nn.modules.dropout",
               "ember.nn.modules.flatten", "ember.nn.modules.sparse", "ember.nn.functional", "ember.nn.init",
               "ember.nn.utils.clip_grad", "ember.nn.utils.convert_parameters", "ember.optim.optimizer",
               "ember.optim.sgd", "ember.optim.adam", "ember.optim.lr_scheduler", "ember.utils.hooks",
               *(f"ember.nn._functional.{topic}" for topic in ("activation", "attention", "conv", "dropout", "embedding",
                                                                "linear", "loss", "norm", "pool", "softmax", "vision"))]


@pytest.mark.parametrize("name", DOC_MODULES)
def test_docstring_examples_run(name):
    import doctest
    import importlib

    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, globs={"ember": ember, "OrderedDict": OrderedDict,
                                                            **vars(module)}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0
