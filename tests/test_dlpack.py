"""DLPack exchange with numpy and torch: zero-copy both ways (shared memory proven by
writing through one side), every dtype the other side has, strides and offsets kept,
versioned and legacy capsules, read-only producers copied, the producer kept alive exactly
as long as needed, and clear errors for what ember cannot view."""
from __future__ import annotations

import ctypes
import gc
import sys
import tracemalloc

import numpy as np
import pytest

import ember
from dlpack_capsules import IS_COPIED, READ_ONLY, Producer, capsule_name, managed
from helpers import DTYPE_NAMES, torch

NUMPY_NAMES = [n for n in DTYPE_NAMES if n != "bfloat16"]  # numpy has no bfloat16


def sample(name, shape=(3, 4)):
    """ember and torch tensors of dtype name holding the same distinct values."""
    n = int(np.prod(shape))
    base = torch.arange(n, dtype=torch.float64).reshape(shape) % 7 - 2
    t = base.to(getattr(torch, name))
    return ember.tensor(t.tolist(), dtype=getattr(ember, name)).reshape(shape), t


LAYOUTS = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.transpose(0, 1) if hasattr(x, "transpose") else x.T,
    "offset": lambda x: x[1:, 1:],
    "step": lambda x: x[::2, 1::2],
    "zero_dim": lambda x: x[1, 2, ...],  # a 0-dim view (numpy: an array, not a scalar)
    "empty": lambda x: x[:, 2:2],
}


def strides_in_elements(a):
    return tuple(s // a.itemsize for s in a.strides)


# ---------------------------------------------------------------- numpy
@pytest.mark.parametrize("name", NUMPY_NAMES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_numpy_to_ember_shares_memory(name, layout):
    full = np.arange(24).reshape(4, 6).astype(name)
    a = LAYOUTS[layout](full)
    t = ember.from_dlpack(a)
    assert t.dtype == getattr(ember, name)
    assert tuple(t.shape) == a.shape
    assert t.tolist() == a.tolist()
    if a.size:
        assert t.stride() == strides_in_elements(a)
        assert t.data_ptr() == a.__array_interface__["data"][0]
        new = 0 if name == "bool" else 5
        t.fill_(new)
        assert (a == np.asarray(new, dtype=name)).all()  # written through to numpy


@pytest.mark.parametrize("name", NUMPY_NAMES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_ember_to_numpy_shares_memory(name, layout):
    full = ember.arange(24).reshape(4, 6).to(getattr(ember, name))
    t = LAYOUTS[layout](full)
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(name)
    assert a.shape == tuple(t.shape)
    assert a.tolist() == t.tolist()
    if t.numel():
        assert strides_in_elements(a) == t.stride()
        assert a.__array_interface__["data"][0] == t.data_ptr()
        new = False if name == "bool" else 9
        a[...] = new
        assert (t == new).all()  # written through to ember


def test_numpy_refuses_bfloat16():
    with pytest.raises(RuntimeError, match="Unsupported dtype"):  # numpy's own error, as for torch's bfloat16
        np.from_dlpack(ember.ones(2, dtype=ember.bfloat16))


def test_numpy_read_only_is_copied():
    a = np.arange(4.0)
    a.flags.writeable = False
    refs = sys.getrefcount(a)
    t = ember.from_dlpack(a)
    assert sys.getrefcount(a) == refs  # the copy holds nothing of the producer
    assert t.data_ptr() != a.__array_interface__["data"][0]
    t[0] = 100.0
    assert a[0] == 0.0  # never written through
    assert t.tolist() == [100.0, 1.0, 2.0, 3.0]
    with pytest.raises(BufferError, match="read-only"):
        ember.from_dlpack(a, copy=False)
    assert sys.getrefcount(a) == refs


def test_copy_true_copies():
    a = np.arange(4.0)
    t = ember.from_dlpack(a, copy=True)
    t[0] = 7.0
    assert a[0] == 0.0
    e = ember.arange(4.0)
    b = np.from_dlpack(e, copy=True)
    b[0] = 7.0
    assert e[0].item() == 0.0


def test_numpy_negative_strides_refused():
    a = np.arange(6.0)[::-1]
    with pytest.raises(RuntimeError, match="negative strides"):
        ember.from_dlpack(a)
    # a dimension of one element may have any stride
    t = ember.from_dlpack(np.arange(6.0).reshape(1, 6)[::-1])
    assert t.tolist() == [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]


def test_numpy_unsupported_dtype():
    with pytest.raises(RuntimeError, match="unsupported dtype"):
        ember.from_dlpack(np.ones(3, np.uint16))


# ---------------------------------------------------------------- torch
@pytest.mark.parametrize("direction", ["torch_to_ember", "ember_to_torch"])
@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_exchange_with_torch_shares_memory(direction, name, layout):
    ember_full, torch_full = sample(name, (4, 6))
    consumer = {"torch_to_ember": ember, "ember_to_torch": torch}[direction]
    src = LAYOUTS[layout](torch_full if consumer is ember else ember_full)
    t = consumer.from_dlpack(src)
    assert t.dtype == getattr(consumer, name)
    assert tuple(t.shape) == tuple(src.shape)
    assert t.tolist() == src.tolist()
    if src.numel():
        assert t.stride() == src.stride()
        assert t.data_ptr() == src.data_ptr()
        t.fill_(1)
        assert (src == 1).all()


def test_capsules_both_ways():
    e = ember.arange(6.0).reshape(2, 3)
    legacy = ember.utils.dlpack.to_dlpack(e)
    assert capsule_name(legacy) == "dltensor"
    t = torch.utils.dlpack.from_dlpack(legacy)
    assert capsule_name(legacy) == "used_dltensor"
    assert t.tolist() == e.tolist()
    versioned = e.__dlpack__(max_version=(1, 0))
    assert capsule_name(versioned) == "dltensor_versioned"
    m = managed(versioned)
    assert (m.version.major, m.flags) == (1, 0)
    assert torch.from_dlpack(versioned).data_ptr() == e.data_ptr()
    assert capsule_name(versioned) == "used_dltensor_versioned"
    assert capsule_name(e.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(e.__dlpack__(max_version=(2, 0))) == "dltensor_versioned"
    back = ember.from_dlpack(torch.utils.dlpack.to_dlpack(t))  # a torch legacy capsule
    assert back.data_ptr() == e.data_ptr()
    assert managed(e.__dlpack__(max_version=(1, 0), copy=True)).flags == IS_COPIED


def test_capsule_consumed_once():
    cap = ember.ones(2).__dlpack__()
    ember.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        ember.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        torch.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="invalid capsule"):
        ember.from_dlpack(5)
    with pytest.raises(AssertionError):
        ember.from_dlpack(ember.ones(2).__dlpack__(), copy=True)


# ---------------------------------------------------------------- export rules, as torch's
def test_export_errors_match_torch():
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
            x.__dlpack__()
        y = lib.ones(2)
        with pytest.raises(AssertionError, match="stream should be None on cpu"):
            y.__dlpack__(stream=1)
        with pytest.raises(TypeError, match="stream must be"):
            y.__dlpack__(stream="x")
        assert capsule_name(y.__dlpack__(stream=-1)) == "dltensor"
        assert capsule_name(y.__dlpack__(dl_device=(1, 0))) == "dltensor"
    with pytest.raises(BufferError, match="device"):
        ember.ones(2).__dlpack__(dl_device=(2, 0))
    assert ember.ones(2).__dlpack_device__() == torch.ones(2).__dlpack_device__() == (1, 0)
    assert ember.ones(2).__dlpack_device__()[0] is ember.utils.dlpack.DLDeviceType.kDLCPU
    assert [(m.name, m.value) for m in ember.utils.dlpack.DLDeviceType] == \
        [(m.name, m.value) for m in torch.utils.dlpack.DLDeviceType]


def test_exported_storage_cannot_move():
    t = ember.zeros(4)
    a = np.from_dlpack(t)
    with pytest.raises(RuntimeError, match="not resizable"):
        t.resize_(1000)
    t[0] = 1.0
    assert a[0] == 1.0


def test_wrong_device_refused():
    p = Producer()
    buf = (ctypes.c_double * 2)()
    cuda = p.capsule(buf, [2], device=2)

    class OnCuda:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kwargs):
            return cuda

    with pytest.raises(BufferError, match="device type 2"):
        ember.from_dlpack(OnCuda())
    assert capsule_name(cuda) == "dltensor_versioned" and p.alive == 1  # left to its producer
    with pytest.raises(ValueError, match="device"):
        ember.from_dlpack(np.ones(2), device="cuda")
    assert ember.from_dlpack(np.ones(2), device="cpu").tolist() == [1.0, 1.0]


def test_old_producer_without_keywords():
    class Old:  # a DLPack 0.x producer: __dlpack__ takes only stream
        def __init__(self, t):
            self.t = t

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

    src = torch.arange(3.0)
    t = ember.from_dlpack(Old(src))
    assert t.data_ptr() == src.data_ptr()
    c = ember.from_dlpack(Old(src), copy=True)
    assert c.data_ptr() != src.data_ptr() and c.tolist() == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------- lifetime
def live():
    gc.collect()
    return ember._C._live_objects()


def test_producer_outlives_its_owner():
    a = np.arange(1000.0)
    refs = sys.getrefcount(a)
    t = ember.from_dlpack(a)
    assert sys.getrefcount(a) > refs  # numpy's manager context holds the array
    del t
    gc.collect()
    assert sys.getrefcount(a) == refs  # ... exactly as long as ember needs it

    t = ember.from_dlpack(np.arange(1000.0))  # the only reference is ember's now
    gc.collect()
    assert t[999].item() == 999.0
    src = torch.arange(1000.0)
    t2 = ember.from_dlpack(src)
    del src
    gc.collect()
    assert t2.sum().item() == 499500.0


def test_ember_storage_outlives_the_tensor():
    before = live()
    e = ember.arange(1000.0)
    tt = torch.from_dlpack(e)
    a = np.from_dlpack(e[500:])
    del e
    assert live()[1] == before[1] + 1  # the storage lives on in the capsules' contexts
    assert tt.sum().item() == 499500.0 and a[0] == 500.0
    del tt
    assert live()[1] == before[1] + 1
    del a
    assert live() == before


def test_unused_capsule_releases():
    before = live()
    cap = ember.arange(10).__dlpack__(max_version=(1, 0))
    cap2 = ember.arange(10).__dlpack__()
    assert live()[1] == before[1] + 2
    del cap, cap2
    assert live() == before


def test_no_leak_over_round_trips():
    def work():
        e = ember.arange(64.0).reshape(8, 8)[1:, ::2]
        ember.from_dlpack(torch.from_dlpack(e))
        ember.from_dlpack(np.from_dlpack(e))
        torch.from_dlpack(ember.from_dlpack(np.arange(5.0)))
        e.__dlpack__(max_version=(1, 0))
        ember.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(3)))

    for _ in range(20):
        work()
    before = live()
    tracemalloc.start()
    m0 = tracemalloc.get_traced_memory()[0]
    for _ in range(2000):
        work()
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - m0
    tracemalloc.stop()
    assert live() == before
    assert grown < 64 * 1024, grown


# ---------------------------------------------------------------- hand-made capsules
def test_deleter_runs_once_when_the_tensor_dies():
    p = Producer()
    buf = (ctypes.c_double * 6)(*range(6))
    for versioned in (True, False):
        cap = p.capsule(buf, [2, 3], [1, 2], versioned=versioned)
        t = ember.from_dlpack(cap)
        assert t.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
        assert p.alive == 1 and not p.deleted
        del cap
        gc.collect()
        assert p.alive == 1  # the capsule is used: ember calls the deleter, not the capsule
        del t
        assert p.alive == 0 and len(p.deleted) == 1
        p.deleted.clear()


def test_hand_made_layouts():
    p = Producer()
    buf = (ctypes.c_float * 12)(*range(12))
    t = ember.from_dlpack(p.capsule(buf, [3, 4], None, bits=32))  # null strides: row-major
    assert t.stride() == (4, 1) and t[2, 3].item() == 11.0
    t = ember.from_dlpack(p.capsule(buf, [2, 2], [4, 2], bits=32, byte_offset=4))
    assert t.tolist() == [[1.0, 3.0], [5.0, 7.0]]
    t = ember.from_dlpack(p.capsule(buf, [], None, bits=32, byte_offset=8))
    assert t.shape == () and t.item() == 2.0
    t = ember.from_dlpack(p.capsule(None, [0, 5], [-3, 7], bits=32))  # empty: null data, any strides
    assert t.shape == (0, 5)
    t = ember.from_dlpack(p.capsule(buf, [2], None, bits=32, device=3))  # pinned host memory is CPU memory
    assert t.tolist() == [0.0, 1.0]
    del t
    gc.collect()
    assert p.alive == 0


def test_read_only_flag_copies_and_releases():
    p = Producer()
    buf = (ctypes.c_int32 * 3)(1, 2, 3)
    t = ember.from_dlpack(p.capsule(buf, [3], code=0, bits=32, flags=READ_ONLY))
    assert p.alive == 0  # copied, and the producer released at once
    t[0] = 10
    assert list(buf) == [1, 2, 3]
    assert t.tolist() == [10, 2, 3]


@pytest.mark.parametrize("kwargs, match", [
    (dict(code=2, bits=128), "unsupported dtype"),
    (dict(code=5, bits=32), "unsupported dtype"),  # complex32
    (dict(code=2, bits=64, lanes=2), "lanes"),
    (dict(ndim=-1), "ndim"),
    (dict(ndim=100000), "ndim"),
    (dict(null_shape=True), "no shape"),
    (dict(data=0), "null data"),
    (dict(byte_offset=3), "aligned"),
    (dict(byte_offset=2**64 - 8), "overflow"),
    (dict(strides=[2**62, 1]), "overflow"),
])
def test_bad_capsules_are_refused(kwargs, match):
    p = Producer()
    buf = (ctypes.c_double * 6)()
    args = dict(shape=[2, 3], strides=None)
    args.update(kwargs)
    cap = p.capsule(buf, args.pop("shape"), args.pop("strides"), **args)
    with pytest.raises(RuntimeError, match=match):
        ember.from_dlpack(cap)
    assert capsule_name(cap) in ("dltensor", "dltensor_versioned")  # still the producer's to release


def test_bad_sizes_are_refused():
    p = Producer()
    buf = (ctypes.c_double * 6)()
    with pytest.raises(RuntimeError):
        ember.from_dlpack(p.capsule(buf, [-1, 3]))
    with pytest.raises(RuntimeError):
        ember.from_dlpack(p.capsule(buf, [2**40, 2**40]))


def test_device_refused():
    p = Producer()
    for device in (2, 0, -1, 17):
        with pytest.raises(BufferError, match="device type"):
            ember.from_dlpack(p.capsule((ctypes.c_double * 1)(), [1], device=device))


def test_newer_major_version_refused():
    p = Producer()
    buf = (ctypes.c_double * 6)()
    cap = p.capsule(buf, [6], version=(2, 0))
    with pytest.raises(BufferError, match="version 2.0"):
        ember.from_dlpack(cap)
    assert capsule_name(cap) == "dltensor_versioned"


def test_ember_to_ember():
    e = ember.arange(12.0).reshape(3, 4)[:, 1:]
    t = ember.from_dlpack(e)
    assert t.data_ptr() == e.data_ptr() and t.stride() == e.stride()
    t[0, 0] = -1.0
    assert e[0, 0].item() == -1.0
    del e
    gc.collect()
    assert t.tolist()[2] == [9.0, 10.0, 11.0]


def test_capsule_dies_while_an_exception_propagates():
    before = live()

    def fail():
        cap = ember.ones(3).__dlpack__()  # noqa: F841 - freed while ValueError unwinds
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fail()
    assert live() == before
