"""Fuzzes ember.onnx.export: a chain of ops picked by the fuzzer (pointwise, reductions,
softmax, views, slices, cat/split, products, with dims and sizes it picks, valid or not)
over a float32 input of a shape it picks, its batch axis dynamic or not. Every input must
end in a model that passes onnx.checker or in a Python exception (ExportError for what the
exporter cannot map); no trace may be left running. One input in eight also runs the
model in onnxruntime (at a larger batch when the axis is dynamic) and compares it with
ember's result, so a wrong mapping fails like a crash."""
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
from _common import Values  # noqa: E402

import ember  # noqa: E402
import ember.onnx  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

ort.set_default_logger_severity(3)


def _dim(v, x):
    return v.fdp.ConsumeIntInRange(-x.dim() - 1, x.dim()) if x.dim() else v.small(-1, 0)


def step(v: Values, x):
    """One op on x (the fuzzer picks which, and its arguments)."""
    e, F = ember, ember.nn.functional
    k = v.small(0, 19)
    if k == 0:
        return v.pick((e.relu, e.tanh, e.sigmoid, e.abs, e.neg, F.gelu, F.silu, e.sin))(x)
    if k == 1:
        return x * v.pick((2.0, -0.5, 3)) + v.pick((1.0, 0, -2))
    if k == 2:
        return v.pick((e.add, e.mul, e.sub, e.maximum))(x, x.flip(-1) if x.dim() else x)
    if k == 3:
        return x / (x.abs() + 1)
    if k == 4:
        return v.pick((e.sum, e.mean, e.amax))(x, _dim(v, x), keepdim=v.bool())
    if k == 5:
        return v.pick((F.softmax, F.log_softmax))(x, _dim(v, x))
    if k == 6:
        return x.transpose(_dim(v, x), _dim(v, x))
    if k == 7:
        return x.reshape(v.pick((-1, (x.shape[0] if x.dim() else 1, -1), (-1, v.small(1, 4)))))
    if k == 8:
        return x.unsqueeze(_dim(v, x))
    if k == 9:
        return x.squeeze(_dim(v, x)) if v.bool() else x.squeeze()
    if k == 10:
        d = _dim(v, x)
        return x.narrow(d, v.small(0, 2), v.small(0, 3))
    if k == 11:
        return x[..., v.small(0, 2):v.small(0, 6):v.small(1, 3)]
    if k == 12:
        return x.select(_dim(v, x), v.small(-2, 2))
    if k == 13:
        d = _dim(v, x)
        return e.cat(list(reversed(x.chunk(v.small(1, 3), d))), d)
    if k == 14:
        return x.matmul(x.transpose(-1, -2)) if x.dim() >= 2 else x.matmul(x)
    if k == 15:
        return x.permute(*reversed(range(x.dim())))
    if k == 16:
        return e.where(x > 0, x, x * 0.1)
    if k == 17:
        return x.flatten(v.small(0, 2))
    if k == 18:
        return x.clamp(min=v.pick((None, -1.0, 0.0)), max=v.pick((None, 1.0, 2.0)))
    return e.stack([x, x], _dim(v, x))


def test_one_input(data: bytes):
    v = Values(data)
    shape = [v.small(1, 4) for _ in range(v.small(1, 4))]
    x = ember.linspace(-2, 2, int(np.prod(shape))).reshape(shape)
    steps = [v.small(0, 2 ** 16) for _ in range(v.small(1, 6))]
    dynamic = v.bool()
    check = v.small(0, 7) == 0

    def model(t):
        sub = Values(bytes(s % 256 for s in steps) + data[-8:])
        for _ in steps:
            t = step(sub, t)
        return t

    buf = io.BytesIO()
    try:
        ember.onnx.export(model, (x,), buf, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}} if dynamic else None)
    except Exception as exc:  # noqa: BLE001
        if not _common.expected(exc):
            raise
        return
    finally:
        assert not ember._C._trace_active(), "a trace was left running"
    if not check:
        return
    run_x = ember.cat([x, x.narrow(0, 0, 1) * 0.5], 0) if dynamic else x
    try:
        expected = model(run_x)
    except Exception as exc:  # noqa: BLE001 - the model may not take another batch size
        if not _common.expected(exc):
            raise
        return
    got = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"]).run(None, {"x": run_x.numpy()})[0]
    assert got.shape == tuple(expected.shape), (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    _common.main(test_one_input)
