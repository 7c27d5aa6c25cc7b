"""The few protobuf messages of a TensorBoard event file, encoded and decoded by hand.

Wire format: a message is a sequence of fields, each a key varint ``field_number << 3 |
wire_type`` followed by the value: a varint (type 0), 8 little-endian bytes (type 1), a
length varint and that many bytes (type 2: strings, bytes, sub-messages, packed repeated
numbers) or 4 little-endian bytes (type 5). proto3 leaves out fields holding their default
(0, "", empty), except members of a ``oneof``, which are written whenever set.

The messages, with the field numbers used here (from TensorFlow's event.proto, summary.proto,
tensor.proto, tensor_shape.proto):

    Event         wall_time 1 (double), step 2 (int64); oneof: file_version 3 (string),
                  graph_def 4 (bytes: a GraphDef, see _graph.py), summary 5 (Summary),
                  session_log 7 (SessionLog), tagged_run_metadata 8 (TaggedRunMetadata:
                  tag 1, run_metadata 2 (bytes))
    SessionLog    status 1 (enum: START = 1), checkpoint_path 2, msg 3
    Summary       value 1 (repeated Summary.Value)
    Summary.Value tag 1, metadata 9 (SummaryMetadata); oneof: simple_value 2 (float),
                  image 4 (Summary.Image), histo 5 (HistogramProto), tensor 8 (TensorProto)
    Summary.Image height 1, width 2, colorspace 3 (int32), encoded_image_string 4 (bytes)
    SummaryMetadata  plugin_data 1 (PluginData: plugin_name 1, content 2), display_name 2,
                  summary_description 3
    HistogramProto   min 1, max 2, num 3, sum 4, sum_squares 5 (doubles),
                  bucket_limit 6, bucket 7 (packed repeated doubles)
    TensorProto   dtype 1 (enum: DT_FLOAT 1, DT_DOUBLE 2, DT_STRING 7), tensor_shape 2,
                  float_val 5 (packed), double_val 6 (packed), string_val 8 (repeated bytes)
    TensorShapeProto dim 2 (repeated Dim: size 1, name 2)

The hparams plugin's content (tensorboard/plugins/hparams/api.proto, plugin_data.proto;
google/protobuf/struct.proto):

    HParamsPluginData version 1; oneof: experiment 2, session_start_info 3,
                  session_end_info 4
    Experiment    hparam_infos 4 (repeated HParamInfo), metric_infos 5 (repeated MetricInfo)
    HParamInfo    name 1, type 4 (enum: STRING 1, BOOL 2, FLOAT64 3), domain_discrete 5
                  (ListValue)
    MetricInfo    name 1 (MetricName: group 1, tag 2)
    SessionStartInfo hparams 1 (map<string, Value>: entries of key 1, value 2)
    SessionEndInfo   status 1 (enum: SUCCESS = 1)
    Value         oneof: number_value 2 (double), string_value 3, bool_value 4
    ListValue     values 1 (repeated Value)
"""
from __future__ import annotations

import struct

__all__ = ["Writer", "decode_fields", "decode_event"]

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5

DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7
SESSION_START = 1


def varint(value: int) -> bytes:
    """value as a base-128 varint; negative values as their 64-bit two's complement (10 bytes)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


class Writer:
    """Builds one message: each method appends a field; ``bytes(w)`` is the encoding.

    >>> bytes(Writer().varint(1, 150))
    b'\\x08\\x96\\x01'
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def _key(self, field: int, wire_type: int) -> None:
        self._parts.append(varint(field << 3 | wire_type))

    def varint(self, field: int, value: int) -> "Writer":
        self._key(field, VARINT)
        self._parts.append(varint(value))
        return self

    def double(self, field: int, value: float) -> "Writer":
        self._key(field, FIXED64)
        self._parts.append(struct.pack("<d", value))
        return self

    def float(self, field: int, value: float) -> "Writer":
        self._key(field, FIXED32)
        self._parts.append(struct.pack("<f", value))
        return self

    def bytes(self, field: int, value: bytes) -> "Writer":
        self._key(field, LENGTH)
        self._parts.append(varint(len(value)))
        self._parts.append(value)
        return self

    def string(self, field: int, value: str) -> "Writer":
        return self.bytes(field, value.encode("utf-8"))

    def message(self, field: int, value: "Writer") -> "Writer":
        return self.bytes(field, bytes(value))

    def packed_doubles(self, field: int, values) -> "Writer":
        return self.bytes(field, struct.pack(f"<{len(values)}d", *values))

    def packed_floats(self, field: int, values) -> "Writer":
        return self.bytes(field, struct.pack(f"<{len(values)}f", *values))

    def __bytes__(self) -> bytes:
        return b"".join(self._parts)


# ---------------------------------------------------------------- the messages
def event(wall_time: float, step=None, *, file_version=None, summary=None, session_log=None, graph_def=None,
          tagged_run_metadata=None) -> bytes:
    """An Event holding one of file_version (str), summary (Writer), session_log (Writer),
    graph_def (a serialized GraphDef) or tagged_run_metadata (tag, serialized RunMetadata)."""
    w = Writer()
    if wall_time:
        w.double(1, wall_time)
    if step:
        w.varint(2, int(step))
    if file_version is not None:
        w.string(3, file_version)
    if summary is not None:
        w.message(5, summary)
    if graph_def is not None:
        w.bytes(4, graph_def)
    if session_log is not None:
        w.message(7, session_log)
    if tagged_run_metadata is not None:
        tag, metadata = tagged_run_metadata
        w.message(8, Writer().string(1, tag).bytes(2, metadata))
    return bytes(w)


def session_log(status: int) -> Writer:
    return Writer().varint(1, status)


def plugin_metadata(plugin_name: str, content: bytes = b"") -> Writer:
    """SummaryMetadata naming the TensorBoard plugin that displays the value."""
    plugin = Writer().string(1, plugin_name)
    if content:
        plugin.bytes(2, content)
    return Writer().message(1, plugin)


def summary(*values: Writer) -> Writer:
    w = Writer()
    for v in values:
        w.message(1, v)
    return w


def _value(tag: str) -> Writer:
    """A Summary.Value with its tag (left out when empty, proto3's default)."""
    return Writer().string(1, tag) if tag else Writer()


def simple_value(tag: str, value: float) -> Writer:
    """A Summary.Value holding a float32 scalar (TensorBoard's classic scalar summary)."""
    return _value(tag).float(2, value)


def tensor_value(tag: str, tensor: Writer, metadata: Writer) -> Writer:
    return _value(tag).message(8, tensor).message(9, metadata)


def histogram_value(tag: str, lo: float, hi: float, num: float, total: float, sum_squares: float,
                    bucket_limits, bucket_counts) -> Writer:
    histo = Writer()
    for field, x in ((1, lo), (2, hi), (3, num), (4, total), (5, sum_squares)):
        if x:
            histo.double(field, x)
    if bucket_limits:
        histo.packed_doubles(6, bucket_limits)
    if bucket_counts:
        histo.packed_doubles(7, bucket_counts)
    return _value(tag).message(5, histo)


def tensor_shape(*sizes: int) -> Writer:
    w = Writer()
    for size in sizes:
        w.message(2, Writer().varint(1, size) if size else Writer())
    return w


def scalar_tensor(value: float, double: bool) -> Writer:
    """A 0-dim TensorProto of dtype float32 (or float64) holding value."""
    if double:
        return Writer().varint(1, DT_DOUBLE).message(2, tensor_shape()).packed_doubles(6, [value])
    return Writer().varint(1, DT_FLOAT).message(2, tensor_shape()).packed_floats(5, [value])


def string_tensor(text: str) -> Writer:
    """A 1-element DT_STRING TensorProto holding text in UTF-8."""
    return Writer().varint(1, DT_STRING).message(2, tensor_shape(1)).string(8, text)


def image_value(tag: str, height: int, width: int, colorspace: int, png: bytes) -> Writer:
    """A Summary.Value holding an encoded (PNG) image."""
    image = Writer()
    for field, x in ((1, height), (2, width), (3, colorspace)):
        if x:
            image.varint(field, x)
    return _value(tag).message(4, image.bytes(4, png))


def struct_value(value) -> Writer:
    """A google.protobuf.Value: a bool, a number (as double) or a string."""
    if isinstance(value, bool):
        return Writer().varint(4, int(value))
    if isinstance(value, str):
        return Writer().string(3, value)
    return Writer().double(2, float(value))


def metadata_value(tag: str, metadata: Writer) -> Writer:
    """A Summary.Value holding only metadata (as the hparams plugin's entries do)."""
    return _value(tag).message(9, metadata)


# ---------------------------------------------------------------- decoding
def decode_fields(data: bytes) -> dict:
    """A message's fields as {field_number: [raw values]}: ints for varints, bytes for
    length-delimited fields, the 8 or 4 raw bytes for fixed-width ones."""
    fields: dict = {}
    pos = 0

    def read_varint():
        nonlocal pos
        shift = result = 0
        while True:
            if pos >= len(data):
                raise ValueError("truncated varint")
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    while pos < len(data):
        key = read_varint()
        field, wire_type = key >> 3, key & 7
        if wire_type == VARINT:
            value = read_varint()
        elif wire_type == FIXED64:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire_type == FIXED32:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire_type == LENGTH:
            n = read_varint()
            value, pos = data[pos:pos + n], pos + n
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        if pos > len(data):
            raise ValueError("truncated field")
        fields.setdefault(field, []).append(value)
    return fields


def _one(fields: dict, number: int, default=None):
    return fields[number][-1] if number in fields else default


def _double(raw) -> float:
    return struct.unpack("<d", raw)[0]


def _int64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _decode_tensor(data: bytes) -> dict:
    f = decode_fields(data)
    shape = decode_fields(_one(f, 2, b""))
    dims = [_int64(_one(decode_fields(d), 1, 0)) for d in shape.get(2, [])]
    out = {"dtype": _one(f, 1, 0), "shape": dims}
    if 5 in f:
        out["float_val"] = [x for raw in f[5] for x in struct.unpack(f"<{len(raw) // 4}f", raw)]
    if 6 in f:
        out["double_val"] = [x for raw in f[6] for x in struct.unpack(f"<{len(raw) // 8}d", raw)]
    if 8 in f:
        out["string_val"] = list(f[8])
    return out


def _decode_histogram(data: bytes) -> dict:
    f = decode_fields(data)
    out = {name: _double(_one(f, n, bytes(8))) for n, name in enumerate(("min", "max", "num", "sum", "sum_squares"), 1)}
    out["bucket_limit"] = [x for raw in f.get(6, []) for x in struct.unpack(f"<{len(raw) // 8}d", raw)]
    out["bucket"] = [x for raw in f.get(7, []) for x in struct.unpack(f"<{len(raw) // 8}d", raw)]
    return out


def _decode_value(data: bytes) -> dict:
    f = decode_fields(data)
    out = {"tag": _one(f, 1, b"").decode("utf-8")}
    if 2 in f:
        out["simple_value"] = struct.unpack("<f", _one(f, 2))[0]
    if 4 in f:
        image = decode_fields(_one(f, 4))
        out["image"] = {name: _one(image, n, 0) for n, name in enumerate(("height", "width", "colorspace"), 1)}
        out["image"]["encoded_image_string"] = _one(image, 4, b"")
    if 5 in f:
        out["histo"] = _decode_histogram(_one(f, 5))
    if 8 in f:
        out["tensor"] = _decode_tensor(_one(f, 8))
    if 9 in f:
        plugin = decode_fields(_one(decode_fields(_one(f, 9)), 1, b""))
        out["plugin_name"] = _one(plugin, 1, b"").decode("utf-8")
        out["plugin_content"] = _one(plugin, 2, b"")
    return out


def decode_event(data: bytes) -> dict:
    """An Event as a dict: wall_time, step, and file_version, summary (a list of value
    dicts), session_log_status, graph_def (a list of node dicts) or run_metadata_tag,
    whichever it holds."""
    f = decode_fields(data)
    out = {"wall_time": _double(_one(f, 1, bytes(8))), "step": _int64(_one(f, 2, 0))}
    if 3 in f:
        out["file_version"] = _one(f, 3).decode("utf-8")
    if 5 in f:
        out["summary"] = [_decode_value(v) for v in decode_fields(_one(f, 5)).get(1, [])]
    if 7 in f:
        out["session_log_status"] = _one(decode_fields(_one(f, 7)), 1, 0)
    if 4 in f:
        out["graph_def"] = _decode_graph(_one(f, 4))
    if 8 in f:
        tagged = decode_fields(_one(f, 8))
        out["run_metadata_tag"] = _one(tagged, 1, b"").decode("utf-8")
    return out


def _decode_graph(data: bytes) -> list:
    """A GraphDef's nodes: dicts of name, op, input (a list) and attr ({key: the string
    value, or for _output_shapes the list of shapes})."""
    nodes = []
    for raw in decode_fields(data).get(1, []):
        f = decode_fields(raw)
        node = {"name": _one(f, 1, b"").decode("utf-8"), "op": _one(f, 2, b"").decode("utf-8"),
                "input": [i.decode("utf-8") for i in f.get(3, [])], "attr": {}}
        for entry in f.get(5, []):
            e = decode_fields(entry)
            value = decode_fields(_one(e, 2, b""))
            if 1 in value:  # a list of shapes
                shapes = decode_fields(_one(value, 1)).get(7, [])
                node["attr"][_one(e, 1).decode("utf-8")] = [
                    [_int64(_one(decode_fields(d), 1, 0)) for d in decode_fields(s).get(2, [])] for s in shapes]
            else:
                node["attr"][_one(e, 1).decode("utf-8")] = _one(value, 2, b"").decode("utf-8")
        nodes.append(node)
    return nodes
