"""Sparse CSR tensors (layout=ember.sparse_csr).

A CSR tensor is an ember._sparse.SparseTensor (the class the native routing knows, Note
[Sparse tensors are routed before parsing]) with _sp_layout = sparse_csr and, as plain
tensors, crow_indices (*batch, rows + 1), col_indices (*batch, nnz) and values (*batch, nnz,
*dense sizes), kept as given (int32 or int64 indices). The methods whose behaviour differs
from COO's are METHODS here, and the ops CSR_OPS; every other op raises torch's
NotImplementedError for the SparseCsrCPU backend.

Work reuses the COO machinery: the COO form of the pattern (its indices, made once per
pattern and cached) serves to_dense, to_sparse and sampling a dense operand, and the
products are the COO products' autograd Function over the native CSR kernels, fed with
this tensor's own crow_indices. Autograd runs on the values, so a CSR leaf's .grad is a
CSR tensor with the leaf's pattern (torch's for torch.sparse.mm and to_dense).

Invariants that guard memory (shapes, crow_indices' ends and steps, column bounds) are
always checked, with torch's messages; the order of columns within a row (sorted, no
duplicates) only under check_invariants=True, as torch: the kernels do not need it.
"""
from __future__ import annotations

import math

import ember
from . import _C
from ._constants import sparse_coo, sparse_csr
from ._sparse import (COO_OPS, SparseTensor, _Csr, _inplace, _is_number, _linear, _make, _map_values,
                      _register_layouts, _scatter_dense, _unravel, _zero_preserving, addmm, matmul, mm, mv, neg,
                      rmatmul, to)
from ._sparse import _unsupported as _unsupported_for
from ._sparse import to_sparse as _dense_to_coo
from ._tensor import Tensor

__all__ = ["sparse_csr_tensor", "to_sparse_csr"]

BACKEND = "SparseCsrCPU"


def _unsupported(name):
    return _unsupported_for(name, BACKEND)


def _make_csr(crow, col, values, size, cache=None):
    t = _C._sparse_shell(SparseTensor, tuple(size), values.dtype)
    t._sp_layout = sparse_csr
    t._sp_crow, t._sp_col, t._sp_values = crow, col, values
    t._sp_cache = {} if cache is None else cache  # index work shared by tensors of one pattern
    return t


def _is_csr(x):
    return isinstance(x, SparseTensor) and x._sp_layout is sparse_csr


def _batch_dim(s):
    return s._sp_crow.dim() - 1


def _coo_parts(s):
    """(indices, values, sparse sizes): the COO form, indices (batch dims + 2) x (batches *
    nnz) in the CSR order, values flattened over the batches (a view: gradients flow)."""
    nb, shape = _batch_dim(s), tuple(s.shape)
    sizes = list(shape[:nb + 2])
    batches, rows, nnz = math.prod(shape[:nb]), shape[nb], _nnz(s)
    indices = s._sp_cache.get("coo")
    if indices is None:
        crow = s._sp_crow.to(ember.int64).reshape(batches, rows + 1)
        counts = (crow[:, 1:] - crow[:, :-1]).reshape(-1)
        row = ember.repeat_interleave(ember.arange(rows).repeat(batches), counts)
        batch = ember.arange(batches).unsqueeze(1).expand(batches, nnz).reshape(-1)
        col = s._sp_col.to(ember.int64).reshape(1, -1)
        indices = s._sp_cache["coo"] = ember.cat([_unravel(batch, sizes[:nb]), row.unsqueeze(0), col])
    values = s._sp_values.reshape((batches * nnz,) + tuple(s._sp_values.shape[nb + 1:]))
    return indices, values, sizes


def _from_coo(indices, values, shape, nb):
    """The CSR tensor of a coalesced COO pattern whose first nb sparse dims are batch dims."""
    shape = tuple(shape)
    batch_sizes, (rows, cols), dense = shape[:nb], shape[nb:nb + 2], shape[nb + 2:]
    batches, n = math.prod(batch_sizes), indices.shape[1]
    batch = _linear(indices[:nb], list(batch_sizes)) if nb else ember.zeros(n, dtype=ember.int64)
    nnz = n
    if nb:
        per = ember.bincount(batch, minlength=batches) if n else ember.zeros(batches, dtype=ember.int64)
        if batches and bool((per != per[0]).any()):
            raise RuntimeError("Expect the same number of specified elements per batch.")
        nnz = n // batches if batches else 0
    key = batch * rows + indices[nb]
    counts = ember.bincount(key, minlength=batches * rows) if n else ember.zeros(batches * rows, dtype=ember.int64)
    crow = ember.cat([ember.zeros(batches, 1, dtype=ember.int64), counts.reshape(batches, rows).cumsum(1)], 1)
    return _make_csr(crow.reshape(batch_sizes + (rows + 1,)), indices[nb + 1].reshape(batch_sizes + (nnz,)),
                     values.reshape(batch_sizes + (nnz,) + dense), shape)


def _float_only(s, kernel):
    if s.dtype not in (ember.float32, ember.float64):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{s.dtype._legacy_name}'")


def _csr_parts(s):
    """(_Csr, values) of a 2-D CSR tensor, for the COO products (ember._sparse.mm)."""
    values = s._sp_values
    _float_only(s, "addmm_out_sparse_csr_impl_mkl")
    csr = s._sp_cache.get("csr")
    if csr is None:
        indices = _coo_parts(s)[0]
        csr = s._sp_cache["csr"] = _Csr(indices, s.shape[0], s.shape[1], s._sp_crow.to(ember.int64).contiguous())
    return csr, values


# ---- construction ----

def _check(crow, col, values, size):
    """torch's invariants that guard memory, with its messages (the order within rows: _check_order)."""
    if crow.dim() < 1:
        raise RuntimeError(f"crow_indices must have dimensionality >= 1 but got {crow.dim()}")
    if crow.dim() != col.dim():
        raise RuntimeError(f"crow_indices and col_indices dimensionalities must be equal but got {crow.dim()} and "
                           f"{col.dim()}, respectively")
    if crow.dtype != col.dtype:
        raise RuntimeError(f"crow_indices and col_indices must have the same dtype, bot got "
                           f"{crow.dtype._legacy_name} and {col.dtype._legacy_name}, respectively")
    if crow.dtype not in (ember.int32, ember.int64):
        raise RuntimeError(f"crow_indices and col_indices must be an int32 or int64 type, but got: "
                           f"{crow.dtype._legacy_name}")
    nb = crow.dim() - 1
    if values.dim() <= nb:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block dimensionalities (={nb} + 0) "
                           f"but got {values.dim()}")
    dd = values.dim() - nb - 1
    if len(size) != nb + 2 + dd:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense dimensionalities "
                           f"(={nb} + 2 + {dd}) but got {len(size)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"size has a negative dimension: {tuple(size)}")
    batch = list(size[:nb])
    if list(crow.shape[:nb]) != batch or list(col.shape[:nb]) != batch or list(values.shape[:nb]) != batch:
        raise RuntimeError(f"all batch dimensions of crow_indices (={list(crow.shape[:nb])}), col_indices "
                           f"(={list(col.shape[:nb])}), and values (={list(values.shape[:nb])}) must be equal to "
                           f"tensor batch dimensions (={batch})")
    rows, cols, nnz = size[nb], size[nb + 1], values.shape[nb]
    if crow.shape[-1] != rows + 1:
        raise RuntimeError(f"crow_indices.shape[-1] must be equal to the number of rows + 1 (={rows + 1}), but got "
                           f"{crow.shape[-1]}")
    if col.shape[-1] != nnz:
        raise RuntimeError(f"col_indices.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[{nb}], "
                           f"but got {col.shape[-1]}")
    if tuple(values.shape[nb + 1:]) != tuple(size[nb + 2:]):
        raise RuntimeError(f"values.shape[{nb + 1}:] must be equal to the dense sizes {list(size[nb + 2:])}, but got "
                           f"{list(values.shape[nb + 1:])}")
    if crow.numel():
        if bool((crow[..., 0] != 0).any()):
            raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
        if bool((crow[..., -1] != nnz).any()):
            raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
        steps = crow[..., 1:] - crow[..., :-1]
        if steps.numel() and bool(((steps < 0) | (steps > cols)).any()):
            raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if col.numel() and bool(((col < 0) | (col >= cols)).any()):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")


def _check_order(s):
    indices, _, sizes = _coo_parts(s)
    key = _linear(indices, sizes)
    if key.numel() > 1 and not bool((key[1:] > key[:-1]).all()):
        raise RuntimeError("`col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] for all i = 1, ..., "
                           "nrows are sorted and distinct along the last dimension values` is not satisfied.")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A sparse CSR tensor: row r holds values[crow_indices[r]:crow_indices[r + 1]] at the
    columns col_indices[crow_indices[r]:crow_indices[r + 1]] (leading dims of all three are
    batch dims, trailing dims of values dense ones); size defaults to the smallest that
    holds every column. The invariants that guard memory are always checked; the order of
    columns within rows only with check_invariants=True.

    >>> ember.sparse_csr_tensor([0, 1, 2], [1, 0], [2., 3.]).to_dense().tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    """
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise RuntimeError(f"ember runs on the CPU only, not on '{device}'")
    crow = crow_indices if isinstance(crow_indices, Tensor) else ember.tensor(crow_indices, dtype=ember.int64)
    col = col_indices if isinstance(col_indices, Tensor) else ember.tensor(col_indices, dtype=ember.int64)
    if not isinstance(values, Tensor):
        values = ember.tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if any(isinstance(x, SparseTensor) for x in (crow, col, values)):
        raise RuntimeError("sparse_csr_tensor: expected dense crow_indices, col_indices and values")
    if size is None:
        if crow.dim() < 1 or crow.dim() != col.dim() or values.dim() < crow.dim():
            _check(crow, col, values, ())  # torch's message for the first broken rule
        nb = crow.dim() - 1
        cols = int(col.max()) + 1 if col.numel() else 0
        size = tuple(crow.shape[:nb]) + (max(crow.shape[-1] - 1, 0), cols) + tuple(values.shape[nb + 1:])
    size = tuple(int(n) for n in size)
    _check(crow, col, values, size)
    if requires_grad:
        values = values.detach().requires_grad_()  # the new tensor is a leaf
    elif values.requires_grad:
        values = values.view_as(values)  # the sparse tensor is a result, as torch's is
    out = _make_csr(crow.detach(), col.detach(), values, size)
    if check_invariants:
        _check_order(out)
    return out


def to_sparse_csr(t, dense_dim=None):
    """t (dense, COO or CSR) as a sparse CSR tensor: a dense tensor's leading dims beyond the
    last two (and dense_dim trailing ones) are batch dims, every batch with the same nnz."""
    if _is_csr(t):
        if dense_dim is not None:
            raise RuntimeError("to_sparse_csr: conversion from SparseCsr to SparseCsr with dense_dim argument given "
                               "is not supported")
        return t
    if isinstance(t, SparseTensor):
        if t.sparse_dim() != 2:
            raise RuntimeError("coo_to_sparse_csr: conversion from Sparse to SparseCsr for input tensors with "
                               "sparse_dim()!=2 is not supported")
        indices, values = t._coalesced_parts()
        return _from_coo(indices, values, t.shape, 0)
    dd = 0 if dense_dim is None else int(dense_dim)
    if t.dim() - dd < 2:
        raise RuntimeError(f"to_sparse_csr: expected a tensor with at least 2 sparse dims, got {t.dim()} dims and "
                           f"dense_dim={dd}")
    coo = _dense_to_coo(t, t.dim() - dd)
    return _from_coo(coo._sp_indices, coo._sp_values, t.shape, t.dim() - dd - 2)


# ---- the methods of a CSR tensor (SparseTensor's _per_layout ones) ----

def _not_coo(name):
    return RuntimeError(f"{name} expected sparse coordinate tensor layout but got SparseCsr")


def _nnz(s):
    return s._sp_col.shape[-1]


def to_dense(s, dtype=None, *, masked_grad=None):
    indices, values, sizes = _coo_parts(s)
    out = _scatter_dense(indices, values, sizes, s.shape)
    return out if dtype is None else out.to(dtype)


def to_sparse(s, *args, layout=None, blocksize=None, dense_dim=None):
    if layout is sparse_csr:
        return to_sparse_csr(s, dense_dim)
    if layout not in (None, sparse_coo):
        raise RuntimeError(f"to_sparse: ember has no {layout} layout")
    sparse_dim = args[0] if args else None
    if sparse_dim is not None and sparse_dim != _batch_dim(s) + 2:
        raise RuntimeError(f"sparse_compressed_to_sparse: conversion from SparseCsr to Sparse with sparse_dim "
                           f"argument !={_batch_dim(s) + 2} is not supported")
    indices, values, sizes = _coo_parts(s)
    key = _linear(indices, sizes)
    coalesced = key.numel() <= 1 or bool((key[1:] > key[:-1]).all())
    return _make(indices, values, s.shape, coalesced)


def _no_strides(s, *args, **kwargs):
    raise RuntimeError("Sparse CSR tensors do not have strides")


def _no_is_contiguous(s, *args, **kwargs):
    raise RuntimeError("Sparse CSR tensors do not have is_contiguous")


def _reduce_ex(s, protocol):
    from ._serialization._names import rebuild_sparse_tensor

    values = s._sp_values.detach()
    if s.requires_grad:
        values = values.requires_grad_()
    return rebuild_sparse_tensor, (sparse_csr, (s._sp_crow, s._sp_col, values, tuple(s.shape)))


def _raise(error):
    def run(s, *args, **kwargs):
        raise error()
    return run


METHODS = {
    "sparse_dim": lambda s: 2,
    "dense_dim": lambda s: s._sp_values.dim() - 1 - _batch_dim(s),
    "_nnz": _nnz,
    "crow_indices": lambda s: s._sp_crow,
    "col_indices": lambda s: s._sp_col,
    "values": lambda s: s._sp_values,
    "_values": _raise(lambda: _unsupported("_values")),
    "_indices": _raise(lambda: _unsupported("_indices")),
    "indices": _raise(lambda: _not_coo("indices")),
    "is_coalesced": _raise(lambda: _not_coo("is_coalesced")),
    "coalesce": _raise(lambda: _not_coo("coalesce")),
    "to_dense": to_dense,
    "to_sparse": to_sparse,
    "detach": lambda s: _make_csr(s._sp_crow, s._sp_col, s._sp_values.detach(), s.shape, s._sp_cache),
    "clone": lambda s, *, memory_format=None: _make_csr(s._sp_crow.clone(), s._sp_col.clone(), s._sp_values.clone(),
                                                        s.shape),
    "stride": _no_strides,
    "is_contiguous": _no_is_contiguous,
    "storage_offset": lambda s: 0,
    "__reduce_ex__": _reduce_ex,
}


# ---- ops ----

def add(input, other, *, alpha=1, out=None):
    """CSR + CSR: CSR over the union of the patterns; CSR + dense and dense + CSR: dense."""
    if out is not None:
        raise _unsupported("add.out")
    if _is_csr(input) and _is_csr(other):
        _float_only(input, "add_out_sparse_csr_impl_mkl")
        if input.shape != other.shape:
            raise RuntimeError(f"torch.add: Expected input tensors to have the same shape, but got tensor `self` with "
                               f"shape {list(input.shape)} and tensor `other` with shape {list(other.shape)}")
        total = ember.add(input.to_sparse(), other.to_sparse(), alpha=alpha).coalesce()
        return _from_coo(total._sp_indices, total._sp_values, input.shape, _batch_dim(input))
    if isinstance(input, SparseTensor) or isinstance(other, SparseTensor):
        dense = [x for x in (input, other) if not isinstance(x, SparseTensor)]
        if len(dense) != 1 or not isinstance(dense[0], Tensor) or dense[0].dim() == 0:
            raise _unsupported("add.Tensor")
    a = input.to_dense() if _is_csr(input) else input
    b = other.to_dense() if _is_csr(other) else other
    return ember.add(a, b, alpha=alpha)


def add_(self, other, *, alpha=1):
    if isinstance(self, SparseTensor):
        return _inplace(add)(self, other, alpha=alpha)
    return self.add_(other.to_dense(), alpha=alpha)  # dense += CSR stays dense


def mul(input, other, *, out=None):
    """CSR * number, CSR * dense (of its shape): CSR with the same pattern."""
    if out is not None:
        raise _unsupported("mul.out")
    if not _is_csr(input):
        input, other = other, input
    if _is_number(other):
        return _map_values(input, lambda v: v * other)
    if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
        if other.shape != input.shape:
            raise RuntimeError(f"mul: expected sizes of 'self' and 'other' to match, but got {list(input.shape)} and "
                               f"{list(other.shape)}")
        indices, _, _ = _coo_parts(input)
        values = input._sp_values
        picked = other[tuple(indices)].reshape(values.shape)
        return _make_csr(input._sp_crow, input._sp_col, values * picked, input.shape, input._sp_cache)
    raise _unsupported("mul.Tensor")


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum of every element (a dense 0-dim tensor); over dims, torch's error."""
    if dim is None:
        return input._sp_values.sum(dtype=dtype)
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
    raise _unsupported("sum.dim_IntList")


def copy_(self, src, non_blocking=False):
    if _is_csr(self) and _is_csr(src):
        if self.shape != src.shape:
            raise RuntimeError(f"copy_: expected sizes {list(self.shape)} and {list(src.shape)} to match")
        if self._nnz() != src._nnz():
            raise RuntimeError("torch.copy_: only sparse compressed tensors with the same number of specified "
                               "elements are supported.")
        return _inplace(lambda s, o: o.to(s.dtype).clone())(self, src)
    raise _unsupported("copy_")


def _to_dtype(dtype):
    def run(input, memory_format=None):
        return input.to(dtype)
    return run


CSR_OPS = {
    "copy_": copy_,
    "add": add, "__add__": add, "__radd__": add, "__iadd__": add_, "add_": add_,
    "mul": mul, "__mul__": mul, "__rmul__": mul, "multiply": mul, "mul_": _inplace(mul), "__imul__": _inplace(mul),
    "neg": neg, "__neg__": neg, "negative": neg, "__abs__": _zero_preserving("abs"),
    "mm": mm, "matmul": matmul, "__matmul__": matmul, "__rmatmul__": rmatmul, "spmm": mm, "mv": mv, "addmm": addmm,
    "sum": sum, "to": to,
    "double": _to_dtype(ember.float64), "float": _to_dtype(ember.float32), "half": _to_dtype(ember.float16),
    "bfloat16": _to_dtype(ember.bfloat16), "long": _to_dtype(ember.int64), "int": _to_dtype(ember.int32),
    **{op: _zero_preserving(op) for op in ("abs", "relu", "sqrt", "sin", "tanh", "sign")},
}

_register_layouts({sparse_coo: COO_OPS, sparse_csr: CSR_OPS})
