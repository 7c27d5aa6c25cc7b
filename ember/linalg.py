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
from . import _autocast

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
_eig = _structseq("linalg_eig", "_eig", ["eigenvalues", "eigenvectors"])

cross = _C.linalg_cross
inv = _C.linalg_inv
solve = _C.linalg_solve
det = _C.linalg_det
cholesky = _C.linalg_cholesky
svdvals = _C.linalg_svdvals
eigvalsh = _C.linalg_eigvalsh
eigvals = _C.linalg_eigvals
vector_norm = _C.linalg_vector_norm  # declarations/ops/reductions.yaml


def _named(kind, results, out):
    """The named tuple of results, or with out=: the results written into the out tensors
    (each of the result's dtype; resized as out= tensors are), in the named tuple."""
    if out is None:
        return kind(results)
    if not isinstance(out, (tuple, list)) or not all(isinstance(t, _C.TensorBase) for t in out):
        raise TypeError(f"{kind.__name__}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if len(out) != len(results):
        raise TypeError(f"expected tuple of {len(results)} elements but got {len(out)}")
    for o, r in zip(out, results):
        if o.dtype != r.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {_type_name(r.dtype, True)}, but got "
                               f"{_type_name(o.dtype, True)} instead")
    return kind(tuple(_into(o, r, None) for o, r in zip(out, results)))


def slogdet(A, *, out=None):
    """(sign, logabsdet) of each square matrix of A; sign is 0 for a singular matrix.

    >>> ember.linalg.slogdet(ember.tensor([[-2., 0.], [0., 1.]])).sign.item()
    -1.0
    """
    return _named(_slogdet, _C.linalg_slogdet(A), out)


@_autocast.fp32
def qr(A, mode="reduced", *, out=None):
    """(Q, R) with A = Q @ R; mode 'reduced', 'complete' or 'r'.

    >>> ember.linalg.qr(ember.ones(4, 3)).R.shape
    ember.Size([3, 3])
    """
    return _named(_qr, _C.linalg_qr(A, mode), out)


@_autocast.fp32
def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U @ diag(S) @ Vh, S descending.

    >>> ember.linalg.svd(ember.ones(4, 3), full_matrices=False).U.shape
    ember.Size([4, 3])
    """
    return _named(_svd, _C.linalg_svd(A, full_matrices, driver=driver), out)


def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric matrix.

    >>> ember.linalg.eigh(ember.tensor([[2., 0.], [0., 1.]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    return _named(_eigh, _C.linalg_eigh(A, UPLO), out)


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors as columns of unit norm) of a general square matrix;
    complex for a real input too.

    >>> ember.linalg.eig(ember.tensor([[2., 0.], [0., 1.]])).eigenvalues.tolist()
    [(2+0j), (1+0j)]
    """
    return _named(_eig, _C.linalg_eig(A), out)


# torch's names of dtypes in messages: the ScalarType ("Float") and the C++ type ("float").
_TYPE_NAMES = {"float32": ("Float", "float"), "float64": ("Double", "double"), "float16": ("Half", "c10::Half"),
               "bfloat16": ("BFloat16", "c10::BFloat16"), "int64": ("Long", "long int"), "int32": ("Int", "int"),
               "int16": ("Short", "short int"), "int8": ("Char", "signed char"), "uint8": ("Byte", "unsigned char"),
               "bool": ("Bool", "bool"), "complex64": ("ComplexFloat", "c10::complex<float>"),
               "complex128": ("ComplexDouble", "c10::complex<double>")}


def _type_name(dtype, cpp=False):
    return _TYPE_NAMES[str(dtype).removeprefix("ember.")][1 if cpp else 0]


def _into(out, result, message):
    """torch's out= for a result computed apart: out must have the result's dtype
    (message(expected, got) says otherwise); a non-empty out of another shape is resized
    with torch's warning; then the result is copied in. Returns out."""
    if out.dtype != result.dtype:
        raise RuntimeError(message(result.dtype, out.dtype))
    if out.shape != result.shape:
        if out.numel() != 0:
            import warnings

            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(result.shape)
    return out.copy_(result)


def _check_square(A, fn):
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def matrix_power(A, n):
    """A @ A @ ... (n times) by repeated squaring; n = 0 gives the identity and n < 0 the
    powers of inv(A).

    >>> ember.linalg.matrix_power(ember.tensor([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    """
    _check_square(A, "linalg.matrix_power")
    if n == 0:
        return _C.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    result = None
    while True:  # binary powers: log2(n) squarings
        if n & 1:
            result = A if result is None else _C.matmul(result, A)
        n >>= 1
        if not n:
            return result.clone() if result is A else result
        A = _C.matmul(A, A)


def _adjoint(A):
    """The conjugate transpose of each matrix (the transpose of a real one)."""
    return _C.conj(A.transpose(-2, -1))


def _tolerance(largest, atol, rtol, shape):
    """The singular values at most this count as zero in pinv and matrix_rank:
    max(atol, rtol * largest), rtol defaulting to eps * max(m, n) (to 0 when only atol is
    given). largest: (..., 1), the largest singular value of each matrix."""
    from ._finfo import finfo

    if rtol is None:
        rtol = 0.0 if atol is not None else finfo(largest.dtype).eps * max(shape[-2], shape[-1])
    tol = _C.mul(largest, rtol)
    if atol is not None:
        tol = _C.maximum(tol, atol.unsqueeze(-1) if isinstance(atol, _C.TensorBase) else _C.full_like(tol, atol))
    return tol


def _largest(S, hermitian):
    """(..., 1): the largest of each row of S, singular values (descending) or, when
    hermitian, |eigenvalues| of ascending eigenvalues (the largest is at one end)."""
    if S.shape[-1] == 0:
        return S
    first = S.narrow(-1, 0, 1)
    return _C.maximum(first, S.narrow(-1, S.shape[-1] - 1, 1)) if hermitian else first


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse, from the SVD (singular values at most
    max(atol, rtol * largest) count as zero).

    >>> ember.linalg.pinv(ember.tensor([[2., 0.], [0., 0.]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    U, S, Vh = svd(A, full_matrices=False)
    keep = _C.gt(S, _tolerance(_largest(S, False), atol, rtol, A.shape))
    S_inv = _C.where(keep, _C.reciprocal(S), _C.zeros_like(S))
    # (n, k) * (k,) @ (k, m)
    return _C.matmul(_C.mul(_adjoint(Vh), S_inv.unsqueeze(-2)), _adjoint(U))


@_autocast.fp32
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol * largest), as int64.

    >>> ember.linalg.matrix_rank(ember.ones(3, 3)).item()
    1
    """
    S = _C.abs(eigvalsh(A)) if hermitian else svdvals(A)
    above = _C.gt(S, _tolerance(_largest(S, hermitian), atol, rtol, A.shape)).to(_C.int64)
    return _C.matmul(above, _C.ones(S.shape[-1], dtype=_C.int64, device=S.device))


def tensordot(a, b, dims=2, out=None):
    """Sums the products of a's and b's elements over the dims listed in dims (an int n:
    a's last n against b's first n; or two lists).

    >>> ember.tensordot(ember.ones(2, 3, 4), ember.ones(3, 4, 5)).shape
    ember.Size([2, 5])
    """
    if out is not None:
        return _into(out, tensordot(a, b, dims), lambda want, got: (
            f"tensordot: Expected the output tensor to have dtype {_type_name(want)}, but got an output tensor "
            f"with dtype {_type_name(got)}"))
    if isinstance(dims, _C.TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = dims
        if isinstance(dims_a, int) or isinstance(dims_b, int):
            raise TypeError("tensordot(): dims must be an int or a pair of lists of dims, e.g. ([1], [0])")
        dims_a, dims_b = list(dims_a), list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")
    wa = [d % a.dim() for d in dims_a]
    wb = [d % b.dim() for d in dims_b]
    free_a = [d for d in range(a.dim()) if d not in wa]
    free_b = [d for d in range(b.dim()) if d not in wb]
    k = 1
    for d in wa:
        k *= a.shape[d]
    size_a = [a.shape[d] for d in free_a]
    size_b = [b.shape[d] for d in free_b]
    m = n = 1
    for s in size_a:
        m *= s
    for s in size_b:
        n *= s
    # (free_a..., contracted...) @ (contracted..., free_b...) as one (m, k) @ (k, n)
    left = a.permute(free_a + wa).reshape(m, k)
    right = b.permute(wb + free_b).reshape(k, n)
    return _C.mm(left, right).reshape(size_a + size_b)


def _sum_dim(t, d):
    """t summed over dim d (a product with ones: reductions live elsewhere)."""
    return _C.matmul(t.movedim(d, -1), _C.ones(t.shape[d], dtype=t.dtype, device=t.device))


def einsum(equation, *operands):
    """Einstein summation: 'ij,jk->ik' multiplies matrices; labels repeated across
    operands are multiplied along, labels missing from the output are summed, '...'
    stands for broadcast dims. Contracts left to right, each pair as one bmm.

    >>> ember.einsum('ij,jk->ik', ember.ones(2, 3), ember.ones(3, 4)).shape
    ember.Size([2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    # '...' becomes labels of their own, aligned from the right across operands
    n_ell = 0
    for term, op in zip(terms, operands):
        if "..." in term:
            n_ell = max(n_ell, op.dim() - (len(term) - 3))
    ell = [chr(0x100 + i) for i in range(n_ell)]

    def labels_of(term, ndim, where):
        letters = term.replace("...", "")
        if "..." in term:
            count = ndim - len(letters)
            if count < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) is more "
                                   f"than the number of dimensions ({ndim}) for operand {where}")
            before, _, after = term.partition("...")
            return list(before) + ell[n_ell - count:] + list(after)
        if len(letters) != ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) does not match "
                               f"the number of dimensions ({ndim}) for operand {where} and no ellipsis was given")
        return list(letters)

    items = []  # (tensor, labels), repeated labels within one operand taken as diagonals
    sizes, counts = {}, {}
    for i, (term, op) in enumerate(zip(terms, operands)):
        labels = labels_of(term, op.dim(), i)
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        for label in dict.fromkeys(labels):
            while labels.count(label) > 1:
                d1 = labels.index(label)
                d2 = labels.index(label, d1 + 1)
                if op.shape[d1] != op.shape[d2]:
                    raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {i} but the sizes "
                                       f"don't match, {op.shape[d2]} != {op.shape[d1]}")
                op = op.diagonal(0, d1, d2)  # the diagonal becomes the last dim
                labels = [x for j, x in enumerate(labels) if j not in (d1, d2)] + [label]
        for label, size in zip(labels, op.shape):
            seen = sizes.get(label, 1)
            if seen != 1 and size != 1 and seen != size:
                raise RuntimeError(f"einsum(): subscript {label} has size {size} for operand {i} which does not "
                                   f"broadcast with previously seen size {seen}")
            sizes[label] = size if seen == 1 else seen  # size 1 broadcasts
        items.append((op, labels))
    if arrow:
        out = list(rhs.replace("...", "".join(ell))) if "..." in rhs else list(rhs)
        for label in out:
            if label not in sizes:
                raise RuntimeError(f"einsum(): output subscript {label} does not appear in the equation for any "
                                   "input operand")
    else:  # implicit output: the ellipsis, then the labels used once, sorted
        out = ell + sorted(x for x in counts if counts[x] == 1 and x not in ell)

    def full(t, labels, keep):
        """t with labels summed out unless in keep, each kept dim expanded to its size."""
        for label in [x for x in labels if x not in keep]:
            t = _sum_dim(t, labels.index(label))
            labels = [x for x in labels if x != label]
        return t, labels

    t, labels = items[0]
    for i in range(1, len(items)):
        u, ulabels = items[i]
        later = set(out).union(*(set(lb) for _, lb in items[i + 1:]))
        t, labels = full(t, labels, later | set(ulabels))
        u, ulabels = full(u, ulabels, later | set(labels))
        batch = [x for x in labels if x in ulabels and x in later]
        contract = [x for x in labels if x in ulabels and x not in later]
        left = [x for x in labels if x not in ulabels]
        right = [x for x in ulabels if x not in labels]

        def arrange(x, xl, order):
            x = x.permute([xl.index(lb) for lb in order])
            return x.expand([sizes[lb] if x.shape[j] == 1 else x.shape[j] for j, lb in enumerate(order)])

        def prod(group):
            p = 1
            for lb in group:
                p *= sizes[lb]
            return p

        a = arrange(t, labels, batch + left + contract).reshape(prod(batch), prod(left), prod(contract))
        b = arrange(u, ulabels, batch + contract + right).reshape(prod(batch), prod(contract), prod(right))
        t = _C.bmm(a, b).reshape([sizes[lb] for lb in batch + left + right])
        labels = batch + left + right
    t, labels = full(t, labels, set(out))
    t = t.permute([labels.index(lb) for lb in out]) if out else t
    return t.expand([sizes[lb] for lb in out]) if out and list(t.shape) != [sizes[lb] for lb in out] else t


# ---------------------------------------------------------------- norms
_MATRIX_ORDS = ("fro", "nuc", float("inf"), float("-inf"), 1, -1, 2, -2)


def _matrix_dims(A, dim, fn):
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.dtype in (_C.float16, _C.bfloat16) or not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {A.dtype}")
    if len(dim) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = (d if d >= 0 else d + A.dim() for d in dim)
    for d in (d0, d1):
        if not 0 <= d < A.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-A.dim()}, {A.dim() - 1}], "
                             f"but got {dim[0] if d == d0 else dim[1]})")
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _check_norm_dtype(A, dtype, fn):
    """torch refuses a dtype= that narrows the input (float64 -> float32)."""
    if dtype is not None and dtype.is_complex != A.is_complex():
        kind = "complex for complex" if A.is_complex() else "real for real"
        raise RuntimeError(f"{fn}: dtype should be {kind} inputs, but got {_type_name(dtype)}")
    if dtype is not None and _C.promote_types(A.dtype, dtype) != dtype:
        raise RuntimeError(f"{fn}: the dtype of the input ({A.dtype}) should be convertible without narrowing to the "
                           f"specified dtype ({dtype})")


def _norm_out_message(fn):
    return lambda want, got: f"{fn} expected out tensor dtype {_type_name(want)} but got: {_type_name(got)}"


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The ord-norm of the matrices of A (in dims dim): 'fro', 'nuc' (sum of singular
    values), inf/-inf (max/min row sum of |A|), 1/-1 (max/min column sum), 2/-2
    (largest/smallest singular value).

    >>> ember.linalg.matrix_norm(ember.tensor([[1., -2.], [3., 4.]]), 1).item()
    6.0
    """
    if out is not None:
        return _into(out, matrix_norm(A, ord, dim, keepdim, dtype=dtype), _norm_out_message("linalg.matrix_norm"))
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d0, d1 = _matrix_dims(A, list(dim), "linalg.matrix_norm")
    _check_norm_dtype(A, dtype, "linalg.matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):  # singular values: the matrices moved to the last two dims
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        return r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1)) if keepdim else r
    if ord in (1, -1):  # column sums: |A| summed over rows
        d0, d1 = d1, d0
    sums = A.abs().sum(d1, keepdim=True)
    r = sums.amax(d0, keepdim=True) if ord > 0 else sums.amin(d0, keepdim=True)
    return r if keepdim else r.squeeze((d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """A vector norm (dim an int, or A 1-D) or a matrix norm (dim a pair, or A 2-D) of A;
    with neither ord nor dim, the 2-norm of all elements.

    >>> ember.linalg.norm(ember.tensor([[3., 4.]])).item()
    5.0
    """
    if out is not None:
        return _into(out, norm(A, ord, dim, keepdim, dtype=dtype), _norm_out_message("linalg.norm"))
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or dim is None and ord is not None and A.dim() == 2:
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if dim is None and ord is not None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord}")
    if dim is not None and len(dim) != 1:
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    _check_norm_dtype(A, dtype, "linalg.vector_norm")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def _norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm / Tensor.norm: 'fro' and 'nuc' here, numeric p in the native norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(p, str):
        if out is not None:
            message = _norm_out_message("linalg.matrix_norm") if p == "nuc" else lambda want, got: (
                f"Expected out tensor to have dtype {_type_name(want, True)}, but got {_type_name(got, True)} instead")
            return _into(out, _norm(input, p, dim, keepdim, dtype=dtype), message)
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        if p == "nuc":
            return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
        raise RuntimeError(f"norm(): invalid norm type {p!r} for dim {dim}")
    args = {} if out is None else {"out": out}
    return _C.norm(input, p, dim, keepdim, dtype=dtype, **args)


# ---------------------------------------------------------------- least squares, products
_lstsq = _structseq("linalg_lstsq", "_lstsq", ["solution", "residuals", "rank", "singular_values"])
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@_autocast.fp32
def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values): X minimizing ||A @ X - B|| (the
    least-norm X when A has more columns than rows), from the SVD of A. As torch on the
    CPU: residuals (squared, per column of B) only for m > n with full rank and a driver
    other than 'gelsy' (the default); singular values only for 'gelsd' and 'gelss'; rank
    for every driver but 'gels'.

    >>> ember.linalg.lstsq(ember.tensor([[1., 0.], [0., 2.], [0., 0.]]), ember.tensor([1., 2., 3.])).solution.tolist()
    [1.0, 1.0]
    """
    fn = "torch.linalg.lstsq"
    if driver is not None and driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    driver = driver or "gelsy"
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if not (A.dim() >= B.dim() and A.dim() - B.dim() <= 1):
        raise RuntimeError(f"{fn}: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but got input's dtype "
                           f"{A.dtype} and other's dtype {B.dtype}")
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (_C.float16, _C.bfloat16):
        raise RuntimeError("This function doesn't handle types other than float and double")
    vector = B.dim() == A.dim() - 1
    b = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if b.shape[-2] != m:
        raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-2)")
    U, S, Vh = svd(A, full_matrices=False)
    from ._finfo import finfo

    tol = finfo(S.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    keep = _C.gt(S, _C.mul(_largest(S, False), tol)) if S.shape[-1] else _C.gt(S, 0)
    S_inv = _C.where(keep, _C.reciprocal(S), _C.zeros_like(S))
    # X = V diag(S_inv) U^T b: (..., n, k) * (k,) @ (..., k, m) @ (..., m, nrhs)
    X = _C.matmul(_C.mul(_adjoint(Vh), S_inv.unsqueeze(-2)), _C.matmul(_adjoint(U), b))
    rank = keep.to(_C.int64).sum(-1)
    if b.numel() == 0:  # torch skips LAPACK: rank 0
        rank = _C.zeros_like(rank)
    empty = _C.empty(0, dtype=S.dtype, device=A.device)
    residuals = empty
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        residuals = (_C.matmul(A, X) - b).abs().pow(2).sum(-2)  # real for complex A too
    solution = X.squeeze(-1) if vector else X
    return _lstsq((solution, residuals, _C.empty(0, dtype=_C.int64, device=A.device) if driver == "gels" else rank,
                   S if driver in ("gelsd", "gelss") else empty))


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first may be a row vector, the last a
    column vector: 1-D), multiplied in the cheapest order for three, else left to right.

    >>> ember.linalg.multi_dot([ember.ones(3), ember.ones(3, 2), ember.ones(2)]).item()
    6.0
    """
    if out is not None:
        return _into(out, multi_dot(tensors), lambda want, got: (
            f"multi_dot(): expected out tensor to have dtype {_type_name(want, True)} but got {_type_name(got, True)}"))
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, n - 1) else (2,)
        if t.dim() not in allowed:
            what = "first and last tensors" if i in (0, n - 1) else f"tensor {i}"
            raise RuntimeError(f"multi_dot(): {what} must be 1D or 2D but got {t.dim()}D" if i in (0, n - 1)
                               else f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
        if t.dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{first.dtype} and tensor {i} {t.dtype}")
    mats = [first.unsqueeze(0) if first.dim() == 1 else first] + list(tensors[1:-1]) + \
        [last.unsqueeze(-1) if last.dim() == 1 else last]
    for i in range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(mats[i].shape)} and "
                               f"{tuple(mats[i + 1].shape)} cannot be multiplied")
    result = mats[0]
    for t in mats[1:]:
        result = _C.mm(result, t)
    if first.dim() == 1:
        result = result.squeeze(0)
    if last.dim() == 1:
        result = result.squeeze(-1)
    return result


# ---------------------------------------------------------------- torch's top-level names
def _logdet(input):
    """log(det(input)): nan for a negative determinant, -inf for a singular matrix."""
    sign, logabs = slogdet(input)
    if sign.is_complex():  # log|det| + i arg(det)
        return _C.add(logabs.to(sign.dtype), _C.mul(_C.angle(sign), 1j))
    return _C.where(_C.lt(sign, 0), _C.full_like(logabs, float("nan")), logabs)


@_autocast.fp32
def _pinverse(input, rcond=1e-15):
    """pinv with singular values at most rcond * the largest counted as zero."""
    return pinv(input, rtol=rcond)


_slogdet_top = _structseq("slogdet", "_slogdet_top", ["sign", "logabsdet"])
_RETURN_TYPES = (_slogdet, _qr, _svd, _eigh, _eig, _lstsq, _slogdet_top)  # ember.return_types names them too


def _slogdet_tuple(input):
    return _slogdet_top(_C.linalg_slogdet(input))


def _chain_matmul(*matrices, out=None):
    """The product of 2-D matrices (deprecated in torch for linalg.multi_dot)."""
    if len(matrices) == 1:
        if matrices[0].dim() != 2:
            raise RuntimeError(f"chain_matmul(): Expected matrix 0 to be 2-D, but got {matrices[0].dim()}-D")
        return matrices[0].clone()
    for i, m in enumerate(matrices):
        if m.dim() != 2:
            raise RuntimeError(f"chain_matmul(): Expected all tensors to be 2-D, but tensor {i} is {m.dim()}-D")
    return multi_dot(list(matrices), out=out)


# name -> function for ember's namespace and (with the same argument order) Tensor methods
TOP_LEVEL = {"det": det, "inverse": inv, "slogdet": _slogdet_tuple, "logdet": _logdet, "pinverse": _pinverse,
             "matrix_power": matrix_power}

# ---------------------------------------------------------------- factorizations and solvers
# LU, triangular and Cholesky solves, the *_ex forms, Householder, LDL, matrix_exp, cond,
# tensorinv/tensorsolve: ember/_linalg_factor.py.
from . import _linalg_factor  # noqa: E402
from ._linalg_factor import (cholesky_ex, cond, householder_product, inv_ex, ldl_factor,  # noqa: E402
                             ldl_factor_ex, ldl_solve, lu, lu_factor, lu_factor_ex, lu_solve, matrix_exp, solve_ex,
                             solve_triangular, tensorinv, tensorsolve)
from ._linalg_factor import _ldl_factor, _lu, _lu_factor, _lu_with_info, _triangular_solve_t  # noqa: E402,F401

_RETURN_TYPES += _linalg_factor.RETURN_TYPES
TOP_LEVEL.update(_linalg_factor.TOP_LEVEL)

# matmul, diagonal, vecdot, vander: compositions kept with torch's other shape names
from ._ops_shape import LINALG as _SHAPE_NAMES  # noqa: E402

globals().update(_SHAPE_NAMES)


def __getattr__(name):
    from ._ops_shape import missing_attribute

    raise missing_attribute(__name__, name, "torch.linalg")  # says so when torch has the name
