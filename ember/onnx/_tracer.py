"""Records one forward call through the native trace hook (see Note [The trace hook] in
csrc/autograd/trace.h): each outermost op call on a value derived from the inputs or the
parameters becomes a Record; ops on other tensors only (a mask made by triu, positions
from arange) are not recorded, and their results enter the graph as constants where a
recorded op reads them. Modules that ONNX has one operator for (the recurrent layers)
are recorded whole by forward hooks, their inner ops suppressed."""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import _C
from .._tensor import Tensor


class ExportError(RuntimeError):
    """The exporter cannot map what the model does (an op, an argument, an in-place write)."""


@dataclass
class Record:
    op: str                  # the schema name: "add.Tensor", or "module:LSTM" for a whole module
    names: tuple             # argument names
    args: tuple              # arguments: tensors, numbers, lists, None, ...
    outputs: tuple           # output tensors (None for an undefined one)
    inplace: bool = False    # outputs[0] is an argument overwritten
    module: object = None    # the module of a module record
    constants: dict = field(default_factory=dict)  # id(tensor) -> its value when the op read it


# Ops whose results are random: a model that draws numbers in forward (dropout in
# training mode) has no deterministic graph.
RANDOM = {"bernoulli", "bernoulli_", "normal_", "uniform_", "random_", "exponential_", "geometric_", "cauchy_",
          "log_normal_", "multinomial", "rand_like", "randn_like", "randint_like", "native_dropout", "normal",
          "poisson"}

# Modules recorded whole: ONNX has an operator for each (LSTM, GRU, RNN).
WHOLE_MODULES = ("LSTM", "GRU", "RNN")


def _tensors(x):
    if isinstance(x, Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for item in x:
            yield from _tensors(item)
    elif isinstance(x, dict):
        for item in x.values():
            yield from _tensors(item)


class Trace:
    """The callback of _C._trace_start: keeps every tensor it sees alive, so that ids
    stay unique for the trace's life."""

    random_ok = False  # ONNX has no deterministic graph for random ops; a graph viewer does

    def __init__(self, sources):
        self.records: list[Record] = []
        self.live: set[int] = {id(t) for t in sources}  # ids of the values the graph computes
        self.keep = list(sources)
        self.suppress = 0

    def __call__(self, op, names, args, outputs, inplace):
        if self.suppress:
            return
        if not self.random_ok and op.split(".")[0] in RANDOM:
            raise ExportError(f"ONNX export: the random op '{op.split('.')[0]}' has no ONNX mapping (dropout in "
                              "training mode? export the model in eval mode)")
        tensors = [t for t in _tensors(args)]
        if not any(id(t) in self.live for t in tensors):
            if inplace and outputs and outputs[0] is not None:
                self.live.discard(id(outputs[0]))  # a constant overwritten: read it afresh
            return  # every input a constant: so is the result
        if inplace and outputs[0] is not None:
            self._check_inplace(op, outputs[0])
        # constants read here are copied now: a later in-place write must not change them
        consts = {id(t): t.clone() for t in tensors if id(t) not in self.live}
        self.keep += tensors + [t for t in outputs if t is not None]
        self.records.append(Record(op, tuple(names.split(",")) if names else (), tuple(args), tuple(outputs),
                                   bool(inplace), constants=consts))
        self.live.update(id(t) for t in outputs if t is not None)

    def _check_inplace(self, op, target):
        """An in-place write is the functional op with the target renamed; that is only
        right when no other value of the graph shares the target's memory."""
        ptr = target.untyped_storage().data_ptr()
        for t in self.keep:
            if t is not target and id(t) in self.live and t.numel() and target.numel() \
                    and t.untyped_storage().data_ptr() == ptr:
                raise ExportError(f"ONNX export: the in-place op '{op.split('.')[0]}' writes a tensor that shares "
                                  "memory with another traced value (a view); write it out of place")

    def module_record(self, module, inputs, outputs):
        name = "module:" + type(module).__name__
        tensors = list(_tensors(inputs))
        outs = tuple(_tensors(outputs))
        consts = {id(t): t.clone() for t in tensors if id(t) not in self.live}
        self.keep += tensors + list(outs)
        self.records.append(Record(name, (), tuple(inputs), outs, module=module, constants=consts))
        self.live.update(id(t) for t in outs)


def run(fn, args, kwargs, sources, whole_modules, trace_cls=Trace, who="ONNX export"):
    """Runs fn(*args, **kwargs) under a trace (a trace_cls): (records, outputs, trace)."""
    if _C._trace_active():
        raise RuntimeError(f"{who}: another export is tracing (in this thread or another); exports cannot "
                           "nest or run at the same time")
    trace = trace_cls(sources)
    handles = []
    for m in whole_modules:
        def pre(module, inputs):
            trace.suppress += 1

        def post(module, inputs, output):
            trace.suppress -= 1
            if not trace.suppress:
                trace.module_record(module, inputs, output)
        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    _C._trace_start(trace)
    try:
        out = fn(*args, **kwargs)
    finally:
        _C._trace_stop()
        for h in handles:
            h.remove()
    trace.keep.extend(_tensors(out))
    return trace.records, out, trace
