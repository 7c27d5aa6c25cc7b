"""Reads declarations/ into the model, checking every entry; errors carry file:line."""
from __future__ import annotations

from pathlib import Path

import yaml

from .model import DeclarationError, DType, Loc, Model, Op
from .schema import SchemaError, parse_schema

OP_KEYS = {"func", "variants", "kernel", "doc", "aliases"}
DTYPE_KEYS = {"name", "enum", "cpp", "legacy", "kind", "typestr", "aliases"}
VARIANTS = {"function", "method"}


class _LineLoader(yaml.SafeLoader):
    """Records each mapping's line as the key '__line__'."""

    def construct_mapping(self, node, deep=False):
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def _read(path: Path) -> list[dict]:
    with open(path) as f:
        data = yaml.load(f, Loader=_LineLoader)
    if not isinstance(data, list):
        raise DeclarationError(Loc(str(path), 1), "expected a list of entries")
    return data


def _check_keys(entry: dict, allowed: set, loc: Loc) -> None:
    unknown = set(entry) - allowed - {"__line__"}
    if unknown:
        raise DeclarationError(loc, f"unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")


def load_dtypes(path: Path, root: Path) -> tuple[DType, ...]:
    out = []
    for e in _read(path):
        loc = Loc(str(path.relative_to(root)), e["__line__"])
        _check_keys(e, DTYPE_KEYS, loc)
        if e.get("kind") not in ("bool", "unsigned", "signed", "float"):
            raise DeclarationError(loc, "kind must be one of bool, unsigned, signed, float")
        out.append(DType(e["name"], e["enum"], e["cpp"], e["legacy"], e["kind"], e.get("typestr"),
                         tuple(e.get("aliases", ()))))
    return tuple(out)


def load_ops(folder: Path, root: Path) -> tuple[Op, ...]:
    ops, seen = [], {}
    for path in sorted(folder.glob("*.yaml")):
        family = path.stem
        for e in _read(path):
            loc = Loc(str(path.relative_to(root)), e["__line__"])
            _check_keys(e, OP_KEYS, loc)
            if "func" not in e:
                raise DeclarationError(loc, "entry has no 'func:' schema")
            try:
                schema = parse_schema(e["func"])
            except SchemaError as err:
                raise DeclarationError(loc, f"bad schema: {err}") from None
            if schema.full_name in seen:
                raise DeclarationError(loc, f"{schema.full_name} is already declared at {seen[schema.full_name]}")
            seen[schema.full_name] = loc
            variants = tuple(v.strip() for v in str(e.get("variants", "function")).split(","))
            if not set(variants) <= VARIANTS:
                raise DeclarationError(loc, f"variants must be from {sorted(VARIANTS)}, got {variants}")
            if "method" in variants and (not schema.arguments or schema.arguments[0].name != "self"):
                raise DeclarationError(loc, "a method's first argument must be 'Tensor self'")
            if not e.get("doc"):
                raise DeclarationError(loc, f"{schema.full_name} needs a 'doc:' (with an example)")
            ops.append(Op(schema, family, variants, e.get("kernel"), e["doc"].strip(),
                          tuple(e.get("aliases", ())), loc))
    return tuple(ops)


def load(root: Path) -> Model:
    decl = root / "declarations"
    return Model(dtypes=load_dtypes(decl / "dtypes.yaml", root), ops=load_ops(decl / "ops", root))
