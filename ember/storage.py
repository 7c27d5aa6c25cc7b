"""Storages: UntypedStorage (bytes; ember._C.StorageBase), TypedStorage (bytes seen as
one dtype) and the legacy FloatStorage, LongStorage, ... (a TypedStorage whose dtype the
class fixes). Everything is built on StorageBase's few native methods and on tensors
over the storage (`_tensor(dtype)`)."""
from __future__ import annotations

import copy as _copy

from . import _C
from ._constants import device as _device


def _memory(address: int, nbytes: int) -> memoryview:
    """A writable memoryview of nbytes at address, without a copy: valid while the memory's
    owner lives and is not resized (file writers and readers of storages and tensors)."""
    if not nbytes:
        return memoryview(b"")
    import ctypes

    return memoryview((ctypes.c_char * nbytes).from_address(address)).cast("B")


def _rebuild_untyped(data: bytes):
    s = UntypedStorage(len(data))
    s._copy_from_buffer(data, 0)
    return s


def _byte_order_swap(raw: bytes, itemsize: int, byte_order: str) -> bytes:
    import sys

    if byte_order not in ("native", "little", "big"):
        raise ValueError(f"from_buffer(): byte_order must be 'native', 'little' or 'big', got {byte_order!r}")
    if byte_order == "native" or byte_order == sys.byteorder or itemsize == 1:
        return raw
    out = bytearray(raw)
    for i in range(0, len(out), itemsize):
        out[i:i + itemsize] = out[i:i + itemsize][::-1]
    return bytes(out)


class _StorageMixin:
    """What every ember storage answers alike: its device (its bytes' device), unpinned,
    and on the CPU it shares its memory with other processes once share_memory_() moved
    it (Note [Shared storages] in csrc/core/storage.h). A meta storage has a size and no
    bytes."""

    is_sparse = False

    @property
    def device(self):
        return self.untyped()._device()

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def cpu(self):
        """This storage, or a copy of its bytes on the CPU."""
        if self.device.type == "cpu":
            return self
        return self._wrap(self.untyped()._tensor(_C.uint8).cpu().untyped_storage())

    def is_shared(self):
        return _C.StorageBase.is_shared(self.untyped())

    def share_memory_(self):
        """Moves the bytes into shared memory, in place (every view stays valid); a no-op
        when they are there already. Returns self."""
        from . import multiprocessing  # noqa: F401 (its reductions send shared storages by fd)

        _C.StorageBase.share_memory_(self.untyped())
        return self

    def is_pinned(self, device=None):
        return False

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        body = "..." if self.device.type == "meta" else "\n".join(f" {v}" for v in self.tolist())
        tail = f"[ember.storage.{self._repr_tail()} of size {self.size()}]"
        return f"{body}\n{tail}" if body else tail

    __str__ = __repr__


class UntypedStorage(_StorageMixin, _C.StorageBase):
    """Bytes that tensors view. UntypedStorage(nbytes) or UntypedStorage(list of byte
    values), on the CPU or on device (a meta storage has a size and no bytes)."""

    def __new__(cls, *args, device=None):
        if len(args) > 1:
            raise TypeError(f"UntypedStorage() takes at most 1 argument ({len(args)} given)")
        arg = args[0] if args else 0
        values = None if isinstance(arg, int) and not isinstance(arg, bool) else list(arg)
        nbytes = arg if values is None else len(values)
        device = _device("cpu" if device is None else device)
        if device.type != "cpu":  # the device's allocator, through a tensor of bytes
            if values is None:
                return _C.empty(nbytes, dtype=_C.uint8, device=device).untyped_storage()
            return _C.tensor(values, dtype=_C.int64).to(_C.uint8).to(device).untyped_storage()
        s = super().__new__(cls, nbytes)
        if values:  # byte values wrap modulo 256, as in torch
            s._tensor(_C.uint8).copy_(_C.tensor(values, dtype=_C.int64))
        return s

    def _wrap(self, untyped):
        return untyped

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def untyped(self):
        return self

    def fill_(self, value):
        self._tensor(_C.uint8).fill_(int(value) % 256)  # wraps, as in torch
        return self

    def copy_(self, source, non_blocking=None):
        src = source.untyped() if isinstance(source, (UntypedStorage, TypedStorage)) else None
        if src is None:
            raise TypeError(f"copy_(): expected a storage, got {type(source).__name__}")
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch: copy_() of {src.nbytes()} bytes into a storage of {self.nbytes()}")
        self._tensor(_C.uint8).copy_(src._tensor(_C.uint8))
        return self

    def tolist(self):
        return self._tensor(_C.uint8).tolist()

    def clone(self):
        return UntypedStorage(self.nbytes(), device=self.device).copy_(self)

    def _repr_tail(self):
        return f"UntypedStorage(device={self.device})"

    def _check_index(self, index):
        if not isinstance(index, int):
            raise TypeError(f"UntypedStorage indices must be integers or slices, not {type(index).__name__}")
        if not -self.nbytes() <= index < self.nbytes():
            raise IndexError(f"index {index} out of range for storage of size {self.nbytes()}")

    def __getitem__(self, index):
        if isinstance(index, slice):  # shares the bytes, as in torch
            start, stop, step = index.indices(self.nbytes())
            if step != 1:
                raise RuntimeError("slices of a storage must have step 1")
            return self._slice(start, max(start, stop))
        self._check_index(index)
        return self._tensor(_C.uint8)[index].item()

    def __setitem__(self, index, value):
        try:
            self._check_index(index)
        except IndexError as err:  # torch raises RuntimeError when writing, IndexError when reading
            raise RuntimeError(str(err)) from None
        self._tensor(_C.uint8)[index] = int(value) % 256

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        """A storage holding a copy of a buffer's bytes (count elements of dtype from offset)."""
        if dtype is None:
            raise RuntimeError("from_buffer(): argument 'dtype' cannot be None")
        itemsize = dtype.itemsize
        raw = memoryview(buffer).cast("B")
        if offset < 0 or offset > len(raw):
            raise ValueError(f"offset must be within the buffer's {len(raw)} bytes, got {offset}")
        nbytes = len(raw) - offset if count < 0 else count * itemsize
        if nbytes % itemsize:
            raise ValueError(f"buffer size ({nbytes}) must be a multiple of element size ({itemsize})")
        if offset + nbytes > len(raw):
            raise ValueError(f"buffer has only {len(raw) - offset} bytes after offset {offset}, {nbytes} requested")
        data = _byte_order_swap(bytes(raw[offset:offset + nbytes]), itemsize, byte_order)
        s = cls(nbytes)
        s._copy_from_buffer(data, 0)
        return s

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """A storage mapped from a file: shared mappings write through to it."""
        return cls._from_file(str(filename), bool(shared), int(nbytes))

    def __reduce__(self):
        return (_rebuild_untyped, (self._to_bytes(),))

    def __deepcopy__(self, memo):
        if id(self) not in memo:  # one Python object per native storage: id() is the storage
            memo[id(self)] = self.clone()
        return memo[id(self)]

    def __copy__(self):
        return self


_C.StorageBase._set_storage_class(UntypedStorage)


def _rebuild_typed(untyped, dtype):
    return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


class TypedStorage(_StorageMixin):
    """A storage seen as elements of one dtype: TypedStorage(size or data, dtype=...)."""

    _fixed_dtype = None  # the legacy classes fix one

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        fixed = type(self)._fixed_dtype
        if fixed is not None and dtype is not None and dtype is not fixed:
            raise RuntimeError(f"{type(self).__name__}: dtype is fixed to {fixed!r}, got {dtype!r}")
        self.dtype = fixed or dtype or _C.get_default_dtype()
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage(): no positional arguments with wrap_storage")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"wrap_storage must be an UntypedStorage, got {type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
            return
        if not args:
            self._untyped_storage = UntypedStorage(0, device=device)
        elif len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool):
            if args[0] < 0:
                raise RuntimeError(f"TypedStorage(): size must be non-negative, got {args[0]}")
            self._untyped_storage = UntypedStorage(args[0] * self.dtype.itemsize, device=device)
        elif len(args) == 1:
            data = _C.tensor(list(args[0]), dtype=self.dtype, device=device)
            self._untyped_storage = data.untyped_storage()
        else:
            raise TypeError(f"{type(self).__name__}() takes at most 1 positional argument ({len(args)} given)")

    def _tensor(self):
        return self._untyped_storage._tensor(self.dtype)

    def _wrap(self, untyped):
        return TypedStorage(wrap_storage=untyped, dtype=self.dtype, _internal=True)

    def untyped(self):
        return self._untyped_storage

    _untyped = untyped

    def size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def resize_(self, size):
        self._untyped_storage.resize_(size * self.dtype.itemsize)
        return self

    def fill_(self, value):
        self._tensor().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        self._untyped_storage.copy_(source)  # bytes, whatever the dtypes (as torch)
        return self

    def tolist(self):
        return self._tensor().tolist()

    def clone(self):
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype, _internal=True)

    def _repr_tail(self):
        return f"TypedStorage(dtype={self.dtype!r}, device={self.device})"

    def type(self, dtype=None):
        if dtype is None:
            return f"ember.{self.dtype._legacy_name}Storage"
        raise NotImplementedError("TypedStorage.type(dtype): convert through a tensor instead")

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._tensor()[index].item()

    def __setitem__(self, index, value):
        self._tensor()[index] = value

    def __eq__(self, other):
        return isinstance(other, TypedStorage) and other.dtype is self.dtype and \
            other._untyped_storage is self._untyped_storage

    def __hash__(self):
        return hash((id(self._untyped_storage), self.dtype))

    @classmethod
    def from_buffer(cls, buffer, byte_order=None, count=-1, offset=0, dtype=None):
        if byte_order is None and cls._fixed_dtype is not None:
            raise RuntimeError("from_buffer(): function missing required argument 'byte_order' (pos 2)")
        byte_order = byte_order or "native"
        dtype = cls._fixed_dtype or dtype
        if dtype is None:
            raise RuntimeError("from_buffer(): dtype must be given (or use a typed class such as FloatStorage)")
        untyped = UntypedStorage.from_buffer(buffer, byte_order, count, offset, dtype=dtype)
        return cls(wrap_storage=untyped, dtype=dtype, _internal=True)

    @classmethod
    def from_file(cls, filename, shared=False, size=0, *, dtype=None):
        dtype = cls._fixed_dtype or dtype or _C.get_default_dtype()
        untyped = UntypedStorage.from_file(filename, shared, size * dtype.itemsize)
        return cls(wrap_storage=untyped, dtype=dtype, _internal=True)

    def __reduce__(self):
        return (_rebuild_typed, (self._untyped_storage, self.dtype))

    def __deepcopy__(self, memo):
        return TypedStorage(wrap_storage=_copy.deepcopy(self._untyped_storage, memo), dtype=self.dtype,
                            _internal=True)



class _LegacyStorageMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, TypedStorage) and obj.dtype is cls._fixed_dtype


def _make_storage_classes() -> dict:
    classes = {}
    for name in _C._dtype_names:
        dtype = getattr(_C, name)
        cls_name = dtype._legacy_name + "Storage"
        if cls_name not in classes:
            classes[cls_name] = _LegacyStorageMeta(cls_name, (TypedStorage,), {
                "_fixed_dtype": dtype, "__module__": "ember",
                "__doc__": f"A TypedStorage of {dtype!r}: {cls_name}(size) or {cls_name}(data)."})
    return classes


STORAGE_CLASSES = _make_storage_classes()
