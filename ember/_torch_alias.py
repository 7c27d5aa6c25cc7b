"""ember standing in for torch: a meta-path finder that answers `import torch` with
ember and `import torch.X.Y` with ember.X.Y (the same module objects, so
`torch.nn is ember.nn`)."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self._target = target

    def create_module(self, spec):
        module = importlib.import_module(self._target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system stamped torch's spec on the module: give ember's back
        module.__spec__ = self._own_spec


class _TorchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        name = "ember" + fullname[len("torch"):]
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return None  # ModuleNotFoundError: No module named 'torch.X'
        return importlib.util.spec_from_loader(fullname, _AliasLoader(name),
                                               is_package=found.submodule_search_locations is not None)


_finder = _TorchFinder()


def install_as_torch() -> None:
    """Makes `import torch` (and every `import torch.X`) import ember from now on, so an
    unchanged PyTorch program runs on ember. Raises RuntimeError if the real torch is
    already imported. Calling it again does nothing. For example, at the top of a
    PyTorch program: `import ember; ember.install_as_torch(); import torch` (now
    `torch is ember`)."""
    current = sys.modules.get("torch")
    if current is not None and current is not sys.modules["ember"]:
        raise RuntimeError("install_as_torch(): torch is already imported in this process; call it before any "
                           "import of torch")
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    sys.modules["torch"] = sys.modules["ember"]
    for name, module in list(sys.modules.items()):  # the ember submodules imported so far
        if name.startswith("ember.") and module is not None:
            sys.modules.setdefault("torch" + name[len("ember"):], module)
