"""SummaryWriter's add_image, add_images and add_hparams: event files read back by our own
decoder (the PNG through Pillow), against the pixels and the hparams plugin's messages
that torch's writer produces (checked field by field; TensorBoard's EventAccumulator reads
them too when the tensorboard package is installed)."""
from __future__ import annotations

import io
import os
import sys

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from ember.utils.tensorboard import _proto
from ember.utils.tensorboard._record import read_records

Image = pytest.importorskip("PIL.Image")


def events_in(log_dir):
    files = [f for f in os.listdir(log_dir) if f.startswith("events.out.tfevents.")]
    assert len(files) == 1, files
    return [_proto.decode_event(r) for r in read_records(os.path.join(log_dir, files[0]))]


def values_in(log_dir):
    return [(e["step"], v) for e in events_in(log_dir) for v in e.get("summary", [])]


def pixels(value):
    image = value["image"]
    array = np.array(Image.open(io.BytesIO(image["encoded_image_string"])))
    assert (image["height"], image["width"], image["colorspace"]) == array.shape
    return array


def as_uint8(values):
    """torch's writer's rule: floats in [0, 1] times 255, clipped, truncated."""
    return (values.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)


RNG = np.random.default_rng(0)
CHW = RNG.uniform(-0.1, 1.1, (3, 5, 7)).astype(np.float32)


@pytest.mark.parametrize("make, dataformats, expected", [
    (lambda: ember.from_numpy(CHW), "CHW", as_uint8(CHW.transpose(1, 2, 0))),
    (lambda: ember.from_numpy(CHW).double().permute(1, 2, 0), "HWC", as_uint8(CHW.transpose(1, 2, 0))),
    (lambda: CHW[:1], "CHW", as_uint8(np.repeat(CHW[:1], 3, 0).transpose(1, 2, 0))),
    (lambda: ember.from_numpy((CHW[0] * 200).astype(np.uint8)), "HW",
     np.stack([(CHW[0] * 200).astype(np.uint8)] * 3, 2)),
    (lambda: ember.from_numpy(CHW[:2]).permute(2, 1, 0), "WHC", None),
    (lambda: np.concatenate([CHW, CHW[:1]]).transpose(1, 2, 0), "HWC",
     as_uint8(np.concatenate([CHW, CHW[:1]]).transpose(1, 2, 0))),
])
def test_add_image_round_trip(tmp_path, make, dataformats, expected):
    with SummaryWriter(tmp_path) as w:
        if expected is None:  # two channels: neither gray nor RGB(A)
            with pytest.raises(ValueError, match="1, 3 or 4 channels"):
                w.add_image("img", make(), 3, dataformats=dataformats)
            return
        w.add_image("img", make(), 3, dataformats=dataformats)
    [(step, value)] = values_in(tmp_path)
    assert step == 3 and value["tag"] == "img"
    np.testing.assert_array_equal(pixels(value), expected)


def test_add_images_tiles_eight_to_a_row(tmp_path):
    batch = RNG.uniform(0, 1, (10, 1, 4, 6)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_images("grid", ember.from_numpy(batch), 1)
        w.add_images("nhwc", ember.from_numpy(batch).permute(0, 2, 3, 1), 2, dataformats="NHWC")
    (_, grid), (_, nhwc) = values_in(tmp_path)
    expected = np.zeros((8, 48, 3), dtype=np.uint8)
    for i in range(10):
        row, col = divmod(i, 8)
        expected[row * 4:(row + 1) * 4, col * 6:(col + 1) * 6] = as_uint8(batch[i, 0])[:, :, None]
    np.testing.assert_array_equal(pixels(grid), expected)
    np.testing.assert_array_equal(pixels(nhwc), expected)


def test_add_image_errors(tmp_path, monkeypatch):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
            w.add_image("x", ember.zeros(3, 4), 0)
        with pytest.raises(AssertionError, match="same dimension"):
            w.add_image("x", ember.zeros(3, 4, 4), 0, dataformats="CCH")
        monkeypatch.setitem(sys.modules, "PIL", None)
        with pytest.raises(ImportError, match="needs Pillow"):
            w.add_image("x", ember.zeros(3, 4, 4), 0)


def hparams_content(value, field):
    """The message in field of the HParamsPluginData a metadata-only value holds."""
    assert value["plugin_name"] == "hparams" and "simple_value" not in value
    content = _proto.decode_fields(value["plugin_content"])
    assert list(content) == [field]
    return _proto.decode_fields(content[field][0])


def test_add_hparams(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "opt": "sgd", "bs": 32, "flag": True, "skip": None, "t": ember.tensor(2.5)},
                      {"acc": 0.75}, {"opt": ["sgd", "adam"]}, run_name="run1", global_step=4)
    assert os.listdir(tmp_path / "run1")
    values = values_in(tmp_path / "run1")
    assert [v["tag"] for _, v in values] == ["_hparams_/experiment", "_hparams_/session_start_info",
                                              "_hparams_/session_end_info", "acc"]
    assert {s for s, _ in values} == {4}
    assert values[3][1]["simple_value"] == 0.75
    experiment = hparams_content(values[0][1], 2)
    infos = [_proto.decode_fields(i) for i in experiment[4]]
    assert [(i[1][0], i[4][0]) for i in infos] == [(b"lr", 3), (b"opt", 1), (b"bs", 3), (b"flag", 3), (b"t", 3)]
    domain = [_proto.decode_fields(v) for v in _proto.decode_fields(infos[1][5][0])[1]]
    assert domain == [{3: [b"sgd"]}, {3: [b"adam"]}]
    assert [_proto.decode_fields(_proto.decode_fields(m)[1][0]) for m in experiment[5]] == [{2: [b"acc"]}]
    start = hparams_content(values[1][1], 3)
    entries = {}
    for raw in start[1]:
        entry = _proto.decode_fields(raw)
        entries[entry[1][0].decode()] = _proto.decode_fields(entry[2][0])
    assert entries["opt"] == {3: [b"sgd"]}
    assert {k: _proto._double(v[2][0]) for k, v in entries.items() if k != "opt"} == {
        "lr": 0.1, "bs": 32.0, "flag": 1.0, "t": 2.5}
    assert hparams_content(values[2][1], 4) == {1: [1]}


def test_add_hparams_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(TypeError, match="should be dictionary"):
            w.add_hparams([("lr", 0.1)], {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\] should be a list"):
            w.add_hparams({"lr": 0.1}, {}, {"lr": [1]})
        with pytest.raises(ValueError, match="value should be one of int, float, str, bool, or torch.Tensor"):
            w.add_hparams({"lr": [0.1]}, {})


def test_tensorboard_reads_our_images_and_hparams(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    plugin_data_pb2 = pytest.importorskip("tensorboard.plugins.hparams.plugin_data_pb2")
    with SummaryWriter(tmp_path) as w:
        w.add_image("a", ember.from_numpy(CHW), 1)
        w.add_hparams({"lr": 0.1}, {"acc": 0.9}, run_name="r1")
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert (acc.Images("a")[0].width, acc.Images("a")[0].height) == (7, 5)
    acc = event_accumulator.EventAccumulator(str(tmp_path / "r1"))
    acc.Reload()
    data = plugin_data_pb2.HParamsPluginData.FromString(
        acc.SummaryMetadata("_hparams_/session_start_info").plugin_data.content)
    assert data.session_start_info.hparams["lr"].number_value == 0.1
