"""ember.cuda: the CUDA device's Python face, with torch.cuda's names and errors.

The CUDA extension, ember._C_cuda, is built only on request (EMBER_CUDA=1, see README)
and loaded lazily: neither `import ember` nor importing this module loads it. The first
call that needs a GPU (init(), current_device(), a tensor made on 'cuda', which calls
_lazy_init()) loads it, checks that there is a driver and a GPU, and registers the CUDA
entry of the core's device table (Note [The device table] in csrc/core/device.h). The
driver's library is looked for before the extension is loaded, so a machine without one
never loads it. Answers where CUDA is absent are CPU torch's: is_available() is False and
device_count() 0; the calls that need a device raise AssertionError("ember not compiled
with CUDA enabled") without the extension, and torch's RuntimeError with it but without
a driver or a GPU; counters read 0 and cache calls do nothing before initialization.

>>> ember.cuda.is_available() == (ember.cuda.device_count() > 0)
True
"""
from __future__ import annotations

import ctypes as _ctypes
import importlib as _importlib
import importlib.util as _importlib_util
import os as _os
import threading as _threading

import ember as _ember

_NOT_COMPILED = "ember not compiled with CUDA enabled"
_NO_DRIVER = ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver "
              "from http://www.nvidia.com/Download/index.aspx")
_NO_GPU = "No CUDA GPUs are available"
_OLD_DRIVER = ("The NVIDIA driver on your system is too old (found version {}). Please update your GPU driver by "
               "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx")
_BAD_FORK = ("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
             "'spawn' start method")

_lock = _threading.Lock()
_initialized = False
_in_bad_fork = False
_lib = None  # ember._C_cuda, once loaded
_absent = None  # why it cannot be loaded: (exception type, message), once known
_properties = {}  # device index -> _CudaDeviceProperties


def _is_compiled() -> bool:
    """Whether ember._C_cuda was built (found without loading it)."""
    return _importlib_util.find_spec("ember._C_cuda") is not None


def _driver_found() -> bool:
    try:
        _ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _load():
    """ember._C_cuda, or None when it is not built or there is no driver (then it is never
    loaded). Never raises."""
    global _lib, _absent
    if _lib is None and _absent is None:
        if not _is_compiled():
            _absent = (AssertionError, _NOT_COMPILED)
        elif not _driver_found():
            _absent = (RuntimeError, _NO_DRIVER)
        else:
            try:
                _lib = _importlib.import_module("ember._C_cuda")
            except ImportError as error:  # built against another ember._C: say so at first use
                _absent = (ImportError, f"ember._C_cuda could not be loaded: {error}")
    return _lib


def _lazy_init() -> None:
    """Loads ember._C_cuda and registers the CUDA device, or raises torch's error saying
    why it cannot. The core calls this before the first tensor on 'cuda'."""
    global _initialized
    if _initialized:
        return
    with _lock:
        if _initialized:
            return
        if _in_bad_fork:
            raise RuntimeError(_BAD_FORK)
        lib = _load()
        if lib is None:
            raise _absent[0](_absent[1])
        if lib._device_count() == 0:
            driver = lib._driver_version()
            if 0 < driver < lib._runtime_version():
                raise RuntimeError(_OLD_DRIVER.format(driver))
            raise RuntimeError(_NO_GPU)
        lib._register()
        _initialized = True


def _after_fork_in_child() -> None:
    """CUDA does not survive fork: a child of an initialized process refuses it."""
    global _initialized, _in_bad_fork
    if _initialized:
        _initialized, _in_bad_fork = False, True
        _lib._register_forked()


_os.register_at_fork(after_in_child=_after_fork_in_child)


def is_available() -> bool:
    """Whether a GPU can be used: ember built with CUDA, a driver, and at least one GPU.
    Never raises."""
    lib = _load()
    return lib is not None and lib._device_count() > 0


def device_count() -> int:
    """The number of GPUs: 0 without ember's CUDA build, a driver or a GPU."""
    lib = _load()
    return lib._device_count() if lib is not None else 0


def is_initialized() -> bool:
    """Whether the CUDA device is set up in this process (_lazy_init() ran)."""
    return _initialized and not _in_bad_fork


def init() -> None:
    """Initializes CUDA now instead of at its first use; raises where it is not available."""
    _lazy_init()


def _device_index(device, optional: bool = False) -> int:
    """The GPU index that device names (int, 'cuda:1', ember.device, a cuda.device context);
    None and 'cuda' without an index mean the current device when optional."""
    if isinstance(device, str):
        device = _ember.device(device)
    if isinstance(device, _ember.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = device.index
    elif isinstance(device, _DeviceContext):
        return device.idx
    elif isinstance(device, int):
        return device
    elif device is None:
        index = None
    else:
        raise ValueError(f"Expected a cuda device, an integer or None, but got: {device!r}")
    if index is None:
        if optional:
            return current_device()
        raise ValueError(f"Expected an ember.device with a specified index or an integer, but got:{device}")
    return index


def current_device() -> int:
    """The index of the current GPU."""
    _lazy_init()
    return _lib._current_device()


def set_device(device) -> None:
    """Makes device the current GPU; a negative index does nothing. Prefer the `device`
    context manager (or CUDA_VISIBLE_DEVICES)."""
    index = _device_index(device)
    if index >= 0:
        _lazy_init()
        _lib._set_device(index)


def _exchange_device(index: int) -> int:
    """Makes index the current device; returns the previous one (-1: nothing changed)."""
    if index < 0:
        return -1
    if not _is_compiled():
        raise RuntimeError("ember was compiled without CUDA support")
    _lazy_init()
    previous = _lib._current_device()
    if previous != index:
        _lib._set_device(index)
    return previous


class device:
    """Context manager making device the current GPU inside its block; a negative index
    or None does nothing.

    >>> with ember.cuda.device(-1):
    ...     pass
    """

    def __init__(self, device):
        self.idx = -1 if device is None else _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, exc_type, exc_value, traceback):
        self.idx = _exchange_device(self.prev_idx)
        return False


_DeviceContext = device


class device_of(device):
    """Context manager making obj's GPU the current one (nothing for a CPU tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class _CudaDeviceProperties:
    """A GPU's properties, under torch's attribute names: name, major, minor,
    total_memory, multi_processor_count, uuid, L2_cache_size, warp_size, ..."""

    def __init__(self, fields: dict):
        self.__dict__.update(fields)

    def __repr__(self):
        mib = 1024 * 1024
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // mib}MB, multi_processor_count={self.multi_processor_count}, "
                f"uuid={self.uuid}, pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
                f"pci_domain_id={self.pci_domain_id}, L2_cache_size={self.L2_cache_size // mib}MB)")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    """The properties of device (default: the current GPU)."""
    _lazy_init()
    index = _device_index(device, optional=True)
    if index < 0 or index >= device_count():
        raise AssertionError("Invalid device id")
    if index not in _properties:
        _properties[index] = _CudaDeviceProperties(_lib._get_device_properties(index))
    return _properties[index]


def get_device_name(device=None) -> str:
    """The name of device (default: the current GPU), e.g. 'NVIDIA H100 80GB HBM3'."""
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    """(major, minor): device's compute capability, (9, 0) on a Hopper GPU."""
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 runs on the current GPU (natively from compute capability 8.0)."""
    if not is_available():
        return False
    return including_emulation or get_device_properties().major >= 8


def synchronize(device=None) -> None:
    """Waits for all work on device (default: the current GPU) to finish."""
    _lazy_init()
    _lib._synchronize(_device_index(device, optional=True))


# ---- the caching allocator (csrc/cuda/allocator.cu); 0 and no-ops before initialization
def _stat(name: str, device) -> int:
    if not is_initialized():
        return 0
    return getattr(_lib, name)(_device_index(device, optional=True))


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory in tensors on device (as the allocator rounds them)."""
    return _stat("_memory_allocated", device)


def max_memory_allocated(device=None) -> int:
    """The peak of memory_allocated since the start or reset_peak_memory_stats()."""
    return _stat("_max_memory_allocated", device)


def memory_reserved(device=None) -> int:
    """Bytes of GPU memory the caching allocator holds on device: in use or cached."""
    return _stat("_memory_reserved", device)


def max_memory_reserved(device=None) -> int:
    """The peak of memory_reserved since the start or reset_peak_memory_stats()."""
    return _stat("_max_memory_reserved", device)


def memory_stats(device=None) -> dict:
    """The allocator's counters under torch's keys ({} before initialization)."""
    if not is_initialized():
        return {}
    index = _device_index(device, optional=True)
    return {"allocated_bytes.all.current": _lib._memory_allocated(index),
            "allocated_bytes.all.peak": _lib._max_memory_allocated(index),
            "reserved_bytes.all.current": _lib._memory_reserved(index),
            "reserved_bytes.all.peak": _lib._max_memory_reserved(index)}


def reset_peak_memory_stats(device=None) -> None:
    """Sets the peaks of device's counters to their current values."""
    _lazy_init()
    _lib._reset_peak_memory_stats(_device_index(device, optional=True))


def empty_cache() -> None:
    """Returns the caching allocator's unused blocks to CUDA (tensors keep theirs)."""
    if is_initialized():
        _lib._empty_cache()


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of device's memory, as CUDA reports them."""
    _lazy_init()
    return _lib._mem_get_info(_device_index(device, optional=True))


def caching_allocator_alloc(size, device=None, stream=None) -> int:
    """The address of a block of size bytes from the caching allocator on device; give it
    back with caching_allocator_delete."""
    _lazy_init()
    if stream is not None:
        raise NotImplementedError("ember.cuda.caching_allocator_alloc: ember has no CUDA streams yet (issue 17)")
    return _lib._caching_allocator_alloc(size, _device_index(device, optional=True))


def caching_allocator_delete(mem_ptr) -> None:
    """Returns a block from caching_allocator_alloc to the allocator."""
    _lazy_init()
    _lib._caching_allocator_delete(mem_ptr)


def ipc_collect() -> None:
    """A no-op once CUDA is initialized: ember shares no CUDA memory between processes."""
    _lazy_init()


# ---- random numbers: no CUDA generator until the CUDA kernels exist
def manual_seed(seed) -> None:
    """A no-op: there is no CUDA generator to seed yet."""


def manual_seed_all(seed) -> None:
    """A no-op: there is no CUDA generator to seed yet."""


def seed() -> None:
    """A no-op: there is no CUDA generator to seed yet."""


def seed_all() -> None:
    """A no-op: there is no CUDA generator to seed yet."""


def _no_generator(*args, **kwargs):
    _lazy_init()
    # TODO(issue 17, part 2): the CUDA generator comes with the CUDA kernels
    raise NotImplementedError("ember.cuda has no random number generator yet")


get_rng_state = set_rng_state = get_rng_state_all = set_rng_state_all = _no_generator


def __getattr__(name):
    if name == "amp":
        return _importlib.import_module(f"{__name__}.amp")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
