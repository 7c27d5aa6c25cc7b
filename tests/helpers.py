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
