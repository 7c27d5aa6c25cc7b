"""What the fuzz harnesses share: turning fuzzer bytes into hostile Python values, the
rule every input must follow, and the command line.

The rule: every input ends in a result or in a Python exception. A crash (signal, abort,
sanitizer report) is what the fuzzer looks for; a SystemError is a bug too (a C function
returned NULL without an exception, or a value with one set), so it is re-raised, and
atheris saves the input as a crash. Every harness is a script:

    python tests/fuzz/fuzz_views.py -atheris_runs=100000        # a number of inputs
    python tests/fuzz/fuzz_views.py -max_total_time=3600 DIR    # a time, growing corpus DIR
    python tests/fuzz/fuzz_views.py tests/fuzz/corpus/fuzz_views/*   # replay saved inputs
"""
from __future__ import annotations

import math
import os
import resource
import sys

import atheris

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # the checkout's ember, as pytest finds it
    sys.path.insert(0, ROOT)

# Coverage of ember's Python layer guides the fuzzer (the C++ core is not instrumented).
with atheris.instrument_imports(include=["ember"]):
    import ember  # noqa: F401

# An allocation larger than this fails with ember's RuntimeError instead of paging for
# seconds: sizes like 2**31 are fair game for the fuzzer but not worth filling memory for.
ADDRESS_SPACE_LIMIT = 5 << 29

# Exceptions an input may end in. SystemError is not among them (see above), nor are
# errors only a broken harness raises (NameError, AssertionError from our own checks).
EXPECTED = (IndexError, TypeError, ValueError, RuntimeError, NotImplementedError, OverflowError,
            KeyError, AttributeError, ZeroDivisionError, MemoryError, BufferError, EOFError,
            __import__("pickle").UnpicklingError, ImportError, LookupError, UnicodeError)


def expected(exc: BaseException) -> bool:
    if isinstance(exc, AssertionError):  # torch's answer to asking for CUDA in a build without it
        return str(exc) == "ember not compiled with CUDA enabled"
    return isinstance(exc, EXPECTED) and not isinstance(exc, SystemError)


def limit_memory():
    """Caps the address space, except under ASan, whose shadow memory needs terabytes of it."""
    if "libasan" not in os.environ.get("LD_PRELOAD", ""):
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))


# What CPython itself prints on some inputs, ember or not: after a BYTEARRAY8 opcode whose
# size fails to allocate (MemoryError), _pickle later frees a bytearray it still exports
# (seen with raw fuzzer bytes starting b"\x96;\xf1sq\xb91\xb8M", no ember global involved).
CPYTHON_NOISE = {"deallocated bytearray object has exported buffers"}


class UnraisableError(AssertionError):
    """An exception Python could only print (raised in a destructor, say): a bug too."""


def checked(test_one_input):
    """test_one_input, failing on an exception that was printed instead of raised."""
    caught = []

    def hook(info):
        caught.append(f"{info.exc_type.__name__}: {info.exc_value} (in {info.object!r})")

    def printed(exc_type, exc_value, tb):  # PyErr_Print's way, as in bytearray's destructor
        if str(exc_value) not in CPYTHON_NOISE:
            caught.append(f"{exc_type.__name__}: {exc_value}")

    def run(data):
        sys.unraisablehook = hook
        sys.excepthook = printed
        test_one_input(data)
        if caught:
            raise UnraisableError(caught[0])
    return run


def main(test_one_input):
    """atheris' main: the harness's arguments are libFuzzer's (-atheris_runs=N,
    -max_total_time=S, corpus directories or input files). Crashing inputs are written to
    /tmp/ember-fuzz/<harness>/ unless -artifact_prefix says otherwise."""
    limit_memory()
    argv = list(sys.argv)
    if not any(a.startswith("-artifact_prefix=") for a in argv):
        name = os.path.splitext(os.path.basename(argv[0]))[0]
        out = os.path.join("/tmp", "ember-fuzz", name)
        os.makedirs(out, exist_ok=True)
        argv.append(f"-artifact_prefix={out}/")
    if not any(a.startswith("-rss_limit_mb=") for a in argv):
        argv.append("-rss_limit_mb=4096")  # above ADDRESS_SPACE_LIMIT: ember's MemoryError comes first
    if not any(a.startswith("-timeout=") for a in argv):
        argv.append("-timeout=120")
    # The harness's own branches (which op, which key kind) are coverage too: without them a
    # harness over C functions only would look flat to the fuzzer.
    for module in (sys.modules[test_one_input.__module__], sys.modules[__name__]):
        for obj in list(vars(module).values()):
            for fn in ([obj] if callable(obj) and not isinstance(obj, type) else
                       vars(obj).values() if isinstance(obj, type) else []):
                if getattr(fn, "__module__", None) == module.__name__ and hasattr(fn, "__code__"):
                    atheris.instrument_func(fn)
    atheris.Setup(argv, checked(test_one_input))
    atheris.Fuzz()


def attempt(fn, *args, **kwargs):
    """(True, fn(*args, **kwargs)), or (False, None) when it raised an expected exception."""
    try:
        return True, fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the point of a fuzz harness
        if expected(e):
            return False, None
        raise


def run_guarded(fn, *args, **kwargs):
    """fn(*args, **kwargs), or None when it raised an expected exception."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the point of a fuzz harness
        if expected(e):
            return None
        raise


# ----------------------------------------------------------------- values from bytes
SMALL_INTS = (0, 1, 2, 3, 4, 5, -1, -2, 7, 8)
HOSTILE_INTS = (2**31 - 1, 2**31, 2**32, 2**32 + 1, 2**62, 2**63 - 1, -2**63, 2**63, 2**64, -2**64, 2**100,
                -2**31, 10**6)
FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 1e300, 1e38, 3.5e38, 65504.0, 65520.0, float("inf"),
          float("-inf"), float("nan"), 2.0**63, -(2.0**63), 2.0**64, 5e-324)
DTYPE_NAMES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


def touch(obj, depth=0):
    """Reads what a loader rebuilt: every element, the repr and a reduction, a few
    containers deep."""
    if depth > 3:
        return
    import ember

    if isinstance(obj, ember.Tensor):
        attempt(obj.tolist)
        attempt(repr, obj)
        attempt(obj.sum)
        attempt(obj.contiguous)
    elif isinstance(obj, (ember.UntypedStorage, ember.TypedStorage)):
        attempt(obj.tolist)
        attempt(len, obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj[:8]:
            touch(x, depth + 1)
    elif isinstance(obj, dict):
        for x in list(obj.values())[:8]:
            touch(x, depth + 1)


def splice(v, data: bytearray, pos: int, k: int, longest_cut: int):
    """One plain edit of a file's bytes at pos: k 0-1 overwrite the byte, 2 inserts up to
    8 fuzzer bytes, 3 cuts up to longest_cut bytes."""
    if k <= 1:
        data[pos] = v.fdp.ConsumeIntInRange(0, 255)
    elif k == 2:
        data[pos:pos] = v.fdp.ConsumeBytes(v.small(1, 8))
    else:
        del data[pos:pos + v.small(1, longest_cut)]


class Values:
    """Hostile Python values drawn from a FuzzedDataProvider."""

    def __init__(self, data: bytes):
        import ember
        self.ember = ember
        self.fdp = atheris.FuzzedDataProvider(data)

    def left(self) -> int:
        return self.fdp.remaining_bytes()

    def pick(self, seq):
        return seq[self.fdp.ConsumeIntInRange(0, len(seq) - 1)]

    def bool(self) -> bool:
        return self.fdp.ConsumeBool()

    def small(self, lo=0, hi=5) -> int:
        return self.fdp.ConsumeIntInRange(lo, hi)

    def int(self) -> int:
        k = self.fdp.ConsumeIntInRange(0, 9)
        if k < 6:
            return self.pick(SMALL_INTS)
        if k < 8:
            return self.fdp.ConsumeIntInRange(-20, 20)
        return self.pick(HOSTILE_INTS)

    def float(self) -> float:
        if self.bool():
            return self.pick(FLOATS)
        return self.fdp.ConsumeRegularFloat() if self.bool() else float(self.fdp.ConsumeIntInRange(-9, 9)) / 2

    def dtype(self):
        return getattr(self.ember, self.pick(DTYPE_NAMES))

    def sizes(self, max_dims=5, hostile=True) -> list:
        n = self.small(0, max_dims)
        return [self.int() if hostile and self.fdp.ConsumeIntInRange(0, 5) == 0 else self.small(0, 4)
                for _ in range(n)]

    def number(self):
        k = self.small(0, 3)
        return (self.int, self.float, self.bool, lambda: complex(self.float(), 1.0))[k]() if k < 3 else \
            (self.int() if self.bool() else self.float())

    def tensor(self, max_dims=4):
        """A small tensor of any dtype: contiguous, transposed, sliced, expanded or 0-dim."""
        e = self.ember
        dt = self.dtype()
        shape = self.sizes(max_dims, hostile=False)
        n = math.prod(shape)
        values = [self.pick((0, 1, -1, 2, 3, -7, 100, 0.5, -0.0)) for _ in range(min(n, 3))] or [0]
        t = e.tensor([values[i % len(values)] for i in range(n)], dtype=e.float64).reshape(shape).to(dt)
        k = self.small(0, 4)
        if k == 1 and t.dim() >= 2:
            t = t.transpose(0, t.dim() - 1)
        elif k == 2 and t.dim() >= 1 and t.shape[0] > 1:
            t = t[::2]
        elif k == 3 and t.dim() >= 1:
            t = t.unsqueeze(0).expand(2, *t.shape)
        return t

    def value(self, depth=0):
        """Any value an op argument could be handed."""
        e = self.ember
        k = self.small(0, 15 if depth < 2 else 9)
        if k <= 3:
            return self.tensor()
        if k == 4:
            return self.int()
        if k == 5:
            return self.float()
        if k == 6:
            return self.pick((None, True, False, Ellipsis, "sum", "mean", "", "reflect", "fro", b"\x00"))
        if k == 7:
            return self.dtype()
        if k == 8:
            return self.pick((e.contiguous_format, e.preserve_format, e.channels_last, e.strided, "cpu",
                              e.device("cpu"), e.Generator(), e.Size([2, 3]), object(), 1j, [], ()))
        if k == 9:
            return slice(self.int() if self.bool() else None, self.int() if self.bool() else None,
                         self.int() if self.bool() else None)
        if k <= 12:
            return [self.value(depth + 1) for _ in range(self.small(0, 3))]
        if k == 13:
            return tuple(self.int() for _ in range(self.small(0, 4)))
        if k == 14:
            return [self.small(-2, 3) for _ in range(self.small(0, 4))]
        import numpy as np
        return np.arange(self.small(0, 6)).astype(self.pick((np.float32, np.int64, np.uint8, np.bool_, np.int16)))
