"""Builds ember._C: runs the code generator into the build directory, then compiles
every translation unit in parallel, recompiling only those whose sources or headers
changed (gcc's -MMD dependency files). EMBER_MARCH overrides -march (default: native),
EMBER_CFLAGS adds flags, EMBER_SANITIZE=1 builds with AddressSanitizer and
UndefinedBehaviorSanitizer (see README, "Sanitizer build"). EMBER_CUDA=1 builds ember._C_cuda
too, EMBER_CUDA=only builds it alone (tools/build_cuda.py)."""
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from tools import build_cuda  # noqa: E402
from tools.codegen import generate  # noqa: E402


GLOO_INCLUDE_DIRS = ["/usr/include", "/usr/local/include"]
GLOO_LIB_DIRS = ["/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib"]


def gloo_found() -> bool:
    """ember._C_gloo (ember.distributed's engine) is built only where gloo is installed
    (Debian/Ubuntu: apt-get install libgloo-dev); EMBER_NO_GLOO=1 skips it anyway."""
    if os.environ.get("EMBER_NO_GLOO", "") not in ("", "0"):
        print("ember: EMBER_NO_GLOO is set: not building ember._C_gloo (ember.distributed unavailable)")
        return False
    header = any(Path(d, "gloo", "rendezvous", "context.h").exists() for d in GLOO_INCLUDE_DIRS)
    library = any(Path(d, name).exists() for d in GLOO_LIB_DIRS for name in ("libgloo.so", "libgloo.a"))
    if not (header and library):
        print("ember: gloo not found (no gloo/rendezvous/context.h or libgloo.so): not building ember._C_gloo; "
              "ember.distributed will be unavailable (apt-get install libgloo-dev, then rebuild)")
        return False
    return True


def hand_written_sources():
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.cpp"))


# ASan + UBSan, -O1 for usable stacks; every UB check is fatal (no recovery) so a report
# cannot scroll by unnoticed; IntList/Dims indexing is checked (see core/dims.h).
# -fexpensive-optimizations: at -O1 gcc contracts no a*b+c into an FMA (that pass is -O2's),
# so float results would differ from the -O3 build's, and torch's, in the last bit.
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
                  "-O1", "-fexpensive-optimizations", "-DEMBER_CHECKED_INDEXING"]


# ember._C carries its own C++ runtime, hidden. With the shared one, a process that had
# imported the GPU machine's torch 2.11 first crashed in ember's first error message that
# formatted a number (std::ostream's facets: measured there, a segfault in
# ops::item's message under pytest; fixed by this). +1.5 MB. The sanitizer build keeps the
# shared runtime, which ASan intercepts.
STATIC_LIBSTDCXX = ["-static-libstdc++", "-Wl,--exclude-libs,ALL"]


def sanitize() -> bool:
    return os.environ.get("EMBER_SANITIZE", "") not in ("", "0")


def compile_flags():
    march = os.environ.get("EMBER_MARCH", "native")
    # -fno-math-errno: nothing reads errno, and with it gcc calls sqrt (and floor, fma, ...)
    # as instructions that vectorize instead of libm for errno (kernels/vec_math.h).
    flags = ["-std=c++17", "-O3", "-fno-math-errno", "-fvisibility=hidden", "-Wall", "-Wno-unused-function"]
    if march:
        flags.append(f"-march={march}")
    if sanitize():
        flags += SANITIZE_FLAGS
    flags += shlex.split(os.environ.get("EMBER_CFLAGS", ""))
    return flags


# The generated glue, api_<family>.cpp (autograd nodes and the API layer) and
# python_<family>.cpp (argument parsing), runs no loop over elements, and at -O3 it was
# a quarter of a clean build's compiling; at -O1 it compiles in about half the time
# (api_pointwise.cpp 14.6 -> 8.0 s) for a few percent of per-op overhead (a.add_(b) 350 ->
# 381 ns; DESIGN.md, "The build"). The sanitizer build keeps its own -O1 flags.
GLUE_FLAGS = ["-O1"]


def unit_flags(src: str) -> list:
    name = os.path.basename(src)
    glue = name.startswith(("api_", "python_")) and Path(src).parent.name == "generated"
    return GLUE_FLAGS if glue and not sanitize() else []


def up_to_date(obj: Path, src: Path, also=()) -> bool:
    """True when obj is newer than src, every header its .d file lists and the paths in also."""
    dep = obj.with_suffix(obj.suffix + ".d")
    if not obj.exists() or not dep.exists():
        return False
    stamp = obj.stat().st_mtime
    text = dep.read_text().replace("\\\n", " ")
    deps = text.split(":", 1)[1].split() if ":" in text else []
    return all(Path(d).exists() and Path(d).stat().st_mtime <= stamp for d in [str(src), *deps, *also])


# The precompiled header (csrc/core/precompiled.h): the standard library and core/,
# which every unit parsed for ~1.7 s, compiled once per build and loaded by each unit
# with -include (~0.2 s). gcc only (clang's are a different mechanism); the sanitizer build
# compiles without it, so that build checks each source includes what it uses, and
# EMBER_NO_PCH=1 declines it. gcc's -MMD lists none of the headers a unit got from the
# precompiled one, so each unit depends on the .gch file and the .gch on its own .d list.
PCH_SOURCE = "core/precompiled.h"


def precompiled_header_wanted(command) -> bool:
    if sanitize() or os.environ.get("EMBER_NO_PCH", "") not in ("", "0"):
        return False
    compiler_exe = next((c for c in command if os.path.basename(c) != "ccache"), None)
    try:
        version = subprocess.run([compiler_exe, "--version"], capture_output=True, text=True).stdout
    except (OSError, TypeError):
        return False
    # gcc says so, or (as `c++` on Debian) only its copyright holder
    return "clang" not in version.lower() and any(
        mark in version for mark in ("g++", "gcc", "GCC", "Free Software Foundation"))


def precompiled_header(compiler, build_temp: Path, cc_args, extra_postargs, same_flags):
    """Compiles csrc/core/precompiled.h (when it or a header it includes changed, or the
    flags did) into build_temp/pch/ember_pch.h.gch; returns the -include flags and the
    .gch path every unit then depends on, or ([], None) where it is not used."""
    command = list(getattr(compiler, "compiler_so_cxx", None) or compiler.compiler_so)
    if not precompiled_header_wanted(command):
        return [], None
    pch_dir = build_temp / "pch"
    pch_dir.mkdir(parents=True, exist_ok=True)
    header = pch_dir / "ember_pch.h"
    text = f'#include "{PCH_SOURCE}"\n'
    if not header.exists() or header.read_text() != text:
        header.write_text(text)
    gch = pch_dir / "ember_pch.h.gch"
    if not (same_flags and up_to_date(gch, header)):
        start = time.perf_counter()
        compiler.spawn(command + cc_args + ["-x", "c++-header", str(header), "-o", str(gch)] + extra_postargs
                       + ["-MMD", "-MF", str(gch) + ".d"])
        print(f"ember: precompiled header compiled in {time.perf_counter() - start:.1f} s", flush=True)
    return ["-Winvalid-pch", "-include", str(header)], gch


def ccache():
    """ccache's path where it is installed (EMBER_NO_CCACHE=1 declines it): a rebuild of
    unchanged sources, after a `git stash` or a branch switch, then costs no compiling.
    ccache caches units that load a precompiled header only with this sloppiness."""
    if os.environ.get("EMBER_NO_CCACHE", "") not in ("", "0"):
        return None
    path = shutil.which("ccache")
    if path:
        sloppy = [s for s in os.environ.get("CCACHE_SLOPPINESS", "").split(",") if s]
        os.environ["CCACHE_SLOPPINESS"] = ",".join(dict.fromkeys(sloppy + ["pch_defines", "time_macros"]))
    return path


def record_compile_times(path: Path, times, sources) -> None:
    """Each translation unit's compile time (wall seconds, beside the others running), the
    slowest first, into build/.../compile_times.txt: what to split or slim next. Units not
    recompiled keep their last time; units no longer built are dropped."""
    known = {}
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split(None, 1)  # the seconds are right-aligned: leading spaces
            try:
                known[parts[1]] = float(parts[0])
            except (IndexError, ValueError):
                pass
    current = {os.path.relpath(src, ROOT) for src in sources}
    known = {name: seconds for name, seconds in known.items() if name in current}
    known.update(times)
    path.write_text("".join(f"{seconds:7.1f} {name}\n" for name, seconds in
                            sorted(known.items(), key=lambda item: -item[1])))
    if times:
        slowest = sorted(times, key=lambda item: -item[1])[:3]
        print("ember: slowest units: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in slowest),
              flush=True)


class BuildExt(build_ext):
    def run(self):
        for ext in self.extensions:
            if ext.name != "ember._C":
                continue
            gen_dir = Path(self.build_temp) / "generated"
            stub = ROOT / "ember" / "_C.pyi"
            generated = generate(gen_dir, pyi_path=stub)
            if not self.inplace:  # build_py ran before the stub existed: put it beside the built package too
                target = Path(self.build_lib) / "ember" / "_C.pyi"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(stub, target)
            ext.sources = hand_written_sources() + [os.path.relpath(p, ROOT) for p in generated]
            ext.include_dirs = ["csrc", str(gen_dir)]
        self.force = True  # the per-object check below decides what to recompile
        super().run()

    def build_extension(self, ext):
        if ext.name == "ember._C_cuda":  # nvcc's own parallel, incremental build
            return build_cuda.build(ROOT, Path(self.build_temp), Path(self.get_ext_fullpath(ext.name)), up_to_date)
        compiler = self.compiler
        flags = compile_flags()
        if ext.name == "ember._C_gloo":  # one file: the stock compile, with ember's flags (and sanitizers)
            ext.extra_compile_args = flags
            ext.extra_link_args = ["-fvisibility=hidden"] + (SANITIZE_FLAGS[:1] if sanitize() else [])
            saved = compiler.__dict__.pop("compile", None)  # ember._C's parallel_compile, if it ran first
            # run() forces every extension for ember._C's own per-object check; this one file
            # is rebuilt only when it is newer than the module (it took 30 s of every build)
            force, self.force = self.force, False
            try:
                return super().build_extension(ext)
            finally:
                self.force = force
                if saved is not None:
                    compiler.compile = saved
        ext.extra_compile_args = flags + [f'-DEMBER_BUILD_FLAGS="{" ".join(flags)}"']
        ext.extra_link_args = ["-fvisibility=hidden"] + (SANITIZE_FLAGS[:1] if sanitize() else STATIC_LIBSTDCXX)

        def parallel_compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                             extra_preargs=None, extra_postargs=None, depends=None):
            macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
            # objects compiled with other flags (EMBER_CFLAGS, EMBER_MARCH) are stale too
            flags_file = Path(self.build_temp) / "compile_flags.txt"
            flags_now = " ".join(cc_args + extra_postargs + ["glue:"] + GLUE_FLAGS)
            same_flags = flags_file.exists() and flags_file.read_text() == flags_now
            pch_flags, gch = precompiled_header(compiler, Path(self.build_temp), cc_args, extra_postargs, same_flags)
            also = [str(gch)] if gch else []
            todo = [(obj, src_ext) for obj, src_ext in build.items()
                    if not (same_flags and up_to_date(Path(obj), Path(src_ext[0]), also))]
            print(f"ember: compiling {len(todo)} of {len(build)} translation units", flush=True)

            def one(item):
                obj, (src, ext_) = item
                start = time.perf_counter()
                compiler._compile(obj, src, ext_, cc_args + pch_flags,
                                  extra_postargs + unit_flags(src) + ["-MMD", "-MF", obj + ".d"], pp_opts)
                return os.path.relpath(src, ROOT), time.perf_counter() - start

            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                times = list(pool.map(one, todo))
            flags_file.write_text(flags_now)
            record_compile_times(Path(self.build_temp) / "compile_times.txt", times,
                                 [src for src, _ in build.values()])
            return objects

        compiler.compile = parallel_compile
        launcher = ccache()
        for attr in ("compiler_so", "compiler_so_cxx"):  # drop Python's -g: debug info triples build time
            if hasattr(compiler, attr):
                command = [f for f in getattr(compiler, attr) if f not in ("-g", "-O2")]
                if launcher and command and os.path.basename(command[0]) != "ccache":
                    command = [launcher, *command]
                setattr(compiler, attr, command)
        super().build_extension(ext)


def cuda_extensions():
    """ember._C_cuda, when EMBER_CUDA asks for it: the toolkit is checked before anything
    compiles, so a missing or wrong nvcc fails the build at once, saying what to do."""
    try:
        mode = build_cuda.requested()
        if mode is None:
            return None, []
        build_cuda.check_toolkit()
    except build_cuda.CudaBuildError as error:
        raise SystemExit(f"ember: {error}") from None
    return mode, [Extension("ember._C_cuda", sources=build_cuda.sources(ROOT), language="c++")]


CUDA_MODE, CUDA_EXTENSIONS = cuda_extensions()
EXTENSIONS = []
if CUDA_MODE != "only":
    EXTENSIONS.append(Extension("ember._C", sources=["csrc/python/module.cpp"], language="c++"))
    if gloo_found():
        EXTENSIONS.append(Extension("ember._C_gloo", sources=["csrc_gloo/gloo_module.cpp"], libraries=["gloo"],
                                    language="c++"))
EXTENSIONS += CUDA_EXTENSIONS

setup(
    ext_modules=EXTENSIONS,
    cmdclass={"build_ext": BuildExt},
)
