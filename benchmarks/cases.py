"""The benchmark cases: one table row each.

A setup receives the library module (ember, torch or numpy), builds its inputs, and
returns the zero-argument callable to time, or None when the library lacks the op.
ember's API is torch's, so `ember` defaults to the torch setup: write the torch
version as if `import ember as torch`, and give `ember=` only where they must differ.

Adding a case is a setup function (or a lambda) per API and one row in CASES:

    def matmul_1024(lib):  # torch and numpy spell this one alike
        a = lib.ones((1024, 1024), dtype=lib.float32)
        return lambda: a @ a

    Case("matmul 1024²", torch=matmul_1024, numpy=matmul_1024, flops=2 * 1024**3)

`bytes=` (memory traffic per call) reports GB/s, `flops=` reports GFLOP/s; without
either the report shows time per call. Inputs are built with ones/full rather than
zeros so their pages are really written before timing (zeroed memory can be backed by
one shared page). A setup that raises AttributeError or NotImplementedError, or whose
callable does, shows the op as missing ("n/a") for that library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

Setup = Callable[[object], Optional[Callable[[], object]]]
LIBRARIES = ("ember", "torch", "numpy")


def SAME_AS_TORCH(module):
    """Default for Case.ember: use the case's torch setup (a marker, never called)."""
    raise AssertionError("SAME_AS_TORCH is a marker, not a setup")


@dataclass(frozen=True)
class Case:
    name: str
    torch: Setup | None = None
    numpy: Setup | None = None
    ember: Setup | None = SAME_AS_TORCH
    bytes: int = 0  # memory read + written per call -> report GB/s
    flops: int = 0  # floating point operations per call -> report GFLOP/s
    # Measures fresh processes instead of an in-process callable (import time).
    import_time: bool = False

    def setup_for(self, library: str) -> Setup | None:
        if library == "ember" and self.ember is SAME_AS_TORCH:
            return self.torch
        return getattr(self, library)


# --- setups --------------------------------------------------------------------------

def tensor_3(torch):
    return lambda: torch.tensor([1.0, 2.0, 3.0])


def array_3(np):
    return lambda: np.array([1.0, 2.0, 3.0], dtype=np.float32)


def ten_floats(lib):
    return lib.ones(10, dtype=lib.float32)  # torch and numpy spell this alike


def read_first(lib):
    x = ten_floats(lib)
    return lambda: x[0]


def write_first(lib):
    x = ten_floats(lib)

    def write():
        x[0] = 1

    return write


def view_flat(torch):
    x = torch.ones(2, 3)
    return lambda: x.view(-1)


def reshape_flat(np):
    x = np.ones((2, 3), dtype=np.float32)
    return lambda: x.reshape(-1)


N_T = 4096  # square float32 matrix for the transpose copy


def transpose_copy(torch):
    x = torch.ones(N_T, N_T, dtype=torch.float32)
    return lambda: x.t().contiguous()


def transpose_copy_numpy(np):
    x = np.ones((N_T, N_T), dtype=np.float32)
    return lambda: np.ascontiguousarray(x.T)


N_CAST = 16 * 2**20  # float32 elements cast to float64


def cast_f64(torch):
    x = torch.ones(N_CAST, dtype=torch.float32)
    return lambda: x.to(torch.float64)


def cast_f64_numpy(np):
    x = np.ones(N_CAST, dtype=np.float32)
    return lambda: x.astype(np.float64)


# --- the table -------------------------------------------------------------------------

CASES: list[Case] = [
    Case("import", import_time=True),
    Case("tensor([1., 2., 3.])", torch=tensor_3, numpy=array_3),
    Case("x[0] read (10 floats)", torch=read_first, numpy=read_first),
    Case("x[0] = 1 (10 floats)", torch=write_first, numpy=write_first),
    Case("view(-1) on 2x3", torch=view_flat, numpy=reshape_flat),
    Case("t().contiguous() 4096²", torch=transpose_copy, numpy=transpose_copy_numpy,
         bytes=2 * 4 * N_T * N_T),
    Case("to(float64) 16M float32", torch=cast_f64, numpy=cast_f64_numpy,
         bytes=(4 + 8) * N_CAST),
]
