"""DataParallel on the CPU: torch's without CUDA devices, which runs the module as is."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Splits the batch across GPUs in torch; ember has only the CPU, where (as torch
    without GPUs) it calls the wrapped module unchanged. State dict keys get the prefix
    `module.`, as torch's.

    >>> import ember
    >>> dp = DataParallel(ember.nn.Linear(2, 3))
    >>> dp(ember.ones(4, 2)).shape
    ember.Size([4, 3])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.dim = dim
        self.output_device = None
        self.src_device_obj = None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """module(*inputs, **module_kwargs): the functional DataParallel, on the CPU."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
