"""Small value types torch exposes at the top level: device, layout, memory_format."""
from __future__ import annotations


# The device types torch knows; ember has "cpu", "meta" and (built with EMBER_CUDA=1) "cuda".
_DEVICE_TYPES = frozenset("cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta "
                          "hpu mtia privateuseone".split())


class device:
    """ember.device('cpu'): where a tensor lives. Any torch device string parses; ember
    has the CPU, the data-less meta device and CUDA (when built with it). As a context
    manager it is the default device of factories inside the block, as torch's."""

    __slots__ = ("type", "index", "_previous")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): an index cannot be given with a device object")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            if type < 0:
                raise RuntimeError(f"Device index must not be negative")
            self.type, self.index = "cuda", type  # an index names torch's accelerator, CUDA here
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type.__class__.__name__})")
        name, sep, idx = type.partition(":")
        if name not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(sorted(_DEVICE_TYPES))} device type at start of "
                               f"device string: {type}")
        if sep and not idx.isdigit():
            raise RuntimeError(f"Invalid device string: '{type}'")
        if sep and index is not None:
            raise RuntimeError(f"device(): type (string) must not include an index because index was passed explicitly: {type}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = name
        self.index = int(idx) if sep else index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        from . import _C

        previous = getattr(self, "_previous", None) or []
        previous.append(_C._get_default_device())
        self._previous = previous
        _C._set_default_device(self)
        return self

    def __exit__(self, *exc):
        from . import _C

        _C._set_default_device(self._previous.pop())
        return False


class _Named:
    """A named constant that prints and pickles as ember.<name>."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return self.name


class layout(_Named):
    __slots__ = ()


class memory_format(_Named):
    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
cpu = device("cpu")
