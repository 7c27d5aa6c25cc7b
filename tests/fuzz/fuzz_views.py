"""Fuzzes the view ops with arbitrary sizes, strides, offsets and dims: view, reshape,
as_strided, expand, permute, unfold, narrow, select, transpose, squeeze/unsqueeze,
flatten/unflatten, movedim, diagonal, t, split/chunk, and chains of them. A view that
succeeds must read what numpy's as_strided reads from the same bytes at its sizes, strides
and offset, and must never reach outside its storage."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values, attempt  # noqa: E402

import ember  # noqa: E402
import numpy as np  # noqa: E402


def dims(v: Values, n):
    return [v.small(-n - 1, n) if v.fdp.ConsumeIntInRange(0, 7) else v.int() for _ in range(n)]


def one_view(v: Values, t):
    op = v.small(0, 17)
    d = v.small(-t.dim() - 1, t.dim()) if v.fdp.ConsumeIntInRange(0, 7) else v.int()
    if op == 0:
        return attempt(t.view, *v.sizes(4))
    if op == 1:
        return attempt(t.reshape, v.sizes(4))
    if op == 2:
        sizes = v.sizes(4)
        strides = [v.small(-1, 4) if v.fdp.ConsumeIntInRange(0, 5) else v.int() for _ in range(
            len(sizes) if v.fdp.ConsumeIntInRange(0, 5) else v.small(0, 4))]
        return attempt(t.as_strided, sizes, strides, *( [v.small(-1, 8) if v.bool() else v.int()] if v.bool() else []))
    if op == 3:
        return attempt(t.expand, *v.sizes(5))
    if op == 4:
        return attempt(t.permute, *dims(v, t.dim() if v.fdp.ConsumeIntInRange(0, 5) else v.small(0, 5)))
    if op == 5:
        return attempt(t.unfold, d, v.small(-1, 4) if v.bool() else v.int(), v.small(-1, 3) if v.bool() else v.int())
    if op == 6:
        return attempt(t.narrow, d, v.small(-4, 4) if v.bool() else v.int(), v.small(-1, 4) if v.bool() else v.int())
    if op == 7:
        return attempt(t.select, d, v.small(-4, 4) if v.bool() else v.int())
    if op == 8:
        return attempt(t.transpose, d, v.small(-t.dim() - 1, t.dim()))
    if op == 9:
        return attempt(t.squeeze, *([d] if v.bool() else []))
    if op == 10:
        return attempt(t.unsqueeze, d)
    if op == 11:
        return attempt(t.flatten, d, v.small(-t.dim() - 1, t.dim()))
    if op == 12:
        return attempt(t.unflatten, d, v.sizes(3))
    if op == 13:
        return attempt(t.movedim, d, v.small(-t.dim() - 1, t.dim()))
    if op == 14:
        return attempt(t.diagonal, v.small(-3, 3) if v.bool() else v.int(), d, v.small(-t.dim() - 1, t.dim()))
    if op == 15:
        return attempt(t.t)
    if op == 16:
        split = v.bool()
        size = v.small(-1, 4) if v.bool() else v.int()
        if t.dim() and -t.dim() <= d < t.dim() and size > 0 and \
                (t.shape[d] // size if split else min(size, t.shape[d])) > 1 << 16:
            return False, None  # a view per piece, as torch: a 2**31 dim in 3s is 700M tensors
        ok, parts = attempt(t.split if split else t.chunk, size, d)
        return (ok, parts[v.small(0, len(parts) - 1)] if ok and parts else None)
    return attempt(t.view, v.dtype())


def check_view(base_bytes, t):
    """t's values are the elements numpy's as_strided reads at t's layout."""
    if t.numel() == 0 or t.numel() > 1 << 16 or t.dtype == ember.bfloat16:
        return
    itemsize = t.element_size()
    need = t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1
    assert need * itemsize <= len(base_bytes), ("a view reaches past its storage", t.shape, t.stride(),
                                                 t.storage_offset(), len(base_bytes))
    npdt = {ember.float64: np.float64, ember.float32: np.float32, ember.float16: np.float16,
            ember.int64: np.int64, ember.int32: np.int32, ember.int16: np.int16, ember.int8: np.int8,
            ember.uint8: np.uint8, ember.bool: np.bool_}[t.dtype]
    if any(abs(s) * itemsize >= 2**62 for s in t.stride()):
        return  # numpy's strides are C longs in bytes
    flat = np.frombuffer(base_bytes, dtype=npdt, count=len(base_bytes) // itemsize)
    ref = np.lib.stride_tricks.as_strided(flat[t.storage_offset():], shape=tuple(t.shape),
                                          strides=tuple(s * itemsize for s in t.stride()))
    got = t.numpy()
    assert np.array_equal(got, ref, equal_nan=True), (t.shape, t.stride(), t.storage_offset(), got, ref)


def test_one_input(data: bytes):
    v = Values(data)
    t = v.tensor(4)
    for _ in range(v.small(1, 4)):
        ok, out = one_view(v, t)
        if not ok or not isinstance(out, ember.Tensor):
            break
        t = out
        if t.untyped_storage().nbytes() < 1 << 16:
            check_view(bytes(t.untyped_storage()), t)
        if t.numel() > 1 << 20:  # an expanded view may be huge: don't run through it
            continue
        if v.bool():
            attempt(t.contiguous)
            attempt(t.sum)
        if v.bool():
            attempt(t.fill_, 1)


if __name__ == "__main__":
    _common.main(test_one_input)
