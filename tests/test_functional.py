"""The Python-level functions (ember/_functional.py) against torch."""
from __future__ import annotations

import pytest

import ember
from helpers import check, torch


@pytest.mark.parametrize("call", [
    lambda lib: lib.broadcast_shapes((3, 1), (4,)),
    lambda lib: lib.broadcast_shapes((2, 0), (1, 1)),
    lambda lib: lib.broadcast_shapes(3, (2, 1)),
    lambda lib: lib.broadcast_shapes(),
    lambda lib: lib.broadcast_shapes((3,), (4,)),
    lambda lib: lib.broadcast_tensors(lib.ones(3, 1), lib.arange(4)),
    lambda lib: lib.broadcast_tensors(lib.ones(2), lib.ones(3)),
    lambda lib: lib.atleast_1d(lib.tensor(1.0)),
    lambda lib: lib.atleast_2d(lib.tensor([1, 2])),
    lambda lib: lib.atleast_3d(lib.ones(2, 3)),
    lambda lib: lib.atleast_3d(lib.tensor(1), lib.ones(2)),
    lambda lib: lib.atleast_2d([lib.ones(2), lib.ones(2, 2, 2)]),
    lambda lib: lib.diff(lib.tensor([1, 4, 9, 16])),
    lambda lib: lib.diff(lib.arange(12.0).view(3, 4) ** 2, n=2, dim=0),
    lambda lib: lib.diff(lib.tensor([True, False, False])),
    lambda lib: lib.diff(lib.tensor([1.0, 2.0]), prepend=lib.tensor([0.0]), append=lib.tensor([5.0, 6.0])),
    lambda lib: lib.arange(6).view(2, 3).t().diff(),
    lambda lib: lib.diff(lib.tensor(1.0)),
    lambda lib: lib.diff(lib.ones(3), n=-1),
    lambda lib: lib.arange(4.0).where(lib.arange(4) > 1, -1.0),
    lambda lib: lib.zeros(3, 3).fill_diagonal_(5),
    lambda lib: lib.zeros(7, 3).fill_diagonal_(1, wrap=True),
    lambda lib: lib.zeros(7, 3).fill_diagonal_(1),
    lambda lib: lib.zeros(2, 4).fill_diagonal_(2.5),
    lambda lib: lib.zeros(3, 3, 3).fill_diagonal_(1),
    lambda lib: lib.zeros(3, 3, 2).fill_diagonal_(1),
    lambda lib: lib.zeros(3).fill_diagonal_(1),
])
def test_functional(call):
    check(call)


def test_broadcast_tensors_returns_inputs_that_already_have_the_shape():
    for lib in (ember, torch):
        a, b = lib.zeros(2, 3, requires_grad=True), lib.zeros(3)
        x, y = lib.broadcast_tensors(a, b)
        assert x is a and x.is_leaf and y is not b and tuple(y.shape) == (2, 3)
        assert lib.broadcast_tensors(b)[0] is b
