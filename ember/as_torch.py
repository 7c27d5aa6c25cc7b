"""python -m ember.as_torch script.py [args]: runs an unchanged PyTorch script (or,
with -m, a module) with ember standing in for torch and every torch.* submodule it
imports.

    python -m ember.as_torch train.py --epochs 1
    python -m ember.as_torch -m mypackage.train --epochs 1
"""
from __future__ import annotations

import os
import runpy
import sys

from ._torch_alias import install_as_torch

_USAGE = "usage: python -m ember.as_torch script.py [args...]  |  python -m ember.as_torch -m module [args...]"


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(_USAGE, file=sys.stderr if not argv or argv[0] == "-m" else sys.stdout)
        raise SystemExit(0 if argv and argv[0] in ("-h", "--help") else 2)
    install_as_torch()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        module = argv[1]
        if module == "torch" or module.startswith("torch."):
            # runpy needs a module's code, which the alias hands out only as a module:
            # run ember's own (`-m torch.distributed.run` runs ember.distributed.run)
            module = "ember" + module[len("torch"):]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as `python script.py` would have it
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
