"""Fuzzes ember.load on checkpoint files: torch's zip format (as ember.save and torch.save
write it), torch's legacy format and ember's earlier format, with bytes changed, inserted or
cut anywhere in the file, or inside the zip's data.pkl (re-wrapped in a valid archive, so the
unpickler and the tensor rebuilding see the damage rather than the zip's CRC check), and
raw fuzzer bytes. Every input must end in a result or a Python exception."""
import collections
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values, attempt, touch  # noqa: E402

import atheris  # noqa: E402

with atheris.instrument_imports(include=["ember"]):  # loaded lazily, after _common instrumented ember
    import ember  # noqa: E402
    import ember.serialization  # noqa: E402,F401
    from ember._serialization import _zip  # noqa: E402


def seeds():
    e = ember
    base = e.arange(12, dtype=e.float64)
    p = e.nn.Parameter(e.ones(3))
    objects = [
        {"w": base.view(3, 4).t(), "row": base.view(3, 4)[1], "i": base.to(e.int16)[::2], "b": base.to(e.bool)},
        collections.OrderedDict([("weight", p), ("bias", e.zeros(2, dtype=e.bfloat16)), ("n", e.tensor(3))]),
        [e.empty(0, 3), e.tensor(1.5, dtype=e.float16), base.untyped_storage(), e.Size([2, 3]), e.float32, 2**70],
    ]
    out = []
    for obj in objects:
        for legacy in (False, True):
            buffer = io.BytesIO()
            e.save(obj, buffer, _use_new_zipfile_serialization=not legacy)
            out.append(buffer.getvalue())
    return out


SEEDS = seeds()
ZIP_SEEDS = [s for s in SEEDS if s.startswith(b"PK")]


def mutate(v: Values, data: bytearray):
    for _ in range(v.small(1, 6)):
        if not data:
            break
        k = v.small(0, 4)
        pos = v.fdp.ConsumeIntInRange(0, len(data) - 1)
        if k <= 3:
            _common.splice(v, data, pos, k, 64)
        else:  # sizes, offsets, strides and numels are small ints in the pickle
            data[pos] = v.pick((0, 1, 2, 0x7F, 0x80, 0xFF, 0xFE))
    return bytes(data)


def with_pickle(v: Values) -> bytes:
    """A valid archive around a damaged data.pkl (and its storages as they were)."""
    import zipfile

    source = zipfile.ZipFile(io.BytesIO(v.pick(ZIP_SEEDS)))
    records = {info.filename.split("/", 1)[1]: source.read(info) for info in source.infolist()}
    data_pkl = mutate(v, bytearray(records["data.pkl"]))
    storages = []
    for name, raw in records.items():
        if name.startswith("data/"):
            s = ember.UntypedStorage(len(raw))
            if raw:
                s._copy_from_buffer(raw, 0)
            storages.append((name[5:], s))
    out = io.BytesIO()
    _zip.write_zip(out, "archive", data_pkl, storages)
    return out.getvalue()


def payload(v: Values) -> bytes:
    k = v.fdp.ConsumeIntInRange(0, 7)
    if k == 0:
        return v.fdp.ConsumeBytes(v.left())
    if k <= 2:
        return with_pickle(v)
    return mutate(v, bytearray(v.pick(SEEDS)))


def test_one_input(data: bytes):
    v = Values(data)
    raw = payload(v)
    ok, obj = attempt(ember.load, io.BytesIO(raw), weights_only=True)
    if ok:
        touch(obj)
    if raw.startswith(b"PK"):
        attempt(ember.serialization.get_unsafe_globals_in_checkpoint, io.BytesIO(raw))


if __name__ == "__main__":
    _common.main(test_one_input)
