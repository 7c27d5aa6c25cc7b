"""The globals a checkpoint's pickle names, and the functions they rebuild tensors with.

ember writes torch's names (torch._utils._rebuild_tensor_v2, torch.FloatStorage,
torch.float32, torch.Size, ...) so that torch.load sees torch objects, and reading maps
those names back to ember's objects. TORCH_ALLOWED is the set of names torch 2.13's
weights_only unpickler admits by default: ember admits the same set (those it has no
equivalent for, such as complex or quantized dtypes, fail with a RuntimeError when met)."""
from __future__ import annotations

import _compat_pickle
import codecs
import collections
import importlib
import pickle
import sys

from .. import _C, _constants
from .._tensor import _rebuild_tensor
from ..storage import STORAGE_CLASSES, TypedStorage, UntypedStorage

_LEGACY = ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short")
_COMPLEX_STORAGES = ("ComplexFloat", "ComplexDouble")
_REBUILDS = ("_rebuild_device_tensor_from_cpu_tensor", "_rebuild_device_tensor_from_numpy",
             "_rebuild_meta_tensor_no_storage", "_rebuild_nested_tensor", "_rebuild_parameter",
             "_rebuild_parameter_with_state", "_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_tensor",
             "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_wrapper_subclass")
_TORCH_DTYPES = ("bfloat16", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "bool", "complex128", "complex32",
                 "complex64", "float16", "float32", "float4_e2m1fn_x2", "float64", "float8_e4m3fn", "float8_e4m3fnuz",
                 "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "qint32", "qint8", "quint2x4", "quint4x2",
                 "quint8", *(f"int{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64)),
                 *(f"uint{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64)))
_QSCHEMES = ("per_channel_affine", "per_channel_affine_float_qparams", "per_channel_symmetric", "per_tensor_affine",
             "per_tensor_symmetric")

TORCH_ALLOWED = frozenset([
    "_codecs.encode", "builtins.bytearray", "builtins.complex", "builtins.set", "collections.Counter",
    "collections.OrderedDict", "torch.Size", "torch.Tensor", "torch.device", "torch.nn.parameter.Parameter",
    "torch.serialization._get_layout", "torch._tensor._rebuild_from_type_v2", "torch.storage.TypedStorage",
    "torch.storage.UntypedStorage",
    *(f"torch._utils.{f}" for f in _REBUILDS), *(f"torch.{d}" for d in _TORCH_DTYPES),
    *(f"torch.{q}" for q in _QSCHEMES),
    *(f"torch.{p}{k}{kind}" for p in ("", "cuda.") for k in _LEGACY for kind in ("Storage", "Tensor")),
    *(f"torch.{p}{k}Storage" for p in ("", "cuda.") for k in _COMPLEX_STORAGES),
    *(f"torch.{k}Storage" for k in ("QInt32", "QInt8", "QUInt2x4", "QUInt4x2", "QUInt8")),
    *(f"torch.{p}sparse.{k}Tensor" for p in ("", "cuda.") for k in _LEGACY if k != "Bool"),
])

# Modules whose globals are refused even when allowed by name, as torch refuses them.
BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                "complex64", "complex128")


# ---- rebuilding tensors ----

def _check_view(storage, storage_offset, size, stride, dtype):
    if not (isinstance(size, (tuple, list)) and isinstance(stride, (tuple, list)) and isinstance(storage_offset, int)
            and all(isinstance(v, int) for v in (*size, *stride)) and len(size) == len(stride)
            and storage_offset >= 0 and min((*size, *stride), default=0) >= 0):
        raise pickle.UnpicklingError("ember.load: a tensor record has an invalid size, stride or offset")
    if all(n > 0 for n in size):
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (last + 1) * dtype.itemsize > storage.nbytes():
            raise pickle.UnpicklingError("ember.load: a tensor record reaches past the end of its storage")


def make_tensor(storage, storage_offset, size, stride, dtype=None, requires_grad=False):
    """A tensor viewing storage (untyped with a dtype, or typed); checks what a damaged
    (or hostile) file could get wrong."""
    if isinstance(storage, TypedStorage):
        storage, dtype = storage.untyped(), dtype or storage.dtype
    if isinstance(dtype, Unsupported):
        dtype()
    if not isinstance(storage, UntypedStorage) or not isinstance(dtype, _C.dtype):
        raise pickle.UnpicklingError("ember.load: a tensor record names no storage or no dtype")
    _check_view(storage, storage_offset, size, stride, dtype)
    return _rebuild_tensor(storage, storage_offset, tuple(size), tuple(stride), dtype, bool(requires_grad))


def _check_hooks(backward_hooks):
    if backward_hooks:  # torch warns and drops them; a file cannot hold callable hooks safely
        raise pickle.UnpicklingError("ember.load: a tensor record carries backward hooks")


def rebuild_tensor(storage, storage_offset, size, stride):
    return make_tensor(storage, storage_offset, size, stride)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    _check_hooks(backward_hooks)
    return make_tensor(storage, storage_offset, size, stride, requires_grad=bool(requires_grad))


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    _check_hooks(backward_hooks)
    return make_tensor(storage, storage_offset, size, stride, dtype, bool(requires_grad))


def _set_state(obj, state):
    """Restores attributes a tensor was saved with: a dict, or (dict, slots dict)."""
    if not state:
        return
    if isinstance(state, tuple):
        if len(state) != 2:
            raise pickle.UnpicklingError(f"ember.load: invalid tensor state of length {len(state)}")
        parts = state
    else:
        parts = (state,)
    for part in parts:
        if part is None:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"ember.load: invalid tensor state {type(part).__name__}")
        for name, value in part.items():
            setattr(obj, name, value)


def _parameter_class():
    """nn.Parameter, imported when first needed (ember.nn takes a while to import)."""
    from ..nn.parameter import Parameter

    return Parameter


def loaded_parameter_class():
    """nn.Parameter if ember.nn is imported (else no Parameter exists to be saved), or None."""
    module = sys.modules.get("ember.nn.parameter")
    return None if module is None else module.Parameter


def _check_tensor(data):
    if not isinstance(data, _C.TensorBase):
        raise pickle.UnpicklingError(f"ember.load: expected a tensor, got {type(data).__name__}")


def rebuild_parameter(data, requires_grad, backward_hooks):
    _check_tensor(data)
    _check_hooks(backward_hooks)
    return _parameter_class()(data, bool(requires_grad))


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = rebuild_parameter(data, requires_grad, backward_hooks)
    _set_state(param, state)
    return param


def rebuild_from_type_v2(func, new_type, args, state):
    """func(*args) as a new_type (a tensor subclass), with its attributes restored."""
    from .._tensor import Tensor

    if not isinstance(args, tuple) or not callable(func):
        raise pickle.UnpicklingError("ember.load: invalid tensor subclass record")
    result = func(*args)
    if type(result) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor) and isinstance(result, Tensor)):
            raise pickle.UnpicklingError(f"ember.load: {new_type!r} is not a tensor class")
        result.__class__ = new_type
    setstate = getattr(type(result), "__setstate__", None)
    if setstate is not None and state:
        setstate(result, state)
    else:
        _set_state(result, state)
    return result


def rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    _check_tensor(data)
    from ..serialization import _check_available

    _check_available(device)
    return data.to(device, dtype).requires_grad_(bool(requires_grad))


def get_layout(name):
    layouts = {"torch.strided": _constants.strided, "torch.sparse_coo": _constants.sparse_coo,
               "torch.sparse_csr": _constants.sparse_csr}
    if name not in layouts:
        raise RuntimeError(f"ember.load: ember has only the strided, sparse_coo and sparse_csr layouts, not {name}")
    return layouts[name]


def rebuild_sparse_tensor(layout, data):
    """A sparse COO tensor from (indices, values, size, is_coalesced), or a CSR one from
    (crow_indices, col_indices, values, size), invariants checked."""
    if layout is _constants.sparse_csr:
        if not isinstance(data, tuple) or len(data) != 4:
            raise pickle.UnpicklingError("ember.load: invalid sparse CSR tensor record")
        for part in data[:3]:
            _check_tensor(part)
        from .._sparse import _sparse_csr

        crow, col, values, size = data
        result = _sparse_csr.sparse_csr_tensor(crow, col, values.detach(), tuple(size))
        return result.requires_grad_() if values.requires_grad else result
    if layout is not _constants.sparse_coo:
        raise RuntimeError(f"ember.load: ember has no {layout} layout")
    if not isinstance(data, tuple) or len(data) not in (3, 4):
        raise pickle.UnpicklingError("ember.load: invalid sparse tensor record")
    indices, values, size = data[:3]
    _check_tensor(indices)
    _check_tensor(values)
    from .._sparse import sparse_coo_tensor

    coalesced = bool(data[3]) if len(data) == 4 else None
    result = sparse_coo_tensor(indices, values.detach(), size, is_coalesced=coalesced)
    return result.requires_grad_() if values.requires_grad else result


def _bytearray(*args):
    """bytearray as pickles rebuild it (from bytes or text), not bytearray(n): a hostile file
    could ask for any n bytes."""
    if args and not isinstance(args[0], (bytes, str)):
        raise pickle.UnpicklingError("ember.load: a bytearray record holds no bytes")
    return bytearray(*args)


class Unsupported:
    """What a name torch admits but ember has no object for (torch.complex64,
    torch.QInt8Storage, ...) loads as: using it raises."""

    def __init__(self, full_name):
        self.full_name = full_name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"ember.load: the file holds {self.full_name}, which ember does not support")

    def __repr__(self):
        return f"<{self.full_name}, not supported by ember>"


# ---- the tables ----

_tables = None


def _build_tables():
    import ember
    from .._tensor import Tensor

    by_torch_name = {
        "collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
        "builtins.set": set, "builtins.complex": complex, "builtins.bytearray": _bytearray,
        "_codecs.encode": codecs.encode,
        "torch.Size": _C.Size, "torch.device": _constants.device, "torch.Tensor": Tensor,
        "torch.nn.parameter.Parameter": None,  # resolved on use: see resolve()
        "torch.serialization._get_layout": get_layout,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch._utils._rebuild_tensor": rebuild_tensor, "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": rebuild_device_tensor_from_cpu_tensor,
        "torch._utils._rebuild_sparse_tensor": rebuild_sparse_tensor,
        "torch.storage.UntypedStorage": UntypedStorage, "torch.storage.TypedStorage": TypedStorage,
    }
    for name in _DTYPE_NAMES:
        by_torch_name[f"torch.{name}"] = getattr(_C, name)
    for kind in _LEGACY + _COMPLEX_STORAGES:
        for prefix in ("torch.", "torch.cuda."):
            by_torch_name[prefix + kind + "Storage"] = STORAGE_CLASSES[kind + "Storage"]
            tensor_class = getattr(ember, kind + "Tensor", None) if kind in _LEGACY else None  # torch has no ComplexFloatTensor
            if tensor_class is not None:
                by_torch_name[prefix + kind + "Tensor"] = tensor_class
    # What ember writes under torch's names: the first of each object's names above.
    written = {}
    for full, obj in by_torch_name.items():
        if obj is not None and full.startswith("torch.") and not full.startswith("torch.cuda."):
            module, _, name = full.rpartition(".")
            written.setdefault(id(obj), (module, name))
    for full in TORCH_ALLOWED - by_torch_name.keys():
        by_torch_name[full] = Unsupported(full)
    return by_torch_name, written


def tables():
    """({torch name: ember object}, {id(ember object): (torch module, name)})."""
    global _tables
    if _tables is None:
        _tables = _build_tables()
    return _tables


def torch_name(obj):
    """The (module, name) torch knows obj by, or None."""
    if obj is loaded_parameter_class():
        return "torch.nn.parameter", "Parameter"
    return tables()[1].get(id(obj))


# ---- ember's own earlier names (files written by ember.save before it wrote torch's format) ----

def _ember_v1_rebuild(storage, storage_offset, size, stride, dtype, requires_grad=False, cls=None, state=None):
    from .._tensor import Tensor

    t = make_tensor(storage, storage_offset, size, stride, dtype, bool(requires_grad))
    if cls is not None and cls is not Tensor:
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise pickle.UnpicklingError(f"ember.load: {cls!r} is not a tensor class")
        t.__class__ = cls
    _set_state(t, state)
    return t


def ember_global(module, name):
    """An object named by ember's earlier format that weights_only admits, or None."""
    from ..storage import _rebuild_typed

    if (module, name) == ("ember.serialization", "_rebuild_tensor"):
        return _ember_v1_rebuild
    if (module, name) == ("ember.storage", "_rebuild_typed"):
        return _rebuild_typed
    if (module, name) in (("ember", "Size"), ("ember._C", "Size")):
        return _C.Size
    if (module, name) == ("ember._constants", "device"):
        return _constants.device
    if module == "ember._C" and isinstance(getattr(_C, name, None), _C.dtype):
        return getattr(_C, name)
    if module == "ember._constants" and isinstance(getattr(_constants, name, None),
                                                   (_constants.memory_format, _constants.layout)):
        return getattr(_constants, name)
    return None


def qualified_name(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def user_globals(entries):
    """{full name: object} for add_safe_globals' entries: objects or (object, name) pairs."""
    out = {}
    for entry in entries:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(entry[1])}")
            out[entry[1]] = entry[0]
        else:
            name = qualified_name(entry)
            out[name] = entry
            if name.startswith("ember."):
                # A file torch saved names torch's class (torch.nn.modules.linear.Linear),
                # which loads as ember's (see resolve): allowing ember's allows that name.
                out.setdefault("torch." + name[len("ember."):], entry)
    return out


UNSAFE_MESSAGE = (
    "Re-running `ember.load` with `weights_only=False` will likely succeed, but it can result in arbitrary code "
    "execution. Do it only if you got the file from a trusted source.")


def unsafe_global_error(module, name):
    full = f"{module}.{name}"
    if module in BLOCKED_MODULES:
        return pickle.UnpicklingError(
            f"Weights only load failed. {UNSAFE_MESSAGE}\n\nTrying to load unsupported GLOBAL {full} whose module "
            f"{module} is blocked.")
    shown = name if module == "builtins" else full  # the name the user writes to allow it
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
        f"only if you trust the source of the checkpoint.\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
        "`weights_only=True` please check the recommended steps in the following error message.\n\t"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {shown} was not an allowed global by default. Please "
        f"use `ember.serialization.add_safe_globals([{shown}])` or the `ember.serialization.safe_globals([{shown}])` "
        "context manager to allowlist this global if you trust this class/function.")


def python3_name(module, name):
    """A global's Python 3 name (protocol 2 pickles write Python 2's: __builtin__.set)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def resolve(module, name, weights_only, allowed_by_user, fallback):
    """The object a pickle's GLOBAL module.name stands for: torch's names map to ember's
    objects; with weights_only only the allowed names resolve."""
    module, name = python3_name(module, name)
    full = f"{module}.{name}"
    by_torch_name = tables()[0]
    if weights_only:
        if module in BLOCKED_MODULES:
            raise unsafe_global_error(module, name)
        if full in by_torch_name:
            return by_torch_name[full] or _parameter_class()
        if full in allowed_by_user:
            return allowed_by_user[full]
        found = ember_global(module, name)
        if found is None:
            raise unsafe_global_error(module, name)
        return found
    if full in by_torch_name:
        return by_torch_name[full] or _parameter_class()
    if module == "torch" or module.startswith("torch."):  # torch's class -> ember's, where ember has it
        try:
            found = getattr(importlib.import_module("ember" + module[5:]), name, None)
        except ImportError:
            found = None
        if found is not None:
            return found
    return ember_global(module, name) or fallback(module, name)


def safe_names(allowed_by_user):
    """Every global name weights_only admits (for get_unsafe_globals_in_checkpoint)."""
    return TORCH_ALLOWED | allowed_by_user.keys()
