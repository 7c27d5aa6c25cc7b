"""The CUDA entry of the device table as _C calls it: ember._C_cuda's DeviceInterface (the
capsule ember._C_cuda._device_interface), read through ctypes with csrc/core/device.h's
layout, so that the tests call the very function pointers the core calls."""
import ctypes

c_int, c_size_t, c_void_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p


class DeviceInterface(ctypes.Structure):
    _fields_ = [
        ("abi_version", c_int),
        ("name", ctypes.c_char_p),
        ("backend", ctypes.c_char_p),
        ("has_data", ctypes.c_bool),
        ("alloc", ctypes.CFUNCTYPE(c_int, c_int, c_size_t, ctypes.POINTER(c_void_p))),
        ("free", ctypes.CFUNCTYPE(None, c_int, c_void_p, c_size_t)),
        ("copy_bytes", ctypes.CFUNCTYPE(c_int, c_int, c_void_p, c_void_p, c_size_t, c_int)),
        ("device_count", ctypes.CFUNCTYPE(c_int, ctypes.POINTER(c_int))),
        ("current_device", ctypes.CFUNCTYPE(c_int, ctypes.POINTER(c_int))),
        ("synchronize", ctypes.CFUNCTYPE(c_int, c_int)),
        ("error_message", ctypes.CFUNCTYPE(ctypes.c_char_p)),
    ]


ABI_VERSION = 1  # kDeviceAbiVersion
OK, ERROR, OUT_OF_MEMORY = 0, 1, 2  # DeviceStatus
HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE = 0, 1, 2  # DeviceCopyKind


def cuda_entry() -> DeviceInterface:
    """ember._C_cuda's entry (importing the module, which needs no driver)."""
    import ember._C_cuda as lib

    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = c_void_p, [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(lib._device_interface, b"ember._C_cuda._device_interface")
    return DeviceInterface.from_address(address)


def alloc(entry: DeviceInterface, index: int, nbytes: int):
    """(status, address) of entry.alloc."""
    out = c_void_p()
    status = entry.alloc(index, nbytes, ctypes.byref(out))
    return status, out.value
