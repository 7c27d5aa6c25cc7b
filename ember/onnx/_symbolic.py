"""From a trace (ember/onnx/_tracer.py) to ONNX nodes: one builder per op name, each
emitting the nodes of the op's ONNX form with onnx.helper.

Shapes and the dynamic axes: the model is traced once at the example's sizes and once
more per dynamic axis name with that axis one larger. An integer that a builder turns
into a shape (a reshape's sizes, an expand's, a slice's bounds) and that differs
between the traces is emitted as a computation on the runtime size of that axis
(`a * size + b`, read with Shape from the input that has the axis); any other argument
that differs is refused, as is a constant whose shape differs (a tensor made inside
forward with the batch size baked in)."""
from __future__ import annotations

import math

import numpy as np

from .. import _C
from .._tensor import Tensor
from ._tracer import ExportError, Record

DTYPES = {  # ember dtype name -> onnx.TensorProto enum name
    "float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16", "bfloat16": "BFLOAT16", "int64": "INT64",
    "int32": "INT32", "int16": "INT16", "int8": "INT8", "uint8": "UINT8", "bool": "BOOL",
}


def onnx_dtype(dtype):
    import onnx

    return getattr(onnx.TensorProto, DTYPES[str(dtype).split(".")[-1]])


def to_numpy(t: Tensor) -> np.ndarray:
    return t.detach().contiguous().numpy().copy()


class Symbol:
    """A dynamic axis: its name, where its runtime size is read, its size at export."""

    def __init__(self, name, input_name, axis, size):
        self.name, self.input_name, self.axis, self.size = name, input_name, axis, size
        self.value = None  # the node output holding [size] (int64, 1-D), made on first use


class Builder:
    def __init__(self, opset: int, records, alternates: dict, symbols: dict):
        import onnx
        from onnx import helper

        self.onnx, self.helper = onnx, helper
        self.opset = opset
        self.records = records
        self.alternates = alternates  # symbol name -> the records of its trace
        self.symbols = symbols        # symbol name -> Symbol
        self.nodes, self.initializers = [], []
        self.env: dict[int, str] = {}
        # values the mapping of their op does not give (a max pool's indices), with why:
        # an error only if the graph's outputs need them
        self.poisoned: dict[int, str] = {}
        self.param_arrays: dict[str, Tensor] = {}  # parameters and buffers: initializers on first use
        self.dtypes: dict[str, object] = {}
        self.counter = 0
        self.index = 0                # the record being built
        self.record: Record | None = None

    # ---- names, nodes, constants ----
    def fresh(self, hint: str) -> str:
        self.counter += 1
        return f"/{hint}_{self.counter}"

    def node(self, op_type, inputs, outputs=1, **attrs):
        outs = [self.fresh(op_type) for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs, name=outs[0] + "_node", **attrs))
        return outs[0] if len(outs) == 1 else outs

    def initializer(self, array: np.ndarray, name=None) -> str:
        name = name or self.fresh("const")
        self.initializers.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def materialize(self, name: str) -> None:
        t = self.param_arrays.pop(name, None)
        if t is not None:
            self.initializer(to_numpy(t), name)

    def ints(self, values) -> str:
        return self.initializer(np.asarray(values, dtype=np.int64))

    def scalar(self, value, dtype) -> str:
        """A 0-dim constant of an ember dtype."""
        return self.initializer(to_numpy(_C.tensor(value, dtype=dtype)))

    # ---- the record being built ----
    def op_name(self) -> str:
        return self.record.op.split(".")[0]

    def fail(self, what: str):
        raise ExportError(f"ONNX export: {self.op_name()}: {what}")

    def arg(self, name, dynamic=False):
        """A non-tensor argument, the same in every trace unless dynamic=True."""
        r = self.record
        i = r.names.index(name)
        value = r.args[i]
        if not dynamic:
            for sym, recs in self.alternates.items():
                if recs[self.index].args[i] != value:
                    self.fail(f"argument '{name}' changes with the dynamic axis '{sym}' ({value} vs "
                              f"{recs[self.index].args[i]}); it can be exported only with a fixed size")
        return value

    def tensor(self, name) -> Tensor:
        return self.record.args[self.record.names.index(name)]

    def value(self, t: Tensor, dtype=None) -> str:
        """The graph value of a tensor argument of the record being built, cast to dtype."""
        if t is None:
            return ""
        name = self.env.get(id(t))
        if id(t) in self.poisoned:
            raise _Poisoned(self.poisoned[id(t)])
        if name is None:
            const = self.record.constants.get(id(t))
            if const is None:
                raise ExportError(f"ONNX export: {self.op_name()} reads a value that the exporter could not "
                                  "produce (an output of an op it maps only in part)")
            array = to_numpy(const.to(dtype) if dtype is not None else const)
            alts = self._constant_shapes(t)
            if all(shape == tuple(t.shape) for shape in alts.values()):
                return self.initializer(array)
            # a constant sized by a dynamic axis: a fill (zeros(x.size(0), ...)) follows the
            # axis as ConstantOfShape; any other is refused
            flat = array.reshape(-1)
            if flat.size == 0 or not (flat == flat[0]).all():
                sym = next(s for s, shape in alts.items() if shape != tuple(t.shape))
                raise ExportError(f"ONNX export: {self.op_name()} reads a tensor made inside forward whose shape "
                                  f"{tuple(t.shape)} changes with the dynamic axis '{sym}'; make it from the input "
                                  "(e.g. with *_like ops) so that it can follow the axis")
            shape = self.shape_value(list(t.shape), {s: list(shape) for s, shape in alts.items()})
            value = self.onnx.numpy_helper.from_array(flat[:1])
            return self.node("ConstantOfShape", [shape], value=value)
        self.materialize(name)
        if dtype is not None and t.dtype != dtype:
            return self.node("Cast", [name], to=onnx_dtype(dtype))
        return name

    def _constant_shapes(self, t) -> dict:
        """The shape the constant t has in each alternate trace."""
        pos = self._position(t)
        shapes = {}
        for sym, recs in self.alternates.items():
            other = recs[self.index].args
            for k in pos:
                other = other[k]
            shapes[sym] = tuple(other.shape)
        return shapes

    def _position(self, t):
        for i, a in enumerate(self.record.args):
            if a is t:
                return (i,)
            if isinstance(a, (list, tuple)):
                for j, b in enumerate(a):
                    if b is t:
                        return (i, j)
        return ()

    def input(self, name, dtype=None) -> str:
        return self.value(self.tensor(name), dtype)

    def out(self, k=0) -> Tensor:
        return self.record.outputs[k]

    # ---- dynamic integers ----
    def _dim(self, base: int, alts: dict) -> object:
        """An int, or the name of a [value] node output, for one integer of the traces."""
        changed = {s: v for s, v in alts.items() if v != base}
        if not changed:
            return base
        if len(changed) > 1:
            self.fail(f"a size depends on several dynamic axes ({', '.join(changed)}), which the exporter cannot "
                      "express")
        (s, v), = changed.items()
        sym = self.symbols[s]
        a = v - base
        b = base - a * sym.size
        if sym.value is None:
            shape = self.node("Shape", [sym.input_name])
            sym.value = self.node("Slice", [shape, self.ints([sym.axis]), self.ints([sym.axis + 1]), self.ints([0])])
        out = sym.value
        if a != 1:
            out = self.node("Mul", [out, self.ints([a])])
        if b != 0:
            out = self.node("Add", [out, self.ints([b])])
        return out

    def shape_value(self, base, alts_list) -> str:
        """A 1-D int64 value from the integers of the base trace and each alternate's."""
        dims = [self._dim(v, {s: alt[i] for s, alt in alts_list.items()}) for i, v in enumerate(base)]
        if all(isinstance(d, int) for d in dims):
            return self.ints(dims)
        parts = [self.ints([d]) if isinstance(d, int) else d for d in dims]
        return self.node("Concat", parts, axis=0)

    def out_shape(self, k=0) -> str:
        """The shape of output k as a value that follows the dynamic axes."""
        base = list(self.out(k).shape)
        alts = {s: list(recs[self.index].outputs[k].shape) for s, recs in self.alternates.items()}
        return self.shape_value(base, alts)

    def int_arg(self, name) -> object:
        """An integer argument that may follow a dynamic axis: an int or a [value] name."""
        i = self.record.names.index(name)
        return self._dim(self.record.args[i], {s: recs[self.index].args[i] for s, recs in self.alternates.items()})

    def one(self, d) -> str:
        return self.ints([d]) if isinstance(d, int) else d

    # ---- version-dependent forms ----
    def reduce(self, op_type, x, axes, keepdims):
        """Reduce<op> over axes (None: all), axes as an input from opset 18 (ReduceSum: 13)."""
        attrs = {"keepdims": int(keepdims)}
        if axes is None:
            return self.node(op_type, [x], **attrs)
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.node(op_type, [x, self.ints(list(axes))], **attrs)
        return self.node(op_type, [x], axes=list(axes), **attrs)

    def unsqueeze(self, x, axes):
        return self.node("Unsqueeze", [x, self.ints(list(axes))])

    def squeeze(self, x, axes):
        return self.node("Squeeze", [x, self.ints(list(axes))])

    # ---- the driver ----
    def build(self):
        for self.index, self.record in enumerate(self.records):
            r = self.record
            if r.op.startswith("module:"):
                from ._modules import MODULES

                fn = MODULES.get(r.op[len("module:"):])
            else:
                fn = SYMBOLIC.get(r.op) or SYMBOLIC.get(r.op.split(".")[0])
            if fn is None:
                raise ExportError(f"ONNX export: the op '{r.op}' has no ONNX mapping in ember's exporter "
                                  f"(opset {self.opset})")
            for sym, recs in self.alternates.items():
                ranks = [o.dim() if o is not None else -1 for o in r.outputs]
                if [o.dim() if o is not None else -1 for o in recs[self.index].outputs] != ranks:
                    self.fail(f"its result has another rank when the dynamic axis '{sym}' changes (squeezing an "
                              "axis of example size 1?); export with an example size above 1")
            try:
                results = fn(self)
            except _Poisoned as e:
                for t in r.outputs:
                    if t is not None:
                        self.poisoned[id(t)] = e.args[0]
                continue
            if isinstance(results, str):
                results = [results]
            for t, name in zip(r.outputs, results):
                if t is not None:
                    self.env[id(t)] = name
                    self.poisoned.pop(id(t), None)
            for k, t in enumerate(r.outputs[len(results):], len(results)):  # outputs the mapping does not give
                if t is not None:
                    self.env.pop(id(t), None)
                    self.poisoned[id(t)] = f"ONNX export: output {k} of {r.op} is not exported"


class _Poisoned(Exception):
    """An op read a value that the exporter does not produce."""


SYMBOLIC: dict = {}


def symbolic(*names):
    def register(fn):
        for n in names:
            SYMBOLIC[n] = fn
        return fn
    return register


def _dim(d, ndim):
    return d + ndim if d < 0 else d


# ---- elementwise ----
_UNARY = {"neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "sin": "Sin", "cos": "Cos",
          "tan": "Tan", "reciprocal": "Reciprocal", "erf": "Erf", "floor": "Floor", "ceil": "Ceil", "sign": "Sign",
          "tanh": "Tanh", "sigmoid": "Sigmoid", "relu": "Relu", "logical_not": "Not", "round": "Round",
          "selu": "Selu", "softsign": "Softsign", "asin": "Asin", "acos": "Acos",
          "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh"}
for _name, _onnx_op in _UNARY.items():
    SYMBOLIC[_name] = lambda b, _op=_onnx_op: b.node(_op, [b.input("self", b.out().dtype)])


@symbolic("round.decimals")
def _round_decimals(b):
    """round(x * 10**d) / 10**d, as torch computes it (d < 0: round(x / 10**-d) * 10**-d)."""
    d = int(b.arg("decimals"))
    dt = b.out().dtype
    x = b.input("self", dt)
    if d == 0:
        return b.node("Round", [x])
    if not dt.is_floating_point:
        b.fail("round with decimals of an integer tensor is not mapped")
    scale = b.scalar(10.0 ** abs(d), dt)
    first, second = ("Mul", "Div") if d > 0 else ("Div", "Mul")
    return b.node(second, [b.node("Round", [b.node(first, [x, scale])]), scale])


@symbolic("rsqrt")
def _rsqrt(b):
    return b.node("Reciprocal", [b.node("Sqrt", [b.input("self")])])


@symbolic("square")
def _square(b):
    x = b.input("self", b.out().dtype)
    return b.node("Mul", [x, x])


@symbolic("log1p")
def _log1p(b):
    x = b.input("self", b.out().dtype)
    return b.node("Log", [b.node("Add", [x, b.scalar(1, b.out().dtype)])])


def _binary(onnx_op):
    def fn(b):
        dt = b.out().dtype
        first, second = b.record.names[:2]
        return b.node(onnx_op, [b.input(first, dt), b.input(second, dt)])
    return fn


for _name, _onnx_op in {"mul": "Mul", "maximum": "Max", "minimum": "Min", "pow": "Pow"}.items():
    SYMBOLIC[_name] = _binary(_onnx_op)


@symbolic("pow.Tensor_Scalar")
def _pow_scalar(b):
    dt = b.out().dtype
    return b.node("Pow", [b.input("self", dt), b.scalar(b.arg("exponent"), dt)])


@symbolic("add", "sub")
def _add(b):
    dt = b.out().dtype
    other = b.input("other", dt)
    alpha = b.arg("alpha") if "alpha" in b.record.names else 1
    if alpha != 1:
        other = b.node("Mul", [other, b.scalar(alpha, dt)])
    return b.node("Add" if b.op_name().startswith("add") else "Sub", [b.input("self", dt), other])


@symbolic("div")
def _div(b):
    dt = b.out().dtype
    mode = b.arg("rounding_mode") if "rounding_mode" in b.record.names else None
    q = b.node("Div", [b.input("self", dt), b.input("other", dt)])
    if mode is None:
        return q
    if not dt.is_floating_point:
        b.fail(f"integer division with rounding_mode='{mode}' is not mapped")
    if mode == "floor":
        return b.node("Floor", [q])
    return b.node("Where", [b.node("Less", [q, b.scalar(0, dt)]), b.node("Ceil", [q]), b.node("Floor", [q])])


@symbolic("floor_divide")
def _floor_divide(b):
    dt = b.out().dtype
    if not dt.is_floating_point:
        b.fail("integer floor division is not mapped")
    return b.node("Floor", [b.node("Div", [b.input("self", dt), b.input("other", dt)])])


def _compare(onnx_op, negate=False):
    def fn(b):
        dt = _C.result_type(b.tensor("self"), b.tensor("other"))
        out = b.node(onnx_op, [b.input("self", dt), b.input("other", dt)])
        return b.node("Not", [out]) if negate else out
    return fn


for _name, (_onnx_op, _neg) in {"eq": ("Equal", False), "ne": ("Equal", True), "lt": ("Less", False),
                                "le": ("LessOrEqual", False), "gt": ("Greater", False),
                                "ge": ("GreaterOrEqual", False)}.items():
    SYMBOLIC[_name] = _compare(_onnx_op, _neg)
for _name, _onnx_op in {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}.items():
    SYMBOLIC[_name] = lambda b, _op=_onnx_op: b.node(_op, [b.input("self", _bool()), b.input("other", _bool())])


def _bool():
    import ember

    return ember.bool


@symbolic("where.self", "where")
def _where(b):
    dt = b.out().dtype
    return b.node("Where", [b.input("condition", _bool()), b.input("self", dt), b.input("other", dt)])


@symbolic("masked_fill.Scalar")
def _masked_fill(b):
    dt = b.out().dtype
    return b.node("Where", [b.input("mask", _bool()), b.scalar(b.arg("value"), dt), b.input("self", dt)])


@symbolic("masked_fill.Tensor")
def _masked_fill_tensor(b):
    dt = b.out().dtype
    return b.node("Where", [b.input("mask", _bool()), b.input("value", dt), b.input("self", dt)])


@symbolic("clamp", "clip")
def _clamp(b):
    dt = b.out().dtype
    lo, hi = b.arg("min"), b.arg("max")
    return b.node("Clip", [b.input("self", dt), b.scalar(lo, dt) if lo is not None else "",
                           b.scalar(hi, dt) if hi is not None else ""])


@symbolic("clamp.Tensor")
def _clamp_tensor(b):
    dt = b.out().dtype
    x = b.input("self", dt)
    if b.tensor("min") is not None:
        x = b.node("Max", [x, b.input("min", dt)])
    if b.tensor("max") is not None:
        x = b.node("Min", [x, b.input("max", dt)])
    return x


@symbolic("to", "type_as", "_to_copy")
def _to(b):
    x = b.input("self")
    return b.node("Cast", [x], to=onnx_dtype(b.out().dtype)) if b.tensor("self").dtype != b.out().dtype \
        else b.node("Identity", [x])


@symbolic("contiguous", "clone", "detach", "alias", "positive")
def _identity(b):
    return b.node("Identity", [b.input("self")])


@symbolic("zeros_like", "ones_like", "full_like")
def _fill_like(b):
    import onnx

    value = {"zeros_like": 0, "ones_like": 1}.get(b.op_name())
    if value is None:
        value = b.arg("fill_value")
    dt = b.out().dtype
    tensor = onnx.numpy_helper.from_array(to_numpy(_C.tensor(value, dtype=dt)).reshape(1))
    return b.node("ConstantOfShape", [b.node("Shape", [b.input("self")])], value=tensor)


# ---- activations ----
@symbolic("gelu")
def _gelu(b):
    x = b.input("self")
    dt = b.out().dtype
    if b.arg("approximate") == "tanh":
        cube = b.node("Mul", [b.node("Mul", [x, x]), x])
        inner = b.node("Mul", [b.node("Add", [x, b.node("Mul", [cube, b.scalar(0.044715, dt)])]),
                               b.scalar(math.sqrt(2 / math.pi), dt)])
        gate = b.node("Add", [b.node("Tanh", [inner]), b.scalar(1, dt)])
    else:
        gate = b.node("Add", [b.node("Erf", [b.node("Div", [x, b.scalar(math.sqrt(2), dt)])]), b.scalar(1, dt)])
    return b.node("Mul", [b.node("Mul", [x, gate]), b.scalar(0.5, dt)])


@symbolic("silu")
def _silu(b):
    x = b.input("self")
    return b.node("Mul", [x, b.node("Sigmoid", [x])])


@symbolic("mish")
def _mish(b):
    x = b.input("self")
    return b.node("Mul", [x, b.node("Tanh", [b.node("Softplus", [x])])])


@symbolic("leaky_relu")
def _leaky_relu(b):
    return b.node("LeakyRelu", [b.input("self")], alpha=float(b.arg("negative_slope")))


@symbolic("elu")
def _elu(b):
    if b.arg("scale") != 1 or b.arg("input_scale") != 1:
        b.fail("elu with scale or input_scale other than 1 is not mapped")
    return b.node("Elu", [b.input("self")], alpha=float(b.arg("alpha")))


@symbolic("celu")
def _celu(b):
    return b.node("Celu", [b.input("self")], alpha=float(b.arg("alpha")))


@symbolic("softplus")
def _softplus(b):
    beta = float(b.arg("beta"))
    x = b.input("self")
    if beta == 1:
        return b.node("Softplus", [x])
    dt = b.out().dtype
    return b.node("Div", [b.node("Softplus", [b.node("Mul", [x, b.scalar(beta, dt)])]), b.scalar(beta, dt)])


@symbolic("hardtanh")
def _hardtanh(b):
    dt = b.out().dtype
    return b.node("Clip", [b.input("self"), b.scalar(b.arg("min_val"), dt), b.scalar(b.arg("max_val"), dt)])


@symbolic("hardswish")
def _hardswish(b):
    x = b.input("self")
    if b.opset >= 14:
        return b.node("HardSwish", [x])
    return b.node("Mul", [x, b.node("HardSigmoid", [x], alpha=1 / 6, beta=0.5)])


@symbolic("hardsigmoid")
def _hardsigmoid(b):
    return b.node("HardSigmoid", [b.input("self")], alpha=1 / 6, beta=0.5)


@symbolic("log_sigmoid")
def _log_sigmoid(b):
    return b.node("Neg", [b.node("Softplus", [b.node("Neg", [b.input("self")])])])


@symbolic("softmax", "log_softmax", "_softmax", "_log_softmax")
def _softmax(b):
    dt = b.out().dtype
    x = b.input("self", dt)
    op = "LogSoftmax" if "log" in b.op_name() else "Softmax"
    if b.tensor("self").dim() == 0:  # ONNX wants an axis: softmax over a 1-element vector
        return b.node("Reshape", [b.node(op, [b.node("Reshape", [x, b.ints([1])])], axis=0), b.ints([])])
    return b.node(op, [x], axis=int(b.arg("dim")))


# ---- products ----
@symbolic("mm", "bmm", "matmul")
def _matmul(b):
    names = b.record.names
    return b.node("MatMul", [b.input(names[0]), b.input(names[1])])


@symbolic("addmm")
def _addmm(b):
    return b.node("Gemm", [b.input("mat1"), b.input("mat2"), b.input("self")], alpha=float(b.arg("alpha")),
                  beta=float(b.arg("beta")))


@symbolic("baddbmm", "addbmm")
def _baddbmm(b):
    dt = b.out().dtype
    prod = b.node("MatMul", [b.input("batch1"), b.input("batch2")])
    if b.op_name() == "addbmm":
        prod = b.reduce("ReduceSum", prod, [0], False)
    return b.node("Add", [b.node("Mul", [prod, b.scalar(b.arg("alpha"), dt)]),
                          b.node("Mul", [b.input("self"), b.scalar(b.arg("beta"), dt)])])


@symbolic("linear")
def _linear(b):
    w = b.node("Transpose", [b.input("weight")], perm=[1, 0])
    y = b.node("MatMul", [b.input("input"), w])
    return b.node("Add", [y, b.input("bias")]) if b.tensor("bias") is not None else y


# ---- reductions ----
def _dims(b, name="dim"):
    """A reduction's dims: None for all."""
    if name not in b.record.names:
        return None
    d = b.arg(name)
    ndim = b.tensor("self").dim()
    if d is None or (isinstance(d, tuple) and not d) or ndim == 0:  # a 0-dim input takes dim 0 or -1
        return None
    return [_dim(x, ndim) for x in (d if isinstance(d, (tuple, list)) else (d,))]


def _keep(b):
    return bool(b.arg("keepdim")) if "keepdim" in b.record.names else False


@symbolic("sum", "mean", "amax", "amin", "prod", "logsumexp")
def _reduce(b):
    op = {"sum": "ReduceSum", "mean": "ReduceMean", "amax": "ReduceMax", "amin": "ReduceMin", "prod": "ReduceProd",
          "logsumexp": "ReduceLogSumExp"}[b.op_name()]
    dt = b.out().dtype
    x = b.input("self", dt)
    return b.reduce(op, x, _dims(b), _keep(b))


@symbolic("max", "min")
def _max_all(b):
    return b.reduce("ReduceMax" if b.op_name() == "max" else "ReduceMin", b.input("self"), None, False)


@symbolic("max.dim", "min.dim")
def _max_dim(b):
    x = b.input("self")
    d, keep = _dim(b.arg("dim"), b.tensor("self").dim()), int(_keep(b))
    values = b.reduce("ReduceMax" if b.op_name() == "max" else "ReduceMin", x, [d], keep)
    indices = b.node("ArgMax" if b.op_name() == "max" else "ArgMin", [x], axis=d, keepdims=keep,
                     select_last_index=0)
    return [values, indices]


@symbolic("max.other", "min.other")
def _max_other(b):
    return _binary("Max" if b.op_name() == "max" else "Min")(b)


@symbolic("argmax", "argmin")
def _argmax(b):
    x = b.input("self")
    d = b.arg("dim")
    op = "ArgMax" if b.op_name() == "argmax" else "ArgMin"
    if d is None:
        return b.node(op, [b.node("Reshape", [x, b.ints([-1])])], axis=0, keepdims=0)
    return b.node(op, [x], axis=_dim(d, b.tensor("self").dim()), keepdims=int(_keep(b)))


@symbolic("var.correction", "std.correction")
def _var(b):
    dt = b.out().dtype
    x = b.input("self", dt)
    axes = _dims(b) or list(range(b.tensor("self").dim()))
    correction = b.arg("correction")
    correction = 1 if correction is None else correction
    n = math.prod(b.tensor("self").shape[a] for a in axes)
    for s, recs in b.alternates.items():
        if math.prod(recs[b.index].args[0].shape[a] for a in axes) != n:
            b.fail(f"a variance over the dynamic axis '{s}' is not mapped")
    centered = b.node("Sub", [x, b.reduce("ReduceMean", x, axes, True)])
    ss = b.reduce("ReduceSum", b.node("Mul", [centered, centered]), axes, _keep(b))
    var = b.node("Div", [ss, b.scalar(max(n - correction, 0), dt)])
    return b.node("Sqrt", [var]) if b.op_name() == "std" else var


# ---- shapes and views ----
@symbolic("reshape", "view", "_unsafe_view", "flatten", "unflatten", "view_as", "reshape_as", "flatten.using_ints")
def _reshape(b):
    if b.out().dtype != b.tensor("self").dtype:  # view.dtype: a reinterpretation of the bytes
        b.fail(f"viewing a {b.tensor('self').dtype} tensor as {b.out().dtype} (a bitcast) is not mapped")
    if 0 not in b.out().shape:
        return b.node("Reshape", [b.input("self"), b.out_shape()])
    if b.opset < 14:  # a 0 in Reshape's shape means "copy that dim" unless allowzero (opset 14)
        b.fail("a reshape to an empty shape needs opset 14 or later")
    return b.node("Reshape", [b.input("self"), b.out_shape()], allowzero=1)


@symbolic("squeeze", "squeeze.dim", "squeeze.dims")
def _squeeze(b):
    t = b.tensor("self")
    dims = _dims(b) if "dim" in b.record.names else None
    dims = [d for d in (dims if dims is not None else range(t.dim())) if t.dim() and t.shape[d] == 1]
    if not dims:
        return b.node("Identity", [b.input("self")])
    return b.squeeze(b.input("self"), dims)


@symbolic("unsqueeze")
def _unsqueeze(b):
    return b.unsqueeze(b.input("self"), [_dim(b.arg("dim"), b.tensor("self").dim() + 1)])


@symbolic("t")
def _t(b):
    if b.tensor("self").dim() < 2:
        return b.node("Identity", [b.input("self")])
    return b.node("Transpose", [b.input("self")], perm=[1, 0])


@symbolic("transpose", "swapaxes", "swapdims")
def _transpose(b):
    n = b.tensor("self").dim()
    if n == 0:
        return b.node("Identity", [b.input("self")])
    names = b.record.names
    d0, d1 = _dim(b.arg(names[1]), n), _dim(b.arg(names[2]), n)
    perm = list(range(n))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.node("Transpose", [b.input("self")], perm=perm)


@symbolic("permute")
def _permute(b):
    n = b.tensor("self").dim()
    return b.node("Transpose", [b.input("self")], perm=[_dim(d, n) for d in b.arg("dims")])


@symbolic("expand", "expand_as")
def _expand(b):
    return b.node("Expand", [b.input("self"), b.out_shape()])


@symbolic("repeat")
def _repeat(b):
    x = b.input("self")
    reps = list(b.arg("repeats"))
    n = b.tensor("self").dim()
    if len(reps) > n:
        x = b.node("Reshape", [x, b.ints([1] * (len(reps) - n) + list(b.tensor("self").shape))]) if n else \
            b.node("Reshape", [x, b.ints([1] * len(reps))])
    return b.node("Tile", [x, b.ints(reps)])


@symbolic("select")
def _select(b):
    t = b.tensor("self")
    d = _dim(b.arg("dim"), t.dim())
    return b.node("Gather", [b.input("self"), b.initializer(np.asarray(b.arg("index"), dtype=np.int64))], axis=d)


@symbolic("slice")
def _slice(b):
    t = b.tensor("self")
    d = _dim(b.arg("dim"), t.dim())
    start, end = b.int_arg("start"), b.int_arg("end")
    if isinstance(end, int):
        end = min(end, 2 ** 62)
    return b.node("Slice", [b.input("self"), b.one(start), b.one(end), b.ints([d]), b.ints([b.arg("step")])])


@symbolic("narrow")
def _narrow(b):
    t = b.tensor("self")
    d = _dim(b.arg("dim"), t.dim())
    start, length = b.arg("start"), b.arg("length")
    if isinstance(start, Tensor):
        b.fail("a tensor start is not mapped")
    start = start + t.shape[d] if start < 0 else start
    return b.node("Slice", [b.input("self"), b.ints([start]), b.ints([start + length]), b.ints([d])])


def _split_outputs(b, d):
    sizes = [o.shape[d] for o in b.record.outputs]
    for s, recs in b.alternates.items():
        if [o.shape[d] for o in recs[b.index].outputs] != sizes:
            b.fail(f"a split along the dynamic axis '{s}' is not mapped")
    return sizes


@symbolic("chunk", "split", "split.Tensor", "split_with_sizes", "tensor_split", "unsafe_split")
def _split(b):
    t = b.tensor("self")
    d = _dim(b.arg("dim"), t.dim())
    sizes = _split_outputs(b, d)
    if len(sizes) == 1:
        return [b.node("Identity", [b.input("self")])]
    return b.node("Split", [b.input("self"), b.ints(sizes)], outputs=len(sizes), axis=d)


@symbolic("unbind")
def _unbind(b):
    t = b.tensor("self")
    d = _dim(b.arg("dim"), t.dim())
    n = t.shape[d]
    parts = b.node("Split", [b.input("self"), b.ints([1] * n)], outputs=n, axis=d) if n > 1 else [b.input("self")]
    return [b.squeeze(p, [d]) for p in ([parts] if isinstance(parts, str) else parts)]


@symbolic("cat", "concat", "concatenate")
def _cat(b):
    dt = b.out().dtype
    ts = [t for t in b.tensor("tensors") if not (t.dim() == 1 and t.shape[0] == 0)]  # torch's legacy empties
    return b.node("Concat", [b.value(t, dt) for t in ts], axis=_dim(b.arg("dim"), b.out().dim()))


@symbolic("stack")
def _stack(b):
    dt = b.out().dtype
    d = _dim(b.arg("dim"), b.out().dim())
    return b.node("Concat", [b.unsqueeze(b.value(t, dt), [d]) for t in b.tensor("tensors")], axis=d)


@symbolic("index.Tensor")
def _index(b):
    indices = b.tensor("indices")
    used = [(k, t) for k, t in enumerate(indices) if t is not None]
    if len(used) != 1 or used[0][1].dtype == _bool() or used[0][1].dtype.is_floating_point:
        b.fail("indexing with more than one index tensor, or with a mask, is not mapped")
    k, idx = used[0]
    return b.node("Gather", [b.input("self"), b.value(idx)], axis=k)


@symbolic("index_select")
def _index_select(b):
    return b.node("Gather", [b.input("self"), b.input("index")], axis=_dim(b.arg("dim"), b.tensor("self").dim()))


@symbolic("gather")
def _gather(b):
    return b.node("GatherElements", [b.input("self"), b.input("index")],
                  axis=_dim(b.arg("dim"), b.tensor("self").dim()))


@symbolic("triu", "tril")
def _trilu(b):
    if b.opset < 14:
        b.fail("needs opset 14 or later (Trilu)")
    return b.node("Trilu", [b.input("self"), b.initializer(np.asarray(b.arg("diagonal"), dtype=np.int64))],
                  upper=int(b.op_name() == "triu"))


# ---- nn ----
@symbolic("embedding")
def _embedding(b):
    return b.node("Gather", [b.input("weight"), b.input("indices")], axis=0)


def _pairs(v, n):
    v = list(v) if isinstance(v, (tuple, list)) else [v]
    return v * n if len(v) == 1 else v


@symbolic("convolution", "_convolution")
def _convolution(b):
    x, w = b.tensor("input"), b.tensor("weight")
    n = w.dim() - 2
    padding = b.arg("padding")
    if isinstance(padding, str):
        b.fail(f"padding='{padding}' is not mapped")
    attrs = dict(kernel_shape=list(w.shape[2:]), strides=_pairs(b.arg("stride"), n),
                 dilations=_pairs(b.arg("dilation"), n), group=int(b.arg("groups")))
    pads = _pairs(padding, n)
    inputs = [b.input("input"), b.input("weight")] + ([b.input("bias")] if b.tensor("bias") is not None else [])
    if x.dim() == n + 1:
        b.fail("unbatched input is not mapped")
    if b.arg("transposed"):
        return b.node("ConvTranspose", inputs, pads=pads + pads, output_padding=_pairs(b.arg("output_padding"), n),
                      **attrs)
    return b.node("Conv", inputs, pads=pads + pads, **attrs)


def _pool_attrs(b, n):
    kernel = _pairs(b.arg("kernel_size"), n)
    stride = b.arg("stride")
    stride = _pairs(stride, n) if stride not in (None, (), []) else kernel
    pads = _pairs(b.arg("padding"), n)
    return dict(kernel_shape=kernel, strides=stride, pads=pads + pads, ceil_mode=int(b.arg("ceil_mode")))


@symbolic("max_pool2d_with_indices", "max_pool2d", "max_pool1d", "max_pool3d", "max_pool3d_with_indices",
          "max_pool1d_with_indices")
def _max_pool(b):
    x = b.tensor("self")
    n = 3 if "3d" in b.op_name() else 2 if "2d" in b.op_name() else 1
    if x.dim() == n + 1:
        b.fail("unbatched input is not mapped")
    attrs = _pool_attrs(b, n)
    return b.node("MaxPool", [b.input("self")], dilations=_pairs(b.arg("dilation"), n), **attrs)


@symbolic("avg_pool2d", "avg_pool1d", "avg_pool3d")
def _avg_pool(b):
    x = b.tensor("self")
    n = 3 if "3d" in b.op_name() else 2 if "2d" in b.op_name() else 1
    if x.dim() == n + 1:
        b.fail("unbatched input is not mapped")
    if "divisor_override" in b.record.names and b.arg("divisor_override") is not None:
        b.fail("divisor_override is not mapped")
    return b.node("AveragePool", [b.input("self")], count_include_pad=int(b.arg("count_include_pad")),
                  **_pool_attrs(b, n))


@symbolic("adaptive_avg_pool2d", "adaptive_avg_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d",
          "adaptive_avg_pool3d", "adaptive_max_pool3d", "_adaptive_avg_pool2d")
def _adaptive_pool(b):
    x = b.tensor("self")
    out = list(b.out().shape[2:])
    inp = list(x.shape[2:])
    is_max = "max" in b.op_name()
    if all(o == 1 for o in out):
        return b.node("GlobalMaxPool" if is_max else "GlobalAveragePool", [b.input("self")])
    if any(i % o for i, o in zip(inp, out)):
        b.fail("an output size that does not divide the input size is not mapped")
    k = [i // o for i, o in zip(inp, out)]
    return b.node("MaxPool" if is_max else "AveragePool", [b.input("self")], kernel_shape=k, strides=k)


@symbolic("native_batch_norm", "_native_batch_norm_legit_no_training", "batch_norm")
def _batch_norm(b):
    x = b.tensor("input")
    c = x.shape[1]
    dt = x.dtype
    if b.arg("training") and b.tensor("running_mean") is None:
        b.fail("batch statistics (training=True without running stats) are not mapped")
    if b.arg("training"):
        b.fail("training mode is not mapped: export the model in eval mode")

    def param(name, fill):
        t = b.tensor(name)
        return b.value(t, dt) if t is not None else b.initializer(np.full(c, fill, dtype=to_numpy(x[:0]).dtype))
    return b.node("BatchNormalization", [b.input("input"), param("weight", 1), param("bias", 0),
                                         param("running_mean", 0), param("running_var", 1)],
                  epsilon=float(b.arg("eps")))


@symbolic("native_layer_norm", "layer_norm")
def _layer_norm(b):
    x = b.tensor("input")
    dt = x.dtype
    k = len(b.arg("normalized_shape"))
    shape = list(x.shape[x.dim() - k:])
    eps = float(b.arg("eps"))
    np_dt = to_numpy(x[:0]).dtype

    def param(name, fill):
        t = b.tensor(name)
        return b.value(t, dt) if t is not None else b.initializer(np.full(shape, fill, dtype=np_dt))
    if b.opset >= 17:
        return b.node("LayerNormalization", [b.input("input"), param("weight", 1), param("bias", 0)], axis=-k,
                      epsilon=eps)
    axes = list(range(x.dim() - k, x.dim()))
    xi = b.input("input")
    centered = b.node("Sub", [xi, b.reduce("ReduceMean", xi, axes, True)])
    var = b.reduce("ReduceMean", b.node("Mul", [centered, centered]), axes, True)
    normed = b.node("Div", [centered, b.node("Sqrt", [b.node("Add", [var, b.scalar(eps, dt)])])])
    return b.node("Add", [b.node("Mul", [normed, param("weight", 1)]), param("bias", 0)])


@symbolic("native_group_norm", "group_norm")
def _group_norm(b):
    x = b.tensor("input")
    dt = x.dtype
    g = int(b.arg("group") if "group" in b.record.names else b.arg("num_groups"))
    c = x.shape[1]
    np_dt = to_numpy(x[:0]).dtype
    xi = b.input("input")
    grouped = b.node("Reshape", [xi, b.ints([0, g, -1])])  # (N, C, *) -> (N, G, C/G * prod(*))
    normed = b.node("InstanceNormalization", [grouped, b.initializer(np.ones(g, np_dt)),
                                              b.initializer(np.zeros(g, np_dt))], epsilon=float(b.arg("eps")))
    y = b.node("Reshape", [normed, b.node("Shape", [xi])])
    bshape = [c] + [1] * (x.dim() - 2)  # the affine parameters broadcast over (N, C, *)
    if b.tensor("weight") is not None:
        y = b.node("Mul", [y, b.node("Reshape", [b.input("weight", dt), b.ints(bshape)])])
    if b.tensor("bias") is not None:
        y = b.node("Add", [y, b.node("Reshape", [b.input("bias", dt), b.ints(bshape)])])
    return y


@symbolic("dropout", "feature_dropout", "alpha_dropout", "native_dropout")
def _dropout(b):
    if b.arg("train"):
        b.fail("dropout in training mode is not mapped: export the model in eval mode")
    return b.node("Identity", [b.input("input")])


@symbolic("copy_", "copy")
def _copy(b):
    """self.copy_(src): src cast to self's dtype and broadcast to its shape."""
    src = b.value(b.tensor("src"), b.out().dtype)
    return b.node("Expand", [src, b.out_shape()])


@symbolic("new_zeros", "new_ones", "new_full", "new_empty")
def _new_filled(b):
    import onnx

    value = {"new_zeros": 0, "new_ones": 1, "new_empty": 0}.get(b.op_name())
    if value is None:
        value = b.arg("fill_value")
    tensor = onnx.numpy_helper.from_array(to_numpy(_C.tensor(value, dtype=b.out().dtype)).reshape(1))
    return b.node("ConstantOfShape", [b.out_shape()], value=tensor)
