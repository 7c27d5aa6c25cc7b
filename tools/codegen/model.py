"""The typed data model every pass and emitter works on. All frozen: a pass returns a
new model instead of editing one."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Loc:
    """Where a declaration came from, for error messages."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class DeclarationError(Exception):
    def __init__(self, loc: Optional[Loc], message: str):
        super().__init__(f"{loc}: {message}" if loc else message)


@dataclass(frozen=True)
class DType:
    name: str          # float32
    enum: str          # Float32
    cpp: str           # float
    legacy: str        # Float
    kind: str          # bool | unsigned | signed | float | complex
    typestr: Optional[str]
    aliases: tuple[str, ...] = ()


# Base types of the schema language. `int...` is an int[] that also takes varargs.
BASE_TYPES = (
    "Tensor", "int", "float", "bool", "Scalar", "ScalarType", "Generator",
    "Device", "Layout", "MemoryFormat", "str",
)


@dataclass(frozen=True)
class Type:
    base: str
    is_list: bool = False
    optional: bool = False
    varargs: bool = False   # int... : x.view(2, 3) as well as x.view((2, 3))
    mutated: bool = False   # Tensor(a!): written in place
    elem_optional: bool = False  # Tensor?[]: a list whose items may be None
    single: bool = False    # int[1]: a list that also takes one int (sum(dim=1))

    def __str__(self) -> str:
        s = self.base
        if self.elem_optional:
            s += "?"
        if self.mutated:
            s += "(a!)"
        if self.varargs:
            s += "..."
        elif self.single:
            s += "[1]"
        elif self.is_list:
            s += "[]"
        if self.optional:
            s += "?"
        return s


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: Optional[str] = None   # the schema's text: "None", "-1", "[]", "True"
    kwonly: bool = False

    def __str__(self) -> str:
        s = f"{self.type} {self.name}"
        return s if self.default is None else f"{s}={self.default}"


@dataclass(frozen=True)
class Schema:
    name: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[Type, ...]
    return_names: tuple[str, ...] = ()  # (Tensor values, Tensor indices): a named tuple

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def inplace(self) -> bool:
        return self.name.endswith("_") and not self.name.startswith("_")

    def __str__(self) -> str:
        parts, star = [], False
        for a in self.arguments:
            if a.kwonly and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        rets = ", ".join(f"{r} {n}" if self.return_names else str(r)
                         for r, n in zip(self.returns, self.return_names or [""] * len(self.returns)))
        if len(self.returns) != 1:
            rets = f"({rets})"
        return f"{self.full_name}({', '.join(parts)}) -> {rets}"


@dataclass(frozen=True)
class Op:
    """One declaration in declarations/ops/<family>.yaml."""

    schema: Schema
    family: str                         # the file it lives in: views, factories, ...
    variants: tuple[str, ...]           # "function", "method"
    kernel: Optional[str]               # "copy", "binary.add", "reduce.sum, reduce.amax": families and entries
    doc: str
    aliases: tuple[str, ...]
    loc: Loc
    numbers: tuple[str, ...] = ()       # Tensor arguments that also take Python numbers
    operators: tuple[str, ...] = ()     # Python operators bound to it: __add__, __radd__, __iadd__
    promote: str = "common"             # elementwise result dtype rule (see ELEMENTWISE below)
    dtypes: str = "all"                 # which compute dtypes the kernel accepts (DTYPE_SETS)
    manual: bool = False                # an elementwise op whose C++ body is hand-written
    out_dtype: str = "castable"         # which out= dtypes it takes (OUT_DTYPES)
    numbers_checked: bool = False       # Python numbers must fit the compute dtype (torch's pow, clamp)
    devices: str = "same"               # "same": tensors must share a device; "self": the op moves
                                        # data between devices and runs on self's (copy_, to)
    autocast: Optional[str] = None      # torch's CPU autocast policy (AUTOCAST): its wrapper casts the
                                        # floating Tensor arguments while autocast is on

    @property
    def cpp_name(self) -> str:
        """The C++ op function: ops::squeeze_dim for squeeze.dim, ops::fill_Scalar_ for
        fill_.Scalar (an in-place op keeps its trailing underscore last)."""
        s = self.schema
        if not s.overload:
            return s.name
        if s.inplace:
            return f"{s.name[:-1]}_{s.overload}_"
        return f"{s.name}_{s.overload}"

    @property
    def unit(self) -> str:
        """The generated files its wrappers go to (api_<unit>.cpp, python_<unit>.cpp): its
        family, or for a topic file such as nn_conv.yaml the part before the topic (nn), so
        that declaring by topic adds no translation units (each costs seconds of headers)."""
        return self.family.split("_", 1)[0]

    @property
    def kernels(self) -> tuple[str, ...]:
        """`kernel:` may name several (a manual op that picks one: "binary.div, binary.div_trunc")."""
        return tuple(k.strip() for k in self.kernel.split(",")) if self.kernel else ()

    @property
    def kernel_family(self) -> Optional[str]:
        return self.kernels[0].split(".")[0] if self.kernel else None

    @property
    def kernel_entry(self) -> Optional[str]:
        """binary.add -> add: the entry of an elementwise family this op runs (None for the
        entries of other families: reduce.sum names an entry the op's C++ body picks)."""
        if (not self.kernel or "." not in self.kernels[0]
                or self.kernel_family not in ELEMENTWISE and self.kernel_family not in FLOAT_ELEMENTWISE):
            return None
        return self.kernels[0].split(".")[1]

    @property
    def kernel_families(self) -> tuple[str, ...]:
        """Every family the op names: "matmul, linalg" -> (matmul, linalg)."""
        return tuple(dict.fromkeys(k.split(".")[0] for k in self.kernels))

    @property
    def kernel_entries(self) -> tuple[tuple[str, str], ...]:
        """Every (family, entry) the op names."""
        return tuple(tuple(k.split(".", 1)) for k in self.kernels if "." in k)

    @property
    def has_out_param(self) -> bool:
        """Ops with in-place or out= variants take a trailing `const Out& out` in C++
        (one returning several tensors computes them, and the binding copies them into
        the out= tuple: see tuple_out)."""
        return "inplace" in self.variants or ("out" in self.variants and not self.tuple_out)

    @property
    def tuple_out(self) -> bool:
        """out= is a tuple of tensors, one per result (max(x, 1, out=(values, indices)))."""
        return "out" in self.variants and len(self.schema.returns) > 1

    @property
    def inplace_name(self) -> str:
        return self.schema.name + "_"


# `autocast:` policies (torch's CastPolicy; Note [Autocast] in csrc/python/autocast.cpp):
# lower_precision casts to the autocast dtype, fp32 to float32, promote to the widest.
AUTOCAST = ("lower_precision", "fp32", "promote")


# Elementwise kernel families: the operand layout each entry computes with. Inputs are
# converted to the compute dtype first; `out` is the result's dtype.
#   unary:     out = f(a)           out dtype = compute dtype
#   predicate: out = f(a)           out dtype = bool
#   binary:    out = f(a, b)        out dtype = compute dtype
#   compare:   out = f(a, b)        out dtype = bool
#   ternary:   out = f(a, b, c)     out dtype = compute dtype
ELEMENTWISE = {"unary": 1, "predicate": 1, "binary": 2, "compare": 2, "ternary": 3}
# The special functions (`kernel: special.digamma`): elementwise entries of one or two
# Tensor inputs that compute in float and double only (float16/bfloat16 through float),
# so they are a float family (one translation unit, kernels/special.cpp) whose op bodies
# the generator writes as for the families above (ops::special_map, ops/elementwise.h).
FLOAT_ELEMENTWISE = {"special": (1, 2)}
# Families whose entries the declarations name (`kernel: reduce.sum`): the generator lists
# each family's entries (an enum and an X-macro, kernel_ops.h) from the declarations, so a
# new entry is a declaration and its functor (or Traits) in kernels/<family>_impl.h.
#   reduce:  folds into accumulators (ReduceOp; Traits<T, ReduceOp::sum> in reduce_impl.h)
#   rowwise: walks along one dim (RowOp: argmax, cumsum, sort, ...)
ENTRY_FAMILIES = (*ELEMENTWISE, *FLOAT_ELEMENTWISE, "reduce", "rowwise")


def is_float_family(family: str) -> bool:
    """The nn kernel families (`kernel: nn_conv`), linalg (BLAS and LAPACK, sparse) and fft
    (over std::complex of the float type) are templates over the float compute types
    only: their ops compute float16/bfloat16 in float32 (linalg and fft take
    float32/float64 alone). Each is instantiated in its own
    kernels/<family>.cpp from a generated list (kernel_instances_<family>.h), so a change
    to one of these kernels recompiles one file."""
    return family.startswith(("nn_", "linalg", "fft")) or family in FLOAT_ELEMENTWISE
# promote: how the compute dtype comes from the inputs (torch's result_type):
#   common: result_type of the inputs; float: the same, but integral/bool -> default float
#   same: self's dtype (the other inputs convert to it)
PROMOTE = ("common", "float", "same")
# dtypes: the compute dtypes an entry supports; others raise torch's NotImplemented-style
# RuntimeError ("exp_cpu" not implemented for 'Long').
# ints: integral without bool; float32_64: no float16/bfloat16 (torch's special functions that refuse them)
DTYPE_SETS = ("all", "nobool", "integral", "ints", "floating", "signed", "float32_64")
# out_dtype: castable (any dtype the result casts to), exact (the result's: torch's abs,
# floor, clamp), bool (bool only: isposinf).
OUT_DTYPES = ("castable", "exact", "bool")

# Python operators: name -> how it calls the op. "forward": op(self, other);
# "reflected": op(other, self); "inplace": the op's in-place variant.
OPERATORS = {
    **{f"__{n}__": "forward" for n in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
        "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge", "neg", "pos", "abs", "invert")},
    **{f"__r{n}__": "reflected" for n in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
        "lshift", "rshift")},
    **{f"__i{n}__": "inplace" for n in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift")},
}


@dataclass(frozen=True)
class Overload:
    """One way a Python name calls an op. mode: "plain" (as declared), "inplace" (the op
    writes into self: x.add_(y)), "reflected" (self goes second: x.__radd__(2) is
    add(2, x)). out: the function also takes out=."""

    op: Op
    mode: str = "plain"
    out: bool = False


@dataclass(frozen=True)
class PyBinding:
    """One Python-visible name (function or method) and its overloads, in match order.
    An operator binding (__add__) returns NotImplemented when no overload matches."""

    name: str
    kind: str                 # "function" or "method"
    family: str               # the generated file it goes to (Op.unit)
    overloads: tuple[Overload, ...]
    operator: bool = False


@dataclass(frozen=True)
class Derivative:
    """One entry of declarations/derivatives.yaml: the backward formula of each
    differentiable input of op `name` (a C++ expression over the autograd-aware API, see
    csrc/autograd/formulas.h), or differentiable=False for ops whose results never
    require grad (zeros_like, rand_like)."""

    name: str                             # the op's full name: mul.Tensor
    # (argument, expression); the key "a, b" names several arguments whose gradients one
    # expression returns together, as a std::tuple in that order (computed once).
    formulas: tuple[tuple[str, str], ...]
    differentiable: bool
    loc: Loc
    node: Optional[str] = None            # the grad_fn's name when torch's differs from the default
    # forward-mode AD's rule (Note [Forward-mode AD]): "linear", "element_wise", or None
    # (transpose the backward)
    forward: Optional[str] = None
    # whether the formulas hold for complex inputs (Note [Complex dtypes]); ops without
    # it refuse to record a complex input
    complex: bool = False


@dataclass(frozen=True)
class Model:
    dtypes: tuple[DType, ...]
    ops: tuple[Op, ...]
    bindings: tuple[PyBinding, ...] = field(default=())
    derivatives: tuple[Derivative, ...] = field(default=())
