"""Splitting, diagonals, indexed accumulation and grids against torch
(declarations/ops/shaping.yaml): values, shapes and dtypes, or the exception type when
torch raises.

Each op runs over dtypes, 0-dim/empty shapes, negative dims and non-contiguous inputs
(x.t(), x[:, ::2]); then the in-place and out= forms and the error cases. Scatter-like ops
get repeated indices: index_add and scatter_reduce must fold every contribution."""
from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

from helpers import check
from test_movement import SHAPES_2D, each, idx, make

# The declared ops this module tests (shaping.yaml): test_op_coverage.py.
TESTED_OPS = {"tensor_split", "diag", "diag_embed", "diagflat", "trace", "index_add", "index_copy", "index_fill",
              "scatter_reduce", "masked_scatter", "argwhere", "repeat_interleave", "rot90", "meshgrid",
              "cartesian_prod", "tril_indices", "triu_indices"}

# torch warns on meshgrid without indexing= and on uint8 masks; both are tested on purpose
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DTYPES = ["bool", "uint8", "int64", "float16", "float32", "float64"]
LAYOUTS = ["contiguous", "transposed", "stepped"]

# ------------------------------------------------------------- known ember bugs
# name -> (reason, repro(lib)): run as strict xfails, so a fix shows up as XPASS.
BUGS = {
    "rot90_empty_dims": ("rot90(dims=[]) rotates in (0, 1) (the schema language has no [0,1] default); torch "
                         "raises RuntimeError", lambda lib: lib.ones(2, 2).rot90(1, []).sum()),
    "scatter_reduce_half_rounding": ("float16 scatter_reduce rounds to half after each contribution (1 + 3 * 0.1 "
                                     "gives 1.2988); torch's gives 1.2998 (as does gather's scatter_add)",
                                     lambda lib: lib.ones(1, dtype=lib.float16).scatter_reduce(
                                         0, lib.tensor([0, 0, 0]), lib.full((3,), 0.1, dtype=lib.float16), "sum")),
    "index_add_half_rounding": ("float16 index_add into a matrix rounds after each contribution; torch's does not",
                                lambda lib: lib.ones(1, 1, dtype=lib.float16).index_add(
                                    0, lib.tensor([0, 0, 0]), lib.full((3, 1), 0.1, dtype=lib.float16))),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=r, strict=True))
                                  for n, (r, _) in BUGS.items()])
def test_known_bug(name):
    check(BUGS[name][1])


def forms(op, *args, **kwargs):
    """fn(lib, x) yielding the function, method, in-place (returns self) and out= forms."""
    def fn(lib, x):
        a = [arg(lib) if callable(arg) else arg for arg in args]
        yield getattr(lib, op)(x.clone(), *a, **kwargs)
        yield getattr(x.clone(), op)(*a, **kwargs)
        y = x.clone()
        assert getattr(y, op + "_")(*a, **kwargs) is y
        yield y
        if op not in ("index_fill", "masked_scatter"):  # torch has no out= for them
            o = lib.empty(0, dtype=x.dtype)
            assert getattr(lib, op)(x, *a, out=o, **kwargs) is o
            yield o
    return fn


# ------------------------------------------------------------- tensor_split
def test_tensor_split():
    def one(dtype, shape, layout, how, dim):
        def fn(lib):
            x = make(lib, shape, dtype, layout)
            arg = how(lib) if callable(how) else how
            return [list(lib.tensor_split(x, arg, dim)), list(x.tensor_split(arg, dim=dim))]
        check(fn)
    hows = [1, 2, 3, 5, [1], [1, 2], [0, -1], [3, 1], [-10, 10], [], lambda lib: idx(lib, 2),
            lambda lib: idx(lib, [1, 2])]
    each([(d, s, lay, h, dim) for d in ("bool", "float32") for s, lay in SHAPES_2D for h in hows
          for dim in (0, -1, 1)], one)
    each([("int64", (6,), "contiguous", h, 0) for h in hows], one)
    check(lambda lib: lib.tensor_split(lib.arange(6), sections=4))
    check(lambda lib: lib.tensor_split(lib.arange(6), indices=[2, 5]))
    check(lambda lib: lib.tensor_split(lib.arange(6), tensor_indices_or_sections=idx(lib, [4])))
    errors = [lambda lib: lib.arange(6).tensor_split(0), lambda lib: lib.arange(6).tensor_split(-1),
              lambda lib: lib.tensor(1).tensor_split(2), lambda lib: lib.arange(6).tensor_split(2, 1),
              lambda lib: lib.arange(6).tensor_split(idx(lib, [1.0], "float32")),
              lambda lib: lib.arange(6).tensor_split(idx(lib, [[1]]))]
    each([(f,) for f in errors], check)


# ------------------------------------------------------------- diagonals
def test_diag():
    def one(dtype, shape, layout, k):
        check(lambda lib: lib.diag(make(lib, shape, dtype, layout), k))
        check(lambda lib: make(lib, shape, dtype, layout).diag(diagonal=k))
        check(lambda lib: lib.diag(make(lib, shape, dtype, layout), k, out=lib.empty(0, dtype=getattr(lib, dtype))))
        check(lambda lib: lib.diagflat(make(lib, shape, dtype, layout), k))
        check(lambda lib: make(lib, shape, dtype, layout).diagflat(offset=k))
    shapes = [((4,), "contiguous"), ((0,), "contiguous"), ((3, 4), "contiguous"), ((3, 4), "transposed"),
              ((3, 4), "stepped"), ((0, 4), "contiguous")]
    each([(d, s, lay, k) for d in DTYPES for s, lay in shapes for k in (0, 1, -2, 5)], one)
    check(lambda lib: lib.diagflat(lib.tensor(2.0), 1))
    each([(f,) for f in [lambda lib: lib.diag(lib.tensor(1)), lambda lib: lib.diag(lib.ones(1, 1, 1))]], check)


def test_diag_embed():
    def one(dtype, shape, layout, offset, d1, d2):
        check(lambda lib: lib.diag_embed(make(lib, shape, dtype, layout), offset, d1, d2))
        check(lambda lib: make(lib, shape, dtype, layout).diag_embed(offset=offset, dim1=d1, dim2=d2))
    each([(d, s, lay, o, d1, d2) for d in ("bool", "int64", "float16") for s, lay in SHAPES_2D
          for o, d1, d2 in [(0, -2, -1), (1, 0, 1), (-1, 2, 0), (2, -1, -3)]], one)
    each([("float32", (3,), "contiguous", o, d1, d2) for o, d1, d2 in [(0, 0, 1), (-2, 1, 0), (0, 0, 0),
                                                                        (0, 0, 2)]], one)
    check(lambda lib: lib.diag_embed(lib.tensor(1.0)))


def test_trace():
    shapes = [((3, 4), "contiguous"), ((3, 4), "transposed"), ((3, 4), "stepped"), ((0, 3), "contiguous"),
              ((3,), "contiguous"), ((), "contiguous"), ((2, 3, 4), "contiguous")]
    each([(d, s, lay) for d in DTYPES for s, lay in shapes],
         lambda d, s, lay: (check(lambda lib: lib.trace(make(lib, s, d, lay))),
                            check(lambda lib: make(lib, s, d, lay).trace())))


# ------------------------------------------------------------- index_add / index_copy / index_fill
def test_index_add_copy():
    def one(op, dtype, layout, dim, index, kwargs):
        n = len(index) if isinstance(index, list) else 1
        src_shape = (n, 4) if dim in (0, -2) else (3, n)
        fn = forms(op, dim, lambda lib: idx(lib, index), lambda lib: make(lib, src_shape, dtype, seed=2), **kwargs)
        check(lambda lib: list(fn(lib, make(lib, (3, 4), dtype, layout))), tol=1e-3 if dtype == "float16" else 0)
    unique = [(0, [2, 0]), (1, [3, 0, 1]), (-1, [1]), (-2, []), (0, [0, 1, 2])]
    repeated = [(0, [1, 1, 2, 1]), (1, [0, 0, 0, 3, 3])]
    cases = [("index_copy", d, lay, dim, i, {}) for d in DTYPES for lay in LAYOUTS for dim, i in unique]
    cases += [("index_add", d, lay, dim, i, {}) for d in DTYPES for lay in LAYOUTS for dim, i in unique + repeated]
    cases += [("index_add", d, "contiguous", dim, i, {"alpha": a}) for d in DTYPES if d != "bool"
              for dim, i in repeated for a in (2, -1)]
    cases += [("index_add", "float32", "stepped", 0, [2, 2], {"alpha": 0.5})]
    each(cases, one)
    # 0-dim self, index and source; int32 index (index_add only); a 3-D self
    check(lambda lib: lib.tensor(5).index_add(0, idx(lib, 0), lib.tensor(1)))
    check(lambda lib: lib.tensor(3).index_copy(0, idx(lib, [0]), lib.tensor(5)))
    check(lambda lib: lib.zeros(3, 2).index_add(0, idx(lib, [1, 1], "int32"), lib.ones(2, 2)))
    check(lambda lib: make(lib, (2, 3, 4), "int64").index_add(1, idx(lib, [2, 0, 2]), make(lib, (2, 3, 4), "int64")))


def test_index_fill():
    def one(dtype, layout, dim, index, value):
        fn = forms("index_fill", dim, lambda lib: idx(lib, index), value)
        check(lambda lib: list(fn(lib, make(lib, (3, 4), dtype, layout))))
    values = [1, 0.5, True, lambda lib: lib.tensor(-2), lambda lib: lib.tensor(2.5, dtype=lib.float64)]
    each([(d, lay, dim, i, v) for d in DTYPES for lay in LAYOUTS for dim, i in
          [(0, [2, 0, 2]), (1, [-1, 0]), (-1, []), (-2, [1])] for v in values], one)
    check(lambda lib: lib.tensor(3).index_fill(0, idx(lib, 0), 1))
    check(lambda lib: lib.tensor(3).index_fill(0, idx(lib, [0]), 1))


def test_index_errors():
    x = lambda lib: make(lib, (3, 4))  # noqa: E731
    errors = [
        lambda lib: x(lib).index_add(0, idx(lib, [3]), lib.ones(1, 4)),
        lambda lib: x(lib).index_add(0, idx(lib, [-1]), lib.ones(1, 4)),
        lambda lib: lib.zeros(3).index_add(0, idx(lib, [3]), lib.ones(1)),
        lambda lib: x(lib).index_add(0, idx(lib, [0.0], "float32"), lib.ones(1, 4)),
        lambda lib: x(lib).index_add(0, idx(lib, [0]), lib.ones(1, 4, dtype=lib.float64)),
        lambda lib: x(lib).index_add(0, idx(lib, [0, 1]), lib.ones(1, 4)),
        lambda lib: x(lib).index_add(0, idx(lib, [0]), lib.ones(1, 3)),
        lambda lib: x(lib).index_add(2, idx(lib, [0]), lib.ones(1, 4)),
        lambda lib: x(lib).index_add(0, idx(lib, [[0]]), lib.ones(1, 4)),
        lambda lib: lib.tensor(5).index_add(0, idx(lib, [0, 0]), lib.tensor([1, 2])),
        lambda lib: x(lib).index_copy(0, idx(lib, [7]), lib.ones(1, 4)),
        lambda lib: x(lib).index_copy(0, idx(lib, [-1]), lib.ones(1, 4)),
        lambda lib: x(lib).index_copy(0, idx(lib, [0], "int32"), lib.ones(1, 4)),
        lambda lib: x(lib).index_copy(0, idx(lib, [0]), lib.ones(1, 4, dtype=lib.int64)),
        lambda lib: x(lib).index_fill(0, idx(lib, [3]), 1), lambda lib: x(lib).index_fill(0, idx(lib, [-4]), 1),
        lambda lib: x(lib).index_fill(0, idx(lib, [0], "int32"), 1),
        lambda lib: x(lib).index_fill(0, idx(lib, [[0]]), 1),
        lambda lib: x(lib).index_fill(0, idx(lib, [0]), lib.tensor([1.0])),
    ]
    each([(f,) for f in errors], check)


# ------------------------------------------------------------- scatter_reduce
def test_scatter_reduce():
    def one(dtype, layout, reduce, include_self, dim, index):
        def src(lib):
            return make(lib, (3, 5), dtype, seed=3)
        fn = forms("scatter_reduce", dim, lambda lib: idx(lib, index), src, reduce, include_self=include_self)
        check(lambda lib: list(fn(lib, make(lib, (3, 4), dtype, layout))), tol=1e-3 if dtype == "float16" else 1e-6)
    idxs = [(0, [[2, 0, 1, 1], [2, 2, 0, 1]]), (1, [[3, 3, 3], [0, 1, 0], [2, 2, 2]]), (-1, [[0], [3]]),
            (-2, [[1, 1, 0]]), (1, [[]])]
    cases = [(d, lay, r, inc, dim, i) for d in DTYPES for lay in ("contiguous", "transposed")
             for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False) for dim, i in idxs
             if not (d == "bool" and r == "mean")]
    cases += [("int64", "stepped", r, inc, 0, [[2, 0, 2, 0]]) for r in ("sum", "mean", "amin") for inc in (True, False)]
    each(cases, one)
    nan = [[math.nan, 1.0, 2.0], [3.0, -1.0, math.nan]]
    each([(r, inc) for r in ("amax", "amin", "sum") for inc in (True, False)], lambda r, inc: check(
        lambda lib: lib.tensor(nan).scatter_reduce(1, idx(lib, [[0, 0, 2], [2, 1, 1]]), lib.tensor(nan[::-1]), r,
                                                   include_self=inc)))
    check(lambda lib: lib.zeros(3).scatter_reduce(0, idx(lib, [1, 1], "int32"), lib.ones(2), "sum"))
    check(lambda lib: lib.tensor(2.0).scatter_reduce(0, idx(lib, 0), lib.tensor(3.0), "prod"))


def test_scatter_reduce_errors():
    x = lambda lib: make(lib, (3, 4))  # noqa: E731
    errors = [
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[0]]), x(lib), "add"),
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[0, 0]]), x(lib), "max"),  # legacy names of amax, amin
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[0, 0]]), x(lib), "min"),
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[3]]), x(lib), "sum"),
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[-1]]), x(lib), "amax"),
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[0]]), x(lib).double(), "sum"),
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[0.0]], "float32"), x(lib), "sum"),
        lambda lib: x(lib).scatter_reduce(2, idx(lib, [[0]]), x(lib), "sum"),
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [0]), x(lib), "sum"),
        lambda lib: x(lib).scatter_reduce(0, idx(lib, [[0] * 5]), x(lib), "prod"),
        lambda lib: lib.tensor([True]).scatter_reduce(0, idx(lib, [0]), lib.tensor([True]), "mean"),
    ]
    each([(f,) for f in errors], check)


# ------------------------------------------------------------- masked_scatter, argwhere
def test_masked_scatter():
    def one(dtype, shape, layout, mask_shape):
        def fn(lib):
            x = make(lib, shape, dtype, layout)
            mask = make(lib, mask_shape, "bool", seed=5)
            src = make(lib, (4, 6), dtype, seed=2)
            r = [lib.masked_scatter(x, mask, src), x.masked_scatter(mask, src)]
            if mask_shape == shape or len(mask_shape) < len(shape):
                y = x.clone()
                assert y.masked_scatter_(mask, src) is y
                r.append(y)
            return r
        check(fn)
    each([(d, s, lay, m) for d in DTYPES for s, lay in SHAPES_2D for m in (s, s[-1:], ())], one)
    check(lambda lib: lib.masked_scatter(lib.tensor([1, 2]), lib.tensor([[True], [False]]), lib.tensor([5, 6, 7])))
    errors = [lambda lib: lib.tensor([1, 2]).masked_scatter(lib.tensor([1, 0], dtype=lib.uint8), lib.tensor([5])),
              lambda lib: lib.tensor([1, 2]).masked_scatter(lib.tensor([True, True]), lib.tensor([5])),
              lambda lib: lib.tensor([1, 2]).masked_scatter(lib.tensor([True, True]), lib.tensor([5.0, 6.0])),
              lambda lib: lib.tensor([1, 2]).masked_scatter_(lib.tensor([[True, True]]), lib.tensor([5, 6])),
              lambda lib: lib.tensor([1, 2]).masked_scatter(lib.tensor([True, True, False]), lib.tensor([5, 6]))]
    each([(f,) for f in errors], check)


def test_argwhere():
    shapes = SHAPES_2D + [((), "contiguous"), ((5,), "contiguous")]
    each([(d, s, lay) for d in DTYPES for s, lay in shapes],
         lambda d, s, lay: (check(lambda lib: lib.argwhere(make(lib, s, d, lay))),
                            check(lambda lib: make(lib, s, d, lay).argwhere())))


# ------------------------------------------------------------- repeat_interleave, rot90
def test_repeat_interleave():
    def one(dtype, shape, layout, repeats, dim):
        def fn(lib):
            x = make(lib, shape, dtype, layout)
            r = repeats(lib) if callable(repeats) else repeats
            return [lib.repeat_interleave(x, r, dim), x.repeat_interleave(r, dim=dim)]
        check(fn)
    reps = [2, 0, 1, lambda lib: idx(lib, 3), lambda lib: idx(lib, [2]), lambda lib: idx(lib, [1, 0, 3]),
            lambda lib: idx(lib, [0, 2, 1, 1])]
    each([(d, s, lay, r, dim) for d, s, lay in [("bool", (3, 4), "stepped"), ("uint8", (2, 3, 4), "contiguous"),
                                                 ("float16", (3, 4), "transposed"), ("float64", (0, 4), "contiguous")]
          for r in reps for dim in (None, 0, -1)], one)  # few cases: torch's repeat_interleave takes ~8 ms a call
    each([("int64", (), "contiguous", r, dim) for r in reps[:4] for dim in (None, 0)], one)
    each([(r,) for r in ([1, 0, 2, 0], [], [3], [0, 0])],
         lambda r: check(lambda lib: lib.repeat_interleave(idx(lib, r))))
    check(lambda lib: lib.repeat_interleave(idx(lib, [1, 2], "int32")))
    check(lambda lib: lib.repeat_interleave(idx(lib, [1, 2]), output_size=3))
    check(lambda lib: lib.repeat_interleave(lib.tensor([1, 2]), 2, output_size=4))
    errors = [lambda lib: lib.repeat_interleave(lib.tensor([1, 2]), 2, output_size=3),
              lambda lib: lib.repeat_interleave(idx(lib, [1, -2])), lambda lib: lib.repeat_interleave(idx(lib, 2)),
              lambda lib: lib.repeat_interleave(lib.tensor([1.0, 2.0])),
              lambda lib: lib.repeat_interleave(idx(lib, [[1, 2]])), lambda lib: lib.tensor([1, 2]).repeat_interleave(),
              lambda lib: lib.tensor([[1, 2]]).repeat_interleave(-1),
              lambda lib: lib.tensor([[1, 2]]).repeat_interleave(idx(lib, [1, 2, 3]), dim=1),
              lambda lib: lib.tensor([[1, 2]]).repeat_interleave(2, dim=2)]
    each([(f,) for f in errors], check)


def test_rot90():
    def one(dtype, shape, layout, k, dims):
        check(lambda lib: lib.rot90(make(lib, shape, dtype, layout), k, dims))
        check(lambda lib: make(lib, shape, dtype, layout).rot90(k, dims=dims))
    each([(d, s, lay, k, dims) for d in ("bool", "int64", "float32") for s, lay in SHAPES_2D
          for k in (0, 1, 2, 3, 4, -1, -6) for dims in ([0, 1], [1, 0], [-1, 0])], one)
    each([("float32", (2, 3, 4), "contiguous", k, [2, 0]) for k in (1, 3)], one)
    check(lambda lib: lib.rot90(make(lib, (2, 3))))
    errors = [lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 5]), lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 0]),
              lambda lib: lib.rot90(lib.ones(2, 3), 1, [0]), lambda lib: lib.rot90(lib.ones(3), 1, [0, 0]),
              lambda lib: lib.rot90(lib.ones(2, 3), 1, [0, 1, 2])]
    each([(f,) for f in errors], check)


# ------------------------------------------------------------- grids
def test_meshgrid_cartesian_prod():
    def one(dtype, shapes, indexing):
        def ts(lib):
            return [make(lib, s, dtype, seed=i) for i, s in enumerate(shapes)]
        kw = {} if indexing is None else {"indexing": indexing}
        check(lambda lib: list(lib.meshgrid(*ts(lib), **kw)))
        check(lambda lib: list(lib.meshgrid(ts(lib), **kw)))
        check(lambda lib: list(lib.meshgrid(tuple(ts(lib)), **kw)))
        if all(len(s) == 1 for s in shapes):
            check(lambda lib: lib.cartesian_prod(*ts(lib)))
    shape_sets = [[(3,)], [(2,), (3,)], [(2,), (), (4,)], [(0,), (3,)], [(2,), (3,), (1,), (2,)], [()]]
    each([(d, s, i) for d in DTYPES for s in shape_sets for i in (None, "ij", "xy")], one)
    check(lambda lib: list(lib.meshgrid(make(lib, (4, 2))[:, 0], make(lib, (6,))[::2])))
    errors = [lambda lib: lib.meshgrid(), lambda lib: lib.meshgrid([]),
              lambda lib: lib.meshgrid(lib.tensor([1, 2]), indexing="foo"),
              lambda lib: lib.meshgrid(lib.tensor([1, 2]), lib.tensor([1.0])),
              lambda lib: lib.meshgrid(lib.ones(2, 2)),
              lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([1.0])),
              lambda lib: lib.cartesian_prod(lib.tensor(1), lib.tensor([1])),
              lambda lib: lib.cartesian_prod([lib.tensor([1]), lib.tensor([2])])]
    each([(f,) for f in errors], check)


def test_tril_triu_indices():
    def one(op, row, col, offset, dtype):
        kw = {} if dtype is None else {"dtype": dtype}
        check(lambda lib: getattr(lib, op)(row, col, offset, **{k: getattr(lib, v) for k, v in kw.items()}))
    each([(op, r, c, o, d) for op in ("tril_indices", "triu_indices") for r, c in [(3, 3), (3, 5), (5, 2), (0, 3),
                                                                                    (1, 1), (4, 0)]
          for o in (0, 1, -1, 10, -10) for d in (None, "int32")], one)
    each([(op, r, c, 0, d) for op in ("tril_indices", "triu_indices") for r, c, d in
          [(-1, 3, None), (3, -1, None), (3, 3, "float32")]], one)
    check(lambda lib: lib.tril_indices(3, 4, offset=1, dtype=lib.int64))
