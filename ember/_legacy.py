"""The legacy typed classes (FloatTensor, LongTensor, ...): thin Python classes that fix a
dtype, never separate C types (DESIGN.md). One per dtype of the table in ember._C."""
from __future__ import annotations

from . import _C
from ._tensor import Tensor


def legacy_name(dtype) -> str:
    return dtype._legacy_name


def tensor_class_name(dtype) -> str:
    return legacy_name(dtype) + "Tensor"


class _LegacyTensorMeta(type):
    """isinstance(t, FloatTensor) asks for the dtype; FloatTensor(...) builds an ember.Tensor."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, **kwargs):
        return _C._legacy_new(cls.dtype, *args, **kwargs)


def _make_tensor_classes() -> dict:
    classes = {}
    for name in _C._dtype_names:
        dtype = getattr(_C, name)
        cls_name = tensor_class_name(dtype)
        if cls_name in classes or dtype.is_complex:  # torch has no ComplexFloatTensor
            continue
        classes[cls_name] = _LegacyTensorMeta(cls_name, (Tensor,), {
            "dtype": dtype,
            "__module__": "ember",
            "__doc__": f"Legacy constructor of {dtype!r} tensors: {cls_name}(*sizes) or {cls_name}(data).",
        })
    return classes


TENSOR_CLASSES = _make_tensor_classes()


def dtype_from_type(t):
    """A dtype from a dtype, a legacy class, or its name ('ember.FloatTensor', 'torch.FloatTensor')."""
    if isinstance(t, _C.dtype):
        return t
    if isinstance(t, type) and t in TENSOR_CLASSES.values():
        return t.dtype
    if isinstance(t, str):
        short = t.rsplit(".", 1)[-1]
        if short in TENSOR_CLASSES and t.split(".")[0] in ("ember", "torch"):
            return TENSOR_CLASSES[short].dtype
        raise ValueError(f"invalid type: '{t}'")
    if isinstance(t, type):
        raise ValueError(f"invalid type: {t!r}")
    raise TypeError("dtype must be a type, str, or dtype object")
