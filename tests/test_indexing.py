"""Indexing against torch: x[key] (ints, slices, None, Ellipsis, lists, index tensors, masks,
bools) and x[key] = value, index_put_ / index_put (with accumulate), nonzero, and the errors
(out of range, too many indices, bad index types, non-positive steps)."""
from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import DTYPE_NAMES, SHAPE_LAYOUTS as LAYOUTS, check, make_tensor as make, nested

# The declared ops this module tests (indexing.yaml): see test_op_coverage.py.
TESTED_OPS = {"index_put", "index_put_", "nonzero"}


# ---------------------------------------------------------------------------- inputs
def mask(lib, shape, seed=0):
    """A deterministic bool tensor of this shape."""
    n = math.prod(shape)
    flat = [(i * 5 + seed) % 3 != 0 for i in range(n)]
    if n == 0:
        return lib.zeros(shape, dtype=lib.bool)
    return lib.tensor(nested(flat, list(shape)), dtype=lib.bool)


def sptr(t):
    return t.untyped_storage().data_ptr()


def I(lib, v, dtype="int64"):  # noqa: E743 - an index tensor
    return lib.tensor(v, dtype=getattr(lib, dtype))


# --------------------------------------------------------------------- keys for x[key]
# each key is a function of lib (to build index tensors); x has shape (3, 4, 5)
BASIC_KEYS = {
    "int": lambda lib: 1,
    "int_neg": lambda lib: -1,
    "int_neg_first": lambda lib: -3,
    "ints": lambda lib: (2, 3),
    "ints_neg": lambda lib: (-1, -4, -5),
    "ints_all": lambda lib: (0, 1, 2),
    "slice_all": lambda lib: slice(None),
    "slice_start": lambda lib: slice(1, None),
    "slice_stop": lambda lib: slice(None, 2),
    "slice_step": lambda lib: slice(None, None, 2),
    "slice_step3": lambda lib: slice(1, None, 3),
    "slice_neg": lambda lib: slice(-2, None),
    "slice_neg_stop": lambda lib: slice(None, -1),
    "slice_neg_both": lambda lib: slice(-3, -1, 2),
    "slice_wide": lambda lib: slice(-10, 10),
    "slice_past_end": lambda lib: slice(5, 10),
    "slice_reversed_bounds": lambda lib: slice(3, 1),
    "slice_step_big": lambda lib: slice(None, None, 7),
    "slices": lambda lib: (slice(1, 3), slice(None, None, 2), slice(-2, None)),
    "slice_then_int": lambda lib: (slice(None), 2),
    "slice_last_empty": lambda lib: (slice(None), slice(None), slice(5, None)),
    "none": lambda lib: None,
    "none_tuple": lambda lib: (None,),
    "nones": lambda lib: (None, None),
    "none_mid": lambda lib: (1, None, 2),
    "none_end": lambda lib: (slice(None), slice(None), slice(None), None),
    "ellipsis": lambda lib: Ellipsis,
    "ellipsis_int": lambda lib: (..., 0),
    "ellipsis_neg": lambda lib: (..., -1),
    "int_ellipsis_int": lambda lib: (0, ..., 1),
    "ellipsis_none": lambda lib: (..., None),
    "none_ellipsis_none": lambda lib: (None, ..., None),
    "ellipsis_slices": lambda lib: (..., slice(1, 3), slice(None, None, 2)),
    "none_slice_step": lambda lib: (None, slice(1, None), slice(None, None, 2)),
    "ellipsis_all": lambda lib: (0, 1, 2, ...),
    "empty_tuple": lambda lib: (),
    "true": lambda lib: True,
    "false": lambda lib: False,
    "true_int": lambda lib: (True, 0),
    "int_false": lambda lib: (0, False),
    "none_true_none": lambda lib: (None, True, None),
}

ADVANCED_KEYS = {
    "list": lambda lib: [0, 2],
    "list_neg": lambda lib: [-1, -3, 0],
    "list_repeat": lambda lib: [1, 1, 1],
    "list_single": lambda lib: [2],
    "list_empty": lambda lib: [],
    "tensor64": lambda lib: I(lib, [2, 0]),
    "tensor32": lambda lib: I(lib, [2, 0], "int32"),
    "tensor_2d": lambda lib: I(lib, [[0, 1, 2], [2, 1, 0]]),
    "tensor_empty": lambda lib: I(lib, []),
    "tensor_0dim": lambda lib: I(lib, 1),
    "tensor_0dim_32": lambda lib: I(lib, -1, "int32"),
    "tensors_0dim": lambda lib: (I(lib, 1), I(lib, 2)),
    "tensor_0dim_slice": lambda lib: (slice(None), I(lib, 3)),
    "second": lambda lib: (slice(None), [0, 3]),
    "second_32": lambda lib: (slice(None), I(lib, [0, 3], "int32")),
    "last": lambda lib: (slice(None), slice(None), [4, 0, -1]),
    "last_ellipsis": lambda lib: (..., [4, 0]),
    "first_last_ellipsis": lambda lib: ([0, 1], ..., [1, 2]),
    "adjacent": lambda lib: ([0, 1], [1, 2]),
    "adjacent_tail": lambda lib: (slice(None), [0, 1], [1, 2]),
    "three": lambda lib: ([0, 1], [1, 2], [3, 4]),
    "non_adjacent": lambda lib: ([0, 1], slice(None), [1, 2]),
    "non_adjacent_32": lambda lib: (I(lib, [0, 1], "int32"), slice(None), I(lib, [1, 2])),
    "int_and_list": lambda lib: (0, slice(None), [0, 1]),
    "int_list_adjacent": lambda lib: (0, [0, 1]),
    "list_int": lambda lib: ([0, 2], 1),
    "list_slice_int": lambda lib: ([0, 2], slice(1, 3), 1),
    "broadcast": lambda lib: ([[0], [2]], slice(None), [1, 3]),
    "broadcast_adjacent": lambda lib: ([[0], [1]], [1, 3, 0]),
    "none_separates": lambda lib: ([0, 1], None, [2, 3]),
    "none_before": lambda lib: (None, [0, 1], [2, 3]),
    "list_then_step": lambda lib: ([0, 2], slice(None, None, 2)),
    "step_then_list": lambda lib: (slice(None, None, 2), [3, 1]),
    "empty_list_second": lambda lib: (slice(None), []),
    "empty_and_slice": lambda lib: ([], slice(1, 3)),
    "list_of_bools": lambda lib: [True, False, True],
    "numpy": lambda lib: np.array([2, 1]),
    "numpy_int32_second": lambda lib: (slice(None), np.array([3, 0], dtype=np.int32)),
    "mask_full": lambda lib: mask(lib, (3, 4, 5)),
    "mask_first": lambda lib: mask(lib, (3,)),
    "mask_first_two": lambda lib: mask(lib, (3, 4)),
    "mask_second": lambda lib: (slice(None), mask(lib, (4,))),
    "mask_last_two": lambda lib: (slice(None), mask(lib, (4, 5), 1)),
    "mask_last_ellipsis": lambda lib: (..., mask(lib, (5,))),
    "mask_none_true": lambda lib: lib.zeros(3, dtype=lib.bool),
    "mask_all_true": lambda lib: lib.ones(3, 4, dtype=lib.bool),
    "mask_and_list": lambda lib: (mask(lib, (3,)), slice(None), [0, 1]),
    "int_mask": lambda lib: (1, mask(lib, (4,))),
    "mask_0dim_true": lambda lib: lib.tensor(True),
    "mask_0dim_false": lambda lib: lib.tensor(False),
    "mask_0dim_with_int": lambda lib: (lib.tensor(True), 1),
    "numpy_mask": lambda lib: np.array([True, False, True]),
}

ERROR_KEYS = {
    "int_too_big": lambda lib: 3,
    "int_too_small": lambda lib: -4,
    "int_too_big_last": lambda lib: (0, 0, 5),
    "too_many_ints": lambda lib: (0, 0, 0, 0),
    "too_many_slices": lambda lib: (slice(None),) * 4,
    "too_many_with_ellipsis": lambda lib: (0, 0, 0, ..., 0),
    "float": lambda lib: 1.5,
    "float_in_tuple": lambda lib: (0, 1.0),
    "string": lambda lib: "a",
    "step_zero": lambda lib: slice(None, None, 0),
    "step_negative": lambda lib: slice(None, None, -1),
    "step_negative_second": lambda lib: (slice(None), slice(3, 0, -1)),
    "list_out_of_range": lambda lib: [0, 3],
    "list_neg_out_of_range": lambda lib: [-4],
    "tensor_out_of_range": lambda lib: I(lib, [5]),
    "tensor_out_of_range_second": lambda lib: (slice(None), I(lib, [0, 4])),
    "tensor_out_of_range_32": lambda lib: (slice(None), slice(None), I(lib, [5], "int32")),
    "float_tensor": lambda lib: lib.tensor([0.0, 1.0]),
    "float_tensor_0dim": lambda lib: lib.tensor(1.0),
    "int16_tensor": lambda lib: I(lib, [0, 1], "int16"),
    "list_of_floats": lambda lib: [0.0, 1.0],
    "shape_mismatch": lambda lib: ([0, 1], [0, 1, 2]),
    "mask_wrong_size": lambda lib: lib.ones(2, dtype=lib.bool),
    "mask_wrong_shape": lambda lib: lib.ones(3, 5, dtype=lib.bool),
    "mask_too_many_dims": lambda lib: lib.ones(3, 4, 5, 1, dtype=lib.bool),
    "too_many_lists": lambda lib: ([0], [0], [0], [0]),
    "dict": lambda lib: {},
    "object": lambda lib: object(),
    "huge_int": lambda lib: 2 ** 63,
    "huge_list": lambda lib: [2 ** 63],
}


def run_getitem(lib, key_fn, dtype, layout, shape=(3, 4, 5), empty_offsets=True):
    x = make(lib, shape, dtype, layout)
    out = x[key_fn(lib)]
    # basic indexing is a view of x (same strides and offset as torch's); advanced indexing
    # copies (whose strides need not match)
    view = sptr(out) == sptr(x) if x.numel() else None  # an empty x has no storage to share
    offset = out.storage_offset() if empty_offsets or out.numel() else None
    return out, view, (out.stride(), offset) if view else None


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("key", sorted(BASIC_KEYS))
def test_basic_getitem(key, dtype):
    for layout in LAYOUTS:
        try:
            check(lambda lib: run_getitem(lib, BASIC_KEYS[key], dtype, layout))
        except AssertionError as e:
            raise AssertionError(f"x[{key}] of a {layout} tensor: {e}") from None


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("key", sorted(ADVANCED_KEYS))
def test_advanced_getitem(key, dtype):
    for layout in LAYOUTS:
        try:
            check(lambda lib: run_getitem(lib, ADVANCED_KEYS[key], dtype, layout))
        except AssertionError as e:
            raise AssertionError(f"x[{key}] of a {layout} tensor: {e}") from None


@pytest.mark.parametrize("key", sorted(ERROR_KEYS))
def test_getitem_errors(key):
    for layout in LAYOUTS:
        check(lambda lib: make(lib, (3, 4, 5), "float32", layout)[ERROR_KEYS[key](lib)])


@pytest.mark.parametrize("key", sorted(BASIC_KEYS) + sorted(ADVANCED_KEYS))
@pytest.mark.parametrize("shape", [(0, 4, 5), (3, 0, 5), (3, 4, 0)])
def test_getitem_of_empty(key, shape):
    keys = {**BASIC_KEYS, **ADVANCED_KEYS}
    # masks have the full shape's sizes: rebuild them for the empty shape
    if key.startswith("mask") or key in ("int_mask", "numpy_mask", "list_of_bools"):
        pytest.skip("mask sizes are for (3, 4, 5)")
    check(lambda lib: run_getitem(lib, keys[key], "int32", "contiguous", shape))


@pytest.mark.parametrize("shape", [(0, 4, 5), (3, 0, 5), (3, 4, 0)])
def test_masks_of_empty(shape):
    check(lambda lib: make(lib, shape, "float64")[mask(lib, shape)], strides=True)
    check(lambda lib: make(lib, shape, "float64")[mask(lib, shape[:1])], strides=True)
    check(lambda lib: make(lib, shape, "float64")[..., mask(lib, shape[-1:])], strides=True)


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("key", [(), None, Ellipsis, True, False, (None, None), (..., None), (None, ...),
                                 0, -1, slice(None), [0], "tensor0", "tensor_true", "tensor_false",
                                 "tensor_empty", 1.0, (None, True), (True, None)])
def test_zero_dim_getitem(key, dtype):
    special = {"tensor0": lambda lib: I(lib, 0), "tensor_true": lambda lib: lib.tensor(True),
               "tensor_false": lambda lib: lib.tensor(False), "tensor_empty": lambda lib: I(lib, [])}
    key_fn = special[key] if isinstance(key, str) else (lambda lib: key)
    check(lambda lib: run_getitem(lib, key_fn, dtype, "contiguous", ()))


def test_nested_views_offsets_and_writes():
    def run(lib):
        x = make(lib, (6, 7), "int64")
        v = x[1:, ::2][1:, 1:][::2]
        v[0, 0] = 100
        w = x[..., 3][2:]
        return v, v.storage_offset(), w, w.storage_offset(), x

    check(run, strides=True)


@pytest.mark.parametrize("key", [slice(5, None), slice(7, 9), slice(-1, -3), slice(2, 2), slice(3, 1, 2)])
def test_empty_slice_storage_offset(key):
    """An empty slice starts where torch clamps its start: same storage_offset()."""
    check(lambda lib: (make(lib, (5, 3), "int32")[key].storage_offset(),
                       make(lib, (3, 5), "int32")[:, key].storage_offset()))


# ------------------------------------------------------------------------- setitem
SET_KEYS = {
    "int": lambda lib: 1,
    "int_neg": lambda lib: -1,
    "ints": lambda lib: (0, 2),
    "element": lambda lib: (2, 3, 4),
    "slice": lambda lib: slice(1, None),
    "slice_step": lambda lib: (slice(None), slice(None, None, 2)),
    "slice_neg": lambda lib: (..., slice(-2, None)),
    "ellipsis": lambda lib: Ellipsis,
    "none": lambda lib: (None, 0),
    "empty_slice": lambda lib: slice(3, None),
    "list": lambda lib: [0, 2],
    "tensor": lambda lib: I(lib, [2, 0]),
    "tensor32": lambda lib: (slice(None), I(lib, [3, 1], "int32")),
    "non_adjacent": lambda lib: ([0, 1], slice(None), [1, 2]),
    "int_and_list": lambda lib: (0, slice(None), [0, 4]),
    "mask_full": lambda lib: mask(lib, (3, 4, 5)),
    "mask_first": lambda lib: mask(lib, (3,)),
    "mask_last": lambda lib: (..., mask(lib, (5,))),
    "mask_0dim": lambda lib: lib.tensor(True),
    "true": lambda lib: True,
    "false": lambda lib: False,
    "empty_list": lambda lib: [],
    "tensor_0dim": lambda lib: I(lib, 1),
}

def _v(lib, vals, dtype):
    """A value tensor of x's dtype (bool: nonzero -> True)."""
    if dtype == "bool":
        vals = [[bool(v) for v in row] for row in vals] if isinstance(vals[0], list) else [bool(v) for v in vals]
    if dtype == "uint8":
        vals = [[abs(v) for v in row] for row in vals] if isinstance(vals[0], list) else [abs(v) for v in vals]
    return lib.tensor(vals, dtype=getattr(lib, dtype))


# value(lib, dtype of x): scalars of any type, tensors of x's dtype
SET_VALUES = {
    "int": lambda lib, d: 7,
    "negative": lambda lib, d: -3,
    "float": lambda lib, d: 1.5,
    "float_neg": lambda lib, d: -2.75,
    "bool": lambda lib, d: True,
    "zero": lambda lib, d: 0,
    "tensor_0dim": lambda lib, d: lib.tensor(2, dtype=getattr(lib, d)),
    "tensor_row": lambda lib, d: _v(lib, [1, 2, -3, 4, 0], d),
    "tensor_col": lambda lib, d: _v(lib, [[1], [2], [3], [4]], d),
    "tensor_one": lambda lib, d: _v(lib, [9], d),
    "tensor_expanded": lambda lib, d: _v(lib, [5], d).expand(5),
    "tensor_transposed": lambda lib, d: _v(lib, [[1, 2, 3, 4], [5, 6, 7, 8], [0, 1, 0, 1], [2, 2, 2, 2],
                                                [3, 0, 3, 0]], d).t(),
}


def check_setitem(dtype, key, value, label):
    """x[SET_KEYS[key]] = value(lib) on a (3, 4, 5) tensor of dtype, against torch; a failure
    names the case by label."""
    def run(lib):
        x = make(lib, (3, 4, 5), dtype)
        x[SET_KEYS[key](lib)] = value(lib)
        return x

    try:
        check(run)
    except AssertionError as e:
        raise AssertionError(f"{label}: {e}") from None


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("key", sorted(SET_KEYS))
def test_setitem(key, dtype):
    for value in SET_VALUES:
        check_setitem(dtype, key, lambda lib: SET_VALUES[value](lib, dtype), f"x[{key}] = {value}")


@pytest.mark.parametrize("key", sorted(SET_KEYS))
def test_setitem_tensor_of_another_dtype(key):
    """Basic indices convert the value (copy_); advanced ones require the same dtype
    (RuntimeError), except a 0-dim value through a mask, as torch."""
    for dtype, vdtype in [("int32", "float32"), ("float32", "float64"), ("float32", "int8"), ("bool", "int64"),
                          ("uint8", "int64"), ("bfloat16", "float16")]:
        for value in ([1, 0, 1, 0, 1], 1):
            check_setitem(dtype, key, lambda lib: lib.tensor(value, dtype=getattr(lib, vdtype)),
                          f"{dtype} x[{key}] = {vdtype} {value}")


@pytest.mark.parametrize("key", sorted(SET_KEYS))
def test_setitem_list_value_is_type_error(key):
    """torch refuses a Python list on the right of x[key] = ...: TypeError."""
    check_setitem("int64", key, lambda lib: [1, 0, 1, 0, 1], f"x[{key}] = [1, 0, 1, 0, 1]")


@pytest.mark.parametrize("layout", ["transposed", "stepped"])
@pytest.mark.parametrize("key", sorted(SET_KEYS))
def test_setitem_non_contiguous_target(key, layout):
    for value in ("int", "tensor_row", "tensor_col", "tensor_transposed"):
        def run(lib):
            base = make(lib, (3, 4, 5), "float32", layout)
            base[SET_KEYS[key](lib)] = SET_VALUES[value](lib, "float32")
            return base

        check(run)


@pytest.mark.parametrize("value", ["tensor", "transposed_tensor", "expanded_tensor", "stepped_tensor"])
def test_setitem_from_non_contiguous_values(value):
    vals = {
        "tensor": lambda lib: lib.tensor([[1, 2, 3], [4, 5, 6]], dtype=lib.int32),
        "transposed_tensor": lambda lib: lib.tensor([[1, 4], [2, 5], [3, 6]], dtype=lib.int32).t(),
        "expanded_tensor": lambda lib: lib.tensor([[7, 8, 9]], dtype=lib.int32).expand(2, 3),
        "stepped_tensor": lambda lib: lib.tensor([[1, 0, 2, 0, 3], [4, 0, 5, 0, 6]], dtype=lib.int32)[:, ::2],
    }

    def run(lib, key):
        x = lib.zeros(4, 3, dtype=lib.int32)
        x[key] = vals[value](lib)
        return x

    keys = [lambda lib: slice(1, 3), lambda lib: [3, 0], lambda lib: (slice(None, None, 2),),
            lambda lib: lib.tensor([True, False, False, True]), lambda lib: I(lib, [2, 1], "int32")]
    for key in keys:
        check(lambda lib: run(lib, key(lib)))


def test_setitem_through_views_changes_base():
    def run(lib):
        x = lib.zeros(4, 5, dtype=lib.int64)
        x.t()[1] = 3
        x[1:, ::2][0] = 7
        x[2][[0, 4]] = 9
        x.view(-1)[-1] = 1
        x[..., 3][lib.tensor([True, False, True, True])] = 4
        return x

    check(run)


def test_setitem_advanced_on_a_view_writes_through():
    def run(lib):
        x = lib.zeros(3, 4, dtype=lib.float32)
        x[:, 1:][[0, 2]] = lib.tensor([1.0, 2.0, 3.0])
        x.t()[mask(lib, (4,))] = 5
        return x

    check(run)


SET_ERRORS = {
    "shape_mismatch": lambda lib: (slice(None), lib.ones(3)),
    "too_many_values": lambda lib: (0, lib.ones(2, 4, 5)),
    "index_out_of_range": lambda lib: (3, 0),
    "list_out_of_range": lambda lib: ([0, 5], 0),
    "too_many_indices": lambda lib: ((0, 0, 0, 0), 1),
    "float_index": lambda lib: (1.5, 1),
    "step_zero": lambda lib: (slice(None, None, 0), 1),
    "step_neg": lambda lib: (slice(None, None, -2), 1),
    "string_value": lambda lib: (0, "a"),
    "none_value": lambda lib: (0, None),
    "object_value": lambda lib: (0, object()),
    "huge_value": lambda lib: (0, 2 ** 70),
    "mask_wrong_shape": lambda lib: (lib.ones(2, dtype=lib.bool), 1),
    "float_tensor_index": lambda lib: (lib.tensor([0.0]), 1),
    "mask_value_count": lambda lib: (mask(lib, (3, 4, 5)), lib.ones(2)),
}


@pytest.mark.parametrize("case", sorted(SET_ERRORS))
def test_setitem_errors(case):
    def run(lib):
        x = lib.zeros(3, 4, 5)
        key, value = SET_ERRORS[case](lib)
        x[key] = value
        return x

    check(run)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "bool", "float16"])
@pytest.mark.parametrize("value", [300, -1, -129, 70000, 2 ** 31, 2 ** 63 - 1, 1e10, float("inf"), float("nan"),
                                   -0.5, 255.9, 1e300])
def test_setitem_out_of_range_values(dtype, value):
    """torch refuses scalars that overflow the dtype (RuntimeError) and wraps some others."""
    def run(lib):
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        x[1] = value
        return x

    check(run)

    def run_fill(lib):
        return lib.zeros(3, dtype=getattr(lib, dtype)).fill_(value)

    check(run_fill)


def test_setitem_overlapping_expanded_target():
    def run(lib, key):
        x = lib.zeros(1, 3).expand(4, 3)
        x[key] = lib.tensor([1.0, 2.0, 3.0])
        return x

    # (advanced keys on an expanded tensor are deprecated in torch: a warning, not tested)
    for key in (0, slice(None), (slice(None), 1), Ellipsis, (slice(1, 3), slice(None, None, 2))):
        check(lambda lib: run(lib, key))


def test_multiple_ellipses_like_torch():
    """torch accepts more than one Ellipsis in a key (the extra ones expand to nothing)."""
    check(lambda lib: run_getitem(lib, lambda lib: (..., 0, ...), "float32", "contiguous"))
    check(lambda lib: run_getitem(lib, lambda lib: (..., ...), "float32", "contiguous", ()))


def test_delitem_is_type_error():
    def run(lib):
        x = lib.zeros(3)
        del x[0]

    check(run)


# ---------------------------------------------------------------------- index_put(_)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(dtype, accumulate):
    cases = [
        lambda lib: ((I(lib, [0, 2]),), lib.tensor(1, dtype=getattr(lib, dtype))),
        lambda lib: ((I(lib, [0, 2, 0, 0]),), lib.tensor(1, dtype=getattr(lib, dtype))),  # repeated
        lambda lib: ((I(lib, [1, 1]), I(lib, [2, 2])), lib.tensor([1, 1], dtype=getattr(lib, dtype))),
        lambda lib: ((I(lib, [0, 1], "int32"), I(lib, [3, 3])), lib.tensor(1, dtype=getattr(lib, dtype))),
        lambda lib: ((mask(lib, (3, 4)),), lib.tensor(1, dtype=getattr(lib, dtype))),
        lambda lib: ((mask(lib, (3,)),), lib.ones(4, dtype=getattr(lib, dtype))),
        lambda lib: ((I(lib, [2, 2, 2]), I(lib, [1, 0, 1])), lib.ones(1, dtype=getattr(lib, dtype))),
        lambda lib: ((I(lib, []),), lib.tensor(1, dtype=getattr(lib, dtype))),
        lambda lib: ((I(lib, [[0, 0], [1, 0]]),), lib.ones(2, 2, 4, dtype=getattr(lib, dtype))),
    ]
    for case in cases:
        def run(lib):
            x = make(lib, (3, 4), dtype)
            indices, v = case(lib)
            out = x.index_put(indices, v, accumulate=accumulate)
            y = make(lib, (3, 4), dtype, "transposed")
            r = y.index_put_(indices, v, accumulate)
            z = lib.index_put(make(lib, (3, 4), dtype), indices, v, accumulate=accumulate)
            w = make(lib, (3, 4), dtype)
            lib.index_put_(w, indices, v, accumulate=accumulate)
            return out, x, y, r is y, z, w

        check(run)


def test_index_put_accumulate_counts_repeats():
    def run(lib):
        x = lib.zeros(5, dtype=lib.int64)
        x.index_put_((I(lib, [0, 1, 1, 4, 4, 4]),), I(lib, 1), accumulate=True)
        y = lib.zeros(2, 3, dtype=lib.float32)
        y.index_put_((I(lib, [1, 1, 0]), I(lib, [2, 2, 2])), lib.tensor([0.5, 0.25, 4.0]), accumulate=True)
        z = lib.zeros(4, dtype=lib.uint8)
        z.index_put_((I(lib, [3] * 300),), lib.tensor(1, dtype=lib.uint8), accumulate=True)  # wraps mod 256
        b = lib.zeros(3, dtype=lib.bool)
        b.index_put_((I(lib, [0, 0]),), lib.tensor(True), accumulate=True)
        return x, y, z, b

    check(run)


INDEX_PUT_ERRORS = {
    "out_of_range": lambda lib: lib.zeros(3).index_put_((I(lib, [3]),), lib.tensor(1.0)),
    "too_many_values": lambda lib: lib.zeros(3).index_put_((I(lib, [0]),), lib.tensor([1.0, 2.0])),
    "float_index": lambda lib: lib.zeros(3).index_put_((lib.tensor([0.0]),), lib.tensor(1.0)),
    "list_of_indices": lambda lib: lib.zeros(3).index_put_([I(lib, [0])], lib.tensor(1.0)),
    "too_many_indices": lambda lib: lib.zeros(3).index_put_((I(lib, [0]), I(lib, [0])), lib.tensor(1.0)),
    "scalar_value": lambda lib: lib.zeros(3).index_put_((I(lib, [0]),), 1.0),
    "bare_tensor_indices": lambda lib: lib.zeros(3).index_put_(I(lib, [0]), lib.tensor(1.0)),
    "accumulate_str": lambda lib: lib.zeros(3).index_put_((I(lib, [0]),), lib.tensor(1.0), accumulate="yes"),
    "value_dtype_double": lambda lib: lib.zeros(3).index_put_((I(lib, [0]),), lib.tensor(1.0, dtype=lib.float64)),
    "value_dtype_float_into_long": lambda lib: lib.zeros(3, dtype=lib.int64).index_put_((I(lib, [0]),),
                                                                                      lib.tensor(1.5)),
    "neg_out_of_range_accumulate": lambda lib: lib.zeros(3).index_put_((I(lib, [-4]),), lib.tensor(1.0),
                                                                       accumulate=True),
    "mask_wrong_size": lambda lib: lib.zeros(2, 2).index_put_((lib.ones(3, dtype=lib.bool),), lib.tensor(1.0)),
}


@pytest.mark.parametrize("case", sorted(INDEX_PUT_ERRORS))
def test_index_put_errors(case):
    check(INDEX_PUT_ERRORS[case])


# ---------------------------------------------------------------------------- nonzero
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0,), (0, 3), (3, 0, 2)])
def test_nonzero(shape, layout, dtype):
    check(lambda lib: make(lib, shape, dtype, layout).nonzero())
    check(lambda lib: lib.nonzero(make(lib, shape, dtype, layout)))


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0,), (0, 3), (3, 0, 2)])
def test_nonzero_as_tuple(shape):
    for dtype in ("bool", "int32", "float16"):
        check(lambda lib: make(lib, shape, dtype, "transposed").nonzero(as_tuple=True))
        check(lambda lib: lib.nonzero(make(lib, shape, dtype), as_tuple=True))
        check(lambda lib: lib.nonzero(make(lib, shape, dtype), as_tuple=False))
    check(lambda lib: lib.tensor(0).nonzero(as_tuple=True))


def test_nonzero_special_values():
    check(lambda lib: lib.tensor([0.0, -0.0, float("nan"), float("inf"), 1e-45]).nonzero())
    check(lambda lib: lib.tensor([0.0, -0.0, float("nan")], dtype=lib.float16).nonzero())
    check(lambda lib: lib.tensor([0.0, -0.0, float("nan")], dtype=lib.bfloat16).nonzero())
    check(lambda lib: lib.zeros(4, 5).nonzero())
    check(lambda lib: lib.tensor(0).nonzero())
    check(lambda lib: lib.tensor(1).nonzero())


# ----------------------------------------------------------- hypothesis: random keys
@st.composite
def index_key(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
    items = []
    dims_left = len(shape)
    d = 0
    while d < len(shape):
        kind = draw(st.sampled_from(["int", "slice", "none", "list", "skip", "stop"]))
        size = shape[d]
        if kind == "stop":
            break
        if kind == "none":
            items.append(None)
            continue
        if kind == "int" and size > 0:
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "list" and size > 0:
            items.append(draw(st.lists(st.integers(-size, size - 1), min_size=0, max_size=3)))
        elif kind == "skip":
            items.append(slice(None))
        else:
            start = draw(st.one_of(st.none(), st.integers(-6, 6)))
            stop = draw(st.one_of(st.none(), st.integers(-6, 6)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            items.append(slice(start, stop, step))
        d += 1
    del dims_left
    if draw(st.booleans()) and len(items) < len(shape):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return shape, tuple(items)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(index_key(), st.sampled_from(LAYOUTS))
def test_random_keys_hypothesis(case, layout):
    shape, key = case
    # lists of ints must agree in length to broadcast: shorten them all to the shortest
    lists = [k for k in key if isinstance(k, list)]
    if len(lists) > 1:
        n = min(len(k) for k in lists)
        key = tuple(k[:n] if isinstance(k, list) else k for k in key)

    # (the storage_offset of empty slices has its own test: test_empty_slice_storage_offset)
    check(lambda lib: run_getitem(lib, lambda lib: key, "int16", layout, shape, empty_offsets=False))

    def run_set(lib):
        x = make(lib, shape, "float32")
        x[key] = -1.5
        return x

    check(run_set)
