"""add_graph's GraphDef: one forward call of a model recorded by the native trace hook
(ember/onnx/_tracer.py), laid out as torch's writer lays out its TorchScript trace.

Nodes, named by module scope as torch names them ("Net/Linear[fc]/..."):
- ``input/<argument name>`` and ``output/output.<k>``: op "IO Node";
- ``<scope>/<parameter or buffer name>``: op "prim::GetAttr", attr "{ name :  weight }";
- ``<scope>/<k>``: op "prim::Constant", one per non-tensor argument or constant tensor an
  op reads, attr "{ value : 2}";
- ``<scope>/<op>``: op "aten::<op>" for each recorded op, inputs the nodes of its arguments
  in order.
Every node but constants has the ``_output_shapes`` attr. The ops are ember's native ops
(F.linear records aten::t and aten::addmm where torch's trace keeps aten::linear), and a
tuple result gives one output node per tensor where torch's gives prim::TupleConstruct.

The GraphDef message (tensorflow/core/framework/graph.proto, node_def.proto,
attr_value.proto, versions.proto): GraphDef node 1 (repeated NodeDef), versions 4
(VersionDef: producer 1); NodeDef name 1, op 2, input 3 (repeated), device 4, attr 5
(map<string, AttrValue>: entries of key 1, value 2); AttrValue oneof: list 1 (ListValue:
shape 7, repeated TensorShapeProto), s 2 (bytes). RunMetadata step_stats 1 (StepStats:
dev_stats 1 (DeviceStepStats: device 1)).
"""
from __future__ import annotations

import inspect

from ... import _C
from ...autograd.grad_mode import no_grad
from ...onnx import _tracer
from . import _proto

_PRODUCER = 22  # the GraphDef version torch's writer stamps


class _ScopedTrace(_tracer.Trace):
    """A trace that also notes, for each record, the module scope it ran in."""

    random_ok = True
    stack: list = []  # set per run: the scopes of the modules whose forward is running

    def __init__(self, sources):
        super().__init__(sources)
        self.scopes: list = []

    def __call__(self, op, names, args, outputs, inplace):
        n = len(self.records)
        super().__call__(op, names, args, outputs, inplace)
        if len(self.records) > n:
            self.scopes.append(self.stack[-1])


def _scope_names(model) -> dict:
    """{id(module): its scope, "Net/Sequential[body]/Linear[0]"} for model and its submodules."""
    root = type(model).__name__
    scopes = {}
    for name, module in model.named_modules():
        if not name:
            scopes[id(module)] = root
            continue
        parts, path = [root], model
        for part in name.split("."):
            path = getattr(path, part) if not part.isdigit() else path._modules[part]
            parts.append(f"{type(path).__name__}[{part}]")
        scopes[id(module)] = "/".join(parts)
    return scopes


def _as_args(input_to_model) -> tuple:
    if input_to_model is None:
        return ()
    if isinstance(input_to_model, tuple):
        return input_to_model
    return (input_to_model,)


def _input_names(model, n: int) -> list:
    """The forward's parameter names for the first n positional arguments (input.k past them)."""
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input.{i + 1}" for i in range(n)]


def trace_model(model, input_to_model):
    """(records, their scopes, the model's output, the input tensors, their names)."""
    args = _as_args(input_to_model)
    tensors = list(_tracer._tensors(args))
    state = list(model.parameters()) + [b for b in model.buffers() if b is not None]
    scopes = _scope_names(model)
    stack = [type(model).__name__]
    trace_cls = type("_Trace", (_ScopedTrace,), {"stack": stack})
    def enter(module, inputs):
        stack.append(scopes[id(module)])

    def leave(module, inputs, output):
        stack.pop()  # returns None: the output stays the module's

    handles = []
    for module in model.modules():
        handles.append(module.register_forward_pre_hook(enter))
        handles.append(module.register_forward_hook(leave))
    was_training = model.training
    model.eval()  # torch traces the graph in eval mode and restores the mode after
    try:
        with no_grad():
            records, out, trace = _tracer.run(model, args, {}, tensors + state, (), trace_cls=trace_cls,
                                              who="add_graph")
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    return records, trace.scopes, out, args


class _Graph:
    """Builds the NodeDefs, naming each node uniquely."""

    def __init__(self):
        self.nodes: list = []
        self.taken: set = set()
        self.by_id: dict = {}  # id(tensor) -> the name of the node that produced it
        self.counter = 0

    def unique(self, name: str) -> str:
        if name in self.taken:
            k = 1
            while f"{name}.{k}" in self.taken:
                k += 1
            name = f"{name}.{k}"
        self.taken.add(name)
        return name

    def add(self, name, op, inputs=(), shapes=None, attr=""):
        self.nodes.append((name, op, list(inputs), shapes, attr))
        return name

    def constant(self, scope: str, value) -> str:
        self.counter += 1
        text = "{}" if value is None else f"{{ value : {_short(value)}}}"
        shapes = [list(value.shape)] if isinstance(value, _C.TensorBase) else None
        return self.add(self.unique(f"{scope}/{self.counter}"), "prim::Constant", (), shapes, text)


def _short(value) -> str:
    if isinstance(value, _C.TensorBase):
        return f"tensor({value.item()})" if value.numel() == 1 else f"tensor(shape={list(value.shape)})"
    return str(value)


def build_graph(model, input_to_model, verbose: bool = False) -> bytes:
    """The serialized GraphDef of one traced forward call of model."""
    records, scopes, out, args = trace_model(model, input_to_model)
    g = _Graph()
    for name, t in zip(_input_names(model, len(args)), args):
        if isinstance(t, _C.TensorBase):
            g.by_id[id(t)] = g.add(g.unique(f"input/{name}"), "IO Node", (), [list(t.shape)])
    module_scopes = _scope_names(model)
    owners = {}  # id(parameter or buffer) -> (scope, attribute name)
    for mod_name, module in model.named_modules():
        for attr_name, t in list(module._parameters.items()) + list(module._buffers.items()):
            if t is not None and id(t) not in owners:
                owners[id(t)] = (module_scopes[id(module)], attr_name)
    for record, scope in zip(records, scopes):
        inputs = []
        for arg_name, arg in zip(record.names, record.args):
            for item in (arg if isinstance(arg, (list, tuple)) and any(isinstance(a, _C.TensorBase) for a in arg)
                         else [arg]):
                inputs.append(_input_of(g, item, scope, owners, record))
        op = record.op.split(".")[0]
        shapes = [list(t.shape) for t in record.outputs if t is not None]
        name = g.add(g.unique(f"{scope}/{op}"), f"aten::{op}", inputs, shapes, "{}")
        for t in record.outputs:
            if t is not None:
                g.by_id[id(t)] = name
    for k, t in enumerate(_tracer._tensors(out), 1):
        source = g.by_id.get(id(t)) or g.constant(type(model).__name__, t)
        g.add(g.unique(f"output/output.{k}"), "IO Node", [source], [list(t.shape)])
    if verbose:
        for name, op, inputs, shapes, attr in g.nodes:
            print(f"{name} = {op}({', '.join(inputs)}) {attr} {shapes or ''}".rstrip())
    return _graph_def(g.nodes)


def _input_of(g: _Graph, item, scope: str, owners: dict, record) -> str:
    """The node an op argument comes from, made for parameters and constants on first use."""
    if isinstance(item, _C.TensorBase):
        name = g.by_id.get(id(item))
        if name is not None:
            return name
        if id(item) in owners:
            owner_scope, attr = owners[id(item)]
            name = g.add(g.unique(f"{owner_scope}/{attr}"), "prim::GetAttr", (), [list(item.shape)],
                         f"{{ name :  {attr} }}")
            g.by_id[id(item)] = name
            return name
        return g.constant(scope, record.constants.get(id(item), item))
    return g.constant(scope, item)


def _shape_list(shapes) -> _proto.Writer:
    listed = _proto.Writer()
    for shape in shapes:
        listed.message(7, _proto.tensor_shape(*shape))
    return _proto.Writer().message(1, listed)


def _graph_def(nodes) -> bytes:
    graph = _proto.Writer()
    for name, op, inputs, shapes, attr in nodes:
        node = _proto.Writer().string(1, name).string(2, op)
        for i in inputs:
            node.string(3, i)
        node.message(5, _proto.Writer().string(1, "attr").message(2, _proto.Writer().string(2, attr)))
        if shapes is not None:
            node.message(5, _proto.Writer().string(1, "_output_shapes").message(2, _shape_list(shapes)))
        graph.message(1, node)
    graph.message(4, _proto.Writer().varint(1, _PRODUCER))
    return bytes(graph)


def run_metadata() -> bytes:
    """The RunMetadata torch's writer logs beside the graph: one device, no step stats."""
    device = _proto.Writer().string(1, "/device:CPU:0")
    return bytes(_proto.Writer().message(1, _proto.Writer().message(1, device)))
