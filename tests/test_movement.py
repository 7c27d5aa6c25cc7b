"""Joining, reordering and indexed data movement against torch (declarations/ops/movement.yaml):
result values, shapes and dtypes, or the exception type when torch raises.

Each op runs over several dtypes and shapes (0-dim, empty, 3-D), negative dims and
non-contiguous inputs (x.t(), x[:, ::2]); then mixed-dtype cat, NaN and ties in
sort/topk/kthvalue/median, out= and in-place forms, and the error cases."""
from __future__ import annotations

import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import T, assert_same, check, each, nested, torch

# The declared ops this module tests (movement.yaml): test_op_coverage.py.
TESTED_OPS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
    "flip", "fliplr", "flipud", "roll", "repeat", "tile", "tril", "triu", "index_select",
    "masked_select", "take", "take_along_dim", "gather", "scatter", "scatter_add", "sort",
    "argsort", "msort", "topk", "kthvalue", "median"}

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
NAN = math.nan


# ---------------------------------------------------------------------------- inputs
def rand_values(n, name, seed=0, distinct=False):
    """n seeded values exact in the dtype; distinct ones (for index comparisons) where the
    dtype can hold them, else small ones with many ties."""
    rng = random.Random(f"{name}-{n}-{seed}")
    if name == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    if distinct:
        vals = rng.sample(range(200), n)
        return [v / 4 - 20 for v in vals] if name.startswith("float") else \
            [v if name == "uint8" else v - 100 for v in vals]
    if name.startswith("float"):
        return [rng.randint(-6, 6) / 4 for _ in range(n)]
    return [rng.randint(0, 5) if name == "uint8" else rng.randint(-3, 3) for _ in range(n)]


def make(lib, shape, name="float32", layout="contiguous", seed=0, distinct=False):
    """A tensor of this shape and dtype: contiguous, transposed (last two dims swapped, as
    x.t()) or stepped (x[:, ::2])."""
    shape = tuple(shape)
    if layout == "transposed":
        return make(lib, shape[:-2] + (shape[-1], shape[-2]), name, seed=seed, distinct=distinct).transpose(-1, -2)
    if layout == "stepped":
        return make(lib, (shape[0], 2 * shape[1]) + shape[2:], name, seed=seed, distinct=distinct)[:, ::2]
    n = math.prod(shape)
    dtype = getattr(lib, name)
    if n == 0:
        return lib.tensor([], dtype=dtype).view(*shape)
    return lib.tensor(nested(rand_values(n, name, seed, distinct), list(shape)), dtype=dtype)


def idx(lib, values, name="int64"):
    return lib.tensor(values, dtype=getattr(lib, name))


SHAPES_2D = [((3, 4), "contiguous"), ((3, 4), "transposed"), ((3, 4), "stepped"), ((2, 3, 4), "contiguous"),
             ((2, 3, 4), "stepped"), ((0, 4), "contiguous")]


# ------------------------------------------------------------- known ember bugs
# name -> (reason, repro(lib)): run as strict xfails, so a fix shows up as XPASS.
BUGS = {}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=r, strict=True))
                                  for n, (r, _) in BUGS.items()])
def test_known_bug(name):
    check(BUGS[name][1])


# ------------------------------------------------------------- joining
JOIN_CASES = [
    ("cat", lambda lib, ts: lib.cat(ts)), ("cat1", lambda lib, ts: lib.cat(ts, 1)),
    ("cat-1", lambda lib, ts: lib.cat(ts, dim=-1)), ("concat", lambda lib, ts: lib.concat(ts, -2)),
    ("concatenate", lambda lib, ts: lib.concatenate(ts, 0)),
    ("stack", lambda lib, ts: lib.stack(ts)), ("stack2", lambda lib, ts: lib.stack(ts, 2)),
    ("stack-1", lambda lib, ts: lib.stack(ts, -1)), ("hstack", lambda lib, ts: lib.hstack(ts)),
    ("vstack", lambda lib, ts: lib.vstack(ts)), ("row_stack", lambda lib, ts: lib.row_stack(ts)),
    ("dstack", lambda lib, ts: lib.dstack(ts)),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_join(dtype):
    def one(op, layout, shape):
        fn = dict(JOIN_CASES)[op]
        check(lambda lib: fn(lib, [make(lib, shape, dtype, layout, seed=s) for s in range(3)]))
    each([(op, lay, shape) for op, _ in JOIN_CASES for shape, lay in SHAPES_2D], one)


def test_join_shapes():
    cases = [  # (op, shapes, dim)
        ("cat", [(2, 3), (4, 3)], 0), ("cat", [(2, 3), (2, 1), (2, 0)], 1), ("cat", [(0,), (2, 3)], 0),
        ("cat", [(2, 3), (0,)], 1), ("cat", [(3,)], 0), ("cat", [(2,), (3,)], -1),
        ("cat", [(2, 3), (3, 3)], 1), ("cat", [(2, 3), (2, 3, 1)], 0), ("cat", [(2, 3)], 2),
        ("cat", [(2, 3)], -3), ("cat", [(), ()], 0),
        ("stack", [(2, 3), (2, 3)], 2), ("stack", [(), ()], 0), ("stack", [(2, 3), (3, 2)], 0),
        ("stack", [(2, 3)], 3), ("stack", [(2, 3)], -4), ("stack", [], 0), ("stack", [(0, 2), (0, 2)], 1),
        ("hstack", [(2,), (3,)], None), ("hstack", [(), ()], None), ("hstack", [(2, 1), (2, 3)], None),
        ("hstack", [(2, 1), (3, 1)], None), ("vstack", [(3,), (3,)], None), ("vstack", [(), ()], None),
        ("vstack", [(2, 3), (3,)], None), ("vstack", [(2,), (3,)], None), ("row_stack", [(1, 2), (2, 2)], None),
        ("dstack", [(2,), (2,)], None), ("dstack", [(), ()], None), ("dstack", [(2, 3), (2, 3)], None),
        ("dstack", [(2, 3, 1), (2, 3, 2)], None), ("dstack", [(2, 3), (3, 2)], None),
    ]

    def one(op, shapes, dim):
        args = () if dim is None else (dim,)
        check(lambda lib: getattr(lib, op)([make(lib, s, "float32", seed=i) for i, s in enumerate(shapes)], *args))
    each(cases, one)


def test_cat_promotion():
    pairs = [("bool", "uint8"), ("uint8", "int32"), ("int32", "int64"), ("int64", "float16"),
             ("float16", "float32"), ("float32", "float64"), ("bool", "float64"), ("uint8", "float16")]

    def one(a, b, op):
        check(lambda lib: getattr(lib, op)([make(lib, (2, 3), a), make(lib, (2, 3), b, seed=1)]))
    each([(a, b, op) for a, b in pairs for op in ("cat", "stack", "hstack", "vstack", "dstack")], one)


def test_join_out():
    def one(op, out_shape, out_dtype):
        def fn(lib):
            out = lib.full(out_shape, 7, dtype=getattr(lib, out_dtype))
            r = getattr(lib, op)([make(lib, (2, 3)), make(lib, (2, 3), seed=1)], out=out)
            assert r is out
            return out
        check(fn)
    each([(op, s, d) for op in ("cat", "stack", "hstack", "vstack", "dstack")
          for s in [(0,), (4, 3)] for d in ["float32", "float64"]], one)


# ------------------------------------------------------------- reordering
def test_flip_roll():
    cases = [  # (name, fn)
        ("flip0", lambda lib, x: x.flip(0)), ("flip-1", lambda lib, x: lib.flip(x, [-1])),
        ("flip01", lambda lib, x: x.flip(0, 1)), ("flip_all", lambda lib, x: lib.flip(x, list(range(x.dim())))),
        ("flip_none", lambda lib, x: x.flip([])), ("fliplr", lambda lib, x: x.fliplr()),
        ("flipud", lambda lib, x: lib.flipud(x)), ("roll1", lambda lib, x: x.roll(1)),
        ("roll-5", lambda lib, x: lib.roll(x, -5)), ("roll_dim", lambda lib, x: x.roll(2, 0)),
        ("roll_negdim", lambda lib, x: x.roll(-7, -1)), ("roll_multi", lambda lib, x: x.roll((1, -2), (0, 1))),
        ("roll_big", lambda lib, x: lib.roll(x, 13, 1)), ("roll_same_dim", lambda lib, x: x.roll((1, 1), (1, 1))),
    ]
    shapes = SHAPES_2D + [((5,), "contiguous"), ((), "contiguous"), ((0,), "contiguous")]

    def one(name, dtype, shape, layout):
        fn = dict(cases)[name]
        check(lambda lib: fn(lib, make(lib, shape, dtype, layout)))
    each([(n, d, s, lay) for n, _ in cases for d in ("bool", "int64", "float16", "float64") for s, lay in shapes
          if not (s == (0,) and n in ("roll_multi", "roll_big", "roll_same_dim"))],
         one)
    check(lambda lib: make(lib, ()).fliplr())


def test_flip_roll_errors():
    each([(f,) for f in [lambda lib: make(lib, (2, 3)).flip(2), lambda lib: make(lib, (2, 3)).flip(0, 0),
                         lambda lib: make(lib, (3,)).fliplr(), lambda lib: make(lib, ()).flipud(),
                         lambda lib: make(lib, (2, 3)).roll(1, 2), lambda lib: make(lib, (2, 3)).roll((1, 2), (0,)),
                         lambda lib: make(lib, (2, 3)).roll((1, 2))]], check)


def test_repeat_tile():
    reps = [(2,), (1, 1), (2, 3), (3, 1, 2), (0, 2), (1,), (2, 1, 1, 2), ()]
    shapes = [((), "contiguous"), ((3,), "contiguous"), ((2, 3), "contiguous"), ((2, 3), "transposed"),
              ((2, 3), "stepped"), ((0, 3), "contiguous"), ((2, 1, 3), "contiguous")]

    def one(op, dtype, shape, layout, r):
        check(lambda lib: getattr(make(lib, shape, dtype, layout), op)(*r))
        if op == "tile":
            check(lambda lib: lib.tile(make(lib, shape, dtype, layout), r))
        else:
            check(lambda lib: make(lib, shape, dtype, layout).repeat(list(r)))
    each([(op, d, s, lay, r) for op in ("repeat", "tile") for d in ("bool", "uint8", "float32")
          for s, lay in shapes for r in reps], one)
    check(lambda lib: make(lib, (2, 3)).repeat(2, -1))  # negative repeat


def test_tril_triu():
    shapes = SHAPES_2D + [((4, 2), "contiguous"), ((1, 1), "contiguous"), ((3,), "contiguous"), ((), "contiguous")]

    def one(op, dtype, shape, layout, k):
        check(lambda lib: getattr(lib, op)(make(lib, shape, dtype, layout), k))
        check(lambda lib: getattr(make(lib, shape, dtype, layout), op)(diagonal=k))

        def inplace(lib):
            x = make(lib, shape, dtype, layout)
            r = getattr(x, op + "_")(k)
            assert r is x
            return x
        check(inplace)

        def out(lib):
            o = lib.empty(0, dtype=getattr(lib, dtype))
            r = getattr(lib, op)(make(lib, shape, dtype, layout), k, out=o)
            assert r is o
            return o
        check(out)
    each([(op, d, (3, 4), "contiguous", k) for op in ("tril", "triu") for d in DTYPES for k in (0, -1)]
         + [(op, "float32", s, lay, k) for op in ("tril", "triu") for s, lay in shapes for k in (1, 5, -5)], one)


# ------------------------------------------------------------- indexed reads
def test_index_select():
    def one(dtype, shape, layout, dim, index, idtype):
        check(lambda lib: make(lib, shape, dtype, layout).index_select(dim, idx(lib, index, idtype)))
        check(lambda lib: lib.index_select(make(lib, shape, dtype, layout), dim, idx(lib, index, idtype),
                                           out=lib.empty(0, dtype=getattr(lib, dtype))))
    cases = [(d, s, lay, dim, i, it) for d in DTYPES for s, lay in SHAPES_2D[:5] for dim, i in
             [(0, [2, 0, 0, 1]), (-1, [3, 1]), (1, []), (-2, [1])] for it in ("int64", "int32")]
    cases += [("float32", (3, 4), "contiguous", 0, i, it) for i, it in
              [([3], "int64"), ([-1], "int64"), ([0.0], "float32"), ([[0, 1]], "int64"), (0, "int64"),
               ([True], "bool"), ([0], "int16")]]
    cases += [("float32", (3, 4), "contiguous", 2, [0], "int64"), ("int64", (), "contiguous", 0, [0], "int64"),
              ("int64", (), "contiguous", 0, 0, "int64"), ("int64", (), "contiguous", 0, [1], "int64"),
              ("float32", (0, 4), "contiguous", 1, [0], "int64")]
    each(cases, one)


def test_masked_select():
    def one(dtype, shape, layout, mask_shape, mask_dtype):
        check(lambda lib: make(lib, shape, dtype, layout).masked_select(make(lib, mask_shape, mask_dtype, seed=5)))
    cases = [(d, s, lay, s, "bool") for d in DTYPES for s, lay in SHAPES_2D]
    cases += [("float32", (3, 4), "contiguous", m, md) for m, md in
              [((4,), "bool"), ((3, 1), "bool"), ((2, 3, 4), "bool"), ((), "bool"), ((3, 4), "uint8"),
               ((3, 4), "float32"), ((3, 4), "int64"), ((5,), "bool")]]
    cases += [("int64", (), "contiguous", (), "bool"), ("int64", (4,), "contiguous", (3, 4), "bool")]
    each(cases, one)


def test_take_take_along_dim():
    def take(dtype, shape, layout, index, idtype):
        check(lambda lib: lib.take(make(lib, shape, dtype, layout), idx(lib, index, idtype)))
    cases = [(d, s, lay, i, "int64") for d in DTYPES for s, lay in SHAPES_2D[:5]
             for i in ([0, -1, 5, 2], [[1, 2], [3, -4]], 3, [])]
    cases += [("float32", (3, 4), "contiguous", i, it) for i, it in
              [([12], "int64"), ([-13], "int64"), ([1], "int32"), ([1.0], "float32"), ([True], "bool")]]
    cases += [("int64", (), "contiguous", [0, 0, -1], "int64"), ("int64", (0, 4), "contiguous", [0], "int64"),
              ("int64", (0, 4), "contiguous", [], "int64")]
    each(cases, take)

    def along(dtype, shape, layout, index, dim):
        args = () if dim is None else (dim,)
        check(lambda lib: make(lib, shape, dtype, layout).take_along_dim(idx(lib, index), *args))
        check(lambda lib: lib.take_along_dim(make(lib, shape, dtype, layout), idx(lib, index), *args))
    cases = [(d, (3, 4), lay, i, dim) for d in ("bool", "int32", "float16", "float64")
             for lay in ("contiguous", "transposed", "stepped")
             for i, dim in [([[0], [3], [1]], 1), ([[2, 0, 1, 1]], 0), ([[1, 0]], -1), ([[0], [1]], 0),
                            ([0, 11, 5], None), ([[2, 2, 1, 0]], -2), ([[[1]]], 1), ([[0, 1]], 0)]]
    each([c for c in cases if c[4] is not None or c[2] == "contiguous"], along)  # torch can't view others
    check(lambda lib: make(lib, (3, 4)).take_along_dim(idx(lib, [[0]], "int32"), 1))
    check(lambda lib: make(lib, (3, 4)).take_along_dim(idx(lib, [[0]]), 2))


def test_gather():
    def one(dtype, shape, layout, dim, index, idtype):
        check(lambda lib: make(lib, shape, dtype, layout).gather(dim, idx(lib, index, idtype)))
        check(lambda lib: lib.gather(make(lib, shape, dtype, layout), dim, idx(lib, index, idtype),
                                     out=lib.empty(0, dtype=getattr(lib, dtype))))
    idxs = [(0, [[2, 0, 1, 1], [0, 0, 0, 0]]), (1, [[3, 0], [1, 1], [2, 2]]), (-1, [[0], [3]]), (-2, [[1, 2]]),
            (1, [[0, 1, 2, 3, 0]]), (0, [[0]]), (0, [[0], [0], [0], [0]])]
    cases = [(d, (3, 4), lay, dim, i, "int64") for d in DTYPES for lay in ("contiguous", "transposed", "stepped")
             for dim, i in idxs]
    cases += [("float32", (3, 4), "contiguous", dim, i, it) for dim, i, it in
              [(1, [[4]], "int64"), (1, [[-1]], "int64"), (0, [[3]], "int64"), (1, [[0.0]], "float32"), (2, [[0]], "int64"), (0, [0], "int64"), (0, [[[0]]], "int64"),
               (1, [[0]], "bool")]]
    cases += [("int64", (2, 3, 4), "contiguous", 1, [[[2, 1], [0, 0]]], "int64"),
              ("int64", (2, 3, 4), "stepped", -1, [[[3]], [[1]]], "int64"), ("int64", (), "contiguous", 0, 0, "int64"),
              ("int64", (), "contiguous", 0, [0], "int64"), ("int64", (3,), "contiguous", 0, [], "int64"),
              ("int64", (0, 4), "contiguous", 1, [[]], "int64")]
    each(cases, one)


# ------------------------------------------------------------- scatter
def scatter_forms(op, dim, index_fn, src_fn):
    """The function, method, in-place (returns self) and out= forms of scatter/scatter_add."""
    def forms(lib, x):
        i, s = index_fn(lib), src_fn(lib)
        yield getattr(lib, op)(x.clone(), dim, i, s)
        yield getattr(x.clone(), op)(dim, i, s)
        y = x.clone()
        assert getattr(y, op + "_")(dim, i, s) is y
        yield y
        o = lib.empty(0, dtype=x.dtype)
        assert getattr(lib, op)(x, dim, i, s, out=o) is o
        yield o
    return forms


def test_scatter():
    # unique indices along dim (scatter with duplicates picks an unspecified writer)
    idxs = [(0, [[2, 0, 1, 1], [0, 1, 2, 0]]), (1, [[3, 0], [1, 2], [2, 3]]), (-1, [[0], [3]]),
            (-2, [[1, 2, 0]]), (0, [[0]]), (1, [[]])]

    def one(op, dtype, layout, dim, index, value):
        def src(lib):
            return value if value is not None else make(lib, (3, 5), dtype, seed=3)
        forms = scatter_forms(op, dim, lambda lib: idx(lib, index), src)
        check(lambda lib: list(forms(lib, make(lib, (3, 4), dtype, layout))))
    cases = [("scatter", d, lay, dim, i, v) for d in DTYPES for lay in ("contiguous", "transposed", "stepped")
             for dim, i in idxs for v in (None, 1 if d != "bool" else True)]
    cases += [("scatter_add", d, lay, dim, i, None) for d in DTYPES if d != "bool"
              for lay in ("contiguous", "transposed") for dim, i in idxs + [(0, [[1, 1, 1, 1], [1, 1, 0, 0]])]]
    each(cases, one)
    check(lambda lib: make(lib, (3, 4)).scatter(1, idx(lib, [[0, 1]]), 2.5))
    check(lambda lib: lib.scatter(make(lib, (3, 4)), 0, idx(lib, [[0]]), value=-1))
    check(lambda lib: make(lib, (), "int64").scatter(0, idx(lib, 0), make(lib, (), "int64", seed=2)))
    check(lambda lib: make(lib, (2, 3, 4), "int64").scatter_add(1, idx(lib, [[[2, 2, 0, 1]]]),
                                                                make(lib, (2, 3, 4), "int64", seed=1)))


def test_scatter_errors():
    def one(op, dim, index, idtype, src_shape, src_dtype):
        def fn(lib):
            src = 1.0 if src_shape is None else make(lib, src_shape, src_dtype, seed=1)
            return getattr(make(lib, (3, 4)), op)(dim, idx(lib, index, idtype), src)
        check(fn)
    cases = [(op, dim, i, it, s, sd) for op in ("scatter", "scatter_add") for dim, i, it, s, sd in [
        (0, [[3]], "int64", (3, 4), "float32"), (0, [[-1]], "int64", (3, 4), "float32"),
        (1, [[4]], "int64", (3, 4), "float32"), (1, [[0]], "float32", (3, 4), "float32"), (2, [[0]], "int64", (3, 4), "float32"),
        (0, [0], "int64", (3, 4), "float32"), (0, [[0, 1]], "int64", (1, 1), "float32"),
        (0, [[0]], "int64", (3, 4), "float64"), (0, [[0]], "int64", (3, 4), "int64"),
        (0, [[0] * 5], "int64", (3, 5), "float32")]]
    cases += [("scatter", 0, [[3]], "int64", None, None), ("scatter", 0, [[0]], "bool", None, None)]
    each(cases, one)


# ------------------------------------------------------------- sorting and selection
SORT_SHAPES = SHAPES_2D + [((5,), "contiguous"), ((), "contiguous"), ((0,), "contiguous"), ((2, 0, 3), "contiguous")]


def test_sort():
    def one(dtype, shape, layout, dim, desc):
        def x(lib):
            return make(lib, shape, dtype, layout, distinct=True)
        check(lambda lib: x(lib).sort(dim, desc))
        check(lambda lib: lib.sort(x(lib), dim=dim, descending=desc))
        check(lambda lib: x(lib).argsort(dim, desc))
        check(lambda lib: lib.argsort(x(lib), dim, descending=desc))
    dims = lambda s: [-1, 0] if s else [0, -1]  # noqa: E731
    each([(d, s, lay, dim, desc) for d in DTYPES for s, lay in SORT_SHAPES for dim in dims(s)
          for desc in (False, True)], one)


def test_sort_stable_ties():
    def one(dtype, shape, layout, dim, desc):
        def x(lib):
            return make(lib, shape, dtype, layout, seed=7)
        check(lambda lib: x(lib).sort(stable=True, dim=dim, descending=desc))
        check(lambda lib: lib.sort(x(lib), stable=True, dim=dim, descending=desc))
        check(lambda lib: x(lib).argsort(dim=dim, descending=desc, stable=True))
        check(lambda lib: x(lib).sort(dim, desc).values)  # unstable sort: the values are still determined
    each([(d, s, lay, dim, desc) for d in DTYPES for s, lay in SORT_SHAPES[:5] for dim in (-1, 0, 1)
          for desc in (False, True)], one)


def test_msort():
    each([(d, s, lay) for d in DTYPES for s, lay in SORT_SHAPES],
         lambda d, s, lay: (check(lambda lib: lib.msort(make(lib, s, d, lay, distinct=True))),
         check(lambda lib: make(lib, s, d, lay, distinct=True).msort())))


NAN_ROWS = [[NAN, 1.0, -2.0, NAN, 0.5], [3.0, NAN, math.inf, -math.inf, 1.0], [NAN] * 5, [2.0, 1.0, 0.0, -1.0, NAN]]


def test_nan():
    def one(dtype, fn):
        check(lambda lib: fn(lib, T(lib, NAN_ROWS, dtype)))
    fns = [lambda lib, x: x.sort(stable=True), lambda lib, x: x.sort(stable=True, descending=True),
           lambda lib, x: x.sort(0, stable=True), lambda lib, x: x.argsort(stable=True),
           lambda lib, x: lib.msort(x), lambda lib, x: x.topk(2).values, lambda lib, x: x.topk(2, largest=False).values,
           lambda lib, x: x.topk(1, 0).values, lambda lib, x: x.kthvalue(2).values, lambda lib, x: x.kthvalue(4, 0).values,
           lambda lib, x: x.median(), lambda lib, x: x[3, :4].median(), lambda lib, x: x.median(1).values,
           lambda lib, x: x.median(0).values, lambda lib, x: x[:, 2:4].median(0), lambda lib, x: x[3].median(0)]
    each([(d, f) for d in ("float16", "float32", "float64") for f in fns], one)


def test_topk():
    def one(dtype, shape, layout, k, dim, largest):
        check(lambda lib: make(lib, shape, dtype, layout, distinct=True).topk(k, dim, largest))
        check(lambda lib: lib.topk(make(lib, shape, dtype, layout, distinct=True), k, dim=dim, largest=largest).values)
    cases = [(d, s, lay, k, dim, lg) for d in DTYPES if d != "bool" for s, lay in SHAPES_2D[:5]
             for k, dim in [(1, -1), (2, 1), (3, 0), (0, -1), (4, -1)] for lg in (True, False)]
    cases += [("float32", (5,), "contiguous", k, 0, True) for k in (5, 6, -1)]
    cases += [("float32", (), "contiguous", k, 0, True) for k in (0, 1, 2)]
    cases += [("float32", (0, 4), "contiguous", 0, 0, True), ("float32", (0, 4), "contiguous", 1, 0, True),
              ("float32", (3, 4), "contiguous", 1, 2, True)]  # bool: topk_bool
    each(cases, one)
    # ties: values are determined, indices need not be
    each([(d, lg) for d in DTYPES if d != "bool" for lg in (True, False)],
         lambda d, lg: check(lambda lib: make(lib, (4, 6), d, seed=2).topk(3, largest=lg).values))


def test_kthvalue_median():
    def one(dtype, shape, layout, k, dim, keepdim):
        check(lambda lib: make(lib, shape, dtype, layout, distinct=True).kthvalue(k, dim, keepdim))
        check(lambda lib: lib.median(make(lib, shape, dtype, layout, distinct=True), dim, keepdim=keepdim))
        check(lambda lib: make(lib, shape, dtype, layout, distinct=True).median(dim, keepdim))
    cases = [(d, s, lay, k, dim, kd) for d in DTYPES if d != "bool" for s, lay in SHAPES_2D[:5]
             for k, dim in [(1, -1), (2, 1), (3, 0), (3, -2)] for kd in (False, True)]
    cases += [("float32", (5,), "contiguous", k, 0, False) for k in (5, 6, 0, -1)]
    cases += [("float32", (), "contiguous", k, 0, kd) for k in (1, 2) for kd in (False, True)]
    cases += [("float32", (0, 4), "contiguous", 1, 1, False),  # dim 0: kthvalue_empty_dim
              ("float32", (3, 4), "contiguous", 1, 2, False)]  # bool: kthvalue_median_bool
    each(cases, one)
    each([(d, s, lay) for d in DTYPES[1:] for s, lay in SORT_SHAPES if math.prod(s)],
         lambda d, s, lay: (check(lambda lib: make(lib, s, d, lay, distinct=True).median()),
         check(lambda lib: lib.median(make(lib, s, d, lay, seed=4)))))
    # ties: the values are determined
    each([(d, dim) for d in DTYPES if d != "bool" for dim in (0, 1)],
         lambda d, dim: (check(lambda lib: make(lib, (5, 6), d, seed=3).kthvalue(3, dim).values),
         check(lambda lib: make(lib, (5, 6), d, seed=3).median(dim).values)))


def test_named_tuples():
    def fields(lib):
        x = make(lib, (3, 4), distinct=True)
        return [(r.values, r.indices, r[0], r[1]) for r in
                (x.sort(), x.topk(2), x.kthvalue(2), x.median(0), lib.sort(x, stable=True))]
    check(fields)


def test_selection_out_of_range_errors():
    each([(f,) for f in [
        lambda lib: make(lib, (3, 4)).sort(2), lambda lib: make(lib, (3, 4)).argsort(-3),
        lambda lib: make(lib, ()).sort(1), lambda lib: make(lib, (3, 4)).topk(5),
        lambda lib: make(lib, (3, 4)).topk(-1), lambda lib: make(lib, (3, 4)).kthvalue(0),
        lambda lib: make(lib, (3, 4)).kthvalue(5), lambda lib: make(lib, (3, 4)).median(2),
        lambda lib: make(lib, (0,)).median(0), lambda lib: make(lib, (3, 4)).repeat(2),
        lambda lib: make(lib, (2, 3)).index_select(0, idx(lib, [2])),
        lambda lib: make(lib, (2, 3)).take(idx(lib, [6])), lambda lib: make(lib, (2, 3)).gather(0, idx(lib, [[2]])),
        lambda lib: make(lib, (2, 3)).masked_select(make(lib, (3, 2), "bool")),
        lambda lib: lib.cat([make(lib, (2, 3)), make(lib, (2, 4))]),
        lambda lib: lib.stack([make(lib, (2, 3)), make(lib, (2, 4))]),
    ]], check)


def test_roll_checks_no_dims_of_an_empty_tensor():
    cases = [lambda lib: lib.zeros(0).roll(1, 1), lambda lib: lib.zeros(2, 0).roll(1, 5),
             lambda lib: lib.zeros(0).roll((1, 2), (0, 1)), lambda lib: lib.zeros(0).roll((1, 2), (0,)),
             lambda lib: lib.zeros(0).roll((), ()), lambda lib: lib.tensor(1.0).roll(1, 0),
             lambda lib: lib.zeros(3).roll(1, 1), lambda lib: lib.zeros(2, 3).roll(1, None)]
    for c in cases:
        check(c)
