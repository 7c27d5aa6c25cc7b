"""The formats ember.load reads besides torch's zip archive.

torch's legacy format (torch.save(..., _use_new_zipfile_serialization=False)): five pickles
in a row (protocol 2) and then the storages' bytes:

    magic number     the int 0x1950a86a20f9469cfc6c
    protocol         the int 1001
    sys_info         {"protocol_version": 1001, "little_endian": bool, "type_sizes": {...}}
    the object       storages as persistent ids ("storage", storage class, key, location,
                     numel, view) where view is None or (view key, element offset, numel)
    storage keys     the keys, sorted; then per key: numel as a little-endian int64 and
                     numel elements' bytes

ember's own earlier format (which ember.save wrote before it wrote torch's):

    offset 0   magic      8 bytes  b"\\x89EMBER\\r\\n"
    offset 8   version    u32      1
    offset 12  flags      u32      bit 0: tensor data is big-endian
    offset 16  length     u64      length of the pickle that follows
    offset 24  pickle     storages as persistent ids ("storage", key, nbytes)
    then       data       each storage's bytes in key order, each at an offset (from the
                          start of the record) that is a multiple of 64"""
from __future__ import annotations

import io
import pickle
import struct
import sys

from ..storage import TypedStorage, UntypedStorage
from ._zip import ALIGN, read_storage, write_storage

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
EMBER_MAGIC = b"\x89EMBER\r\n"
_EMBER_HEADER = struct.Struct("<8sIIQ")


def write_legacy(handle, pickle_with, protocol):
    """torch's legacy format; pickle_with(file, legacy=True) pickles the object and returns
    [(key, storage, dtype)] in key order."""
    out = io.BytesIO()
    for value in (LEGACY_MAGIC, LEGACY_PROTOCOL,
                  {"protocol_version": LEGACY_PROTOCOL, "little_endian": sys.byteorder == "little",
                   "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(value, out, protocol=protocol)
    storages = pickle_with(out, legacy=True)
    keys = sorted(key for key, _, _ in storages)
    pickle.dump(keys, out, protocol=protocol)
    handle.write(out.getbuffer())
    by_key = {key: (storage, dtype) for key, storage, dtype in storages}
    for key in keys:
        storage, dtype = by_key[key]
        handle.write(struct.pack("<q", storage.nbytes() // dtype.itemsize))
        write_storage(handle, storage)


def _remaining(handle):
    here = handle.tell()
    end = handle.seek(0, 2)
    handle.seek(here)
    return end - here


def read_legacy(handle, unpickler, restore):
    """torch's legacy format. unpickler(file, persistent_load) makes an unpickler;
    restore(storage, location) applies map_location."""
    budget = _remaining(handle)  # all storages together fit in what is left of the file

    def plain():
        return unpickler(handle, _no_persistent_ids).load()

    if plain() != LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = plain()
    if protocol != LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol!r}")
    sys_info = plain()
    if not isinstance(sys_info, dict) or sys_info.get("little_endian") is not (sys.byteorder == "little"):
        raise RuntimeError("ember.load: the file was written on a machine of the other byte order")
    roots = {}  # key -> (untyped storage, dtype), filled after the object's pickle
    views = {}
    total = [0]

    def persistent_load(pid):
        if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":
            return pid[1]  # a whole nn.Module's class (only weights_only=False lets one be named)
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage":
            raise pickle.UnpicklingError(f"ember.load: unknown persistent id {pid!r:.80}")
        if len(pid) != 6:
            raise pickle.UnpicklingError(f"ember.load: invalid storage id of length {len(pid)}")
        _, storage_type, key, location, numel, view = pid
        dtype = storage_dtype(storage_type)
        if not (isinstance(key, str) and isinstance(location, str) and isinstance(numel, int) and numel >= 0):
            raise pickle.UnpicklingError("ember.load: invalid storage id")
        if key not in roots:
            total[0] += numel * dtype.itemsize
            if total[0] > budget:
                raise RuntimeError("ember.load: the file's storages are larger than the file")
            roots[key] = (restore(UntypedStorage(numel * dtype.itemsize), location), dtype)
        root, root_dtype = roots[key]
        if view is None:
            result = root
        else:
            if not (isinstance(view, tuple) and len(view) == 3
                    and all(isinstance(v, int) and v >= 0 for v in view[1:])):
                raise pickle.UnpicklingError("ember.load: invalid storage view")
            view_key, offset, size = view
            if view_key not in views:
                start, stop = offset * dtype.itemsize, (offset + size) * dtype.itemsize
                if stop > root.nbytes():
                    raise pickle.UnpicklingError("ember.load: a storage view reaches past its storage")
                views[view_key] = root._slice(start, stop)
            result = views[view_key]
        return wrap(result, dtype)

    obj = unpickler(handle, persistent_load).load()
    keys = plain()
    if not isinstance(keys, list) or set(keys) - roots.keys() or len(set(keys)) != len(keys):
        raise RuntimeError("ember.load: the file's storage keys do not match its storages")
    for key in keys:
        storage, dtype = roots[key]
        head = handle.read(8)
        if len(head) != 8 or struct.unpack("<q", head)[0] * dtype.itemsize != storage.nbytes():
            raise RuntimeError(f"ember.load: the size of storage {key} disagrees with its record")
        read_storage(handle, storage, f"storage {key}")
    return obj


def _no_persistent_ids(pid):
    raise pickle.UnpicklingError("ember.load: unexpected persistent id")


def storage_dtype(storage_type):
    """The dtype a persistent id's storage class stands for (UntypedStorage: bytes)."""
    from .. import _C
    from ._names import Unsupported

    if isinstance(storage_type, Unsupported):
        storage_type()
    if storage_type is UntypedStorage:
        return _C.uint8
    dtype = getattr(storage_type, "_fixed_dtype", None) if isinstance(storage_type, type) else None
    if dtype is None or not issubclass(storage_type, TypedStorage):
        raise pickle.UnpicklingError(f"ember.load: {storage_type!r:.80} is not a storage class")
    return dtype


def wrap(untyped, dtype):
    """What a persistent id unpickles to: a typed storage over the bytes (of uint8 for an
    UntypedStorage, as torch.load returns it)."""
    return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


# ---- ember's earlier format ----

def read_ember_v1(handle, unpickler, restore):
    head = handle.read(_EMBER_HEADER.size)
    if len(head) < _EMBER_HEADER.size or not head.startswith(EMBER_MAGIC):
        raise pickle.UnpicklingError("ember.load: the file ends inside its header")
    _, version, flags, length = _EMBER_HEADER.unpack(head)
    if version > 1:
        raise RuntimeError(f"ember.load: the file has format version {version}; this ember reads up to 1")
    if bool(flags & 1) != (sys.byteorder == "big"):
        raise RuntimeError("ember.load: the file was written on a machine of the other byte order")
    data = handle.read(min(length, _remaining(handle)))  # a damaged length asks for no more than there is
    if len(data) != length:
        raise pickle.UnpicklingError(f"ember.load: the file ends early ({len(data)} of {length} bytes read)")
    budget = _remaining(handle)
    storages = []

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 3 and pid[0] == "storage" and isinstance(pid[1], int)
                and isinstance(pid[2], int) and 0 <= pid[1] <= len(storages) and pid[2] >= 0):
            raise pickle.UnpicklingError(f"ember.load: unknown persistent id {pid!r:.80}")
        if pid[1] == len(storages):
            if sum(s.nbytes() for s in storages) + pid[2] > budget:
                raise pickle.UnpicklingError("ember.load: the file ends early (its storages are larger than it)")
            storages.append(restore(UntypedStorage(pid[2]), "cpu"))
        elif storages[pid[1]].nbytes() != pid[2]:
            raise pickle.UnpicklingError(f"ember.load: storage {pid[1]} is given two sizes")
        return storages[pid[1]]

    obj = unpickler(io.BytesIO(data), persistent_load).load()
    position = _EMBER_HEADER.size + length
    for storage in storages:  # their bytes follow the pickle, in key order
        pad = -position % ALIGN
        if len(handle.read(pad)) != pad:
            raise pickle.UnpicklingError("ember.load: the file ends early")
        try:
            read_storage(handle, storage, "a storage")
        except RuntimeError as err:
            raise pickle.UnpicklingError(f"ember.load: the file ends early ({err})") from None
        position += pad + storage.nbytes()
    return obj
