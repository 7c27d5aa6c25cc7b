"""DLPack capsules made by hand with ctypes, for tests and the fuzz harness: any shape,
strides, dtype code, device, version and flags, over memory the test owns, with a
deleter that records its calls (so a test can tell it ran exactly once).

The structs follow the DLPack 1.1 specification (dlpack.h), as csrc/python/dlpack.cpp does.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", DELETER),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


READ_ONLY, IS_COPIED = 1, 2
# Kept alive with the module: a capsule's name must outlive it.
NAMES = {False: b"dltensor", True: b"dltensor_versioned"}

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_name(capsule) -> str:
    return _capsule_name(capsule).decode()


def managed(capsule):
    """The DLManagedTensor(Versioned) inside an unused capsule."""
    name = _capsule_name(capsule)
    struct = DLManagedTensorVersioned if name == NAMES[True] else DLManagedTensor
    return struct.from_address(_capsule_pointer(capsule, name))


class Producer:
    """Makes capsules and remembers which were deleted (by the address of their managed struct)."""

    def __init__(self):
        self.deleted = []
        self._alive = {}
        self._deleter = DELETER(self._delete)  # one callback, kept alive with the producer

    def _delete(self, address):
        self.deleted.append(address)
        self._alive.pop(address, None)

    @property
    def alive(self) -> int:
        return len(self._alive)

    def capsule(self, buffer, shape, strides=None, code=2, bits=64, lanes=1, byte_offset=0, device=1,
                versioned=True, version=(1, 1), flags=0, data=None, ndim=None, null_shape=False):
        """A capsule over buffer (a ctypes array or None); data overrides its address."""
        m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        shape_arr = (c_int64 * max(len(shape), 1))(*shape)
        strides_arr = None if strides is None else (c_int64 * max(len(strides), 1))(*strides)
        d = m.dl_tensor
        d.data = data if data is not None else (ctypes.addressof(buffer) if buffer is not None else None)
        d.device = DLDevice(device, 0)
        d.ndim = len(shape) if ndim is None else ndim
        d.dtype = DLDataType(code, bits, lanes)
        d.shape = None if null_shape else ctypes.cast(shape_arr, POINTER(c_int64))
        d.strides = None if strides_arr is None else ctypes.cast(strides_arr, POINTER(c_int64))
        d.byte_offset = byte_offset
        m.deleter = self._deleter
        if versioned:
            m.version = DLPackVersion(*version)
            m.flags = flags
        address = ctypes.addressof(m)
        self._alive[address] = (m, shape_arr, strides_arr, buffer)
        return _capsule_new(address, NAMES[versioned], None)
