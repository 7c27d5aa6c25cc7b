"""Reading and writing the safetensors format, with the API of `safetensors.torch`:
save_file, load_file, save, load, safe_open, save_model and load_model.

The format, all integers little-endian:

    offset 0   N          u64      length of the header
    offset 8   header     N bytes  UTF-8 JSON: {name: {"dtype": "F32", "shape": [2, 3],
                                   "data_offsets": [begin, end]}, ..., "__metadata__":
                                   {str: str}}, padded with spaces
    offset 8+N buffer     every tensor's bytes, row-major, at [begin, end) of the buffer

Files are written as the safetensors package writes them (byte for byte when the metadata
has at most one key: the package writes several in hash order): tensors sorted by dtype,
widest first, then by name, packed without gaps, the header padded to a multiple of 8.
Reading checks everything before it touches tensor memory (the header's length, its JSON,
each entry's fields, shape x element size against its offsets, offsets that tile the
buffer exactly, as the package requires) and raises SafetensorError (a ValueError) for a
file that breaks a rule. A file is mapped once, copy-on-write: each tensor views its bytes
in the mapping, so loading reads only the header until the data is touched. (As with any
mapping, a file another process truncates meanwhile faults when its lost pages are
read: the package's loader shares this.) Tensor bytes are written and read in the host's
order, which the format requires to be little-endian, as every platform ember builds on is.

    >>> import ember
    >>> from ember.utils.safetensors import save, load
    >>> load(save({"w": ember.ones(2, 3)}))["w"].shape
    ember.Size([2, 3])
"""
from __future__ import annotations

import json
import math
import os
import struct

from .. import _C
from ..storage import UntypedStorage, _memory

__all__ = ["SafetensorError", "save_file", "load_file", "save", "load", "safe_open", "save_model",
           "load_model"]


class SafetensorError(ValueError):
    """A file or byte string that is not valid safetensors (or a closed safe_open).
    A ValueError, so that code catching bad input the usual way catches it too; the
    package's own SafetensorError derives from Exception."""


# Every dtype code of the format, widest-sorting first: writers order tensors by this rank
# (the package's dtype enum, descending), then by name. Bits per element; None: ember lacks it.
_CODES = {  # code: (rank, bits, ember dtype name)
    "U64": (21, 64, None), "I64": (20, 64, "int64"), "F64": (19, 64, "float64"), "C64": (18, 64, "complex64"),
    "F32": (17, 32, "float32"), "U32": (16, 32, None), "I32": (15, 32, "int32"), "BF16": (14, 16, "bfloat16"),
    "F16": (13, 16, "float16"), "U16": (12, 16, None), "I16": (11, 16, "int16"), "F8_E5M2FNUZ": (10, 8, None),
    "F8_E4M3FNUZ": (9, 8, None), "F8_E8M0": (8, 8, None), "F8_E4M3": (7, 8, None), "F8_E5M2": (6, 8, None),
    "I8": (5, 8, "int8"), "U8": (4, 8, "uint8"), "F6_E3M2": (3, 6, None), "F6_E2M3": (2, 6, None),
    "F4": (1, 4, None), "BOOL": (0, 8, "bool"),
}
_CODE_OF = {getattr(_C, name): code for code, (_, _, name) in _CODES.items() if name}
_MAX_HEADER = 100_000_000  # the package's cap: a larger length is an error, not an allocation
_CHUNK = 64 << 20  # tensors are written in pieces of at most this many bytes
_METADATA = "__metadata__"


def _fail(message):
    raise SafetensorError(f"Error while deserializing header: {message}")


def _device(device):
    """The ember.device tensors are loaded to (an int is a CUDA index, as in safetensors)."""
    from .._constants import device as device_type

    return device_type("cuda", device) if isinstance(device, int) and not isinstance(device, bool) else device_type(device)


def _on(tensor, device):
    return tensor if device.type == "cpu" else tensor.to(device)


# ---- reading ----

def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            _fail(f"invalid JSON in header: duplicate key {k!r}")
        out[k] = v
    return out


def _no_constant(name):
    _fail(f"invalid JSON in header: {name} is not a JSON number")


def _is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


class _Entry:
    __slots__ = ("name", "code", "shape", "begin", "end")

    def __init__(self, name, code, shape, begin, end):
        self.name, self.code, self.shape, self.begin, self.end = name, code, shape, begin, end


def _parse_header(raw: bytes, buffer_len: int):
    """(entries by name, metadata or None) from the header's bytes; every rule checked."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        _fail(f"invalid UTF-8 in header: {e}")
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        if isinstance(e, SafetensorError):
            raise
        _fail(f"invalid JSON in header: {e}")
    if not isinstance(header, dict):
        _fail("invalid JSON in header: expected an object")
    metadata = header.pop(_METADATA, None)
    if metadata is not None and not (isinstance(metadata, dict) and
                                     all(isinstance(v, str) for v in metadata.values())):
        _fail("invalid JSON in header: __metadata__ must map strings to strings")
    entries = {}
    for name, info in header.items():
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
            _fail(f"tensor `{name}` needs the fields dtype, shape and data_offsets")
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(code, str) or code not in _CODES:
            _fail(f"unknown dtype {code!r} for tensor `{name}`")
        if not (isinstance(shape, list) and all(_is_count(d) for d in shape)):
            _fail(f"the shape of tensor `{name}` is not a list of non-negative integers")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)):
            _fail(f"the data_offsets of tensor `{name}` are not two non-negative integers")
        # Sizes are int64 in ember: the dims but zeros must multiply to less than 2**63 (so
        # that an empty tensor's strides fit too), which also bounds the work on huge shapes.
        count = 1
        for d in shape:
            count *= max(d, 1)
            if count >= 2**63:
                _fail(f"the shape of tensor `{name}` is too large")
        entries[name] = _Entry(name, code, tuple(shape), offsets[0], offsets[1])
    # The tensors must tile the buffer: sorted by offset, each begins where the last ended.
    reached = 0
    for e in sorted(entries.values(), key=lambda e: (e.begin, e.end)):
        if e.begin != reached or e.end < e.begin:
            _fail(f"invalid offset for tensor `{e.name}`")
        bits = _CODES[e.code][1] * math.prod(e.shape)
        if bits != (e.end - e.begin) * 8:
            _fail(f"invalid shape, data type, or offset for tensor `{e.name}`: {e.code} of shape "
                  f"{list(e.shape)} does not take the {e.end - e.begin} bytes of [{e.begin}, {e.end})")
        reached = e.end
    if reached != buffer_len:
        _fail(f"incomplete metadata, file not fully covered: the tensors cover {reached} bytes of a "
              f"{buffer_len}-byte buffer")
    return entries, metadata


class _Reader:
    """Tensors over one storage holding a whole safetensors file (or byte string)."""

    def __init__(self, storage, data_start, entries, metadata):
        self.storage, self.data_start, self.entries, self._metadata = storage, data_start, entries, metadata

    @classmethod
    def from_storage(cls, storage):
        total = storage.nbytes()
        if total < 8:
            _fail("header too small")
        n = struct.unpack("<Q", storage._slice(0, 8)._to_bytes())[0]
        if n > _MAX_HEADER:
            _fail("header too large")
        if n > total - 8:
            _fail(f"invalid header length: {n} bytes from offset 8 run past the end of the {total} bytes")
        entries, metadata = _parse_header(storage._slice(8, 8 + n)._to_bytes(), total - 8 - n)
        return cls(storage, 8 + n, entries, metadata)

    def tensor(self, name):
        e = self.entries.get(name)
        if e is None:
            raise SafetensorError(f"File does not contain tensor {name}")
        dtype_name = _CODES[e.code][2]
        if dtype_name is None:
            raise SafetensorError(f"tensor `{name}` has dtype {e.code}, which ember does not have")
        dtype = getattr(_C, dtype_name)
        start = self.data_start + e.begin
        part = self.storage._slice(start, self.data_start + e.end)
        if (self.storage.data_ptr() + start) % dtype.itemsize:
            # Kernels may assume elements aligned to their size: a header whose length is not
            # a multiple of 8 leaves them unaligned in the mapping, so they get their own bytes.
            part = UntypedStorage(part.nbytes()).copy_(part)
        return _C._legacy_new(dtype).set_(part, 0, tuple(e.shape))  # contiguous strides, as torch's


class _Slice:
    """A tensor of a safe_open file that is only read where it is indexed."""

    def __init__(self, reader, name, device):
        self._reader, self._name, self._device = reader, name, device
        self._entry = reader.entries[name]

    def get_shape(self):
        return list(self._entry.shape)

    def get_dtype(self):
        return self._entry.code

    def __getitem__(self, index):
        # The tensor is a view of the mapping: indexing it reads only the pages it covers.
        return _on(self._reader.tensor(self._name)[index], self._device)


class safe_open:
    """Opens a safetensors file for reading tensors one at a time (a context manager).

    framework: "pt" (or "torch"): tensors come back as ember tensors; device: where ("cpu",
    "meta", "cuda:0" or an index). The file is mapped once; each CPU tensor views its bytes
    copy-on-write; on another device a tensor is a copy.

    >>> import ember
    >>> from ember.utils.safetensors import save_file, safe_open
    >>> save_file({"w": ember.arange(6.0).reshape(2, 3)}, "m.safetensors", metadata={"step": "7"})
    >>> with safe_open("m.safetensors", framework="pt") as f:
    ...     f.keys(), f.metadata(), f.get_slice("w")[:, 1:].tolist()
    (['w'], {'step': '7'}, [[1.0, 2.0], [4.0, 5.0]])
    """

    def __init__(self, filename, framework, device="cpu"):
        if framework not in ("pt", "torch"):
            raise SafetensorError(f"framework {framework} is invalid: ember reads tensors for 'pt' only")
        self._device = _device(device)
        if self._device.type == "cuda":  # torch's errors where CUDA is absent, before any reading
            from .. import cuda

            cuda._lazy_init()
        filename = os.fsdecode(os.fspath(filename))
        with open(filename, "rb") as f:  # the usual OSError for a missing file or a folder
            total = os.fstat(f.fileno()).st_size
        # The header is read from the mapping itself, so what was checked is what is mapped.
        self._reader = _Reader.from_storage(UntypedStorage.from_file(filename, False, total))

    def _open(self):
        if self._reader is None:
            raise SafetensorError("File is closed")
        return self._reader

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._reader = None  # tensors already handed out keep the mapping alive

    def keys(self):
        return sorted(self._open().entries)

    def offset_keys(self):
        """The names in the order of their bytes in the file."""
        return [e.name for e in sorted(self._open().entries.values(), key=lambda e: (e.begin, e.end))]

    def metadata(self):
        m = self._open()._metadata
        return None if m is None else dict(m)

    def get_tensor(self, name):
        return _on(self._open().tensor(name), self._device)

    def get_slice(self, name):
        reader = self._open()
        if name not in reader.entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        return _Slice(reader, name, self._device)

    def get_tensors(self):
        return {name: self.get_tensor(name) for name in self.offset_keys()}


def load_file(filename, device="cpu"):
    """{name: tensor} from a safetensors file, each tensor a copy-on-write view of the mapped file.

    >>> import ember
    >>> from ember.utils.safetensors import save_file, load_file
    >>> save_file({"b": ember.zeros(2, dtype=ember.bfloat16)}, "b.safetensors")
    >>> load_file("b.safetensors")["b"].dtype
    ember.bfloat16
    """
    with safe_open(filename, framework="pt", device=device) as f:
        return f.get_tensors()


def load(data):
    """{name: tensor} from the bytes of a safetensors file (one copy of its buffer).

    >>> import ember
    >>> from ember.utils.safetensors import save, load
    >>> load(save({"x": ember.tensor([1, 2])}))["x"].tolist()
    [1, 2]
    """
    try:
        view = memoryview(data).cast("B")
    except TypeError:
        raise TypeError(f"load(): expected bytes, got {type(data).__name__}") from None
    storage = UntypedStorage(len(view))
    storage._copy_from_buffer(view, 0)
    reader = _Reader.from_storage(storage)
    return {e.name: reader.tensor(e.name) for e in sorted(reader.entries.values(), key=lambda e: (e.begin, e.end))}


# ---- writing ----

def _check_tensors(tensors):
    """What save and save_file refuse, as safetensors.torch refuses it."""
    from .._tensor import Tensor

    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received {type(t)}")
        if name == _METADATA:
            raise ValueError(f"a tensor cannot be named `{_METADATA}`: the header keeps that key for metadata")
        if t.dtype not in _CODE_OF:
            raise ValueError(f"tensor `{name}` has dtype {t.dtype}, which safetensors cannot store")
    shared = [names for names in _shared_groups(tensors) if len(names) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
            f"when loading them again: {shared}. A potential way to correctly save your model is to use "
            f"`save_model`. More information at https://huggingface.co/docs/safetensors/torch_shared_tensors")
    for name, t in tensors.items():
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. Save the "
                f"whole tensors it is a view of, or call `.contiguous()` on it to pack it before saving.")


def _byte_range(t):
    start = t.data_ptr()
    return start, start + t.dtype.itemsize * (1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride())))


def _shared_groups(tensors):
    """Names grouped by overlapping bytes (sets of one for the others). Addresses, not
    storages, are compared: storages that are slices of one another (from _slice,
    from_file) share memory too. Empty tensors share nothing."""
    groups = [{name} for name, t in tensors.items() if t.numel() == 0]
    reached = 0
    for start, stop, name in sorted(_byte_range(t) + (name,) for name, t in tensors.items() if t.numel()):
        if start < reached:
            groups[-1].add(name)
        else:
            groups.append({name})
        reached = max(reached, stop)
    return groups


def _layout(tensors, metadata):
    """(header bytes with its length prefix, names in file order)."""
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in metadata.items()):
            raise TypeError("metadata must be a dict of str to str")
    names = sorted(tensors, key=lambda n: (-_CODES[_CODE_OF[tensors[n].dtype]][0], n))
    header = {} if metadata is None else {_METADATA: metadata}
    offset = 0
    for name in names:
        t = tensors[name]
        nbytes = t.numel() * t.dtype.itemsize
        header[name] = {"dtype": _CODE_OF[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, names


def _chunks(t):
    """The bytes of a contiguous tensor, in pieces: views of its memory, not copies (and no
    side effect on its storage, which a _slice would leave non-resizable)."""
    view = _memory(t.data_ptr(), t.numel() * t.dtype.itemsize)
    for i in range(0, len(view), _CHUNK):
        yield view[i:i + _CHUNK]


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding tensors ({name: contiguous tensor}) and
    metadata ({str: str}, stored in the header).

    >>> import ember
    >>> from ember.utils.safetensors import save
    >>> save({"x": ember.tensor([1.0])})[8:]
    b'{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}  \\x00\\x00\\x80?'
    """
    _check_tensors(tensors)
    head, names = _layout(tensors, metadata)
    return b"".join([head, *(c for n in names for c in _chunks(tensors[n]))])


def save_file(tensors, filename, metadata=None):
    """Writes tensors ({name: contiguous tensor}) and metadata ({str: str}) to a safetensors file.

    >>> import ember
    >>> from ember.utils.safetensors import save_file
    >>> save_file({"x": ember.ones(3)}, "x.safetensors")
    """
    _check_tensors(tensors)
    head, names = _layout(tensors, metadata)
    with open(filename, "wb") as f:
        f.write(head)
        for name in names:
            for chunk in _chunks(tensors[name]):
                f.write(chunk)


# ---- models: state dicts whose tensors share memory (tied weights) ----

def _complete(t):
    s = t.untyped_storage()
    return t.data_ptr() == s.data_ptr() and t.numel() * t.dtype.itemsize == s.nbytes()


def _duplicates(state_dict, preferred=()):
    """{kept name: [names dropped]} for each group of tensors sharing memory: the kept one
    covers its whole storage (a preferred name first, else the first such name)."""
    out = {}
    for group in _shared_groups(state_dict):
        if len(group) < 2:
            continue
        complete = sorted(n for n in group if _complete(state_dict[n]))
        if not complete:
            raise RuntimeError(
                f"Error while trying to find names to remove to save state dict, but found no suitable name to "
                f"keep for saving amongst: {group}. None is covering the entire storage. Refusing to save/load "
                f"the model since you could be storing much more memory than needed.")
        keep = next((n for n in complete if n in preferred), complete[0])
        out[keep] = sorted(group - {keep})
    return out


def save_model(model, filename, metadata=None, force_contiguous=True):
    """Saves model.state_dict() to a safetensors file, keeping one name for tensors that
    share memory (tied weights); each dropped name goes into the metadata as
    {dropped: kept}.

    >>> import ember
    >>> from ember.utils.safetensors import save_model, load_model, load_file
    >>> model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Linear(2, 2))
    >>> model[1].weight = model[0].weight
    >>> save_model(model, "tied.safetensors")
    >>> sorted(load_file("tied.safetensors"))
    ['0.bias', '0.weight', '1.bias']
    """
    state_dict = model.state_dict()
    for keep, dropped in _duplicates(state_dict).items():
        for name in dropped:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, keep)
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    save_file(state_dict, filename, metadata=metadata)


def load_model(model, filename, strict=True, device="cpu"):
    """Loads a safetensors file saved by save_model into model; the names of tied weights
    dropped on saving count as loaded. Returns (missing, unexpected) names; with strict, a
    RuntimeError when either is not empty.

    >>> import ember
    >>> from ember.utils.safetensors import save_model, load_model
    >>> save_model(ember.nn.Linear(2, 2), "linear.safetensors")
    >>> load_model(ember.nn.Linear(2, 2), "linear.safetensors")
    (set(), [])
    """
    state_dict = load_file(filename, device=device)
    dropped = _duplicates(model.state_dict(), preferred=state_dict.keys())
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing, unexpected = set(missing), list(unexpected)
    for names in dropped.values():
        for name in names:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {type(model).__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected
