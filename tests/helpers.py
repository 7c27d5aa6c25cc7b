"""Parity helpers: run the same code on ember and on torch and compare.

    check(lambda lib: lib.arange(6).view(2, 3).t())

calls the function with each library, then compares shape, dtype, values (and strides
when asked) of the results, or, when torch raises, that ember raises the same exception
type. Tests needing torch import this module, so they skip cleanly where torch is missing.
"""
from __future__ import annotations

import math

import pytest

import ember

torch = pytest.importorskip("torch")

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]


def dtype_name(d) -> str:
    return repr(d).split(".", 1)[1]


def torch_dtype(d):
    return getattr(torch, dtype_name(d))


def ember_dtype(d):
    return getattr(ember, dtype_name(d))


def _values_equal(a, b, tol) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_values_equal(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= tol * (1 + abs(b))
    return a == b and type(a) is type(b)


def assert_same(e, t, *, strides=False, tol=0.0):
    """ember result e against torch result t: tensors, sequences of them, or plain values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"expected an ember.Tensor, got {type(e).__name__}"
        assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} != torch's {tuple(t.shape)}"
        assert dtype_name(e.dtype) == dtype_name(t.dtype), f"dtype {e.dtype} != torch's {t.dtype}"
        if strides:
            assert e.stride() == t.stride(), f"strides {e.stride()} != torch's {t.stride()}"
        assert _values_equal(e.tolist(), t.tolist(), tol), f"values differ:\n{e.tolist()}\n{t.tolist()}"
    elif isinstance(t, (list, tuple)):
        assert isinstance(e, (list, tuple)) and len(e) == len(t), f"{e!r} vs torch's {t!r}"
        for x, y in zip(e, t):
            assert_same(x, y, strides=strides, tol=tol)
    elif isinstance(t, torch.Size):
        assert tuple(e) == tuple(t)
    elif isinstance(t, torch.dtype):
        assert dtype_name(e) == dtype_name(t)
    else:
        assert _values_equal(e, t, tol), f"{e!r} != torch's {t!r}"


def check(fn, *, strides=False, tol=0.0):
    """fn(lib) with lib = ember and torch; compares results, or exception types."""
    try:
        expected = fn(torch)
    except Exception as exc:  # torch raises: ember must raise the same type
        with pytest.raises(type(exc)):
            fn(ember)
        return None
    got = fn(ember)
    assert_same(got, expected, strides=strides, tol=tol)
    return got


def from_torch(t):
    """An ember tensor with the same values, dtype and shape as a torch tensor."""
    if t.dtype == torch.bfloat16:
        return ember.tensor(t.float().tolist(), dtype=ember.bfloat16) if t.dim() else \
            ember.tensor(t.float().item(), dtype=ember.bfloat16)
    return ember.tensor(t.tolist(), dtype=ember_dtype(t.dtype))


# ---------------------------------------------------------------------------- test inputs
# Shape-based inputs (indexing and view tests): any shape and dtype, in a memory layout.
SHAPE_LAYOUTS = ["contiguous", "transposed", "stepped", "expanded"]


def values(n, dtype):
    """n deterministic values, exactly representable in dtype."""
    if dtype == "bool":
        return [i % 3 == 0 for i in range(n)]
    if dtype == "uint8":
        return [(i * 7 + 1) % 251 for i in range(n)]
    ints = [(i * 7 + 3) % 23 - 11 for i in range(n)]
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        return [v + 0.5 for v in ints]
    return ints


def nested(flat, shape):
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def contiguous(lib, shape, dtype):
    """A contiguous tensor of this shape and dtype, built without any view op."""
    n = math.prod(shape)
    if n == 0 and len(shape) > 1:
        # a nested empty list can't say e.g. (2, 0, 4): view a 1-d empty tensor
        return lib.tensor([], dtype=getattr(lib, dtype)).view(*shape)
    return lib.tensor(nested(values(n, dtype), list(shape)), dtype=getattr(lib, dtype))


def make_tensor(lib, shape, dtype, layout="contiguous"):
    """A tensor of this shape and dtype with the given memory layout (built without [])."""
    shape = tuple(shape)
    if layout == "contiguous" or len(shape) == 0:
        return contiguous(lib, shape, dtype)
    if layout == "transposed":
        if len(shape) == 1:  # one column of an (n, 2) matrix: stride 2
            return contiguous(lib, (shape[0], 2), dtype).select(1, 1)
        return contiguous(lib, shape[:-2] + (shape[-1], shape[-2]), dtype).transpose(-1, -2)
    if layout == "stepped":  # every other element of the last dim, from element 1
        wide = contiguous(lib, shape[:-1] + (shape[-1], 2), dtype)
        return wide.select(-1, 1)
    if layout == "expanded":
        return contiguous(lib, (1,) + shape[1:], dtype).expand(*shape)
    raise ValueError(layout)


# Dtype-based inputs (creation, conversion and numpy tests): a fixed 3x4 sample per dtype.
INT_NAMES = ["uint8", "int8", "int16", "int32", "int64"]


def sample_values(name):
    """Nested 3x4 values every dtype holds exactly (negative only for signed types)."""
    if name == "bool":
        return [[True, False, True, True], [False, False, True, False], [True, True, False, True]]
    if name == "uint8":
        return [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 250, 255]]
    if name in INT_NAMES:
        return [[0, 1, -2, 3], [4, -5, 6, 7], [-8, 9, 100, -100]]
    return [[0.0, 1.5, -2.25, 3.0], [4.5, -5.0, 6.125, 7.0], [-8.5, 9.0, 100.0, -0.5]]


def make_sample(lib, name, layout):
    """The 3x4 sample of dtype `name` in a layout: contiguous, transposed, sliced, empty,
    scalar (0-dim) or expanded (a 0 stride)."""
    return sample_view(lib.tensor(sample_values(name), dtype=getattr(lib, name)), layout)


def sample_view(base, layout):
    """The 3x4 tensor base itself (contiguous) or a view of it in one of make_sample's layouts."""
    if layout == "contiguous":
        return base
    if layout == "transposed":
        return base.t()
    if layout == "sliced":
        return base[1:, ::2]
    if layout == "empty":
        return base[:0]
    if layout == "scalar":
        return base[1, 2]
    if layout == "expanded":
        return base[0].expand(2, 4)
    raise ValueError(layout)


def T(lib, values, name="float32"):
    """A tensor of values in lib (ember or torch), of dtype name."""
    return lib.tensor(values, dtype=getattr(lib, name))


def each(cases, fn):
    """Runs fn(*case) for every case; a failure names its case. One test item runs many
    cases: pytest's per-item overhead is 30x the cost of a check."""
    for case in cases:
        try:
            fn(*case)
        except (Exception, pytest.fail.Exception) as exc:
            raise AssertionError(f"case {case}: {exc}") from exc
