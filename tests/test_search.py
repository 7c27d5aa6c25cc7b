"""Searching, counting and selecting by frequency against torch
(declarations/ops/search.yaml): unique / unique_consecutive with every flag and dim,
searchsorted / bucketize, bincount, histc, nanmedian and mode. Values, shapes and dtypes,
or the exception type when torch raises, over dtypes, 0-dim, empty and non-contiguous
inputs (x.t(), x[:, ::2])."""
from __future__ import annotations

import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import T, check, each, nested, torch

# The declared ops this module tests (search.yaml): test_op_coverage.py.
TESTED_OPS = {"_unique", "_unique_consecutive", "searchsorted", "bucketize", "bincount", "histc", "nanmedian",
              "mode"}

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
NAN = math.nan


def make(lib, shape, name="float32", layout="contiguous", seed=0, nan=False):
    """A seeded tensor with many ties: contiguous, transposed (x.t() of the last two dims)
    or stepped (x[:, ::2]); with nan, some floats are NaN."""
    shape = tuple(shape)
    if layout == "transposed":
        return make(lib, shape[:-2] + (shape[-1], shape[-2]), name, seed=seed, nan=nan).transpose(-1, -2)
    if layout == "stepped":
        return make(lib, (shape[0], 2 * shape[1]) + shape[2:], name, seed=seed, nan=nan)[:, ::2]
    n = math.prod(shape)
    rng = random.Random(f"{shape}-{name}-{seed}")
    if name == "bool":
        vals = [rng.random() < 0.5 for _ in range(n)]
    elif name.startswith("float") or name == "bfloat16":
        vals = [NAN if nan and rng.random() < 0.2 else rng.randint(-6, 6) / 2 for _ in range(n)]
    else:
        vals = [rng.randint(0, 5) if name == "uint8" else rng.randint(-3, 3) for _ in range(n)]
    dtype = getattr(lib, name)
    if n == 0:
        return lib.tensor([], dtype=dtype).view(*shape)
    return lib.tensor(nested(vals, list(shape)), dtype=dtype)


SHAPES = [((), "contiguous"), ((0,), "contiguous"), ((7,), "contiguous"), ((3, 4), "contiguous"),
          ((3, 4), "transposed"), ((3, 4), "stepped"), ((2, 3, 4), "contiguous"), ((0, 4), "contiguous")]

# ------------------------------------------------------------- known ember bugs / differences
# name -> (reason, repro(lib)): run as strict xfails, so a fix shows up as XPASS.
BUGS = {}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=r, strict=True))
                                  for n, (r, _) in BUGS.items()])
def test_known_bug(name):
    check(BUGS[name][1])


# ------------------------------------------------------------- unique
UNIQUE_CALLS = [
    lambda lib, x: lib.unique(x), lambda lib, x: x.unique(sorted=False),
    lambda lib, x: lib.unique(x, return_inverse=True), lambda lib, x: x.unique(return_counts=True),
    lambda lib, x: lib.unique(x, True, True, True), lambda lib, x: lib.unique_consecutive(x),
    lambda lib, x: x.unique_consecutive(return_inverse=True, return_counts=True),
    lambda lib, x: lib.unique_consecutive(x, return_counts=True),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique(dtype):
    each([(i, s, lay) for i in range(len(UNIQUE_CALLS)) for s, lay in SHAPES],
         lambda i, s, lay: check(lambda lib: UNIQUE_CALLS[i](lib, make(lib, s, dtype, lay))))


@pytest.mark.parametrize("dtype", ["int64", "float32", "bool"])
def test_unique_dim(dtype):
    def one(shape, layout, dim, consecutive):
        fn = "unique_consecutive" if consecutive else "unique"

        def call(lib):
            x = make(lib, shape, dtype, layout)
            return getattr(lib, fn)(x, return_inverse=True, return_counts=True, dim=dim)
        check(call)
        check(lambda lib: getattr(make(lib, shape, dtype, layout), fn)(dim=dim))
    shapes = [((5, 2), "contiguous"), ((5, 2), "transposed"), ((4, 3), "stepped"), ((3, 2, 2), "contiguous"),
              ((2, 0), "contiguous"), ((0, 3), "contiguous"), ((6,), "contiguous")]
    each([(s, lay, d, c) for s, lay in shapes for d in range(-len(s), len(s)) for c in (False, True)], one)


def test_unique_special():
    cases = [
        lambda lib: lib.unique(T(lib, [NAN, 1.0, NAN, 1.0]), return_counts=True, return_inverse=True),
        lambda lib: lib.unique_consecutive(T(lib, [NAN, NAN, 1.0, 1.0]), return_counts=True),
        lambda lib: lib.unique(T(lib, [[NAN, 1.0], [NAN, 1.0]]), dim=0, return_inverse=True),
        lambda lib: lib.unique(T(lib, [[1, 2], [1, 2], [0, 5]], "int64"), dim=0, return_counts=True),
        lambda lib: lib.unique(lib.tensor(5), dim=0),  # IndexError
        lambda lib: lib.unique(lib.tensor([1, 2]), dim=2),  # IndexError
        lambda lib: lib.unique(lib.zeros(0, 3), dim=1),  # RuntimeError: unselected 0-sized dim
        lambda lib: lib.unique(T(lib, [-0.0, 0.0, 2.0]), return_counts=True),
    ]
    each([(c,) for c in cases], check)


# ------------------------------------------------------------- searchsorted / bucketize
def test_searchsorted():
    seq = [-2.0, -1.0, -1.0, 0.5, 3.0, 3.0, 7.0]

    def one(seq_dtype, val_dtype, kw, layout):
        def call(lib):
            s = T(lib, seq, seq_dtype)
            v = make(lib, (3, 4), val_dtype, layout)
            return lib.searchsorted(s, v, **kw)
        check(call)
    kws = [{}, {"right": True}, {"side": "right"}, {"side": "left"}, {"out_int32": True}]
    each([(sd, vd, kw, lay) for sd in ("float32", "int64", "float64") for vd in ("float32", "int32", "float16")
          for kw in kws for lay in ("contiguous", "transposed", "stepped")], one)


def test_searchsorted_shapes_and_sorter():
    cases = [
        lambda lib: lib.searchsorted(T(lib, [[1, 3, 5], [2, 4, 6]]), T(lib, [[3, 0], [6, 7]])),
        lambda lib: lib.searchsorted(T(lib, [[1, 3, 5], [2, 4, 6]]).t().contiguous().t(), T(lib, [[3], [6]]),
                                     right=True),
        lambda lib: lib.searchsorted(T(lib, [[[1, 3], [2, 4]]]), T(lib, [[[3, 0, 9], [2, 2, 5]]])),
        lambda lib: lib.searchsorted(T(lib, [1, 3, 5]), 3), lambda lib: lib.searchsorted(T(lib, [1, 3, 5]), 3.5),
        lambda lib: lib.searchsorted(T(lib, [1, 3, 5], "int64"), 3, right=True),
        lambda lib: lib.searchsorted(T(lib, [1, 3, 5]), T(lib, 4.0)),
        lambda lib: lib.searchsorted(T(lib, [1, 3, 5]), T(lib, [[]])),
        lambda lib: lib.searchsorted(T(lib, []), T(lib, [1.0, 2.0])),
        lambda lib: lib.searchsorted(T(lib, [1, NAN]), T(lib, [NAN, 2.0, 0.0])),
        lambda lib: lib.searchsorted(T(lib, [3, 1, 2]), T(lib, [2, 0, 4]), sorter=T(lib, [1, 2, 0], "int64")),
        lambda lib: lib.searchsorted(T(lib, [3, 1, 2]), T(lib, [2.0]), side="right", sorter=T(lib, [1, 2, 0], "int64")),
        lambda lib: lib.searchsorted(T(lib, [[3, 1], [1, 2]]), T(lib, [[2.0], [1.5]]), sorter=T(lib, [[1, 0], [0, 1]],
                                                                                                   "int64")),
        lambda lib: lib.searchsorted(input=T(lib, [2.0]), sorted_sequence=T(lib, [1, 2, 3])),
        # errors
        lambda lib: lib.searchsorted(T(lib, [[1, 2], [3, 4]]), T(lib, [1, 2, 3])),
        lambda lib: lib.searchsorted(T(lib, [1, 2]), T(lib, [1.0]), side="left", right=True),
        lambda lib: lib.searchsorted(T(lib, [1, 2]), T(lib, [1.0]), side="up"),
        lambda lib: lib.searchsorted(T(lib, 1.0), T(lib, [1.0])),
        lambda lib: lib.searchsorted(T(lib, [[1, 2], [3, 4]]), T(lib, 3.0)),
        lambda lib: lib.searchsorted(T(lib, [3, 1, 2]), T(lib, [2.0]), sorter=T(lib, [1, 2], "int64")),
        lambda lib: lib.searchsorted(T(lib, [3, 1, 2]), T(lib, [2.0]), sorter=T(lib, [1, 2, 5], "int64")),
        lambda lib: lib.searchsorted(T(lib, [True, False], "bool"), T(lib, [True], "bool")),
    ]
    each([(c,) for c in cases], check)


def test_searchsorted_out():
    def fn(lib):
        out = lib.full((2,), 9, dtype=lib.int64)
        r = lib.searchsorted(T(lib, [1, 3, 5]), T(lib, [3, 6]), out=out)
        assert r is out
        return out
    check(fn)


def test_bucketize():
    bounds = [-1.0, 0.0, 0.5, 0.5, 2.0]
    each([(d, lay, right) for d in ("float32", "float64", "int64", "uint8") for lay in ("contiguous", "transposed")
          for right in (False, True)],
         lambda d, lay, right: check(lambda lib: lib.bucketize(make(lib, (3, 4), d, lay), T(lib, bounds), right=right)))
    cases = [
        lambda lib: lib.bucketize(3, T(lib, [1, 3, 5])), lambda lib: lib.bucketize(2.5, T(lib, [1, 3, 5]), right=True),
        lambda lib: lib.bucketize(T(lib, []), T(lib, [1, 3])),
        lambda lib: lib.bucketize(T(lib, [2.0]), T(lib, [1, 3]), out_int32=True),
        lambda lib: lib.bucketize(T(lib, [2.0]), T(lib, [[1, 3]])),  # RuntimeError: 2-D boundaries
        lambda lib: lib.bucketize(T(lib, [2.0]), T(lib, 1.0)),
    ]
    each([(c,) for c in cases], check)


# ------------------------------------------------------------- bincount / histc
def test_bincount():
    cases = [
        lambda lib: lib.bincount(T(lib, [1, 1, 3, 0, 5], "int64")),
        lambda lib: T(lib, [2, 2, 0], "uint8").bincount(minlength=6),
        lambda lib: T(lib, [2, 2, 0], "int32").bincount(minlength=1),
        lambda lib: lib.bincount(T(lib, [0, 1, 4, 2, 3, 4], "int64")[::2]),
        lambda lib: lib.bincount(T(lib, [], "int64")), lambda lib: lib.bincount(T(lib, [], "int64"), minlength=3),
        lambda lib: lib.bincount(T(lib, [1, 1, 3], "int64"), T(lib, [0.5, 1.0, 2.0])),
        lambda lib: lib.bincount(T(lib, [1, 1, 3], "int64"), weights=T(lib, [0.5, 1.0, 2.0], "float64")),
        lambda lib: lib.bincount(T(lib, [1, 1, 3], "int64"), T(lib, [1, 2, 3], "int64")),
        lambda lib: lib.bincount(T(lib, [1, 1, 3], "int64"), T(lib, [1, 2, 3], "float16")),
        lambda lib: lib.bincount(T(lib, [1, 0], "int16"), T(lib, [True, True], "bool"), 4),
        # errors
        lambda lib: lib.bincount(T(lib, [1.0, 2.0])), lambda lib: lib.bincount(T(lib, [True], "bool")),
        lambda lib: lib.bincount(T(lib, [-1, 2], "int64")), lambda lib: lib.bincount(T(lib, [[1, 2]], "int64")),
        lambda lib: lib.bincount(T(lib, 1, "int64")), lambda lib: lib.bincount(T(lib, [1], "int64"), minlength=-1),
        lambda lib: lib.bincount(T(lib, [1, 2], "int64"), T(lib, [1.0])),
    ]
    each([(c,) for c in cases], check)


def test_histc():
    def one(dtype, shape, layout, kw):
        check(lambda lib: lib.histc(make(lib, shape, dtype, layout), **kw))
    kws = [{}, {"bins": 4}, {"bins": 7, "min": -1, "max": 2}, {"bins": 3, "min": 0.1, "max": 2.9},
           {"bins": 5, "min": 1, "max": 1}]
    each([(d, s, lay, kw) for d in ("float32", "float64", "float16", "bfloat16") for kw in kws
          for s, lay in SHAPES if not (s == () and kw.get("min") == 1)], one)
    cases = [
        lambda lib: T(lib, [0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).histc(bins=3, min=0.1, max=9.7),
        lambda lib: T(lib, [1.0, 1.0]).histc(bins=4), lambda lib: T(lib, [1.0, 5.0, 9.0]).histc(3, 1, 9),
        lambda lib: T(lib, [1.0, NAN]).histc(bins=3, min=0, max=2),
        lambda lib: T(lib, [1, 2], "int64").histc(), lambda lib: T(lib, [1.0]).histc(bins=0),
        lambda lib: T(lib, [1.0]).histc(min=3, max=1), lambda lib: T(lib, [1.0, NAN]).histc(bins=3),
        lambda lib: T(lib, [1.0, math.inf]).histc(bins=3),
    ]
    each([(c,) for c in cases], check)

    def out(lib):
        o = lib.zeros(2)
        r = lib.histc(T(lib, [1.0, 2.0, 2.0]), 3, out=o)
        assert r is o
        return o
    check(out)


# ------------------------------------------------------------- nanmedian / mode
def test_nanmedian():
    def one(dtype, shape, layout, nan):
        x = lambda lib: make(lib, shape, dtype, layout, nan=nan)  # noqa: E731
        check(lambda lib: x(lib).nanmedian())
        for d in range(-max(len(shape), 1), max(len(shape), 1)):
            check(lambda lib: lib.nanmedian(x(lib), d))
            check(lambda lib: x(lib).nanmedian(dim=d, keepdim=True))
    each([(d, s, lay, nan) for d in ("float32", "float64", "float16", "int64", "uint8") for s, lay in SHAPES
          for nan in (False, True) if nan is False or d.startswith("float")], one)
    cases = [
        lambda lib: T(lib, [[NAN, NAN], [1.0, NAN]]).nanmedian(1), lambda lib: T(lib, [NAN]).nanmedian(),
        lambda lib: T(lib, [NAN, 2.0, 1.0, NAN, 4.0]).nanmedian(0), lambda lib: T(lib, [True], "bool").nanmedian(),
        lambda lib: lib.zeros(3, 0).nanmedian(1), lambda lib: lib.zeros(0, 3).nanmedian(1),
        lambda lib: lib.zeros(3).nanmedian(1),
    ]
    each([(c,) for c in cases], check)


def test_mode():
    def one(dtype, shape, layout):
        x = lambda lib: make(lib, shape, dtype, layout)  # noqa: E731
        check(lambda lib: x(lib).mode())
        for d in range(-max(len(shape), 1), max(len(shape), 1)):
            check(lambda lib: lib.mode(x(lib), d))
            check(lambda lib: x(lib).mode(dim=d, keepdim=True))
    each([(d, s, lay) for d in ("bool", "uint8", "int64", "float16", "float64") for s, lay in SHAPES if s != (0,)],
         one)
    cases = [
        lambda lib: T(lib, [1, 2, 2, 3, 3, 1, 1, 2], "int64").mode(), lambda lib: T(lib, [2, 2, 1, 1], "int64").mode(),
        lambda lib: T(lib, [5, 3, 3, 5, 4, 4], "int64").mode(), lambda lib: T(lib, [[1, 2, 2], [3, 3, 1]]).mode(0),
        lambda lib: T(lib, [1.0, NAN]).mode(), lambda lib: lib.zeros(0).mode(), lambda lib: lib.zeros(2, 0).mode(0),
        lambda lib: lib.zeros(2).mode(1),
    ]
    each([(c,) for c in cases], check)


def test_mode_nan_and_ties_long_rows():
    """NaNs (whose comparisons are all false) and many ties, in rows short enough for an
    insertion sort and long enough for torch's introsort: values and indices as torch's."""
    rng = random.Random(7)
    def one(n, seed):
        r = random.Random(seed)
        values = [r.choice([NAN, 1.0, 2.0, 3.0, -1.0]) for _ in range(n)]
        check(lambda lib: T(lib, values).mode())
        check(lambda lib: T(lib, values, "float16").mode())
    each([(n, rng.random()) for n in (1, 2, 3, 5, 15, 16, 17, 31, 33, 64, 100) for _ in range(4)], one)
    rows = [[rng.choice([NAN, 0.0, 1.0]) for _ in range(20)] for _ in range(6)]
    check(lambda lib: T(lib, rows).mode(1))
    check(lambda lib: T(lib, rows).t().mode(0, keepdim=True))
    ints = [[rng.randint(0, 3) for _ in range(40)] for _ in range(3)]
    check(lambda lib: T(lib, ints, "int64").mode(1))
