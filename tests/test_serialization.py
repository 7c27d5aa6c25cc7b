"""ember.save / ember.load against torch.save / torch.load: each library reading the
other's files (zip and legacy formats) for every dtype and layout, shared storages,
Parameters, state dicts, optimizer states, map_location, mmap, the weights_only loader
(torch's allowlist, safe globals, the environment variables) and damaged files."""
import base64
import collections
import io
import os
import pathlib
import pickle
import struct
import warnings
import zipfile

import pytest

import ember
import ember.serialization
from ember._serialization import _names, _zip
from helpers import DTYPE_NAMES, assert_same, make_sample, torch


def saved(lib, obj, **kwargs):
    buffer = io.BytesIO()
    lib.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def loaded(lib, raw, **kwargs):
    return lib.load(io.BytesIO(raw), **kwargs)


def round_trip(lib, obj, **load_kwargs):
    return loaded(lib, saved(lib, obj), **load_kwargs)


def same(e, t):
    """e (ember's) equals t (torch's): values, dtypes, strides, offsets, storage sizes, types."""
    if isinstance(t, torch.Tensor):
        assert_same(e, t, strides=True)
        assert e.storage_offset() == t.storage_offset()
        assert e.untyped_storage().nbytes() == t.untyped_storage().nbytes()
        assert e.requires_grad == t.requires_grad
        assert isinstance(e, ember.nn.Parameter) == isinstance(t, torch.nn.Parameter)
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


FORMATS = {"zip": {}, "legacy": {"_use_new_zipfile_serialization": False}}


def across(build, fmt="zip"):
    """build(lib) makes an object; each library loads the other's file of it and its own."""
    e_obj, t_obj = build(ember), build(torch)
    from_ember, from_torch = saved(ember, e_obj, **FORMATS[fmt]), saved(torch, t_obj, **FORMATS[fmt])
    same(loaded(ember, from_torch), t_obj)
    same(loaded(ember, from_ember), t_obj)
    same(loaded(ember, from_ember), loaded(torch, from_ember))
    same(loaded(ember, from_torch), loaded(torch, from_torch))
    return loaded(ember, from_torch), loaded(torch, from_ember)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "empty", "scalar", "expanded"])
def test_tensors_cross_both_ways(dtype, layout, fmt):
    across(lambda lib: make_sample(lib, dtype, layout), fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_containers_and_plain_values_cross_both_ways(fmt):
    def build(lib):
        w = lib.arange(6.0).view(2, 3)
        return {"state": collections.OrderedDict([("layer.weight", w), ("layer.bias", lib.zeros(3))]),
                "list": [1, 2.5, None, True, "text", b"bytes", (lib.tensor(7), [lib.ones(1, dtype=lib.int16)])],
                "set": {1, 2}, "complex": 1 + 2j, "big": 2**70, "inf": float("inf"), "bytearray": bytearray(b"ab"),
                "counter": collections.Counter("aab"), "dtypes": [lib.float16, lib.bfloat16, lib.bool],
                "device": lib.device("cpu"), "size": w.shape, "empty": {}, "tuple": ()}

    across(build, fmt)
    across(lambda lib: [lib.tensor(3.5)] * 2, fmt)
    across(lambda lib: "only a string", fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_views_stay_views_of_one_storage(fmt):
    def build(lib):
        base = lib.arange(12.0).view(3, 4)
        return {"base": base, "row": base[1], "t": base.t(), "other": lib.ones(2)}

    e, t = across(build, fmt)
    for d, lib in ((e, ember), (t, torch)):
        assert d["row"].untyped_storage().data_ptr() == d["base"].untyped_storage().data_ptr()
        assert d["t"].untyped_storage().data_ptr() == d["base"].untyped_storage().data_ptr()
        assert d["other"].untyped_storage().data_ptr() != d["base"].untyped_storage().data_ptr()
        d["base"][1, 2] = 100
        assert d["row"].tolist() == [4.0, 5.0, 100.0, 7.0] and d["t"][2, 1].item() == 100
    base = ember.arange(12.0).view(3, 4)  # one storage saved once: its 48 bytes are in the file once
    assert len(saved(ember, [base, base.clone()[0], base.clone().t()])) - len(saved(ember, [base, base[0], base.t()])) \
        >= 2 * 48


@pytest.mark.parametrize("writer", ["ember", "torch"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_saves_one_after_another_on_one_stream_load_in_order(writer, fmt, tmp_path):
    """torch.load reads the archive that starts where the stream is, not the one that ends
    it (zipfile's view): two saves on one stream load back one by one, from either file."""
    lib = {"ember": ember, "torch": torch}[writer]
    buffer, starts = io.BytesIO(), []
    for obj in (lib.ones(2), {"w": lib.zeros(3), "step": 1}):
        starts.append(buffer.tell())
        lib.save(obj, buffer, **FORMATS[fmt])
    got = []
    for start in starts:
        buffer.seek(start)
        got.append(ember.load(buffer))
    assert got[0].tolist() == [1.0, 1.0] and got[1]["w"].tolist() == [0.0, 0.0, 0.0] and got[1]["step"] == 1
    # torch reads the last archive (from its start: offsets count from there, as torch
    # writes them); the first it finds only where both happen to share their layout
    buffer.seek(starts[1])
    assert torch.load(buffer)["w"].tolist() == [0.0, 0.0, 0.0]
    if fmt == "zip":
        path = tmp_path / "two.pt"
        path.write_bytes(buffer.getvalue())
        assert ember.load(path).tolist() == ember.load(path, mmap=True).tolist() == [1.0, 1.0]


def test_one_storage_as_two_dtypes_is_refused_as_in_torch():
    for lib in (ember, torch):
        t = lib.arange(4, dtype=lib.int32)
        with pytest.raises(RuntimeError, match="view the same data as different types"):
            saved(lib, [t, t.view(lib.float32)])


def test_storages_cross_both_ways():
    for lib_a, lib_b in ((ember, torch), (torch, ember)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's TypedStorage deprecation
            untyped = lib_a.tensor([1, 2, 3], dtype=lib_a.uint8).untyped_storage()
            back = loaded(lib_b, saved(lib_a, untyped))  # torch.load gives a TypedStorage of bytes
            assert isinstance(back, lib_b.TypedStorage) and back.dtype == lib_b.uint8 and back.tolist() == [1, 2, 3]
            typed = lib_a.tensor([1.5, 2.5]).storage()
            back = loaded(lib_b, saved(lib_a, typed))
            assert isinstance(back, lib_b.FloatStorage) and back.tolist() == [1.5, 2.5]


@pytest.mark.parametrize("fmt", FORMATS)
def test_parameters_cross_both_ways(fmt):
    def build(lib):
        p = lib.nn.Parameter(lib.arange(4.0).view(2, 2))
        return {"p": p, "frozen": lib.nn.Parameter(lib.ones(3), requires_grad=False), "again": p,
                "grad": lib.ones(2).requires_grad_()}

    e, t = across(build, fmt)
    assert type(e["p"]) is ember.nn.Parameter and e["p"].requires_grad and not e["frozen"].requires_grad
    assert type(t["p"]) is torch.nn.Parameter and t["p"].requires_grad and not t["frozen"].requires_grad
    assert e["again"] is e["p"] and t["again"] is t["p"]
    for lib in (ember, torch):  # a Parameter carrying attributes keeps them
        p = lib.nn.Parameter(lib.ones(2))
        p.note = "kept"
        other = torch if lib is ember else ember
        assert loaded(other, saved(lib, p)).note == "kept"


def test_module_state_dict_crosses_into_the_other_librarys_model():
    ember.manual_seed(0)
    em = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    em(ember.randn(5, 3))  # moves the running statistics
    tm.load_state_dict(loaded(torch, saved(ember, em.state_dict())))
    x = [[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]]
    em.eval(), tm.eval()
    assert_same(em(ember.tensor(x)).detach(), tm(torch.tensor(x)).detach(), tol=1e-6)
    torch.nn.init.normal_(tm[0].weight)
    em.load_state_dict(loaded(ember, saved(torch, tm.state_dict())))
    assert_same(em(ember.tensor(x)).detach(), tm(torch.tensor(x)).detach(), tol=1e-6)


def test_adam_state_crosses_both_ways():
    def trained(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        with lib.no_grad():
            model.weight.copy_(lib.arange(6.0).view(2, 3) / 10)
            model.bias.zero_()
        opt = lib.optim.Adam(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            model(lib.ones(4, 3)).pow(2).sum().backward()
            opt.step()
        return model, opt

    (em, eo), (tm, to) = trained(ember), trained(torch)
    fresh_t = torch.optim.Adam(torch.nn.Linear(3, 2).parameters(), lr=0.5)
    fresh_t.load_state_dict(loaded(torch, saved(ember, eo.state_dict())))
    fresh_e = ember.optim.Adam(ember.nn.Linear(3, 2).parameters(), lr=0.5)
    fresh_e.load_state_dict(loaded(ember, saved(torch, to.state_dict())))
    for e_state, t_state in ((fresh_e.state_dict(), to.state_dict()), (eo.state_dict(), fresh_t.state_dict())):
        assert e_state["param_groups"][0]["lr"] == t_state["param_groups"][0]["lr"] == 0.1
        for k in t_state["state"]:
            for name in ("step", "exp_avg", "exp_avg_sq"):
                assert_same(e_state["state"][k][name], t_state["state"][k][name], tol=1e-6)


def test_the_archive_is_torchs():
    obj = {"a": ember.ones(2), "b": ember.arange(3)}
    e_zip = zipfile.ZipFile(io.BytesIO(saved(ember, obj)))
    t_zip = zipfile.ZipFile(io.BytesIO(saved(torch, {"a": torch.ones(2), "b": torch.arange(3)})))
    assert e_zip.namelist() == t_zip.namelist()
    for name in ("archive/version", "archive/byteorder", "archive/.format_version", "archive/.storage_alignment"):
        assert e_zip.read(name) == t_zip.read(name)
    assert e_zip.read("archive/data.pkl") == t_zip.read("archive/data.pkl")  # the same pickle, byte for byte
    assert len(e_zip.read("archive/.data/serialization_id")) == 40
    for info in e_zip.infolist():
        assert info.compress_type == zipfile.ZIP_STORED


def test_storage_records_are_64_byte_aligned_and_torch_maps_them(tmp_path):
    obj = [ember.ones(n, dtype=ember.int8) for n in (1, 3, 64, 65, 100)]
    ember.save(obj, tmp_path / "aligned.pt")
    with open(tmp_path / "aligned.pt", "rb") as f:
        checkpoint = _zip.ZipCheckpoint(f)
        for key in range(5):
            assert checkpoint.data_offset(f"data/{key}", obj[key].numel()) % 64 == 0
    for got, want in zip(torch.load(tmp_path / "aligned.pt", mmap=True), obj):
        assert got.tolist() == want.tolist()


def test_top_folder_names(tmp_path):
    for lib in (ember, torch):
        lib.save(lib.ones(1), tmp_path / f"model.v1.{lib.__name__}.pt")
        assert zipfile.ZipFile(tmp_path / f"model.v1.{lib.__name__}.pt").namelist()[0] == \
            f"model.v1.{lib.__name__}/data.pkl"
    # reading accepts any top folder name
    source = zipfile.ZipFile(io.BytesIO(saved(torch, {"w": torch.arange(3)})))
    renamed = io.BytesIO()
    with zipfile.ZipFile(renamed, "w") as out:
        for info in source.infolist():
            out.writestr(info.filename.replace("archive/", "some folder/", 1), source.read(info))
    for lib in (ember, torch):
        assert loaded(lib, renamed.getvalue())["w"].tolist() == [0, 1, 2]


def test_paths_path_likes_and_file_objects(tmp_path):
    t = ember.arange(5)
    ember.save(t, str(tmp_path / "a.pt"))
    ember.save(t, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as f:
        ember.save(t, f)
    assert ember.load(str(tmp_path / "a.pt")).tolist() == [0, 1, 2, 3, 4]
    assert ember.load(pathlib.Path(tmp_path / "b.pt")).tolist() == [0, 1, 2, 3, 4]
    with open(tmp_path / "c.pt", "rb") as f:
        assert ember.load(f).tolist() == [0, 1, 2, 3, 4]
    for lib in (torch, ember):
        with pytest.raises(FileNotFoundError):
            lib.load(tmp_path / "missing.pt")
        with pytest.raises(AttributeError):
            lib.save(lib.ones(1), 3)


def test_large_storages_are_copied_in_chunks(monkeypatch):
    monkeypatch.setattr(_zip, "CHUNK", 7)
    t = ember.arange(100, dtype=ember.int64)
    for fmt in FORMATS.values():
        raw = saved(ember, t[3:], **fmt)
        assert loaded(torch, raw).tolist() == loaded(ember, raw).tolist() == list(range(3, 100))


# An ember.save file of the format ember wrote before torch's:
# {"w": arange(6.).view(2, 3), "row": w[1], "i": int16 [7, -8], "size": w.shape, "dtype": bfloat16}
EMBER_V1 = base64.b64decode(
    "iUVNQkVSDQoBAAAAAAAAAAEBAAAAAAAAgASV9gAAAAAAAAB9lCiMAXeUjBNlbWJlci5zZXJpYWxpemF0aW9ulIwPX3JlYnVpbGRfdGVuc29y"
    "lJOUKIwHc3RvcmFnZZRLAEsYh5RRSwBLAksDhpRLA0sBhpSMCGVtYmVyLl9DlIwHZmxvYXQzMpSTlIl0lFKUjANyb3eUaAQoaAVLAEsYh5RR"
    "SwNLA4WUSwGFlGgLiXSUUpSMAWmUaAQoaAVLAUsEh5RRSwBLAoWUSwGFlGgJjAVpbnQxNpSTlIl0lFKUjARzaXpllIwFZW1iZXKUjARTaXpl"
    "lJOUSwJLA4aUhZRSlIwFZHR5cGWUaAmMCGJmbG9hdDE2lJOUdS4AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AACAPwAAAEAAAEBAAACAQAAAoEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABwD4/w==")


def test_embers_earlier_format_still_loads():
    for weights_only in (True, False):
        d = loaded(ember, EMBER_V1, weights_only=weights_only)
        assert d["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and d["row"].tolist() == [3, 4, 5]
        assert d["row"].untyped_storage() is d["w"].untyped_storage()
        assert d["i"].dtype is ember.int16 and d["i"].tolist() == [7, -8]
        assert d["size"] == ember.Size([2, 3]) and d["dtype"] is ember.bfloat16
    with pytest.raises(pickle.UnpicklingError, match="ends early"):
        loaded(ember, EMBER_V1[:-5])
    with pytest.raises(RuntimeError, match="format version 2"):
        loaded(ember, EMBER_V1[:8] + struct.pack("<I", 2) + EMBER_V1[12:])


# ---------------------------------------------------------------- map_location and mmap
def cuda_file():
    """A torch zip file whose storage is recorded on 'cuda:0' (written here without a GPU)."""
    source = zipfile.ZipFile(io.BytesIO(saved(torch, [torch.arange(3.0)])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            z.writestr(info.filename, data)
    return out.getvalue()


def test_map_location():
    x = torch.arange(3)
    raw = saved(torch, [x, x[1:]])
    for location in (None, "cpu", ember.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "cpu"}):
        assert loaded(ember, raw, map_location=location)[1].tolist() == [1, 2]
    seen = []

    def mapper(storage, location):
        seen.append((type(storage), location))
        return storage

    pair = loaded(ember, raw, map_location=mapper)
    assert seen == [(ember.UntypedStorage, "cpu")] and pair[1].tolist() == [1, 2]
    assert pair[1].untyped_storage() is pair[0].untyped_storage()
    clone = loaded(ember, raw, map_location=lambda storage, location: storage.clone())
    assert clone[1].tolist() == [1, 2]
    for bad in ("cuda", {"cpu": "cuda:1"}):  # where CUDA is not available, torch's error
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            loaded(ember, raw, map_location=bad)
    for lib in (ember, torch):  # mapped to meta: the tensors' metadata, no data
        for target in ("meta", lib.device("meta"), {"cpu": "meta"}):
            on_meta = loaded(lib, raw, map_location=target)
            assert on_meta[1].is_meta and list(on_meta[1].shape) == [2] and str(on_meta[1].dtype).endswith("int64")
    on_gpu = cuda_file()
    for lib in (ember, torch):  # a file from a GPU: refused unless mapped, in both
        with pytest.raises(RuntimeError):
            loaded(lib, on_gpu)
        for location in ("cpu", {"cuda:0": "cpu"}, lambda storage, location: storage):
            assert loaded(lib, on_gpu, map_location=location)[0].tolist() == [0.0, 1.0, 2.0]


def test_map_location_functions_raise_their_own_errors():
    """An error of the caller's function is not taken for a damaged file's."""
    def broken(storage, location):
        raise KeyError("the caller's")

    for fmt in FORMATS.values():
        for weights_only in (True, False):
            for lib in (ember, torch):
                with pytest.raises(KeyError, match="the caller's"):
                    loaded(lib, saved(lib, [lib.ones(2)], **fmt), map_location=broken, weights_only=weights_only)
            with pytest.raises(TypeError, match="map_location returned str"):
                loaded(ember, saved(ember, [ember.ones(2)], **fmt), map_location=lambda storage, location: "x",
                       weights_only=weights_only)


def test_mmap_slices_one_mapping_of_the_file(tmp_path):
    path = tmp_path / "mapped.pt"
    torch.save({"a": torch.arange(1000.0), "b": torch.ones(5, dtype=torch.int16), "a1": None}, path)
    got = ember.load(path, mmap=True)
    assert got["a"].tolist() == list(range(1000)) and got["b"].tolist() == [1] * 5
    with open(path, "rb") as f:
        checkpoint = _zip.ZipCheckpoint(f)
        offsets = [checkpoint.data_offset(f"data/{k}", n) for k, n in ((0, 4000), (1, 10))]
    # both storages are slices of one mapping, at their records' offsets in the file
    assert got["b"].data_ptr() - got["a"].data_ptr() == offsets[1] - offsets[0]
    got["a"][0] = 42  # a private mapping: the file does not change
    assert torch.load(path)["a"][0].item() == 0 and ember.load(path, mmap=False)["a"][0].item() == 0


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_mmap_does_not_read_the_data(tmp_path):
    path = tmp_path / "big.pt"
    ember.save([ember.zeros(16 << 20, dtype=ember.uint8)], path)
    before = rss()
    mapped = ember.load(path, mmap=True)
    assert rss() - before < (4 << 20)  # (reading it would add 16 MiB, unless freed memory is reused)
    assert mapped[0].numel() == 16 << 20 and mapped[0][-1].item() == 0


def test_mmap_is_refused_where_torch_refuses_it(tmp_path):
    torch.save(torch.ones(2), tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    torch.save(torch.ones(2), tmp_path / "zip.pt")
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
            lib.load(str(tmp_path / "legacy.pt"), mmap=True)
        with open(tmp_path / "zip.pt", "rb") as f, pytest.raises(ValueError, match="must be a file path"):
            lib.load(f, mmap=True)
        assert lib.load(tmp_path / "zip.pt", mmap=False).tolist() == [1.0, 1.0]


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


def test_the_allowlist_is_torchs():
    from torch import _weights_only_unpickler

    assert _names.TORCH_ALLOWED == set(_weights_only_unpickler._get_allowed_globals())


def test_weights_only_refuses_other_globals():
    calls.clear()
    for build, name in ((lambda lib: Payload(), "test_serialization.record_call"),
                        (lambda lib: Plain(), "test_serialization.Plain"),
                        (lambda lib: {"f": os.system}, "posix.system"),
                        (lambda lib: [lib.ones(1), Plain], "test_serialization.Plain"),
                        (lambda lib: frozenset({1}), "frozenset"), (lambda lib: slice(1), "slice")):
        for lib in (torch, ember):
            with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as err:
                loaded(lib, saved(lib, build(lib)))
            assert name in str(err.value) and "weights_only" in str(err.value)
            if "posix" not in name:
                assert f"add_safe_globals([{name}])" in str(err.value)
        assert "weights_only=False" in str(err.value)  # ember's (the last) says how
    assert calls == []
    assert round_trip(ember, Payload(), weights_only=False) == "ran" and calls == [("payload",)]
    got = round_trip(ember, {"p": Plain()}, weights_only=False)["p"]
    assert isinstance(got, Plain) and got.x == 1


def test_add_safe_globals():
    try:
        ember.serialization.add_safe_globals([Plain])
        assert isinstance(round_trip(ember, Plain()), Plain)
        assert ember.serialization.get_safe_globals() == [Plain]
    finally:
        ember.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        round_trip(ember, Plain())
    with ember.serialization.safe_globals([(Plain, "test_serialization.Plain")]):
        assert isinstance(round_trip(ember, Plain()), Plain)
    assert ember.serialization.get_safe_globals() == []


def numpy_file():
    np = pytest.importorskip("numpy")
    return np, saved(torch, {"array": np.arange(6.0).reshape(2, 3), "t": torch.ones(2)})


def test_numpy_arrays_as_torch_admits_them(monkeypatch):
    """pytorch/examples' time_sequence_prediction saves a numpy array and loads it with
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1."""
    np, raw = numpy_file()
    unsafe = sorted(ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)))
    assert unsafe == sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)))
    assert "numpy.ndarray" in unsafe and "numpy.dtype" in unsafe
    assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(saved(ember, {"t": ember.ones(1)}))) == []
    for lib in (ember, torch):
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL numpy"):
            loaded(lib, raw)
    allowed = [np.ndarray, np.dtype, type(np.dtype(np.float64))]
    allowed += [getattr(np, "_core", np.core).multiarray._reconstruct]
    with ember.serialization.safe_globals(allowed):
        assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == []
        got = loaded(ember, raw)
    assert got["array"].tolist() == [[0, 1, 2], [3, 4, 5]] and got["t"].tolist() == [1.0, 1.0]
    assert loaded(ember, raw, weights_only=False)["array"].shape == (2, 3)
    for variable in ("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        monkeypatch.setenv(variable, "1")
        with pytest.warns(UserWarning, match="forcing weights_only=False"):
            assert loaded(ember, raw)["array"].shape == (2, 3)
        with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True still holds
            loaded(ember, raw, weights_only=True)
        monkeypatch.delenv(variable)


def test_force_weights_only_environment(monkeypatch):
    raw = saved(ember, Plain())
    for variable in ("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_WEIGHTS_ONLY_LOAD"):
        monkeypatch.setenv(variable, "true")
        with pytest.raises(pickle.UnpicklingError):
            loaded(ember, raw, weights_only=False)
        monkeypatch.delenv(variable)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="Only one of"):
            loaded(lib, saved(lib, 1))


def test_get_unsafe_globals_needs_a_zip_checkpoint():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
            lib.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(saved(lib, 1, **FORMATS["legacy"])))


class Special(ember.Tensor):
    pass


def test_tensor_subclasses():
    t = Special(ember.tensor([1.0, 2.0]).untyped_storage())
    t.note = "kept"
    raw = saved(ember, t)
    with pytest.raises(pickle.UnpicklingError, match="Special"):
        loaded(ember, raw)
    assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == ["test_serialization.Special"]
    got = loaded(ember, raw, weights_only=False)
    assert type(got) is Special and got.tolist() == [1.0, 2.0] and got.note == "kept"
    with ember.serialization.safe_globals([Special]):
        assert type(loaded(ember, raw)) is Special
    plain = ember.ones(2)  # a plain tensor with an attribute: torch's subclass record, torch.Tensor named
    plain.note = "kept"
    assert loaded(torch, saved(ember, plain)).note == "kept" and loaded(ember, saved(torch, loaded(
        torch, saved(ember, plain)))).note == "kept"


def test_explicit_pickle_module():
    raw = saved(ember, {"t": ember.ones(2)}, pickle_module=pickle, pickle_protocol=4)
    assert loaded(ember, raw, pickle_module=pickle, weights_only=False)["t"].tolist() == [1.0, 1.0]
    assert loaded(ember, raw)["t"].tolist() == [1.0, 1.0]
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="explicit pickle_module"):
            lib.load(io.BytesIO(), pickle_module=pickle, weights_only=True)


# ---------------------------------------------------------------- damaged files
def forged(size, stride, offset=0, nbytes=8):
    """A zip file whose tensor record claims this view of an nbytes storage."""

    class Forger(ember.serialization._pickler_class(pickle)):
        def reducer_override(self, obj):
            if isinstance(obj, ember.Tensor):
                storage = ember.serialization._StorageOf(obj.untyped_storage(), ember.float32)
                return _names.rebuild_tensor_v2, (storage, offset, size, stride, False, collections.OrderedDict())
            return super().reducer_override(obj)

    body = io.BytesIO()
    pickler = Forger(body, 2)
    pickler._init_storages(False)
    pickler.dump(ember.zeros(nbytes // 4))
    out = io.BytesIO()
    _zip.write_zip(out, "archive", body.getvalue(), [(key, s) for key, s, _ in pickler.storages])
    return out.getvalue()


def test_forged_tensor_records_are_refused():
    assert loaded(ember, forged((2,), (1,))).tolist() == [0.0, 0.0]
    for size, stride, offset in (((3,), (1,), 0), ((2,), (1,), 1), ((2, 2), (2, 1), 0), ((2,), (-1,), 1),
                                 ((1,), (1,), -1), ((2,), (1, 1), 0)):
        with pytest.raises(pickle.UnpicklingError, match="ember.load: a tensor record"):
            loaded(ember, forged(size, stride, offset))
    assert loaded(ember, forged((0, 5), (100, 1))).shape == (0, 5)  # empty views reach nothing


def damaged_inputs():
    obj = {"w": ember.arange(20.0).view(4, 5).t(), "p": ember.nn.Parameter(ember.ones(3)), "n": [1, "x"]}
    files = {"zip": saved(ember, obj), "legacy": saved(ember, obj, **FORMATS["legacy"]), "v1": EMBER_V1}
    return files


@pytest.mark.parametrize("fmt", ["zip", "legacy", "v1"])
def test_truncated_files_raise(fmt):
    raw = damaged_inputs()[fmt]
    for cut in range(0, len(raw), 7):
        with pytest.raises((RuntimeError, pickle.UnpicklingError, EOFError)):
            loaded(ember, raw[:cut])


@pytest.mark.parametrize("fmt", ["zip", "legacy", "v1"])
def test_flipped_bytes_end_in_torchs_exceptions_or_a_result(fmt):
    raw = damaged_inputs()[fmt]
    failures = 0
    for pos in range(0, len(raw), 3):
        for value in (0x00, 0xFF, raw[pos] ^ 0x01):
            damaged = bytearray(raw)
            damaged[pos] = value
            try:
                loaded(ember, bytes(damaged))
            except (RuntimeError, pickle.UnpicklingError, EOFError):  # torch's kinds; anything else fails
                failures += 1
    assert failures > 0


def test_foreign_files():
    for lib in (ember, torch):
        with pytest.raises((pickle.UnpicklingError, EOFError, RuntimeError)):
            loaded(lib, b"definitely not")
        with pytest.raises(EOFError):
            loaded(lib, b"")
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed"):
        loaded(ember, b"PK\x03\x04" + b"\0" * 100)


def test_zip64_records_stay_aligned(monkeypatch, tmp_path):
    """Records past 4 GiB get zip64 fields; shrinking zipfile's limit shows them on small files."""
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 100)
    obj = [ember.arange(n, dtype=ember.int8) for n in (10, 200, 300)]
    ember.save(obj, tmp_path / "zip64.pt")
    monkeypatch.undo()
    with open(tmp_path / "zip64.pt", "rb") as f:
        checkpoint = _zip.ZipCheckpoint(f)
        assert checkpoint.records["data/1"].extra.startswith(b"\x01\x00")  # a zip64 field (id 1)
        for key in range(3):
            assert checkpoint.data_offset(f"data/{key}", obj[key].numel()) % 64 == 0
    for mmap in (False, True):
        for lib in (torch, ember):
            assert [t.tolist() for t in lib.load(tmp_path / "zip64.pt", mmap=mmap)] == [t.tolist() for t in obj]


@pytest.mark.parametrize("fmt", FORMATS)
def test_what_ember_lacks_fails_by_name(fmt):
    for t, name in ((torch.ones(2, dtype=torch.uint16), "torch.uint16"),):
        if fmt == "legacy" and name == "torch.uint16":
            continue  # torch writes no legacy file of it
        with pytest.raises(RuntimeError, match=f"holds {name}, which ember does not support"):
            loaded(ember, saved(torch, t, **FORMATS[fmt]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_whole_torch_modules_load_as_embers_with_weights_only_false(fmt):
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    raw = saved(torch, model, **FORMATS[fmt])
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        loaded(ember, raw)
    got = loaded(ember, raw, weights_only=False)
    assert isinstance(got, ember.nn.Sequential) and isinstance(got[0], ember.nn.Linear)
    assert_same(got[0].weight.detach(), model[0].weight.detach())


class Stream(io.RawIOBase):
    """A file object that can only be read forward (a pipe, a socket)."""

    def __init__(self, data):
        self._data = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, buffer):
        return self._data.readinto(buffer)


def test_streams_that_cannot_seek():
    for fmt in FORMATS.values():
        got = ember.load(Stream(saved(torch, {"w": torch.arange(4.0)[1:]}, **fmt)))
        assert got["w"].tolist() == [1.0, 2.0, 3.0]


def test_a_record_of_another_size_than_its_storage_is_refused_as_in_torch():
    for lib in (ember, torch):
        storage = lib.zeros(10, dtype=lib.uint8).untyped_storage()
        t = lib.empty(0)
        t.set_(storage, 0, (2,), (1,))  # 8 of the storage's 10 bytes, as float32: the record holds 10
        for reader in (ember, torch):
            with pytest.raises(RuntimeError, match=r"record size \(10 bytes\) does not match expected size"):
                loaded(reader, saved(lib, t))


def big_endian(raw):
    """raw (a torch zip file) as a big-endian machine would have written it."""
    source = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("/byteorder"):
                data = b"big"
            elif "/data/" in info.filename:
                data = struct.pack(f">{len(data) // 4}i", *struct.unpack(f"<{len(data) // 4}i", data))
            z.writestr(info.filename, data)
    return out.getvalue()


def _with_byteorder(raw, value):
    source = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in source.infolist():
            z.writestr(info.filename, value if info.filename.endswith("/byteorder") else source.read(info))
    return out.getvalue()


def test_files_of_the_other_byte_order(tmp_path):
    raw = big_endian(saved(torch, {"i": torch.tensor([1, -2, 3], dtype=torch.int32), "f": torch.tensor([1.5])}))
    (tmp_path / "big.pt").write_bytes(raw)
    for lib in (ember, torch):
        for mmap in (False, True):
            got = lib.load(tmp_path / "big.pt", mmap=mmap)
            assert got["i"].tolist() == [1, -2, 3] and got["f"].tolist() == [1.5]
    assert (tmp_path / "big.pt").read_bytes() == raw  # mapped pages were swapped privately
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="Unknown endianness type: middle"):
            loaded(lib, _with_byteorder(raw, b"middle"))


def test_allowing_embers_class_allows_torchs_name_for_it():
    """A whole module torch saved names torch.nn.modules.linear.Linear; a script run under
    ember as torch allows it with safe_globals([torch.nn.Linear]), ember's class."""
    raw = saved(torch, torch.nn.Linear(2, 3))
    assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == ["torch.nn.modules.linear.Linear"]
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear"):
        loaded(ember, raw)
    with ember.serialization.safe_globals([ember.nn.Linear]):
        assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == []
        got = loaded(ember, raw)
    assert type(got) is ember.nn.Linear and got.weight.shape == (3, 2)


def test_unsafe_globals_named_by_memoized_strings_are_listed():
    """A protocol-4 pickle may fetch STACK_GLOBAL's module and name from the memo: the
    list names what loading would look up (posix.system), not the strings last written."""
    body = (b"\x80\x04\x8c\x05posix\x94\x8c\x06system\x940\x8c\x05torch0\x8c\x04Size0"  # pushed, popped
            b"h\x00h\x01\x93.")  # BINGET 0, BINGET 1, STACK_GLOBAL
    buffer = io.BytesIO()
    _zip.write_zip(buffer, "archive", body, [])
    raw = buffer.getvalue()
    assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw)) == ["posix.system"]
    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        loaded(ember, raw)
