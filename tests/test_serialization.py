"""ember.save / ember.load: round trips compared with torch.save / torch.load (each
library reading its own files), shared storages, file kinds, the safe loader and damaged
files."""
import collections
import io
import os
import pathlib
import pickle
import struct
import sys
import types

import pytest

import ember
import ember.serialization
from helpers import DTYPE_NAMES, assert_same, make_sample, torch

Pair = collections.namedtuple("Pair", "a b")


def round_trip(lib, obj, **load_kwargs):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer, **load_kwargs)


def same(e, t):
    if isinstance(t, torch.Tensor):
        assert_same(e, t, strides=True)
        assert e.storage_offset() == t.storage_offset()
        assert e.untyped_storage().nbytes() == t.untyped_storage().nbytes()
    elif isinstance(t, dict):
        assert type(e).__name__ == type(t).__name__ and list(e) == list(t)
        for k in t:
            same(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e).__name__ == type(t).__name__ and len(e) == len(t)
        for x, y in zip(e, t):
            same(x, y)
    elif isinstance(t, (torch.dtype, torch.device, torch.Size)):
        assert repr(e).replace("ember", "torch") == repr(t)
    else:
        assert type(e) is type(t) and e == t


def both(fn, **load_kwargs):
    """fn(lib) builds an object; each library saves and loads it; the results agree."""
    expected = round_trip(torch, fn(torch), **load_kwargs)
    got = round_trip(ember, fn(ember), **load_kwargs)
    same(got, expected)
    return got


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "empty", "scalar", "expanded"])
def test_tensors_round_trip_as_in_torch(dtype, layout):
    both(lambda lib: make_sample(lib, dtype, layout))


def test_containers_and_plain_values_round_trip_as_in_torch():
    def build(lib):
        w = lib.arange(6.0).view(2, 3)
        return {"state": collections.OrderedDict([("layer.weight", w), ("layer.bias", lib.zeros(3))]),
                "list": [1, 2.5, None, True, "text", b"bytes", (lib.tensor(7), [lib.ones(1, dtype=lib.int16)])],
                "set": {1, 2}, "complex": 1 + 2j, "big": 2**70, "nan": float("inf"),
                "dtype": lib.float16, "device": lib.device("cpu"), "size": w.shape, "empty": {}, "tuple": ()}

    both(build)
    both(lambda lib: [lib.tensor(3.5)] * 2)
    both(lambda lib: "only a string")
    assert round_trip(ember, frozenset({"a"})) == frozenset({"a"})  # torch's safe loader refuses frozensets


def test_views_share_their_storage_after_loading():
    base = ember.arange(12.0).view(3, 4)
    loaded = round_trip(ember, {"base": base, "row": base[1], "t": base.t(), "other": ember.ones(2)})
    assert loaded["row"].untyped_storage() is loaded["base"].untyped_storage() is loaded["t"].untyped_storage()
    assert loaded["other"].untyped_storage() is not loaded["base"].untyped_storage()
    loaded["base"][1, 2] = 100
    assert loaded["row"].tolist() == [4.0, 5.0, 100.0, 7.0] and loaded["t"][2, 1].item() == 100
    assert base[1, 2].item() == 6  # the original is untouched
    # one storage saved once: its 48 bytes are in the file once, not three times
    views, copies = io.BytesIO(), io.BytesIO()
    ember.save([base, base[0], base.t()], views)
    ember.save([base, base.clone()[0], base.clone().t()], copies)
    assert len(copies.getvalue()) - len(views.getvalue()) >= 2 * 48


def test_storages_round_trip():
    untyped = ember.tensor([1, 2, 3], dtype=ember.uint8).untyped_storage()
    loaded = round_trip(ember, untyped)
    assert isinstance(loaded, ember.UntypedStorage) and loaded.tolist() == [1, 2, 3]
    typed = ember.tensor([1.5, 2.5]).storage()
    loaded = round_trip(ember, typed)
    assert isinstance(loaded, ember.FloatStorage) and loaded.tolist() == [1.5, 2.5]


class Special(ember.Tensor):
    pass


def test_tensor_subclasses():
    t = Special(ember.tensor([1.0, 2.0]).untyped_storage())
    t.note = "kept"
    with pytest.raises(pickle.UnpicklingError, match="Special"):
        round_trip(ember, t)
    loaded = round_trip(ember, t, weights_only=False)
    assert type(loaded) is Special and loaded.tolist() == [1.0, 2.0] and loaded.note == "kept"
    with ember.serialization.safe_globals([Special]):
        assert type(round_trip(ember, t)) is Special
    assert ember.serialization.get_safe_globals() == []


@pytest.mark.skipif(not hasattr(ember.Tensor, "requires_grad_"), reason="needs autograd (issue 4)")
def test_requires_grad_is_kept():
    t = ember.ones(2).requires_grad_()
    assert round_trip(ember, t).requires_grad and not round_trip(ember, ember.ones(2)).requires_grad


def test_paths_path_likes_and_file_objects(tmp_path):
    t = ember.arange(5)
    ember.save(t, str(tmp_path / "a.pt"))
    ember.save(t, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as f:
        ember.save(t, f)
        ember.save({"second": t}, f)  # records follow each other in one file
    assert ember.load(str(tmp_path / "a.pt")).tolist() == [0, 1, 2, 3, 4]
    assert ember.load(pathlib.Path(tmp_path / "b.pt")).tolist() == [0, 1, 2, 3, 4]
    with open(tmp_path / "c.pt", "rb") as f:
        assert ember.load(f).tolist() == [0, 1, 2, 3, 4]
        assert ember.load(f)["second"].tolist() == [0, 1, 2, 3, 4]
    for lib in (torch, ember):
        with pytest.raises(FileNotFoundError):
            lib.load(tmp_path / "missing.pt")
        with pytest.raises(AttributeError):
            lib.save(lib.ones(1), 3)


def test_the_format_is_the_documented_one():
    buffer = io.BytesIO()
    ember.save([ember.tensor([1.0, 2.0]), ember.tensor([7], dtype=ember.int16)], buffer)
    raw = buffer.getvalue()
    magic, version, flags, length = struct.unpack("<8sIIQ", raw[:24])
    assert magic == b"\x89EMBER\r\n" and version == 1 and flags == 0
    first = -(-(24 + length) // 64) * 64  # storages start at multiples of 64
    assert raw[24 + length:first] == b"\0" * (first - 24 - length)
    assert struct.unpack("<2f", raw[first:first + 8]) == (1.0, 2.0)
    assert struct.unpack("<h", raw[first + 64:first + 66]) == (7,) and len(raw) == first + 66
    assert ember.serialization.__doc__.count("multiple of 64") == 1


def test_large_storages_are_copied_in_chunks(monkeypatch):
    monkeypatch.setattr(ember.serialization, "_CHUNK", 7)
    t = ember.arange(100, dtype=ember.int64)
    assert round_trip(ember, t[3:]).tolist() == list(range(3, 100))


def test_map_location():
    t = ember.arange(3)
    for location in (None, "cpu", ember.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}):
        assert round_trip(ember, t, map_location=location).tolist() == [0, 1, 2]
    seen = []

    def mapper(storage, location):
        seen.append(location)
        return storage

    pair = round_trip(ember, [t, t[1:]], map_location=mapper)
    assert seen == ["cpu"] and pair[1].tolist() == [1, 2]
    for bad in ("cuda", ember.device("meta"), {"cpu": "cuda:1"}):
        with pytest.raises(RuntimeError, match="CPU only"):
            round_trip(ember, t, map_location=bad)


# ---------------------------------------------------------------- the safe loader
calls = []


def record_call(*args):
    calls.append(args)
    return "ran"


class Payload:
    """Unpickling it would call record_call."""

    def __reduce__(self):
        return (record_call, ("payload",))


class Plain:
    def __init__(self):
        self.x = 1


def test_weights_only_refuses_other_globals():
    calls.clear()
    for obj, name in ((Payload(), "record_call"), (Plain(), "Plain"), ({"f": os.system}, "system"),
                      ([ember.ones(1), Plain], "Plain")):
        with pytest.raises(pickle.UnpicklingError, match=f"Weights only load failed.*{name}.*weights_only=False"):
            round_trip(ember, obj)
        with pytest.raises(pickle.UnpicklingError):  # torch refuses the same
            round_trip(torch, obj)
    assert calls == []
    assert round_trip(ember, Payload(), weights_only=False) == "ran" and calls == [("payload",)]
    loaded = round_trip(ember, {"p": Plain()}, weights_only=False)["p"]
    assert isinstance(loaded, Plain) and loaded.x == 1


def test_add_safe_globals():
    try:
        ember.serialization.add_safe_globals([Plain])
        assert isinstance(round_trip(ember, Plain()), Plain)
        assert ember.serialization.get_safe_globals() == [Plain]
    finally:
        ember.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        round_trip(ember, Plain())


def test_explicit_pickle_module():
    buffer = io.BytesIO()
    ember.save({"t": ember.ones(2)}, buffer, pickle_module=pickle, pickle_protocol=2)
    buffer.seek(0)
    assert ember.load(buffer, pickle_module=pickle, weights_only=False)["t"].tolist() == [1.0, 1.0]
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="explicit pickle_module"):
            lib.load(io.BytesIO(), pickle_module=pickle, weights_only=True)
    buffer.seek(0)
    assert ember.load(buffer)["t"].tolist() == [1.0, 1.0]  # protocol 2 (bytes through _codecs) loads safely


def test_damaged_and_foreign_files(tmp_path):
    buffer = io.BytesIO()
    ember.save({"t": ember.arange(20)}, buffer)
    raw = buffer.getvalue()
    with pytest.raises(pickle.UnpicklingError, match="ends early"):
        ember.load(io.BytesIO(raw[:-5]))
    with pytest.raises(pickle.UnpicklingError, match="not a file written by ember.save"):
        ember.load(io.BytesIO(b"definitely not"))
    with pytest.raises(pickle.UnpicklingError, match="not a file written by ember.save"):
        ember.load(io.BytesIO(b""))
    torch.save(torch.ones(2), tmp_path / "torch.pt")
    with pytest.raises(pickle.UnpicklingError, match="torch.save"):
        ember.load(tmp_path / "torch.pt")
    newer = raw[:8] + struct.pack("<I", 2) + raw[12:]
    with pytest.raises(RuntimeError, match="format version 2"):
        ember.load(io.BytesIO(newer))


def forged(size, stride, offset=0, nbytes=8):
    """A file whose tensor record claims this view of an nbytes storage."""

    class Forger(ember.serialization._Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, ember.Tensor):
                return ember.serialization._rebuild_tensor, (obj.untyped_storage(), offset, size, stride,
                                                             ember.float32, False)
            return NotImplemented

    storage_owner = ember.zeros(nbytes // 4)
    body = io.BytesIO()
    pickler = Forger(body, 4)
    pickler.dump(storage_owner)
    out = io.BytesIO()
    out.write(struct.pack("<8sIIQ", ember.serialization.MAGIC, 1, 0, len(body.getvalue())))
    out.write(body.getvalue())
    out.write(b"\0" * (-out.tell() % 64) + b"\0" * nbytes)
    out.seek(0)
    return out


def test_forged_tensor_records_are_refused():
    assert ember.load(forged((2,), (1,))).tolist() == [0.0, 0.0]
    for size, stride, offset in (((3,), (1,), 0), ((2,), (1,), 1), ((2, 2), (2, 1), 0), ((2,), (-1,), 1),
                                 ((1,), (1,), -1), ((2,), (1, 1), 0)):
        with pytest.raises(pickle.UnpicklingError, match="ember.load: a tensor record"):
            ember.load(forged(size, stride, offset))
    assert ember.load(forged((0, 5), (100, 1))).shape == (0, 5)  # empty views reach nothing


def test_ember_tensor_classes_load_safely():
    """A tensor subclass that ember itself defines (as nn.Parameter will be) needs no allowing."""
    module = types.ModuleType("ember._serialization_test_module")

    class Param(ember.Tensor):
        pass

    class NotATensor:
        pass

    for cls in (Param, NotATensor):
        cls.__module__, cls.__qualname__ = module.__name__, cls.__name__
        setattr(module, cls.__name__, cls)
    sys.modules[module.__name__] = module
    try:
        p = Param(ember.tensor([1.0, 2.0]).untyped_storage())
        assert type(round_trip(ember, p)) is Param
        with pytest.raises(pickle.UnpicklingError, match="NotATensor"):
            round_trip(ember, NotATensor())
    finally:
        del sys.modules[module.__name__]
