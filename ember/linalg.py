"""ember.linalg: torch.linalg's functions. The native ones are the `linalg_*` ops of
declarations/ops/linalg.yaml; those returning several tensors are wrapped here in
named tuples (sign/logabsdet, Q/R, U/S/Vh, eigenvalues/eigenvectors) as torch's
torch.return_types are.

OpenBLAS (the scipy-openblas32 package) is loaded on the first product or
factorization, never at import: the native loader asks _blas_library_path() for it.
"""
from __future__ import annotations

import operator as _operator

from . import _C

# torch.linalg.LinAlgError: a RuntimeError raised for a singular or not positive-definite
# input (C++ ember::LinAlgError, core/linalg_error.h).
LinAlgError = _C._LinAlgError
LinAlgError.__module__ = "ember.linalg"
LinAlgError.__qualname__ = LinAlgError.__name__ = "LinAlgError"


def _blas_library_path():
    """The path of OpenBLAS's shared library, or None (called once, from C++)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("scipy_openblas32")  # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        lib = os.path.join(folder, "lib")
        if os.path.isdir(lib):
            for name in sorted(os.listdir(lib)):
                if name.startswith("libscipy_openblas") and (".so" in name or name.endswith(".dylib")):
                    return os.path.join(lib, name)
    return None


def _structseq(name, attribute, fields):
    """A tuple type with named fields, built from one sequence as torch's return types
    are (a class statement, not collections.namedtuple: that costs ~0.3 ms at import)."""

    def __new__(cls, values):
        values = tuple(values)
        if len(values) != len(fields):
            raise TypeError(f"{name}() takes a {len(fields)}-sequence ({len(values)}-sequence given)")
        return tuple.__new__(cls, values)

    def __repr__(self):
        inner = ", ".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"ember.return_types.{name}({inner})"

    def __reduce__(self):
        return type(self), (tuple(self),)

    namespace = {"__slots__": (), "__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
                 "_fields": tuple(fields), "n_fields": len(fields), "n_sequence_fields": len(fields),
                 "__module__": __name__, "__qualname__": attribute}  # pickle finds it here
    for i, f in enumerate(fields):
        namespace[f] = property(_operator.itemgetter(i))
    return type(name, (tuple,), namespace)


_slogdet = _structseq("linalg_slogdet", "_slogdet", ["sign", "logabsdet"])
_qr = _structseq("linalg_qr", "_qr", ["Q", "R"])
_svd = _structseq("linalg_svd", "_svd", ["U", "S", "Vh"])
_eigh = _structseq("linalg_eigh", "_eigh", ["eigenvalues", "eigenvectors"])

cross = _C.linalg_cross
inv = _C.linalg_inv
solve = _C.linalg_solve
det = _C.linalg_det
cholesky = _C.linalg_cholesky
svdvals = _C.linalg_svdvals
eigvalsh = _C.linalg_eigvalsh


def slogdet(A):
    """(sign, logabsdet) of each square matrix of A; sign is 0 for a singular matrix.

    >>> ember.linalg.slogdet(ember.tensor([[-2., 0.], [0., 1.]])).sign.item()
    -1.0
    """
    return _slogdet(_C.linalg_slogdet(A))


def qr(A, mode="reduced"):
    """(Q, R) with A = Q @ R; mode 'reduced', 'complete' or 'r'.

    >>> ember.linalg.qr(ember.ones(4, 3)).R.shape
    ember.Size([3, 3])
    """
    return _qr(_C.linalg_qr(A, mode))


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U @ diag(S) @ Vh, S descending.

    >>> ember.linalg.svd(ember.ones(4, 3), full_matrices=False).U.shape
    ember.Size([4, 3])
    """
    return _svd(_C.linalg_svd(A, full_matrices, driver=driver))


def eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric matrix.

    >>> ember.linalg.eigh(ember.tensor([[2., 0.], [0., 1.]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    return _eigh(_C.linalg_eigh(A, UPLO))
