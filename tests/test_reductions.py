"""Reductions and scans against torch (declarations/ops/reductions.yaml): result values,
shapes and dtypes, or the exception type when torch raises.

Every reduction runs on a 3-D input of each of the 10 dtypes with no dim, one dim, a
negative dim, a tuple of dims and keepdim; then on 0-dim, empty, non-contiguous and 4-D
inputs, with dtype=, out=, NaN, ties, named tuple results, large (multithreaded) inputs
and the error cases. Scans (cumsum, cumprod, cummax, cummin, logcumsumexp and the
in-place cumsum_/cumprod_) run on the same inputs along each dim."""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from functools import lru_cache

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import DTYPE_NAMES, FLOAT_NAMES, T, assert_same, check, each, nested, torch

# The declared ops this module tests (reductions.yaml): test_op_coverage.py.
TESTED_OPS = {"sum", "nansum", "mean", "nanmean", "prod", "amax", "amin", "aminmax", "max", "min",
    "argmax", "argmin", "all", "any", "count_nonzero", "var", "std", "var_mean", "std_mean",
    "logsumexp", "linalg_vector_norm", "norm", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"}

INF, NAN = math.inf, math.nan
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")
# Relative tolerance by input dtype (integer results always compare exactly).
TOL = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-10}
SUM_TOL = 1e-4  # float32 sums of 10^5..10^6 elements: any order of summation is this close


def tol(name):
    return TOL.get(name, 1e-5)  # integer inputs with a float result (logsumexp) compute in float32


# ---------------------------------------------------------------------------- inputs
def rand_values(n, name, seed=0):
    """n values from a seeded generator, exact in the dtype, small enough that products of
    24 of them neither overflow int64 nor float16; integer ones repeat a lot (ties)."""
    rng = random.Random(f"{name}-{n}-{seed}")
    if name == "bool":
        return [rng.random() < 0.6 for _ in range(n)]
    if name == "uint8":
        return [rng.randint(0, 5) for _ in range(n)]
    if name in FLOAT_NAMES:
        return [rng.randint(-6, 6) / 4 for _ in range(n)]
    return [rng.randint(-3, 3) for _ in range(n)]


def make(lib, shape, name, layout="contiguous", seed=0):
    """A tensor of this shape and dtype, in a layout: contiguous, transposed (the last two
    dims swapped), stepped (x[:, ::2]), expanded (a 0 stride in dim 0), permuted."""
    shape = tuple(shape)
    if layout == "transposed":
        return make(lib, shape[:-2] + (shape[-1], shape[-2]), name, seed=seed).transpose(-1, -2)
    if layout == "stepped":
        return make(lib, (shape[0], 2 * shape[1]) + shape[2:], name, seed=seed)[:, ::2]
    if layout == "expanded":
        return make(lib, (1,) + shape[1:], name, seed=seed).expand(*shape)
    if layout == "permuted":  # (a, b, c) from a contiguous (c, a, b)
        return make(lib, shape[-1:] + shape[:-1], name, seed=seed).permute(*range(1, len(shape)), 0)
    n = math.prod(shape)
    dtype = getattr(lib, name)
    if n == 0:
        return lib.tensor([], dtype=dtype).view(*shape)
    return lib.tensor(nested(rand_values(n, name, seed), list(shape)), dtype=dtype)


def vector_norm(lib):
    """torch.linalg.vector_norm; ember declares it as ember.linalg_vector_norm."""
    return lib.linalg.vector_norm if lib is torch else lib.linalg_vector_norm


def parity(fn, tol=0.0):
    """check(fn), calling torch once, except that where torch has no kernel for a dtype
    (NotImplementedError) ember may raise RuntimeError instead."""
    try:
        expected = fn(torch)
    except NotImplementedError:
        with pytest.raises((NotImplementedError, RuntimeError)):
            fn(ember)
        return
    except Exception as exc:
        with pytest.raises(type(exc)):
            fn(ember)
        return
    assert_same(fn(ember), expected, tol=tol)


# ------------------------------------------------------------- known ember bugs
# name -> (reason, matcher(table, op, dtype, spec): the table cases it breaks, which the
# tables skip, repro(lib)). test_known_bug runs every repro as a strict xfail: once ember
# is fixed it fails as XPASS, and removing the entry brings the table cases back.
def base(op):
    return op.removesuffix("_fn").removesuffix("_p3").removesuffix("_ord1")


NARROWING = {("bfloat16", "float16"), ("float32", "float16"), ("float64", "float16"), ("float64", "float32")}
OUTS = {  # name -> (shape, dtype) of the out tensor for a (3, 4) input
    "reduced": ((3,), "float32"), "scanned": ((3, 4), "float32"), "empty": ((0,), "float32"),
    "wrong_shape": ((2, 5), "float32"), "int64": ((3,), "int64"), "bool": ((3,), "bool"),
    "float64": ((3,), "float64"),
}


BUGS = {
}
# Cases that compare nothing ember should copy: torch 2.13 fails on its own output shape
# for logsumexp(dim=[]); count_nonzero has no keepdim, so torch reads (2, True) as dims (2, 1).
NOT_COMPARED = [
    lambda t, op, dt, spec: base(op) == "logsumexp" and spec == "empty_list",
    lambda t, op, dt, spec: base(op) == "count_nonzero" and spec == "keepdim_pos",
]


def known(table, op, dtype, spec):
    return any(m(table, op, dtype, spec) for _, m, _ in BUGS.values()) or \
        any(m(table, op, dtype, spec) for m in NOT_COMPARED)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.xfail(reason=reason, strict=True))
                                  for name, (reason, _, _) in BUGS.items()])
def test_known_bug(name):
    parity(BUGS[name][2])


# cumsum/cumprod with an integer dtype= narrower than int64 along a dim other than the last
# once wrote int64 results into the narrower buffer (heap corruption): the regression test
# runs in a subprocess so that a relapse cannot take the test run down with it.
HEAP_REPRO = """
import ember
x = ember.tensor([[1, 2], [3, 4], [5, 6]], dtype=ember.int64)
for op in ("cumsum", "cumprod"):
    for d in ("uint8", "int8", "int16", "int32"):
        print(getattr(x, op)(0, dtype=getattr(ember, d)).tolist(), flush=True)
"""


def test_scan_narrow_dtype_non_last_dim():
    x = torch.tensor([[1, 2], [3, 4], [5, 6]])
    expected = "".join(f"{getattr(x, op)(0, dtype=getattr(torch, d)).tolist()}\n"
                       for op in ("cumsum", "cumprod") for d in ("uint8", "int8", "int16", "int32"))
    proc = subprocess.run([sys.executable, "-c", HEAP_REPRO], capture_output=True, text=True, timeout=60,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert (proc.returncode, proc.stdout) == (0, expected), proc.stderr


# ------------------------------------------------------------- one table of reductions
# name -> fn(lib, x, *dim_args, **kwargs); the dim arguments of DIM_SPECS are passed on
# as they are (positional dims go where the op takes its dim).
def method(op, *lead):
    return lambda lib, x, *a, **k: getattr(x, op)(*lead, *a, **k)


def function(op, *lead):
    return lambda lib, x, *a, **k: getattr(lib, op)(x, *lead, *a, **k)


def kw_dim(fn):  # aminmax takes its dim by keyword only
    return lambda lib, x, *a, **k: fn(lib, x, **({"dim": a[0]} if a else {}), **k)


REDUCTIONS = {name: form for op in ["sum", "nansum", "mean", "nanmean", "prod", "amax", "amin", "max", "min",
                                     "argmax", "argmin", "all", "any", "count_nonzero", "var", "std", "logsumexp"]
              for name, form in [(op, method(op)), (op + "_fn", function(op))]}
REDUCTIONS.update({
    "aminmax": kw_dim(method("aminmax")), "aminmax_fn": kw_dim(function("aminmax")),
    "var_mean": function("var_mean"), "std_mean": function("std_mean"),
    "vector_norm": lambda lib, x, *a, **k: vector_norm(lib)(x, 2, *a, **k),
    "vector_norm_ord1": lambda lib, x, *a, **k: vector_norm(lib)(x, 1, *a, **k),
    "norm": method("norm", 2), "norm_fn_p3": function("norm", 3),
})
DIM_SPECS = {  # name -> (positional args, keyword args)
    "all": ((), {}), "dim1": ((1,), {}), "dim_neg": ((-1,), {}), "dim_kw_keepdim": ((), {"dim": 0, "keepdim": True}),
    "keepdim_pos": ((2, True), {}), "tuple": (((0, 2),), {}), "tuple_neg_keepdim": (((-1, 0),), {"keepdim": True}),
    "list_one": (([1],), {}), "empty_list": (([],), {}),
}
EXTRA_SPECS = {"dim0": ((0,), {}), "dim0_keepdim": ((0,), {"keepdim": True}), "tuple0": (((0,),), {})}


def reduce_cases(table, op, dtypes, specs, make_input):
    """check REDUCTIONS[op] on make_input(lib, dtype) with each dim spec."""
    def one(dtype, spec):
        args, kwargs = {**DIM_SPECS, **EXTRA_SPECS}[spec]
        parity(lambda lib: REDUCTIONS[op](lib, make_input(lib, dtype), *args, **kwargs), tol=tol(dtype))
    each([(d, s) for d in dtypes for s in specs if not known(table, op, d, s)], one)


@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reduction(op):
    """Every dtype, every dim spec, on a (2, 3, 4) input."""
    reduce_cases("3d", op, DTYPE_NAMES, DIM_SPECS, lambda lib, d: make(lib, (2, 3, 4), d))


METHODS = [op for op in REDUCTIONS if not op.endswith(("_fn", "_fn_p3", "_ord1"))]


@pytest.mark.parametrize("layout", ["transposed", "stepped", "expanded", "permuted"])
@pytest.mark.parametrize("op", METHODS)
def test_reduction_noncontiguous(op, layout):
    reduce_cases(layout, op, ["bool", "int32", "float32"], ["all", "dim1", "dim_neg", "dim_kw_keepdim", "tuple"],
                 lambda lib, d: make(lib, (2, 3, 4), d, layout))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3)])
@pytest.mark.parametrize("op", METHODS)
def test_reduction_empty(op, shape):
    """Over an empty dim: sum gives 0, prod 1, all True, mean NaN; amax/max/argmax raise."""
    specs = ["all", "dim_kw_keepdim", "dim1", "list_one", "tuple_neg_keepdim"] if len(shape) == 3 else \
        ["all", "dim_kw_keepdim", "dim_neg", "list_one"]
    reduce_cases("empty", op, ["bool", "uint8", "int64", "float32"], specs, lambda lib, d: make(lib, shape, d))


@pytest.mark.parametrize("op", METHODS)
def test_reduction_0dim(op):
    """A 0-dim tensor reduces over dim 0 / -1 / [0] to itself; dim 1 is out of range."""
    reduce_cases("0dim", op, ["bool", "int16", "float16", "float64"],
                 ["all", "dim0", "dim_neg", "dim0_keepdim", "tuple0", "dim1", "list_one"],
                 lambda lib, d: lib.tensor(rand_values(1, d)[0] or 1, dtype=getattr(lib, d)))


MULTI_DIM = ["sum", "nansum", "mean", "nanmean", "amax", "amin", "all", "any", "count_nonzero", "var",
             "std", "var_mean", "std_mean", "logsumexp", "vector_norm", "norm"]


@pytest.mark.parametrize("op", MULTI_DIM)
def test_reduction_4d_nonadjacent_dims(op):
    def one(dtype, dims, keepdim):
        kw = {} if op == "count_nonzero" else {"keepdim": keepdim}
        parity(lambda lib: REDUCTIONS[op](lib, make(lib, (2, 3, 4, 5), dtype, "permuted"), dims, **kw), tol=tol(dtype))
    each([(d, dims, k) for d in ("int32", "float64") for dims in [(0, 2), (1, 3), (0, 3), (-1, -3, 0), (3, 1, 0, 2)]
          for k in (False, True)], one)


# ---------------------------------------------------------------------------- dtype=
DTYPE_KW = {
    "sum": lambda lib, x, d: x.sum(dtype=d), "sum_dim": lambda lib, x, d: lib.sum(x, 1, dtype=d),
    "nansum": lambda lib, x, d: x.nansum((0, 1), dtype=d), "mean": lambda lib, x, d: x.mean(dtype=d),
    "mean_dim": lambda lib, x, d: lib.mean(x, -1, keepdim=True, dtype=d),
    "nanmean": lambda lib, x, d: lib.nanmean(x, 0, dtype=d), "prod": lambda lib, x, d: x.prod(dtype=d),
    "prod_dim": lambda lib, x, d: lib.prod(x, 1, dtype=d),
    "vector_norm": lambda lib, x, d: vector_norm(lib)(x, dim=1, dtype=d),
    "norm": lambda lib, x, d: x.norm(1, dim=0, dtype=d),
    "cumsum": lambda lib, x, d: x.cumsum(1, dtype=d), "cumprod": lambda lib, x, d: lib.cumprod(x, 0, dtype=d),
}


@pytest.mark.parametrize("op", list(DTYPE_KW))
def test_dtype_argument(op):
    def one(dtype, to):
        parity(lambda lib: DTYPE_KW[op](lib, make(lib, (3, 4), dtype), getattr(lib, to)), tol=max(tol(dtype), tol(to)))
    each([(d, to) for d in DTYPE_NAMES for to in ("bool", "int32", "int64", "float16", "float32", "float64")
          if not known("dtype", op, d, to)], one)


# ---------------------------------------------------------------------------- scans
SCANS = {name: form for op in ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
         for name, form in [(op, method(op)), (op + "_fn", function(op))]}
SCANS.update({
    "cumsum_": lambda lib, x, *a, **k: (x.cumsum_(*a, **k), x)[1],
    "cumprod_": lambda lib, x, *a, **k: (x.cumprod_(*a, **k), x)[1],
})


@pytest.mark.parametrize("op", list(SCANS))
def test_scan(op):
    """Every dtype, along each dim of a (2, 3, 4) input (and out-of-range and tuple dims)."""
    def one(dtype, dim):
        args, kw = ((), {"dim": 1}) if dim == "kw" else ((dim,), {})
        parity(lambda lib: SCANS[op](lib, make(lib, (2, 3, 4), dtype), *args, **kw), tol=tol(dtype))
    each([(t, d) for t in DTYPE_NAMES for d in (0, 1, 2, -1, -3, 3, -4, (0, 1), "kw")
          if not known("scan", op, t, d)], one)


@pytest.mark.parametrize("op", list(SCANS))
def test_scan_layouts_and_shapes(op):
    def one(dtype, layout, shape, dim):
        parity(lambda lib: SCANS[op](lib, make(lib, shape, dtype, layout) if shape else T(lib, 2, dtype), dim),
               tol=tol(dtype))
    cases = [(d, "contiguous", s, dim) for s, dim in [((0, 3), 0), ((0, 3), 1), ((), 0), ((), -1), ((5,), 0)]
             for d in ("uint8", "int64", "float32")]
    cases += [(d, layout, (2, 3, 4), dim) for layout in ("transposed", "stepped", "expanded", "permuted")
              for dim in (0, 1, 2) for d in ("uint8", "int64", "float32")]
    each([c for c in cases if not known("scan", op, c[0], c[3])], one)


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
def test_inplace_scan_returns_self(op):
    x = make(ember, (3, 4), "float32")
    assert getattr(x, op)(1) is x
    check(lambda lib: getattr(make(lib, (3, 4), "int16"), op)(0))
    check(lambda lib: getattr(make(lib, (3, 4), "float64"), op)(-1, dtype=lib.float64))


# ---------------------------------------------------------------------------- named tuples
NAMED = {  # op -> (call, field names)
    "max": (lambda lib, x: x.max(1), ("values", "indices")),
    "min": (lambda lib, x: lib.min(x, 0, keepdim=True), ("values", "indices")),
    "aminmax": (lambda lib, x: lib.aminmax(x, dim=-1), ("min", "max")),
    "aminmax_all": (lambda lib, x: x.aminmax(), ("min", "max")),
    "cummax": (lambda lib, x: x.cummax(1), ("values", "indices")),
    "cummin": (lambda lib, x: lib.cummin(x, 0), ("values", "indices")),
}


@pytest.mark.parametrize("op", list(NAMED))
def test_named_tuple_fields(op):
    call, fields = NAMED[op]
    for i, field in enumerate(fields):
        check(lambda lib: getattr(call(lib, make(lib, (3, 4), "int32")), field))
        check(lambda lib: call(lib, make(lib, (3, 4), "float32"))[i])
    r = call(ember, make(ember, (3, 4), "int32"))
    a, b = r
    name = op.split("_")[0]
    assert isinstance(r, tuple) and len(r) == 2 and a is r[0] and b is r[1]
    assert getattr(r, fields[0]) is a and getattr(r, fields[1]) is b
    assert type(r).__name__ == name and repr(r).startswith(f"ember.return_types.{name}(")


def test_max_min_other():
    """max/min with a tensor: the elementwise maximum/minimum, broadcast and promoted."""
    for a, b in [("float32", "float32"), ("int64", "int64"), ("int32", "float64"), ("bool", "uint8")]:
        check(lambda lib: make(lib, (3, 4), a).max(make(lib, (4,), b, seed=1)))
        check(lambda lib: lib.min(make(lib, (3, 1), a), make(lib, (3, 4), b, seed=1)))
    check(lambda lib: lib.max(T(lib, [1.0, NAN, 3.0]), T(lib, [2.0, 2.0, NAN])))


# ---------------------------------------------------------------------------- ties and NaN
TIES = [[1, 3, 3, 0], [2, 2, 2, 2], [0, 1, 5, 5]]
TIE_CALLS = {  # name -> (call, the first-occurrence indices or None)
    "argmax": (lambda x: x.argmax(1), [1, 0, 2]), "argmin": (lambda x: x.argmin(1), [3, 0, 0]),
    "max": (lambda x: x.max(1).indices, [1, 0, 2]), "min": (lambda x: x.min(1).indices, [3, 0, 0]),
    "argmax_all": (lambda x: x.argmax(), 10), "argmin_all": (lambda x: x.argmin(), 3),
    "argmax_dim0": (lambda x: x.argmax(0), [1, 0, 2, 2]),
    "cummax": (lambda x: x.cummax(1), None), "cummin": (lambda x: x.cummin(1), None),
}


@pytest.mark.parametrize("call", list(TIE_CALLS))
def test_ties(call):
    """argmax and friends return the first of equal values; cummax/cummin index as torch does."""
    fn, first = TIE_CALLS[call]

    def one(dtype):
        check(lambda lib: fn(T(lib, TIES, dtype)))
        if first is not None:
            assert fn(T(ember, TIES, dtype)).tolist() == first
    each([(d,) for d in ("uint8", "int8", "int64", "float16", "bfloat16", "float32")], one)


NAN_VALUES = [[1.0, NAN, 3.0, NAN], [NAN, NAN, NAN, NAN], [2.0, -1.0, 0.5, 4.0], [INF, NAN, -INF, 1.0]]
NAN_CALLS = {
    "max": lambda lib, x: x.max(), "max_dim": lambda lib, x: x.max(1), "min_dim": lambda lib, x: x.min(0),
    "amax": lambda lib, x: x.amax(1), "amin": lambda lib, x: x.amin(), "aminmax": lambda lib, x: x.aminmax(dim=1),
    "argmax": lambda lib, x: x.argmax(1), "argmin": lambda lib, x: x.argmin(1), "argmax_all": lambda lib, x: x.argmax(),
    "sum": lambda lib, x: x.sum(1), "nansum": lambda lib, x: x.nansum(1), "nansum_all": lambda lib, x: lib.nansum(x),
    "nanmean": lambda lib, x: x.nanmean(1), "nanmean_all": lambda lib, x: x.nanmean(),
    "mean": lambda lib, x: x.mean(0), "var": lambda lib, x: x.var(1), "logsumexp": lambda lib, x: x.logsumexp(1),
    "all": lambda lib, x: x.all(1), "any": lambda lib, x: x.any(0), "count_nonzero": lambda lib, x: x.count_nonzero(1),
    "cumsum": lambda lib, x: x.cumsum(1), "cummax": lambda lib, x: x.cummax(1), "cummin": lambda lib, x: x.cummin(1),
    "logcumsumexp": lambda lib, x: x.logcumsumexp(1), "norm": lambda lib, x: x.norm(dim=1),
}


@pytest.mark.parametrize("dtype", FLOAT_NAMES)
def test_nan(dtype):
    """NaN propagates through max/amax/argmax (argmax points at the first NaN); nansum and
    nanmean skip it."""
    each([(c,) for c in NAN_CALLS], lambda c: check(lambda lib: NAN_CALLS[c](lib, T(lib, NAN_VALUES, dtype)),
                                                  tol=tol(dtype)))
    x = T(ember, NAN_VALUES, dtype)
    assert x.argmax(1).tolist() == [1, 0, 3, 1] and x.max(1).indices.tolist() == [1, 0, 3, 1]
    assert math.isnan(x.max().item()) and x.nansum(1).tolist()[:3] == [4.0, 0.0, 5.5]
    assert x[0].nanmean().item() == 2.0 and math.isnan(x[1].nanmean().item())


# ---------------------------------------------------------------------------- out=
OUT_OPS = {
    "sum": lambda lib, x, o: lib.sum(x, 1, out=o), "nansum": lambda lib, x, o: lib.nansum(x, 1, out=o),
    "mean": lambda lib, x, o: lib.mean(x, 1, out=o), "nanmean": lambda lib, x, o: lib.nanmean(x, 1, out=o),
    "prod": lambda lib, x, o: lib.prod(x, 1, out=o), "amax": lambda lib, x, o: lib.amax(x, 1, out=o),
    "amin": lambda lib, x, o: lib.amin(x, -1, out=o), "all": lambda lib, x, o: lib.all(x, 1, out=o),
    "any": lambda lib, x, o: lib.any(x, 1, out=o), "logsumexp": lambda lib, x, o: lib.logsumexp(x, 1, out=o),
    "vector_norm": lambda lib, x, o: vector_norm(lib)(x, 2, 1, out=o),
    "cumsum": lambda lib, x, o: lib.cumsum(x, 1, out=o), "cumprod": lambda lib, x, o: lib.cumprod(x, 1, out=o),
    "logcumsumexp": lambda lib, x, o: lib.logcumsumexp(x, 1, out=o),
}


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("op", list(OUT_OPS))
def test_out(op):
    """The result written into out (resized when its shape is wrong) and out returned; an
    out of a dtype the result can't be cast to raises."""
    def one(dtype, out):
        shape, out_dtype = OUTS[out]

        def fn(lib):
            o = lib.zeros(shape, dtype=getattr(lib, out_dtype))
            r = OUT_OPS[op](lib, make(lib, (3, 4), dtype), o)
            return r, o, r is o
        parity(fn, tol=tol(dtype))
    each([(d, o) for d in ("bool", "int64", "float32") for o in OUTS if not known("out", op, d, o)], one)


# ---------------------------------------------------------------------------- var / std
VAR_CALLS = {
    "unbiased_false": lambda lib, x, f: getattr(x, f)(unbiased=False),
    "unbiased_pos": lambda lib, x, f: getattr(x, f)(False),
    "dim_unbiased": lambda lib, x, f: getattr(lib, f)(x, 1, False, True),
    "dim_list": lambda lib, x, f: getattr(x, f)([0, 2]),
    "dim_none_correction": lambda lib, x, f: getattr(x, f)(None, correction=0),
    "correction0": lambda lib, x, f: getattr(x, f)(1, correction=0),
    "correction1": lambda lib, x, f: getattr(lib, f)(x, dim=(0, 1), correction=1),
    "correction2": lambda lib, x, f: getattr(x, f)(dim=-1, correction=2, keepdim=True),
    "correction_float": lambda lib, x, f: getattr(x, f)(0, correction=0.5),
    "correction_eq_n": lambda lib, x, f: getattr(x, f)(0, correction=2),  # N - correction = 0
    "correction_gt_n": lambda lib, x, f: getattr(x, f)(0, correction=3),  # N - correction < 0
    "single_element": lambda lib, x, f: getattr(x[:1, :1, :1], f)(),  # N - 1 = 0
    "pair_mean": lambda lib, x, f: getattr(lib, f + "_mean")(x, [0, -1], correction=2, keepdim=True),
    "pair_mean_dim": lambda lib, x, f: getattr(lib, f + "_mean")(x, 1),
    "pair_mean_all": lambda lib, x, f: getattr(lib, f + "_mean")(x),
    "pair_mean_unbiased_kw": lambda lib, x, f: getattr(lib, f + "_mean")(x, 1, correction=0, keepdim=True),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("f", ["var", "std"])
@pytest.mark.parametrize("call", list(VAR_CALLS))
def test_var_std(call, f):
    each([(d,) for d in ("int32", "float16", "bfloat16", "float32", "float64")],
         lambda d: check(lambda lib: VAR_CALLS[call](lib, make(lib, (2, 3, 4), d), f), tol=tol(d)))


# ---------------------------------------------------------------------------- norms
NORM_VALUES = [[3.0, -4.0, 0.0, 1.5], [0.0, 0.0, 0.0, 0.0], [-2.0, 2.0, -0.25, 8.0]]
NORM_FORMS = {
    "norm": lambda lib, x, p, dim: x.norm(p, dim), "norm_fn": lambda lib, x, p, dim: lib.norm(x, p=p, dim=dim),
    "norm_keepdim": lambda lib, x, p, dim: x.norm(p, dim, True),
    "vector_norm": lambda lib, x, p, dim: vector_norm(lib)(x, p, dim),
    "vector_norm_float64": lambda lib, x, p, dim: vector_norm(lib)(x, ord=p, dim=dim, dtype=lib.float64),
}


@pytest.mark.parametrize("form", list(NORM_FORMS))
def test_norm_orders(form):
    """p = 0 counts nonzeros, inf/-inf give max/min |x|; a zero row has every norm 0."""
    def one(dtype, p, dim):
        check(lambda lib: NORM_FORMS[form](lib, T(lib, NORM_VALUES, dtype), p, dim), tol=tol(dtype))
    each([(d, p, dim) for d in ("float32", "float64", "bfloat16") for p in (0, 1, 2, 3, 0.5, INF, -INF)
          for dim in (None, 1, 0, (0, 1), -1)], one)


# ---------------------------------------------------------------------------- logsumexp
LSE_CASES = [[1000.0, 1000.0], [1000.0, -1000.0, 999.0], [-INF, -INF], [-INF, 0.0], [INF, 1.0],
             [INF, -INF], [NAN, 1.0], [-1000.0, -1000.0]]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_logsumexp_extremes(dtype):
    """Large values don't overflow, -inf rows give -inf, inf wins, NaN propagates."""
    def one(values):
        check(lambda lib: T(lib, values, dtype).logsumexp(0), tol=tol(dtype))
        check(lambda lib: lib.logsumexp(T(lib, [values, values[::-1]], dtype), (0, 1), keepdim=True), tol=tol(dtype))
        check(lambda lib: T(lib, values, dtype).logcumsumexp(0), tol=tol(dtype))
    each([(v,) for v in LSE_CASES], one)
    assert abs(ember.tensor([1000.0, 1000.0]).logsumexp(0).item() - (1000 + math.log(2))) < 1e-3


# ---------------------------------------------------------------------------- large inputs
@lru_cache(maxsize=None)
def large(lib_name, shape):
    lib = ember if lib_name == "ember" else torch
    rng = random.Random(str(shape))
    return lib.tensor([rng.random() for _ in range(math.prod(shape))], dtype=lib.float32).view(*shape)


LARGE_CALLS = {
    "sum": lambda x: x.sum(), "sum0": lambda x: x.sum(0), "sum_last": lambda x: x.sum(-1),
    "mean": lambda x: x.mean(), "nansum": lambda x: x.nansum(), "var": lambda x: x.var(),
    "std0": lambda x: x.std(0), "norm": lambda x: x.norm(), "logsumexp": lambda x: x.logsumexp(0),
    "amax": lambda x: x.amax(), "argmax": lambda x: x.argmax(), "argmin_last": lambda x: x.argmin(-1),
    "max_last": lambda x: x.max(-1), "min0": lambda x: x.min(0), "prod_last": lambda x: (x + 0.5).prod(-1),
    "count_nonzero": lambda x: (x > 0.5).count_nonzero(), "any": lambda x: (x > 0.9999999).any(),
    "all": lambda x: (x < 2).all(),
    # scans compare every 997th element: comparing 3M Python floats would take seconds
    "cumsum_last": lambda x: x.cumsum(-1)[..., ::997], "cummax": lambda x: [t[..., ::997] for t in x.cummax(-1)],
    "transposed_sum": lambda x: x.t().sum(-1) if x.dim() == 2 else x[::3].sum(0),
}


@pytest.mark.parametrize("shape", [(300, 500), (3_000_000,)])
def test_large(shape):
    """Inputs large enough for the multithreaded paths, against torch within float32 summation error."""
    calls = [c for c in LARGE_CALLS if not (c == "prod_last" and len(shape) == 1)]  # 3M factors underflow to 0
    each([(c,) for c in calls], lambda c: check(lambda lib: LARGE_CALLS[c](large(lib.__name__, shape)), tol=SUM_TOL))


# ---------------------------------------------------------------------------- errors
ERRORS = {  # exception type -> calls on a (2, 3, 4) float32 x
    IndexError: [
        lambda lib, x: x.sum(3), lambda lib, x: x.sum(-4), lambda lib, x: x.sum((0, 3)), lambda lib, x: x.max(5),
        lambda lib, x: x.argmax(3), lambda lib, x: x.cumsum(-4), lambda lib, x: x.cummax(3),
        lambda lib, x: x.aminmax(dim=3), lambda lib, x: x.var(3), lambda lib, x: x.logsumexp(3),
        lambda lib, x: x.prod(3), lambda lib, x: x.count_nonzero(7), lambda lib, x: x.amax(3),
        lambda lib, x: x.all(3), lambda lib, x: vector_norm(lib)(x, dim=3), lambda lib, x: x.max(0).values.argmax(2),
    ],
    RuntimeError: [
        lambda lib, x: x.sum((0, 0)), lambda lib, x: x.sum((1, -2)), lambda lib, x: x.amax((0, 0)),
        lambda lib, x: x.mean([2, -1]), lambda lib, x: x.var((1, 1)), lambda lib, x: lib.std_mean(x, (0, 0)),
        lambda lib, x: x.count_nonzero((0, 0)), lambda lib, x: x.logsumexp((0, 0)),
        lambda lib, x: vector_norm(lib)(x, dim=(2, 2)), lambda lib, x: x.norm(dim=(0, 0)),
        lambda lib, x: x.any((1, 1)), lambda lib, x: x.nansum((0, 0)),
        lambda lib, x: x.long().mean(), lambda lib, x: x.int().mean(1), lambda lib, x: x.long().var(),
        lambda lib, x: x.short().std(0), lambda lib, x: x.long().norm(), lambda lib, x: x.bool().mean(),
        lambda lib, x: vector_norm(lib)(x.long()), lambda lib, x: x.long().nanmean(),
        lambda lib, x: lib.var_mean(x.int()), lambda lib, x: x.expand(2, 2, 3, 4).cumsum_(0),
    ],
    TypeError: [
        lambda lib, x: x.sum("a"), lambda lib, x: x.sum(1.5), lambda lib, x: x.max("x"),
        lambda lib, x: x.cumsum(1.0), lambda lib, x: x.sum(dim=1, keepdim="yes"),
        lambda lib, x: x.sum(dtype="float32"), lambda lib, x: lib.sum([1.0, 2.0]),
        lambda lib, x: x.argmax(dim=(0, 1)), lambda lib, x: x.var(correction="a"),
        lambda lib, x: x.prod((0, 1)), lambda lib, x: x.cumsum(), lambda lib, x: x.logsumexp(),
        lambda lib, x: x.max(0, 1, 2), lambda lib, x: x.sum(bogus=1), lambda lib, x: x.cummax((0, 1)),
        lambda lib, x: x.count_nonzero(0, keepdim=True), lambda lib, x: lib.aminmax(x, 0),
    ],
}


@pytest.mark.parametrize("exc", list(ERRORS), ids=lambda e: e.__name__)
def test_errors(exc):
    """Bad and repeated dims, integer inputs of float-only ops, wrong argument types."""
    def one(i, fn):
        with pytest.raises(exc):
            fn(torch, make(torch, (2, 3, 4), "float32"))  # the case itself is right
        with pytest.raises(exc):
            fn(ember, make(ember, (2, 3, 4), "float32"))
    each(list(enumerate(ERRORS[exc])), one)


# ------------------------------------------------------------- ember.return_types
def test_return_types_module():
    """Each named tuple result's type is ember.return_types.<op>, with torch's fields, and
    pickles through that name."""
    import pickle

    names = set(ember._C._return_types())
    assert {"max", "min", "aminmax", "cummax", "sort", "topk", "mode"} <= names
    for name in sorted(names):
        t = getattr(ember.return_types, name)
        assert (t.__module__, t.__name__) == ("ember.return_types", name)
        assert t.__match_args__ == getattr(torch.return_types, name).__match_args__, name
    r = ember.tensor([[1.0, 5.0], [3.0, 2.0]]).max(1)
    assert type(r) is ember.return_types.max and r.indices.tolist() == [1, 0]
    again = pickle.loads(pickle.dumps(r))
    assert type(again) is ember.return_types.max and again.values.tolist() == [5.0, 3.0]
    assert ember.return_types.linalg_slogdet is type(ember.linalg.slogdet(ember.eye(2)))
    assert "max" in dir(ember.return_types)
    with pytest.raises(AttributeError):
        ember.return_types.no_such_op


# ------------------------------------------------------------- out= tuples of ops returning several tensors
X34 = [[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 4.0, 5.0], [2.0, 2.0, -1.0, 7.0]]
SPD = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
TUPLE_OUT = {  # name -> (call(lib, out), dtypes of the results)
    "max": (lambda lib, out: lib.max(lib.tensor(X34), 1, out=out), ("float32", "int64")),
    "min keepdim": (lambda lib, out: lib.min(lib.tensor(X34), 0, True, out=out), ("float32", "int64")),
    "sort": (lambda lib, out: lib.sort(lib.tensor(X34), 1, out=out), ("float32", "int64")),
    "sort stable": (lambda lib, out: lib.sort(lib.tensor(X34), stable=True, dim=0, out=out), ("float32", "int64")),
    "topk": (lambda lib, out: lib.topk(lib.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]), 2, out=out), ("float32", "int64")),
    "kthvalue": (lambda lib, out: lib.kthvalue(lib.tensor(X34), 2, 0, out=out), ("float32", "int64")),
    "median": (lambda lib, out: lib.median(lib.tensor(X34), 1, out=out), ("float32", "int64")),
    "nanmedian": (lambda lib, out: lib.nanmedian(lib.tensor(X34), 1, out=out), ("float32", "int64")),
    "mode": (lambda lib, out: lib.mode(lib.tensor(X34), 1, out=out), ("float32", "int64")),
    "cummax": (lambda lib, out: lib.cummax(lib.tensor(X34), 1, out=out), ("float32", "int64")),
    "cummin int": (lambda lib, out: lib.cummin(lib.tensor([[3, 1], [2, 4]]), 0, out=out), ("int64", "int64")),
    "aminmax": (lambda lib, out: lib.aminmax(lib.tensor(X34), dim=1, out=out), ("float32", "float32")),
    "slogdet": (lambda lib, out: lib.linalg.slogdet(lib.tensor(SPD), out=out), ("float32", "float32")),
    "eigh": (lambda lib, out: lib.linalg.eigh(lib.tensor(SPD), out=out), ("float32", "float32")),
    "qr": (lambda lib, out: lib.linalg.qr(lib.tensor(SPD), out=out), ("float32", "float32")),
    "svd": (lambda lib, out: lib.linalg.svd(lib.tensor(SPD), out=out), ("float32", "float32", "float32")),
}


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
@pytest.mark.parametrize("kind", ["empty", "resized", "list", "wrong dtype", "too few"])
@pytest.mark.parametrize("name", TUPLE_OUT)
def test_tuple_out(name, kind):
    call, dtypes = TUPLE_OUT[name]
    expected = call(torch, None)

    def run(lib):
        outs = [lib.empty(0 if kind != "resized" else 5, dtype=getattr(lib, d)) for d in dtypes]
        if kind == "wrong dtype":
            outs[-1] = lib.empty(0, dtype=lib.float64 if dtypes[-1] != "float64" else lib.float32)
        if kind == "too few":
            outs = outs[:1]
        r = call(lib, outs if kind == "list" else tuple(outs))
        assert all(a is b for a, b in zip(r, outs)) and type(r).__name__ in (
            name.split()[0] + "_out", f"linalg_{name}_out", f"linalg_{name}")
        return tuple(r)
    check(run, tol=1e-5)
    if kind == "empty":  # the values are the plain call's
        assert_same(call(ember, None), expected, tol=1e-5)


FIXED = {  # once known bugs (see git history); each kept as a parity case
    "all_any_empty_dim_list": lambda lib: lib.tensor([[1.0, 0.0], [2.0, 3.0]]).all([]),
    "any_empty_dim_tuple_keepdim": lambda lib: lib.tensor([[1, 0], [2, 3]], dtype=lib.uint8).any((), keepdim=True),
    "empty_amax_exception": lambda lib: lib.zeros(0, 3).amax(),
    "empty_amin_dim": lambda lib: lib.zeros(0, 3).amin(0),
    "empty_amax_other_dim": lambda lib: lib.zeros(0, 3).amax(1),
    "empty_argmax_exception": lambda lib: lib.zeros(0, 3).argmax(),
    "var_mean_positional_unbiased": lambda lib: lib.var_mean(lib.tensor([[1.0, 0.0], [2.0, 3.0]]), 1, True),
    "std_mean_positional_keepdim": lambda lib: lib.std_mean(lib.tensor([[1.0, 0.0], [2.0, 3.0]]), [1], False, True),
    "var_mean_unbiased_only": lambda lib: lib.var_mean(lib.tensor([[1.0, 0.0], [2.0, 3.0]]), False),
    "amax_dim_none": lambda lib: lib.amax(lib.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=None),
    "amin_dim_none_keepdim": lambda lib: lib.tensor([[1.0, 0.0], [2.0, 3.0]]).amin(None, True),
    "logcumsumexp_integers": lambda lib: lib.tensor([1, 2]).logcumsumexp(0),
    "cumsum_dtype_bool": lambda lib: lib.tensor([1.0, 2.0]).cumsum(0, dtype=lib.bool),
    "nanmean_integer_dtype": lambda lib: lib.tensor([1, 2]).nanmean(dtype=lib.float32),
    "norm_dtype_narrowing": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64).norm(dtype=lib.float32),
    "norm_dtype_widening": lambda lib: lib.tensor([1.0, 2.0]).norm(dtype=lib.float64),
    "sum_out_cast": lambda lib: lib.sum(lib.tensor([1.5, 1.5]), 0, out=lib.empty(0, dtype=lib.int64)),
    "cumsum_out_cast": lambda lib: lib.cumsum(lib.tensor([1.5, 1.5]), 0, out=lib.empty(0, dtype=lib.int64)),
    "sum_out_dtype_conflict": lambda lib: lib.sum(lib.tensor([1, 2]), 0, dtype=lib.int64,
                                                  out=lib.empty(0, dtype=lib.uint8)),
    "all_out_float": lambda lib: lib.all(lib.tensor([1.0, 2.0]), 0, out=lib.empty(0)),
    "all_uint8_out_bool": lambda lib: lib.all(lib.tensor([1, 2], dtype=lib.uint8), 0, out=lib.empty(0, dtype=lib.bool)),
    "amax_out_float64": lambda lib: lib.amax(lib.tensor([1.5, 2.0]), 0, out=lib.empty(0, dtype=lib.float64)),
    "logcumsumexp_out_float64": lambda lib: lib.logcumsumexp(lib.tensor([1.5, 2.0]), 0,
                                                             out=lib.empty(0, dtype=lib.float64)),
}


@pytest.mark.parametrize("name", FIXED)
def test_fixed_cases(name):
    parity(FIXED[name])
