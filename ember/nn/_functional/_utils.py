"""What more than one topic of ember.nn.functional uses."""
from __future__ import annotations


def _legacy_name(dtype) -> str:
    """torch's legacy tensor type name of a dtype (Float, Long, ...), as its messages print it."""
    names = {"float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names.get(repr(dtype).split(".")[-1], repr(dtype))
