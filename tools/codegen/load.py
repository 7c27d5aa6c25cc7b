"""Reads declarations/ into the model, checking every entry; errors carry file:line."""
from __future__ import annotations

from pathlib import Path

import yaml

from .model import (AUTOCAST, DTYPE_SETS, ELEMENTWISE, ENTRY_FAMILIES, FLOAT_ELEMENTWISE, OPERATORS, OUT_DTYPES, PROMOTE, DeclarationError,
                    Derivative, DType, Loc, Model, Op)
from .schema import SchemaError, parse_schema

OP_KEYS = {"func", "variants", "kernel", "doc", "aliases", "numbers", "operators", "promote", "dtypes", "manual",
           "out_dtype", "numbers_checked", "devices", "autocast"}
DTYPE_KEYS = {"name", "enum", "cpp", "legacy", "kind", "typestr", "aliases"}
VARIANTS = {"function", "method", "inplace", "out"}


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
        if e.get("kind") not in ("bool", "unsigned", "signed", "float", "complex"):
            raise DeclarationError(loc, "kind must be one of bool, unsigned, signed, float, complex")
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
            devices = e.get("devices", "same")
            if devices not in ("same", "self"):
                raise DeclarationError(loc, "devices must be 'same' (the default) or 'self'")
            autocast = e.get("autocast")
            if autocast is not None and autocast not in AUTOCAST:
                raise DeclarationError(loc, f"autocast must be one of {AUTOCAST}")
            if autocast and not any(a.type.base == "Tensor" for a in schema.arguments):
                raise DeclarationError(loc, "autocast: the op takes no Tensor argument to cast")
            ops.append(_elementwise_fields(e, Op(schema, family, variants, e.get("kernel"), e["doc"].strip(),
                                                 tuple(e.get("aliases", ())), loc, devices=devices,
                                                 autocast=autocast)))
    return tuple(ops)


def _names(value) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",")) if isinstance(value, str) else tuple(value or ())


def _elementwise_fields(e: dict, op: Op) -> Op:
    """The fields of ops that run an elementwise kernel entry, and where they are allowed."""
    from dataclasses import replace

    loc, s = op.loc, op.schema
    numbers, operators = _names(e.get("numbers")), _names(e.get("operators"))
    tensor_args = {a.name for a in s.arguments if a.type.base == "Tensor" and not a.type.is_list}
    if not set(numbers) <= tensor_args:
        raise DeclarationError(loc, f"numbers: {sorted(set(numbers) - tensor_args)} are not Tensor arguments")
    for o in operators:
        if o not in OPERATORS:
            raise DeclarationError(loc, f"unknown operator {o}; known: {sorted(OPERATORS)}")
        if OPERATORS[o] == "inplace" and "inplace" not in op.variants:
            raise DeclarationError(loc, f"operator {o} needs the inplace variant")
    if "inplace" in op.variants and (len(s.returns) != 1 or s.returns[0].base != "Tensor"):
        raise DeclarationError(loc, "the inplace variant needs exactly one Tensor return")
    if "out" in op.variants and (not s.returns or any(r.base != "Tensor" or r.is_list for r in s.returns)):
        raise DeclarationError(loc, "the out variant needs Tensor returns (several give a tuple out=)")
    if "out" in op.variants and len(s.returns) > 1 and not s.return_names:
        raise DeclarationError(loc, "a tuple out= needs named returns (its result is ember.return_types.<name>_out)")
    promote, dtypes = e.get("promote", "common"), e.get("dtypes", "all")
    if promote not in PROMOTE:
        raise DeclarationError(loc, f"promote must be one of {PROMOTE}")
    if dtypes not in DTYPE_SETS:
        raise DeclarationError(loc, f"dtypes must be one of {DTYPE_SETS}")
    out_dtype = e.get("out_dtype", "castable")
    if out_dtype not in OUT_DTYPES:
        raise DeclarationError(loc, f"out_dtype must be one of {OUT_DTYPES}")
    if (out_dtype != "castable" or e.get("numbers_checked")) and not op.kernel_entry:
        raise DeclarationError(loc, "out_dtype/numbers_checked belong to ops running an elementwise kernel entry")
    for family, _ in op.kernel_entries:
        if family not in ENTRY_FAMILIES:
            raise DeclarationError(loc, f"'{op.kernel}': only the families {list(ENTRY_FAMILIES)} have entries")
    if len(op.kernels) > 1 and op.kernel_family in ELEMENTWISE and not e.get("manual"):
        raise DeclarationError(loc, "only a manual op may name several kernel entries")
    if op.kernel_entry and not e.get("manual"):
        ninputs = sum(a.type.base == "Tensor" for a in s.arguments)
        takes = FLOAT_ELEMENTWISE.get(op.kernel_family) or (ELEMENTWISE[op.kernel_family],)
        if ninputs not in takes:
            raise DeclarationError(loc, f"{op.kernel_family} entries take {' or '.join(map(str, takes))} "
                                        f"Tensor input(s); {s.full_name} has {ninputs} (use manual: true)")
        for a in s.arguments:
            if a.type.base not in ("Tensor", "Scalar", "int", "float", "bool") or a.type.is_list or a.type.optional:
                raise DeclarationError(loc, f"argument {a.name}: a generated elementwise op takes Tensors "
                                            "and plain Scalar/int/float/bool only (use manual: true)")
    return replace(op, numbers=numbers, operators=operators, promote=promote, dtypes=dtypes,
                   manual=bool(e.get("manual", False)), out_dtype=out_dtype,
                   numbers_checked=bool(e.get("numbers_checked", False)))


def load_derivatives(path: Path, root: Path, ops: tuple[Op, ...]) -> tuple[Derivative, ...]:
    """Each entry names a declared op and gives a formula per differentiable argument."""
    by_name = {op.schema.full_name: op for op in ops}
    out, seen = [], {}
    for e in _read(path):
        loc = Loc(str(path.relative_to(root)), e["__line__"])
        name = e.get("name")
        if name not in by_name:
            raise DeclarationError(loc, f"derivative for '{name}', which is not a declared op")
        if name in seen:
            raise DeclarationError(loc, f"{name} already has its derivative at {seen[name]}")
        seen[name] = loc
        op = by_name[name]
        tensors = {a.name for a in op.schema.arguments if a.type.base == "Tensor"}
        differentiable = e.get("differentiable", True)
        formulas = tuple((", ".join(a.strip() for a in k.split(",")), str(v).strip()) for k, v in e.items()
                         if k not in ("name", "differentiable", "node", "forward", "complex", "__line__"))
        for key, _ in formulas:  # "input, weight, bias": one formula giving a tuple of their gradients
            for arg in key.split(","):
                if arg.strip() not in tensors:
                    raise DeclarationError(loc, f"'{arg.strip()}' is not a Tensor argument of {op.schema}")
        if differentiable and not formulas:
            raise DeclarationError(loc, f"{name}: give a formula per differentiable input, or differentiable: false")
        forward = e.get("forward")
        if forward not in (None, "linear", "element_wise"):
            raise DeclarationError(loc, f"{name}: forward is 'linear' or 'element_wise', not {forward!r}")
        if forward == "element_wise" and any("grads" in f for _, f in formulas):
            raise DeclarationError(loc, f"{name}: an element_wise forward rule needs single-output formulas")
        # complex: the formulas are right for complex inputs too (torch's convention, the
        # conjugate Wirtinger derivative); a linear op's always are
        complex_ok = bool(e.get("complex", False)) or forward == "linear"
        out.append(Derivative(name, formulas, bool(differentiable), loc, e.get("node"), forward, complex_ok))
    return tuple(out)


def load(root: Path) -> Model:
    decl = root / "declarations"
    ops = load_ops(decl / "ops", root)
    return Model(dtypes=load_dtypes(decl / "dtypes.yaml", root), ops=ops,
                 derivatives=load_derivatives(decl / "derivatives.yaml", root, ops))
