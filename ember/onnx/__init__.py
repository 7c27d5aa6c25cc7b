"""ONNX export: `ember.onnx.export(model, args, f, ...)` traces one forward call of an
nn.Module (or a function) and writes it as an ONNX model, with the `onnx` package (an
optional dependency: `pip install ember[onnx]`). This module imports without it.

>>> import ember, io
>>> buf = io.BytesIO()
>>> ember.onnx.export(ember.nn.Linear(3, 2), (ember.randn(4, 3),), buf,
...                   input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}})
"""
from __future__ import annotations

import contextlib
import enum
import os
import warnings

from ._tracer import ExportError

__all__ = ["export", "is_in_onnx_export", "ExportError", "OnnxExporterError", "TrainingMode",
           "OperatorExportTypes", "DEFAULT_OPSET", "SUPPORTED_OPSETS"]

DEFAULT_OPSET = 17
SUPPORTED_OPSETS = range(13, 21)
OnnxExporterError = ExportError  # torch.onnx's name for the exporter's errors

_exporting = False


class TrainingMode(enum.IntEnum):
    """The mode the model is exported in: EVAL (the default) or PRESERVE (as it is).
    TRAINING is refused: dropout and batch statistics have no inference form."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """Only ONNX: ember exports standard ONNX operators and nothing else."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def is_in_onnx_export() -> bool:
    """Whether an export is tracing a model right now (in this process)."""
    return _exporting


def _require_onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("ember.onnx.export needs the 'onnx' package: pip install onnx "
                          "(or pip install ember[onnx])") from e
    return onnx


def _flat(x):
    from .._tensor import Tensor

    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _flat(item)]
    if isinstance(x, dict):
        return [t for item in x.values() for t in _flat(item)]
    return []


def _dynamic_axes(spec, names):
    """{value name: {axis: dim name}} from torch's forms: a dict, or a list of axes."""
    out = {}
    for name, axes in (spec or {}).items():
        if name not in names:  # torch warns and goes on
            warnings.warn(f"Provided key {name} for dynamic axes is not a valid input/output name")
            continue
        if isinstance(axes, dict):
            out[name] = {int(a): str(d) for a, d in axes.items()}
        else:
            out[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
    return out


def _grow(t, axis):
    """t with one more entry along axis (its first, repeated): the trace for a dynamic axis."""
    from .. import _C

    if t.shape[axis] == 0:
        raise ValueError("export(): a dynamic axis needs an example size of at least 1")
    return _C.cat([t, t.narrow(axis, 0, 1)], axis)


def _replace(x, mapping):
    from .._tensor import Tensor

    if isinstance(x, Tensor):
        return mapping.get(id(x), x)
    if isinstance(x, tuple):
        return tuple(_replace(i, mapping) for i in x)
    if isinstance(x, list):
        return [_replace(i, mapping) for i in x]
    if isinstance(x, dict):
        return {k: _replace(v, mapping) for k, v in x.items()}
    return x


_IGNORED = {"verbose", "do_constant_folding", "keep_initializers_as_inputs", "custom_opsets",
            "export_modules_as_functions", "autograd_inlining", "dynamo", "external_data", "report", "optimize",
            "verify", "profile", "dump_exported_program", "artifacts_dir", "fallback", "dynamic_shapes"}


def export(model, args=(), f=None, *, kwargs=None, export_params: bool = True, input_names=None, output_names=None,
           opset_version=None, dynamic_axes=None, training=TrainingMode.EVAL,
           operator_export_type=OperatorExportTypes.ONNX, **options):
    """Traces model(*args, **kwargs) once and writes the ONNX model to f (a path or a
    binary file object; with f=None the ModelProto is returned). input_names and
    output_names name the graph's inputs and outputs (the tensors of args and of the
    result, flattened, in order); dynamic_axes ({name: {axis: "batch"}} or {name: [axis]})
    makes those axes symbolic; opset_version is 13 to 20 (default 17). Weights become
    initializers, tensors made inside forward that do not depend on the inputs become
    constants; an op the exporter cannot map raises ExportError naming it. LSTM/GRU/RNN
    layers become ONNX's LSTM/GRU/RNN nodes.

    >>> import ember, io
    >>> m = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU())
    >>> ember.onnx.export(m, ember.randn(2, 4), io.BytesIO())
    """
    global _exporting
    unknown = set(options) - _IGNORED
    if unknown:
        raise TypeError(f"export() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    onnx = _require_onnx()
    if not export_params:
        raise ValueError("export(): export_params=False is not supported")
    from .. import nn, no_grad
    from .._tensor import Tensor
    from . import _tracer
    from ._symbolic import Builder, Symbol, onnx_dtype, to_numpy

    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset not in SUPPORTED_OPSETS:
        raise ValueError(f"export(): opset_version {opset} is not supported: ember exports opsets "
                         f"{SUPPORTED_OPSETS.start} to {SUPPORTED_OPSETS.stop - 1}")
    if operator_export_type != OperatorExportTypes.ONNX:
        raise ValueError("export(): only OperatorExportTypes.ONNX is supported")
    if training == TrainingMode.TRAINING:
        raise ValueError("export(): TrainingMode.TRAINING is not supported: export in EVAL mode")
    if not isinstance(args, tuple):  # a tensor, or a list that is forward's one argument (as torch)
        args = (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]

    inputs = _flat(args) + _flat(kwargs)
    in_names = list(input_names or [])
    if len(in_names) > len(inputs):
        raise ValueError(f"export(): {len(in_names)} input_names for {len(inputs)} input tensors")
    in_names += [f"input_{i}" for i in range(len(in_names), len(inputs))]

    is_module = isinstance(model, nn.Module)
    params = {}
    whole = []
    if is_module:
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            params.setdefault(id(t), (name, t))
        whole = [m for m in model.modules() if type(m).__name__ in _tracer.WHOLE_MODULES
                 and isinstance(m, nn.RNNBase)]
    sources = inputs + [t for _, t in params.values()]

    def trace(a, kw):
        with no_grad():
            return _tracer.run(model, a, kw, sources_for(a, kw), whole)

    def sources_for(a, kw):
        return _flat(a) + _flat(kw) + [t for _, t in params.values()]

    was_training = model.training if is_module else False
    was_exporting, _exporting = _exporting, True  # an export refused as nested keeps the outer one's flag
    try:
        if is_module and training == TrainingMode.EVAL:
            model.train(False)
        records, out, _ = trace(args, kwargs)
        outputs = _flat(out)
        out_names = list(output_names or [])
        if len(out_names) > len(outputs):
            raise ValueError(f"export(): {len(out_names)} output_names for {len(outputs)} outputs")
        out_names += [f"output_{i}" for i in range(len(out_names), len(outputs))]
        axes = _dynamic_axes(dynamic_axes, set(in_names) | set(out_names))

        symbols, alternates, alt_outputs = {}, {}, {}
        for i, name in enumerate(in_names):
            for axis, sym in axes.get(name, {}).items():
                axis = axis + inputs[i].dim() if axis < 0 else axis
                symbols.setdefault(sym, Symbol(sym, name, axis, inputs[i].shape[axis]))
        for sym in symbols:
            grown = {}
            for i, name in enumerate(in_names):
                for axis, s in axes.get(name, {}).items():
                    if s == sym:
                        grown[id(inputs[i])] = _grow(grown.get(id(inputs[i]), inputs[i]), axis)
            alt_records, alt_out, _ = trace(_replace(args, grown), _replace(kwargs, grown))
            if [r.op for r in alt_records] != [r.op for r in records]:
                raise ExportError(f"ONNX export: the traced ops change with the size of the dynamic axis '{sym}' "
                                  "(control flow on sizes); it cannot be exported as dynamic")
            alternates[sym] = alt_records
            alt_outputs[sym] = _flat(alt_out)
    finally:
        _exporting = was_exporting
        if is_module:
            model.train(was_training)

    b = Builder(opset, records, alternates, symbols)
    for t, name in zip(inputs, in_names):
        b.env.setdefault(id(t), name)
    for pid, (name, t) in params.items():
        b.env.setdefault(pid, name)
        b.param_arrays[name] = t
    b.build()

    helper = onnx.helper

    def value_info(name, t, others):
        dims = []
        for axis, n in enumerate(t.shape):
            dim_name = axes.get(name, {}).get(axis)
            if dim_name is None and any(o.shape[axis] != n for o in others):
                dim_name = f"{name}_dim_{axis}"
            dims.append(dim_name if dim_name is not None else int(n))
        return helper.make_tensor_value_info(name, onnx_dtype(t.dtype), dims)

    graph_inputs = [value_info(n, t, []) for n, t in zip(in_names, inputs)]
    graph_outputs = []
    for k, (t, name) in enumerate(zip(outputs, out_names)):
        if id(t) in b.poisoned:
            raise ExportError(b.poisoned[id(t)])
        src = b.env.get(id(t))
        if src is None:
            src = b.initializer(to_numpy(t))
        b.materialize(src)
        b.nodes.append(helper.make_node("Identity", [src], [name], name=name + "_identity"))
        graph_outputs.append(value_info(name, t, [alt_outputs[s][k] for s in alt_outputs]))
    graph = helper.make_graph(b.nodes, getattr(model, "__class__", type(model)).__name__ if is_module else
                              getattr(model, "__name__", "graph"), graph_inputs, graph_outputs, b.initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ember")
    proto.ir_version = 8 if opset <= 18 else 9
    onnx.checker.check_model(proto)
    if f is None:
        return proto
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(proto.SerializeToString())
    else:
        f.write(proto.SerializeToString())
    return None


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Sets model's training mode for an export (TrainingMode), restoring it afterwards."""
    was = model.training
    if mode == TrainingMode.EVAL:
        model.train(False)
    elif mode == TrainingMode.TRAINING:
        model.train(True)
    try:
        yield
    finally:
        model.train(was)
