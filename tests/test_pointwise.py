"""Pointwise and comparison ops against torch (declarations/ops/pointwise.yaml and
comparison.yaml).

One table, OPS, has a row per op (or per overload / keyword flavour of an op): its name,
the value domain of each tensor argument, extra arguments, tolerance and which forms
(method, in-place, out=, Python operators, aliases) it has. Parametrized tests drive
every row through: all 10 dtypes, layouts (broadcast, 0-dim, empty, transposed, sliced),
type promotion with mixed dtypes and Python numbers, the method, in-place and out= forms,
its operators and aliases, and special float values (NaN, +-inf, -0.0). Hand-written
cases at the end cover the errors torch raises and a few exact values."""
from __future__ import annotations

import functools
import math
import os
import random
import sys
from dataclasses import dataclass, replace, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

import ember
from helpers import DTYPE_NAMES, check, torch

# ---------------------------------------------------------------------------- inputs
# domain -> (float values, signed int values, uint8 values, bool values); every value is
# exact in float16 and bfloat16.
DOMAINS = {
    "any": ([-2.5, -1.75, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.25],
            range(-5, 6), range(0, 10), (False, True)),
    "pos": ([0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.5, 8.0], range(1, 10), range(1, 10), (True,)),
    "unit": ([-0.875, -0.5, -0.25, 0.0, 0.125, 0.5, 0.75], (-1, 0, 1), (0, 1), (False, True)),
    "ge1": ([1.0, 1.25, 1.5, 2.0, 3.0, 4.5, 8.0], range(1, 10), range(1, 10), (True,)),
    "prob": ([0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875], (0, 1), (0, 1), (False, True)),
    "nonzero": ([-2.5, -1.5, -0.5, 0.25, 0.5, 1.0, 2.0, 3.5], (-5, -3, -2, -1, 1, 2, 3, 5), range(1, 10), (True,)),
    "small": ([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 2.5], range(0, 4), range(0, 4), (False, True)),
}
FLOATS = ("float16", "bfloat16", "float32", "float64")
HALF_TOL = {"float16": 2e-3, "bfloat16": 1e-2}


def pool(domain, dtype):
    floats, ints, uints, bools = DOMAINS[domain]
    return list(floats if dtype in FLOATS else uints if dtype == "uint8" else bools if dtype == "bool" else ints)


def nest(flat, shape):
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def mk(lib, shape, dtype, domain="any", seed=0, layout="c"):
    """A tensor of `shape` in `dtype` from the domain's values; layout 'c' contiguous,
    't' transposed (built as the reverse shape, then .t()), 's' sliced [:, ::2]."""
    if domain == "cond":
        dtype, domain = "bool", "any"
    elif domain == "0d":
        shape, domain = (), "any"
    shape = tuple(shape)
    if layout == "t":
        return mk(lib, shape[::-1], dtype, domain, seed).t()
    if layout == "s":
        return mk(lib, (shape[0], 2 * shape[1]), dtype, domain, seed)[:, ::2]
    d = getattr(lib, dtype)
    if math.prod(shape) == 0:
        return lib.tensor([], dtype=d).reshape(shape)
    return lib.tensor(sample(shape, dtype, domain, seed), dtype=d)


@functools.lru_cache(maxsize=None)
def sample(shape, dtype, domain, seed):
    """Nested lists of shape, drawn (seeded) from the domain's values for dtype."""
    values, rng = pool(domain, dtype), random.Random(seed * 7919 + len(shape))
    return nest([rng.choice(values) for _ in range(math.prod(shape))], list(shape))


# ---------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Op:
    key: str                              # test id
    name: str                             # the declared op name
    args: tuple = ("any",)                # value domain of each tensor argument (cond: a bool tensor, 0d: 0-dim)
    extra: tuple = ()                     # positional arguments after the tensors
    kw: dict = field(default_factory=dict)
    tol: float = 0.0                      # float32/float64 tolerance
    method: bool = True
    inplace: bool = True
    out: bool = True
    operators: tuple = ()
    numbers: tuple = ()                   # tensor-argument positions that also take a Python number
    aliases: tuple = ()
    main: str = "float32"                 # the dtype of layout, out= and alias tests
    promo: tuple = (0, 1)                 # the two positions mixed in the type-promotion tests

    def __repr__(self):
        return self.key


T = 1e-5  # transcendental float32


def unary(name, domain="any", tol=T, *, key=None, **kw):
    return Op(key or name, name, (domain,), tol=tol, **kw)


def binary(name, a="any", b="any", *, key=None, numbers=(0, 1), **kw):
    return Op(key or name, name, (a, b), numbers=numbers, **kw)


ARITH = ("__add__", "__radd__", "__iadd__")
OPS = [
    *(unary(n) for n in ("exp", "exp2", "expm1", "sin", "cos", "tan", "sinh", "cosh", "tanh", "erf", "erfc",
                         "sigmoid")),
    *(unary(n, "pos") for n in ("log", "log2", "log10", "log1p", "sqrt", "rsqrt")),
    unary("asin", "unit", aliases=("arcsin",)), unary("acos", "unit", aliases=("arccos",)),
    unary("atan", aliases=("arctan",)), unary("asinh", aliases=("arcsinh",)),
    unary("acosh", "ge1", aliases=("arccosh",)), unary("atanh", "unit", aliases=("arctanh",)),
    unary("erfinv", "unit"), unary("reciprocal", "nonzero"),
    unary("abs", tol=0, operators=("__abs__",), aliases=("absolute",)),
    *(unary(n, tol=0) for n in ("sign", "sgn", "floor", "ceil", "round", "frac", "square")),
    replace(unary("relu", tol=0), out=False),
    unary("trunc", tol=0, aliases=("fix",)),
    unary("round", key="round_decimals", kw={"decimals": 1}),
    unary("round", key="round_decimals_neg", tol=0, kw={"decimals": -1}),
    unary("bitwise_not", tol=0, operators=("__invert__",), main="int64"),
    unary("neg", tol=0, operators=("__neg__",), aliases=("negative",)),
    unary("positive", tol=0, operators=("__pos__",), inplace=False, out=False),
    unary("logit", "prob"), unary("logit", "any", key="logit_eps", kw={"eps": 0.25}),
    unary("nan_to_num", tol=0), unary("nan_to_num", key="nan_to_num_kw", tol=0,
                                      kw={"nan": 1.5, "posinf": 100.0, "neginf": -100.0}),
    *(unary(n, tol=0, inplace=False, out=False) for n in ("isnan", "isinf", "isfinite")),
    *(unary(n, tol=0, inplace=False) for n in ("isposinf", "isneginf", "signbit")),
    unary("logical_not", tol=0),
    binary("add", operators=ARITH), binary("add", key="add_alpha", kw={"alpha": 2}),
    binary("sub", operators=("__sub__", "__rsub__", "__isub__"), aliases=("subtract",)),
    binary("sub", key="sub_alpha", kw={"alpha": 3}),
    binary("rsub", numbers=(1,), method=False, inplace=False, out=False),
    binary("mul", operators=("__mul__", "__rmul__", "__imul__"), aliases=("multiply",)),
    binary("div", "any", "nonzero", operators=("__truediv__", "__rtruediv__", "__itruediv__"),
           aliases=("divide", "true_divide"), tol=1e-7),
    binary("div", "any", "nonzero", key="div_trunc", kw={"rounding_mode": "trunc"}, aliases=("divide",)),
    binary("div", "any", "nonzero", key="div_floor", kw={"rounding_mode": "floor"}),
    binary("floor_divide", "any", "nonzero", operators=("__floordiv__", "__rfloordiv__", "__ifloordiv__")),
    binary("remainder", "any", "nonzero", operators=("__mod__", "__rmod__", "__imod__")),
    binary("fmod", "any", "nonzero", numbers=(1,)),
    binary("pow", "any", "small", operators=("__pow__", "__rpow__", "__ipow__"), tol=T),
    binary("float_power", "any", "small", tol=1e-12, main="float64"),  # in place: float64 self only
    binary("atan2", tol=T, numbers=(), aliases=("arctan2",)),
    binary("hypot", tol=T, numbers=()),
    binary("logaddexp", tol=T, numbers=(), inplace=False),
    binary("logaddexp2", tol=T, numbers=(), inplace=False),
    binary("copysign", numbers=(1,)),
    binary("xlogy", "any", "pos", tol=T),
    *(binary(n, numbers=(), inplace=False) for n in ("maximum", "minimum", "fmax", "fmin")),
    *(binary(f"bitwise_{n}", operators=(f"__{n}__", f"__r{n}__", f"__i{n}__"), main="int64")
      for n in ("and", "or", "xor")),
    binary("bitwise_left_shift", "any", "small", operators=("__lshift__", "__rlshift__", "__ilshift__"), main="int64"),
    binary("bitwise_right_shift", "any", "small", operators=("__rshift__", "__rrshift__", "__irshift__"), main="int64"),
    binary("clamp_min", numbers=(1,)), binary("clamp_max", numbers=(1,)),
    Op("clamp", "clamp", extra=(-1, 2), aliases=("clip",)),
    Op("clamp_min_only", "clamp", kw={"min": 0.5}),
    Op("clamp_max_kw", "clamp", kw={"max": 1}, aliases=("clip",)),
    Op("clamp_tensor", "clamp", ("any", "any", "any"), aliases=("clip",)),
    binary("lerp", key="lerp_scalar", extra=(0.375,), numbers=()),
    Op("lerp_tensor", "lerp", ("any", "any", "prob")),
    Op("addcmul", "addcmul", ("any", "any", "any"), kw={"value": 2}, tol=1e-7),  # torch may fuse (fma)
    Op("addcdiv", "addcdiv", ("any", "any", "nonzero"), kw={"value": 0.5}, tol=1e-7),
    Op("where", "where", ("cond", "any", "any"), method=False, inplace=False, out=False, numbers=(1, 2), promo=(1, 2)),
    Op("masked_fill", "masked_fill", ("any", "cond"), extra=(3,), out=False, promo=()),
    Op("masked_fill_tensor", "masked_fill", ("any", "cond", "0d"), out=False, promo=()),
    *(binary(n, numbers=(1,), operators=(f"__{n}__",), aliases=a) for n, a in [
        ("eq", ()), ("ne", ("not_equal",)), ("lt", ("less",)), ("le", ("less_equal",)), ("gt", ("greater",)),
        ("ge", ("greater_equal",))]),
    *(binary(f"logical_{n}", numbers=()) for n in ("and", "or", "xor")),
    binary("isclose", numbers=(), inplace=False, out=False),
    binary("isclose", key="isclose_kw", numbers=(), inplace=False, out=False,
           kw={"rtol": 0.25, "atol": 0.5, "equal_nan": True}),
]
assert len({op.key for op in OPS}) == len(OPS)
TESTED_OPS = {op.name for op in OPS} | {a for op in OPS for a in op.aliases}


def tol_for(op, *dtypes):
    return max([op.tol] + [HALF_TOL.get(d, 0.0) for d in dtypes])


def call(op, lib, args, form="function", name=None, out=None):
    name = name or op.name
    if form == "function":
        return getattr(lib, name)(*args, *op.extra, **op.kw) if out is None else \
            getattr(lib, name)(*args, *op.extra, **op.kw, out=out)
    if form == "method":
        return getattr(args[0], name)(*args[1:], *op.extra, **op.kw)
    x = args[0]  # in-place: whether it returns self, and self's values
    r = getattr(x, name + "_")(*args[1:], *op.extra, **op.kw)
    return r is x, x


def inputs(op, lib, dtype, shapes, layouts=None):
    layouts = layouts or "c" * len(shapes)
    return [mk(lib, s, dtype, dom, i, lay) for i, (dom, s, lay) in enumerate(zip(op.args, shapes, layouts))]


# ---------------------------------------------------------------------------- known ember bugs
# (test, *param ids) -> reason: each a strict xfail, so a fix shows up as XPASS
BUGS = {
    ("type_promotion", "mul", "half_big_number"): ("a Python number is rounded to float16 before multiplying: "
                                              "float16 0 * 1e5 is nan in ember, 0 in torch"),
    ("special_values", "addcmul", "float32"): ("addcmul float32 -inf + 2 * -1e30 * -1e30: ember nan (the "
                                               "product overflows), torch -inf"),
}


PARAM_IDS = set()
XFAIL_IDS = set()  # "test_x[id]" of the BUGS cases


def __tracebackhide__(excinfo):
    """pytest renders the traceback of an xfail too, parsing this module's source for each of
    its frames (~0.2 s a test): a known bug's traceback leaves out this module's frames."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[-1].rsplit(" ", 1)[0] in XFAIL_IDS


def params(test, first, *more):
    """pytest params: each item of first (a tuple is spread) with each combination of more;
    the combinations listed in BUGS are strict xfails."""
    out = [p if isinstance(p, tuple) else (p,) for p in first]
    for values in more:
        out = [p + (v,) for p in out for v in values]
    PARAM_IDS.update((test, *map(str, p)) for p in out)
    XFAIL_IDS.update(f"test_{test}[{'-'.join(map(str, p))}]" for p in out if (test, *map(str, p)) in BUGS)
    marks = lambda p: [pytest.mark.xfail(reason=BUGS[k], strict=True)] if (k := (test, *map(str, p))) in BUGS else []
    return [pytest.param(*p, id="-".join(str(v) for v in p), marks=marks(p)) for p in out]


# ---------------------------------------------------------------------------- every dtype, every form
def test_table_rows_run_in_torch():
    """Every row's inputs and call work in torch for its main dtype (check() would take an
    error of the test's own making, raised by both libraries, for a pass)."""
    for op in OPS:
        result = call(op, torch, inputs(op, torch, op.main, [(3, 4)] * 3))
        for form in ["method"] * op.method + ["inplace"] * op.inplace:
            call(op, torch, inputs(op, torch, op.main, [(3, 4)] * 3), form)
        if op.out:
            call(op, torch, inputs(op, torch, op.main, [(3, 4)] * 3), out=torch.empty(0, dtype=result.dtype))


DTYPE_GROUPS = {"bool": ["bool"], "uint8": ["uint8"], "int": ["int8", "int16", "int32", "int64"],
                "half": ["float16", "bfloat16"], "float32": ["float32"], "float64": ["float64"]}
assert sum(DTYPE_GROUPS.values(), []) == DTYPE_NAMES


@pytest.mark.parametrize("op, group", params("dtypes", OPS, DTYPE_GROUPS))
def test_dtypes(op, group):
    """Function, method and in-place forms on (3, 4) inputs of each dtype of the group."""
    for dtype in DTYPE_GROUPS[group]:
        tol = tol_for(op, dtype)
        check(lambda lib: call(op, lib, inputs(op, lib, dtype, [(3, 4)] * 3)), tol=tol)
        if op.method:
            check(lambda lib: call(op, lib, inputs(op, lib, dtype, [(3, 4)] * 3), "method"), tol=tol)
        if op.inplace:
            check(lambda lib: call(op, lib, inputs(op, lib, dtype, [(3, 4)] * 3), "inplace"), tol=tol)


LAYOUTS = {  # group -> per argument: shapes and layouts. In place, self's shape is fixed:
    # broadcasting other to it is fine, broadcasting self (the first case) is an error
    "broadcast": [([(3, 1), (4,), (1, 4)], "ccc"), ([(2, 3, 4), (3, 1), (1,)], "ccc"), ([(3,), (4,), (3,)], "ccc")],
    "zero_dim_and_empty": [([(), (), ()], "ccc"), ([(2, 3), (), ()], "ccc"), ([(0, 3), (3,), (0, 1)], "ccc")],
    "strided": [([(3, 4), (3, 4), (3, 4)], "ttc"), ([(3, 4), (3, 4), (3, 4)], "sts")],  # transposed, sliced
}


@pytest.mark.parametrize("op, group", params("layouts", OPS, LAYOUTS))
def test_layouts(op, group):
    """Function and in-place forms on broadcast (and mismatched), 0-dim, empty and
    non-contiguous (transposed, sliced with a step) inputs."""
    for shapes, lay in LAYOUTS[group]:
        check(lambda lib: call(op, lib, inputs(op, lib, op.main, shapes, lay)), tol=op.tol)
        if op.inplace:
            check(lambda lib: call(op, lib, inputs(op, lib, op.main, shapes, lay), "inplace"), tol=op.tol)


OUT_CASES = ["result_dtype", "bool", "int64", "float64"]


@pytest.mark.parametrize("op, case", params("out", [op for op in OPS if op.out], OUT_CASES))
def test_out(op, case):
    """out= of the result dtype (empty, of another shape: resized, non-contiguous), or of
    another dtype: fine when the result casts to it, else an error."""
    expected = call(op, torch, inputs(op, torch, op.main, [(3, 4)] * 3))
    dtype = repr(expected.dtype).split(".")[1] if case == "result_dtype" else case
    outs = [lambda lib: lib.empty(0, dtype=getattr(lib, dtype))]
    if case == "result_dtype":
        outs += [lambda lib: mk(lib, (2,), dtype), lambda lib: mk(lib, (4, 3), dtype).t()]
    for make_out in outs:
        def run(lib):
            o = make_out(lib)
            return call(op, lib, inputs(op, lib, op.main, [(3, 4)] * 3), out=o) is o, o
        check(run, tol=op.tol)


# ---------------------------------------------------------------------------- type promotion
def operand(lib, spec, domain, seed):
    """('t', dtype): a (2, 3) tensor, ('0d', dtype): a 0-dim tensor, or a Python number."""
    if isinstance(spec, tuple):
        return mk(lib, (2, 3) if spec[0] == "t" else (), spec[1], domain, seed)
    return spec


MIXES = {  # group -> [(left operand, right operand)]
    "numbers": [(("t", "int64"), 2.5), (("t", "float32"), 2), (0.5, ("t", "uint8")), (2, ("t", "int16")),
                (("0d", "int32"), 1.5)],
    "uint8": [(("t", "uint8"), 300), (("t", "uint8"), -3), (("t", "uint8"), ("0d", "int64")),
              (("t", "int8"), ("t", "uint8"))],
    "bool": [(("t", "bool"), 3), (("t", "bool"), True), (("t", "bool"), ("0d", "int8")), (1.5, ("t", "bool"))],
    "bool_other": [(("t", "float32"), True), (("t", "int16"), ("t", "bool"))],
    "zero_dim": [(("t", "int32"), ("0d", "float64")), (("t", "int32"), ("0d", "int64")),
                 (("t", "float16"), ("0d", "float64")), (("0d", "float64"), ("t", "int32")),
                 (("0d", "int64"), ("0d", "float32"))],
    "floats": [(("t", "float16"), ("t", "float32")), (("t", "bfloat16"), ("t", "float16")),
               (("t", "float32"), ("t", "float64")), (("t", "int64"), ("t", "float16"))],
    "half_big_number": [(("t", "float16"), 1e5), (("t", "bfloat16"), 1e39)],
}


PROMOTED = [op for op in OPS if len(op.args) > 1 and op.promo]


@pytest.mark.parametrize("op, group", params("type_promotion", PROMOTED, MIXES))
def test_type_promotion(op, group):
    """Mixed dtypes, 0-dim tensors and Python numbers in the two promoted arguments (any
    other argument, where's condition or a third tensor, is a bool tensor)."""
    i, j = op.promo
    for a, b in MIXES[group]:
        def run(lib):
            args = inputs(op, lib, "bool", [(2, 3)] * 3)  # where's condition
            args[i], args[j] = operand(lib, a, op.args[i], i), operand(lib, b, op.args[j], j)
            return call(op, lib, args)
        check(run, tol=tol_for(op, "bfloat16"))


# ---------------------------------------------------------------------------- operators and aliases
BINOPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
          "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
          "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
UNOPS = {"__neg__": "-", "__pos__": "+", "__abs__": "abs", "__invert__": "~"}


def is_reflected(dunder):
    return dunder.startswith("__r") and dunder.strip("_")[1:] in BINOPS


def apply_operator(dunder, a, b):
    if dunder in UNOPS:
        return abs(a) if dunder == "__abs__" else eval(UNOPS[dunder] + "a")
    base = dunder.strip("_")
    if base in BINOPS:
        sym = BINOPS[base]
        if sym in MIRROR and not isinstance(b, ember.Tensor | torch.Tensor):  # and reflected: 2 > a is a < 2
            return [eval(f"a {sym} b"), eval(f"b {MIRROR[sym]} a")]
        return eval(f"a {sym} b")
    if is_reflected(dunder):  # the number on the left
        return eval(f"b {BINOPS[base[1:]]} a")
    x = a  # augmented assignment: whether it stays the same object, and its values
    exec(f"a {BINOPS[base[1:]]}= b")
    return a is x, a


OPERAND = {"tensor": None, "int": 3, "float": 1.5}
OPERATOR_PARAMS = [(op, d, k) for op in OPS for d in op.operators for k in OPERAND
                   if ((k == "tensor") if d in UNOPS else not (is_reflected(d) and k == "tensor"))]


@pytest.mark.parametrize("op, dunder, operand_kind", params("operators", OPERATOR_PARAMS))
def test_operators(op, dunder, operand_kind):
    """Each Python operator, forward, reflected (a number on the left) and augmented, with a
    tensor (broadcast (4,) to (3, 4)), an int or a float operand, in five dtypes."""
    for dtype in ("bool", "uint8", "int32", "float16", "float32"):
        def run(lib):
            a, b = inputs(op, lib, dtype, [(3, 4)])[0], OPERAND[operand_kind]
            if is_reflected(dunder):
                a = mk(lib, (3, 4), dtype, op.args[1], 1)  # the tensor is the right operand
            elif b is None and len(op.args) > 1:
                b = mk(lib, (4,), dtype, op.args[1], 1)
            return apply_operator(dunder, a, b)
        check(run, tol=tol_for(op, dtype))


ALIAS_PARAMS = [(op, a) for op in OPS for a in op.aliases]


@pytest.mark.parametrize("op, alias", params("aliases", ALIAS_PARAMS))
def test_aliases(op, alias):
    """ember.<alias>, Tensor.<alias> and Tensor.<alias>_ where torch has them, as the op."""
    for form in ("function", "method", "inplace"):
        if form != "function" and not hasattr(torch.Tensor, alias + ("_" if form == "inplace" else "")):
            continue
        for dtype in (op.main, "int64"):
            check(lambda lib: call(op, lib, inputs(op, lib, dtype, [(3, 4)] * 3), form, name=alias),
                  tol=tol_for(op, dtype))


# ---------------------------------------------------------------------------- special float values
SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, -1e30]
NO_ZERO_SIGN = {"relu", "maximum", "minimum", "fmax", "fmin", "clamp_min", "clamp_max", "clamp"}  # max(-0., 0.)


def zero_signs(t):
    flat = t.reshape(-1).tolist() if t.dim() else [t.item()]
    return [math.copysign(1, v) if v == 0 else 0 for v in flat]


@pytest.mark.parametrize("op, dtype", params("special_values", OPS, ["float32", "float64", "float16"]))
def test_special_values(op, dtype):
    """NaN, +-inf, -0.0, tiny and huge values against each other (an outer product); the
    sign of every zero in the result must match torch's too."""
    n = len(SPECIALS)

    def run(lib):
        shapes = [(n, 1, 1), (1, n, 1), (1, 1, n)][:len(op.args)]
        args = []
        for i, (dom, shape) in enumerate(zip(op.args, shapes)):
            vals = [k % 3 == 0 for k in range(n)] if dom == "cond" else SPECIALS[i:] + SPECIALS[:i]
            t = lib.tensor(vals, dtype=getattr(lib, "bool" if dom == "cond" else dtype))
            args.append(t[0] if dom == "0d" else t.reshape(shape))
        return call(op, lib, args)
    got = check(run, tol=tol_for(op, dtype))
    if got is not None and got.dtype.is_floating_point and op.name not in NO_ZERO_SIGN:
        assert zero_signs(got) == zero_signs(run(torch)), "signs of zeros differ"


# ---------------------------------------------------------------------------- errors and exact values
def typed(dtype):
    return lambda lib, values: lib.tensor(values, dtype=getattr(lib, dtype))


i64, f32, b8 = typed("int64"), typed("float32"), typed("bool")


def out_of(lib, fn, dtype):
    o = lib.empty(0, dtype=getattr(lib, dtype))
    fn(o)
    return o


NAN, INF = math.nan, math.inf
CASES = {
    # shapes and argument types
    "add_shape_mismatch": lambda lib: lib.add(f32(lib, [1, 2, 3]), f32(lib, [1, 2])),
    "eq_shape_mismatch": lambda lib: f32(lib, [[1, 2, 3]] * 2) == f32(lib, [1, 2]),
    "add_str": lambda lib: lib.add(f32(lib, [1]), "a"),
    "add_none": lambda lib: lib.add(f32(lib, [1]), None),
    "add_list": lambda lib: lib.add(f32(lib, [1]), [1, 2]),
    "operator_str": lambda lib: f32(lib, [1]) + "a",
    "roperator_str": lambda lib: "a" * f32(lib, [1]),
    "exp_number": lambda lib: lib.exp(2.0),
    "exp_extra_arg": lambda lib: lib.exp(f32(lib, [1]), 1),
    "add_bad_kwarg": lambda lib: lib.add(f32(lib, [1]), 1, beta=2),
    "add_alpha_str": lambda lib: lib.add(f32(lib, [1]), 1, alpha="x"),
    "add_float_alpha_int": lambda lib: lib.add(i64(lib, [1]), i64(lib, [2]), alpha=0.5),
    "add_alpha_bool": lambda lib: lib.add(b8(lib, [True]), b8(lib, [True]), alpha=2),
    "fmod_number_self": lambda lib: lib.fmod(2, f32(lib, [1])),
    "copysign_number_self": lambda lib: lib.copysign(2, f32(lib, [1])),
    "eq_number_self": lambda lib: lib.eq(2, f32(lib, [1])),
    "atan2_number": lambda lib: lib.atan2(f32(lib, [1]), 2),
    "maximum_number": lambda lib: lib.maximum(f32(lib, [1]), 2),
    "rsub_number_self": lambda lib: lib.rsub(2, f32(lib, [1])),
    "round_decimals_str": lambda lib: lib.round(f32(lib, [1]), decimals="1"),
    "logit_eps_str": lambda lib: lib.logit(f32(lib, [0.5]), eps="x"),
    # div rounding modes
    "div_bad_mode": lambda lib: lib.div(f32(lib, [1]), 2, rounding_mode="bad"),
    "div_mode_none": lambda lib: lib.div(i64(lib, [7, -7]), 2, rounding_mode=None),
    "div_trunc_int": lambda lib: lib.div(i64(lib, [7, -7]), i64(lib, [2, 2]), rounding_mode="trunc"),
    "div_int_by_zero_true": lambda lib: i64(lib, [1, -1, 0]) / 0,
    # integer division by zero (the messages are checked in test_integer_division_by_zero)
    "floordiv_int_zero": lambda lib: i64(lib, [1, 2]) // 0,
    "floordiv_int_zero_tensor": lambda lib: i64(lib, [1, 2]) // i64(lib, [1, 0]),
    "mod_int_zero": lambda lib: i64(lib, [1, 2]) % 0,
    "remainder_u8_zero": lambda lib: lib.remainder(lib.tensor([3], dtype=lib.uint8), 0),
    "fmod_int_zero": lambda lib: lib.fmod(i64(lib, [1, 2]), 0),
    "div_floor_int_zero": lambda lib: lib.div(i64(lib, [1]), 0, rounding_mode="floor"),
    "div_trunc_int_zero": lambda lib: lib.div(i64(lib, [1]), i64(lib, [0]), rounding_mode="trunc"),
    "floordiv_float_zero": lambda lib: lib.floor_divide(f32(lib, [1, -1, 0, NAN]), 0.0),
    "mod_float_zero": lambda lib: f32(lib, [1, -1, 0]) % 0.0,
    "fmod_float_zero": lambda lib: lib.fmod(f32(lib, [1, -1]), 0),
    # pow
    "pow_int_neg_number": lambda lib: i64(lib, [1, 2]) ** -1,
    "pow_int_neg_number_fn": lambda lib: lib.pow(i64(lib, [1, 2]), -2),
    "pow_int_neg_tensor": lambda lib: lib.pow(i64(lib, [1, -1, 2, 0]), i64(lib, [-1, -3, -1, 2])),
    "pow_number_int_tensor": lambda lib: 2 ** i64(lib, [0, 3, 10]),
    "pow_int_float_number": lambda lib: i64(lib, [4, 9]) ** 0.5,
    "float_power_inplace_f32": lambda lib: f32(lib, [2]).float_power_(2),
    "float_power_inplace_f64": lambda lib: lib.tensor([2.0], dtype=lib.float64).float_power_(i64(lib, [3])),
    # bool arithmetic
    "bool_sub": lambda lib: b8(lib, [True]) - b8(lib, [False]),
    "bool_sub_number": lambda lib: b8(lib, [True]) - 1,
    "bool_rsub": lambda lib: lib.rsub(b8(lib, [True]), b8(lib, [True])),
    "bool_neg": lambda lib: -b8(lib, [True]),
    "bool_positive": lambda lib: +b8(lib, [True]),
    "bool_abs": lambda lib: abs(b8(lib, [True])),
    "float_invert": lambda lib: ~f32(lib, [1]),
    "bool_invert": lambda lib: ~b8(lib, [True, False]),
    # where and masked_fill
    "where_int_cond": lambda lib: lib.where(i64(lib, [1, 0]), f32(lib, [1, 2]), f32(lib, [3, 4])),
    "where_u8_cond": lambda lib: lib.where(lib.tensor([1, 0], dtype=lib.uint8), 1.0, 0.0),
    "where_numbers": lambda lib: lib.where(b8(lib, [True, False]), 1, 2.5),
    "where_bool_numbers": lambda lib: lib.where(b8(lib, [True, False]), True, False),
    "where_shape_mismatch": lambda lib: lib.where(b8(lib, [True, False, True]), f32(lib, [1, 2]), 0.0),
    "where_out": lambda lib: out_of(lib, lambda o: lib.where(b8(lib, [True, False]), f32(lib, [1, 2]), 0, out=o),
                                    "float32"),
    "masked_fill_int_mask": lambda lib: f32(lib, [1, 2]).masked_fill(i64(lib, [1, 0]), 0.0),
    "masked_fill_u8_mask": lambda lib: f32(lib, [1, 2]).masked_fill(lib.tensor([1, 0], dtype=lib.uint8), 0.0),
    "masked_fill_1d_value": lambda lib: f32(lib, [1, 2]).masked_fill(b8(lib, [True, False]), f32(lib, [5, 6])),
    "masked_fill_float_into_int": lambda lib: i64(lib, [1, 2]).masked_fill(b8(lib, [True, False]), 2.7),
    "masked_fill_overflow": lambda lib: lib.tensor([1, 2], dtype=lib.uint8).masked_fill(b8(lib, [True, False]), 300),
    "masked_fill_broadcast_mask": lambda lib: f32(lib, [[1, 2], [3, 4]]).masked_fill(b8(lib, [True, False]), -1),
    "masked_fill_mask_bigger": lambda lib: f32(lib, [1, 2]).masked_fill(b8(lib, [[True, False]] * 2), -1),
    "masked_fill_inplace_mask_bigger": lambda lib: f32(lib, [1, 2]).masked_fill_(b8(lib, [[True, False]] * 2), -1),
    "masked_fill_nan": lambda lib: f32(lib, [1, 2]).masked_fill(b8(lib, [True, False]), NAN),
    # clamp
    "clamp_no_bounds": lambda lib: lib.clamp(f32(lib, [1])),
    "clamp_none_none": lambda lib: f32(lib, [1]).clamp(None, None),
    "clamp_tensor_no_bounds": lambda lib: lib.clamp(f32(lib, [1]), min=None, max=None),
    "clamp_min_gt_max": lambda lib: lib.clamp(f32(lib, [-1, 0.5, 5]), 2, 1),
    "clamp_int_float_bounds": lambda lib: lib.clamp(i64(lib, [-3, 0, 3]), -0.5, 1.5),
    "clamp_int_inplace_float_bound": lambda lib: i64(lib, [-3, 0, 3]).clamp_(-0.5, 1.5),
    "clamp_nan_bound": lambda lib: lib.clamp(f32(lib, [-1, 0, 1]), min=NAN),
    "clamp_nan_input": lambda lib: lib.clamp(f32(lib, [NAN, INF, -INF, -0.0]), -1, 1),
    "clamp_tensor_min_only": lambda lib: lib.clamp(f32(lib, [-1, 0.5, 5]), min=f32(lib, [0, 1, 2])),
    "clamp_mixed_bounds": lambda lib: lib.clamp(f32(lib, [-1, 0.5]), min=f32(lib, [0, 1]), max=2),
    "clamp_tensor_broadcast_bounds": lambda lib: lib.clamp(f32(lib, [1, 2]), f32(lib, [[0], [3]]), f32(lib, [4])),
    "clip_int_bounds": lambda lib: lib.clip(lib.tensor([0, 200], dtype=lib.uint8), 10, 100),
    # addcdiv, addcmul, lerp
    "addcdiv_int": lambda lib: lib.addcdiv(i64(lib, [1]), i64(lib, [2]), i64(lib, [4])),
    "addcdiv_int_tensors_float_self": lambda lib: lib.addcdiv(f32(lib, [1]), i64(lib, [2]), i64(lib, [4])),
    "addcmul_mixed": lambda lib: lib.addcmul(i64(lib, [1]), f32(lib, [2]), i64(lib, [3]), value=0.5),
    "addcmul_int_float_value": lambda lib: lib.addcmul(i64(lib, [1]), i64(lib, [2]), i64(lib, [3]), value=0.5),
    "addcmul_shape_mismatch": lambda lib: lib.addcmul(f32(lib, [1, 2]), f32(lib, [1, 2, 3]), f32(lib, [1])),
    "lerp_dtype_mismatch": lambda lib: lib.lerp(f32(lib, [0]), lib.tensor([10.0], dtype=lib.float64), 0.5),
    "lerp_weight_dtype_mismatch": lambda lib: lib.lerp(f32(lib, [0]), f32(lib, [1]), typed("float64")(lib, [0.5])),
    "lerp_large_weight": lambda lib: lib.lerp(f32(lib, [1, -2]), f32(lib, [10, 4]), 1.5),
    # isclose
    "isclose_dtype_mismatch": lambda lib: lib.isclose(f32(lib, [1]), lib.tensor([1.0], dtype=lib.float64)),
    "isclose_int_float": lambda lib: lib.isclose(i64(lib, [1]), f32(lib, [1])),
    "isclose_ints": lambda lib: lib.isclose(i64(lib, [1, 100, 5]), i64(lib, [1, 101, 9]), rtol=0.01, atol=1),
    "isclose_equal_nan": lambda lib: lib.isclose(f32(lib, [NAN, NAN, INF, -INF, INF, 1]),
                                                  f32(lib, [NAN, 1, INF, -INF, -INF, NAN]), equal_nan=True),
    "isclose_no_equal_nan": lambda lib: lib.isclose(f32(lib, [NAN, INF, -INF, 1]), f32(lib, [NAN, INF, INF, NAN])),
    "isclose_negative_rtol": lambda lib: lib.isclose(f32(lib, [1]), f32(lib, [1]), rtol=-1.0),
    "isclose_negative_atol": lambda lib: lib.isclose(f32(lib, [1]), f32(lib, [1]), atol=-1.0),
    "isclose_tolerance": lambda lib: lib.isclose(f32(lib, [1, 1, 100]), f32(lib, [1.05, 1.2, 110]), rtol=0.1,
                                                  atol=0.01),
    # in-place and out= dtype rules
    "inplace_int_add_float": lambda lib: i64(lib, [1, 2]).add_(1.5),
    "inplace_int_div": lambda lib: i64(lib, [1, 2]).div_(2),
    "inplace_int_div_floor": lambda lib: i64(lib, [-7, 7]).div_(2, rounding_mode="floor"),
    "inplace_bool_add_int": lambda lib: b8(lib, [True]).add_(1),
    "inplace_int_iadd_float_tensor": lambda lib: i64(lib, [1, 2]).__iadd__(f32(lib, [0.5, 1])),
    "inplace_float_add_double": lambda lib: f32(lib, [1, 2]).add_(lib.tensor([0.1, 0.2], dtype=lib.float64)),
    "inplace_u8_add_neg": lambda lib: lib.tensor([1, 2], dtype=lib.uint8).add_(-3),
    "inplace_eq_keeps_dtype": lambda lib: f32(lib, [1, 2]).eq_(2),
    "inplace_logical_and_keeps_dtype": lambda lib: i64(lib, [0, 2, 3]).logical_and_(i64(lib, [1, 1, 0])),
    "inplace_broadcast_self": lambda lib: f32(lib, [1, 2]).mul_(f32(lib, [[1, 2], [3, 4]])),
    "inplace_iadd_broadcast_self": lambda lib: f32(lib, [1, 2]).__iadd__(f32(lib, [[1, 2], [3, 4]])),
    "out_narrow_dtype": lambda lib: out_of(lib, lambda o: lib.add(f32(lib, [1.5]), 1, out=o), "int64"),
    "out_bool_from_int": lambda lib: out_of(lib, lambda o: lib.mul(i64(lib, [2]), 1, out=o), "bool"),
    "out_float_from_int": lambda lib: out_of(lib, lambda o: lib.add(i64(lib, [1]), 1, out=o), "float16"),
    "out_compare_into_float": lambda lib: out_of(lib, lambda o: lib.lt(f32(lib, [1, 3]), 2, out=o), "float32"),
    "out_exp_int_into_f64": lambda lib: out_of(lib, lambda o: lib.exp(i64(lib, [1]), out=o), "float64"),
    "out_div_floor_int_into_f32": lambda lib: out_of(
        lib, lambda o: lib.div(i64(lib, [-7]), 2, rounding_mode="floor", out=o), "float32"),
    "out_aliases_input": lambda lib: (lambda x: lib.add(x, 1, out=x))(f32(lib, [1, 2])),
    # more type-promotion and value corner cases
    "int_plus_big_float_number": lambda lib: i64(lib, [1]) + 1e20,
    "u8_times_0d_i64": lambda lib: lib.tensor([200], dtype=lib.uint8) * lib.tensor(2),
    "u8_wraparound": lambda lib: lib.tensor([250, 3], dtype=lib.uint8) + lib.tensor([10, 255], dtype=lib.uint8),
    "i8_wraparound": lambda lib: lib.tensor([127, -128], dtype=lib.int8) - lib.tensor([-1, 1], dtype=lib.int8),
    "i64_add_big": lambda lib: i64(lib, [2 ** 62]) + 2 ** 62,
    "int_floordiv_negative": lambda lib: i64(lib, [-7, 7, -7, 7]) // i64(lib, [2, -2, -2, 2]),
    "int_mod_negative": lambda lib: i64(lib, [-7, 7, -7, 7]) % i64(lib, [2, -2, -2, 2]),
    "int_fmod_negative": lambda lib: lib.fmod(i64(lib, [-7, 7, -7, 7]), i64(lib, [2, -2, -2, 2])),
    "int_min_floordiv_minus_one": lambda lib: lib.tensor([-128], dtype=lib.int8) // -1,
    "float_mod_signs": lambda lib: lib.remainder(f32(lib, [-7.5, 7.5, -0.0, 0.0, 5]), f32(lib, [2, -2, 3, -3, INF])),
    "float_floordiv_inf": lambda lib: lib.floor_divide(f32(lib, [5, -5, INF, -0.0]), f32(lib, [INF, INF, 2, 3])),
    "round_half_even": lambda lib: lib.round(f32(lib, [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e20])),
    "round_decimals_half": lambda lib: lib.round(typed("float64")(lib, [1.25, 1.35, -1.25, 12345.5]), decimals=1),
    "round_decimals_neg": lambda lib: lib.round(f32(lib, [1234.5, 1250, 1350, -1250]), decimals=-2),
    "round_decimals_int": lambda lib: lib.round(i64(lib, [1234, 1250]), decimals=-2),
    "nan_to_num_f16": lambda lib: lib.nan_to_num(lib.tensor([NAN, INF, -INF, 1], dtype=lib.float16)),
    "nan_to_num_only_nan": lambda lib: lib.nan_to_num(f32(lib, [NAN, INF, -INF]), nan=7.0),
    "maximum_nan_inf": lambda lib: lib.maximum(f32(lib, [NAN, 1, -INF, INF]), f32(lib, [1, NAN, NAN, -INF])),
    "shift_by_width": lambda lib: lib.tensor([1, -8], dtype=lib.int8) << lib.tensor([8, 9], dtype=lib.int8),
    "rshift_by_width": lambda lib: lib.tensor([64, -8], dtype=lib.int8) >> lib.tensor([8, 9], dtype=lib.int8),
    "rshift_negative": lambda lib: i64(lib, [-8, -1]) >> 1,
    "xlogy_zero_nan": lambda lib: lib.xlogy(f32(lib, [0, 0, 0, 1]), f32(lib, [0, NAN, INF, 0])),
    "xlogy_number_self": lambda lib: lib.xlogy(2, f32(lib, [1, 2])),
    "copysign_int_number": lambda lib: lib.copysign(i64(lib, [1, -2]), -1),
    "logit_eps_clamps": lambda lib: lib.logit(f32(lib, [0.0, 0.1, 1.0, 2.0]), eps=0.2),
    "logit_out_of_range": lambda lib: lib.logit(f32(lib, [-0.5, 0.0, 1.0, 1.5])),
    "rsub_alpha": lambda lib: lib.rsub(i64(lib, [1, 2]), 10, alpha=3),
    "sub_alpha_float": lambda lib: lib.sub(f32(lib, [1, 2]), f32(lib, [1, 1]), alpha=0.5),
    "add_alpha_float_tensor_int_alpha": lambda lib: lib.add(f32(lib, [1]), i64(lib, [2]), alpha=3),
    "lt_u8_negative_number": lambda lib: lib.lt(lib.tensor([0, 5], dtype=lib.uint8), -1),
    "eq_bool_number": lambda lib: b8(lib, [True, False]) == 1,
    "compare_reflected": lambda lib: [2 < f32(lib, [1, 3]), 2 == i64(lib, [2, 3]), 2.5 >= i64(lib, [2, 3])],
    "logical_and_float_int": lambda lib: lib.logical_and(f32(lib, [0.0, NAN, 2]), i64(lib, [1, 1, 0])),
    "logical_not_float": lambda lib: lib.logical_not(f32(lib, [0.0, -0.0, NAN, 1])),
}


@pytest.mark.parametrize("case", params("cases", CASES))
def test_cases(case):
    check(CASES[case], tol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.tensor([1, 2]) // 0, lambda lib: lib.tensor([1, 2]) % lib.tensor([0, 1]),
    lambda lib: lib.fmod(lib.tensor([3], dtype=lib.int32), 0), lambda lib: lib.remainder(5, lib.tensor([0])),
    lambda lib: lib.tensor([1]).floor_divide_(0), lambda lib: lib.div(lib.tensor([1]), 0, rounding_mode="trunc"),
])
def test_integer_division_by_zero(fn):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(torch)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(ember)


def test_bugs_table_names_existing_cases():
    assert not set(BUGS) - PARAM_IDS, f"BUGS entries that match no test case: {set(BUGS) - PARAM_IDS}"


def test_out_resize_warns_as_torch():
    """A non-empty out= of the wrong shape is resized with torch's deprecation warning (an
    error when warnings are); an empty one silently."""
    import warnings

    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="An output with one or more elements was resized since it had shape "
                                             r"\[5\], which does not match the required output shape \[2\]"):
            lib.add(lib.ones(2), 1, out=lib.empty(5))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert lib.add(lib.ones(2), 1, out=lib.empty(0)).tolist() == [2.0, 2.0]
            with pytest.raises(UserWarning):
                lib.sum(lib.ones(2, 3), 1, out=lib.empty(7))
