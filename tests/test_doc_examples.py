"""Every example in the declarations' docs (which become the ops' docstrings) runs and
prints what the doc says: `>>> expr` followed by the repr of its value."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import ember

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools.codegen.load import load  # noqa: E402


def examples():
    for op in load(ROOT).ops:
        lines = op.doc.split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"^>>> (.*)$", line.strip())
            if m:
                expected = lines[i + 1].strip() if i + 1 < len(lines) else ""
                yield pytest.param(m.group(1), expected, id=f"{op.schema.full_name}:{i}")


@pytest.mark.parametrize("expr, expected", list(examples()))
def test_doc_example(expr, expected):
    ember.manual_seed(0)
    assert repr(eval(expr, {"ember": ember})) == expected
