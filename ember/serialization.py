"""ember.save / ember.load: tensors, state dicts and other Python objects to files, in
torch's own formats.

ember.save writes what torch.save writes: a zip archive (stored, not compressed) whose
records sit in one top folder (the file's name without extension, or "archive"):

    data.pkl                the object, pickled with protocol 2; each storage is a
                            persistent id ("storage", torch.<Type>Storage, key, "cpu", numel)
    .format_version         "1"
    .storage_alignment      "64"
    byteorder               "little" (sys.byteorder)
    data/<key>              each storage's bytes once, keys "0", "1", ... in the order the
                            storages were first met; the bytes start at a multiple of 64
                            from the start of the file (local headers padded with an extra
                            field), so they can be mapped in place
    version                 "3\\n"
    .data/serialization_id  40 digits

The pickle names torch's globals, not ember's (torch._utils._rebuild_tensor_v2,
torch._utils._rebuild_parameter, torch._tensor._rebuild_from_type_v2, torch.FloatStorage,
torch.storage.UntypedStorage, torch.float32, torch.Size, torch.device, ...), so torch.load
reads ember's files as torch tensors, Parameters, state dicts. A storage is written once
however many tensors view it, so views saved together load as views of one storage.
_use_new_zipfile_serialization=False writes torch's legacy format instead.

ember.load reads torch's zip archives (any top folder name; storages of a big-endian
machine's file are byte-swapped), torch's legacy format and ember's own earlier format
(see ember/_serialization/_legacy.py), mapping torch's globals to ember's objects.
mmap=True (zip files given by path) maps the file once, privately, and slices every
storage from the mapping instead of reading it. Sizes a file states are checked against
the file before anything is allocated; a damaged file ends in RuntimeError (the archive)
or pickle.UnpicklingError (the pickle), as in torch.

ember.load is safe by default (weights_only=True): it then admits exactly the globals
torch 2.13's weights_only unpickler admits (tensors, storages, Parameters, dtypes, sizes,
devices, OrderedDict, ...; not numpy arrays), and raises pickle.UnpicklingError naming any
other global. add_safe_globals / safe_globals allow more; weights_only=False restores any
pickle (only for files you trust: unpickling can run arbitrary code).
TORCH_FORCE_WEIGHTS_ONLY_LOAD / EMBER_FORCE_WEIGHTS_ONLY_LOAD force weights_only=True;
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD / EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD make the default False
where the caller did not pass weights_only."""
from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import pickletools
import sys
import types
import warnings

from . import _C, _constants
from ._serialization import _names
from ._serialization._legacy import EMBER_MAGIC, read_ember_v1, read_legacy, storage_dtype, wrap, write_legacy
from ._serialization._zip import ZipCheckpoint, archive_name, byteswap, is_torch_script, write_zip
from .storage import STORAGE_CLASSES, TypedStorage, UntypedStorage

DEFAULT_PROTOCOL = 2


# ---- saving ----

class _StorageOf:
    """A tensor's storage, seen as the dtype the tensor reads it as (its persistent id names the type)."""

    __slots__ = ("untyped", "dtype")

    def __init__(self, untyped, dtype):
        self.untyped, self.dtype = untyped, dtype


def _obj_state(obj):
    state = getattr(obj, "__dict__", None)
    return dict(state) if state else None


class _TorchNames:
    """Pickler methods that write storages as persistent ids and ember's globals under torch's names.
    Mixed into a pure-Python pickler: only that one lets save_global be overridden."""

    def _init_storages(self, legacy):
        self.legacy = legacy
        self.storages = []  # (key, untyped storage, dtype), in key order; held so that ids stay unique
        self._keys = {}

    def _storage_id(self, untyped, dtype, storage_class):
        entry = self._keys.get(id(untyped))
        if entry is None:
            entry = self._keys[id(untyped)] = (str(len(self.storages)), dtype)
            self.storages.append((entry[0], untyped, dtype))
        elif entry[1] != dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        pid = ("storage", storage_class, entry[0], "cpu", untyped.nbytes() // dtype.itemsize)
        return pid + (None,) if self.legacy else pid

    def persistent_id(self, obj):
        if type(obj) is _StorageOf:
            return self._storage_id(obj.untyped, obj.dtype, STORAGE_CLASSES[obj.dtype._legacy_name + "Storage"])
        if isinstance(obj, UntypedStorage):
            return self._storage_id(obj, _C.uint8, UntypedStorage)
        if isinstance(obj, TypedStorage):
            return self._storage_id(obj.untyped(), obj.dtype, STORAGE_CLASSES[obj.dtype._legacy_name + "Storage"])
        return None

    def reducer_override(self, obj):
        from ._tensor import Tensor

        if isinstance(obj, _C.TensorBase):
            parameter = _names.loaded_parameter_class()
            if isinstance(obj, parameter or ()) and type(obj).__reduce_ex__ is parameter.__reduce_ex__:
                state = _obj_state(obj)
                args = (obj.data, bool(obj.requires_grad), collections.OrderedDict())
                if state:
                    return _names.rebuild_parameter_with_state, args + (state,)
                return _names.rebuild_parameter, args
            if type(obj).__reduce_ex__ is Tensor.__reduce_ex__:  # not a subclass that pickles its own way
                args = (_StorageOf(obj.untyped_storage(), obj.dtype), obj.storage_offset(), tuple(obj.size()),
                        tuple(obj.stride()), bool(obj.requires_grad), collections.OrderedDict())
                state = _obj_state(obj)
                if type(obj) is Tensor and not state:
                    return _names.rebuild_tensor_v2, args
                return _names.rebuild_from_type_v2, (_names.rebuild_tensor_v2, type(obj), args, state or {})
        elif isinstance(obj, _constants.device):
            return _constants.device, (obj.type,) if obj.index is None else (obj.type, obj.index)
        elif isinstance(obj, _constants.layout):
            return _names.get_layout, (str(obj).replace("ember.", "torch.", 1),)
        return NotImplemented

    def save_global(self, obj, name=None):
        found = _names.torch_name(obj)
        if found is None:
            return super().save_global(obj, name)
        module, qualname = found
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)


def _pickler_class(pickle_module):
    base = getattr(pickle_module, "Pickler", None)
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        base = pickle._Pickler  # the C pickler cannot write torch's names for ember's globals
    dispatch = dict(base.dispatch)
    dispatch[types.FunctionType] = _TorchNames.save_global  # the base's table holds its own save_global
    return type("_Pickler", (_TorchNames, base), {"dispatch": dispatch})


def _pickle(obj, out, pickle_module, protocol, legacy=False):
    """Pickles obj into out; returns [(key, storage, dtype)] for the storages it names."""
    pickler = _pickler_class(pickle_module)(out, protocol)
    pickler._init_storages(legacy)
    pickler.dump(obj)
    return pickler.storages


@contextlib.contextmanager
def _opened(f, mode):
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as handle:
            yield handle
    else:
        yield f


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj (a tensor, a state dict, any picklable object) to f (a path, a path-like
    or a binary file object) in torch's format: torch.load reads it. Tensors that share a
    storage are saved with it once and load sharing it again.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> ember.save({"w": ember.ones(2)}, buffer)
    >>> _ = buffer.seek(0)
    >>> ember.load(buffer)["w"]
    tensor([1., 1.])
    """
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError(f"ember.save: expected a path or a file object with write(), got {type(f).__name__}")
    if not _use_new_zipfile_serialization:
        with _opened(f, "wb") as handle:
            write_legacy(handle, lambda out, legacy: _pickle(obj, out, pickle_module, pickle_protocol, legacy),
                         pickle_protocol)
        return
    data = io.BytesIO()
    storages = _pickle(obj, data, pickle_module, pickle_protocol)
    with _opened(f, "wb") as handle:
        write_zip(handle, archive_name(f), data.getvalue(), [(key, s) for key, s, _ in storages],
                  byteorder=not _disable_byteorder_record)


# ---- the globals weights_only admits ----

_user_safe_globals = []


def add_safe_globals(safe_globals):
    """Allows ember.load(weights_only=True) to restore these classes and functions too
    (each an object, or an (object, "module.name") pair for one saved under another name)."""
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


def _globals_in_pickle(data):
    """The module.name of every global a pickle names (read, not run), as torch lists them."""
    found = set()
    strings = []  # the strings pushed so far, those fetched from the memo included
    memo = {}
    pushed = None  # the string the last opcode pushed, if it pushed one
    try:
        for opcode, arg, _ in pickletools.genops(data):
            if opcode.name in ("GLOBAL", "INST"):
                module, name = arg.split(" ", 1)
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                module, name = strings[-2:]
            elif opcode.name in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
                memo[len(memo) if opcode.name == "MEMOIZE" else arg] = pushed
                continue
            else:
                pushed = memo.get(arg) if opcode.name in ("GET", "BINGET", "LONG_BINGET") else arg
                if not isinstance(pushed, str):
                    pushed = None
                else:
                    strings.append(pushed)
                continue
            found.add("%s.%s" % _names.python3_name(module, name))
    except ValueError as err:
        raise pickle.UnpicklingError(f"ember: the checkpoint's pickle is damaged: {err}") from None
    return found


def get_unsafe_globals_in_checkpoint(f):
    """The globals (as "module.name") in a zip checkpoint that ember.load(weights_only=True)
    would refuse: not allowed by default nor by add_safe_globals. Reads the pickle without
    running it."""
    with _opened(f, "rb") as handle:
        handle = _seekable(handle)
        if not _is_zip(handle):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        checkpoint = ZipCheckpoint(handle)
        if is_torch_script(checkpoint):
            raise ValueError("Expected input to be a checkpoint returned by torch.save but got a torchscript "
                             "checkpoint")
        found = _globals_in_pickle(checkpoint.read("data.pkl"))
    return list(found - _names.safe_names(_names.user_globals(_user_safe_globals)))


# ---- loading ----

_TRUE = ("1", "y", "yes", "true")


def _env_true(*names):
    return any(os.getenv(name, "0").lower() in _TRUE for name in names)


def _weights_only(weights_only, pickle_module):
    """weights_only after the default and the environment variables, as torch decides it."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = _env_true("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_WEIGHTS_ONLY_LOAD")
    force_not = _env_true("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force and force_not:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        return True
    if force_not and not_set:
        name = "TORCH" if _env_true("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD") else "EMBER"
        warnings.warn(f"Environment variable {name}_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the `weights_only` "
                      "argument was not explicitly passed to `ember.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        return False
    return weights_only


def _check_available(target):
    """torch's error for a CUDA location where CUDA is not available."""
    if str(target).startswith("cuda"):
        from . import cuda

        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but ember.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use ember.load with "
                               "map_location=ember.device('cpu') to map your storages to the CPU.")


def _moved(storage, target):
    """storage on the device target names: itself for the CPU, else a copy made there (on
    meta, its size only)."""
    if isinstance(target, bytes):
        target = target.decode()
    if str(target).startswith("cpu"):
        return storage
    _check_available(target)
    moved = UntypedStorage(storage.nbytes(), device=target)
    moved.copy_(storage)
    return moved


class _FromCaller(Exception):
    """Carries an error of the caller's map_location function through the unpickler, which
    would otherwise take it for a damaged file's."""


def _restorer(map_location):
    """restore(storage, location) -> the storage to use, as map_location asks: by default
    where the file says it was saved."""
    def default(storage, location):
        return _moved(storage, location)

    if map_location is None:
        return default
    if isinstance(map_location, (str, bytes, _constants.device)):
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        _check_available(target)
        return lambda storage, location: _moved(storage, target)
    if isinstance(map_location, dict):
        def mapped(storage, location):
            return _moved(storage, map_location.get(location, location))
        return mapped
    if callable(map_location):
        def called(storage, location):
            try:
                result = map_location(storage, location)
            except Exception as err:
                raise _FromCaller(err) from None
            if result is None:
                return default(storage, location)
            if isinstance(result, TypedStorage):
                result = result.untyped()
            if not isinstance(result, UntypedStorage):
                raise _FromCaller(TypeError(f"ember.load: map_location returned {type(result).__name__}, "
                                            "not a storage"))
            return result
        return called
    raise TypeError(f"ember.load: map_location must be a str, a device, a dict or a function, not "
                    f"{type(map_location).__name__}")


def _seekable(handle):
    if not (hasattr(handle, "seekable") and handle.seekable()):
        return io.BytesIO(handle.read())
    return handle


def _is_zip(handle):
    start = handle.tell()
    head = handle.read(4)
    handle.seek(start)
    return head == b"PK\x03\x04"


def _load_zip(handle, path, unpickler, restore, mmap):
    checkpoint = ZipCheckpoint(handle)
    if is_torch_script(checkpoint):
        raise RuntimeError("ember.load: this is a TorchScript archive (torch.jit.save); ember cannot load TorchScript")
    data = checkpoint.read("data.pkl")
    byteorder = checkpoint.read("byteorder") if checkpoint.has("byteorder") else sys.byteorder.encode()
    if byteorder not in (b"little", b"big"):
        raise ValueError(f"Unknown endianness type: {byteorder.decode('ascii', 'replace')}")
    swap = byteorder.decode() != sys.byteorder  # written on a machine of the other byte order
    mapped = UntypedStorage.from_file(path, False, checkpoint.size) if mmap and checkpoint.size else None
    loaded = {}

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"ember.load: unknown persistent id {pid!r:.80}")
        _, storage_type, key, location, numel = pid
        dtype = storage_dtype(storage_type)
        if not (isinstance(key, str) and isinstance(location, str) and isinstance(numel, int) and numel >= 0):
            raise pickle.UnpicklingError("ember.load: invalid storage id")
        if key not in loaded:
            storage = checkpoint.storage(f"data/{key}", numel * dtype.itemsize, mapped)
            if swap:
                byteswap(storage, dtype.itemsize)
            loaded[key] = restore(storage, location)
        return wrap(loaded[key], dtype)

    return unpickler(io.BytesIO(data), persistent_load).load()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads an object saved by ember.save or torch.save (zip or legacy format) from f (a
    path, a path-like or a binary file object). weights_only=True (the default) restores
    only what torch's weights_only loader restores and raises pickle.UnpicklingError on
    anything else; weights_only=False restores any pickled object (trusted files only).
    map_location may be None, 'cpu', ember.device('cpu'), a dict mapping locations, or a
    function (storage, location) -> storage. mmap=True maps a zip file's storages from
    the file instead of reading them.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> ember.save([ember.tensor(1), "text"], buffer)
    >>> _ = buffer.seek(0)
    >>> ember.load(buffer, map_location="cpu")
    [tensor(1), 'text']
    """
    weights_only = _weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        if pickle_load_args.keys() - {"encoding"}:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
            pickle_load_args = {k: v for k, v in pickle_load_args.items() if k == "encoding"}
    pickle_module = pickle_module or pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    restore = _restorer(map_location)
    allowed = _names.user_globals(_user_safe_globals) if weights_only else {}

    class Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            return _names.resolve(module, name, weights_only, allowed, super().find_class)

        def load(self):
            try:
                return super().load()
            except _FromCaller as err:
                raise err.args[0] from None
            except (pickle.UnpicklingError, RuntimeError, EOFError):
                raise
            except Exception as err:
                if not weights_only:  # the file's own code may raise anything
                    raise
                # only ember's functions run: any other error means a damaged pickle
                raise pickle.UnpicklingError(f"Weights only load failed: the file's pickle is damaged "
                                             f"({type(err).__name__}: {err})") from err

    def unpickler(file, persistent_load):
        u = Unpickler(file, **pickle_load_args)
        u.persistent_load = persistent_load
        return u

    with _opened(f, "rb") as handle:
        handle = _seekable(handle)
        if _is_zip(handle):
            if mmap:
                if not isinstance(f, (str, os.PathLike)):
                    raise ValueError("f must be a file path in order to use the mmap argument")
                return _load_zip(handle, os.fspath(f), unpickler, restore, True)
            return _load_zip(handle, None, unpickler, restore, False)
        if mmap:
            name = f"{f}, " if isinstance(f, str) else ""
            raise RuntimeError("mmap can only be used with files saved with "
                               f"`torch.save({name}_use_new_zipfile_serialization=True), please torch.save your "
                               "checkpoint with this option in order to use mmap.")
        start = handle.tell()
        head = handle.read(len(EMBER_MAGIC))
        handle.seek(start)
        if head == EMBER_MAGIC:
            return read_ember_v1(handle, unpickler, restore)
        return read_legacy(handle, unpickler, restore)
