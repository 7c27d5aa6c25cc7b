"""Fuzzes the generated argument parser: every function and Tensor method declared in
declarations/ops/*.yaml (the generator's own model lists them with their overloads), called
with random combinations of positional and keyword arguments -- mostly well-typed for one
of the declared signatures, so calls get past the parser into the ops, sometimes hostile:
wrong types, missing or extra arguments, unknown or repeated keywords, out= tensors of the
wrong shape or dtype, aliasing inputs."""
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values, attempt  # noqa: E402

import ember  # noqa: E402

sys.path.insert(0, _common.ROOT)
from tools.codegen import passes  # noqa: E402
from tools.codegen.load import load  # noqa: E402

BINDINGS = sorted(passes.run(load(Path(_common.ROOT))).bindings, key=lambda b: (b.kind, b.name))
# Sizes a factory would fill for seconds: the fuzzer learns them fast and then does little else.
MAX_INT_ARG = 1 << 16


def typed(v: Values, arg, self_tensor):
    """A value of the argument's declared type (or, sometimes, a value of any type)."""
    t = arg.type
    if v.fdp.ConsumeIntInRange(0, 15) == 0:
        return v.value()
    if t.optional and v.fdp.ConsumeIntInRange(0, 3) == 0:
        return None
    base = t.base
    if t.is_list or t.varargs or t.single:
        if base == "Tensor":
            return [self_tensor if v.bool() else v.tensor(3) for _ in range(v.small(0, 3))]
        if t.single and v.bool():
            return v.small(-3, 3)
        return [v.small(-3, 4) if v.fdp.ConsumeIntInRange(0, 7) else v.int() for _ in range(v.small(0, 4))]
    if base == "Tensor":
        k = v.small(0, 5)
        return self_tensor if k == 0 else v.number() if k == 1 else v.tensor(3)
    if base == "int":
        return v.small(-3, 4) if v.fdp.ConsumeIntInRange(0, 7) else v.int()
    if base == "float":
        return v.float()
    if base == "bool":
        return v.bool()
    if base == "Scalar":
        return v.number()
    if base == "ScalarType":
        return v.dtype()
    if base == "Generator":
        g = ember.Generator()
        g.manual_seed(v.small(0, 100))
        return g
    if base == "str":
        return v.pick(("sum", "mean", "none", "reduced", "complete", "r", "fro", "nuc", "floor", "trunc", "amax",
                       "amin", "prod", "ij", "xy", "tanh", "linear", "lower", "higher", "nearest", "midpoint",
                       "gelsd", "L", "U", "", "\x00"))
    if base == "Device":
        return v.pick(("cpu", ember.device("cpu"), "cuda", "meta", 0))
    if base == "Layout":
        return v.pick((ember.strided, None, "strided"))
    if base == "MemoryFormat":
        return v.pick((ember.contiguous_format, ember.preserve_format, ember.channels_last))
    return v.value()


def call(v: Values, binding=None):
    """One call of binding (or of a binding the input picks); True when it returned."""
    binding = binding or v.pick(BINDINGS)
    overload = v.pick(binding.overloads)
    schema_args = list(overload.op.schema.arguments)
    self_tensor = v.tensor(3)
    if binding.kind == "method":
        if not schema_args:
            return
        schema_args = schema_args[1:]  # self
        target = getattr(self_tensor, binding.name, None)
    else:
        target = getattr(ember._C, binding.name, None)
    if target is None:
        raise AssertionError(f"declared {binding.kind} {binding.name} is missing from ember")

    args, kwargs = [], {}
    positional = True
    for a in schema_args:
        if a.default is not None and v.fdp.ConsumeIntInRange(0, 2) == 0:
            positional = False  # skip it: later ones must go by keyword
            continue
        value = typed(v, a, self_tensor)
        if isinstance(value, int) and not isinstance(value, bool) and MAX_INT_ARG < value < 2**40:
            value = MAX_INT_ARG
        if a.type.varargs and isinstance(value, list) and positional and not a.kwonly and v.bool():
            args.extend(value)  # x.view(2, 3) as well as x.view((2, 3))
            positional = False
            continue
        if positional and not a.kwonly and v.fdp.ConsumeIntInRange(0, 3):
            args.append(value)
        else:
            positional = False
            kwargs[a.name] = value
    if overload.out and v.bool():
        kwargs["out"] = v.tensor(3) if v.bool() else self_tensor
    hostility = v.small(0, 9)
    if hostility == 0 and args:
        args.pop(v.small(0, len(args) - 1))
    elif hostility == 1:
        args.append(v.value())
    elif hostility == 2:
        kwargs[v.pick(("bogus", "self", "input", "other", "dim", "out", "dtype", ""))] = v.value()
    elif hostility == 3 and schema_args:
        kwargs[v.pick(schema_args).name] = v.value()  # maybe given twice
    return attempt(target, *args, **kwargs)[0]


def test_one_input(data: bytes):
    call(Values(data))


if __name__ == "__main__":
    _common.main(test_one_input)
