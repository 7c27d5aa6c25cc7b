"""ember.__config__.show(): how this ember was built and how it runs."""
from __future__ import annotations


def _blas() -> str:
    try:
        from importlib.metadata import version

        return f"OpenBLAS from scipy-openblas32 {version('scipy-openblas32')} (loaded on first use)"
    except Exception:  # not installed: the BLAS-backed ops will say so when called
        return "scipy-openblas32 not installed"


def show() -> str:
    from . import __version__, _C, get_num_threads

    cfg = _C._build_config()
    return "\n".join([
        f"ember {__version__}",
        f"  - C++ compiler: g++ {cfg['compiler']} (C++ standard {cfg['cpp_standard']})",
        f"  - compiler flags: {cfg['compiler_flags']}",
        f"  - BLAS: {_blas()}",
        f"  - intra-op threads: {get_num_threads()} (ember's own pool; sleeping workers, no spin-wait)",
        "",
    ])


def parallel_info() -> str:
    from . import get_num_threads

    return f"ember's thread pool: {get_num_threads()} threads\n"
