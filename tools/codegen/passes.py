"""Passes over the model. Each is one concern and returns a new Model."""
from __future__ import annotations

from dataclasses import replace

from .model import OPERATORS, Model, Op, Overload, PyBinding


def check_joins(model: Model) -> Model:
    """Declarations that can only be checked together."""
    from .model import DeclarationError

    for op in model.ops:
        s = op.schema
        if s.inplace and (not s.returns or not s.returns[0].mutated or not s.arguments[0].type.mutated):
            raise DeclarationError(op.loc, f"in-place op {s.full_name} must take and return Tensor(a!)")
        for a in s.arguments:
            if a.type.varargs and any(not b.kwonly for b in s.arguments[s.arguments.index(a) + 1:]):
                raise DeclarationError(op.loc, f"varargs argument '{a.name}' must be the last positional one")
    return model


def _overload_rank(o: Overload, kind: str) -> tuple:
    """Tensor overloads are tried before Scalar ones at the same position (torch's rule:
    a 0-dim tensor is a Tensor first). Otherwise declaration order stands (stable sort)."""
    args = o.op.schema.arguments[1:] if kind == "method" else o.op.schema.arguments
    return tuple(1 if a.type.base == "Scalar" else 0 for a in args if not a.kwonly)


def _names(op: Op):
    """(kind, Python name, Overload) for every way Python reaches op."""
    for kind in ("function", "method"):
        if kind in op.variants:
            for name in (op.schema.name, *op.aliases):
                yield kind, name, Overload(op, "plain", out=kind == "function" and "out" in op.variants)
    if "inplace" in op.variants:
        for name in (op.schema.name, *op.aliases):
            yield "method", name + "_", Overload(op, "inplace")
    for name in op.operators:
        yield "method", name, Overload(op, {"forward": "plain"}.get(OPERATORS[name], OPERATORS[name]))


def group_bindings(model: Model) -> Model:
    """One PyBinding per (function|method, Python name); aliases bind the same overloads."""
    groups: dict[tuple[str, str], list[Overload]] = {}
    family_of: dict[tuple[str, str], str] = {}
    for op in model.ops:
        for kind, name, overload in _names(op):
            groups.setdefault((kind, name), []).append(overload)
            family_of.setdefault((kind, name), op.unit)
    bindings = []
    for (kind, name), overloads in sorted(groups.items()):
        ordered = sorted(overloads, key=lambda o: _overload_rank(o, kind))
        bindings.append(PyBinding(name, kind, family_of[(kind, name)], tuple(ordered),
                                  operator=name in OPERATORS))
    return replace(model, bindings=tuple(bindings))


PASSES = (check_joins, group_bindings)


def run(model: Model) -> Model:
    for p in PASSES:
        model = p(model)
    return model
