"""Fuzzes ember.from_dlpack with hand-made DLPack capsules (tests/dlpack_capsules.py):
fuzzed ndim, shape, strides (null, negative, zero, huge), dtype code/bits/lanes, device,
byte offset, version, flags, legacy or versioned. The capsule tells the truth about its
memory whenever that fits in a small buffer (which the harness then allocates), so a
tensor ember makes must read the values numpy reads through the same layout; when it does
not fit, ember must refuse or make a tensor that is not touched. Either way the deleter
runs exactly once for a consumed capsule and never for a refused one."""
import ctypes
import gc
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _common  # noqa: E402
from _common import Values, attempt  # noqa: E402
from dlpack_capsules import READ_ONLY, Producer  # noqa: E402

import ember  # noqa: E402
import numpy as np  # noqa: E402

MAX_BYTES = 1 << 16  # the most the harness allocates for one capsule
# (code, bits) numpy reads too, for the value check
NUMPY = {(0, 8): np.int8, (0, 16): np.int16, (0, 32): np.int32, (0, 64): np.int64, (1, 8): np.uint8,
         (2, 16): np.float16, (2, 32): np.float32, (2, 64): np.float64, (6, 8): np.bool_}
DTYPES = list(NUMPY) + [(4, 16), (1, 16), (1, 32), (5, 64), (2, 128), (3, 64), (6, 1), (2, 8), (0, 0), (255, 255)]


def int64(x):
    """x as the int64 field a capsule holds (ctypes wraps silently)."""
    return (x + 2**63) % 2**64 - 2**63


def extent(shape, strides):
    """(lowest, highest) element index the layout reaches, or None without elements."""
    if any(s == 0 for s in shape):
        return None
    lo = sum((s - 1) * st for s, st in zip(shape, strides) if st < 0)
    hi = sum((s - 1) * st for s, st in zip(shape, strides) if st > 0)
    return lo, hi


def test_one_input(data: bytes):
    v = Values(data)
    ndim = v.small(0, 5) if v.small(0, 15) else v.pick((-1, 64, 1025, 2**31 - 1))
    # ndim within ember's bound gets that many sizes (past the sixth all 1); a larger or
    # negative one lies about a short shape array, which ember must refuse before reading
    dims = ndim if 0 <= ndim <= 64 else 3
    shape = [int64(v.small(0, 4) if v.small(0, 7) else v.int()) if i < 6 else 1 for i in range(dims)]
    code, bits = v.pick(DTYPES) if v.small(0, 7) else (v.small(0, 255), v.small(0, 255))
    lanes = 1 if v.small(0, 7) else v.small(0, 4)
    item = max(1, (bits + 7) // 8)
    if v.small(0, 3) == 0:
        strides = None
        layout_strides = [math.prod(shape[i + 1:]) for i in range(dims)]
    else:
        strides = [int64(v.small(-3, 5) if v.small(0, 7) else v.int()) for _ in range(dims)]
        layout_strides = strides
    byte_offset = item * v.small(0, 3) if v.small(0, 7) else v.pick((1, 3, 2**63, 2**64 - 8, 2**64 - 1))
    reach = extent(shape, layout_strides)
    span = 0 if reach is None else (reach[1] - reach[0] + 1) * item
    truthful = min(shape, default=0) >= 0 and 0 <= span and span + byte_offset <= MAX_BYTES
    # stride 0 makes a huge tensor of a few bytes (and (N, 0) a huge nest of empty lists):
    # read (or copied) only when it is small
    small = truthful and all(0 <= s <= 64 for s in shape) and math.prod(shape) <= 4096
    nbytes = span + byte_offset if truthful else MAX_BYTES
    # bool's bytes are 0 or 1, as the format requires (any other byte is the producer's lie)
    pattern = (lambda i: i % 3 == 1) if code == 6 else (lambda i: (i * 37 + 11) % 256)
    buf = (ctypes.c_uint8 * max(nbytes, 1))(*[pattern(i) for i in range(min(nbytes, 4096))])
    first = 0 if reach is None or not truthful else -reach[0] * item  # where element 0 sits when strides go backwards
    versioned = v.bool()
    flags = v.pick((0, 0, READ_ONLY, 2, 3, 2**63)) if small else 0  # only a small truthful capsule is copied
    p = Producer()
    cap = p.capsule(buf, shape, strides, code=code, bits=bits, lanes=lanes, byte_offset=byte_offset,
                    device=v.pick((1, 1, 1, 3, 2, 0, -1, 17)), versioned=versioned,
                    version=(v.pick((1, 1, 0, 2)), v.small(0, 3)), flags=flags,
                    data=ctypes.addressof(buf) + first if first else None,
                    ndim=ndim, null_shape=dims > 0 and v.small(0, 15) == 0)
    ok, t = attempt(ember.from_dlpack, cap)
    if not ok:
        assert not p.deleted, "a refused capsule's deleter ran"
        return
    assert not attempt(ember.from_dlpack, cap)[0], "a capsule was consumed twice"
    if small:
        attempt(repr, t)
        values = t.tolist()
        if (code, bits) in NUMPY and lanes == 1 and t.numel():
            raw = np.frombuffer(buf, dtype=np.uint8)[first + byte_offset:]
            base = raw[:len(raw) // item * item].view(NUMPY[code, bits])
            expected = np.lib.stride_tricks.as_strided(
                base, shape, [st * item if sz > 1 else 0 for sz, st in zip(shape, layout_strides)]).tolist()
            assert values == expected or np.array_equal(np.array(values), np.array(expected), equal_nan=True)
    del t
    gc.collect()
    assert len(p.deleted) == 1, f"deleter ran {len(p.deleted)} times"


if __name__ == "__main__":
    _common.main(test_one_input)
