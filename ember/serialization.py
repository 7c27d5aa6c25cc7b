"""ember.save / ember.load: tensors, state dicts and other Python objects to files.

The file format (version 1), all integers little-endian:

    offset 0   magic      8 bytes  b"\\x89EMBER\\r\\n"
    offset 8   version    u32      1
    offset 12  flags      u32      bit 0: tensor data is big-endian (0 on x86 and ARM)
    offset 16  length     u64      length of the pickle that follows
    offset 24  pickle     the object, pickled, with every storage replaced by a
                          persistent id ("storage", key, nbytes); keys count 0, 1, ...
                          in the order the storages were first met
    then       data       each storage's bytes in key order, each starting at an offset
                          (from the start of the record) that is a multiple of 64;
                          zero bytes pad the gaps

A storage is written once however many tensors view it, so views saved together load
as views of one storage again. Tensors are pickled as (storage, offset, size, stride,
dtype, requires_grad). The format is ember's own: it does not read files written by
torch.save, nor torch those written here.

ember.load is safe by default (weights_only=True): the unpickler then restores only
tensors, storages, dtypes, sizes, devices, containers (dict, list, tuple, set,
OrderedDict, ...) and plain values (ember's own tensor subclasses included), and raises
pickle.UnpicklingError for any other global the file names. add_safe_globals allows more; weights_only=False restores any
pickle (only for files you trust: unpickling can run arbitrary code)."""
from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import struct
import sys

from . import _C
from . import _constants
from .storage import TypedStorage, UntypedStorage, _rebuild_typed

MAGIC = b"\x89EMBER\r\n"
VERSION = 1
DEFAULT_PROTOCOL = 4
_HEADER = struct.Struct("<8sIIQ")
_ALIGN = 64
_CHUNK = 64 << 20  # copy storages in pieces of at most this many bytes


def _rebuild_tensor(storage, storage_offset, size, stride, dtype, requires_grad=False, cls=None, state=None):
    """A tensor viewing storage; checks what a damaged (or hostile) file could get wrong."""
    from ._tensor import Tensor

    if not isinstance(storage, UntypedStorage) or not isinstance(dtype, _C.dtype):
        raise pickle.UnpicklingError("ember.load: a tensor record names no storage or no dtype")
    if not (isinstance(storage_offset, int) and all(isinstance(v, int) for v in (*size, *stride))
            and len(size) == len(stride) and storage_offset >= 0 and min((*size, *stride), default=0) >= 0):
        raise pickle.UnpicklingError("ember.load: a tensor record has an invalid size, stride or offset")
    if all(n > 0 for n in size):
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (last + 1) * dtype.itemsize > storage.nbytes():
            raise pickle.UnpicklingError("ember.load: a tensor record reaches past the end of its storage")
    if cls is None:
        cls = Tensor
    elif not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise pickle.UnpicklingError(f"ember.load: {cls!r} is not a tensor class")
    t = _C._legacy_new(dtype)
    if cls is not Tensor:
        t.__class__ = cls
    t.set_(storage, storage_offset, tuple(size), tuple(stride))
    if requires_grad:
        t.requires_grad_(True)
    if state:
        t.__dict__.update(state)
    return t


# ---- saving ----

class _Pickler(pickle.Pickler):
    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = []  # in key order; held so that their ids stay unique while pickling
        self._keys = {}

    def persistent_id(self, obj):
        if isinstance(obj, UntypedStorage):
            key = self._keys.get(id(obj))
            if key is None:
                key = self._keys[id(obj)] = len(self.storages)
                self.storages.append(obj)
            return ("storage", key, obj.nbytes())
        return None

    def reducer_override(self, obj):
        # Tensors (and subclasses that do not pickle themselves their own way) are saved as
        # a view of a storage: never through Tensor.__reduce_ex__, whose storage would be
        # copied into the pickle.
        from ._tensor import Tensor

        if isinstance(obj, _C.TensorBase) and type(obj).__reduce_ex__ is Tensor.__reduce_ex__:
            args = (obj.untyped_storage(), obj.storage_offset(), tuple(obj.size()), obj.stride(), obj.dtype,
                    bool(getattr(obj, "requires_grad", False)))
            if type(obj) is not Tensor:
                args += (type(obj), dict(vars(obj)))
            return _rebuild_tensor, args
        return NotImplemented


def _storage_bytes(storage, start, stop):
    return storage._slice(start, stop)._to_bytes()


def _write_record(obj, f, pickle_module, protocol):
    buffer = io.BytesIO()
    if pickle_module is pickle:
        pickler = _Pickler(buffer, protocol)
    else:  # a pickle-compatible module: its Pickler, with ember's storage handling
        pickler = type("_Pickler", (pickle_module.Pickler,), {
            "__init__": _Pickler.__init__, "persistent_id": _Pickler.persistent_id,
            "reducer_override": _Pickler.reducer_override})(buffer, protocol)
    pickler.dump(obj)
    data = buffer.getbuffer()
    flags = 1 if sys.byteorder == "big" else 0
    f.write(_HEADER.pack(MAGIC, VERSION, flags, len(data)))
    f.write(data)
    position = _HEADER.size + len(data)
    for storage in pickler.storages:
        pad = -position % _ALIGN
        f.write(b"\0" * pad)
        position += pad
        n = storage.nbytes()
        for start in range(0, n, _CHUNK):
            f.write(_storage_bytes(storage, start, min(n, start + _CHUNK)))
        position += n


@contextlib.contextmanager
def _opened(f, mode):
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as handle:
            yield handle
    else:
        yield f


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj (a tensor, a state dict, any picklable object) to f: a path, a
    path-like, or a binary file object. Tensors that share a storage are saved with it
    once and load sharing it again. See this module's docstring for the format.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> ember.save({"w": ember.ones(2)}, buffer)
    >>> _ = buffer.seek(0)
    >>> ember.load(buffer)["w"]
    tensor([1., 1.])
    """
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError(f"ember.save: expected a path or a file object with write(), got {type(f).__name__}")
    with _opened(f, "wb") as handle:
        _write_record(obj, handle, pickle_module, pickle_protocol)


# ---- loading ----

_SAFE_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "slice"): slice,
    ("builtins", "range"): range,
    ("_codecs", "encode"): None,  # protocol 2 pickles bytes as _codecs.encode(text, "latin1")
    ("ember.serialization", "_rebuild_tensor"): _rebuild_tensor,
    ("ember.storage", "_rebuild_typed"): _rebuild_typed,
    ("ember", "Size"): _C.Size,
    ("ember._constants", "device"): _constants.device,
}
_user_safe_globals = []


def _qualified_name(obj):
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', repr(obj)))}"


def add_safe_globals(safe_globals):
    """Allows ember.load(weights_only=True) to restore these classes and functions too
    (each an object, or a (object, "module.name") pair for one saved under another name)."""
    _user_safe_globals.extend(safe_globals)


def get_safe_globals():
    """The globals add_safe_globals allowed."""
    return list(_user_safe_globals)


def clear_safe_globals():
    """Forgets the globals add_safe_globals allowed."""
    _user_safe_globals.clear()


class safe_globals:
    """Within this context, ember.load(weights_only=True) also restores these globals."""

    def __init__(self, safe_globals):
        self._globals = list(safe_globals)

    def __enter__(self):
        self._before = len(_user_safe_globals)
        add_safe_globals(self._globals)

    def __exit__(self, *exc):
        del _user_safe_globals[self._before:]


def _safe_global(module, name):
    key = (module, name)
    if key in _SAFE_GLOBALS:
        found = _SAFE_GLOBALS[key]
        if found is None:
            import codecs

            found = codecs.encode
        return found
    if module == "ember._C" and isinstance(getattr(_C, name, None), _C.dtype):
        return getattr(_C, name)
    if module == "ember._constants" and isinstance(getattr(_constants, name, None),
                                                   (_constants.memory_format, _constants.layout)):
        return getattr(_constants, name)
    if module == "ember" or module.startswith("ember."):  # ember's own tensor classes (nn.Parameter, ...)
        import importlib

        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            found = None
        if isinstance(found, type) and issubclass(found, _C.TensorBase):
            return found
    for entry in _user_safe_globals:
        obj, qualified = entry if isinstance(entry, tuple) else (entry, _qualified_name(entry))
        if qualified == f"{module}.{name}":
            return obj
    raise pickle.UnpicklingError(
        f"Weights only load failed: the file refers to the global {module}.{name}, which ember.load does not "
        "restore with weights_only=True (the default: only tensors, containers and plain values). If you trust "
        f"the file's source, load it with weights_only=False, or allow this global with "
        f"ember.serialization.add_safe_globals([{name}]).")


def _check_map_location(map_location):
    """The map_location function to apply to each loaded storage (ember has the CPU only)."""
    if map_location is None:
        return None
    if callable(map_location) and not isinstance(map_location, (str, _constants.device)):
        return map_location
    targets = map_location.values() if isinstance(map_location, dict) else [map_location]
    for target in targets:
        if str(target) not in ("cpu", "cpu:0"):
            raise RuntimeError(f"ember.load: ember runs on the CPU only; cannot map storages to '{target}' "
                               "(use map_location='cpu')")
    return None


def _read_exact(f, n):
    data = f.read(n)
    if len(data) != n:
        raise pickle.UnpicklingError(f"ember.load: the file ends early ({len(data)} of {n} bytes read)")
    return data


def _read_into(f, storage, n):
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        storage._slice(start, stop)._copy_from_buffer(_read_exact(f, stop - start), 0)


def _not_ember_file(head):
    if head.startswith(b"PK\x03\x04"):
        return "ember.load: this is a zip archive, as torch.save writes; ember reads only files written by ember.save"
    return "ember.load: not a file written by ember.save (its first bytes are not ember's magic number)"


def _read_record(f, pickle_module, weights_only, pickle_load_args):
    head = f.read(_HEADER.size)
    if len(head) < _HEADER.size or not head.startswith(MAGIC):
        raise pickle.UnpicklingError(_not_ember_file(head))
    _, version, flags, length = _HEADER.unpack(head)
    if version > VERSION:
        raise RuntimeError(f"ember.load: the file has format version {version}; this ember reads up to {VERSION}")
    if bool(flags & 1) != (sys.byteorder == "big"):
        raise RuntimeError("ember.load: the file was written on a machine of the other byte order")
    data = _read_exact(f, length)
    storages = []
    base = pickle_module.Unpickler

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 3 and pid[0] == "storage" and isinstance(pid[1], int)
                and isinstance(pid[2], int) and 0 <= pid[1] <= len(storages) and pid[2] >= 0):
            raise pickle.UnpicklingError(f"ember.load: unknown persistent id {pid!r}")
        if pid[1] == len(storages):
            storages.append(UntypedStorage(pid[2]))
        elif storages[pid[1]].nbytes() != pid[2]:
            raise pickle.UnpicklingError(f"ember.load: storage {pid[1]} is given two sizes")
        return storages[pid[1]]

    class Unpickler(base):
        def find_class(self, module, name):
            if weights_only:
                return _safe_global(module, name)
            return super().find_class(module, name)

    unpickler = Unpickler(io.BytesIO(data), **pickle_load_args)
    unpickler.persistent_load = persistent_load
    try:
        obj = unpickler.load()
    except pickle.UnpicklingError:
        raise
    except Exception as err:
        if not weights_only:
            raise
        raise pickle.UnpicklingError(f"Weights only load failed: {type(err).__name__}: {err}") from err
    position = _HEADER.size + length
    for storage in storages:  # their bytes follow the pickle, in key order
        pad = -position % _ALIGN
        _read_exact(f, pad)
        _read_into(f, storage, storage.nbytes())
        position += pad + storage.nbytes()
    return obj


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads an object saved by ember.save from f (a path, a path-like or a binary file
    object). weights_only=True (the default when None) restores only tensors,
    containers and plain values and raises pickle.UnpicklingError on anything else;
    weights_only=False restores any pickled object (trusted files only). map_location
    may be None, 'cpu', ember.device('cpu'), a dict mapping locations to 'cpu', or a
    function (storage, location) -> storage. mmap is accepted: the data is read into
    memory either way.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> ember.save([ember.tensor(1), "text"], buffer)
    >>> _ = buffer.seek(0)
    >>> ember.load(buffer, map_location="cpu")
    [tensor(1), 'text']
    """
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    mapper = _check_map_location(map_location)
    with _opened(f, "rb") as handle:
        obj = _read_record(handle, pickle_module or pickle, weights_only, pickle_load_args)
    if mapper is not None:
        obj = _map_storages(obj, mapper)
    return obj


def _map_storages(obj, mapper):
    """Calls map_location(storage, 'cpu') once per storage; the storage it returns
    replaces the original in every tensor viewing it."""
    from ._tensor import Tensor

    mapped = {}

    def visit(x):
        if isinstance(x, Tensor):
            s = x.untyped_storage()
            if id(s) not in mapped:
                mapped[id(s)] = (s, mapper(s, "cpu"))
            new = mapped[id(s)][1]
            if new is not s and new is not None:
                x.set_(new.untyped() if isinstance(new, TypedStorage) else new, x.storage_offset(),
                       tuple(x.size()), x.stride())
        elif isinstance(x, dict):
            for v in x.values():
                visit(v)
        elif isinstance(x, (list, tuple, set, frozenset)):
            for v in x:
                visit(v)
        return x

    return visit(obj)
