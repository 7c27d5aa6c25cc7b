"""Fuzzes ember.utils.safetensors' reader: files of every dtype, 0-dim and empty tensors,
metadata, with bytes changed, inserted or cut, numbers in the header replaced by hostile
ones, or raw fuzzer bytes, handed to load(bytes) and to safe_open on a file (the mapped
path). Every input must end in tensors or a SafetensorError; what loads is read in full,
which under ASan catches a tensor viewing bytes outside the file."""
import atexit
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values  # noqa: E402

import ember  # noqa: E402
from ember.utils import safetensors as es  # noqa: E402


def seeds():
    e = ember
    base = e.arange(12, dtype=e.float64)
    files = [{n: base.to(getattr(e, n)).reshape(3, 4) for n in _common.DTYPE_NAMES},
             {"z": e.tensor(2.5), "e": e.zeros(0, 3), "b": e.ones(2, dtype=e.bool)},
             {"w": base.to(e.float32), "h": base[:3].to(e.bfloat16)}]
    out = [es.save(f) for f in files]
    out.append(es.save(files[2], metadata={"format": "pt", "step": "7"}))
    return out


SEEDS = seeds()
FOLDER = tempfile.mkdtemp(prefix="fuzz_safetensors_")
atexit.register(shutil.rmtree, FOLDER, True)
PATH = os.path.join(FOLDER, "f.safetensors")
NUMBER = re.compile(rb"\d+")
HOSTILE = (b"0", b"1", b"3", b"4", b"7", b"8", b"-1", b"1.0", b"255", b"4294967296", b"18446744073709551616",
           b"99999999999999999999999", b"true", b"null", b"[]", b"{}", b'"F8_E4M3"', b'"C64"', b'"BF16"')


def mutated(v: Values) -> bytes:
    if v.fdp.ConsumeIntInRange(0, 7) == 0:
        return v.fdp.ConsumeBytes(v.left())
    data = bytearray(v.pick(SEEDS))
    for _ in range(v.small(0, 4)):
        if not data:
            break
        k = v.small(0, 5)
        pos = v.fdp.ConsumeIntInRange(0, len(data) - 1)
        if k <= 3:
            _common.splice(v, data, pos, k, 8)
        elif k == 4:  # a number of the header (a dim, an offset, the length prefix's digits)
            numbers = list(NUMBER.finditer(bytes(data[8:])))
            if numbers:
                m = v.pick(numbers)
                data[8 + m.start():8 + m.end()] = v.pick(HOSTILE)
        else:  # the header length itself
            data[0:8] = v.fdp.ConsumeIntInRange(0, 2**64 - 1).to_bytes(8, "little")
    if v.bool():
        del data[v.fdp.ConsumeIntInRange(0, len(data)):]
    return bytes(data)


def touch(tensors):
    for t in list(tensors.values())[:16]:
        t.contiguous().reshape(-1).view(ember.uint8).sum()
        repr(t)


def test_one_input(data: bytes):
    v = Values(data)
    payload = mutated(v)
    try:
        if v.bool():
            touch(es.load(payload))
        else:
            with open(PATH, "wb") as f:
                f.write(payload)
            with es.safe_open(PATH, framework="pt") as f:
                f.keys()
                f.metadata()
                got = {}
                for name in f.keys()[:16]:
                    if v.bool():
                        s = f.get_slice(name)
                        got[name] = s[tuple(slice(0, v.small(0, 3)) for _ in s.get_shape()[:2])]
                    else:
                        got[name] = f.get_tensor(name)
            touch(got)
    except es.SafetensorError:
        pass


if __name__ == "__main__":
    _common.main(test_one_input)
