"""Fuzzes copy_ (and the conversions built on it: to, type_as, clone, contiguous) across
every pair of dtypes, layouts and broadcasts, including source and destination that are
views of one storage overlapping partly, wholly or not at all. A copy that succeeds must
leave in the destination the source's values as they were before the copy, converted."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values, attempt  # noqa: E402

import ember  # noqa: E402
import numpy as np  # noqa: E402

NP = {ember.float64: np.float64, ember.float32: np.float32, ember.float16: np.float16, ember.int64: np.int64,
      ember.int32: np.int32, ember.int16: np.int16, ember.int8: np.int8, ember.uint8: np.uint8, ember.bool: np.bool_}


def view_of(v: Values, base):
    """A view of base's storage: a slice, a strided as_strided window, or base itself."""
    k = v.small(0, 3)
    n = base.numel()
    if k == 0 or n == 0:
        return base
    if k == 1:
        start = v.small(0, n - 1)
        return base.view(-1)[start:start + v.small(0, n - start)]
    size = [v.small(0, 3) for _ in range(v.small(1, 2))]
    stride = [v.small(0, 3) for _ in size]
    offset = v.small(0, 4)
    if offset + sum((s - 1) * st for s, st in zip(size, stride)) >= n:
        return base
    return base.as_strided(size, stride, offset)


def self_overlapping(t):
    """More than one element of t at one address: writes to it have no defined result."""
    addresses = {sum(i * s for i, s in zip(idx, t.stride())) for idx in np.ndindex(*t.shape)}
    return len(addresses) < t.numel()


def reference(src_np, dst):
    """What dst holds after copy_(src): src broadcast to dst's shape, converted."""
    if dst.dtype not in NP or src_np is None or self_overlapping(dst):
        return None
    if src_np.dtype.kind == "f" and dst.dtype in (ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64):
        if not np.all(np.isfinite(src_np)) or np.any(src_np < 0) and dst.dtype == ember.uint8:
            return None  # C's float->int conversion of these is undefined; torch's result is platform-specific
    try:
        return np.broadcast_to(src_np, tuple(dst.shape)).astype(NP[dst.dtype])
    except ValueError:
        return None


def test_one_input(data: bytes):
    v = Values(data)
    if v.bool():
        base = ember.arange(12, dtype=ember.float64).to(v.dtype())
        dst, src = view_of(v, base), view_of(v, base)
        if v.bool():
            src = src.to(v.dtype())  # a different dtype: no overlap left
    else:
        dst, src = v.tensor(3), v.tensor(3)
    src_np = src.numpy().copy() if src.dtype in NP else None
    op = v.small(0, 5)
    if op <= 2:
        ok, _ = attempt(dst.copy_, src, non_blocking=v.bool()) if op == 1 else attempt(dst.copy_, src)
        if ok:
            ref = reference(src_np, dst)
            if ref is not None:
                assert np.array_equal(dst.numpy(), ref, equal_nan=True), (src_np, dst.numpy(), ref)
    elif op == 3:
        ok, out = attempt(src.to, v.dtype(), copy=v.bool())
        if ok:
            ref = reference(src_np, out)
            if ref is not None:
                assert np.array_equal(out.numpy(), ref, equal_nan=True), (src_np, out.numpy(), ref)
    elif op == 4:
        attempt(dst.type_as, src)
        attempt(src.contiguous)
    else:
        ok, out = attempt(src.clone, memory_format=v.pick((ember.preserve_format, ember.contiguous_format)))
        if ok and src_np is not None:
            assert np.array_equal(out.numpy(), src_np, equal_nan=True)


if __name__ == "__main__":
    _common.main(test_one_input)
