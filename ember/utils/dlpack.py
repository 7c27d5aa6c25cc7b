"""DLPack: exchanging tensors with other libraries (numpy, torch, ...) without copying.

``from_dlpack(x)`` views the memory of any object with ``__dlpack__`` (or a DLPack
capsule); ``Tensor.__dlpack__`` lends an ember tensor's memory the same way. The
capsules are made and read by ember._C (csrc/python/dlpack.cpp).

>>> import numpy as np, ember
>>> a = np.arange(4.0)
>>> t = ember.from_dlpack(a)
>>> t[0] = 7.0
>>> float(a[0])
7.0
"""
from __future__ import annotations

import enum

from .. import _C

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (the specification's DLDeviceType)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """A legacy DLPack capsule ("dltensor") sharing tensor's memory; consume it once.

    >>> cap = to_dlpack(ember.ones(2))
    >>> ember.from_dlpack(cap)
    tensor([1., 1.])
    """
    if not isinstance(tensor, _C.TensorBase):
        raise TypeError(f"to_dlpack(): expected a Tensor, got {type(tensor).__name__}")
    return tensor.__dlpack__()


def _check_cpu(device):
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise ValueError(f"from_dlpack(): ember tensors live on the CPU; device '{device}' is not available")


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of ext_tensor (an object with ``__dlpack__`` and
    ``__dlpack_device__``, or a DLPack capsule), which stays alive as long as the tensor
    needs it. copy=True copies; a read-only producer's data is always copied, since
    ember tensors are writable (copy=False then raises BufferError).

    >>> import numpy as np
    >>> ember.from_dlpack(np.ones((2, 2), dtype=np.float32)).dtype
    ember.float32
    """
    if hasattr(ext_tensor, "__dlpack__"):
        _check_cpu(device)
        # The capsule's DLTensor says where the data is (ember._C refuses all but CPU
        # memory), so __dlpack_device__ is not asked: in torch it costs more than the rest.
        kwargs = {"max_version": (1, 0)}
        if copy is not None:
            kwargs["copy"] = copy
        if device is not None:
            kwargs["dl_device"] = (DLDeviceType.kDLCPU, 0)
        # As the specification asks: a producer older than DLPack 1.0 takes none of these
        # keywords, and then copy=True is ours to do.
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
            copied_here = False
        except TypeError:
            capsule = ext_tensor.__dlpack__()
            copied_here = copy is True
        t = _C._from_dlpack(capsule, copy is not False)
        return t.clone() if copied_here else t
    if device is not None or copy is not None:
        raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
    return _C._from_dlpack(ext_tensor)
