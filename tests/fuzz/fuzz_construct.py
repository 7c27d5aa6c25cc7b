"""Fuzzes tensor construction: ember.tensor / as_tensor on nested data, ember.Tensor(...)
and the legacy typed classes with sizes or data, storages' from_buffer, and from_numpy
on arrays of odd strides, dtypes and byte orders. A tensor made from data must hold that
data (checked against numpy's conversion of the same list where both succeed)."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values, run_guarded  # noqa: E402

import ember  # noqa: E402
import numpy as np  # noqa: E402

LEGACY = [ember.FloatTensor, ember.DoubleTensor, ember.HalfTensor, ember.BFloat16Tensor, ember.LongTensor,
          ember.IntTensor, ember.ShortTensor, ember.CharTensor, ember.ByteTensor, ember.BoolTensor, ember.Tensor]
STORAGES = [ember.UntypedStorage, ember.FloatStorage, ember.DoubleStorage, ember.LongStorage, ember.ByteStorage,
            ember.BoolStorage, ember.HalfStorage, ember.IntStorage]
NP_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_,
             np.uint16, np.uint32, np.uint64, np.complex64, ">f4", ">i8", "<f8", np.object_, "U3", "V4"]


def nested(v: Values, depth=0):
    """Nested lists/tuples of numbers, sometimes ragged, sometimes holding tensors or arrays."""
    k = v.small(0, 9)
    if depth < 3 and k <= 3:
        n = v.small(0, 3)
        items = [nested(v, depth + 1) for _ in range(n)]
        return items if v.bool() else tuple(items)
    if k == 4:
        return v.tensor(2)
    if k == 5:
        return np.float32(v.float()) if v.bool() else np.int64(v.small(-3, 3))
    return v.number()


def data_check(data, t):
    """A tensor made from plain nested numbers holds what numpy reads from them."""
    try:
        ref = np.array(data, dtype=np.float64)
    except Exception:  # noqa: BLE001 - ragged, tensors inside, ...: no reference
        return
    if ref.dtype != np.float64 or t.dtype not in (ember.float64,) or list(t.shape) != list(ref.shape):
        return
    got = t.numpy()
    assert np.array_equal(got, ref, equal_nan=True), (data, got, ref)


def construct(v: Values):
    k = v.small(0, 7)
    if k == 0:
        data = nested(v)
        dt = v.dtype() if v.bool() else None
        t = run_guarded(ember.tensor, data, dtype=dt)
        if t is not None and dt == ember.float64:
            data_check(data, t)
    elif k == 1:
        cls = v.pick(LEGACY)
        if v.bool():
            args = v.sizes(4)
            if all(isinstance(a, int) and 0 <= a < 2**62 for a in args) and math.prod(args) > 2**24:
                return
            run_guarded(cls, *args)
        else:
            run_guarded(cls, nested(v))
    elif k == 2:
        cls = v.pick(STORAGES)
        buf = bytes(v.small(0, 40))
        kwargs = {}
        if v.bool():
            kwargs["byte_order"] = v.pick(("little", "big", "native", "middle"))
        if v.bool():
            kwargs["count"] = v.int()
        if v.bool():
            kwargs["offset"] = v.int()
        s = run_guarded(cls.from_buffer, buf if v.bool() else bytearray(buf), **kwargs)
        if s is not None:
            run_guarded(s.tolist)
            if v.bool():
                run_guarded(s.resize_, v.small(0, 64))
    elif k == 3:
        dt = v.pick(NP_DTYPES)
        n = v.small(0, 24)
        a = run_guarded(np.arange(n).astype, dt)
        if a is None:
            return
        shape = v.sizes(3, hostile=False)
        if math.prod(shape) == a.size:
            a = a.reshape(shape)
        if a.ndim and v.bool():
            a = a[::v.pick((1, 2, -1, -2))]
        if a.ndim >= 2 and v.bool():
            a = a.T
        if v.bool():
            a = np.lib.stride_tricks.as_strided(a, shape=a.shape, strides=tuple(0 for _ in a.shape))
        t = run_guarded(ember.from_numpy, a)
        if t is not None:
            assert t.tolist() == a.tolist() or a.dtype.kind == "f", (a, t)
            if v.bool():
                del a
                run_guarded(t.sum)
    elif k == 4:
        cls = v.pick(LEGACY)
        storage = ember.UntypedStorage(v.small(0, 32))
        run_guarded(cls, storage if v.bool() else ember.FloatStorage(v.small(0, 8)))
    elif k == 5:
        t = ember.tensor([1.0, 2.0, 3.0])
        meth = v.pick(("new_tensor", "new_empty", "new_zeros", "new_ones", "new_full"))
        args = [nested(v) if meth == "new_tensor" else v.sizes(3)]
        if meth == "new_full":
            args.append(v.number())
        if meth != "new_tensor" and isinstance(args[0], list) and \
                all(isinstance(a, int) and 0 <= a < 2**62 for a in args[0]) and math.prod(args[0]) > 2**24:
            return
        run_guarded(getattr(t, meth), *args)
    elif k == 6:
        fn = v.pick((ember.empty, ember.zeros, ember.ones, ember.empty_strided, ember.full, ember.as_tensor))
        sizes = v.sizes(4)
        if all(isinstance(a, int) and 0 <= a < 2**62 for a in sizes) and math.prod(sizes) > 2**24:
            return
        if fn is ember.empty_strided:
            run_guarded(fn, sizes, v.sizes(4))
        elif fn is ember.full:
            run_guarded(fn, sizes, v.number(), dtype=v.dtype() if v.bool() else None)
        elif fn is ember.as_tensor:
            run_guarded(fn, nested(v), dtype=v.dtype() if v.bool() else None)
        else:
            run_guarded(fn, *sizes, dtype=v.dtype())
    else:
        run_guarded(ember.tensor, v.value())


def test_one_input(data: bytes):
    construct(Values(data))


if __name__ == "__main__":
    _common.main(test_one_input)
