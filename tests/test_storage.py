"""Storages: UntypedStorage, TypedStorage and the legacy FloatStorage, ... classes;
tensor.untyped_storage()/storage()/set_(); pickling and deepcopy of tensors and storages.
Compared against torch where torch has the same API."""
import copy
import gc
import pickle
import struct
import sys

import pytest

import ember
from helpers import DTYPE_NAMES, check, torch

pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")

STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
            "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
            "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool"}
ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2,
            "int8": 1, "uint8": 1, "bool": 1}
STRUCT = {"float32": "f", "float64": "d", "float16": "e", "int64": "q", "int32": "i", "int16": "h", "int8": "b",
          "uint8": "B", "bool": "?"}


def values(name):
    if name == "bool":
        return [True, False, True]
    if name == "uint8":
        return [1, 200, 3]
    if name in ("int8", "int16", "int32", "int64"):
        return [1, -2, 3]
    return [1.5, -2.0, 3.25]


# ---------------------------------------------------------------- UntypedStorage
def test_untyped_basics():
    def fn(lib):
        s = lib.UntypedStorage(5)
        return s.size(), s.nbytes(), len(s), s.element_size(), s.device.type, lib.is_storage(s)
    check(fn)
    check(lambda lib: lib.UntypedStorage().nbytes())
    check(lambda lib: lib.UntypedStorage([1, 2, 255]).tolist())
    check(lambda lib: list(lib.UntypedStorage([4, 5])))


def test_untyped_from_list_wraps_like_torch():
    check(lambda lib: lib.UntypedStorage([1, 2, 300]).tolist())


def test_untyped_data_ptr():
    s = ember.UntypedStorage(8)
    assert isinstance(s.data_ptr(), int) and s.data_ptr() != 0
    x = ember.zeros(4)
    assert x.untyped_storage().data_ptr() == x.data_ptr()
    assert x[1:].untyped_storage().data_ptr() == x.data_ptr()
    assert x[1:].data_ptr() == x.data_ptr() + 4


def test_untyped_empty_data_ptr_is_null():
    check(lambda lib: lib.UntypedStorage(0).data_ptr())


def test_untyped_fill_copy_tolist():
    check(lambda lib: lib.UntypedStorage(3).fill_(7).tolist())
    check(lambda lib: lib.UntypedStorage(2).copy_(lib.UntypedStorage([5, 6])).tolist())
    check(lambda lib: lib.UntypedStorage(2).copy_(lib.UntypedStorage([5, 6, 7])))
    check(lambda lib: lib.UntypedStorage(0).fill_(1).tolist())

    def returns_self(lib):
        s = lib.UntypedStorage(2)
        return s.fill_(1) is s, s.copy_(lib.UntypedStorage([1, 2])) is s
    check(returns_self)


def test_untyped_fill_wraps_like_torch():
    check(lambda lib: lib.UntypedStorage(3).fill_(300).tolist())


def test_untyped_copy_from_typed():
    check(lambda lib: lib.UntypedStorage(4).copy_(lib.tensor([1, 2], dtype=lib.int16).untyped_storage()).tolist())


def test_untyped_resize():
    def fn(lib):
        s = lib.UntypedStorage([1, 2, 3])
        s.resize_(5)
        a = s.nbytes(), s.tolist()[:3]
        s.resize_(1)
        b = s.nbytes(), s.tolist()
        s.resize_(0)
        return a, b, s.nbytes(), s.tolist()
    check(fn)
    check(lambda lib: lib.UntypedStorage(3).resize_(-1))
    check(lambda lib: lib.UntypedStorage(-1))


def test_untyped_resize_seen_by_tensor():
    def fn(lib):
        x = lib.tensor([1, 2, 3], dtype=lib.uint8)
        s = x.untyped_storage()
        s.resize_(6)
        y = lib.empty(0, dtype=lib.uint8).set_(s)
        return x, y.shape, y[:3]
    check(fn)


def test_index_past_shrunk_storage_raises():
    # indexing builds a view that must fit the (now smaller) storage: no read past its end
    def fn(lib):
        x = lib.arange(10.0)
        x.untyped_storage().resize_(8)
        return x[3].item()
    check(fn)


def test_untyped_clone():
    def fn(lib):
        s = lib.UntypedStorage([1, 2, 3])
        c = s.clone()
        c[0] = 9
        return s.tolist(), c.tolist(), c.data_ptr() != s.data_ptr(), type(c).__name__
    check(fn)


def test_untyped_indexing():
    def fn(lib):
        s = lib.UntypedStorage([1, 2, 3])
        s[1] = 20
        s[2] = 255
        return s[0], s[1], s[-1], s[-3], s.tolist()
    check(fn)
    check(lambda lib: lib.UntypedStorage([1, 2, 3])[3])
    check(lambda lib: lib.UntypedStorage([1, 2, 3])[-4])


def test_untyped_setitem_out_of_range():
    def fn(lib):
        s = lib.UntypedStorage([1, 2, 3])
        s[5] = 1
    check(fn)


def test_untyped_slicing():
    check(lambda lib: lib.UntypedStorage([1, 2, 3])[0:2].tolist())


def test_untyped_from_buffer():
    check(lambda lib: lib.UntypedStorage.from_buffer(b"\x01\x02\x03\x04", byte_order="big", dtype=lib.int16).tolist())
    check(lambda lib: lib.UntypedStorage.from_buffer(b"\x01\x02\x03\x04", "little", dtype=lib.int16).tolist())
    check(lambda lib: lib.UntypedStorage.from_buffer(bytearray(b"\x01\x02\x03\x04"), "native", dtype=lib.uint8)
          .tolist())
    check(lambda lib: lib.UntypedStorage.from_buffer(b"\x01\x02\x03\x04\x05\x06", "big", dtype=lib.int16, count=2,
                                                     offset=2).tolist())
    check(lambda lib: lib.UntypedStorage.from_buffer(b"\x01\x02\x03", "big", dtype=lib.int16))
    check(lambda lib: lib.UntypedStorage.from_buffer(b"\x01\x02", "middle", dtype=lib.int16))


def test_untyped_from_buffer_copies():
    buf = bytearray(b"\x01\x02")
    s = ember.UntypedStorage.from_buffer(buf, "native", dtype=ember.uint8)
    buf[0] = 9
    assert s.tolist() == [1, 2]


def test_untyped_from_buffer_requires_dtype():
    check(lambda lib: lib.UntypedStorage.from_buffer(b"\x01\x02\x03", byte_order="native"))


def test_untyped_from_file_shared(tmp_path):
    p = tmp_path / "shared.bin"
    p.write_bytes(bytes(range(8)))
    s = ember.UntypedStorage.from_file(str(p), True, 8)
    assert s.tolist() == list(range(8)) and s.nbytes() == 8
    s[0] = 100
    assert p.read_bytes()[0] == 100
    t = ember.tensor([0], dtype=ember.uint8).set_(s)
    t[7] = 70
    assert p.read_bytes()[7] == 70
    del s, t
    gc.collect()
    assert p.read_bytes() == bytes([100, 1, 2, 3, 4, 5, 6, 70])


def test_untyped_from_file_private(tmp_path):
    p = tmp_path / "private.bin"
    p.write_bytes(bytes(range(8)))
    s = ember.UntypedStorage.from_file(str(p), False, 8)
    s[1] = 77
    assert s.tolist() == [0, 77, 2, 3, 4, 5, 6, 7]
    del s
    gc.collect()
    assert p.read_bytes() == bytes(range(8))


def test_untyped_from_file_creates_when_shared(tmp_path):
    for lib in (ember, torch):
        p = tmp_path / f"new_{lib.__name__}.bin"
        s = lib.UntypedStorage.from_file(str(p), True, 16)
        s.fill_(3)
        del s
        gc.collect()
        assert p.read_bytes() == bytes([3] * 16)


def test_untyped_from_file_errors(tmp_path):
    p = tmp_path / "short.bin"
    p.write_bytes(bytes(8))
    check(lambda lib: lib.UntypedStorage.from_file(str(p), False, 16))
    check(lambda lib: lib.UntypedStorage.from_file(str(tmp_path / "missing.bin"), False, 8))
    check(lambda lib: lib.UntypedStorage.from_file(str(tmp_path / "nodir" / "x.bin"), True, 8))


def test_untyped_from_file_matches_torch(tmp_path):
    p = tmp_path / "same.bin"
    p.write_bytes(bytes(range(10)))
    check(lambda lib: lib.UntypedStorage.from_file(str(p), False, 10).tolist())
    check(lambda lib: lib.UntypedStorage.from_file(str(p), False, 4).tolist())


def test_untyped_pickle_and_deepcopy():
    s = ember.UntypedStorage([1, 2, 3])
    r = pickle.loads(pickle.dumps(s))
    assert type(r) is ember.UntypedStorage and r.tolist() == [1, 2, 3] and r.data_ptr() != s.data_ptr()
    d = copy.deepcopy(s)
    d[0] = 9
    assert s.tolist() == [1, 2, 3] and d.tolist() == [9, 2, 3]
    assert copy.copy(s) is s
    e = pickle.loads(pickle.dumps(ember.UntypedStorage(0)))
    assert e.nbytes() == 0


def test_untyped_deepcopy_memo_keeps_identity():
    s = ember.UntypedStorage([1, 2])
    a, b = copy.deepcopy([s, s])
    assert a is b and a is not s


def test_untyped_errors():
    check(lambda lib: lib.UntypedStorage(2, 3))
    check(lambda lib: lib.UntypedStorage([1, 2])["a"])
    check(lambda lib: lib.UntypedStorage(2).copy_([1, 2]))


# ---------------------------------------------------------------- typed storages
@pytest.mark.parametrize("cls", sorted(STORAGES))
def test_typed_basics(cls):
    name = STORAGES[cls]

    def fn(lib):
        S = getattr(lib, cls)
        s = S(3)
        v = S(values(name))
        return (s.size(), len(s), s.element_size(), s.nbytes(), s.dtype, v.tolist(), v[1], v[-1],
                lib.is_storage(v), S().size(), isinstance(v, S), isinstance(v, lib.TypedStorage),
                v.type().split(".", 1)[1])
    check(fn)
    assert ember.zeros(1, dtype=getattr(ember, name)).storage().type() == "ember." + cls


@pytest.mark.parametrize("cls", sorted(STORAGES))
def test_typed_fill_copy_setitem(cls):
    name = STORAGES[cls]

    def fn(lib):
        S = getattr(lib, cls)
        s = S(3)
        s.fill_(1)
        a = s.tolist()
        s.copy_(S(values(name)))
        b = s.tolist()
        s[0] = 0
        return a, b, s.tolist(), s.fill_(0) is s
    check(fn)
    check(lambda lib: getattr(lib, cls)(3).copy_(getattr(lib, cls)(2)))


@pytest.mark.parametrize("cls", sorted(STORAGES))
def test_typed_resize_and_clone(cls):
    name = STORAGES[cls]

    def fn(lib):
        s = getattr(lib, cls)(values(name))
        s.resize_(5)
        a = s.size(), s.nbytes(), s.tolist()[:3]
        s.resize_(2)
        c = s.clone()
        c[0] = c[1]
        return a, s.size(), s.tolist(), c.tolist(), c.dtype, c.data_ptr() != s.data_ptr()
    check(fn)


@pytest.mark.parametrize("cls", sorted(STORAGES))
def test_typed_from_buffer(cls):
    name = STORAGES[cls]
    if name == "bfloat16":
        little = struct.pack("<2f", 1.5, -2.0)
        raw_l = little[2:4] + little[6:8]  # the high halves of the float32s
        raw_b = raw_l[1::-1] + raw_l[3:1:-1]
    else:
        raw_l = struct.pack("<3" + STRUCT[name], *values(name))
        raw_b = struct.pack(">3" + STRUCT[name], *values(name))
    check(lambda lib: getattr(lib, cls).from_buffer(raw_l, "little").tolist())
    check(lambda lib: getattr(lib, cls).from_buffer(raw_b, "big").tolist())
    check(lambda lib: getattr(lib, cls).from_buffer(raw_l if sys.byteorder == "little" else raw_b, "native").tolist())
    size = ITEMSIZE[name]
    check(lambda lib: getattr(lib, cls).from_buffer(raw_l, "little", count=1, offset=size).tolist())
    check(lambda lib: getattr(lib, cls).from_buffer(raw_l, "little", count=0).tolist())
    if size > 1:
        check(lambda lib: getattr(lib, cls).from_buffer(raw_l + b"\x00", "little"))
    check(lambda lib: getattr(lib, cls).from_buffer(raw_l, "little", count=100))
    if size > 1:  # torch ignores byte_order for 1-byte types
        check(lambda lib: getattr(lib, cls).from_buffer(raw_l, "sideways"))


def test_typed_from_buffer_requires_byte_order():
    check(lambda lib: lib.FloatStorage.from_buffer(b"\x00\x00\x80\x3f"))


@pytest.mark.parametrize("cls", sorted(STORAGES))
def test_typed_from_file(cls, tmp_path):
    name = STORAGES[cls]
    p = tmp_path / f"{cls}.bin"
    raw = bytes(range(3 * ITEMSIZE[name])) if name != "bool" else bytes([1, 0, 1])
    p.write_bytes(raw)
    check(lambda lib: getattr(lib, cls).from_file(str(p), False, 3).tolist())
    check(lambda lib: getattr(lib, cls).from_file(str(p), shared=False, size=2).tolist())
    check(lambda lib: getattr(lib, cls).from_file(str(p), False, 3).dtype)

    s = ember.__dict__[cls].from_file(str(p), True, 3)
    s[0] = s[2]
    del s
    gc.collect()
    reread = ember.__dict__[cls].from_file(str(p), False, 3).tolist()
    assert reread[0] == reread[2]


@pytest.mark.parametrize("cls", sorted(STORAGES))
def test_typed_pickle_and_deepcopy(cls):
    name = STORAGES[cls]

    def fn(lib):
        s = getattr(lib, cls)(values(name))
        r = pickle.loads(pickle.dumps(s))
        d = copy.deepcopy(s)
        d[0] = d[1]
        return r.tolist(), r.dtype, isinstance(r, getattr(lib, cls)), d.tolist(), s.tolist(), d.dtype
    check(fn)


def test_typed_storage_generic_class():
    check(lambda lib: lib.TypedStorage(2, dtype=lib.int16).nbytes())
    check(lambda lib: lib.TypedStorage([1, 2], dtype=lib.float64).tolist())
    check(lambda lib: lib.TypedStorage(3).dtype)
    check(lambda lib: lib.TypedStorage(-1, dtype=lib.int16))


def test_typed_copy_across_dtypes_copies_bytes():
    # torch's TypedStorage.copy_ copies the untyped bytes
    check(lambda lib: lib.LongStorage(2).copy_(lib.DoubleStorage([1.5, 2.5])).tolist())


def test_typed_copy_across_dtypes_byte_size_mismatch():
    check(lambda lib: lib.LongStorage([1, 2]).copy_(lib.FloatStorage([3.5, 4])))


def test_typed_storage_slicing_raises():
    check(lambda lib: lib.LongStorage([1, 2])[0:1])


def test_typed_values_out_of_range():
    check(lambda lib: lib.ByteStorage([256, 2]))
    check(lambda lib: lib.CharStorage([-129]))


# ---------------------------------------------------------------- tensor.untyped_storage / storage
def test_untyped_storage_shared_between_views():
    x = ember.arange(12.0)
    s = x.untyped_storage()
    views = [x[1:], x.view(3, 4), x.view(3, 4).t(), x[::3], x[5]]
    for v in views:
        assert v.untyped_storage() is s
        assert v.untyped_storage().data_ptr() == s.data_ptr()
    assert x.untyped_storage() is s
    assert x.clone().untyped_storage() is not s
    assert s.nbytes() == 48


def test_untyped_storage_matches_torch():
    check(lambda lib: lib.arange(6, dtype=lib.int16)[2:].untyped_storage().tolist())
    check(lambda lib: lib.arange(6, dtype=lib.int16)[2:].untyped_storage().nbytes())
    check(lambda lib: lib.tensor([1.0, -2.0]).untyped_storage().tolist())
    check(lambda lib: lib.zeros(0).untyped_storage().nbytes())
    check(lambda lib: lib.zeros(3).expand(4, 3).untyped_storage().nbytes())


def test_untyped_storage_writes_through():
    x = ember.zeros(4, dtype=ember.int32)
    s = x.untyped_storage()
    s[4] = 7
    assert x.tolist() == [0, 7, 0, 0]
    s.fill_(1)
    assert x.tolist() == [16843009] * 4


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_tensor_storage(name):
    def fn(lib):
        x = lib.tensor(values(name), dtype=getattr(lib, name))
        s = x[1:].storage()
        return (s.size(), s.dtype, s.tolist(), s.element_size(), s.nbytes(), s.data_ptr() == x.data_ptr(),
                type(s).__name__)
    check(fn)


def test_tensor_storage_writes_through_and_untyped():
    x = ember.tensor([1.0, 2.0])
    s = x.storage()
    s[0] = 5
    assert x.tolist() == [5.0, 2.0]
    s.fill_(3)
    assert x.tolist() == [3.0, 3.0]
    assert s.untyped() is x.untyped_storage()
    assert isinstance(s, ember.FloatStorage)


# ---------------------------------------------------------------- set_
def test_set_storage_offset_size_stride():
    def fn(lib):
        x = lib.arange(6.0)
        s = x.untyped_storage()
        y = lib.empty(0).set_(s, 1, (2, 2), (1, 2))
        y[0, 0] = 50
        return y, y.stride(), y.storage_offset(), y.untyped_storage() is s, x
    check(fn)


def test_set_storage_forms():
    check(lambda lib: lib.empty(0).set_(lib.arange(6.0).untyped_storage()), strides=True)
    check(lambda lib: lib.empty(0).set_(lib.arange(6.0).untyped_storage(), 0, (2, 3)), strides=True)
    check(lambda lib: lib.empty(0).set_(lib.arange(6.0).storage(), 2, (2,), (2,)), strides=True)
    check(lambda lib: lib.empty(0, dtype=lib.int16).set_(lib.arange(6.0).untyped_storage()).shape)
    check(lambda lib: lib.empty(0).set_(lib.arange(6.0).untyped_storage(), 0, (2, 3), (3, 1)), strides=True)
    check(lambda lib: lib.empty(0).set_(lib.arange(6.0).untyped_storage(), 5, (), ()), strides=True)


def test_set_storage_grows_it():
    def fn(lib):
        x = lib.arange(6.0)
        y = lib.empty(0).set_(x.untyped_storage(), 4, (4,), (1,))
        return y.shape, y[:2], x.untyped_storage().nbytes(), y.untyped_storage() is x.untyped_storage()
    check(fn)


def test_set_typed_storage_of_other_dtype_raises():
    check(lambda lib: lib.empty(0).set_(lib.arange(6.0, dtype=lib.float64).storage()))


def test_set_other_tensor():
    def fn(lib):
        x = lib.arange(6.0).view(2, 3).t()
        y = lib.zeros(5)
        r = y.set_(x)
        y[0, 1] = 9
        return r is y, y, y.stride(), x, y.data_ptr() == x.data_ptr()
    check(fn)
    check(lambda lib: lib.empty(0, dtype=lib.int64).set_(lib.arange(6.0)))


def test_set_empty():
    def fn(lib):
        x = lib.arange(3.0)
        y = x.set_()
        return y is x, x.shape, x.stride(), x.untyped_storage().nbytes(), x.dtype
    check(fn)


def test_set_errors():
    check(lambda lib: lib.empty(0).set_(lib.UntypedStorage(8), -1, (1,), (1,)))
    check(lambda lib: lib.empty(0).set_(lib.UntypedStorage(8), 0, (2, 2), (1,)))
    check(lambda lib: lib.empty(0).set_([1, 2]))


# ---------------------------------------------------------------- pickling / deepcopy of tensors
@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "empty", "scalar"])
def test_pickle_tensor_round_trip(name, layout):
    def fn(lib):
        base = lib.tensor([values(name)] * 2, dtype=getattr(lib, name))
        x = {"contiguous": base, "transposed": base.t(), "sliced": base[:, 1:], "empty": base[:0],
             "scalar": base[1, 2]}[layout]
        r = pickle.loads(pickle.dumps(x))
        return r, r.stride(), r.storage_offset(), r.dtype, type(r).__name__
    check(fn)


def test_pickle_views_keep_sharing():
    x = ember.arange(6.0)
    a, b = x[1:4], x.view(2, 3).t()
    ra, rb, rx = pickle.loads(pickle.dumps([a, b, x]))
    assert rb.stride() == (1, 3) and ra.storage_offset() == 1
    assert ra.untyped_storage() is rx.untyped_storage() is rb.untyped_storage()
    rx[1] = 100
    assert ra.tolist() == [100.0, 2.0, 3.0]
    assert rb.tolist() == [[0.0, 3.0], [100.0, 4.0], [2.0, 5.0]]
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_pickle_separate_dumps_do_not_share():
    x = ember.arange(3.0)
    a = pickle.loads(pickle.dumps(x))
    b = pickle.loads(pickle.dumps(x))
    a[0] = 5
    assert b[0].item() == 0.0 and x[0].item() == 0.0


def test_pickle_storage_whole_kept():
    x = ember.arange(6.0)
    r = pickle.loads(pickle.dumps(x[4:]))
    assert r.tolist() == [4.0, 5.0] and r.storage_offset() == 4 and r.untyped_storage().nbytes() == 24


def test_deepcopy_tensor_and_view_still_share():
    def fn(lib):
        x = lib.arange(6.0)
        v = x[2:]
        cx, cv = copy.deepcopy([x, v])
        cx[3] = 50
        return cv, x, cv.storage_offset(), cx.data_ptr() != x.data_ptr(), \
            cv.untyped_storage().data_ptr() == cx.untyped_storage().data_ptr()
    check(fn)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_deepcopy_non_contiguous(name):
    def fn(lib):
        x = lib.tensor([values(name)] * 2, dtype=getattr(lib, name)).t()
        c = copy.deepcopy(x)
        return c, c.stride(), c.dtype, c.data_ptr() != x.data_ptr()
    check(fn)


def test_deepcopy_memo_same_tensor():
    x = ember.zeros(2)
    a, b = copy.deepcopy([x, x])
    assert a is b and a is not x
