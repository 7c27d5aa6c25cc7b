"""Sparse COO tensors (layout=ember.sparse_coo), and the class and routing that sparse CSR
tensors (ember/_sparse_csr.py) share with them.

A sparse tensor is a SparseTensor: a Tensor subclass over a native shell (a TensorImpl
with its sizes and dtype and no elements: strides 0 over an empty storage) whose indices
(sparse_dim x nnz, int64) and values (nnz, *dense_sizes) are plain tensors held here.
Every generated op that meets a shell calls the implementation registered in LAYOUT_OPS
under its Python name, or raises torch's NotImplementedError for the SparseCPU backend
(Note [Sparse tensors are routed before parsing], csrc/python/arg_parser.h).

Autograd runs on the values: ops are compositions of dense ops on them (coalesce and
to_dense are index_add, the products an autograd Function over the native CSR kernels),
so a gradient reaches values given to sparse_coo_tensor, and a sparse leaf (made with
requires_grad=True) reads its .grad from its values' gradient.

Sparse CSR tensors are instances of the same class (the native routing compares exact
types), with _sp_layout = sparse_csr and (crow, col, values) in place of (indices, values):
the methods whose behaviour differs ask ember._sparse_csr, and the table given to the native
routing sends a call to the layout's implementation (COO_OPS here, CSR_OPS there), or raises
torch's NotImplementedError for that layout's backend (SparseCPU, SparseCsrCPU).
"""
from __future__ import annotations

import math

import ember
from . import _C
from ._constants import sparse_coo, sparse_csr
from ._tensor import Tensor
from .autograd import Function

__all__ = ["SparseTensor", "sparse_coo_tensor", "spmm"]


def _unsupported(name, backend="SparseCPU"):
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build).")


def _make(indices, values, size, coalesced, cache=None):
    t = _C._sparse_shell(SparseTensor, tuple(size), values.dtype)
    t._sp_indices = indices
    t._sp_values = values
    t._sp_coalesced = bool(coalesced)
    t._sp_cache = {} if cache is None else cache  # index work shared by tensors of one pattern
    return t


def _strides(sizes):
    out, acc = [], 1
    for n in reversed(sizes):
        out.append(acc)
        acc *= n
    return out[::-1]


def _linear(indices, sizes):
    """Each column of indices as one int64 key, row-major over sizes."""
    key = ember.zeros(indices.shape[1], dtype=ember.int64)
    for d, s in enumerate(_strides(sizes)):
        key = key + indices[d] * s
    return key


def _unravel(key, sizes):
    if not sizes:
        return ember.zeros((0, key.numel()), dtype=ember.int64)
    return ember.stack([(key // s) % n for s, n in zip(_strides(sizes), sizes)])


def _scatter_dense(indices, values, sparse_sizes, shape):
    """The dense tensor of shape holding values (n, *dense sizes) at indices (len(sparse_sizes)
    x n), duplicates summed: an index_add, so gradients reach values."""
    flat = ember.zeros((math.prod(sparse_sizes),) + tuple(values.shape[1:]), dtype=values.dtype)
    return flat.index_add(0, _linear(indices, sparse_sizes), values).reshape(shape)


def _per_layout(method):
    """A method whose CSR behaviour is ember._sparse_csr.METHODS[its name]."""
    name = method.__name__

    def run(self, *args, **kwargs):
        if self._sp_layout is sparse_coo:
            return method(self, *args, **kwargs)
        return _sparse_csr.METHODS[name](self, *args, **kwargs)
    run.__name__, run.__doc__ = name, method.__doc__
    return run


class SparseTensor(Tensor):
    """A sparse tensor (torch's Tensor with layout=torch.sparse_coo or torch.sparse_csr)."""

    _sp_layout = sparse_coo  # a CSR tensor sets its own

    # ---- structure ----

    @property
    def layout(self):
        return self._sp_layout

    @property
    def is_sparse(self):
        return self._sp_layout is sparse_coo

    @property
    def is_sparse_csr(self):
        return self._sp_layout is sparse_csr

    @_per_layout
    def sparse_dim(self):
        return self._sp_indices.shape[0]

    @_per_layout
    def dense_dim(self):
        return self._sp_values.dim() - 1

    @_per_layout
    def _nnz(self):
        return self._sp_values.shape[0]

    @_per_layout
    def _indices(self):
        return self._sp_indices

    @_per_layout
    def _values(self):
        return self._sp_values

    @_per_layout
    def indices(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_indices

    @_per_layout
    def values(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_values

    @_per_layout
    def crow_indices(self):
        raise RuntimeError("crow_indices expected sparse row compressed tensor layout but got Sparse")

    @_per_layout
    def col_indices(self):
        raise RuntimeError("col_indices expected sparse row compressed tensor layout but got Sparse")

    @_per_layout
    def is_coalesced(self):
        return self._sp_coalesced

    def _sparse_sizes(self):
        return list(self.shape[:self.sparse_dim()])

    def _coalesced_parts(self):
        """(indices, values) of the coalesced tensor: the index work is cached, the values
        are recomputed (an index_add, so gradients flow back to these values)."""
        if self._sp_coalesced:
            return self._sp_indices, self._sp_values
        found = self._sp_cache.get("coalesce")
        if found is None:
            sizes = self._sparse_sizes()
            uniq, inverse = ember.unique(_linear(self._sp_indices, sizes), sorted=True, return_inverse=True)
            found = self._sp_cache["coalesce"] = (_unravel(uniq, sizes), inverse)
        indices, inverse = found
        values = self._sp_values
        out = ember.zeros((indices.shape[1],) + tuple(values.shape[1:]), dtype=values.dtype)
        return indices, out.index_add(0, inverse, values)

    @_per_layout
    def coalesce(self):
        if self._sp_coalesced:
            return self
        indices, values = self._coalesced_parts()
        return _make(indices, values, self.shape, True, self._sp_cache.setdefault("coalesced", {}))

    @_per_layout
    def to_dense(self, dtype=None, *, masked_grad=None):
        out = _scatter_dense(self._sp_indices, self._sp_values, self._sparse_sizes(), self.shape)
        return out if dtype is None else out.to(dtype)

    def to_sparse_csr(self, dense_dim=None):
        return _sparse_csr.to_sparse_csr(self, dense_dim)

    @_per_layout
    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        if layout is sparse_csr:
            return self.to_sparse_csr(dense_dim)
        if layout not in (None, sparse_coo):
            raise RuntimeError(f"to_sparse: ember has no {layout} layout")
        sparse_dim = args[0] if args else None
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse for sparse_dim argument != self.sparse_dim()"
                               " is only supported for dense_dim == 0")
        return self

    # ---- autograd: it runs on the values ----

    @property
    def requires_grad(self):
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        values = self._sp_values
        if values.is_leaf:
            if requires_grad and not values.requires_grad and not values.dtype.is_floating_point:
                raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
            values.requires_grad_(requires_grad)
        elif not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        return self

    @property
    def grad_fn(self):
        return self._sp_values.grad_fn

    @property
    def is_leaf(self):
        return self._sp_values.is_leaf

    @property
    def grad(self):
        values = self._sp_values
        g = values.grad if values.is_leaf else None
        if g is None:
            return None
        if self._sp_layout is sparse_csr:
            return _sparse_csr._make_csr(self._sp_crow, self._sp_col, g, self.shape, self._sp_cache)
        if self._sp_coalesced:
            return _make(self._sp_indices, g, self.shape, False)
        # Duplicates of one position all got the position's gradient: keep it once, as
        # torch's gradient has the coalesced pattern.
        self._coalesced_parts()
        indices, inverse = self._sp_cache["coalesce"]
        once = ember.zeros((indices.shape[1],) + tuple(g.shape[1:]), dtype=g.dtype)
        once[inverse] = g
        return _make(indices, once, self.shape, False)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise RuntimeError("ember: only None can be assigned to a sparse tensor's .grad")
        self._sp_values.grad = None

    @_per_layout
    def detach(self):
        return _make(self._sp_indices, self._sp_values.detach(), self.shape, self._sp_coalesced, self._sp_cache)

    @_per_layout
    def clone(self, *, memory_format=None):
        return _make(self._sp_indices.clone(), self._sp_values.clone(), self.shape, self._sp_coalesced)

    # ---- what a tensor without elements refuses, as torch's sparse tensors do ----

    @_per_layout
    def stride(self, dim=None):
        return 0 if dim is not None else (0,) * self.dim()

    @_per_layout
    def is_contiguous(self, memory_format=None):
        return False

    @_per_layout
    def storage_offset(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        impl = "SparseTensorImpl" if self._sp_layout is sparse_coo else "SparseCsrTensorImpl"
        raise NotImplementedError(f"Cannot access storage of {impl}")

    storage = untyped_storage
    _typed_storage = untyped_storage

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        raise RuntimeError("ember: assigning .data of a sparse tensor is not supported")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        raise BufferError("Can't export tensors with layout other than torch.strided")

    @property
    def _array_interface(self):
        self.numpy()

    def share_memory_(self):
        self.untyped_storage()

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force=False):
        name = "Sparse" if self._sp_layout is sparse_coo else "SparseCsr"
        raise TypeError(f"can't convert {name} layout tensor to numpy. Use Tensor.to_dense() first.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self.to_dense().item()

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.to_dense())

    def _backend(self):
        return "SparseCPU" if self._sp_layout is sparse_coo else "SparseCsrCPU"

    def __getitem__(self, index):
        raise _unsupported("index.Tensor", self._backend())

    def __setitem__(self, index, value):
        raise _unsupported("index_put_", self._backend())

    def __iter__(self):
        raise _unsupported("unbind.int", self._backend())

    # ---- printing and pickling ----

    def __repr__(self, *, tensor_contents=None):
        from . import _tensor_str

        if self._sp_layout is sparse_csr:
            return _tensor_str.format_sparse_csr(self, ember.get_default_dtype())
        return _tensor_str.format_sparse(self, ember.get_default_dtype())

    @_per_layout
    def __reduce_ex__(self, protocol):
        from ._serialization._names import rebuild_sparse_tensor

        values = self._sp_values.detach()
        if self.requires_grad:
            values = values.requires_grad_()
        return rebuild_sparse_tensor, (sparse_coo, (self._sp_indices, values, tuple(self.shape), self._sp_coalesced))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = self.clone()
        if self.requires_grad and self.is_leaf:
            out.requires_grad_()
        memo[id(self)] = out
        return out


# ---- construction ----

def _check_invariants(indices, values, size):
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    sparse_dim = indices.shape[0]
    if len(size) != sparse_dim + values.dim() - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {values.dim() - 1}")
    if tuple(size[sparse_dim:]) != tuple(values.shape[1:]):
        raise RuntimeError(f"values has incorrect size, expected {[values.shape[0], *size[sparse_dim:]]}, got "
                           f"{list(values.shape)}")
    if indices.numel():
        if bool((indices < 0).any()):
            raise RuntimeError(f"found negative index {int(indices.min())} for dim "
                               f"{int((indices < 0).any(1).int().argmax())}")
        high = indices.amax(1)
        for d in range(sparse_dim):
            if int(high[d]) >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {int(high[d])}")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with the given indices (sparse_dim x nnz) and values (nnz, *dense
    sizes); size defaults to the smallest that holds every index. Invariants are always
    checked, whatever check_invariants says: ember never reads out of bounds.

    >>> ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2)).to_dense().tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    """
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise RuntimeError(f"ember runs on the CPU only, not on '{device}'")
    if not isinstance(indices, Tensor):
        indices = ember.tensor(indices, dtype=ember.int64)
    if not isinstance(values, Tensor):
        values = ember.tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if isinstance(indices, SparseTensor) or isinstance(values, SparseTensor):
        raise RuntimeError("sparse_coo_tensor: expected dense indices and values")
    if indices.dtype.is_floating_point or indices.dtype == ember.bool:
        indices = indices.to(ember.int64)
    if indices.dtype != ember.int64:
        indices = indices.to(ember.int64)
    if values.dim() == 0:
        raise RuntimeError("values must have at least one dimension: the nnz dimension")
    if size is None:
        if indices.dim() != 2:
            raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
        high = indices.amax(1) + 1 if indices.shape[1] else ember.zeros(indices.shape[0], dtype=ember.int64)
        size = tuple(int(n) for n in high) + tuple(values.shape[1:])
    size = tuple(int(n) for n in size)
    if any(n < 0 for n in size):
        raise RuntimeError(f"size has a negative dimension: {size}")
    _check_invariants(indices, values, size)
    coalesced = bool(is_coalesced) if is_coalesced is not None else indices.shape[1] <= 1
    if requires_grad:
        values = values.detach().requires_grad_()  # the new tensor is a leaf
    elif values.requires_grad:
        values = values.view_as(values)  # the sparse tensor is a result, as torch's is
    return _make(indices.detach(), values, size, coalesced)


def to_sparse(t, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """A dense tensor's nonzeros (rows of its first sparse_dim dims holding a nonzero) as
    a coalesced sparse COO tensor (with layout=sparse_csr: to_sparse_csr)."""
    if layout is sparse_csr:
        return _sparse_csr.to_sparse_csr(t, dense_dim)
    if layout not in (None, sparse_coo):
        raise RuntimeError(f"to_sparse: ember has no {layout} layout")
    if sparse_dim is None:
        sparse_dim = t.dim() if dense_dim is None else t.dim() - dense_dim
    if t.dim() and not 0 < sparse_dim <= t.dim():
        raise RuntimeError(f"sparse_dim must be in [1, {t.dim()}] but got {sparse_dim}")
    lead_sizes, dense_sizes = tuple(t.shape[:sparse_dim]), tuple(t.shape[sparse_dim:])
    rows_of = t.reshape((math.prod(lead_sizes),) + dense_sizes)
    lead = rows_of.reshape(rows_of.shape[0], math.prod(dense_sizes))
    rows = (lead != 0).any(1).nonzero().view(-1)
    indices = _unravel(rows, list(lead_sizes))
    values = rows_of[rows]
    return _make(indices, values, t.shape, True)


# ---- arithmetic ----

def _is_number(x):
    return isinstance(x, (int, float, bool)) or (isinstance(x, Tensor) and not x.is_sparse and x.dim() == 0)


def _check_same_shape(a, b, op):
    if a.shape != b.shape:
        raise RuntimeError(f"{op}: expected sizes of 'self' and 'other' to match, but got {list(a.shape)} and "
                           f"{list(b.shape)}")


def add(input, other, *, alpha=1, out=None):
    if out is not None:
        raise _unsupported("add.out")
    if isinstance(input, SparseTensor) and isinstance(other, SparseTensor):
        _check_same_shape(input, other, "add")
        if input.sparse_dim() != other.sparse_dim():
            raise RuntimeError(f"add: expected 'self' and 'other' to have same sparse dimensions, but got "
                               f"{input.sparse_dim()} and {other.sparse_dim()}")
        dtype = ember.promote_types(input.dtype, other.dtype)
        b = other._sp_values if alpha == 1 else other._sp_values * alpha
        s = _make(ember.cat([input._sp_indices, other._sp_indices], 1),
                  ember.cat([input._sp_values.to(dtype), b.to(dtype)]), input.shape, False)
        if input._sp_coalesced and other._sp_coalesced:
            return s.coalesce()
        return s
    if isinstance(input, SparseTensor):
        if _is_number(other):
            raise _unsupported("add.Tensor")
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if not isinstance(input, Tensor):
        raise _unsupported("add.Tensor")
    # dense + sparse is dense
    _check_same_shape(input, other, "add")
    return ember.add(input, other.to_dense(), alpha=alpha)


def sub(input, other, *, alpha=1, out=None):
    return add(input, other, alpha=-alpha, out=out)


def rsub(input, other, *, alpha=1):  # x.__rsub__(y) is y - x
    return sub(other, input, alpha=alpha)


def _map_values(s, fn):
    if s._sp_layout is sparse_csr:
        return _sparse_csr._make_csr(s._sp_crow, s._sp_col, fn(s._sp_values), s.shape, s._sp_cache)
    return _make(s._sp_indices, fn(s._sp_values), s.shape, s._sp_coalesced, s._sp_cache)


def mul(input, other, *, out=None):
    if out is not None:
        raise _unsupported("mul.out")
    if isinstance(other, SparseTensor) and not isinstance(input, SparseTensor):
        input, other = other, input
    if _is_number(other):
        return _map_values(input, lambda v: v * other)
    if isinstance(other, Tensor) and not other.is_sparse:
        # sparse * dense keeps the sparse pattern
        _check_same_shape(input, other, "mul")
        indices, values = input._coalesced_parts()
        picked = other[tuple(indices)] if input.sparse_dim() else other
        return _make(indices, values * picked, input.shape, True, input._sp_cache.setdefault("coalesced", {}))
    raise _unsupported("mul.Tensor")


def div(input, other, *, rounding_mode=None, out=None):
    if out is not None or not isinstance(input, SparseTensor) or not _is_number(other):
        raise _unsupported("div.Tensor")
    return _map_values(input, lambda v: ember.div(v, other, rounding_mode=rounding_mode))


def neg(input):
    return _map_values(input, ember.neg)


def _zero_preserving(op):
    def run(input, *args, **kwargs):
        return _map_values(input, lambda v: getattr(ember, op)(v, *args, **kwargs))
    run.__name__ = op
    return run


def _to_dtype(dtype):
    def run(input, memory_format=None):
        return input.to(dtype)
    return run


def to(input, *args, **kwargs):
    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, ember.device)) and str(a) not in ("cpu", "cpu:0"):
            raise RuntimeError(f"ember runs on the CPU only, not on '{a}'")
    if dtype is None or dtype == input.dtype:
        return input
    return _map_values(input, lambda v: v.to(dtype))


def transpose(input, dim0, dim1):
    nd = input.sparse_dim()
    dim0, dim1 = dim0 % input.dim(), dim1 % input.dim()
    if dim0 >= nd or dim1 >= nd:
        raise RuntimeError("transpose: ember transposes sparse dimensions only")
    order = list(range(nd))
    order[dim0], order[dim1] = order[dim1], order[dim0]
    size = list(input.shape)
    size[dim0], size[dim1] = size[dim1], size[dim0]
    return _make(input._sp_indices[order], input._sp_values, size, dim0 == dim1 and input._sp_coalesced)


def t(input):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    return input if input.dim() < 2 else transpose(input, 0, 1)


# ---- products ----

class _Csr:
    """A coalesced 2-D pattern in CSR order, and (made on first use) its transpose's."""

    def __init__(self, indices, rows, cols, crow=None):
        self.rows, self.cols = rows, cols
        self.row, self.col = indices[0].contiguous(), indices[1].contiguous()
        self.crow = self._crow(self.row, rows) if crow is None else crow
        self._t = None

    @staticmethod
    def _crow(row, n):
        counts = ember.bincount(row, minlength=n) if row.numel() else ember.zeros(n, dtype=ember.int64)
        return ember.cat([ember.zeros(1, dtype=ember.int64), counts.cumsum(0)])

    def transposed(self):
        """(crow, col, permutation) of the transpose: entries sorted by (col, row)."""
        if self._t is None:
            perm = ember.argsort(self.col * self.rows + self.row, stable=True)
            self._t = (self._crow(self.col, self.cols), self.row[perm], perm)
        return self._t


def _csr(s, indices):
    csr = s._sp_cache.get("csr")
    if csr is None:
        csr = s._sp_cache["csr"] = _Csr(indices, s.shape[0], s.shape[1])
    return csr


def _product(csr, values, dense, transpose):
    """CSR(values) @ dense, or its transpose @ dense; values in CSR order."""
    if transpose:
        crow, col, perm = csr.transposed()
        return ember._sparse_csr_mm(crow, col, values[perm], dense)
    return ember._sparse_csr_mm(csr.crow, csr.col, values, dense)


class _SparseMM(Function):
    """out = A @ dense (or A.T @ dense) for the sparse matrix A = (csr, values)."""

    @staticmethod
    def forward(ctx, values, dense, csr, transpose):
        ctx.csr, ctx.transpose = csr, transpose
        ctx.save_for_backward(values, dense)
        return _product(csr, values, dense, transpose)

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        csr, transpose = ctx.csr, ctx.transpose
        grad = grad.contiguous()
        grad_values = grad_dense = None
        if ctx.needs_input_grad[0]:
            rows, cols = (csr.col, csr.row) if transpose else (csr.row, csr.col)
            grad_values = ember._sparse_sampled_dot(rows, cols, grad, dense.contiguous())
        if ctx.needs_input_grad[1]:
            grad_dense = _product(csr, values, grad, not transpose)
        return grad_values, grad_dense, None, None


def _check_mm(a, b, op):
    for x in (a, b):
        if x.dim() != 2:
            raise RuntimeError(f"{op}: expected 2-D matrices, got {x.dim()}-D")
        if isinstance(x, SparseTensor) and x.dense_dim() != 0:
            raise RuntimeError(f"{op}: expected a sparse matrix with no dense dimensions")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype._legacy_name} but found {b.dtype._legacy_name}")


def _sparse_times_dense(s, dense, transpose):
    if s._sp_layout is sparse_csr:
        csr, values = _sparse_csr._csr_parts(s)
    else:
        indices, values = s._coalesced_parts()
        csr = _csr(s, indices)
    if values.dtype.is_floating_point:
        return _SparseMM.apply(values, dense, csr, transpose)
    # integers: no kernel (torch computes them; they are rare), a composition
    rows, cols = (csr.col, csr.row) if transpose else (csr.row, csr.col)
    out = ember.zeros((s.shape[1] if transpose else s.shape[0], dense.shape[1]), dtype=values.dtype)
    return out.index_add(0, rows, values.unsqueeze(1) * dense[cols])


def mm(input, mat2, *, out=None):
    if out is not None:
        raise _unsupported("mm.out")
    if isinstance(input, SparseTensor) and isinstance(mat2, SparseTensor):
        _check_mm(input, mat2, "mm")
        if input.layout is not mat2.layout:
            raise _unsupported("mm", "SparseCsrCPU")
        product = mm(input, mat2.to_dense())
        return product.to_sparse_csr() if input._sp_layout is sparse_csr else product.to_sparse()
    _check_mm(input, mat2, "mm")
    if isinstance(input, SparseTensor):
        return _sparse_times_dense(input, mat2, False)
    # dense @ sparse = (sparse.T @ dense.T).T
    return _sparse_times_dense(mat2, input.t(), True).t()  # column-major, as torch's


def matmul(input, other, *, out=None):
    if out is not None:
        raise _unsupported("matmul.out")
    if input.dim() == 2 and other.dim() == 1:
        return mm(input, other.unsqueeze(1)).squeeze(1)
    if input.dim() == 1 and other.dim() == 2:
        return mm(input.unsqueeze(0), other).squeeze(0)
    if input.dim() != 2 or other.dim() != 2:
        raise _unsupported("matmul")
    return mm(input, other)


def rmatmul(input, other):  # x.__rmatmul__(y) is y @ x
    return matmul(other, input)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if out is not None:
        raise _unsupported("addmm.out")
    if isinstance(input, SparseTensor):
        if input._sp_layout is sparse_csr:
            raise RuntimeError("addmm: computation on CPU is not implemented for SparseCsr + Strided @ Strided")
        input = input.to_dense()
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    return product if beta == 0 else ember.add(input * beta if beta != 1 else input, product)


def mv(input, vec):
    return matmul(input, vec)


# ---- reductions ----

def sum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.sparse.sum: a dense scalar over every dim; over some dims, sparse while sparse
    dims remain, else dense."""
    if not isinstance(input, SparseTensor):
        return input.sum(dtype=dtype) if dim is None else input.sum(dim, keepdim=keepdim, dtype=dtype)
    if input._sp_layout is sparse_csr:
        input.coalesce()  # torch.sparse.sum refuses CSR tensors with coalesce's error
    s = input if dtype is None else input.to(dtype)
    if dim is None:
        return s._sp_values.sum()
    if keepdim:
        raise _unsupported("sum.dim_IntList")
    dims = sorted({d % s.dim() for d in ([dim] if isinstance(dim, int) else dim)})
    nd = s.sparse_dim()
    sparse_dims = [d for d in dims if d < nd]
    dense_dims = [d - nd + 1 for d in dims if d >= nd]
    values = s._sp_values.sum(dense_dims) if dense_dims else s._sp_values
    kept = [d for d in range(nd) if d not in sparse_dims]
    if not kept:
        return values.sum(0)
    size = [n for d, n in enumerate(s.shape) if d not in dims]
    return _make(s._sp_indices[kept], values, size, False).coalesce()


def _grouped_softmax(input, dim, log, dtype):
    s = input.coalesce() if dtype is None else input.to(dtype).coalesce()
    dim = dim % s.dim()
    if dim >= s.sparse_dim():
        values = s._sp_values
        out = ember.log_softmax(values, dim - s.sparse_dim() + 1) if log else \
            ember.softmax(values, dim - s.sparse_dim() + 1)
        return _map_values(s, lambda v: out)
    indices, values = s._sp_indices, s._sp_values
    if not values.dtype.is_floating_point:
        raise RuntimeError(f"\"softmax\" not implemented for '{values.dtype}'")
    others = [d for d in range(s.sparse_dim()) if d != dim]
    sizes = list(s.shape)
    key = _linear(indices[others], [sizes[d] for d in others]) if others else \
        ember.zeros(indices.shape[1], dtype=ember.int64)
    _, group = ember.unique(key, return_inverse=True)
    ngroups = int(group.max()) + 1 if group.numel() else 0
    shape = (ngroups,) + tuple(values.shape[1:])
    group_v = group.view((-1,) + (1,) * (values.dim() - 1)).expand(values.shape)
    high = ember.zeros(shape, dtype=values.dtype).scatter_reduce(0, group_v, values.detach(), "amax",
                                                                 include_self=False)
    shifted = values - high[group]  # softmax does not change with the shift
    total = ember.zeros(shape, dtype=values.dtype).index_add(0, group, shifted.exp())
    out = shifted - total.log()[group] if log else shifted.exp() / total[group]
    return _make(indices, out, s.shape, True, s._sp_cache)


def softmax(input, dim, dtype=None):
    if input.layout is sparse_csr:
        raise _unsupported("_sparse_softmax", "SparseCsrCPU")
    return _grouped_softmax(input, dim, False, dtype)


def log_softmax(input, dim, dtype=None):
    if input.layout is sparse_csr:
        raise _unsupported("_sparse_log_softmax", "SparseCsrCPU")
    return _grouped_softmax(input, dim, True, dtype)


# ---- the table the generated wrappers call (Note [Sparse tensors are routed before parsing]) ----

def _inplace(op):
    def run(self, *args, **kwargs):
        if not isinstance(self, SparseTensor):
            raise _unsupported(op.__name__ + "_", "SparseCsrCPU" if _operand_layout(args, {}) is sparse_csr
                               else "SparseCPU")
        result = op(self, *args, **kwargs)
        if not isinstance(result, SparseTensor):
            raise _unsupported(op.__name__ + "_", self._backend())
        if result._sp_layout is not self._sp_layout:
            raise _unsupported(op.__name__ + "_", self._backend())
        for name, value in vars(result).items():
            if name.startswith("_sp_"):
                setattr(self, name, value)
        self._sp_values = result._sp_values.to(self.dtype)
        return self
    return run


def add_(self, other, *, alpha=1):
    if isinstance(self, SparseTensor):
        return _inplace(add)(self, other, alpha=alpha)
    if not isinstance(other, SparseTensor):
        raise _unsupported("add_.Tensor")
    return self.add_(other.to_dense(), alpha=alpha)  # dense += sparse stays dense


def _type_name(x):
    return f"ember.{'sparse.' if isinstance(x, SparseTensor) else ''}{x.dtype._legacy_name}Tensor"


def copy_(self, src, non_blocking=False):
    if isinstance(self, SparseTensor) and isinstance(src, SparseTensor):
        return _inplace(lambda s, o: o.to(s.dtype).clone())(self, src)
    raise RuntimeError("copy_() between dense and sparse Tensors is not implemented! Found self type = "
                       f"{_type_name(self)} and src type = {_type_name(src)}")


COO_OPS = {
    "copy_": copy_,
    "add": add, "__add__": add, "__radd__": add, "__iadd__": add_, "add_": add_,
    "sub": sub, "__sub__": sub, "__rsub__": rsub, "subtract": sub,
    "mul": mul, "__mul__": mul, "__rmul__": mul, "multiply": mul, "mul_": _inplace(mul), "__imul__": _inplace(mul),
    "div": div, "__truediv__": div, "divide": div, "true_divide": div, "div_": _inplace(div),
    "__itruediv__": _inplace(div),
    "neg": neg, "__neg__": neg, "negative": neg, "__abs__": _zero_preserving("abs"),
    "mm": mm, "matmul": matmul, "__matmul__": matmul, "__rmatmul__": rmatmul, "spmm": mm, "mv": mv, "addmm": addmm,
    "sum": sum, "t": t, "transpose": transpose, "to": to,
    "double": _to_dtype(ember.float64), "float": _to_dtype(ember.float32), "half": _to_dtype(ember.float16),
    "bfloat16": _to_dtype(ember.bfloat16), "long": _to_dtype(ember.int64), "int": _to_dtype(ember.int32),
    **{op: _zero_preserving(op) for op in ("abs", "relu", "sqrt", "sin", "tanh", "sign", "square")},
}


# ---- routing by layout ----

def _aten_name(name):
    """torch's operator name for a Python one: x.__radd__ and x.__iadd__ report 'aten::add'."""
    if len(name) > 4 and name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        if name[:1] in ("r", "i") and name[1:] in ("add", "sub", "mul", "truediv", "floordiv", "matmul", "pow",
                                                   "mod", "and", "or", "xor", "lshift", "rshift"):
            name = name[1:]
        if name == "truediv":
            name = "div"
    return name


def _operand_layout(args, kwargs):
    """sparse_csr when an operand (or an item of a list or tuple operand) is a CSR tensor."""
    for a in (*args, *kwargs.values()):
        for x in (a if isinstance(a, (list, tuple)) else (a,)):
            if type(x) is SparseTensor and x._sp_layout is sparse_csr:
                return sparse_csr
    return sparse_coo


def _router(name, impls):
    backends = {sparse_coo: "SparseCPU", sparse_csr: "SparseCsrCPU"}
    aten = _aten_name(name)
    operator = name.startswith("__")

    def run(*args, **kwargs):
        layout = _operand_layout(args, kwargs)
        fn = impls.get(layout)
        if fn is not None:
            return fn(*args, **kwargs)
        # An operator whose other operand is no tensor or number (s == None) lets Python
        # try the reflected one, as a dense tensor's does.
        if operator and any(not isinstance(a, (Tensor, int, float, complex)) for a in args[1:]):
            return NotImplemented
        raise _unsupported(aten, backends[layout])
    run.__name__ = name
    return run


def _register_layouts(tables):
    """Give the native routing one entry per generated op name (Note [Sparse tensors are
    routed before parsing]): the implementation for the layout of the call's sparse operand,
    or torch's NotImplementedError naming that layout's backend."""
    names = set(_C._function_names) | set(vars(_C.TensorBase))
    for table in tables.values():
        names |= set(table)
    routed = {name: _router(name, {layout: table[name] for layout, table in tables.items() if name in table})
              for name in names}
    _C._set_layout_ops(SparseTensor, routed)


LAYOUT_OPS = COO_OPS  # the name other modules know


def spmm(input, mat2):
    """torch.spmm: mm with a sparse operand (either may be sparse, or neither)."""
    return ember.mm(input, mat2)


from . import _sparse_csr  # noqa: E402  (last: it imports this module's names, and registers both tables)
