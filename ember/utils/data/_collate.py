"""default_collate (samples -> one batch) and default_convert (numpy -> tensors, when
automatic batching is off). `collate` is the engine both use for batches: a table maps
element types to functions, so a caller can extend it (collate_fn_map)."""
from __future__ import annotations

import collections.abc
import copy

import ember

_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                  "found {}")


def _is_numpy(obj):
    return type(obj).__module__ == "numpy"


def _is_numpy_text_or_object(array):
    # strings (S, U), bytes-like (a) and Python objects (O) have no tensor dtype
    return array.dtype.kind in "SUO" or array.dtype.char == "a"


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data):
    """numpy arrays and numpy scalars in data converted to tensors, containers kept
    (tuples become lists, as in torch); used in place of collation when automatic
    batching is off (DataLoader(batch_size=None)).

    >>> import numpy as np
    >>> default_convert({"x": np.zeros(2)})["x"].dtype
    ember.float64
    """
    if isinstance(data, ember.Tensor):
        return data
    if _is_numpy(data) and type(data).__name__ not in ("str_", "bytes_"):
        if type(data).__name__ in ("ndarray", "memmap") and _is_numpy_text_or_object(data):
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update(converted)
            return clone
        try:
            return type(data)(converted)
        except TypeError:  # a mapping type whose constructor takes something else
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    return data


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return ember.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _is_numpy_text_or_object(batch[0]):
        raise TypeError(_COLLATE_ERROR.format(batch[0].dtype))
    return collate([ember.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return ember.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch, dtype=ember.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


def _numpy_kind(elem):
    """'array', 'scalar' or None: how default_collate treats a numpy object."""
    if not _is_numpy(elem) or type(elem).__name__ in ("str_", "bytes_"):
        return None
    if type(elem).__name__ in ("ndarray", "memmap"):
        return "array"
    return "scalar" if getattr(elem, "shape", None) == () else None


def collate(batch, *, collate_fn_map=None):
    """Collates a list of samples of the same structure into one batch: tensors are
    stacked, numbers become tensors, mappings, namedtuples and sequences are collated
    field by field. collate_fn_map maps element types to the function collating them;
    its entries are tried before the containers."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    kind = _numpy_kind(elem)
    if kind == "array":
        return collate_numpy_array_fn(batch, collate_fn_map=collate_fn_map)
    if kind == "scalar":
        return collate_numpy_scalar_fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(collated)
            return clone
        try:
            return elem_type(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):  # tuples come out as lists, as in torch
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        collated = [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            return elem_type(collated)
        except TypeError:
            return collated
    raise TypeError(_COLLATE_ERROR.format(elem_type))


default_collate_fn_map = {
    ember.Tensor: collate_tensor_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Collates a list of samples into a batch: tensors and numpy arrays are stacked
    along a new first dimension, Python floats become a float64 tensor and ints an int64
    one, strings stay a list, and dicts, namedtuples, tuples and lists are collated field
    by field (tuples come out as lists, as in torch).

    >>> default_collate([(ember.tensor([1, 2]), 0.5), (ember.tensor([3, 4]), 1.5)])
    [tensor([[1, 2],
            [3, 4]]), tensor([0.5000, 1.5000], dtype=ember.float64)]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
