"""Fuzzes unpickling of ember tensors and storages: pickles of real tensors (every dtype,
views with offsets and strides, 0-dim, empty, storages typed and untyped, protocols 0-5)
with bytes changed, inserted or cut by the fuzzer, and raw fuzzer bytes. The unpickler only
resolves the globals ember's own pickles name (an unpickler that resolves anything runs
anything), so what is fuzzed is ember's rebuilding code: storages of any length, offsets,
sizes, strides and dtypes that disagree with them. ember.load (weights_only) is fuzzed the
same way once it exists."""
import io
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values, attempt, touch  # noqa: E402

import ember  # noqa: E402

ALLOWED = {("ember._tensor", "_rebuild_tensor"), ("ember.storage", "_rebuild_untyped"),
           ("ember.storage", "_rebuild_typed"), ("_codecs", "encode"), ("collections", "OrderedDict"),
           ("ember._C", "Size"), ("ember", "Size"),
           ("__builtin__", "bytes"), ("builtins", "bytes"), ("__builtin__", "bytearray"), ("builtins", "bytearray")}
ALLOWED |= {("ember._C", n) for n in ember._C._dtype_names}


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in ALLOWED:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")
        return super().find_class(module, name)


def seeds():
    e = ember
    base = e.arange(24, dtype=e.float64)
    objects = [base.to(getattr(e, n)) for n in _common.DTYPE_NAMES]
    objects += [base.reshape(2, 3, 4).transpose(0, 2), base[3:17:2], base.reshape(4, 6)[1:, 2:],
                e.tensor(3.5), e.empty(0, 3), base.untyped_storage(), base.to(e.int16).storage(),
                e.FloatStorage([1.0, 2.0]), [base[:2], base[2:4]], {"w": base.view(4, 6)[:, :2]}]
    out = []
    for obj in objects:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            out.append(pickle.dumps(obj, protocol=protocol))
    return out


SEEDS = seeds()


def mutated(v: Values) -> bytes:
    if v.fdp.ConsumeIntInRange(0, 7) == 0:
        return v.fdp.ConsumeBytes(v.left())
    data = bytearray(v.pick(SEEDS))
    for _ in range(v.small(0, 6)):
        if not data:
            break
        k = v.small(0, 4)
        pos = v.fdp.ConsumeIntInRange(0, len(data) - 1)
        if k <= 1:
            data[pos] = v.fdp.ConsumeIntInRange(0, 255)
        elif k == 2:
            data[pos:pos] = v.fdp.ConsumeBytes(v.small(1, 8))
        elif k == 3:
            del data[pos:pos + v.small(1, 8)]
        else:  # a number the rebuild reads: offsets, sizes and strides are small ints in BININT1
            data[pos] = v.pick((0, 1, 2, 0x7F, 0x80, 0xFF, 0xFE))
    return bytes(data)


def test_one_input(data: bytes):
    v = Values(data)
    payload = mutated(v)
    load = getattr(ember, "load", None)
    if load is not None and v.bool():
        ok, obj = attempt(load, io.BytesIO(payload), weights_only=True)
    else:
        ok, obj = attempt(RestrictedUnpickler(io.BytesIO(payload)).load)
    if ok:
        touch(obj)


if __name__ == "__main__":
    _common.main(test_one_input)
