"""ember.utils.tensorboard: the checksum against published test vectors, the protobuf
encoding against bytes worked out by hand from the wire format, and event files written
by SummaryWriter read back by our own decoder (and by TensorBoard's EventAccumulator when
the tensorboard package is installed)."""
from __future__ import annotations

import os
import re
import socket
import struct
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from ember.utils.tensorboard import _proto
from ember.utils.tensorboard._record import crc32c, encode_record, masked_crc32c, read_records

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def events_in(log_dir):
    """The decoded events of the one event file in log_dir."""
    files = [f for f in os.listdir(log_dir) if f.startswith("events.out.tfevents.")]
    assert len(files) == 1, files
    return [_proto.decode_event(r) for r in read_records(os.path.join(log_dir, files[0]))]


def values_in(log_dir):
    """(step, summary value dict) for every summary event in log_dir's event file."""
    return [(e["step"], v) for e in events_in(log_dir) for v in e.get("summary", [])]


# ---------------------------------------------------------------- checksum and encoding
@pytest.mark.parametrize("data, expected", [
    (b"123456789", 0xE3069283),
    (b"", 0),
    (bytes(32), 0x8A9136AA),  # RFC 3720, B.4
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
])
def test_crc32c_test_vectors(data, expected):
    assert crc32c(data) == expected
    assert crc32c(data[5:], crc32c(data[:5])) == expected  # continued over pieces


def test_masked_crc_and_record_framing():
    crc = crc32c(b"abc")
    assert masked_crc32c(b"abc") == ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    record = encode_record(b"abc")
    assert len(record) == 8 + 4 + 3 + 4
    assert struct.unpack("<Q", record[:8]) == (3,)
    assert struct.unpack("<I", record[8:12]) == (masked_crc32c(record[:8]),)
    assert record[12:15] == b"abc" and struct.unpack("<I", record[15:]) == (masked_crc32c(b"abc"),)


def test_corrupt_records_are_refused(tmp_path):
    path = tmp_path / "f"
    good = encode_record(b"hello") + encode_record(b"")
    path.write_bytes(good)
    assert list(read_records(path)) == [b"hello", b""]
    for bad, match in [(good[:-1], "truncated"), (good[:13] + b"X" + good[14:], "data checksum"),
                       (b"\x06" + good[1:], "length checksum"), (good[:5], "truncated")]:
        path.write_bytes(bad)
        with pytest.raises(ValueError, match=match):
            list(read_records(path))


@pytest.mark.parametrize("value, encoded", [(0, "00"), (1, "01"), (150, "9601"), (300, "ac02"),
                                            (2 ** 63 - 1, "ffffffffffffffff7f"), (-1, "ffffffffffffffffff01")])
def test_varint(value, encoded):
    assert _proto.varint(value).hex() == encoded


def test_event_encoding_matches_the_wire_format():
    summary = _proto.summary(_proto.simple_value("a", 2.0))
    got = _proto.event(1.5, 3, summary=summary)
    value = b"\x0a\x01a" + b"\x15" + struct.pack("<f", 2.0)  # tag (1, length), simple_value (2, fixed32)
    want = (b"\x09" + struct.pack("<d", 1.5)  # wall_time (1, fixed64)
            + b"\x10\x03"  # step (2, varint)
            + b"\x2a" + bytes([len(value) + 2]) + b"\x0a" + bytes([len(value)]) + value)  # summary (5) > value (1)
    assert got == want
    # proto3 leaves defaults out, but a oneof member is written even when it is zero
    assert _proto.event(0.0, 0, file_version="") == b"\x1a\x00"
    assert bytes(_proto.simple_value("", 0.0)) == b"\x15\x00\x00\x00\x00"
    assert _proto.event(1.0, -2)[9:] == b"\x10" + _proto.varint(-2)
    assert _proto.decode_event(_proto.event(1.0, -2))["step"] == -2


def test_decoder_round_trip_of_every_message():
    hist = _proto.histogram_value("h", -1.0, 2.0, 3.0, 1.5, 5.25, [0.0, 1.0, 2.0], [0.0, 2.0, 1.0])
    text = _proto.tensor_value("t", _proto.string_tensor("é"), _proto.plugin_metadata("text"))
    scalar = _proto.tensor_value("s", _proto.scalar_tensor(0.1, double=False), _proto.plugin_metadata("scalars", b"x"))
    event = _proto.decode_event(_proto.event(12.25, 7, summary=_proto.summary(hist, text, scalar)))
    assert event["wall_time"] == 12.25 and event["step"] == 7
    h, t, s = event["summary"]
    assert h == {"tag": "h", "histo": {"min": -1.0, "max": 2.0, "num": 3.0, "sum": 1.5, "sum_squares": 5.25,
                                       "bucket_limit": [0.0, 1.0, 2.0], "bucket": [0.0, 2.0, 1.0]}}
    assert t["tensor"] == {"dtype": 7, "shape": [1], "string_val": ["é".encode()]} and t["plugin_name"] == "text"
    assert s["tensor"]["float_val"] == [np.float32(0.1)] and s["tensor"]["shape"] == []
    assert s["plugin_name"] == "scalars" and s["plugin_content"] == b"x"
    log = _proto.decode_event(_proto.event(1.0, 4, session_log=_proto.session_log(_proto.SESSION_START)))
    assert log["session_log_status"] == 1 and log["step"] == 4


# ---------------------------------------------------------------- SummaryWriter
def test_the_event_file_exists_at_once_with_its_version_record(tmp_path):
    w = SummaryWriter(tmp_path / "run")
    assert w.get_logdir() == str(tmp_path / "run")
    (name,) = os.listdir(tmp_path / "run")
    assert re.fullmatch(rf"events\.out\.tfevents\.\d{{10}}\.{re.escape(socket.gethostname())}\.{os.getpid()}\.\d+",
                        name)
    (first,) = events_in(tmp_path / "run")
    assert first["file_version"] == "brain.Event:2" and first["step"] == 0 and first["wall_time"] > 1e9
    w.close()
    w2 = SummaryWriter(tmp_path / "suffixed", filename_suffix=".v2")
    assert os.listdir(tmp_path / "suffixed")[0].endswith(".v2")
    w2.close()


def test_add_scalar_round_trip(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_scalar("zero", 0.0, 10)
        w.add_scalar("tensor", ember.tensor([2.5]), 11, walltime=123.0)
        w.add_scalar("array", np.float64(3.25), 12)
        w.add_scalar("nostep", 7)
        w.add_scalar("new", ember.tensor(0.1, dtype=ember.float64), 13, new_style=True)
        w.add_scalar("new64", 0.1, 14, new_style=True, double_precision=True)
    values = values_in(tmp_path)
    assert [(s, v["tag"], v["simple_value"]) for s, v in values[:5]] == [
        (i, "loss", pytest.approx(1.0 / (i + 1), rel=1e-7)) for i in range(5)]
    assert values[5] == (10, {"tag": "zero", "simple_value": 0.0})
    assert values[6] == (11, {"tag": "tensor", "simple_value": 2.5})
    assert [e for e in events_in(tmp_path) if e.get("summary", [{}])[0].get("tag") == "tensor"][0]["wall_time"] == 123
    assert values[7] == (12, {"tag": "array", "simple_value": 3.25})
    assert values[8] == (0, {"tag": "nostep", "simple_value": 7.0})
    new, new64 = values[9][1], values[10][1]
    assert new["plugin_name"] == "scalars" and new["tensor"] == {"dtype": 1, "shape": [], "float_val": [np.float32(0.1)]}
    assert new64["tensor"] == {"dtype": 2, "shape": [], "double_val": [0.1]}
    with SummaryWriter(tmp_path / "bad") as w:
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("x", ember.ones(2))
        with pytest.raises(ValueError):
            w.add_scalar("x", "not a number")


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("loss/parts", {"train": 1.0, "val": 2.0}, 1)
        w.add_scalars("loss/parts", {"train": 0.5, "val": 1.5}, 2)
    assert sorted(os.listdir(tmp_path))[-2:] == ["loss_parts_train", "loss_parts_val"]
    assert [(s, v["tag"], v["simple_value"]) for s, v in values_in(tmp_path / "loss_parts_val")] == [
        (1, "loss/parts", 2.0), (2, "loss/parts", 1.5)]
    assert values_in(tmp_path) == []  # the main file has none of them


def reference_histogram(values, edges):
    """numpy's counts, trimmed to the non-empty buckets plus one empty one on the left."""
    counts, edges = np.histogram(values, bins=edges)
    nonzero = np.nonzero(counts)[0]
    start, end = nonzero[0], nonzero[-1] + 1
    if start > 0:
        return edges[start:end + 1].tolist(), counts[start - 1:end].astype(float).tolist()
    return edges[:end + 1].tolist(), [0.0] + counts[:end].astype(float).tolist()


def test_add_histogram_against_numpy(tmp_path):
    data = np.random.default_rng(0).standard_normal(5000) * 3
    w = SummaryWriter(tmp_path)
    w.add_histogram("tf", ember.tensor(data), 1)
    w.add_histogram("ten", data, 2, bins=10)
    w.add_histogram("edges", data.tolist(), 3, bins=[-2.0, 0.0, 0.5, 1.0, 100.0])
    w.add_histogram("auto", ember.tensor(data, dtype=ember.float32), 4, bins="auto")
    w.add_histogram("merged", data, 5, bins=10, max_bins=4)
    w.add_histogram("const", ember.full((3,), 2.0), 6, bins=4)
    w.add_histogram_raw("raw", 0, 3, 4, 6, 14, [1.0, 2.0, 3.0], [1, 1, 2], 7)
    w.close()
    got = {v["tag"]: v["histo"] for _, v in values_in(tmp_path)}
    tf_edges = [-e for e in reversed(_tf_edges())] + [0.0] + _tf_edges()
    for tag, values, edges in [("tf", data, tf_edges), ("ten", data, 10), ("edges", data, [-2.0, 0.0, 0.5, 1.0, 100.0]),
                               ("auto", data.astype(np.float32).astype(np.float64), "auto")]:
        limits, counts = reference_histogram(values, np.histogram_bin_edges(values, edges) if isinstance(
            edges, (int, str)) else np.array(edges))
        assert got[tag]["bucket"] == counts, tag
        assert got[tag]["bucket_limit"] == pytest.approx(limits, rel=1e-12), tag
        assert got[tag]["num"] == len(values) and got[tag]["sum"] == pytest.approx(values.sum())
        assert got[tag]["min"] == values.min() and got[tag]["max"] == values.max()
        assert got[tag]["sum_squares"] == pytest.approx(values.dot(values))
    # 10 buckets merged in groups of 10 // 4 = 2: five buckets
    counts10, edges10 = np.histogram(data, bins=10)
    assert got["merged"]["bucket"][1:] == counts10.reshape(5, 2).sum(1).astype(float).tolist()
    assert got["merged"]["bucket_limit"] == pytest.approx(edges10[::2].tolist())
    assert got["const"]["bucket"] == [0.0, 3.0] and got["const"]["bucket_limit"] == [2.0, 2.25]
    assert got["raw"]["bucket"] == [1.0, 1.0, 2.0] and got["raw"]["sum_squares"] == 14.0
    with SummaryWriter(tmp_path / "err") as w:
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("empty", ember.zeros(0))
        with pytest.raises(ValueError, match="must be positive"):
            w.add_histogram("nobins", ember.ones(3), bins=0)
        with pytest.raises(ValueError, match="monotonically"):
            w.add_histogram("backwards", ember.ones(3), bins=[2.0, 1.0])
        with pytest.raises(ValueError):
            w.add_histogram_raw("raw", 0, 3, 4, 6, 14, [1.0, 2.0], [1, 1, 2])


def _tf_edges():
    v, edges = 1e-12, []
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return edges


def test_add_text(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "**bold** é", 3)
    ((step, value),) = values_in(tmp_path)
    assert step == 3 and value["tag"] == "notes/text_summary" and value["plugin_name"] == "text"
    assert value["tensor"] == {"dtype": 7, "shape": [1], "string_val": ["**bold** é".encode()]}


def test_flushing(tmp_path):
    w = SummaryWriter(tmp_path, max_queue=3, flush_secs=1000)
    w.add_scalar("a", 1.0, 1)
    w.flush()
    assert len(values_in(tmp_path)) == 1
    for step in range(2, 5):
        w.add_scalar("a", 1.0, step)  # the third pending event flushes
    assert len(values_in(tmp_path)) == 4
    w.close()
    w.close()  # closing twice is harmless
    w.flush()
    w.add_scalar("after", 1.0)  # logging after close opens a new file
    w.close()
    assert len(os.listdir(tmp_path)) == 2


def test_default_log_dir_and_purge_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        assert re.fullmatch(rf"runs{re.escape(os.sep)}[A-Z][a-z]{{2}}\d\d_\d\d-\d\d-\d\d_"
                            rf"{re.escape(socket.gethostname())}_lr0\.1", w.get_logdir())
    assert os.path.isdir(w.get_logdir())
    with SummaryWriter("named", comment="ignored", purge_step=5) as w:
        w.add_scalar("x", 1.0, 5)
    events = events_in(tmp_path / "named")
    assert events[1] == {"wall_time": events[1]["wall_time"], "step": 5, "file_version": "brain.Event:2"}
    assert events[2]["session_log_status"] == 1 and events[2]["step"] == 5
    assert events[3]["summary"][0]["tag"] == "x"


def test_tensorboard_reads_our_files(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalar("loss", step * 0.5, step)
        w.add_histogram("w", ember.arange(10.0), 1)
        w.add_text("t", "hi", 0)
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(0, 0.0), (1, 0.5), (2, 1.0)]
    assert acc.Histograms("w")[0].histogram_value.num == 10


# ---------------------------------------------------------------- the package
def test_imports_stay_lazy_and_as_torch_finds_tensorboard(tmp_path):
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import ember"], capture_output=True,
                            text=True, timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 0 and "ember._C" in result.stderr, result.stderr
    assert not re.search(r"ember\.(distributions|utils|nn)\b", result.stderr), result.stderr
    script = tmp_path / "uses_tensorboard.py"
    script.write_text("import torch\nfrom torch.utils.tensorboard import SummaryWriter\n"
                      f"with SummaryWriter({str(tmp_path / 'logs')!r}) as w:\n"
                      "    w.add_scalar('loss', torch.tensor(0.5), 1)\n"
                      "import ember\nprint(SummaryWriter is ember.utils.tensorboard.SummaryWriter)\n")
    result = subprocess.run([sys.executable, "-m", "ember.as_torch", str(script)], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.stdout.strip() == "True", result.stderr
    assert values_in(tmp_path / "logs") == [(1, {"tag": "loss", "simple_value": 0.5})]
    assert "tensorboard" in dir(ember.utils) and ember.utils.tensorboard.SummaryWriter is SummaryWriter


@pytest.mark.parametrize("module", ["_record", "_proto", "writer"])
def test_docstring_examples(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"ember.utils.tensorboard.{module}")
    result = doctest.testmod(mod, globs={**vars(mod), "ember": ember})
    assert result.failed == 0 and result.attempted > 0
