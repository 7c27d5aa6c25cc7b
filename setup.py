"""Builds ember._C: runs the code generator into the build directory, then compiles
every translation unit in parallel, recompiling only those whose sources or headers
changed (gcc's -MMD dependency files). EMBER_MARCH overrides -march (default: native),
EMBER_CFLAGS adds flags, EMBER_SANITIZE=1 builds with AddressSanitizer and
UndefinedBehaviorSanitizer (see README, "Sanitizer build")."""
import os
import shlex
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from tools.codegen import generate  # noqa: E402


def hand_written_sources():
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc").rglob("*.cpp"))


# ASan + UBSan, -O1 for usable stacks; every UB check is fatal (no recovery) so a report
# cannot scroll by unnoticed; IntList/Dims indexing is checked (see core/dims.h).
# -fexpensive-optimizations: at -O1 gcc contracts no a*b+c into an FMA (that pass is -O2's),
# so float results would differ from the -O3 build's, and torch's, in the last bit.
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
                  "-O1", "-fexpensive-optimizations", "-DEMBER_CHECKED_INDEXING"]


def sanitize() -> bool:
    return os.environ.get("EMBER_SANITIZE", "") not in ("", "0")


def compile_flags():
    march = os.environ.get("EMBER_MARCH", "native")
    flags = ["-std=c++17", "-O3", "-fvisibility=hidden", "-Wall", "-Wno-unused-function"]
    if march:
        flags.append(f"-march={march}")
    if sanitize():
        flags += SANITIZE_FLAGS
    flags += shlex.split(os.environ.get("EMBER_CFLAGS", ""))
    return flags


def up_to_date(obj: Path, src: Path) -> bool:
    """True when obj is newer than src and every header its .d file lists."""
    dep = obj.with_suffix(obj.suffix + ".d")
    if not obj.exists() or not dep.exists():
        return False
    stamp = obj.stat().st_mtime
    text = dep.read_text().replace("\\\n", " ")
    deps = text.split(":", 1)[1].split() if ":" in text else []
    return all(Path(d).exists() and Path(d).stat().st_mtime <= stamp for d in [str(src), *deps])


class BuildExt(build_ext):
    def run(self):
        gen_dir = Path(self.build_temp) / "generated"
        stub = ROOT / "ember" / "_C.pyi"
        generated = generate(gen_dir, pyi_path=stub)
        if not self.inplace:  # build_py ran before the stub existed: put it beside the built package too
            target = Path(self.build_lib) / "ember" / "_C.pyi"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(stub, target)
        for ext in self.extensions:
            ext.sources = hand_written_sources() + [os.path.relpath(p, ROOT) for p in generated]
            ext.include_dirs = ["csrc", str(gen_dir)]
        self.force = True  # the per-object check below decides what to recompile
        super().run()

    def build_extension(self, ext):
        compiler = self.compiler
        flags = compile_flags()
        ext.extra_compile_args = flags + [f'-DEMBER_BUILD_FLAGS="{" ".join(flags)}"']
        ext.extra_link_args = ["-fvisibility=hidden"] + (SANITIZE_FLAGS[:1] if sanitize() else [])

        def parallel_compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                             extra_preargs=None, extra_postargs=None, depends=None):
            macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
            # objects compiled with other flags (EMBER_CFLAGS, EMBER_MARCH) are stale too
            flags_file = Path(self.build_temp) / "compile_flags.txt"
            flags_now = " ".join(cc_args + extra_postargs)
            same_flags = flags_file.exists() and flags_file.read_text() == flags_now
            todo = [(obj, src_ext) for obj, src_ext in build.items()
                    if not (same_flags and up_to_date(Path(obj), Path(src_ext[0])))]
            print(f"ember: compiling {len(todo)} of {len(build)} translation units", flush=True)

            def one(item):
                obj, (src, ext_) = item
                compiler._compile(obj, src, ext_, cc_args, extra_postargs + ["-MMD", "-MF", obj + ".d"], pp_opts)

            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                for _ in pool.map(one, todo):
                    pass
            flags_file.write_text(flags_now)
            return objects

        compiler.compile = parallel_compile
        for attr in ("compiler_so", "compiler_so_cxx"):  # drop Python's -g: debug info triples build time
            if hasattr(compiler, attr):
                setattr(compiler, attr, [f for f in getattr(compiler, attr) if f not in ("-g", "-O2")])
        super().build_extension(ext)


setup(
    ext_modules=[Extension("ember._C", sources=["csrc/python/module.cpp"], language="c++")],
    cmdclass={"build_ext": BuildExt},
)
