"""torch's zip checkpoint format: writing it (Python's zipfile, stored records, each
storage's data at a multiple of 64 bytes from the start of the file) and reading it (any
top folder name; storages read into memory or sliced from one mapping of the file)."""
from __future__ import annotations

import array
import os
import struct
import sys
import zipfile
import zlib

from ..storage import UntypedStorage, _memory

ALIGN = 64
CHUNK = 64 << 20  # storages are copied through buffers of at most this many bytes
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., name length, extra length
_PAD_ID = b"FB"  # the extra field torch pads local headers with


# ---- storage bytes to and from files ----

def _bytes_of(storage):
    """A writable memoryview of storage's bytes (no copy; valid while storage lives)."""
    return _memory(storage.data_ptr(), storage.nbytes())


def write_storage(out, storage):
    view = _bytes_of(storage)
    for start in range(0, len(view), CHUNK):
        out.write(view[start:start + CHUNK])


def read_storage(f, storage, what):
    """Fills storage from f's next storage.nbytes() bytes."""
    view = _bytes_of(storage)
    n = len(view)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        if hasattr(f, "readinto"):
            got = f.readinto(view[start:stop])
        else:
            data = f.read(stop - start)
            got = len(data)
            view[start:start + got] = data
        if got != stop - start:
            raise RuntimeError(f"ember.load: the file ends inside {what} ({start + got} of {n} bytes)")


def byteswap(storage, itemsize):
    """Reverses the bytes of each itemsize-byte element in place (a file from a machine of
    the other byte order; a mapped storage's pages become private copies)."""
    if itemsize == 1 or not storage.nbytes():
        return
    view = _bytes_of(storage)
    for start in range(0, len(view), CHUNK):
        elements = array.array({2: "H", 4: "I", 8: "Q"}[itemsize])
        elements.frombytes(view[start:start + CHUNK])
        elements.byteswap()
        view[start:start + len(elements) * itemsize] = memoryview(elements).cast("B")


# ---- writing ----

def _serialization_id():
    return str(int.from_bytes(os.urandom(16), "little")).zfill(40)[:40].encode()


def archive_name(f):
    """torch's top folder: the file's name without its extension, or 'archive'."""
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


def _write_record(zf, name, payload):
    """One stored record whose data starts at a multiple of ALIGN bytes in the file."""
    nbytes = len(payload) if isinstance(payload, bytes) else payload.nbytes()
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = nbytes
    zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT  # zipfile adds a 20-byte zip64 field after ours then
    header_end = zf.fp.tell() + _LOCAL_HEADER.size + len(name.encode()) + 4 + (20 if zip64 else 0)
    pad = -header_end % ALIGN
    info.extra = _PAD_ID + struct.pack("<H", pad) + b"Z" * pad
    with zf.open(info, "w", force_zip64=zip64) as out:
        if isinstance(payload, bytes):
            out.write(payload)
        else:
            write_storage(out, payload)


class _FromHere:
    """A seekable stream seen from its current position on, for a second archive written
    after another: torch counts its offsets (and aligns its records) from the archive's
    start, Python's zipfile from the stream's."""

    def __init__(self, handle):
        self._handle, self._start = handle, handle.tell()

    def tell(self):
        return self._handle.tell() - self._start

    def seek(self, offset, whence=os.SEEK_SET):
        if whence == os.SEEK_SET:
            offset += self._start
        return self._handle.seek(offset, whence) - self._start

    def write(self, data):
        return self._handle.write(data)

    def flush(self):
        self._handle.flush()

    def seekable(self):
        return True


def write_zip(handle, name, data_pkl, storages, byteorder=True):
    """The archive torch.save writes: data.pkl, format markers, data/<key> per storage."""
    try:
        shifted = handle.seekable() and handle.tell() > 0
    except (AttributeError, OSError):
        shifted = False
    with zipfile.ZipFile(_FromHere(handle) if shifted else handle, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        records = [("data.pkl", data_pkl), (".format_version", b"1"), (".storage_alignment", str(ALIGN).encode())]
        if byteorder:
            records.append(("byteorder", sys.byteorder.encode()))
        records += [(f"data/{key}", storage) for key, storage in storages]
        records += [("version", b"3\n"), (".data/serialization_id", _serialization_id())]
        for record, payload in records:
            _write_record(zf, f"{name}/{record}", payload)


# ---- reading ----

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, struct.error, ValueError, EOFError, NotImplementedError,
               OverflowError, KeyError, UnicodeError, zlib.error, IndexError)


def _failed(err):
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {type(err).__name__}: {err}")


_EOCD = struct.Struct("<4s4H2LH")  # signature, disks, entries, central directory size and offset, comment
_ZIP64_LOCATOR = struct.Struct("<4sLQL")  # signature, disk, zip64 end record's offset, disks
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")  # signature, size, versions, disks, entries, directory size and offset


def _archive_end(handle, start):
    """Where the zip archive that begins at `start` ends: at the first end-of-directory
    record after it whose central directory lies right before it, counted from `start`."""
    position, tail = start, b""
    while True:
        handle.seek(position)
        chunk = handle.read(CHUNK)
        if not chunk:
            raise zipfile.BadZipFile("no end of central directory record after the archive's start")
        data = tail + chunk
        base = position - len(tail)
        found = data.find(b"PK\x05\x06")
        while found >= 0:
            end = _consistent_end(handle, start, base + found)
            if end is not None:
                return end
            found = data.find(b"PK\x05\x06", found + 1)
        position += len(chunk)
        tail = data[-(_EOCD.size - 1):]


def _consistent_end(handle, start, at):
    """The archive's end if an end-of-directory record at `at` closes the archive at
    `start`. Writers count offsets from the archive's start or from the stream's (Python's
    zipfile, on a stream already holding data): either is accepted."""
    handle.seek(at)
    record = handle.read(_EOCD.size)
    if len(record) < _EOCD.size:
        return None
    _, _, _, _, _, size_cd, offset_cd, comment = _EOCD.unpack(record)
    directory_end = at
    sig, zip64_offset = None, 0
    if at - start >= _ZIP64_LOCATOR.size:
        handle.seek(at - _ZIP64_LOCATOR.size)
        sig, _, zip64_offset, _ = _ZIP64_LOCATOR.unpack(handle.read(_ZIP64_LOCATOR.size))
    if sig == b"PK\x06\x07":  # zip64 (torch writes it always): the directory ends at its end record
        for directory_end in (start + zip64_offset, zip64_offset):
            handle.seek(directory_end)
            raw = handle.read(_ZIP64_EOCD.size)
            if len(raw) == _ZIP64_EOCD.size and raw.startswith(b"PK\x06\x06"):
                break
        else:
            return None
        *_, size_cd, offset_cd = _ZIP64_EOCD.unpack(raw)
    elif offset_cd == 0xFFFFFFFF or size_cd == 0xFFFFFFFF:
        return None
    base = directory_end - size_cd - offset_cd  # where offsets count from
    if base not in (start, 0) or base + offset_cd < start:
        return None
    handle.seek(base + offset_cd)
    if size_cd and handle.read(4) != b"PK\x01\x02":
        return None
    return at + _EOCD.size + comment


class _Truncated:
    """A seekable file seen as ending at `end` (positions stay the file's own)."""

    def __init__(self, handle, end):
        self._handle, self._end = handle, end

    def seek(self, offset, whence=os.SEEK_SET):
        if whence == os.SEEK_END:
            offset, whence = self._end + offset, os.SEEK_SET
        return self._handle.seek(offset, whence)

    def tell(self):
        return self._handle.tell()

    def read(self, n=-1):
        left = max(0, self._end - self._handle.tell())
        return self._handle.read(left if n is None or n < 0 else min(n, left))

    def seekable(self):
        return True


class ZipCheckpoint:
    """A zip checkpoint opened for reading: its records by name below the top folder."""

    def __init__(self, handle):
        start = handle.tell()
        handle.seek(0, os.SEEK_END)
        self.size = handle.tell()
        handle.seek(start)
        try:
            self.zip = zipfile.ZipFile(handle)
            infos = self.zip.infolist()
            if infos and min(info.header_offset for info in infos) != start:
                # zipfile reads the archive that ends the stream; the one at `start` ends
                # earlier (torch.save called twice on one stream: torch.load reads the first).
                self.size = _archive_end(handle, start)
                handle = _Truncated(handle, self.size)
                self.zip = zipfile.ZipFile(handle)
                infos = self.zip.infolist()
        except _ZIP_ERRORS as err:
            raise _failed(err) from None
        self.handle = handle
        if not infos:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory")
        top = infos[0].filename.split("/", 1)[0]
        self.records = {}
        for info in infos:
            folder, _, rest = info.filename.partition("/")
            if folder == top and rest:
                self.records.setdefault(rest, info)

    def has(self, name):
        return name in self.records

    def _info(self, name):
        info = self.records.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return info

    def read(self, name):
        """A small record's bytes (data.pkl, byteorder, ...)."""
        info = self._info(name)
        if info.file_size > self.size and info.compress_type == zipfile.ZIP_STORED:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: it reaches past the file's end")
        try:
            return self.zip.read(info)
        except _ZIP_ERRORS as err:
            raise _failed(err) from None

    def data_offset(self, name, nbytes):
        """Where a stored record's nbytes of data start in the file (after its local header)."""
        info = self._info(name)
        if info.compress_type != zipfile.ZIP_STORED:
            raise RuntimeError(f"ember.load: record {name} is compressed; torch writes storages stored")
        if not info.file_size == info.compress_size == nbytes:
            raise RuntimeError(f"record size ({info.file_size} bytes) does not match expected size ({nbytes} bytes) "
                               f"for record {name}")
        self.handle.seek(info.header_offset)
        header = self.handle.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or not header.startswith(b"PK\x03\x04"):
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: bad local header")
        _, name_len, extra_len = _LOCAL_HEADER.unpack(header)
        offset = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        if offset + nbytes > self.size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: it reaches past the file's end")
        return offset

    def storage(self, name, nbytes, mapped=None):
        """The record as a storage of nbytes: a slice of the mapped file, or read."""
        offset = self.data_offset(name, nbytes)
        if mapped is not None:
            return mapped._slice(offset, offset + nbytes)
        storage = UntypedStorage(nbytes)
        self.handle.seek(offset)
        read_storage(self.handle, storage, f"record {name}")
        return storage


def is_torch_script(checkpoint):
    return checkpoint.has("constants.pkl")

