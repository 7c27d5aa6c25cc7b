"""ember's code generator: declarations/*.yaml -> C++ and .pyi sources in the build dir.

Pipeline: load (YAML -> frozen dataclasses, validated, with file:line) -> passes
(each one concern, returning a new model) -> emitters (each writes its own files).
`generate(out_dir)` is what setup.py calls; `python -m tools.codegen OUT` does the same.
"""
from .pipeline import generate

__all__ = ["generate"]
