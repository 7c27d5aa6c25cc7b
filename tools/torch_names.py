"""Writes ember/_torch_names.py: the public names of torch's namespaces (torch, linalg,
special, fft, Tensor), which ember's namespace __getattr__ reads, only when a name is
missing, to say that ember lacks a name torch has. Run with the torch ember follows:

    python tools/torch_names.py
"""
from __future__ import annotations

import types
from pathlib import Path

import torch

NAMESPACES = {"torch": torch, "torch.linalg": torch.linalg, "torch.special": torch.special, "torch.fft": torch.fft,
              "torch.Tensor": torch.Tensor}


def public_names(namespace):
    names = set()
    for name in dir(namespace):
        if name.startswith("_"):
            continue
        value = getattr(namespace, name, None)
        if isinstance(value, types.ModuleType) and not value.__name__.startswith("torch"):
            continue  # os, sys, math: modules torch's namespace happens to import
        names.add(name)
    return names


def main():
    lines = [f'"""torch {torch.__version__.split("+")[0]}\'s public names, by namespace; written by '
             'tools/torch_names.py: do not edit."""', "", "NAMES = {"]
    for key, namespace in NAMESPACES.items():
        names = sorted(public_names(namespace))
        lines.append(f"    {key!r}: frozenset(\"\"\"")
        line = "       "
        for name in names:
            if len(line) + len(name) + 1 > 118:
                lines.append(line)
                line = "       "
            line += " " + name
        lines.append(line)
        lines.append('    """.split()),')
    lines.append("}")
    path = Path(__file__).resolve().parent.parent / "ember" / "_torch_names.py"
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}: {', '.join(f'{k} {len(public_names(v))}' for k, v in NAMESPACES.items())}")


if __name__ == "__main__":
    main()
