"""What PyTorch scripts touch on a CPU machine beyond tensors: ember.cuda, accelerator,
backends flags, amp (autocast, GradScaler), compile, `python -m ember.as_torch`, what
`import ember` loads and says from a source checkout, and 0-dim tensors behaving as
Python numbers. Compared with CPU torch."""
import importlib.machinery
import math
import operator
import os
import shutil
import subprocess
import sys
import textwrap
import types
import warnings

import pytest

import ember
from helpers import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def outcome(fn):
    """fn()'s result, or the type of the exception it raised."""
    try:
        return fn()
    except Exception as exc:
        return type(exc)


def warned(fn):
    """(fn()'s outcome, the categories of the warnings it issued)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(fn)
    return result, [w.category for w in caught]


def plain(value):
    """Torch and ember values made comparable: dtypes and devices by name."""
    if isinstance(value, (ember.dtype, torch.dtype)):
        return str(value).split(".")[1]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


# ---------------------------------------------------------------- cuda, accelerator, backends
CUDA_CALLS = ["is_available", "device_count", "is_initialized", "is_bf16_supported", "manual_seed",
              "manual_seed_all", "seed", "seed_all", "empty_cache", "memory_allocated", "max_memory_allocated",
              "memory_reserved", "max_memory_reserved", "synchronize", "current_device", "get_device_name",
              "get_device_capability", "get_device_properties", "init", "get_rng_state", "ipc_collect"]


@pytest.mark.skipif(ember.cuda._is_compiled(), reason="ember built with CUDA (EMBER_CUDA=1): tests/test_cuda_api.py "
                    "compares its answers without the extension with CPU torch's")
@pytest.mark.parametrize("name", CUDA_CALLS)
def test_cuda_answers_as_cpu_torch(name):
    args = (0,) if name.startswith("manual_seed") else ()
    assert outcome(lambda: getattr(ember.cuda, name)(*args)) == outcome(lambda: getattr(torch.cuda, name)(*args))


def test_accelerator():
    for lib in (ember, torch):
        assert (lib.accelerator.is_available(), lib.accelerator.device_count(),
                lib.accelerator.current_accelerator()) == (False, 0, None)


def test_backend_flags_have_torch_defaults_and_can_be_assigned():
    def flags(lib):
        b = lib.backends
        return (b.cuda.matmul.allow_tf32, b.cuda.matmul.allow_fp16_reduced_precision_reduction,
                b.cuda.matmul.allow_bf16_reduced_precision_reduction, b.cuda.is_built(), b.cudnn.enabled,
                b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32, b.cudnn.is_available(),
                b.cudnn.version(), b.mps.is_available(), b.mps.is_built(), b.cuda.flash_sdp_enabled(),
                b.cuda.math_sdp_enabled(), lib.get_float32_matmul_precision(),
                lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled())

    assert flags(ember) == flags(torch)
    cudnn = ember.backends.cudnn
    try:
        cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32 = True, True, False, False
        assert (cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32) == (True, True, False, False)
        import ember.backends.cudnn as imported

        assert imported.benchmark is True
        with cudnn.flags(enabled=True, benchmark=False):
            assert (cudnn.enabled, cudnn.benchmark) == (True, False)
        assert (cudnn.enabled, cudnn.benchmark) == (False, True)
    finally:
        cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32 = False, False, True, True
    for lib in (ember, torch):
        with pytest.raises(AttributeError, match="Unknown attribute bogus"):
            lib.backends.cuda.matmul.bogus = 1
        with pytest.raises(AttributeError):
            lib.backends.cuda.matmul.bogus


def test_tf32_flag_follows_float32_matmul_precision_as_in_torch():
    def sequence(lib):
        seen = []
        try:
            lib.backends.cuda.matmul.allow_tf32 = True
            seen.append((lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32))
            lib.set_float32_matmul_precision("medium")
            seen.append((lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32))
            seen.append(warned(lambda: lib.set_float32_matmul_precision("bogus")))
            seen.append(lib.get_float32_matmul_precision())
            lib.set_float32_matmul_precision("highest")
            seen.append((lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32))
            lib.use_deterministic_algorithms(True, warn_only=True)
            seen.append((lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled()))
        finally:
            lib.backends.cuda.matmul.allow_tf32 = False
            lib.set_float32_matmul_precision("highest")
            lib.use_deterministic_algorithms(False)
        return seen

    assert sequence(ember) == sequence(torch)


# ---------------------------------------------------------------- autocast
AUTOCAST_CASES = [dict(device_type="cpu"), dict(device_type="cpu", dtype="float32"),
                  dict(device_type="cpu", dtype="float16"), dict(device_type="cpu", dtype="float64"),
                  dict(device_type="cpu", enabled=False), dict(device_type="cuda"),
                  dict(device_type="cuda", enabled=False), dict(device_type="cuda:0"), dict(device_type="bogus")]


@pytest.mark.parametrize("case", AUTOCAST_CASES, ids=str)
def test_autocast_state_and_warnings_as_in_torch(case):
    def run(lib):
        kwargs = dict(case)
        if "dtype" in kwargs:
            kwargs["dtype"] = getattr(lib, kwargs["dtype"])

        def body():
            kind = kwargs["device_type"].split(":")[0]
            before = (lib.is_autocast_enabled(kind), lib.get_autocast_dtype(kind))
            with lib.autocast(**kwargs) as ctx:
                inside = (lib.is_autocast_enabled(kind), lib.get_autocast_dtype(kind), ctx.fast_dtype)
            after = (lib.is_autocast_enabled(kind), lib.get_autocast_dtype(kind))
            return plain(before), plain(inside), plain(after)

        return warned(body)

    assert run(ember) == run(torch)


def test_autocast_nests_decorates_and_checks_its_arguments():
    def run(lib):
        seen = []

        @lib.autocast("cpu", enabled=False)
        def inner():
            return lib.is_autocast_enabled("cpu")

        with lib.amp.autocast("cpu"):
            seen.append(lib.is_autocast_enabled("cpu"))
            seen.append(inner())
            seen.append(lib.is_autocast_enabled("cpu"))
            with lib.autocast("cpu", dtype=lib.float16):
                seen.append(plain(lib.get_autocast_dtype("cpu")))
            seen.append(plain(lib.get_autocast_dtype("cpu")))
        seen.append((lib.is_autocast_enabled(), lib.is_autocast_enabled("cpu"), plain(lib.get_autocast_dtype("cuda"))))
        seen.append(outcome(lambda: lib.autocast(lib.device("cpu"))))
        seen.append(outcome(lambda: lib.autocast()))
        seen.append((lib.amp.is_autocast_available("cpu"), lib.amp.is_autocast_available("cuda")))
        return seen

    assert run(ember) == run(torch)


def test_autocast_casts_as_torch():
    # the lists op by op: tests/test_autocast_cpu20.py
    for lib in (ember, torch):
        with lib.autocast("cpu"):
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.bfloat16
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        with ember.autocast("cpu", dtype=ember.float32):
            assert not ember.is_autocast_enabled("cpu")


def test_deprecated_cuda_amp_names():
    for lib in (ember, torch):
        with pytest.warns(FutureWarning, match="deprecated"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                scaler = lib.cuda.amp.GradScaler()
        assert not scaler.is_enabled()
        with pytest.warns(FutureWarning, match="deprecated"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                with lib.cuda.amp.autocast():
                    assert not lib.is_autocast_enabled("cuda")


# ---------------------------------------------------------------- GradScaler
class FakeOptimizer:
    def __init__(self, params):
        self.param_groups = [{"params": params}]
        self.steps = []

    def step(self, *args, **kwargs):
        self.steps.append((args, kwargs))
        return "stepped"


def test_disabled_grad_scaler_passes_everything_through():
    def run(lib):
        scaler = lib.amp.GradScaler(enabled=False)
        loss = lib.tensor(0.5)
        opt = FakeOptimizer([])
        return (scaler.is_enabled(), scaler.scale(loss) is loss, [t.item() for t in scaler.scale([loss, loss])],
                scaler.scale(3.0), scaler.get_scale(), scaler.state_dict(), scaler.unscale_(opt),
                scaler.step(opt, 1, closure=None), opt.steps, scaler.update(), scaler.update(8.0),
                scaler.load_state_dict({}), scaler.load_state_dict({"scale": 2.0}), scaler.get_scale(),
                scaler._get_growth_tracker())

    assert run(ember) == run(torch)
    for lib in (ember, torch):  # the default device is 'cuda': disabled, with a warning
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert not lib.amp.GradScaler().is_enabled()


def test_cpu_grad_scaler_scales_and_skips_steps_as_torch():
    def run(lib):
        if lib is torch:
            params = [torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)]
        else:
            params = [types.SimpleNamespace(grad=None), types.SimpleNamespace(grad=None)]
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
        opt = FakeOptimizer(params)
        seen = [scaler.is_enabled(), scaler.scale(lib.tensor(1.5)).item(), scaler.state_dict()]
        for grads in ([[8.0, 16.0], [4.0]], [[8.0, math.inf], [4.0]], [[8.0, 8.0], [2.0]], [[4.0, 4.0], [math.nan]],
                      [[2.0, 2.0], [1.0]], [[2.0, 2.0], [1.0]], [[2.0, 2.0], [1.0]]):
            for p, g in zip(params, grads):
                p.grad = lib.tensor(g)
            seen.append(outcome(lambda: scaler.step(opt, 7)))
            seen.append([[repr(v) for v in p.grad.tolist()] for p in params])  # repr: nan == nan
            seen.append(outcome(lambda: scaler.unscale_(opt)))  # after step(): RuntimeError
            scaler.update()
            seen.append((scaler.get_scale(), scaler._get_growth_tracker(), len(opt.steps)))
        p0 = params[0]
        p0.grad = lib.tensor([1.0, 1.0])
        scaler.unscale_(opt)
        seen.append(outcome(lambda: scaler.unscale_(opt)))
        scaler.step(opt)
        seen.append(outcome(lambda: scaler.step(opt)))
        seen.append(outcome(lambda: scaler.step(opt, closure=lambda: 0)))
        scaler.update(4.0)
        seen.append((scaler.get_scale(), scaler.state_dict()))
        seen.append(outcome(lambda: scaler.update()))  # no inf checks recorded
        seen.append(outcome(lambda: scaler.load_state_dict({})))
        scaler.load_state_dict({"scale": 2.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 5,
                                "_growth_tracker": 1})
        seen.append((scaler.get_scale(), scaler.state_dict(), scaler.get_growth_factor(),
                     scaler.get_backoff_factor(), scaler.get_growth_interval()))
        seen.append(outcome(lambda: scaler.scale(2.0)))
        seen.append(outcome(lambda: lib.amp.GradScaler("cpu", growth_factor=1.0)))
        return seen

    assert run(ember) == run(torch)


# ---------------------------------------------------------------- compile
def test_compile_returns_the_model_and_warns_once(monkeypatch):
    from ember import _compile

    monkeypatch.setattr(_compile, "_warned", False)

    def model(x):
        return x + 1

    with pytest.warns(UserWarning, match="ember.compile"):
        assert ember.compile(model) is model
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.compile(model, mode="reduce-overhead") is model
        decorated = ember.compile(fullgraph=True)(model)
        assert decorated is model

        @ember.compile
        def bare(x):
            return x * 2

        assert bare(ember.tensor(2)).item() == 4
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Either mode or options"):
            lib.compile(model, mode="default", options={})


# ---------------------------------------------------------------- as_torch
def run_script(tmp_path, source, *args, module=False):
    script = tmp_path / "script_under_test.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=ROOT)
    command = [sys.executable, "-m", "ember.as_torch"]
    command += ["-m", "script_under_test"] if module else [str(script)]
    result = subprocess.run(command + list(args), capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    return result


SCRIPT = """
    import sys
    import torch
    import torch.backends.cudnn as cudnn
    from torch.utils.data import DataLoader, TensorDataset
    from torch import cuda

    cudnn.benchmark = True
    device = torch.device("cuda" if cuda.is_available() else "cpu")
    x = torch.arange(6.0).view(3, 2).to(device)
    loader = DataLoader(TensorDataset(x), batch_size=2)
    loss = sum(batch[0].sum() for batch in loader)
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        y = scaler.scale(loss)
    torch.save({"loss": y}, sys.argv[1])
    print(torch.__name__, torch.utils.data.__name__, sys.argv[2:], f"{torch.load(sys.argv[1])['loss']:.4f}")
    print(sys.modules["torch.utils.data"] is sys.modules["ember.utils.data"], torch.__spec__.name, __name__)
    try:
        import torch.definitely_missing
    except ModuleNotFoundError as err:
        print(err)
"""


def test_as_torch_runs_an_unchanged_script(tmp_path):
    result = run_script(tmp_path, SCRIPT, str(tmp_path / "loss.pt"), "--flag", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["ember ember.utils.data ['--flag', '1'] 15.0000", "True ember __main__",
                                          "No module named 'torch.definitely_missing'"]


def test_as_torch_runs_a_module_and_shows_errors(tmp_path):
    result = run_script(tmp_path, "import sys, torch\nprint(torch.ones(2).sum().item(), sys.argv[1:])\n", "x",
                        module=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2.0 ['x']"
    failing = run_script(tmp_path, "import torch\nraise ValueError('from the script')\n")
    assert failing.returncode == 1 and "ValueError: from the script" in failing.stderr
    usage = subprocess.run([sys.executable, "-m", "ember.as_torch"], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=ROOT), timeout=60)
    assert usage.returncode == 2 and "usage" in usage.stderr


def test_install_as_torch_refuses_when_torch_is_imported():
    assert "torch" in sys.modules  # the real one, imported by these tests
    with pytest.raises(RuntimeError, match="already imported"):
        ember.install_as_torch()


# ---------------------------------------------------------------- import
def test_import_ember_stays_light():
    code = ("import sys, ember; heavy = ['multiprocessing', 'pickle', 'ember.utils', 'ember.serialization', "
            "'ember.amp', 'ember.cuda', 'ember.backends', 'ember._torch_alias']; "
            "print([m for m in heavy if m in sys.modules]); ember.save; ember.utils.data.DataLoader; "
            "print('ember.serialization' in sys.modules, 'save' in dir(ember), 'utils' in dir(ember))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.stdout.splitlines() == ["[]", "True True True"], result.stderr
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        ember.no_such_thing


def import_ember_from_a_checkout(tmp_path, extension=None):
    """`python -c "import ember"` run in a copy of the source checkout (ember/ without its
    built extension, a setup.py), as after `pip install .` from the checkout's root."""
    shutil.copytree(os.path.join(ROOT, "ember"), tmp_path / "ember",
                    ignore=shutil.ignore_patterns("_C.*.so", "_C.*.pyd", "__pycache__"))
    (tmp_path / "setup.py").write_text("# ember's setup.py\n")
    if extension is not None:
        (tmp_path / "ember" / ("_C" + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(extension)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # -S: no site-packages, where an editable install's finder would hand this copy the
    # checkout's built ember._C (CI installs ember with pip install -e)
    return subprocess.run([sys.executable, "-S", "-c", "import ember"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env=env)


def test_import_from_an_unbuilt_checkout_says_what_to_do(tmp_path):
    result = import_ember_from_a_checkout(tmp_path)
    assert result.returncode != 0
    assert "ImportError: ember was imported from its source checkout" in result.stderr, result.stderr
    assert "pip install -e ." in result.stderr and "python setup.py build_ext --inplace" in result.stderr
    assert "cannot import name '_C'" in result.stderr  # the original error, chained


def test_import_of_a_broken_extension_shows_its_own_error(tmp_path):
    result = import_ember_from_a_checkout(tmp_path, extension=b"not a shared library")
    assert result.returncode != 0
    assert "source checkout" not in result.stderr, result.stderr
    assert "ImportError: " + str(tmp_path / "ember" / "_C") in result.stderr, result.stderr  # the loader's own error


# ---------------------------------------------------------------- 0-dim tensors as numbers
NUMBER_CASES = {
    "format spec": lambda lib: f"{lib.tensor(2.5):.4f}",
    "format int": lambda lib: f"{lib.tensor(3):5d}",
    "format empty spec": lambda lib: f"{lib.tensor(2.5)}",
    "format e": lambda lib: f"{lib.tensor(1 / 3, dtype=lib.float64):e}",
    "format half": lambda lib: f"{lib.tensor(1 / 3, dtype=lib.float16):.6f}",
    "format bool": lambda lib: f"{lib.tensor(True)}",
    "format align": lambda lib: format(lib.tensor(2.5), ">10"),
    "format 1-d with spec": lambda lib: f"{lib.tensor([2.5]):.1f}",
    "format 1-d plain": lambda lib: f"{lib.tensor([1.0])}",
    "format float as d": lambda lib: f"{lib.tensor(2.5):d}",
    "percent d": lambda lib: "%d" % lib.tensor(3),
    "percent d of float": lambda lib: "%d" % lib.tensor(-2.7),
    "percent f": lambda lib: "%.2f" % lib.tensor(2.25),
    "percent x": lambda lib: "%x" % lib.tensor(255),
    "percent s": lambda lib: "%s" % lib.tensor(3),
    "int": lambda lib: int(lib.tensor(2.9)),
    "int of 1-element": lambda lib: int(lib.tensor([[7]])),
    "int of many": lambda lib: int(lib.tensor([1, 2])),
    "int of nan": lambda lib: int(lib.tensor(math.nan)),
    "int of inf": lambda lib: int(lib.tensor(math.inf)),
    "float": lambda lib: float(lib.tensor(3)),
    "complex": lambda lib: complex(lib.tensor(2.5)),
    "bool": lambda lib: bool(lib.tensor(0.0)),
    "bool of many": lambda lib: bool(lib.tensor([1, 2])),
    "range": lambda lib: list(range(lib.tensor(3))),
    "range uint8": lambda lib: list(range(lib.tensor(3, dtype=lib.uint8))),
    "range of float": lambda lib: range(lib.tensor(3.0)),
    "list index": lambda lib: [10, 11, 12][lib.tensor(2)],
    "list index bool": lambda lib: [10, 11][lib.tensor(True)],
    "list index 1-element": lambda lib: [10, 11][lib.tensor([1])],
    "slice": lambda lib: [1, 2, 3][lib.tensor(1):],
    "operator.index": lambda lib: operator.index(lib.tensor(5, dtype=lib.int16)),
    "hex": lambda lib: hex(lib.tensor(255)),
    "str repeat": lambda lib: "ab" * lib.tensor(2),
    "math.floor": lambda lib: math.floor(lib.tensor(2.5)),
    "math.isclose": lambda lib: math.isclose(lib.tensor(2.5), 2.5),
    "round": lambda lib: round(lib.tensor(2.5)),
    "less than float": lambda lib: bool(lib.tensor(3) < 3.5),
    "float greater": lambda lib: bool(3.0 > lib.tensor(2.5)),
    "equal int": lambda lib: bool(lib.tensor(3) == 3),
    "max with float": lambda lib: max(lib.tensor(2.5), 3.0),
    "sorted": lambda lib: [float(v) for v in sorted([lib.tensor(2.0), 1.0, lib.tensor(0.5)])],
}


@pytest.mark.parametrize("case", list(NUMBER_CASES))
def test_zero_dim_tensors_behave_as_numbers(case):
    expected = outcome(lambda: NUMBER_CASES[case](torch))
    got = outcome(lambda: NUMBER_CASES[case](ember))
    assert type(got) is type(expected) and got == expected, f"{got!r} vs torch's {expected!r}"


# ---------------------------------------------------------------- the new modules' docstring examples
DOC_MODULES = ["ember.utils.data.dataset", "ember.utils.data.sampler", "ember.utils.data._collate",
               "ember.utils.data.dataloader", "ember.utils.data._worker", "ember.serialization", "ember.cuda",
               "ember.accelerator", "ember.backends", "ember.amp.autocast_mode", "ember.amp.grad_scaler",
               "ember._compile"]


@pytest.mark.parametrize("name", DOC_MODULES)
def test_docstring_examples(name, monkeypatch):
    import doctest
    import importlib

    from ember import _compile

    monkeypatch.setattr(_compile, "_warned", True)
    module = importlib.import_module(name)
    globs = {"ember": ember, **vars(importlib.import_module("ember.utils.data"))}
    tests = [t for t in doctest.DocTestFinder().find(module, globs=globs) if t.examples]
    assert tests, f"{name} has no examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    try:
        for test in tests:
            runner.run(test)
    finally:
        ember.backends.cudnn.benchmark = False
    assert runner.failures == 0
