"""Fuzzes indexing and index assignment with arbitrary keys: ints (huge, negative), slices
with any bounds and steps, None, Ellipsis, bools, lists, nested lists, int/bool/float
tensors of any shape, numpy arrays, and tuples of all of these, on tensors of any layout.
Where numpy also accepts the key (a plain step > 0 key), the values read and the tensor
after assignment must equal numpy's."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values, attempt, run_guarded  # noqa: E402

import ember  # noqa: E402
import numpy as np  # noqa: E402


def key_item(v: Values, t):
    k = v.small(0, 11)
    if k <= 2:
        return v.small(-4, 4) if k else v.int()
    if k == 3:
        return slice(v.int() if v.bool() else None, v.int() if v.bool() else None,
                     v.pick((None, 1, 2, 3, -1, 0, 2**63 - 1, v.int())) if v.bool() else None)
    if k == 4:
        return slice(v.small(-3, 3) if v.bool() else None, v.small(-3, 3) if v.bool() else None)
    if k == 5:
        return v.pick((None, Ellipsis, True, False))
    if k == 6:
        return [v.small(-3, 3) for _ in range(v.small(0, 4))]
    if k == 7:
        n = v.small(0, 4)
        idx = ember.tensor([v.small(-3, 3) for _ in range(n)], dtype=v.pick((ember.int64, ember.int32, ember.uint8,
                                                                              ember.int8, ember.int16)))
        if n == 4 and v.bool():
            idx = idx.reshape(2, 2)
        return idx
    if k == 8:
        # a boolean mask over the leading dims (or a wrong-shaped one)
        shape = list(t.shape[:v.small(0, max(t.dim(), 0))]) if v.bool() else v.sizes(2, hostile=False)
        n = int(np.prod(shape)) if shape else 1
        return ember.tensor([v.bool() for _ in range(n)], dtype=ember.bool).reshape(shape)
    if k == 9:
        return v.pick((1.5, "a", object(), [[0, 1], [1, 0]], [True, False], [], (), ember.tensor(1.0),
                       ember.tensor(2), np.int64(1), np.array([0, 1]), np.bool_(True), [slice(None), 0], [None]))
    if k == 10:
        return ember.tensor(v.small(-3, 3))
    return v.value(1)


def key_for(v: Values, t):
    n = v.small(0, 5)
    items = [key_item(v, t) for _ in range(n)]
    return items[0] if n == 1 and v.bool() else tuple(items)


def numpy_ok(key):
    """Keys numpy reads the same way as torch: ints, slices with positive steps, None,
    Ellipsis and integer lists/tensors (one advanced index, so no transposition rules)."""
    parts = key if isinstance(key, tuple) else (key,)
    advanced = 0
    for p in parts:
        if isinstance(p, bool):
            return False
        if isinstance(p, int) or p is None or p is Ellipsis:
            continue
        if isinstance(p, slice):
            if p.step is not None and p.step <= 0:
                return False
            if any(x is not None and abs(x) > 2**62 for x in (p.start, p.stop, p.step)):
                return False
            continue
        if isinstance(p, ember.Tensor) and p.dtype in (ember.int64, ember.int32) and p.dim() > 0:
            advanced += 1
            continue
        return False
    # numpy counts ints as advanced indices when arrays are present (they move the result's
    # dims differently from torch's rules), so a key mixing them has no numpy reference
    return advanced == 0 or (advanced == 1 and not any(isinstance(p, int) for p in parts))


def as_numpy(key):
    parts = key if isinstance(key, tuple) else (key,)
    out = tuple(p.numpy() if isinstance(p, ember.Tensor) else p for p in parts)
    return out if isinstance(key, tuple) else out[0]


def test_one_input(data: bytes):
    v = Values(data)
    t = v.tensor(4)
    if t.dtype in (ember.bfloat16,):
        t = t.float()
    base = t.clone()
    key = key_for(v, t)
    check = numpy_ok(key)
    if v.bool():
        got = run_guarded(t.__getitem__, key)
        if got is not None and check:
            try:
                ref = base.numpy()[as_numpy(key)]
            except Exception:  # noqa: BLE001 - numpy refuses: no reference
                return
            got_np = got.numpy() if isinstance(got, ember.Tensor) else np.asarray(got)
            assert got_np.shape == np.shape(ref) and np.array_equal(got_np, ref, equal_nan=True), (key, got_np, ref)
        if got is not None and v.bool():
            run_guarded(got.__setitem__, key_for(v, got), v.pick((0, 1.5, True)))
    else:
        k = v.small(0, 3)
        value = (v.number(), v.tensor(2), [v.small(-2, 2)] * v.small(0, 3), ember.tensor(v.float()))[k]
        if t.is_contiguous() and attempt(t.__setitem__, key, value)[0] and check and \
                isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 100 and \
                value == int(value) and t.dtype not in (ember.bool, ember.uint8):
            ref = base.numpy().copy()
            try:
                ref[as_numpy(key)] = value
            except Exception:  # noqa: BLE001 - numpy refuses: no reference
                return
            assert np.array_equal(t.numpy(), ref, equal_nan=True), (key, value, t.numpy(), ref)
        run_guarded(t.__setitem__, key, value)  # again: a key that was refused must stay refused


if __name__ == "__main__":
    _common.main(test_one_input)
