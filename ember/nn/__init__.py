"""ember.nn: modules, layers, their functional forms and initializers, as torch.nn.

    import ember.nn as nn
    import ember.nn.functional as F
"""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init, parallel, utils  # noqa: F401
from .parallel import DataParallel

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "DataParallel", "functional", "init", "parallel", "utils", *_modules_all]
