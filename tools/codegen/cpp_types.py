"""How schema types map to C++ (ops signatures) and to the binding layer's parser."""
from __future__ import annotations

from .model import Argument, DeclarationError, Op, Type

# Types the binding layer checks and then drops: ember is CPU-only and strided-only.
PYTHON_ONLY = {"Device", "Layout"}

_CPP = {
    "Tensor": "const Tensor&", "int": "int64_t", "float": "double", "bool": "bool",
    "Scalar": "const Scalar&", "ScalarType": "ScalarType", "Generator": "GeneratorImpl*",
    "MemoryFormat": "MemoryFormat", "str": "const std::string&",
}


def cpp_arg_type(t: Type) -> str:
    if t.base == "Tensor":
        return "const std::vector<Tensor>&" if t.is_list else "const Tensor&"
    if t.base == "int" and t.is_list:
        return "std::optional<IntList>" if t.optional else "IntList"
    if t.base == "Generator":
        return "GeneratorImpl*"
    base = _CPP[t.base]
    if t.optional:
        return f"std::optional<{base.replace('const ', '').replace('&', '')}>"
    return base


def cpp_return_type(returns: tuple[Type, ...]) -> str:
    if not returns:
        return "void"
    if len(returns) > 1:
        return "std::tuple<" + ", ".join(cpp_return_type((r,)) for r in returns) + ">"
    t = returns[0]
    if t.base == "Tensor":
        return "std::vector<Tensor>" if t.is_list else "Tensor"
    return {"int": "int64_t", "float": "double", "bool": "bool", "Scalar": "Scalar", "ScalarType": "ScalarType"}[t.base]


# A factory's `bool requires_grad=False` is applied by the binding to the result: ops
# never see it.
BINDING_ONLY_ARGS = {"requires_grad"}


def cpp_args(op: Op) -> list[Argument]:
    return [a for a in op.schema.arguments if a.type.base not in PYTHON_ONLY and a.name not in BINDING_ONLY_ARGS]


def cpp_signature(op: Op, defaults: bool = True) -> str:
    """The C++ op function. Ops with in-place/out variants end in `const Out& out`."""
    params = [f"{cpp_arg_type(a.type)} {a.name}" for a in cpp_args(op)]
    if op.has_out_param:
        params.append("const Out& out" + (" = Out()" if defaults else ""))
    return f"{cpp_return_type(op.schema.returns)} {op.cpp_name}({', '.join(params)})"


# ---- the binding layer's parser (csrc/python/arg_parser.h) ----

def param_type(t: Type) -> str:
    if t.base == "Tensor":
        if t.is_list:
            return "PType::OptionalTensorList" if t.elem_optional else "PType::TensorList"
        return "PType::Tensor"
    if t.base == "int":
        return ("PType::DimList" if t.single else "PType::IntList") if t.is_list else "PType::Int"
    return "PType::" + {
        "float": "Float", "bool": "Bool", "Scalar": "Scalar", "ScalarType": "DType",
        "Generator": "Generator", "Device": "Device", "Layout": "Layout",
        "MemoryFormat": "MemoryFormat", "str": "String",
    }[t.base]


def python_type_name(t: Type) -> str:
    """How error messages and docstrings name a type (torch's words)."""
    names = {"Tensor": "Tensor", "int": "int", "float": "float", "bool": "bool",
             "Scalar": "Number", "ScalarType": "dtype", "Generator": "Generator",
             "Device": "device", "Layout": "layout", "MemoryFormat": "memory_format", "str": "str"}
    if t.is_list:
        s = ("tuple of Tensors or None" if t.elem_optional else "tuple of Tensors") if t.base == "Tensor" else "tuple of ints"
    else:
        s = names[t.base]
    return s + " or None" if t.optional else s


def _dtype_enum(name: str, dtypes) -> str:
    for d in dtypes:
        if name == d.name or name in d.aliases:
            return f"ScalarType::{d.enum}"
    raise KeyError(name)


def getter(a: Argument, index: int, op: Op, dtypes) -> str:
    """The C++ expression that reads parsed argument `index` as the op's C++ type."""
    t, d = a.type, a.default
    optional_none = t.optional and d in (None, "None")

    def bad():
        raise DeclarationError(op.loc, f"unsupported default '{d}' for {t} {a.name}")

    if t.base == "Tensor":
        if t.is_list:
            return f"a.tensor_list({index}, {str(t.elem_optional).lower()})"
        return f"a.tensor_or_undefined({index})" if t.optional else f"a.tensor({index})"
    if t.base == "Generator":
        return f"a.generator({index})"
    if t.base == "int" and t.is_list:
        if optional_none:
            return f"a.int_list_opt({index})"
        if d in (None, "[]"):
            return f"a.int_list({index})"
        bad()
    if optional_none:
        return f"a.{_OPT_GETTER[t.base]}({index})"
    if d is None:
        return f"a.{_GETTER[t.base]}({index})"
    if t.base == "int":
        lit = f"int64_t({int(d)})"
    elif t.base == "float":
        lit = repr(float(d))
    elif t.base == "bool":
        lit = {"True": "true", "False": "false"}.get(d) or bad()
    elif t.base == "Scalar":
        if d in ("True", "False"):
            lit = f"Scalar({d.lower()})"
        elif "." in d or "e" in d:
            lit = f"Scalar({float(d)!r})"
        else:
            lit = f"Scalar(int64_t({int(d)}))"
    elif t.base == "ScalarType":
        lit = _dtype_enum(d, dtypes)
    elif t.base == "MemoryFormat":
        lit = {"contiguous_format": "MemoryFormat::Contiguous",
               "preserve_format": "MemoryFormat::Preserve", "channels_last": "MemoryFormat::ChannelsLast",
               "channels_last_3d": "MemoryFormat::ChannelsLast3d"}.get(d) or bad()
    elif t.base == "str":
        lit = '"' + d.strip("'\"") + '"'
    else:
        bad()
    return f"a.{_GETTER[t.base]}({index}, {lit})"


_GETTER = {"int": "to_int", "float": "to_double", "bool": "to_bool", "Scalar": "scalar",
           "ScalarType": "dtype", "MemoryFormat": "memory_format", "str": "string"}
_OPT_GETTER = {"int": "int_opt", "float": "double_opt", "bool": "bool_opt", "Scalar": "scalar_opt",
               "ScalarType": "dtype_opt", "MemoryFormat": "memory_format_opt", "str": "string_opt"}
