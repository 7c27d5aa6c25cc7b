"""ember.cuda where CUDA is absent, on every machine: torch's answers and errors when
ember is built without CUDA, or with it but without a driver or a GPU (each case set up by
replacing what ember.cuda detects), the lazy loading of ember._C_cuda, the CUDA entry of
the device table as the core calls it, and the build's decisions (tools/build_cuda.py).
The GPU's own tests are in test_cuda.py."""
import ctypes
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import ember
import ember.cuda as cuda
from cuda_entry import ABI_VERSION, DEVICE_TO_HOST, ERROR, OK, alloc, cuda_entry
from helpers import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools import build_cuda  # noqa: E402

NOT_COMPILED = "ember not compiled with CUDA enabled"
NO_DRIVER = "Found no NVIDIA driver on your system"
COMPILED = cuda._is_compiled()


@pytest.fixture
def core_without_cuda():
    """For tests of tensors on 'cuda' where CUDA is absent: the core asks ember.cuda only
    while its device table holds no CUDA entry (listed before the fixtures that fake it)."""
    if cuda.is_initialized():
        pytest.skip("CUDA is initialized in this process: the core's device table holds it")


@pytest.fixture
def absent(monkeypatch):
    """ember.cuda as in a fresh process, set up by the test; the real state comes back after."""
    for name, value in [("_lib", None), ("_absent", None), ("_initialized", False), ("_in_bad_fork", False),
                        ("_properties", {})]:
        monkeypatch.setattr(cuda, name, value)
    return monkeypatch


@pytest.fixture
def not_compiled(absent):
    absent.setattr(cuda, "_is_compiled", lambda: False)


@pytest.fixture
def no_driver(absent):
    absent.setattr(cuda, "_is_compiled", lambda: True)
    absent.setattr(cuda, "_driver_found", lambda: False)


def fake_lib(count=0, driver=13000, runtime=13000):
    """What ember.cuda needs of ember._C_cuda, answering for a machine with count GPUs."""
    calls = []
    return types.SimpleNamespace(_device_count=lambda: count, _driver_version=lambda: driver,
                                 _runtime_version=lambda: runtime, _register=lambda: calls.append("register"),
                                 _register_forked=lambda: calls.append("forked"), calls=calls)


def outcome(fn):
    try:
        return fn()
    except Exception as exc:
        return type(exc)


# ---------------------------------------------------------------- built without CUDA
CPU_TORCH_CALLS = ["is_available", "device_count", "is_initialized", "is_bf16_supported", "empty_cache",
                   "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                   "synchronize", "current_device", "get_device_name", "get_device_capability",
                   "get_device_properties", "init", "_lazy_init", "get_rng_state", "ipc_collect", "mem_get_info"]


# torch answers as a build without CUDA only where it is one (the GPU machine's is not)
cpu_torch_only = pytest.mark.skipif(torch.cuda.is_available(), reason="the oracle is a CPU build of torch")


@cpu_torch_only
@pytest.mark.parametrize("name", CPU_TORCH_CALLS)
def test_not_compiled_answers_as_cpu_torch(not_compiled, name):
    assert outcome(getattr(cuda, name)) == outcome(getattr(torch.cuda, name))


@cpu_torch_only
def test_not_compiled_errors(not_compiled):
    for call in [cuda.current_device, cuda.init, cuda._lazy_init, lambda: cuda.get_device_name(0),
                 lambda: cuda.set_device(0), lambda: cuda.set_device("cuda:0"), cuda.reset_peak_memory_stats,
                 lambda: cuda.get_device_capability("cuda")]:
        with pytest.raises(AssertionError, match=f"^{NOT_COMPILED}$"):
            call()
    assert (cuda.is_available(), cuda.device_count(), cuda.is_initialized()) == (False, 0, False)
    assert (cuda.memory_allocated(), cuda.memory_reserved(0), cuda.memory_stats(), cuda.empty_cache()) == (0, 0, {},
                                                                                                          None)
    cuda.set_device(-1)  # a negative index does nothing, as in torch
    with cuda.device(-1), cuda.device(None):
        pass
    with pytest.raises(RuntimeError, match="ember was compiled without CUDA support"):
        with cuda.device(0):
            pass
    assert outcome(lambda: cuda.device(0).__enter__()) == outcome(lambda: torch.cuda.device(0).__enter__())
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.set_device("cpu")


@pytest.mark.parametrize("call", [lambda: ember.empty(2, device="cuda"), lambda: ember.ones(2).cuda(),
                                  lambda: ember.tensor([1.0], device="cuda:0")], ids=["empty", "cuda", "tensor"])
def test_not_compiled_tensor_on_cuda_raises(core_without_cuda, not_compiled, call):
    # the core asks ember.cuda._lazy_init() for the first tensor on 'cuda'
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        call()


# ---------------------------------------------------------------- built with CUDA, no driver or no GPU
def test_no_driver_errors_and_never_loads_the_extension(no_driver):
    loaded = "ember._C_cuda" in sys.modules
    assert (cuda.is_available(), cuda.device_count(), cuda.memory_allocated(), cuda.memory_stats()) == (False, 0, 0, {})
    for call in [cuda.current_device, cuda.init, lambda: cuda.get_device_name(), lambda: cuda.set_device(0),
                 cuda.synchronize, lambda: cuda.device(0).__enter__()]:
        with pytest.raises(RuntimeError, match=NO_DRIVER):
            call()
    assert cuda._lib is None and ("ember._C_cuda" in sys.modules) == loaded


def test_no_driver_tensor_on_cuda_raises(core_without_cuda, no_driver):
    with pytest.raises(RuntimeError, match=NO_DRIVER):
        ember.empty(2, device="cuda")


def test_no_gpu(absent):
    lib = fake_lib(count=0)
    absent.setattr(cuda, "_lib", lib)
    assert (cuda.is_available(), cuda.device_count()) == (False, 0)
    with pytest.raises(RuntimeError, match="^No CUDA GPUs are available$"):
        cuda.init()
    assert lib.calls == [] and not cuda.is_initialized()


def test_driver_older_than_the_runtime(absent):
    absent.setattr(cuda, "_lib", fake_lib(count=0, driver=12080))
    with pytest.raises(RuntimeError, match=r"driver on your system is too old \(found version 12080\)"):
        cuda.init()


def test_init_registers_the_device_once(absent):
    lib = fake_lib(count=2)
    absent.setattr(cuda, "_lib", lib)
    assert (cuda.is_available(), cuda.device_count(), cuda.is_initialized()) == (True, 2, False)
    cuda.init()
    cuda._lazy_init()
    assert lib.calls == ["register"] and cuda.is_initialized()


def test_a_forked_child_refuses_cuda(absent):
    lib = fake_lib(count=1)
    absent.setattr(cuda, "_lib", lib)
    cuda.init()
    cuda._after_fork_in_child()  # what os.register_at_fork runs in the child
    assert lib.calls == ["register", "forked"] and not cuda.is_initialized()
    with pytest.raises(RuntimeError, match="Cannot re-initialize CUDA in forked subprocess"):
        cuda.init()


def test_device_index(absent):
    absent.setattr(cuda, "_lib", fake_lib(count=2))
    assert [cuda._device_index(d) for d in [1, "cuda:1", ember.device("cuda:0"), cuda.device(-1)]] == [1, 1, 0, -1]
    with pytest.raises(ValueError, match="with a specified index"):
        cuda._device_index("cuda")
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda._device_index(1.5)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: meta"):
        cuda._device_index("meta")


# ---------------------------------------------------------------- loading
def run_python(code):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_import_ember_never_loads_the_cuda_extension():
    out = run_python("import sys, ember; ember.ones(2) + 1; print('ember._C_cuda' in sys.modules, "
                     "'ember.cuda' in sys.modules); import ember.cuda as c; print('ember._C_cuda' in sys.modules); "
                     "c.is_available(); print('ember._C_cuda' in sys.modules, c._driver_found())")
    loaded_by_import, cuda_imported, loaded_by_cuda, loaded_by_query, driver = out
    assert (loaded_by_import, cuda_imported, loaded_by_cuda) == ("False", "False", "False")
    # is_available() loads it only where it is built and a driver is there
    assert loaded_by_query == str(COMPILED and driver == "True")


def test_docstring_example_holds():
    assert cuda.is_available() == (cuda.device_count() > 0)
    assert cuda.amp.GradScaler  # ember.cuda.amp still loads on first use


# ---------------------------------------------------------------- the CUDA entry, as the core calls it
@pytest.mark.skipif(not COMPILED, reason="ember built without CUDA (EMBER_CUDA=1)")
def test_cuda_entry_without_a_gpu():
    entry = cuda_entry()
    assert (entry.abi_version, entry.name, entry.backend, entry.has_data) == (ABI_VERSION, b"cuda", b"CUDA", True)
    count = ctypes.c_int()
    assert entry.device_count(count) == OK and count.value == cuda.device_count()
    assert alloc(entry, -1, 0) == (OK, None)  # nothing to allocate
    entry.free(0, None, 0)  # free never fails
    buffer = ctypes.create_string_buffer(8)
    assert entry.copy_bytes(0, buffer, None, 0, DEVICE_TO_HOST) == OK  # nothing to copy
    assert entry.copy_bytes(0, buffer, None, 8, 7) == ERROR
    assert entry.error_message() == b"copy_bytes: unknown copy kind 7"
    if cuda.is_available():
        pytest.skip("a GPU is here: test_cuda.py calls the entry with it")
    status, address = alloc(entry, 0, 1024)
    assert (status, address) == (ERROR, None) and entry.error_message()
    assert entry.synchronize(0) == ERROR and entry.error_message()


# ---------------------------------------------------------------- the build (tools/build_cuda.py)
def test_build_is_opt_in():
    assert [build_cuda.requested({"EMBER_CUDA": v}) for v in ["", "0", "1", "only", " 1 "]] == [None, None, "1",
                                                                                                  "only", "1"]
    assert build_cuda.requested({}) is None
    with pytest.raises(build_cuda.CudaBuildError, match="EMBER_CUDA must be 0, 1 or only, got 'yes'"):
        build_cuda.requested({"EMBER_CUDA": "yes"})


def test_build_pins_cuda_13_0(tmp_path):
    text = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n"
    assert build_cuda.nvcc_release(text) == "13.0"
    build_cuda.check_release(text, "nvcc")
    for other in [text.replace("13.0", "13.5"), text.replace("13.0", "12.8"), "no version here"]:
        with pytest.raises(build_cuda.CudaBuildError, match="built with CUDA 13.0.*CUDA_HOME"):
            build_cuda.check_release(other, "nvcc")
    assert build_cuda.cuda_home({}) == Path("/usr/local/cuda")
    assert build_cuda.cuda_home({"CUDA_HOME": str(tmp_path)}) == tmp_path
    with pytest.raises(build_cuda.CudaBuildError, match=f"no {tmp_path}/bin/nvcc"):
        build_cuda.nvcc_path({"CUDA_HOME": str(tmp_path)})


def test_build_targets_hopper_and_links_the_static_runtime(tmp_path):
    flags = " ".join(build_cuda.nvcc_flags("/py/include"))
    assert "arch=compute_90a,code=sm_90a" in flags and "arch=compute_90,code=compute_90" in flags
    assert "-std=c++17" in flags and "-fvisibility=hidden" in flags and "-I/py/include" in flags
    with pytest.raises(build_cuda.CudaBuildError, match="no libcudart_static.a"):
        build_cuda.cudart_static(tmp_path)
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libcudart_static.a").write_bytes(b"")
    command = build_cuda.link_command(["a.o"], "out.so", tmp_path)
    assert str(tmp_path / "lib64" / "libcudart_static.a") in command
    assert {"-ldl", "-lpthread", "-lrt", "-shared"} <= set(command) and "-lcudart" not in command


def test_build_sources_are_cu_files_only():
    sources = build_cuda.sources(ROOT)
    assert "csrc/cuda/module.cu" in sources and all(s.endswith(".cu") for s in sources)
    assert not list((ROOT / "csrc" / "cuda").glob("*.cpp"))  # setup.py would compile those into _C


def test_setup_refuses_a_bad_ember_cuda_value():
    result = subprocess.run([sys.executable, "setup.py", "--version"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, EMBER_CUDA="yes"))
    assert result.returncode != 0 and "EMBER_CUDA must be 0, 1 or only" in result.stderr
