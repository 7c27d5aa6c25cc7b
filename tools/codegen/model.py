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
    kind: str          # bool | unsigned | signed | float
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

    def __str__(self) -> str:
        s = self.base
        if self.elem_optional:
            s += "?"
        if self.mutated:
            s += "(a!)"
        if self.varargs:
            s += "..."
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
        rets = ", ".join(str(r) for r in self.returns)
        if len(self.returns) != 1:
            rets = f"({rets})"
        return f"{self.full_name}({', '.join(parts)}) -> {rets}"


@dataclass(frozen=True)
class Op:
    """One declaration in declarations/ops/<family>.yaml."""

    schema: Schema
    family: str                         # the file it lives in: views, factories, ...
    variants: tuple[str, ...]           # "function", "method"
    kernel: Optional[str]               # "copy" or "unary.float": the kernel family it uses
    doc: str
    aliases: tuple[str, ...]
    loc: Loc

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
    def kernel_family(self) -> Optional[str]:
        return self.kernel.split(".")[0] if self.kernel else None


@dataclass(frozen=True)
class PyBinding:
    """One Python-visible name (function or method) and its overloads, in match order."""

    name: str
    kind: str                 # "function" or "method"
    family: str
    overloads: tuple[Op, ...]


@dataclass(frozen=True)
class Model:
    dtypes: tuple[DType, ...]
    ops: tuple[Op, ...]
    bindings: tuple[PyBinding, ...] = field(default=())
