"""Parses schema strings such as `add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`
into model.Schema; str(Schema) gives the same text back (round trip)."""
from __future__ import annotations

import re

from .model import BASE_TYPES, Argument, Schema, Type

_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z0-9_]+))?$")
_TYPE = re.compile(r"^([A-Za-z]+)(\?(?=\[\]))?(\(a!\))?(\[\]|\[1\]|\.\.\.)?(\?)?$")


class SchemaError(ValueError):
    pass


def parse_type(text: str) -> Type:
    m = _TYPE.match(text.strip())
    if not m or m.group(1) not in BASE_TYPES:
        raise SchemaError(f"unknown type '{text}' (base types: {', '.join(BASE_TYPES)})")
    base, elem_optional, mutated, suffix, optional = m.groups()
    if elem_optional and base != "Tensor":
        raise SchemaError(f"only Tensor lists take None items (Tensor?[]), not {base}")
    if mutated and base != "Tensor":
        raise SchemaError(f"only Tensor can be marked (a!), not {base}")
    if suffix in ("...", "[1]") and base != "int":
        raise SchemaError(f"only int takes varargs (int...) or a single int for a list (int[1]), not {base}")
    return Type(base, is_list=suffix is not None, optional=optional is not None,
                varargs=suffix == "...", mutated=mutated is not None,
                elem_optional=elem_optional is not None, single=suffix == "[1]")


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def parse_schema(text: str) -> Schema:
    head, arrow, ret = text.partition("->")
    if not arrow:
        raise SchemaError("missing '-> ReturnType'")
    head = head.strip()
    if not head.endswith(")") or "(" not in head:
        raise SchemaError("expected name(arguments)")
    name_part, args_part = head[: head.index("(")], head[head.index("(") + 1 : -1]
    m = _NAME.match(name_part.strip())
    if not m:
        raise SchemaError(f"bad op name '{name_part}'")
    name, overload = m.group(1), m.group(2) or ""
    args, kwonly, seen = [], False, set()
    for piece in _split_top(args_part):
        if piece == "*":
            kwonly = True
            continue
        decl, eq, default = piece.partition("=")
        try:
            type_text, arg_name = decl.rsplit(None, 1)
        except ValueError:
            raise SchemaError(f"argument '{piece}' needs a type and a name") from None
        if arg_name in seen:
            raise SchemaError(f"argument '{arg_name}' appears twice")
        seen.add(arg_name)
        args.append(Argument(arg_name, parse_type(type_text), default.strip() if eq else None, kwonly))
    ret = ret.strip()
    names: list[str] = []
    if ret.startswith("(") and ret.endswith(")"):
        types = []
        for piece in _split_top(ret[1:-1]):  # "Tensor values": a named tuple's field
            type_text, _, field = piece.strip().partition(" ")
            types.append(parse_type(type_text))
            names.append(field.strip())
        returns = tuple(types)
        if any(names) and not all(names):
            raise SchemaError("name every return or none")
    else:
        returns = (parse_type(ret),)
    schema = Schema(name, overload, tuple(args), returns, tuple(n for n in names if n))
    if str(schema) != " ".join(text.split()):
        raise SchemaError(f"schema is not in canonical form; write it as: {schema}")
    return schema
