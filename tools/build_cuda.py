"""The opt-in build of ember._C_cuda, which setup.py runs when EMBER_CUDA is set (see
DESIGN.md, "The CUDA build"): EMBER_CUDA=1 builds it beside ember._C, EMBER_CUDA=only
builds it alone (ember._C being built already: CI's CUDA step).

nvcc (CUDA 13.0, from $CUDA_HOME, else /usr/local/cuda) compiles every csrc/cuda/*.cu in
parallel, each only when it or a header it includes changed (nvcc's -MD dependency files,
read as setup.py reads gcc's), and the objects are linked with the static CUDA runtime:
the module needs no CUDA library at run time but the driver's libcuda.so.1, which the
runtime opens itself. The decisions are functions of their inputs, so that
tests/test_cuda_api.py checks them without a toolkit."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# The H100 machines' driver (580) JITs PTX only up to CUDA 13.0: PTX from a newer nvcc
# (PyPI's nvidia-cuda-nvcc is 13.5) would not load there.
REQUIRED_RELEASE = "13.0"
DEFAULT_CUDA_HOME = "/usr/local/cuda"
# Hopper SASS for sm_90a (wgmma and TMA need the 'a' target) and compute_90 PTX, which
# the driver JITs for newer GPUs.
ARCH_FLAGS = ["-gencode", "arch=compute_90a,code=sm_90a", "-gencode", "arch=compute_90,code=compute_90"]
LINK_LIBS = ["-ldl", "-lpthread", "-lrt"]  # what libcudart_static.a needs


class CudaBuildError(RuntimeError):
    """The CUDA build cannot go on; the message says why and what to do."""


def requested(environ=os.environ) -> str | None:
    """None (EMBER_CUDA unset, empty or 0), "1" (build ember._C_cuda too) or "only"."""
    value = environ.get("EMBER_CUDA", "").strip()
    if value in ("", "0"):
        return None
    if value in ("1", "only"):
        return value
    raise CudaBuildError(f"EMBER_CUDA must be 0, 1 or only, got {value!r}")


def cuda_home(environ=os.environ) -> Path:
    return Path(environ.get("CUDA_HOME") or DEFAULT_CUDA_HOME)


def nvcc_path(environ=os.environ) -> Path:
    nvcc = cuda_home(environ) / "bin" / "nvcc"
    if not nvcc.exists():
        raise CudaBuildError(f"EMBER_CUDA is set but there is no {nvcc}: install the CUDA {REQUIRED_RELEASE} toolkit "
                             f"there or point CUDA_HOME at one")
    return nvcc


def nvcc_release(version_text: str) -> str | None:
    """The release `nvcc --version` reports ("13.0"), or None when it names none."""
    match = re.search(r"release (\d+\.\d+)", version_text)
    return match.group(1) if match else None


def check_release(version_text: str, nvcc) -> None:
    release = nvcc_release(version_text)
    if release != REQUIRED_RELEASE:
        raise CudaBuildError(f"ember._C_cuda is built with CUDA {REQUIRED_RELEASE}, but {nvcc} is release "
                             f"{release or '(unknown)'}: the GPU machines' driver JITs PTX only up to "
                             f"{REQUIRED_RELEASE}. Point CUDA_HOME at a {REQUIRED_RELEASE} toolkit.")


def check_toolkit(environ=os.environ) -> Path:
    """nvcc's path, once it is found and its release is the required one."""
    nvcc = nvcc_path(environ)
    result = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True)
    check_release(result.stdout + result.stderr, nvcc)
    return nvcc


def sources(root: Path) -> list[str]:
    """csrc/cuda/*.cu, relative to root (no .cpp there: setup.py compiles those into _C)."""
    return sorted(str(p.relative_to(root)) for p in (root / "csrc" / "cuda").glob("*.cu"))


def nvcc_flags(python_include: str) -> list[str]:
    return ["-std=c++17", "-O3", *ARCH_FLAGS, "-Xcompiler", "-fPIC,-fvisibility=hidden", "-Icsrc",
            f"-I{python_include}"]


def cudart_static(home: Path) -> Path:
    for lib in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
        path = home / lib / "libcudart_static.a"
        if path.exists():
            return path
    raise CudaBuildError(f"no libcudart_static.a under {home} (lib64/ or lib/): the CUDA toolkit there is incomplete")


def link_command(objects: list[str], output: str, home: Path, cxx: str = "g++") -> list[str]:
    # --exclude-libs: the runtime's symbols stay inside the module
    return [*shlex.split(cxx), "-shared", "-o", output, *objects, str(cudart_static(home)), *LINK_LIBS,
            "-Wl,--exclude-libs,ALL"]


def build(root: Path, build_temp: Path, output: Path, up_to_date, environ=os.environ) -> None:
    """Compiles what changed into build_temp/cuda/ and links output. up_to_date(obj, src)
    is setup.py's check (obj newer than src and every header its .d file lists)."""
    start = time.perf_counter()
    nvcc = check_toolkit(environ)
    home = cuda_home(environ)
    objects_dir = build_temp / "cuda"
    objects_dir.mkdir(parents=True, exist_ok=True)
    flags = nvcc_flags(sysconfig.get_paths()["include"])
    # objects compiled with other flags, or by another nvcc, are stale too
    flags_file = objects_dir / "nvcc_flags.txt"
    flags_now = " ".join([str(nvcc), *flags])
    same_flags = flags_file.exists() and flags_file.read_text() == flags_now
    units = [(src, objects_dir / (Path(src).name + ".o")) for src in sources(root)]
    todo = [(src, obj) for src, obj in units if not (same_flags and up_to_date(obj, root / src))]
    print(f"ember: compiling {len(todo)} of {len(units)} CUDA sources (nvcc {REQUIRED_RELEASE})", flush=True)

    def one(unit):
        src, obj = unit
        command = [str(nvcc), *flags, "-c", src, "-o", str(obj), "-MD", "-MF", f"{obj}.d"]
        result = subprocess.run(command, cwd=root, capture_output=True, text=True)
        if result.stdout or result.stderr:
            print(result.stdout + result.stderr, end="", file=sys.stderr, flush=True)
        if result.returncode != 0:
            raise CudaBuildError(f"nvcc failed on {src} (exit {result.returncode}): {' '.join(command)}")

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for _ in pool.map(one, todo):
            pass
    flags_file.write_text(flags_now)
    objects = [str(obj) for _, obj in units]
    stale = not output.exists() or any(Path(o).stat().st_mtime > output.stat().st_mtime for o in objects)
    if todo or stale:
        output.parent.mkdir(parents=True, exist_ok=True)
        command = link_command(objects, str(output), home, environ.get("CXX", "g++"))
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise CudaBuildError(f"linking {output.name} failed: {' '.join(command)}\n{result.stdout}{result.stderr}")
    print(f"ember: {output.name} is up to date ({time.perf_counter() - start:.1f} s)", flush=True)
