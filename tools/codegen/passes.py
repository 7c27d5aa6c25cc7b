"""Passes over the model. Each is one concern and returns a new Model."""
from __future__ import annotations

from dataclasses import replace

from .model import Model, Op, PyBinding


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


def _overload_rank(op: Op, kind: str) -> tuple:
    """Tensor overloads are tried before Scalar ones at the same position (torch's rule:
    a 0-dim tensor is a Tensor first). Otherwise declaration order stands (stable sort)."""
    args = op.schema.arguments[1:] if kind == "method" else op.schema.arguments
    return tuple(1 if a.type.base == "Scalar" else 0 for a in args if not a.kwonly)


def group_bindings(model: Model) -> Model:
    """One PyBinding per (function|method, Python name); aliases bind the same overloads."""
    groups: dict[tuple[str, str], list[Op]] = {}
    family_of: dict[tuple[str, str], str] = {}
    for op in model.ops:
        for kind in op.variants:
            for name in (op.schema.name, *op.aliases):
                key = (kind, name)
                groups.setdefault(key, []).append(op)
                family_of.setdefault(key, op.family)
    bindings = []
    for (kind, name), ops in sorted(groups.items()):
        ordered = sorted(ops, key=lambda o: _overload_rank(o, kind))
        bindings.append(PyBinding(name, kind, family_of[(kind, name)], tuple(ordered)))
    return replace(model, bindings=tuple(bindings))


PASSES = (check_joins, group_bindings)


def run(model: Model) -> Model:
    for p in PASSES:
        model = p(model)
    return model
