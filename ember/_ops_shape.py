"""torch's shape, view and alias names that are short compositions of ember's ops:
block_diag, combinations, the splits, the *_scatter and *_copy functions, the in-place view
methods (t_, squeeze_, ...), H/mH/adjoint, scalar_tensor, frombuffer, asarray, the
top-level in-place aliases (ember.abs_, ...), linalg's matmul/diagonal/vecdot/vander.

FUNCTIONS go into ember's namespace, METHODS onto Tensor, LINALG into ember.linalg (see
the blocks that install them in ember/__init__.py and ember/_tensor.py). Autograd follows
from the ops they are composed of."""
from __future__ import annotations

import itertools
import os

from . import _C
from . import _autocast

# ---------------------------------------------------------------- helpers


def _dims(size):
    """f(2, 3) and f((2, 3)) alike: a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, _C.Size)):
        return tuple(size[0])
    return tuple(size)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _into(out, result):
    """out= for a function computed apart (torch's rules: see linalg._into)."""
    from .linalg import _into as into

    return into(out, result, lambda want, got: f"Expected out tensor to have dtype {_legacy_name(want, True)}, but got "
                                               f"{_legacy_name(got, True)} instead")


def _copy_fn(name, view):
    """torch.<name>_copy: view(...) materialised into new memory, with out=."""

    def fn(input, *args, out=None, **kwargs):
        result = view(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            results = tuple(r.clone(memory_format=_contiguous()) for r in result)
            if out is None:
                return results
            if len(out) != len(results):
                raise RuntimeError(f"{name}_copy_Tensor_out() expected an out= argument of size {len(results)}, "
                                   f"got size {len(out)}")
            for o, r in zip(out, results):
                _into(o, r)
            return None
        result = result.clone(memory_format=_contiguous())
        return result if out is None else _into(out, result)

    fn.__name__ = f"{name}_copy"
    fn.__qualname__ = fn.__name__
    fn.__doc__ = (f"Like Tensor.{name}, but the result is new contiguous memory, not a view of input.\n\n"
                  f"    See torch.{name}_copy.")
    return fn


def _contiguous():
    from ._constants import contiguous_format

    return contiguous_format


# ---------------------------------------------------------------- building and splitting


def block_diag(*tensors):
    """A block diagonal matrix of the given tensors (0-D: 1x1, 1-D: one row, 2-D), of their
    promoted dtype.

    >>> ember.block_diag(ember.tensor([[1, 2]]), ember.tensor(3)).tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    if not tensors:
        return _C.empty(1, 0)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = _C.promote_types(dtype, t.dtype)
    blocks = [t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        h, w = b.shape
        rows.append(_C.cat([_C.zeros(h, left, dtype=dtype, device=b.device), b.to(dtype),
                            _C.zeros(h, width - left - w, dtype=dtype, device=b.device)], 1))
        left += w
    return _C.cat(rows, 0)


def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of the elements of a 1-D tensor, as rows (as
    itertools.combinations, or combinations_with_replacement).

    >>> ember.combinations(ember.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = _C.tensor(list(pick(range(input.shape[0]), r)), dtype=_C.int64).reshape(-1, r)
    return input[index]


def unravel_index(indices, shape):
    """The coordinates, in a tensor of the given shape, of flat (row-major) indices: a
    tuple of tensors, one per dim. Negative indices count from the end.

    >>> [c.tolist() for c in ember.unravel_index(ember.tensor([5, 1]), (2, 3))]
    [[1, 0], [2, 1]]
    """
    if not isinstance(indices, _C.TensorBase):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    total = 1
    for s in shape:
        total *= s
    if total == 0:
        raise RuntimeError("ZeroDivisionError")
    flat = indices.to(_C.int64).remainder(total)  # as torch's: any index, wrapped modulo the size
    coords = []
    for s in reversed(shape):
        coords.append(flat.remainder(s))
        flat = flat.div(s, rounding_mode="floor")
    return tuple(reversed(coords))


def column_stack(tensors, *, out=None):
    """Stacks tensors as columns: 0-D and 1-D tensors become (n, 1) columns, then hstack.

    >>> ember.column_stack([ember.tensor([1, 2]), ember.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    if len(tensors) == 0:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _C.hstack(columns) if out is None else _C.hstack(columns, out=out)


def _split_named(name, dim, min_dims):
    """torch.<name>(input, sections) or (input, indices) and Tensor.<name>, which also takes
    the indices as separate ints: tensor_split along dim, for an input of >= min_dims dims."""
    def split(input, arg):
        if input.dim() < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                               f"with {input.dim()} dimensions!")
        d = 0 if (name == "hsplit" and input.dim() == 1) else dim
        if isinstance(arg, int) and not isinstance(arg, bool):
            size = input.shape[d]
            if arg == 0 or size % arg != 0:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {arg}!")
        elif not (isinstance(arg, (list, tuple, _C.Size)) and all(isinstance(i, int) for i in arg)):
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                            f"{type(arg).__name__}), but expected one of:\n * (Tensor input, int sections)\n"
                            " * (Tensor input, tuple of ints indices)")
        return input.tensor_split(arg if isinstance(arg, int) else list(arg), d)

    def picked(args, kwargs, method):
        given = list(args) + [kwargs.pop(k) for k in ("sections", "indices") if k in kwargs]
        if kwargs or not given or (len(given) > 1 and not (method and all(isinstance(i, int) for i in given))):
            raise TypeError(f"{name}() received an invalid combination of arguments - got {len(given)} arguments "
                            f"{'and ' + ', '.join(kwargs) if kwargs else ''}, but expected one of:\n"
                            " * (Tensor input, int sections)\n * (Tensor input, tuple of ints indices)")
        return given[0] if len(given) == 1 else given

    def fn(input, *args, **kwargs):
        return split(input, picked(args, kwargs, False))

    def method(self, *args, **kwargs):
        return split(self, picked(args, kwargs, True))

    fn.__name__ = fn.__qualname__ = method.__name__ = method.__qualname__ = name
    shape = ", ".join("4" if d == dim else "2" for d in range(max(min_dims, 2)))
    fn.__doc__ = (f"{name}(input, sections) or {name}(input, indices): splits input along dim {dim}"
                  + (" (a 1-D input along dim 0)" if name == "hsplit" else "")
                  + " into equal sections, or at the indices (see tensor_split).\n\n"
                  f"    >>> [p.shape[{dim}] for p in ember.{name}(ember.ones({shape}), 2)]\n"
                  "    [2, 2]\n")
    method.__doc__ = f"See ember.{name}; the indices may also be given as separate ints."
    return fn, method


hsplit, _hsplit_method = _split_named("hsplit", 1, 1)
vsplit, _vsplit_method = _split_named("vsplit", 0, 2)
dsplit, _dsplit_method = _split_named("dsplit", 2, 3)


def ravel(input):
    """input flattened to 1-D: a view where possible, else a copy.

    >>> ember.ravel(ember.ones(2, 3)).shape
    ember.Size([6])
    """
    return input.reshape(-1)


def split_with_sizes(input, split_sizes, dim=0):
    """Splits input along dim into pieces of the given sizes, which must add up to its size.

    >>> [p.tolist() for p in ember.split_with_sizes(ember.arange(3), [1, 2])]
    [[0], [1, 2]]
    """
    return _C.split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """split: the same views (torch's differ only in how autograd tracks them)."""
    return _C.split(input, split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes: the same views (torch's differ only in how autograd tracks them)."""
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input, chunks, dim=0):
    """chunk: the same views (torch's differ only in how autograd tracks them)."""
    return _C.chunk(input, chunks, dim)


# ---------------------------------------------------------------- scatters: input with one view replaced


def _scatter(input, src, view):
    """A copy of input whose view(copy) holds src: the gradient reaches input outside the
    view and src inside it (through copy_ into a view)."""
    out = input.clone()
    target = view(out)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(target.shape)}")
    target.copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with src on the diagonal input.diagonal(offset, dim1, dim2).

    >>> ember.diagonal_scatter(ember.zeros(2, 2), ember.ones(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _scatter(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input, src, dim, index):
    """A copy of input with src at input.select(dim, index).

    >>> ember.select_scatter(ember.zeros(2, 2), ember.ones(2), 0, 1).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    return _scatter(input, src, lambda t: t.select(dim, index))


def _slice(input, dim=0, start=None, end=None, step=1):
    """input[..., start:end:step, ...] along dim (torch's aten::slice)."""
    index = [slice(None)] * input.dim()
    index[_wrap_dim(dim, input.dim())] = slice(start, end, step)
    return input[tuple(index)]


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with src at input[start:end:step] along dim.

    >>> ember.slice_scatter(ember.zeros(4), ember.ones(2), start=1, step=2).tolist()
    [0.0, 1.0, 0.0, 1.0]
    """
    return _scatter(input, src, lambda t: _slice(t, dim, start, end, step))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input (keeping its strides) with src written to copy.as_strided(size,
    stride, storage_offset), which addresses the copy's own memory.

    >>> ember.as_strided_scatter(ember.zeros(2, 2), ember.ones(2), (2,), (3,)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    out = input.clone()
    if tuple(src.shape) != tuple(size):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(size)}")
    # Written out of place, through the positions the view addresses in the copy's memory:
    # an in-place write into an as_strided view of a tensor that requires grad leaves a
    # cycle (AsStridedBackward0 saves its base, whose CopySlices history reaches it again)
    # that is never freed (issue 15's note).
    n = out.untyped_storage().nbytes() // out.element_size()
    offset = out.storage_offset() if storage_offset is None else storage_offset
    positions = _C.arange(n, device=out.device).as_strided(size, stride, offset)
    flat = out.as_strided((n,), (1,), 0).index_put((positions.reshape(-1),), src.reshape(-1).to(out.dtype))
    return flat.as_strided(tuple(out.shape), out.stride(), out.storage_offset())


# ---------------------------------------------------------------- the *_copy functions


def _unsqueeze(input, dim):
    return input.unsqueeze(dim)


def _view(input, size=None, *, dtype=None):
    """view_copy(input, size) or view_copy(input, dtype)."""
    if isinstance(size, _C.dtype):
        size, dtype = None, size
    if (size is None) == (dtype is None):
        raise TypeError("view_copy() expects one of (Tensor input, tuple of ints size) or (Tensor input, "
                        "torch.dtype dtype)")
    return input.view(dtype) if size is None else input.view(size)


def _expand(input, size, *, implicit=False):
    return input.expand(size)


def _squeeze(input, dim=None):
    return input.squeeze() if dim is None else input.squeeze(dim)


_COPIES = {
    "alias": lambda input: input.view_as(input),
    "as_strided": lambda input, size, stride, storage_offset=None: input.as_strided(size, stride, storage_offset),
    "detach": lambda input: input.detach(),
    "diagonal": lambda input, offset=0, dim1=0, dim2=1: input.diagonal(offset, dim1, dim2),
    "expand": _expand,
    "narrow": lambda input, dim, start, length: input.narrow(dim, start, length),
    "permute": lambda input, dims: input.permute(dims),
    "select": lambda input, dim, index: input.select(dim, index),
    "slice": _slice,
    "split": lambda input, split_size, dim=0: _C.split(input, split_size, dim),
    "split_with_sizes": split_with_sizes,
    "squeeze": _squeeze,
    "t": lambda input: input.t(),
    "transpose": lambda input, dim0, dim1: input.transpose(dim0, dim1),
    "unbind": lambda input, dim=0: input.unbind(dim),
    "unfold": lambda input, dimension, size, step: input.unfold(dimension, size, step),
    "unsqueeze": _unsqueeze,
    "view": _view,
}
COPY_FUNCTIONS = {f"{name}_copy": _copy_fn(name, view) for name, view in _COPIES.items()}


# ---------------------------------------------------------------- factories


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """A 0-D tensor holding the number s, of the default dtype unless dtype is given.

    >>> ember.scalar_tensor(3)
    tensor(3.)
    """
    return _C.full((), s, dtype=_C.get_default_dtype() if dtype is None else dtype, device=device,
                   requires_grad=requires_grad)


def _buffer_address(view):
    """(address, read-only) of a contiguous memoryview's memory, read through CPython's
    Py_buffer (ctypes is imported here, not with ember)."""
    import ctypes

    class PyBuffer(ctypes.Structure):
        _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                    ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                    ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                    ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]

    info = PyBuffer()
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.POINTER(PyBuffer), ctypes.c_int]
    get.restype = ctypes.c_int
    if get(view, ctypes.byref(info), 0) != 0:  # PyBUF_SIMPLE
        raise ValueError("frombuffer(): could not read the buffer")
    address, readonly = info.buf or 0, bool(info.readonly)
    release = ctypes.pythonapi.PyBuffer_Release
    release.argtypes = [ctypes.POINTER(PyBuffer)]
    release(ctypes.byref(info))
    return address, readonly


_warned_readonly = False


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over an object's buffer (bytes, bytearray, array.array, mmap, ...),
    sharing its memory: count elements of dtype from byte offset (count=-1: all that fit).

    >>> ember.frombuffer(bytearray([1, 0, 2, 0]), dtype=ember.int16).tolist()
    [1, 2]
    """
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.c_contiguous:
        raise RuntimeError("could not retrieve buffer from object")  # torch's words: only contiguous buffers
    view = view.cast("B")
    length = view.nbytes
    itemsize = _C.empty(0, dtype=dtype).element_size()
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % itemsize != 0:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({itemsize})")
        count = (length - offset) // itemsize
    elif offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    address, readonly = _buffer_address(view)
    if readonly:
        global _warned_readonly
        if not _warned_readonly:
            import warnings

            _warned_readonly = True
            warnings.warn("The given buffer is not writable, and ember does not support non-writable tensors. This "
                          "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
                          "You may want to copy the buffer to protect its data or make it writable before converting "
                          "it to a tensor. This type of warning will be suppressed for the rest of this program.",
                          UserWarning, stacklevel=2)
    from .storage import UntypedStorage

    storage = UntypedStorage._from_pointer(address + offset, count * itemsize, view)  # view keeps the export alive
    t = _C._legacy_new(dtype)
    t.set_(storage, 0, (count,), (1,))
    return t.requires_grad_() if requires_grad else t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """obj as a tensor: sharing memory with a tensor, numpy array, DLPack producer or
    buffer (read as bytes of dtype) when dtype and device allow; copy=False: must share,
    copy=True: never shares. Conversions of a tensor keep its autograd history.

    >>> ember.asarray([1, 2]).tolist()
    [1, 2]
    """
    from . import as_tensor

    result = None
    if isinstance(obj, _C.TensorBase):
        result = obj
        if requires_grad is None and obj.requires_grad:
            import warnings

            warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
                          "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.", UserWarning, stacklevel=2)
    elif hasattr(obj, "__dlpack__") and not hasattr(obj, "__array_interface__"):
        from .utils.dlpack import from_dlpack

        result = from_dlpack(obj)
    elif hasattr(obj, "__array_interface__") and type(obj).__module__ == "numpy":
        import numpy

        result = as_tensor(numpy.asarray(obj))  # arrays and numpy's scalars
    elif _has_buffer(obj):
        result = frombuffer(obj, dtype=_C.get_default_dtype() if dtype is None else dtype)
        dtype = None
    if result is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        result = _C.tensor(obj, dtype=dtype, device=device)
    else:
        if copy is False and dtype is not None and dtype != result.dtype:
            raise ValueError(f"can't alias tensor with dtype '{_legacy_name(result.dtype)}' into dtype "
                             f"'{_legacy_name(dtype)}'.")
        if copy is False and device is not None and _C.empty(0, device=device).device != result.device:
            raise ValueError(f"can't alias tensor on device '{result.device}' into device '{device}'.")
        converted = result.to(device=device, dtype=dtype) if (dtype is not None or device is not None) else result
        result = converted.clone() if copy and converted is result else converted
    if requires_grad:
        result.requires_grad_()
    return result


def _has_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _legacy_name(dtype, cpp=False):
    """'Float' (cpp: 'float'), as torch's messages name dtypes."""
    from .linalg import _type_name

    return _type_name(dtype, cpp)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialized tensor of the given size whose memory holds its dims in the order
    physical_layout (a permutation; (0, 1, ..., n-1) is contiguous).

    >>> ember.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    size, physical_layout = tuple(size), tuple(physical_layout)
    n = len(size)
    if n != len(physical_layout):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {n} is not equal to len(physical_layout) = {len(physical_layout)}")
    seen = set()
    for i, d in enumerate(physical_layout):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, but got {d} at index "
                               f"{i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    physical = _C.empty([size[d] for d in physical_layout], dtype=dtype, device=device)
    inverse = [physical_layout.index(d) for d in range(n)]
    result = physical.permute(inverse)
    return result.requires_grad_() if requires_grad else result


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad=False):
    """An uninitialized tensor of the given size and strides, of self's dtype and device unless given."""
    result = _C.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                              device=self.device if device is None else device)
    return result.requires_grad_() if requires_grad else result


# ---------------------------------------------------------------- conjugate transposes


def _conj(x):
    """x's conjugate (x itself for the real dtypes): H, mH, adjoint and linalg.vecdot
    go through here."""
    return x.conj()


def _adjoint_of(x):
    return _conj(x.transpose(-2, -1))


def adjoint(input):
    """The conjugate transpose of the last two dims: a view.

    >>> ember.adjoint(ember.ones(2, 3)).shape
    ember.Size([3, 2])
    """
    if input.dim() == 0:
        import warnings

        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return _conj(input)
    if input.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{input.dim()}-D tensor.")
    return _adjoint_of(input)


def _H(self):
    """The conjugate transpose of a matrix (2-D tensor)."""
    if self.dim() == 0:
        import warnings

        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return _conj(self)
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""))
    return _adjoint_of(self)


def _mH(self):
    """The conjugate transpose of the last two dims (matrices or batches of matrices)."""
    if self.dim() == 0:
        import warnings

        warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return _conj(self)
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                           "tensor.")
    return _adjoint_of(self)


_native_mT = _C.TensorBase.mT


def _mT(self):
    """The transpose of the last two dims (matrices or batches of matrices)."""
    if self.dim() == 0:
        import warnings

        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
        return self
    return _native_mT.__get__(self)


# ---------------------------------------------------------------- in-place view methods


def _extent(t):
    """The storage elements a tensor's geometry reaches (offset included)."""
    if t.numel() == 0:
        return t.storage_offset()
    return t.storage_offset() + sum((n - 1) * st for n, st in zip(t.shape, t.stride())) + 1


_restride_function = None


def _restride_fn():
    """The autograd Function of the in-place view methods, made on first use (ember.autograd
    imports after this module)."""
    global _restride_function
    if _restride_function is None:
        from .autograd import Function, grad
        from .autograd.grad_mode import enable_grad, no_grad

        class InplaceView(Function):
            # forward moves x onto view(x) and marks it dirty, so that x's history becomes this
            # node; backward is the view's own backward, run on a stand-in of x's old geometry
            # over fresh memory (as_strided_'s gradient depends on the strides).
            @staticmethod
            def forward(ctx, x, view):
                with no_grad():
                    result = view(x)
                ctx.view = view
                ctx.geometry = (tuple(x.shape), x.stride(), x.storage_offset(), max(_extent(x), _extent(result)))
                x.set_(result)
                _C._increment_version(x)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                size, stride, offset, n = ctx.geometry
                create_graph = _C.is_grad_enabled()
                with enable_grad():
                    old = _C.zeros(n, dtype=g.dtype).as_strided(size, stride, offset).detach().requires_grad_()
                    (gx,) = grad(ctx.view(old), old, g, create_graph=create_graph)
                return gx, None

        _restride_function = InplaceView
    return _restride_function


def _restride(self, name, view):
    """Makes self the view `view` of itself, in place (torch's t_, squeeze_, ...): the
    native set_ moves it onto the view's memory, and a tensor that requires grad records
    the view's backward through an autograd Function that marks it dirty."""
    if self.requires_grad and _C.is_grad_enabled():
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if self._base is not None:
            # TODO(issue 15): the base would need the view's new geometry in its history
            raise RuntimeError(f"{name}(): ember cannot change the shape of a view that requires grad in place yet; "
                               f"use the out-of-place {name[:-1]}()")
        return _restride_fn().apply(self, view)
    self.set_(view(self))
    _C._increment_version(self)
    return self


def t_(self):
    """In-place t(): swaps dims 0 and 1 of a tensor of at most 2 dims."""
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _restride(self, "t_", lambda x: x.t())


def squeeze_(self, dim=None):
    """In-place squeeze(dim)."""
    return _restride(self, "squeeze_", lambda x: _squeeze(x, dim))


def unsqueeze_(self, dim):
    """In-place unsqueeze(dim)."""
    return _restride(self, "unsqueeze_", lambda x: x.unsqueeze(dim))


def transpose_(self, dim0, dim1):
    """In-place transpose(dim0, dim1)."""
    return _restride(self, "transpose_", lambda x: x.transpose(dim0, dim1))


def swapaxes_(self, axis0, axis1):
    """In-place swapaxes(axis0, axis1)."""
    return _restride(self, "swapaxes_", lambda x: x.transpose(axis0, axis1))


def swapdims_(self, dim0, dim1):
    """In-place swapdims(dim0, dim1)."""
    return _restride(self, "swapdims_", lambda x: x.transpose(dim0, dim1))


def as_strided_(self, size, stride, storage_offset=None):
    """In-place as_strided(size, stride, storage_offset) over self's storage."""
    return _restride(self, "as_strided_", lambda x: x.as_strided(size, stride, storage_offset))


# ---------------------------------------------------------------- predicates and small methods


def is_set_to(self, tensor):
    """Whether both tensors view exactly the same memory: one storage, offset, sizes, strides."""
    return (self.untyped_storage() is tensor.untyped_storage() and self.storage_offset() == tensor.storage_offset()
            and tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride())


def is_same_size(input, other):
    """Whether input and other have the same sizes."""
    return tuple(input.shape) == tuple(other.shape)


def is_nonzero(input):
    """The truth value of a one-element tensor (errors for none or more than one element).

    >>> ember.is_nonzero(ember.tensor([0.5]))
    True
    """
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_signed(input):
    """Whether input's dtype is signed."""
    return input.is_signed()


def sum_to_size(self, *size, **kwargs):
    """self summed down to size, which self must be expandable from (the reduction that
    undoes a broadcast).

    >>> ember.ones(2, 3).sum_to_size(1, 3).tolist()
    [[2.0, 2.0, 2.0]]
    """
    if "size" in kwargs:
        if size:
            raise TypeError("sum_to_size() got multiple values for argument 'size'")
        size = (kwargs.pop("size"),)
    if kwargs or not size:
        raise TypeError(f"sum_to_size() missing 1 required positional arguments: \"size\""
                        if not kwargs else f"sum_to_size() got an unexpected keyword argument {next(iter(kwargs))!r}")
    size = _dims(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    result = self.sum(tuple(range(lead))) if lead else self
    keep = tuple(i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    return result.sum(keep, keepdim=True) if keep else result


def fill(input, value):
    """A new tensor like input (same dtype and strides) filled with value (a number or a
    0-D tensor, which receives the gradient).

    >>> ember.fill(ember.zeros(2), 3).tolist()
    [3.0, 3.0]
    """
    return _C.empty_like(input).fill_(value)


def resize_as_(self, the_template, *, memory_format=None):
    """self resized (in place) to the_template's size; see Tensor.resize_. A tensor already
    of that size is left as it is."""
    from ._constants import contiguous_format

    if memory_format is not None and memory_format is not contiguous_format:
        # TODO(issue 15): other formats once Tensor.resize_ takes memory_format
        raise RuntimeError(f"resize_as_(): ember resizes to the contiguous format only, got {memory_format}")
    if tuple(self.shape) == tuple(the_template.shape) and memory_format is None:
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        return self
    return self.resize_(tuple(the_template.shape))


def embedding_renorm_(input, indices, max_norm, norm_type):
    """The rows of input at indices whose norm_type-norm exceeds max_norm scaled down to it,
    in place (what F.embedding does with max_norm); returns input."""
    from .nn._functional.embedding import _embedding_renorm_

    _embedding_renorm_(input, indices, max_norm, norm_type)
    return input


# ---------------------------------------------------------------- threads


_interop_threads = None  # set once, as torch's: a count; ember runs no separate inter-op pool


def get_num_interop_threads():
    """The number of threads for inter-op parallelism (ember runs ops one after another on
    the calling thread, so this is a count kept for torch's API)."""
    return _interop_threads if _interop_threads is not None else (len(os.sched_getaffinity(0))
                                                                   if hasattr(os, "sched_getaffinity")
                                                                   else os.cpu_count() or 1)


def set_num_interop_threads(num):
    """Sets the number of inter-op threads; allowed once, as in torch."""
    global _interop_threads
    if not isinstance(num, int) or isinstance(num, bool):
        raise TypeError(f"set_num_interop_threads(): argument 'num' must be int, not {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop_threads = num


# ---------------------------------------------------------------- linalg and vander


def _vander_columns(x, n):
    """(..., len) -> (..., len, n): x's powers 0..n-1, by a cumulative product (which also
    gives the right gradient at x = 0)."""
    if n == 0:
        return x.unsqueeze(-1).expand(*x.shape, 0).clone()
    ones = _C.ones_like(x).unsqueeze(-1)
    if n == 1:
        return ones.clone()
    powers = _C.cat([ones, x.unsqueeze(-1).expand(*x.shape, n - 1)], -1)
    return powers.cumprod(-1)


def _vander_dtype(x):
    return x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else _C.int64


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D x: columns x^(N-1), ..., x^0 (increasing: x^0 first).

    >>> ember.vander(ember.tensor([1, 2, 3]), N=3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x.shape[0]
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    result = _vander_columns(x.to(_vander_dtype(x)), N)
    return result if increasing else result.flip(-1)


def linalg_vander(x, *, N=None):
    """The Vandermonde matrices of the last dim of x: (..., n) -> (..., n, N), columns
    x^0, ..., x^(N-1).

    >>> ember.linalg.vander(ember.tensor([1, 2, 3])).tolist()
    [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    """
    if x.dtype in (_C.bool, _C.float16, _C.bfloat16):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_legacy_name(x.dtype)}")
    if x.dim() == 0:
        x = x.reshape(1)  # as torch's: a 0-D x is one value
    n = x.shape[-1]
    if N is None:
        N = n
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _vander_columns(x.to(_vander_dtype(x)), N)


@_autocast.lower_precision
def linalg_vecdot(x, y, *, dim=-1, out=None):
    """The dot product of x and y along dim (broadcast): sum(conj(x) * y).

    >>> ember.linalg.vecdot(ember.tensor([1., 2.]), ember.tensor([3., 4.])).item()
    11.0
    """
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_legacy_name(x.dtype)} and y of type {_legacy_name(y.dtype)} instead")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{_legacy_name(x.dtype)}")
    result = (_conj(x) * y).sum(dim)
    return result if out is None else _into(out, result)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """A.diagonal(offset, dim1, dim2), with linalg's defaults (the last two dims)."""
    return A.diagonal(offset, dim1, dim2)


def linalg_matmul(input, other, *, out=None):
    """ember.matmul."""
    return _C.matmul(input, other) if out is None else _C.matmul(input, other, out=out)


LINALG = {"matmul": linalg_matmul, "diagonal": linalg_diagonal, "vecdot": linalg_vecdot, "vander": linalg_vander}


# ---------------------------------------------------------------- top-level in-place aliases

# torch's top-level in-place functions that are its Tensor methods under the same name
# (torch.abs_(x) is x.abs_()); installed where ember's Tensor has the method.
INPLACE_ALIASES = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_",
    "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "resize_as_", "round_", "rsqrt_", "sin_", "sinc_", "sinh_", "sqrt_",
    "square_", "tan_", "tanh_", "trunc_", "xlogy_", "as_strided_",
)


def inplace_aliases(tensor_class, namespace):
    """{name: function} for the INPLACE_ALIASES that tensor_class has and namespace lacks."""
    aliases = {}
    for name in INPLACE_ALIASES:
        if name in namespace or not hasattr(tensor_class, name):
            continue

        def alias(input, *args, _name=name, **kwargs):
            return getattr(input, _name)(*args, **kwargs)

        alias.__name__ = alias.__qualname__ = name
        alias.__doc__ = f"input.{name}(...): see Tensor.{name}."
        aliases[name] = alias
    return aliases


# ---------------------------------------------------------------- what torch has and ember lacks


def missing_attribute(module, name, torch_namespace):
    """The AttributeError for a name a module lacks: it says so when torch has the name
    (looked up only now, in the list of torch 2.13's public names)."""
    message = f"module {module!r} has no attribute {name!r}"
    if not name.startswith("__"):
        from ._torch_names import NAMES

        if name in NAMES.get(torch_namespace, ()):
            message += f": ember does not implement {torch_namespace}.{name} yet"
    return AttributeError(message)


# ---------------------------------------------------------------- the tables the package installs

FUNCTIONS = {
    "block_diag": block_diag, "combinations": combinations, "unravel_index": unravel_index,
    "column_stack": column_stack, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit, "ravel": ravel,
    "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split, "unsafe_chunk": unsafe_chunk,
    "unsafe_split_with_sizes": unsafe_split_with_sizes, "diagonal_scatter": diagonal_scatter,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter, "as_strided_scatter": as_strided_scatter,
    **COPY_FUNCTIONS,
    "scalar_tensor": scalar_tensor, "frombuffer": frombuffer, "asarray": asarray, "empty_permuted": empty_permuted,
    "adjoint": adjoint, "is_same_size": is_same_size, "is_nonzero": is_nonzero, "is_signed": is_signed,
    "fill": fill, "get_num_interop_threads": get_num_interop_threads,
    "set_num_interop_threads": set_num_interop_threads, "vander": vander, "as_strided_": as_strided_,
    "embedding_renorm_": embedding_renorm_,
}

# Tensor methods: the functions above that torch also has as methods, and the method-only names
METHODS = {
    "hsplit": _hsplit_method, "vsplit": _vsplit_method, "dsplit": _dsplit_method,
    **{name: FUNCTIONS[name] for name in ("ravel", "split_with_sizes", "unsafe_split",
                                          "unsafe_chunk", "unsafe_split_with_sizes", "diagonal_scatter",
                                          "select_scatter", "slice_scatter", "as_strided_scatter", "adjoint",
                                          "is_same_size", "is_nonzero", "narrow_copy")},
    "new_empty_strided": new_empty_strided, "t_": t_, "squeeze_": squeeze_, "unsqueeze_": unsqueeze_,
    "transpose_": transpose_, "swapaxes_": swapaxes_, "swapdims_": swapdims_, "as_strided_": as_strided_,
    "is_set_to": is_set_to, "sum_to_size": sum_to_size, "resize_as_": resize_as_,
}
PROPERTIES = {"H": _H, "mH": _mH, "mT": _mT}
