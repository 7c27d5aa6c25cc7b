"""ember.utils.safetensors against the safetensors package (the oracle): files written by
one are read by the other, for every dtype; the same tensors give the same bytes; every
malformed file both refuse, ember with a SafetensorError; loading maps the file."""
from __future__ import annotations

import doctest
import json
import random
import struct

import pytest

import ember
from ember.utils import safetensors as es
from helpers import DTYPE_NAMES

torch = pytest.importorskip("torch")
st = pytest.importorskip("safetensors.torch")
safetensors = pytest.importorskip("safetensors")

SHAPES = [(3, 4), (), (0, 3), (2, 1, 3)]


def torch_tensor(name, shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 50).to(getattr(torch, name))


def ember_from_torch(t):
    """The same bytes, dtype and shape in an ember tensor (no conversion on the way)."""
    raw = t.contiguous().reshape(-1).view(torch.uint8)
    e = ember.tensor(raw.tolist(), dtype=ember.uint8)
    return e.view(getattr(ember, str(t.dtype).split(".")[1])).reshape(tuple(t.shape))


def assert_same(e, t):
    """Same dtype, shape and bytes (NaNs and signed zeros included)."""
    assert repr(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    eb = e.contiguous().reshape(-1).view(ember.uint8).tolist()
    tb = t.contiguous().reshape(-1).view(torch.uint8).tolist()
    assert eb == tb


def all_dtypes():
    tt = {f"{n}_{i}": torch_tensor(n, s, i) for n in DTYPE_NAMES for i, s in enumerate(SHAPES)}
    return tt, {k: ember_from_torch(v) for k, v in tt.items()}


def frame(header, buffer=b"", pad=True):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + buffer


def f32(name="a", shape=(1,), offsets=(0, 4), dtype="F32"):
    return {name: {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}}


# ---- round trips ----

@pytest.mark.parametrize("metadata", [None, {}, {"format": "pt"}])
def test_same_bytes_as_the_package(metadata):
    tt, te = all_dtypes()
    assert es.save(te, metadata=metadata) == st.save(tt, metadata=metadata)


def test_package_file_loads_in_ember(tmp_path):
    tt, _ = all_dtypes()
    st.save_file(tt, tmp_path / "t.safetensors", metadata={"a": "1", "b": "2"})
    got = es.load_file(tmp_path / "t.safetensors")
    assert got.keys() == tt.keys()
    for k in tt:
        assert_same(got[k], tt[k])
    with es.safe_open(str(tmp_path / "t.safetensors"), framework="pt") as f:
        assert f.metadata() == {"a": "1", "b": "2"}
        assert f.keys() == sorted(tt)


def test_ember_file_loads_in_package(tmp_path):
    tt, te = all_dtypes()
    es.save_file(te, tmp_path / "e.safetensors", metadata={"k": "v"})
    got = st.load_file(tmp_path / "e.safetensors")
    for k in tt:
        assert_same(te[k], got[k])
    with safetensors.safe_open(str(tmp_path / "e.safetensors"), framework="pt") as f:
        assert f.metadata() == {"k": "v"}


def test_bytes_round_trip_both_ways():
    tt, te = all_dtypes()
    for k, v in es.load(st.save(tt)).items():
        assert_same(v, tt[k])
    for k, v in st.load(es.save(te)).items():
        assert_same(te[k], v)
    assert es.load(es.save({})) == {}
    assert es.load(bytearray(es.save(te)))["float32_0"].tolist() == te["float32_0"].tolist()


def test_saving_views_writes_only_their_bytes():
    base = ember.arange(12.0)
    tbase = torch.arange(12.0)
    views = {"a": base[2:5], "b": base.view(3, 4)[2], "c": base[0]}
    assert es.save(views) == st.save({"a": tbase[2:5], "b": tbase.view(3, 4)[2], "c": tbase[0]})
    assert base.untyped_storage().resizable()  # no side effect on the saved tensors' storage


def test_metadata_absent_is_none(tmp_path):
    es.save_file({"a": ember.ones(1)}, tmp_path / "m")
    with es.safe_open(tmp_path / "m", "pt") as f:
        assert f.metadata() is None
    es.save_file({"a": ember.ones(1)}, tmp_path / "m", metadata={})
    with es.safe_open(tmp_path / "m", "pt") as f:
        assert f.metadata() == {}


def test_docstring_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write files under short names
    result = doctest.testmod(es, globs={**vars(es), "ember": ember})
    assert result.failed == 0 and result.attempted > 0


# ---- safe_open ----

@pytest.fixture
def opened(tmp_path):
    path = str(tmp_path / "s.safetensors")
    st.save_file({"w": torch.arange(24.0).reshape(2, 3, 4), "z": torch.tensor(5, dtype=torch.int32),
                  "e": torch.zeros(0, 3), "h": torch.arange(6).to(torch.bfloat16)}, path)
    with safetensors.safe_open(path, framework="pt") as theirs, es.safe_open(path, framework="pt") as ours:
        yield theirs, ours


INDICES = [slice(None), (slice(0, 1),), (slice(None), slice(1, 3)), 1, (1, 2), (slice(None), 0, slice(1, None)),
           (Ellipsis, 1), slice(None, None, 2), (slice(5, 9),), slice(-1, None), -1, (slice(3, 1),), None,
           (1, slice(None), 3)]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_get_slice(opened, index):
    theirs, ours = opened
    assert_same(ours.get_slice("w")[index], theirs.get_slice("w")[index])


def test_safe_open_answers_as_the_package(opened):
    theirs, ours = opened
    assert ours.keys() == theirs.keys()
    assert ours.offset_keys() == theirs.offset_keys()
    assert ours.metadata() == theirs.metadata()
    for name in theirs.keys():
        assert_same(ours.get_tensor(name), theirs.get_tensor(name))
        assert ours.get_slice(name).get_shape() == theirs.get_slice(name).get_shape()
        assert ours.get_slice(name).get_dtype() == theirs.get_slice(name).get_dtype()
    assert_same(ours.get_slice("z")[...], theirs.get_slice("z")[...])
    assert_same(ours.get_slice("e")[:, 1:2], theirs.get_slice("e")[:, 1:2])
    for bad, err in ((5, IndexError), ((slice(None),) * 4, IndexError), (slice(None, None, -1), ValueError)):
        with pytest.raises(err):
            theirs.get_slice("w")[bad]
        with pytest.raises(err):
            ours.get_slice("w")[bad]
    with pytest.raises(es.SafetensorError, match="does not contain tensor nope"):
        ours.get_tensor("nope")
    with pytest.raises(es.SafetensorError, match="does not contain tensor nope"):
        ours.get_slice("nope")


def test_safe_open_errors(tmp_path):
    path = tmp_path / "a"
    es.save_file({"a": ember.ones(2)}, path)
    with es.safe_open(path, "pt") as f:
        pass
    with pytest.raises(es.SafetensorError, match="File is closed"):
        f.keys()
    with pytest.raises(es.SafetensorError, match="File is closed"):
        f.get_tensor("a")
    with pytest.raises(es.SafetensorError, match="framework"):
        es.safe_open(path, "tf2")
    with pytest.raises((AssertionError, RuntimeError)):  # not compiled with CUDA, or no GPU
        es.safe_open(path, "pt", device="cuda")
    with pytest.raises((AssertionError, RuntimeError)):
        es.load_file(path, device="cuda")
    on_meta = es.load_file(path, device="meta")
    assert all(t.is_meta for t in on_meta.values()) and sorted(on_meta) == sorted(es.load_file(path))
    with es.safe_open(path, "pt", device=ember.device("meta")) as f:
        assert all(f.get_tensor(k).is_meta for k in f.keys())
    with pytest.raises(FileNotFoundError):
        es.load_file(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        es.safe_open(tmp_path, "pt")
    with pytest.raises(TypeError):
        es.load("not bytes")
    assert es.load_file(str(path).encode())["a"].tolist() == [1.0, 1.0]  # a bytes path


# ---- zero copy ----

def test_load_file_views_one_copy_on_write_mapping(tmp_path):
    path = tmp_path / "z"
    st.save_file({"a": torch.arange(8.0), "b": torch.arange(4.0)}, path)
    got = es.load_file(path)
    a, b = got["a"], got["b"]
    # both views of one mapping, at the file's offsets ("a" first: same dtype, name order)
    assert b.data_ptr() - a.data_ptr() == 32
    assert a.untyped_storage().resizable() is False
    a[0] = 100.0
    assert st.load_file(path)["a"][0].item() == 0.0  # the file is untouched
    assert es.load_file(path)["a"][0].item() == 0.0


def _resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs /proc")
def test_loading_does_not_read_the_data(tmp_path):
    path = tmp_path / "big"
    n = 32 << 20  # 32 MiB of float32 in 4 tensors
    es.save_file({f"t{i}": ember.ones(n // 16) for i in range(4)}, path)
    before = _resident_bytes()
    got = es.load_file(path)
    assert _resident_bytes() - before < (4 << 20)
    assert sum(t.sum().item() for t in got.values()) == n // 4
    assert _resident_bytes() - before > (24 << 20)  # touching reads it in


def test_unaligned_data_is_copied_aligned():
    # An unpadded header puts the F32 tensor at byte 8 + 57: readers must not hand out a
    # misaligned float pointer.
    header = json.dumps(f32("a", (2,), (0, 8))).encode()
    data = frame(header, struct.pack("<2f", 1.5, -2.0), pad=False)
    assert (8 + len(header)) % 4
    a = es.load(data)["a"]
    assert a.data_ptr() % 4 == 0 and a.tolist() == [1.5, -2.0]
    assert st.load(data)["a"].tolist() == [1.5, -2.0]


# ---- saving: what is refused ----

def shared_cases(lib):
    x = lib.arange(6.0)
    return {"same": {"a": x, "b": x}, "overlap": {"a": x[:4], "b": x[2:]}, "view of all": {"a": x, "b": x.view(2, 3)},
            "nested": {"a": x, "b": x[1:2], "c": x[4:5]}}


@pytest.mark.parametrize("case", ["same", "overlap", "view of all", "nested"])
def test_shared_memory_is_refused(case):
    with pytest.raises(RuntimeError, match="share memory"):
        st.save(shared_cases(torch)[case])
    with pytest.raises(RuntimeError, match="share memory"):
        es.save(shared_cases(ember)[case])


def test_shared_memory_is_found_across_storages():
    # two storages over overlapping bytes of a third (as _slice and mapped files make them)
    whole = ember.arange(6.0).untyped_storage()
    a = ember.empty(0).set_(whole._slice(0, 16), 0, (4,), (1,))
    b = ember.empty(0).set_(whole._slice(8, 24), 0, (4,), (1,))
    with pytest.raises(RuntimeError, match="share memory"):
        es.save({"a": a, "b": b})
    c = ember.empty(0).set_(whole._slice(16, 24), 0, (2,), (1,))
    assert es.load(es.save({"a": a, "c": c}))["c"].tolist() == [4.0, 5.0]


def test_an_empty_view_shares_nothing():
    x, tx = ember.arange(6.0), torch.arange(6.0)
    assert es.save({"a": x, "b": x[2:2]}) == st.save({"a": tx, "b": tx[2:2]})


def test_disjoint_views_of_one_storage_are_saved():
    x, tx = ember.arange(6.0), torch.arange(6.0)
    assert es.save({"a": x[:3], "b": x[3:]}) == st.save({"a": tx[:3], "b": tx[3:]})
    assert es.save({"a": x[:0], "b": x[:0]}) == st.save({"a": tx[:0], "b": tx[:0]})


@pytest.mark.parametrize("make, err", [
    (lambda lib: {"a": lib.arange(6.0).view(2, 3).t()}, ValueError),
    (lambda lib: {"a": lib.arange(6.0).view(2, 3)[:, :2]}, ValueError),
    (lambda lib: {"a": [1.0]}, ValueError),
    (lambda lib: [lib.ones(1)], ValueError),
    (lambda lib: {1: lib.ones(1)}, TypeError),
], ids=["transposed", "sliced", "not a tensor", "not a dict", "int name"])
def test_save_refuses_as_the_package(make, err):
    with pytest.raises(err):
        st.save(make(torch))
    with pytest.raises(err):
        es.save(make(ember))


def test_save_refuses_bad_metadata_and_reserved_name():
    with pytest.raises(TypeError):
        st.save({"a": torch.ones(1)}, metadata={"x": 1})
    with pytest.raises(TypeError):
        es.save({"a": ember.ones(1)}, metadata={"x": 1})
    # the package writes a file nobody can read; ember refuses to write it
    with pytest.raises(ValueError, match="__metadata__"):
        es.save({"__metadata__": ember.ones(1)})


# ---- models with tied weights ----

def tied(nn):
    m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    m[1].weight = m[0].weight
    return m


def test_save_model_and_load_model(tmp_path):
    ember.manual_seed(0)
    m = tied(ember.nn)
    with pytest.raises(RuntimeError, match="share memory"):
        es.save_file(m.state_dict(), tmp_path / "x")
    es.save_model(m, tmp_path / "e")
    st.save_model(tied(torch.nn), tmp_path / "t")
    with es.safe_open(tmp_path / "e", "pt") as ours, safetensors.safe_open(str(tmp_path / "t"), "pt") as theirs:
        assert ours.keys() == theirs.keys() == ["0.bias", "0.weight", "1.bias"]
        assert ours.metadata() == theirs.metadata() == {"1.weight": "0.weight"}
    fresh = tied(ember.nn)
    assert es.load_model(fresh, tmp_path / "e") == (set(), [])
    assert fresh[1].weight.tolist() == m[0].weight.tolist() and fresh[1].bias.tolist() == m[1].bias.tolist()
    with pytest.raises(RuntimeError, match="Missing key"):
        es.load_model(ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Linear(2, 2), ember.nn.Linear(2, 2)),
                      tmp_path / "e")


# ---- malformed files: both refuse, ember with SafetensorError ----

GOOD = st.save({"a": torch.arange(4, dtype=torch.float32), "b": torch.ones(3, dtype=torch.float16),
                "c": torch.tensor(7, dtype=torch.int64)}, metadata={"x": "y"})

MALFORMED = {
    "empty": b"",
    "header length past the end": struct.pack("<Q", 100) + b"{}      ",
    "header too large": struct.pack("<Q", 2**62) + b"{}",
    "header of 100 MB past the end": struct.pack("<Q", 100_000_000) + b" " * 16,
    "header length zero": struct.pack("<Q", 0),
    "bad JSON": frame(b"{bad}"),
    "trailing characters": frame(b'{"__metadata__":{}}xyz'),
    "NUL padding": frame(b"{}\0\0\0\0\0\0", pad=False),
    "not UTF-8": frame(b'{"\xff":1}'),
    "not an object": frame([1, 2]),
    "metadata not strings": frame({"__metadata__": {"a": 1}}),
    "metadata a list": frame({"__metadata__": [1]}),
    "duplicate metadata": frame(b'{"__metadata__":{},"__metadata__":{}}'),
    "unknown dtype": frame(f32(dtype="X9"), b"\0" * 4),
    "lowercase dtype": frame(f32(dtype="f32"), b"\0" * 4),
    "shape and offsets disagree": frame(f32(shape=(2,)), b"\0" * 4),
    "out of range": frame(f32(shape=(2,), offsets=(0, 8)), b"\0" * 4),
    "overlapping": frame({**f32("a", (2,), (0, 8)), **f32("b", (1,), (4, 8))}, b"\0" * 8),
    "gap": frame({**f32("a", (1,), (0, 4)), **f32("b", (1,), (8, 12))}, b"\0" * 12),
    "begin after end": frame(f32(shape=(0,), offsets=(4, 0)), b"\0" * 4),
    "trailing bytes": frame(f32(), b"\0" * 8),
    "negative dim": frame(f32(shape=(-1,)), b"\0" * 4),
    "float dim": frame(b'{"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}}', b"\0" * 4),
    "bool dim": frame(b'{"a":{"dtype":"F32","shape":[true],"data_offsets":[0,4]}}', b"\0" * 4),
    "huge shape": frame(f32(shape=(2**32, 2**32)), b"\0" * 4),
    "huge empty shape": frame(f32(shape=(0, 2**62, 2**62), offsets=(0, 0))),
    "dim past u64": frame(f32(shape=(0, 2**70), offsets=(0, 0))),
    "many huge dims": frame(f32(shape=(2**40,) * 200_000), b"\0" * 4),
    "offset past u64": frame(f32(offsets=(2**64, 2**64 + 4)), b"\0" * 4),
    "three offsets": frame(f32(offsets=(0, 4, 4)), b"\0" * 4),
    "missing field": frame({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
    "entry not an object": frame({"a": [1]}, b"\0" * 4),
    "extra data after a good file": GOOD + b"\0" * 4,
    "deeply nested": frame(b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
}


def _refuses_package(data):
    with pytest.raises(Exception):  # noqa: B017 - safetensors_rust.SafetensorError is not importable by name
        st.load(data)


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_bytes(name, tmp_path):
    data = MALFORMED[name]
    _refuses_package(data)
    with pytest.raises(es.SafetensorError):
        es.load(data)
    (tmp_path / "f").write_bytes(data)
    with pytest.raises(es.SafetensorError):
        es.load_file(tmp_path / "f")


def test_truncated_at_every_point(tmp_path):
    for cut in range(len(GOOD)):
        with pytest.raises(es.SafetensorError):
            es.load(GOOD[:cut])
    for cut in (0, 7, 8, 60, len(GOOD) - 1):
        (tmp_path / "f").write_bytes(GOOD[:cut])
        with pytest.raises(es.SafetensorError):
            es.safe_open(tmp_path / "f", "pt")


def test_messages_name_the_problem():
    with pytest.raises(es.SafetensorError, match="header too large"):
        es.load(MALFORMED["header too large"])
    with pytest.raises(es.SafetensorError, match="invalid header length"):
        es.load(MALFORMED["header length past the end"])
    with pytest.raises(es.SafetensorError, match="unknown dtype 'X9'"):
        es.load(MALFORMED["unknown dtype"])
    with pytest.raises(es.SafetensorError, match="invalid offset for tensor `b`"):
        es.load(MALFORMED["overlapping"])
    with pytest.raises(es.SafetensorError, match="not fully covered"):
        es.load(MALFORMED["out of range"])


VALID_ODDITIES = {
    "offsets out of name order": frame({**f32("a", (1,), (4, 8)), **f32("b", (1,), (0, 4))}, b"\0" * 8),
    "header not padded": frame(f32(), b"\0" * 4, pad=False),
    "extra field": frame({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "z": 1}}, b"\0" * 4),
    "whitespace around the JSON": frame(b'\t {"__metadata__":null}\r\n'),
    "empty object": frame({}),
    "empty tensors at one offset": frame({**f32("a", (0,), (0, 0)), **f32("b", (0, 2), (0, 0))}),
}


@pytest.mark.parametrize("name", VALID_ODDITIES)
def test_valid_oddities_load_as_in_the_package(name):
    data = VALID_ODDITIES[name]
    theirs, ours = st.load(data), es.load(data)
    assert ours.keys() == theirs.keys()
    for k in theirs:
        assert_same(ours[k], theirs[k])


@pytest.mark.parametrize("code", ["F8_E4M3", "U16", "U32", "U64", "F8_E5M2"])
def test_dtypes_ember_lacks_are_named(code, tmp_path):
    bits = {"C64": 64, "U16": 16, "U32": 32, "U64": 64}.get(code, 8)
    n = bits // 8
    data = frame({**f32("a", (1,), (0, n), dtype=code), **f32("b", (1,), (n, n + 4))}, b"\0" * (n + 4))
    st.load(data)  # the package reads it
    with pytest.raises(es.SafetensorError, match=f"dtype {code}"):
        es.load(data)
    (tmp_path / "f").write_bytes(data)
    with es.safe_open(tmp_path / "f", "pt") as f:  # the other tensors stay readable
        assert f.get_tensor("b").tolist() == [0.0]
        assert f.get_slice("a").get_dtype() == code
        with pytest.raises(es.SafetensorError, match=f"dtype {code}"):
            f.get_tensor("a")


def test_random_mutations_agree_with_the_package():
    """Bytes changed at random in a good file: ember loads exactly what the package loads
    and refuses the rest (the fuzz harness runs the long version)."""
    rng = random.Random(0)
    for _ in range(400):
        data = bytearray(GOOD)
        for _ in range(rng.randint(1, 3)):
            byte = rng.choice((0, 0x20, 0x22, 0x30, 0x31, 0x39, 0x5B, 0x7D, rng.randrange(256)))  # NUL, space, "019[}
            data[rng.randrange(len(data))] = byte
        data = bytes(data)
        try:
            theirs = st.load(data)
        except Exception:  # noqa: BLE001 - the package's own error type
            theirs = None
        try:
            ours = es.load(data)
        except es.SafetensorError:
            ours = None
        if theirs is None or ours is None:
            assert theirs is None and ours is None, data
        else:
            assert ours.keys() == theirs.keys()
            for k in theirs:
                assert_same(ours[k], theirs[k])
