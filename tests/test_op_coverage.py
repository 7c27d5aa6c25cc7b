"""Every op declared in declarations/ops/*.yaml is tested somewhere.

Each test module that tests ops says which, in a module-level set `TESTED_OPS` of op names
and aliases (test_pointwise.py builds its set from its table). The names declared but not
tested yet are listed, with a comment, in NOT_YET_COVERED below. Adding a declaration
without a test, or a test without updating NOT_YET_COVERED, fails here."""
from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

TESTS = Path(__file__).resolve().parent
DECLARATIONS = TESTS.parent / "declarations" / "ops"
sys.path.insert(0, str(TESTS))

# Declared, not yet covered by any test module (remove a name when its test lands).
NOT_YET_COVERED = {
    "resize_",  # copy.yaml: Tensor.resize_ (only the storages' resize_ is tested, in test_storage.py)
}


def declarations():
    """{file name: [yaml entries]} of declarations/ops/*.yaml."""
    return {path.name: yaml.safe_load(path.read_text()) or [] for path in sorted(DECLARATIONS.glob("*.yaml"))}


def op_name(entry):
    """'add' of 'add.Tensor(Tensor self, ...) -> Tensor'."""
    return re.match(r"\s*(\w+)", entry["func"]).group(1)


def declared_names(files=None):
    """{op name or alias: the yaml file declaring it}."""
    names = {}
    for file, entries in declarations().items():
        if files is None or file in files:
            for entry in entries:
                for name in [op_name(entry), *entry.get("aliases", [])]:
                    names.setdefault(name, file)
    return names


def names_tested():
    """The union of TESTED_OPS of every tests/test_*.py module."""
    tested = set()
    for path in sorted(TESTS.glob("test_*.py")):
        if path.stem != "test_op_coverage":
            tested |= set(getattr(importlib.import_module(path.stem), "TESTED_OPS", ()))
    return tested


def test_every_declared_op_is_tested():
    declared, tested = declared_names(), names_tested()
    missing = sorted(f"{name} ({file})" for name, file in declared.items()
                     if name not in tested and name not in NOT_YET_COVERED)
    assert not missing, ("declared ops no test module lists in its TESTED_OPS (test them, or add them to "
                         f"NOT_YET_COVERED in {os.path.basename(__file__)} with a comment): {', '.join(missing)}")


def test_not_yet_covered_is_up_to_date():
    declared, tested = declared_names(), names_tested()
    assert not NOT_YET_COVERED - set(declared), f"no longer declared: {NOT_YET_COVERED - set(declared)}"
    assert not NOT_YET_COVERED & tested, f"tested now, remove from NOT_YET_COVERED: {NOT_YET_COVERED & tested}"


def test_tested_names_are_declared():
    """A TESTED_OPS entry that is no declared op is a typo (or a stale name)."""
    unknown = names_tested() - set(declared_names())
    assert not unknown, f"TESTED_OPS names that no yaml file declares: {sorted(unknown)}"


# ------------------------------------------------------------- the pointwise table matches the declarations
POINTWISE_FILES = ("pointwise.yaml", "comparison.yaml")


def test_pointwise_table_has_a_row_per_op():
    test_pointwise = importlib.import_module("test_pointwise")
    rows = {op.name for op in test_pointwise.OPS} | {a for op in test_pointwise.OPS for a in op.aliases}
    missing = sorted(set(declared_names(POINTWISE_FILES)) - rows)
    assert not missing, f"ops of {POINTWISE_FILES} without a row in test_pointwise.OPS: {missing}"


def tensor_args(entry):
    """The names of the Tensor arguments of the schema, in order."""
    args = entry["func"].split("(", 1)[1].rsplit(")", 1)[0]
    return [a.split()[-1].split("=")[0] for a in args.split(",") if a.strip().startswith("Tensor")]


@pytest.mark.parametrize("file", POINTWISE_FILES)
def test_pointwise_table_matches_declared_forms(file):
    """The rows of each op test exactly the declared variants, operators, aliases and the
    arguments that take Python numbers (the union over the op's overloads and rows)."""
    test_pointwise = importlib.import_module("test_pointwise")
    declared = {}
    for entry in declarations()[file]:
        d = declared.setdefault(op_name(entry), {"forms": set(), "operators": set(), "aliases": set(),
                                                 "numbers": set()})
        d["forms"] |= {v.strip() for v in entry.get("variants", "function").split(",")}
        d["operators"] |= set(entry.get("operators", []))
        d["aliases"] |= set(entry.get("aliases", []))
        d["numbers"] |= {tensor_args(entry).index(n) for n in entry.get("numbers", [])}
    for name, d in declared.items():
        rows = [op for op in test_pointwise.OPS if op.name == name]
        forms = {"function"} | {f for op in rows for f, on in
                                (("method", op.method), ("inplace", op.inplace), ("out", op.out)) if on}
        tested = {"forms": forms, "operators": {o for op in rows for o in op.operators},
                  "aliases": {a for op in rows for a in op.aliases}, "numbers": {i for op in rows for i in op.numbers}}
        assert tested == d, f"{name}: the table tests {tested}, {file} declares {d}"
