"""Views against torch: shapes, dtypes, values, strides, storage sharing and the errors of
view, reshape, flatten, squeeze, transpose, permute, movedim, expand, narrow, select,
unfold, as_strided, split, chunk, unbind, diagonal, contiguous, clone.

Every op runs on inputs of every dtype in four layouts (contiguous, transposed, sliced
with a step, expanded with a 0 stride), on empty tensors and on 0-dim tensors."""
from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest
from hypothesis import given, settings, strategies as st

import ember
from helpers import DTYPE_NAMES, SHAPE_LAYOUTS as LAYOUTS, check, make_tensor as make, torch

# The declared ops this module tests (views.yaml; contiguous, clone of copy.yaml): test_op_coverage.py.
TESTED_OPS = {"as_strided", "broadcast_to", "chunk", "clone", "contiguous", "diagonal", "expand",
    "expand_as", "flatten", "moveaxis", "movedim", "narrow", "permute", "reshape", "reshape_as", "select",
    "split", "squeeze", "swapaxes", "swapdims", "t", "transpose", "unbind", "unflatten", "unfold",
    "unsqueeze", "view", "view_as"}


# ---------------------------------------------------------------------------- inputs
def sptr(t):
    return t.untyped_storage().data_ptr()


def shares(a, b):
    return sptr(a) == sptr(b)


# --------------------------------------------------------------- one table of view ops
# name -> fn(lib, x); every op runs on SHAPES in each dtype and layout, with strides
# compared to torch's (or the exception type, when torch raises).
SHAPES = [(2, 3, 4), (0, 3, 4), (2, 0, 4), (2, 3, 0), (1, 3, 1)]

VIEW_OPS = {
    "view": lambda lib, x: x.view(x.shape[0], -1),
    "view_flat": lambda lib, x: x.view(-1),
    "view_tuple": lambda lib, x: x.view((x.shape[0] * x.shape[1], x.shape[2])),
    "view_split_last": lambda lib, x: x.view(x.shape[0], x.shape[1], 2, -1) if x.shape[2] % 2 == 0 else x.view(-1, 1),
    "view_as": lambda lib, x: x.view_as(lib.empty(x.shape[0], x.shape[1] * x.shape[2])),
    "reshape": lambda lib, x: x.reshape(-1, x.shape[2]),
    "reshape_flat": lambda lib, x: x.reshape(-1),
    "reshape_fn": lambda lib, x: lib.reshape(x, (x.shape[0], -1)),
    "reshape_as": lambda lib, x: x.reshape_as(lib.empty(x.shape[2], x.shape[0] * x.shape[1])),
    "flatten": lambda lib, x: x.flatten(),
    "flatten_1": lambda lib, x: x.flatten(1),
    "flatten_0_1": lambda lib, x: x.flatten(0, 1),
    "flatten_neg": lambda lib, x: x.flatten(-2, -1),
    "flatten_fn_kw": lambda lib, x: lib.flatten(input=x, start_dim=1),
    "unflatten": lambda lib, x: x.unflatten(2, (2, -1)) if x.shape[2] % 2 == 0 else x.unflatten(1, (x.shape[1], 1)),
    "unflatten_fn": lambda lib, x: lib.unflatten(x, -1, (1, x.shape[2])),
    "squeeze": lambda lib, x: x.squeeze(),
    "squeeze_0": lambda lib, x: x.squeeze(0),
    "squeeze_neg": lambda lib, x: x.squeeze(-1),
    "squeeze_dims": lambda lib, x: x.squeeze((0, 2)),
    "squeeze_fn": lambda lib, x: lib.squeeze(x, 2),
    "unsqueeze_0": lambda lib, x: x.unsqueeze(0),
    "unsqueeze_mid": lambda lib, x: x.unsqueeze(2),
    "unsqueeze_end": lambda lib, x: x.unsqueeze(3),
    "unsqueeze_neg": lambda lib, x: x.unsqueeze(-1),
    "unsqueeze_neg4": lambda lib, x: x.unsqueeze(-4),
    "unsqueeze_fn": lambda lib, x: lib.unsqueeze(x, -2),
    "transpose": lambda lib, x: x.transpose(0, 2),
    "transpose_neg": lambda lib, x: x.transpose(-1, -3),
    "transpose_kw": lambda lib, x: x.transpose(dim0=0, dim1=1),
    "transpose_fn": lambda lib, x: lib.transpose(x, 1, 2),
    "swapaxes": lambda lib, x: x.swapaxes(0, 1),
    "swapdims": lambda lib, x: x.swapdims(1, 2),
    "swapaxes_fn": lambda lib, x: lib.swapaxes(x, 0, -1),
    "swapdims_fn": lambda lib, x: lib.swapdims(x, -1, 0),
    "mT": lambda lib, x: x.mT,
    "permute_args": lambda lib, x: x.permute(2, 0, 1),
    "permute_tuple": lambda lib, x: x.permute((1, 2, 0)),
    "permute_list": lambda lib, x: x.permute([1, 0, 2]),
    "permute_neg": lambda lib, x: x.permute(-1, -2, -3),
    "permute_fn": lambda lib, x: lib.permute(x, (2, 1, 0)),
    "permute_kw": lambda lib, x: x.permute(dims=(0, 2, 1)),
    "movedim": lambda lib, x: x.movedim(0, 2),
    "movedim_neg": lambda lib, x: x.movedim(-1, 0),
    "movedim_tuple": lambda lib, x: x.movedim((0, 1), (2, 0)),
    "moveaxis": lambda lib, x: x.moveaxis(1, -1),
    "moveaxis_fn": lambda lib, x: lib.moveaxis(x, (0, 2), (1, 0)),
    "movedim_fn": lambda lib, x: lib.movedim(x, 2, 1),
    "expand_new": lambda lib, x: x.expand(2, *x.shape),
    "expand_minus1": lambda lib, x: x.expand(-1, -1, -1),
    "expand_new_minus1": lambda lib, x: x.expand(3, -1, x.shape[1], -1),
    "expand_as": lambda lib, x: x.expand_as(lib.empty(2, *x.shape)),
    "broadcast_to": lambda lib, x: x.broadcast_to((1, 2) + tuple(x.shape)),
    "broadcast_to_fn": lambda lib, x: lib.broadcast_to(x, (4,) + tuple(x.shape)),
    "narrow": lambda lib, x: x.narrow(1, 1, 2),
    "narrow_neg_start": lambda lib, x: x.narrow(1, -2, 2),
    "narrow_neg_dim": lambda lib, x: x.narrow(-1, 0, x.shape[-1] // 2),
    "narrow_empty": lambda lib, x: x.narrow(0, 0, 0),
    "narrow_fn": lambda lib, x: lib.narrow(x, 2, 1, x.shape[2] - 1) if x.shape[2] else lib.narrow(x, 2, 0, 0),
    "select": lambda lib, x: x.select(1, 1),
    "select_neg": lambda lib, x: x.select(-1, -1),
    "select_fn": lambda lib, x: lib.select(x, 0, 0),
    "unfold": lambda lib, x: x.unfold(2, 2, 1),
    "unfold_step": lambda lib, x: x.unfold(1, 2, 2),
    "unfold_full": lambda lib, x: x.unfold(-1, x.shape[-1], 1),
    "unfold_zero_size": lambda lib, x: x.unfold(0, 0, 1),
    "diagonal": lambda lib, x: x.diagonal(),
    "diagonal_offset": lambda lib, x: x.diagonal(1),
    "diagonal_neg_offset": lambda lib, x: x.diagonal(-1, 1, 2),
    "diagonal_dims": lambda lib, x: x.diagonal(0, 2, 0),
    "diagonal_big_offset": lambda lib, x: x.diagonal(10),
    "diagonal_kw": lambda lib, x: x.diagonal(offset=1, dim1=-1, dim2=-2),
    "diagonal_fn": lambda lib, x: lib.diagonal(x, 0, -2, -1),
    "split": lambda lib, x: x.split(2, 1),
    "split_last": lambda lib, x: x.split(3),
    "split_sizes": lambda lib, x: x.split([1, 2], 1),
    "split_sizes_fn": lambda lib, x: lib.split(x, [1, x.shape[2] - 1], dim=2) if x.shape[2] else lib.split(x, [0], 2),
    "split_kw": lambda lib, x: x.split(split_size=1, dim=-1),
    "chunk": lambda lib, x: x.chunk(2, 1),
    "chunk_more": lambda lib, x: x.chunk(5, -1),
    "chunk_fn": lambda lib, x: lib.chunk(x, 3, 0),
    "unbind": lambda lib, x: x.unbind(),
    "unbind_1": lambda lib, x: x.unbind(1),
    "unbind_fn": lambda lib, x: lib.unbind(x, -1),
    "as_strided": lambda lib, x: x.as_strided((2, 2), (1, 2)),
    "contiguous": lambda lib, x: x.contiguous(),
}


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("op", sorted(VIEW_OPS))
def test_view_op_matches_torch(op, dtype):
    fn = VIEW_OPS[op]

    def run(lib, shape, layout):
        x = make(lib, shape, dtype, layout)
        out = fn(lib, x)
        # a view shares the input's storage; reshape, flatten, contiguous copy when torch does
        outs = out if isinstance(out, (tuple, list)) else [out]
        return out, [shares(o, x) for o in outs], [o.storage_offset() for o in outs if shares(o, x)]

    for layout in LAYOUTS:
        for shape in SHAPES:
            try:
                check(lambda lib: run(lib, shape, layout), strides=True)
            except AssertionError as e:
                raise AssertionError(f"{op} on a {layout} {shape} tensor: {e}") from None


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_view_offsets_match_torch(dtype, layout):
    """storage_offset() and data_ptr() distance of views, against torch."""
    def offsets(lib):
        x = make(lib, (3, 4, 5), dtype, layout)
        views = [x[1], x[:, 2], x[..., 3], x.narrow(2, 1, 3), x.select(0, 2), x.diagonal(1, 1, 2),
                 x.unfold(2, 2, 2), x[1:, 1:, 1:], x.split(2, 1)[1], x.chunk(2, 2)[-1], x.unbind(1)[2]]
        return [(v.storage_offset(), v.data_ptr() - x.data_ptr(), v.stride(), v.is_contiguous()) for v in views]

    check(offsets)


# ------------------------------------------------------------------------- 0-dim tensors
ZERO_DIM_OPS = {
    "view_empty": lambda x: x.view(()),
    "view_1": lambda x: x.view(1),
    "view_minus1": lambda x: x.view(-1),
    "view_1_1": lambda x: x.view(1, 1, -1),
    "view_2": lambda x: x.view(2),
    "reshape": lambda x: x.reshape(1),
    "reshape_empty": lambda x: x.reshape(()),
    "flatten": lambda x: x.flatten(),
    "flatten_0_0": lambda x: x.flatten(0, 0),
    "squeeze": lambda x: x.squeeze(),
    "squeeze_0": lambda x: x.squeeze(0),
    "squeeze_neg": lambda x: x.squeeze(-1),
    "squeeze_1": lambda x: x.squeeze(1),
    "unsqueeze_0": lambda x: x.unsqueeze(0),
    "unsqueeze_neg": lambda x: x.unsqueeze(-1),
    "unsqueeze_2": lambda x: x.unsqueeze(2),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "transpose_0_0": lambda x: x.transpose(0, 0),
    "transpose_neg": lambda x: x.transpose(-1, 0),
    "transpose_1": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(()),
    "permute_bad": lambda x: x.permute(0),
    "movedim": lambda x: x.movedim(0, 0),
    "expand": lambda x: x.expand(3, 2),
    "expand_empty": lambda x: x.expand(()),
    "expand_0": lambda x: x.expand(0),
    "expand_minus1": lambda x: x.expand(-1),
    "narrow": lambda x: x.narrow(0, 0, 1),
    "select": lambda x: x.select(0, 0),
    "unfold": lambda x: x.unfold(0, 1, 1),
    "unfold_bad": lambda x: x.unfold(0, 2, 1),
    "diagonal": lambda x: x.diagonal(),
    "split": lambda x: x.split(1),
    "chunk": lambda x: x.chunk(1),
    "unbind": lambda x: x.unbind(),
    "contiguous": lambda x: x.contiguous(),
    "clone": lambda x: x.clone(),
    "as_strided": lambda x: x.as_strided((2,), (0,)),
}


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("op", sorted(ZERO_DIM_OPS))
def test_zero_dim_views(op, dtype):
    check(lambda lib: ZERO_DIM_OPS[op](make(lib, (), dtype)), strides=True)


# ------------------------------------------------------------------------------- view
@pytest.mark.parametrize("shape", [(6,), (-1,), (2, 3), (3, -1), (-1, 2), (1, 6, 1), (2, 1, 3), (1, -1, 1, 1),
                                   (7,), (4, -1), (-1, -1), (0, -1), (2, -2), (-3, 2), (6, 0), (0,), ()])
def test_view_shapes(shape):
    check(lambda lib: make(lib, (2, 3), "float32").view(*shape), strides=True)
    check(lambda lib: make(lib, (2, 3), "float32").view(shape), strides=True)


@pytest.mark.parametrize("shape", [(0,), (-1,), (0, 5), (5, 0, -1), (3, -1), (-1, 0), (1, 0), (2, 0, 2)])
def test_view_of_empty(shape):
    check(lambda lib: make(lib, (0, 5), "int64").view(*shape), strides=True)


@pytest.mark.parametrize("shape", [(12,), (4, 3), (3, 4), (2, 2, 3), (-1,), (6, 2)])
def test_view_non_viewable_strides(shape):
    """A transposed or stepped input can't always be viewed: RuntimeError, as torch."""
    check(lambda lib: make(lib, (3, 4), "float32", "transposed").view(*shape), strides=True)
    check(lambda lib: make(lib, (3, 4), "float32", "stepped").view(*shape), strides=True)
    check(lambda lib: make(lib, (3, 4), "float32", "expanded").view(*shape), strides=True)


def test_view_non_viewable_raises_runtime_error():
    x = make(ember, (3, 4), "float32").t()
    with pytest.raises(RuntimeError):
        x.view(12)
    with pytest.raises(RuntimeError):
        x.view(-1)


@pytest.mark.parametrize("shape", [(5,), (2, 2), (-1, 5), (-1, -1), (4, -2), ("a",), (1.5,), (None,)])
def test_view_invalid_shapes(shape):
    check(lambda lib: make(lib, (2, 3), "float32").view(*shape))


def test_view_mixed_args_is_type_error():
    check(lambda lib: make(lib, (2, 3), "float32").view((2, 3), 1))
    check(lambda lib: make(lib, (2, 3), "float32").view([6]))


def test_view_keeps_split_of_stepped_last_dim():
    # (4, 6)[:, ::2] -> (4, 3) strides (6, 2): can view as (2, 2, 3) but not (12,)
    check(lambda lib: make(lib, (4, 6), "int32")[:, ::2].view(2, 2, 3), strides=True)
    check(lambda lib: make(lib, (4, 6), "int32")[:, ::2].view(12))
    check(lambda lib: make(lib, (4, 6), "int32")[::2].view(6, 2), strides=True)
    check(lambda lib: make(lib, (4, 6), "int32")[::2].view(12), strides=True)


# ------------------------------------------------------------------------ view(dtype)
@pytest.mark.parametrize("src", DTYPE_NAMES)
@pytest.mark.parametrize("dst", DTYPE_NAMES)
def test_view_dtype(src, dst):
    def reinterpret(lib):
        x = make(lib, (2, 4), src)
        v = x.view(getattr(lib, dst))
        return v, v.stride(), v.storage_offset(), v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()

    check(reinterpret, strides=True)


@pytest.mark.parametrize("src", ["uint8", "int16", "float32", "float64"])
@pytest.mark.parametrize("dst", ["int8", "bfloat16", "int32", "int64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_view_dtype_non_contiguous(src, dst, layout):
    check(lambda lib: make(lib, (4, 8), src, layout).view(getattr(lib, dst)), strides=True)
    check(lambda lib: make(lib, (4, 8), src, layout)[1:, 2:].view(getattr(lib, dst)), strides=True)


@pytest.mark.parametrize("dst", DTYPE_NAMES)
def test_view_dtype_zero_dim_and_odd_sizes(dst):
    check(lambda lib: make(lib, (), "int32").view(getattr(lib, dst)), strides=True)
    check(lambda lib: make(lib, (3,), "int16").view(getattr(lib, dst)), strides=True)
    check(lambda lib: make(lib, (0,), "int16").view(getattr(lib, dst)), strides=True)
    check(lambda lib: make(lib, (2, 3), "uint8").view(getattr(lib, dst)), strides=True)


def test_view_dtype_writes_through():
    x = ember.zeros(2, dtype=ember.int32)
    x.view(ember.uint8)[4] = 1
    assert x.tolist() == [0, 1]
    x.view(ember.float32)[0] = 1.0
    assert x.tolist() == [0x3F800000, 1]


# ----------------------------------------------------------------------------- reshape
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(24,), (-1,), (4, 6), (6, -1), (2, 3, 4), (3, 2, 4), (2, 12), (1, 24, 1),
                                   (2, 3, 2, 2), (4, 3, 2)])
def test_reshape_views_when_possible(layout, shape):
    """reshape returns a view exactly when torch does (same storage), with torch's strides."""
    def run(lib):
        x = make(lib, (2, 3, 4), "float64", layout)
        r = x.reshape(shape)
        return r, r.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), r.is_contiguous()

    check(run, strides=True)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_reshape_copy_does_not_alias(layout):
    x = make(ember, (3, 4), "int64", layout)
    tx = make(torch, (3, 4), "int64", layout)
    r, tr = x.reshape(12), tx.reshape(12)
    assert shares(r, x) == (tr.untyped_storage().data_ptr() == tx.untyped_storage().data_ptr())
    if not shares(r, x):
        r[0] = 100
        assert x.tolist() == tx.tolist()


@pytest.mark.parametrize("shape", [(5,), (-1, 5), (-1, -1), (2, -2), (0, -1)])
def test_reshape_invalid(shape):
    check(lambda lib: make(lib, (2, 3), "float32").reshape(shape))
    check(lambda lib: make(lib, (2, 3), "float32", "transposed").reshape(shape))


def test_reshape_as():
    check(lambda lib: make(lib, (2, 6), "int16", "transposed").reshape_as(lib.empty(3, 4, dtype=lib.int8)),
          strides=True)
    check(lambda lib: make(lib, (2, 6), "int16").reshape_as(lib.empty(3, 5)))


# ---------------------------------------------------------------------- flatten / unflatten
@pytest.mark.parametrize("args", [(), (0,), (1,), (2,), (-1,), (0, -1), (1, 2), (0, 0), (2, 1), (3,), (0, 3),
                                  (-4,), (1, -3)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_flatten_args(args, layout):
    check(lambda lib: make(lib, (2, 3, 4), "float32", layout).flatten(*args), strides=True)
    check(lambda lib: lib.flatten(make(lib, (2, 3, 4), "float32", layout), *args), strides=True)


def test_flatten_keywords():
    check(lambda lib: lib.flatten(input=make(lib, (2, 3, 4), "int8"), start_dim=1), strides=True)
    check(lambda lib: make(lib, (2, 3, 4), "int8").flatten(start_dim=0, end_dim=1), strides=True)
    check(lambda lib: make(lib, (2, 3, 4), "int8").flatten(end_dim=-2), strides=True)
    check(lambda lib: make(lib, (2, 3, 4), "int8").flatten(bogus=1))


def test_flatten_single_dim_returns_input_shape():
    def run(lib):
        x = make(lib, (3,), "int32")
        return x.flatten(), x.flatten().untyped_storage().data_ptr() == x.untyped_storage().data_ptr()

    check(run, strides=True)


@pytest.mark.parametrize("dim,sizes", [(0, (2, 1)), (1, (3, 1)), (2, (2, 2)), (-1, (4, 1)), (-1, (-1, 2)),
                                       (1, (1, 3, 1)), (2, (2, 3)), (2, (-1, -1)), (3, (1,)), (1, ()),
                                       (2, (4,)), (2, [2, 2])])
def test_unflatten(dim, sizes):
    check(lambda lib: make(lib, (2, 3, 4), "bfloat16").unflatten(dim, sizes), strides=True)
    check(lambda lib: lib.unflatten(make(lib, (2, 3, 4), "bfloat16", "transposed"), dim, sizes), strides=True)


def test_unflatten_empty():
    check(lambda lib: make(lib, (2, 0), "float32").unflatten(1, (0, 5)), strides=True)
    check(lambda lib: make(lib, (2, 0), "float32").unflatten(1, (-1, 5)), strides=True)
    check(lambda lib: make(lib, (2, 0), "float32").unflatten(1, (0, -1)))


# ------------------------------------------------------------------------ squeeze / unsqueeze
@pytest.mark.parametrize("shape", [(1, 3, 1, 2), (1, 1), (3,), (1,), (0, 1), (1, 0, 1)])
@pytest.mark.parametrize("args", [(), (0,), (-1,), (1,), ((0, 1),), ((0, -1),), ((),), ((1, 1),), (4,), ((0, 9),),
                                  ([0, 2],)])
def test_squeeze(shape, args):
    check(lambda lib: make(lib, shape, "int64").squeeze(*args), strides=True)
    check(lambda lib: lib.squeeze(make(lib, shape, "int64"), *args), strides=True)


def test_squeeze_keywords():
    check(lambda lib: make(lib, (1, 3, 1), "int64").squeeze(dim=0), strides=True)
    check(lambda lib: make(lib, (1, 3, 1), "int64").squeeze(dim=(0, 2)), strides=True)
    check(lambda lib: lib.squeeze(input=make(lib, (1, 3, 1), "int64"), dim=-1), strides=True)


@pytest.mark.parametrize("dim", [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unsqueeze_every_dim(dim, layout):
    check(lambda lib: make(lib, (2, 3, 4), "uint8", layout).unsqueeze(dim), strides=True)
    check(lambda lib: make(lib, (2, 0, 4), "uint8", layout).unsqueeze(dim), strides=True)


def test_unsqueeze_keyword_and_bad_types():
    check(lambda lib: lib.unsqueeze(make(lib, (2,), "int8"), dim=1), strides=True)
    check(lambda lib: make(lib, (2,), "int8").unsqueeze())
    check(lambda lib: make(lib, (2,), "int8").unsqueeze(1.0))
    check(lambda lib: make(lib, (2,), "int8").unsqueeze((0, 1)))


# ------------------------------------------------------------------- transpose / t / T / mT
@pytest.mark.parametrize("d0", [-4, -3, -1, 0, 1, 2, 3])
@pytest.mark.parametrize("d1", [-3, 0, 2, 3])
def test_transpose_dims(d0, d1):
    check(lambda lib: make(lib, (2, 3, 4), "float16").transpose(d0, d1), strides=True)
    check(lambda lib: make(lib, (2, 3, 4), "float16").swapaxes(d0, d1), strides=True)
    check(lambda lib: lib.swapdims(make(lib, (2, 3, 4), "float16"), d0, d1), strides=True)


@pytest.mark.parametrize("shape", [(), (3,), (0,), (2, 3), (0, 3), (3, 0), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_t_T_mT(shape, layout):
    check(lambda lib: make(lib, shape, "int16", layout).t(), strides=True)
    check(lambda lib: lib.t(make(lib, shape, "int16", layout)), strides=True)
    if len(shape) >= 2:  # mT on fewer dims is deprecated in torch
        check(lambda lib: make(lib, shape, "int16", layout).mT, strides=True)
    if len(shape) in (0, 2):  # T on other ranks is deprecated in torch
        check(lambda lib: make(lib, shape, "int16", layout).T, strides=True)


def test_transpose_keywords():
    check(lambda lib: make(lib, (2, 3), "int32").transpose(dim0=0, dim1=1), strides=True)
    check(lambda lib: lib.transpose(input=make(lib, (2, 3), "int32"), dim0=1, dim1=0), strides=True)
    check(lambda lib: make(lib, (2, 3), "int32").transpose(0))
    check(lambda lib: make(lib, (2, 3), "int32").transpose(0, 1, 2))
    check(lambda lib: make(lib, (2, 3), "int32").transpose(dim0=0, dimx=1))


# --------------------------------------------------------------------------- permute
@pytest.mark.parametrize("dims", [(0, 1, 2), (2, 1, 0), (1, 2, 0), (-1, 0, 1), (0, 1), (0, 1, 1), (0, 1, 3),
                                  (0, 1, 2, 3), (0, -4, 1), (2, -1, 0)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_permute(dims, layout):
    check(lambda lib: make(lib, (2, 3, 4), "int32", layout).permute(*dims), strides=True)
    check(lambda lib: make(lib, (2, 3, 4), "int32", layout).permute(dims), strides=True)
    check(lambda lib: make(lib, (2, 3, 4), "int32", layout).permute(list(dims)), strides=True)
    check(lambda lib: lib.permute(make(lib, (2, 3, 4), "int32", layout), dims), strides=True)
    check(lambda lib: lib.permute(make(lib, (2, 3, 4), "int32", layout), dims=dims), strides=True)


def test_permute_2d_forms():
    check(lambda lib: make(lib, (2, 3), "float32").permute(1, 0), strides=True)
    check(lambda lib: make(lib, (2, 3), "float32").permute((1, 0)), strides=True)
    check(lambda lib: lib.permute(make(lib, (2, 3), "float32"), (1, 0)), strides=True)
    check(lambda lib: lib.permute(make(lib, (2, 3), "float32"), 1, 0))
    check(lambda lib: make(lib, (2, 3), "float32").permute(1.0, 0))


# ----------------------------------------------------------------------- movedim / moveaxis
@pytest.mark.parametrize("src,dst", [(0, 0), (0, 2), (2, 0), (-1, 1), (1, -3), ((0, 1), (1, 0)), ((0, 1), (2, 0)),
                                     ((0, 2), (-1, -2)), ((), ()), ([0], [2]), ((0, 1, 2), (2, 0, 1)),
                                     (3, 0), (0, -4), ((0, 0), (1, 2)), ((0, 1), (2, 2)), ((0, 1), (1,)),
                                     (0, (1,)), ((1,), 0)])
def test_movedim(src, dst):
    check(lambda lib: make(lib, (2, 3, 4), "int8").movedim(src, dst), strides=True)
    check(lambda lib: make(lib, (2, 3, 4), "int8", "transposed").moveaxis(src, dst), strides=True)
    check(lambda lib: lib.movedim(make(lib, (2, 3, 4), "int8"), source=src, destination=dst), strides=True)


# --------------------------------------------------------------- expand / broadcast_to
@pytest.mark.parametrize("src,size", [((3, 1), (3, 4)), ((3, 1), (2, 3, 4)), ((3, 1), (-1, 4)), ((3, 1), (2, -1, 5)),
                                      ((1,), (0,)), ((1, 1), (0, 0)), ((3, 1), (3, 0)), ((3, 1), (0, 3, 1)),
                                      ((3, 1), (4, 4)), ((3, 1), (-1, -1)), ((3, 1), (4,)), ((3, 1), (-1, 3, 1)),
                                      ((3, 1), (3, -2)), ((0, 1), (0, 3)), ((0, 1), (1, 3)), ((), (2, 3)),
                                      ((), ()), ((), (-1,)), ((2, 1), (2, 1)), ((3, 1), (1, 3, 1))])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
def test_expand(src, size, layout):
    check(lambda lib: make(lib, src, "float32", layout).expand(*size), strides=True)
    check(lambda lib: make(lib, src, "float32", layout).expand(size), strides=True)
    check(lambda lib: make(lib, src, "float32", layout).broadcast_to(size), strides=True)
    check(lambda lib: lib.broadcast_to(make(lib, src, "float32", layout), size), strides=True)


def test_expand_as_and_keywords():
    check(lambda lib: make(lib, (1, 3), "int64").expand_as(lib.empty(2, 2, 3, dtype=lib.uint8)), strides=True)
    check(lambda lib: make(lib, (2, 3), "int64").expand_as(lib.empty(3, 3)))
    check(lambda lib: make(lib, (1, 3), "int64").expand(size=(2, 3)), strides=True)
    check(lambda lib: lib.broadcast_to(input=make(lib, (1, 3), "int64"), size=(2, 3)), strides=True)
    check(lambda lib: make(lib, (1, 3), "int64").expand(2, 3, implicit=True), strides=True)


def test_expanded_shares_element():
    x = ember.zeros(1, 3)
    e = x.expand(4, 3)
    x[0, 1] = 7
    assert e.tolist() == [[0.0, 7.0, 0.0]] * 4
    assert e.stride() == (0, 1) and not e.is_contiguous()


# ----------------------------------------------------------------------- narrow / select
@pytest.mark.parametrize("dim,start,length", [(0, 0, 2), (0, 1, 2), (0, -1, 1), (0, -3, 3), (1, 2, 0), (1, -2, 2),
                                              (0, 3, 0), (0, 3, 1), (0, 4, 0), (0, -4, 1), (0, 1, 3), (0, 0, -1),
                                              (2, 0, 1), (-2, 1, 3), (-3, 0, 1)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_narrow(dim, start, length, layout):
    check(lambda lib: make(lib, (3, 4), "float64", layout).narrow(dim, start, length), strides=True)
    check(lambda lib: lib.narrow(make(lib, (3, 4), "float64", layout), dim, start, length), strides=True)


def test_narrow_tensor_start_and_keywords():
    check(lambda lib: make(lib, (5,), "int32").narrow(0, lib.tensor(2), 2), strides=True)
    check(lambda lib: make(lib, (5,), "int32").narrow(dim=0, start=1, length=3), strides=True)
    check(lambda lib: make(lib, (5,), "int32").narrow(0, 1.0, 3))


@pytest.mark.parametrize("dim,index", [(0, 0), (0, 2), (0, -1), (0, -3), (0, 3), (0, -4), (1, 3), (1, -4), (1, 4),
                                       (-1, 1), (2, 0), (-3, 0)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_select(dim, index, layout):
    check(lambda lib: make(lib, (3, 4), "int16", layout).select(dim, index), strides=True)
    check(lambda lib: lib.select(make(lib, (3, 4), "int16", layout), dim, index), strides=True)


def test_select_empty_dim():
    check(lambda lib: make(lib, (0, 4), "int16").select(0, 0))
    check(lambda lib: make(lib, (0, 4), "int16").select(1, 2), strides=True)
    check(lambda lib: make(lib, (3,), "int16").select(0, 1), strides=True)


# ---------------------------------------------------------------------------- unfold
@pytest.mark.parametrize("dim,size,step", [(0, 2, 1), (1, 2, 1), (1, 2, 2), (1, 3, 2), (1, 5, 1), (1, 6, 1), (1, 1, 5),
                                           (-1, 2, 3), (0, 3, 3), (1, 0, 1), (1, 2, 0), (1, 2, -1), (1, -1, 1),
                                           (2, 1, 1), (-3, 1, 1), (1, 4, 10)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unfold(dim, size, step, layout):
    check(lambda lib: make(lib, (3, 5), "int64", layout).unfold(dim, size, step), strides=True)


def test_unfold_keywords_and_empty():
    check(lambda lib: make(lib, (6,), "int64").unfold(dimension=0, size=2, step=2), strides=True)
    check(lambda lib: make(lib, (0, 4), "int64").unfold(1, 2, 1), strides=True)
    check(lambda lib: make(lib, (0, 4), "int64").unfold(0, 1, 1))
    check(lambda lib: make(lib, (0, 4), "int64").unfold(0, 0, 1), strides=True)


# ------------------------------------------------------------------------- as_strided
@pytest.mark.parametrize("size,stride,offset", [((2, 2), (1, 2), 0), ((3,), (2,), 1), ((2, 3), (3, 1), 6),
                                                ((4,), (0,), 11), ((2, 2), (0, 0), 0), ((12,), (1,), 0),
                                                ((13,), (1,), 0), ((12,), (1,), 1), ((2,), (11,), 0),
                                                ((2,), (12,), 0), ((0,), (1,), 12), ((0,), (1,), 13),
                                                ((2, 0), (100, 1), 12), ((), (), 11), ((), (), 12),
                                                ((2, 2), (-1, 1), 4), ((2,), (1,), -1), ((2, 2), (1,), 0),
                                                ((-1,), (1,), 0)])
def test_as_strided(size, stride, offset):
    """as_strided over a 12-element storage; out of bounds -> RuntimeError, as torch."""
    check(lambda lib: make(lib, (3, 4), "float32").as_strided(size, stride, offset), strides=True)
    check(lambda lib: lib.as_strided(make(lib, (3, 4), "float32"), size, stride, offset), strides=True)


def test_as_strided_offset_default_and_view_base():
    # the default storage_offset is the input's own, not 0
    def run(lib):
        x = make(lib, (3, 4), "int32")[1:]
        v = x.as_strided((2, 2), (1, 4))
        w = x.as_strided((2,), (1,), storage_offset=0)
        return v, v.storage_offset(), w, w.storage_offset()

    check(run, strides=True)
    check(lambda lib: make(lib, (3, 4), "int32")[1:].as_strided((3, 4), (4, 1)))
    check(lambda lib: make(lib, (3, 4), "int32").as_strided(size=(2,), stride=(2,), storage_offset=3),
          strides=True)


def test_as_strided_writes_through():
    x = ember.zeros(6, dtype=ember.int32)
    x.as_strided((2,), (3,), 1)[1] = 5
    assert x.tolist() == [0, 0, 0, 0, 5, 0]


# ----------------------------------------------------------------------- split / chunk / unbind
@pytest.mark.parametrize("arg", [1, 2, 3, 4, 5, 10, [1, 4], [2, 2, 1], [0, 5], [5], [0, 0, 5], [3, 3], [1, 1],
                                 (2, 3), [-1, 6], 0, -1])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_split(arg, dim):
    check(lambda lib: make(lib, (5, 5), "uint8").split(arg, dim), strides=True)
    check(lambda lib: lib.split(make(lib, (5, 5), "uint8", "transposed"), arg, dim), strides=True)


def test_split_empty_and_zero_size():
    check(lambda lib: make(lib, (0, 3), "float32").split(2), strides=True)
    check(lambda lib: make(lib, (0, 3), "float32").split(0), strides=True)
    check(lambda lib: make(lib, (3, 3), "float32").split(0, 1))
    check(lambda lib: make(lib, (0, 3), "float32").split([0, 0]), strides=True)


def test_split_with_sizes_keyword():
    check(lambda lib: make(lib, (5,), "int64").split(split_size=[2, 3]), strides=True)
    check(lambda lib: lib.split(make(lib, (5,), "int64"), split_size_or_sections=[2, 3], dim=0), strides=True)


@pytest.mark.parametrize("chunks", [1, 2, 3, 4, 5, 6, 7, 0, -1])
@pytest.mark.parametrize("dim", [0, 1, -2, 2])
def test_chunk(chunks, dim):
    check(lambda lib: make(lib, (6, 5), "int16").chunk(chunks, dim), strides=True)
    check(lambda lib: lib.chunk(make(lib, (6, 5), "int16", "stepped"), chunks, dim), strides=True)


def test_chunk_empty():
    check(lambda lib: make(lib, (0, 5), "int16").chunk(3), strides=True)
    check(lambda lib: make(lib, (0, 5), "int16").chunk(3, 1), strides=True)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3, 3, -4])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unbind(dim, layout):
    check(lambda lib: make(lib, (2, 3, 4), "bool", layout).unbind(dim), strides=True)
    check(lambda lib: lib.unbind(make(lib, (2, 3, 4), "bool", layout), dim), strides=True)
    check(lambda lib: make(lib, (2, 0, 4), "bool", layout).unbind(dim), strides=True)


def test_unbind_returns_tuple_and_iter():
    assert isinstance(ember.arange(6).view(2, 3).unbind(), tuple)
    assert isinstance(ember.arange(6).split(2), tuple)
    assert isinstance(ember.arange(6).chunk(2), tuple)
    check(lambda lib: list(make(lib, (3, 2), "int32")), strides=True)


# --------------------------------------------------------------------------- diagonal
@pytest.mark.parametrize("offset", [-4, -3, -1, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, -2), (0, 2), (2, 1), (0, 0), (0, 3)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
def test_diagonal(offset, dims, layout):
    check(lambda lib: make(lib, (3, 4, 2), "float32", layout).diagonal(offset, *dims), strides=True)
    check(lambda lib: lib.diagonal(make(lib, (3, 4, 2), "float32", layout), offset=offset, dim1=dims[0],
                                   dim2=dims[1]), strides=True)


def test_diagonal_of_1d_and_empty():
    check(lambda lib: make(lib, (3,), "float32").diagonal())
    check(lambda lib: make(lib, (0, 3), "float32").diagonal(), strides=True)
    check(lambda lib: make(lib, (3, 0), "float32").diagonal(-1), strides=True)


# ------------------------------------------------------------------- contiguous / clone
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_contiguous(layout, dtype):
    def run(lib):
        x = make(lib, (3, 4, 2), dtype, layout)
        c = x.contiguous()
        same = c.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        return c, same, c.is_contiguous(), x.is_contiguous(), c.storage_offset()

    check(run, strides=True)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_clone_preserves_strides(layout, dtype):
    def run(lib):
        x = make(lib, (3, 4, 2), dtype, layout)
        c = x.clone()
        same = c.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        return c, same, c.storage_offset(), lib.clone(x)

    check(run, strides=True)


@pytest.mark.parametrize("make_x", [
    lambda lib: make(lib, (2, 3, 4), "int32").permute(2, 0, 1),
    lambda lib: make(lib, (2, 3, 4), "int32").permute(1, 2, 0),
    lambda lib: make(lib, (4, 4), "int32")[::2, ::2],
    lambda lib: make(lib, (4, 4), "int32").t()[1:],
    lambda lib: make(lib, (1, 4), "int32").t(),
    lambda lib: make(lib, (3, 1, 4), "int32").transpose(0, 2),
    lambda lib: make(lib, (0, 3), "int32").t(),
    lambda lib: make(lib, (2, 3), "int32").unsqueeze(1).expand(2, 5, 3),
])
def test_clone_and_contiguous_formats(make_x):
    check(lambda lib: make_x(lib).clone(), strides=True)
    check(lambda lib: make_x(lib).contiguous(), strides=True)
    check(lambda lib: make_x(lib).clone(memory_format=lib.contiguous_format), strides=True)
    check(lambda lib: make_x(lib).clone(memory_format=lib.preserve_format), strides=True)


def test_clone_is_independent():
    x = ember.arange(4)
    c = x.clone()
    c[0] = 9
    assert x.tolist() == [0, 1, 2, 3] and c.tolist() == [9, 1, 2, 3]


# ------------------------------------------------------------ writes through views
WRITERS = {
    "view": lambda x: x.view(-1),
    "reshape": lambda x: x.reshape(3, 4),
    "flatten": lambda x: x.flatten(),
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "permute": lambda x: x.permute(1, 0),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2),
    "unfold": lambda x: x.unfold(1, 2, 1),
    "diagonal": lambda x: x.diagonal(),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "split": lambda x: x.split(2, 1)[1],
    "chunk": lambda x: x.chunk(3, 0)[2],
    "unbind": lambda x: x.unbind(1)[3],
    "as_strided": lambda x: x.as_strided((2, 2), (1, 4), 1),
    "movedim": lambda x: x.movedim(0, 1),
    "mT": lambda x: x.mT,
    "slice": lambda x: x[1:, ::2],
    "view_dtype": lambda x: x.view(x.dtype),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
}


@pytest.mark.parametrize("op", sorted(WRITERS))
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_writes_through_views(op, dtype):
    def run(lib):
        x = lib.zeros(3, 4, dtype=getattr(lib, dtype))
        v = WRITERS[op](x)
        v.fill_(1)
        return x

    check(run)

    def run_item(lib):
        x = lib.zeros(3, 4, dtype=getattr(lib, dtype))
        v = WRITERS[op](x)
        v.view(-1)[-1] = 1 if v.is_contiguous() else 0
        v[(0,) * v.dim()] = 1
        return x

    check(run_item)


def test_copy_into_view_modifies_base():
    def run(lib):
        x = lib.zeros(3, 4, dtype=lib.int64)
        x.t()[1].copy_(lib.tensor([1, 2, 3]))
        x.diagonal(1).copy_(lib.tensor([7]))
        x[:, 3:].copy_(lib.tensor([[4], [5], [6]]))
        return x

    check(run)


# ------------------------------------------------------- metadata: element_size, strides
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_element_size_and_itemsize(dtype):
    def run(lib):
        x = make(lib, (2, 3), dtype)
        return x.element_size(), x.itemsize, x.nbytes, x.t().nbytes, x.expand(4, 2, 3).nbytes

    check(run)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_stride_storage_offset_is_contiguous(layout):
    def run(lib):
        x = make(lib, (2, 3, 4), "int32", layout)
        return (x.stride(), x.stride(0), x.stride(-1), x.stride(dim=1), x.storage_offset(), x.is_contiguous(),
                x.size(), x.size(1), x.size(-1), x.dim(), x.ndim, x.numel())

    check(run)
    check(lambda lib: make(lib, (2, 3, 4), "int32", layout).stride(3))
    check(lambda lib: make(lib, (2, 3, 4), "int32", layout).stride(-4))


@pytest.mark.parametrize("make_x", [
    lambda lib: lib.empty(0),
    lambda lib: lib.empty(2, 0, 3),
    lambda lib: lib.empty(1, 3).expand(1, 3),
    lambda lib: lib.empty(4, 1).t(),
    lambda lib: lib.empty(3, 1, 2)[:, :, 0],
    lambda lib: lib.empty(1, 4)[:, ::2],
    lambda lib: lib.empty(4)[::2],
    lambda lib: lib.empty(3, 4)[:, :1],
    lambda lib: lib.empty(2, 1).expand(2, 3),
    lambda lib: lib.empty(2, 3).unsqueeze(1),
    lambda lib: lib.tensor(1.0),
    lambda lib: lib.empty(2, 3)[1:],
    lambda lib: lib.empty(2, 3)[1:].as_strided((3,), (1,)),
])
def test_is_contiguous_edge_cases(make_x):
    check(lambda lib: (make_x(lib).is_contiguous(), make_x(lib).stride()))


def test_data_ptr_differences():
    def run(lib):
        x = make(lib, (4, 5), "float64")
        return [x[1].data_ptr() - x.data_ptr(), x[:, 2].data_ptr() - x.data_ptr(),
                x.t()[3].data_ptr() - x.data_ptr(), x.view(lib.int32)[2, 3].data_ptr() - x.data_ptr(),
                x.view(lib.uint8)[1, 7].data_ptr() - x.data_ptr(),
                x.untyped_storage().data_ptr() - x[2:].untyped_storage().data_ptr(),
                x.untyped_storage().nbytes(), x[2:].untyped_storage().nbytes()]

    check(run)


# ------------------------------------------------------------------- hypothesis: reshapes
@st.composite
def shape_and_view(draw):
    dims = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))  # empty: see below
    n = math.prod(dims)
    # a new shape: a factorisation of n (or with one -1)
    new = []
    rest = n
    while rest > 1 and len(new) < 4:
        d = draw(st.sampled_from([k for k in range(1, rest + 1) if rest % k == 0]))
        new.append(d)
        rest //= d
    if rest != 1:
        new.append(rest)
    if n == 0:
        new = draw(st.sampled_from([[0], [0, *dims], [*dims, 0], dims]))
    if new and draw(st.booleans()) and n != 0:
        new[draw(st.integers(0, len(new) - 1))] = -1
    perm = draw(st.permutations(range(len(dims))))
    return dims, new, perm


@settings(max_examples=150, deadline=None, database=None, derandomize=True)
@given(shape_and_view(), st.sampled_from(["float32", "int8", "bool"]))
def test_reshape_and_view_of_permuted_hypothesis(case, dtype):
    dims, new, perm = case

    def run(lib, op):
        x = make(lib, dims, dtype).permute(perm)
        r = getattr(x, op)(new)
        return r, r.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()

    check(lambda lib: run(lib, "reshape"), strides=True)
    check(lambda lib: run(lib, "view"), strides=True)


@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 1, 0), (1, 0, 2)])
def test_reshape_of_empty_permuted_to_same_shape_keeps_strides(perm):
    """torch returns an alias with the input's strides when an empty tensor keeps its shape."""
    def run(lib, op):
        x = make(lib, (2, 0, 3), "float32").permute(perm)
        return getattr(x, op)(tuple(x.shape))

    check(lambda lib: run(lib, "view"), strides=True)
    check(lambda lib: run(lib, "reshape"), strides=True)


def test_narrow_and_split_at_the_end_keep_storage_offset():
    """An empty piece at the end of a dim starts there: storage_offset as torch."""
    def run(lib):
        x = make(lib, (2, 3), "int64")
        return [x.narrow(1, 3, 0).storage_offset(), x.narrow(0, 2, 0).storage_offset(),
                x.split([3, 0], 1)[1].storage_offset(), x.narrow(1, -0, 0).storage_offset()]

    check(run)
