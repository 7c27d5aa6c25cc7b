"""result_type, promote_types, can_cast, equal and allclose against torch: every pair of
dtypes, and the three tiers of operands (tensors with dims, 0-dim tensors, numbers)."""
from __future__ import annotations

import itertools

import pytest

import ember
from helpers import DTYPE_NAMES, check, torch

TESTED_OPS = {"result_type", "promote_types", "can_cast", "equal", "allclose"}


def test_promote_types_and_can_cast_every_pair():
    for a, b in itertools.product(DTYPE_NAMES, repeat=2):
        check(lambda lib: lib.promote_types(getattr(lib, a), getattr(lib, b)))
        check(lambda lib: lib.can_cast(getattr(lib, a), getattr(lib, b)))


OPERANDS = {  # name -> lib -> operand
    **{f"t_{d}": (lambda d: lambda lib: lib.ones(2, dtype=getattr(lib, d)))(d) for d in DTYPE_NAMES},
    **{f"z_{d}": (lambda d: lambda lib: lib.tensor(1, dtype=getattr(lib, d)))(d) for d in DTYPE_NAMES},
    "int": lambda lib: 300, "float": lambda lib: 2.5, "bool": lambda lib: True, "neg": lambda lib: -1,
}


@pytest.mark.parametrize("a", sorted(OPERANDS))
def test_result_type_tiers(a):
    for b in OPERANDS:
        check(lambda lib: lib.result_type(OPERANDS[a](lib), OPERANDS[b](lib)))


def test_result_type_follows_default_dtype():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.result_type(ember.tensor([1]), 1.5) == ember.float64
        assert ember.result_type(ember.tensor([1], dtype=ember.float16), 1.5) == ember.float16
    finally:
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("call", [
    lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])),
    lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([1, 3])),
    lambda lib: lib.equal(lib.tensor([1, 2]), lib.tensor([[1, 2]])),
    lambda lib: lib.equal(lib.zeros(0, 3), lib.zeros(0, 3)),
    lambda lib: lib.equal(lib.tensor([float("nan")]), lib.tensor([float("nan")])),
    lambda lib: lib.arange(6).view(2, 3).t().equal(lib.arange(6).view(2, 3).t().contiguous()),
    lambda lib: lib.allclose(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0 + 1e-7])),
    lambda lib: lib.allclose(lib.tensor([1.0]), lib.tensor([1.1])),
    lambda lib: lib.allclose(lib.tensor([1.0]), lib.tensor([1.1]), rtol=0.2),
    lambda lib: lib.allclose(lib.tensor([float("nan")]), lib.tensor([float("nan")])),
    lambda lib: lib.allclose(lib.tensor([float("nan")]), lib.tensor([float("nan")]), equal_nan=True),
    lambda lib: lib.tensor([1.0, 2.0]).allclose(lib.tensor([[1.0, 2.0]])),
    lambda lib: lib.allclose(lib.tensor([1.0]), lib.tensor([1.0], dtype=lib.float64)),
    lambda lib: lib.allclose(lib.tensor([1.0]), lib.tensor([1.0, 2.0, 3.0])),
    lambda lib: lib.allclose(lib.tensor([1.0]), lib.tensor([1.0]), atol=-1.0),
    lambda lib: lib.equal(lib.tensor([1]), 1),
])
def test_equal_allclose(call):
    check(call)
