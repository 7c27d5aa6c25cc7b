"""SummaryWriter: logs scalars, histograms, text, images, hyperparameters and a model's graph
to TensorBoard event files.

An event file is a TFRecord file (see _record.py) of Event protobufs (see _proto.py): first
one naming the format version, then one per logged value. Events are written
synchronously into a buffered file, which is flushed every ``max_queue`` events, when
``flush_secs`` have passed since the last flush (checked when an event is added), and on
flush()/close().
"""
from __future__ import annotations

import itertools
import math
import os
import socket
import time
import weakref
from datetime import datetime

from . import _proto
from ._record import encode_record

__all__ = ["FileWriter", "SummaryWriter"]

_file_ids = itertools.count()  # tells apart files one process opens within one second


class FileWriter:
    """Writes Events to one event file in log_dir, named
    ``events.out.tfevents.<seconds>.<hostname>.<pid>.<n><filename_suffix>``."""

    def __init__(self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        log_dir = str(log_dir)
        os.makedirs(log_dir, exist_ok=True)
        self._log_dir = log_dir
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_file_ids)}{filename_suffix}")
        self._path = os.path.join(log_dir, name)
        self._file = open(self._path, "wb")
        self._finalizer = weakref.finalize(self, self._file.close)  # unflushed events reach the disk at exit
        self._pending = 0
        self._last_flush = time.time()
        self.add_event(_proto.event(time.time(), file_version="brain.Event:2"))
        self.flush()

    def get_logdir(self) -> str:
        return self._log_dir

    @property
    def path(self) -> str:
        """The event file's path."""
        return self._path

    def add_event(self, event: bytes) -> None:
        """Appends one encoded Event."""
        if self._file.closed:
            raise RuntimeError(f"add_event(): the event file {self._path} is closed")
        self._file.write(encode_record(event))
        self._pending += 1
        if self._pending >= self._max_queue or time.time() - self._last_flush >= self._flush_secs:
            self.flush()

    def add_summary(self, summary: _proto.Writer, global_step=None, walltime=None) -> None:
        """Appends an Event holding summary, stamped with global_step and walltime (now by default)."""
        self.add_event(_proto.event(time.time() if walltime is None else walltime, global_step, summary=summary))

    def flush(self) -> None:
        if not self._file.closed:
            self._file.flush()
        self._pending = 0
        self._last_flush = time.time()

    def close(self) -> None:
        self.flush()
        self._finalizer()


def _as_float(value, what: str) -> float:
    """A Python number, a one-element tensor or array, as a float."""
    if hasattr(value, "numel") and hasattr(value, "item"):  # ember (or torch) tensor
        if value.numel() != 1:
            raise AssertionError(f"{what}: Tensor should contain one element (0 dimensions). Was given size: "
                                 f"{value.numel()} and {value.dim()} dimensions.")
        return float(value.detach().item() if hasattr(value, "detach") else value.item())
    if hasattr(value, "size") and hasattr(value, "item") and not isinstance(value, (int, float)):  # numpy
        if value.size != 1:
            raise AssertionError(f"{what}: Tensor should contain one element (0 dimensions). Was given size: "
                                 f"{value.size} and {value.ndim} dimensions.")
        return float(value.item())
    return float(value)


def _flat_float64(values):
    """values (an ember tensor, a numpy array, or nested numbers) as a 1-D float64 ember tensor."""
    import ember

    if isinstance(values, ember.Tensor):
        return values.detach().reshape(-1).to(ember.float64)
    if type(values).__module__ == "numpy" or hasattr(values, "__array_interface__"):
        import numpy

        return ember.from_numpy(numpy.ascontiguousarray(values, dtype=numpy.float64).reshape(-1))
    if hasattr(values, "detach") and hasattr(values, "tolist"):  # a tensor of another library
        values = values.detach().tolist()
    return ember.tensor(values, dtype=ember.float64).reshape(-1)


def _default_bins() -> list:
    """TensorBoard's bucket edges: +-1e-12 * 1.1**k up to 1e20, and 0."""
    v, edges = 1e-12, []
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0.0] + edges


def _bin_edges(values, bins) -> list:
    """The bucket edges for bins: a count of equal-width buckets over [min, max], a sequence
    of edges, "tensorflow" for TensorBoard's exponential buckets, or a numpy method name."""
    if isinstance(bins, str):
        if bins == "tensorflow":
            return _default_bins()
        import numpy

        return numpy.histogram_bin_edges(values.numpy(), bins=bins).tolist()
    if isinstance(bins, int):
        if bins < 1:
            raise ValueError("`bins` must be positive, when an integer")
        lo, hi = values.min().item(), values.max().item()
        if lo == hi:  # as numpy: a unit-wide range around the value
            lo, hi = lo - 0.5, hi + 0.5
        return [lo + (hi - lo) * i / bins for i in range(bins)] + [hi]
    edges = [float(e) for e in (bins.tolist() if hasattr(bins, "tolist") else bins)]
    if any(b < a for a, b in zip(edges, edges[1:])):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges


def _histogram(values, bins, max_bins=None):
    """(bucket right edges, counts) of values over the edges bins gives, trimmed to the
    non-empty buckets plus one empty bucket on the left (TensorBoard reads only right edges,
    so that bucket carries the leftmost edge). Buckets are [e_i, e_i+1), the last closed,
    as numpy.histogram; values outside the edges are not counted."""
    import ember

    edges = _bin_edges(values, bins)
    n = len(edges) - 1
    edge_t = ember.tensor(edges, dtype=ember.float64)
    index = ember.searchsorted(edge_t, values, right=True) - 1
    index[values == edges[-1]] = n - 1  # the last bucket includes its right edge
    index = index[(index >= 0) & (index < n)]
    counts = ember.bincount(index, minlength=n).tolist() if index.numel() else [0] * n
    if max_bins is not None and n > max_bins:  # merge groups of `group` neighbouring buckets
        group = n // max_bins
        counts += [0] * (-len(counts) % group)
        counts = [sum(counts[i:i + group]) for i in range(0, len(counts), group)]
        edges = edges[:-1:group] + [edges[-1]]
    nonzero = [i for i, c in enumerate(counts) if c > 0]
    if not nonzero:
        raise ValueError("The histogram is empty, please file a bug report.")
    start, end = nonzero[0], nonzero[-1] + 1
    if start > 0:
        counts, limits = counts[start - 1:end], edges[start:end + 1]
    else:
        counts, limits = [0] + counts[:end], edges[:end + 1]
    return limits, [float(c) for c in counts]


def _as_tensor(values):
    """values (an ember tensor, a numpy array, a tensor of another library) as an ember
    tensor, without gradient."""
    import ember

    if isinstance(values, ember.Tensor):
        return values.detach()
    if type(values).__module__ == "numpy" or hasattr(values, "__array_interface__"):
        import numpy

        return ember.from_numpy(numpy.ascontiguousarray(values))
    if hasattr(values, "detach") and hasattr(values, "tolist"):  # a tensor of another library
        values = values.detach()
        dtype = str(values.dtype).split(".")[-1]
        return ember.tensor(values.tolist(), dtype=getattr(ember, dtype, None))
    return ember.tensor(values)


def _image_grid(images, ncols: int = 8):
    """(N, C, H, W) images tiled row by row into one (C, H * rows, W * cols) image, ncols
    (at most 8) to a row, gray images made RGB, the empty cells black."""
    import ember

    if images.size(1) == 1:
        images = images.expand(-1, 3, -1, -1)
    if images.dim() != 4 or images.size(1) not in (3, 4):
        raise AssertionError("add_images: images need 1, 3 or 4 channels, got shape "
                             f"{list(images.shape)}")
    n, c, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    if nrows * ncols > n:
        images = ember.cat([images, images.new_zeros((nrows * ncols - n, c, h, w))])
    # (rows, cols, C, H, W) -> (C, rows, H, cols, W)
    return images.reshape(nrows, ncols, c, h, w).permute(2, 0, 3, 1, 4).reshape(c, nrows * h, ncols * w)


def _to_hwc(tensor, dataformats: str):
    """An image tensor laid out as dataformats (a permutation of 'NCHW', 'CHW', 'HWC',
    'HW', ...) as (H, W, C), C being 3 or 4 (a gray image repeated thrice); N images are
    tiled into one grid."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise AssertionError(f"You can not use the same dimension shordhand twice.         input_format: "
                             f"{dataformats}")
    if tensor.dim() != len(fmt):
        raise AssertionError(f"size of input tensor and input format are different.         tensor shape: "
                             f"{tuple(tensor.shape)}, input_format: {dataformats}")
    if len(fmt) == 4:
        return _image_grid(tensor.permute(*[fmt.find(c) for c in "NCHW"])).permute(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.permute(*[fmt.find(c) for c in "HWC"])
        return hwc.expand(-1, -1, 3) if hwc.size(2) == 1 else hwc
    hw = tensor.permute(*[fmt.find(c) for c in "HW"])
    return hw.unsqueeze(2).expand(-1, -1, 3)


def _encode_png(hwc, rescale: float = 1.0):
    """(H, W, C) uint8 pixels as PNG bytes, through Pillow."""
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError("SummaryWriter.add_image needs Pillow to encode images as PNG: pip install pillow") from error
    import io

    h, w, c = hwc.shape
    mode = {1: "L", 3: "RGB", 4: "RGBA"}.get(c)
    if mode is None:
        raise ValueError(f"add_image: an image needs 1, 3 or 4 channels, got {c}")
    image = Image.frombytes(mode, (w, h), bytes(hwc.contiguous().reshape(-1).tolist()))
    if rescale != 1:
        image = image.resize((int(w * rescale), int(h * rescale)), Image.LANCZOS)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return image.height, image.width, c, out.getvalue()


def _image_entry(tag: str, img_tensor, dataformats: str, rescale: float = 1.0):
    import ember

    hwc = _to_hwc(_as_tensor(img_tensor), dataformats)
    if hwc.dtype != ember.uint8:  # floats are in [0, 1]
        hwc = (hwc.to(ember.float32) * 255).clamp(0, 255).to(ember.uint8)
    return _proto.image_value(tag, *_encode_png(hwc, rescale))


class SummaryWriter:
    """Writes entries for TensorBoard into event files under log_dir.

    log_dir defaults to ``runs/<Mon>DD_HH-MM-SS_<hostname><comment>``; ``comment`` is
    ignored when log_dir is given. ``purge_step`` tells TensorBoard to hide the events of
    an earlier run at steps >= purge_step (a restarted run logging again from there).
    Events reach the file every ``max_queue`` events, every ``flush_secs`` seconds, and on
    flush() and close(). A writer is a context manager that closes on exit.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as log_dir, SummaryWriter(log_dir) as w:
    ...     w.add_scalar("loss", 0.5, global_step=1)
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = None
        self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        """The writer of log_dir's event file, opened again after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                most_recent_step = self.purge_step
                now = time.time()
                self.file_writer.add_event(_proto.event(now, most_recent_step, file_version="brain.Event:2"))
                self.file_writer.add_event(_proto.event(now, most_recent_step,
                                                        session_log=_proto.session_log(_proto.SESSION_START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """Logs scalar_value (a number or a one-element tensor) under tag at global_step.
        The classic summary stores a float32; new_style stores a tensor for the scalars
        plugin, in float64 with double_precision."""
        value = _as_float(scalar_value, "add_scalar()")
        if new_style:
            entry = _proto.tensor_value(tag, _proto.scalar_tensor(value, double_precision),
                                        _proto.plugin_metadata("scalars"))
        else:
            entry = _proto.simple_value(tag, value)
        self._get_file_writer().add_summary(_proto.summary(entry), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Logs several scalars under main_tag, one run each: the value for key k goes to
        the subdirectory ``<log_dir>/<main_tag with '/' as '_'>_<k>``, so that TensorBoard
        draws them in one chart."""
        walltime = time.time() if walltime is None else walltime
        log_dir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            run_dir = log_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(run_dir)
            if writer is None:
                writer = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[run_dir] = writer
            entry = _proto.simple_value(main_tag, _as_float(scalar_value, "add_scalars()"))
            writer.add_summary(_proto.summary(entry), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        """Logs the histogram of values (a tensor, array or list). bins: "tensorflow"
        (TensorBoard's exponential buckets), a number of equal-width buckets, a sequence of
        edges, or a numpy.histogram_bin_edges method name."""
        flat = _flat_float64(values)
        if flat.numel() == 0:
            raise ValueError("The input has no element.")
        limits, counts = _histogram(flat, bins, max_bins)
        entry = _proto.histogram_value(tag, flat.min().item(), flat.max().item(), float(flat.numel()),
                                       flat.sum().item(), flat.dot(flat).item(), limits, counts)
        self._get_file_writer().add_summary(_proto.summary(entry), global_step, walltime)

    def add_histogram_raw(self, tag: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None) -> None:
        """Logs a histogram computed elsewhere: bucket_limits are the buckets' right edges."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        entry = _proto.histogram_value(tag, float(min), float(max), float(num), float(sum), float(sum_squares),
                                       [float(x) for x in bucket_limits], [float(x) for x in bucket_counts])
        self._get_file_writer().add_summary(_proto.summary(entry), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Logs text (markdown) for the text plugin, under ``<tag>/text_summary``."""
        entry = _proto.tensor_value(tag + "/text_summary", _proto.string_tensor(text_string),
                                    _proto.plugin_metadata("text"))
        self._get_file_writer().add_summary(_proto.summary(entry), global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        """Logs an image as PNG (needs Pillow). img_tensor is uint8 (0-255) or floating
        (0-1), laid out as dataformats: 'CHW' (default), 'HWC' or 'HW', C being 1, 3 or 4."""
        entry = _image_entry(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(_proto.summary(entry), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        """Logs a batch of images as one PNG grid, 8 to a row (needs Pillow); dataformats
        'NCHW' (default) or 'NHWC'."""
        entry = _image_entry(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(_proto.summary(entry), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """Logs one run's hyperparameters and its final metrics for TensorBoard's HParams
        plugin, into the subdirectory run_name (default: the current time) of log_dir:
        the experiment (hparam and metric names), the session start (the values) and
        end, and each metric as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, start, end = _hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        log_dir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=log_dir) as w_hp:
            for entry in (experiment, start, end):
                w_hp.file_writer.add_summary(entry, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """Logs model's graph for TensorBoard's Graphs tab: one forward call on
        input_to_model (a tensor or a tuple of arguments) traced in eval mode (the mode is
        restored after), nodes named by module scope ("Net/Linear[fc]/addmm"). verbose
        prints the nodes. use_strict_trace is accepted for torch's signature (ember's
        trace records any output structure).

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as log_dir, SummaryWriter(log_dir) as w:
        ...     w.add_graph(ember.nn.Linear(3, 2), ember.randn(4, 3))
        """
        from ._graph import build_graph, run_metadata

        try:
            graph_def = build_graph(model, input_to_model, verbose)
        except Exception:
            print("Error occurs, No graph saved")  # torch's writer says so too, then raises
            raise
        writer = self._get_file_writer()
        now = time.time()
        writer.add_event(_proto.event(now, graph_def=graph_def))
        writer.add_event(_proto.event(now, tagged_run_metadata=("step1", run_metadata())))

    def flush(self) -> None:
        """Writes every pending event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flushes and closes every event file; logging again opens a new one."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()


_HPARAMS_TYPE = {str: 1, bool: 2, float: 3}  # DataType: STRING, BOOL, FLOAT64


def _hparams_summary(tag: str, field: int, message: _proto.Writer) -> _proto.Writer:
    """A Summary of one metadata-only value whose hparams plugin content is
    HParamsPluginData (version 0) holding message in field."""
    content = bytes(_proto.Writer().message(field, message))
    return _proto.summary(_proto.metadata_value(tag, _proto.plugin_metadata("hparams", content)))


def _hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None):
    """The three Summaries of add_hparams: experiment, session start and session end."""
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing else.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    start, infos = _proto.Writer(), []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if hasattr(v, "numel") and hasattr(v, "item"):  # a tensor: its first element
            v = float(_as_tensor(v).reshape(-1)[0].item())
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            v = float(v)
        elif not isinstance(v, (str, bool)):
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        # torch's writer logs bools as numbers (bool is an int); so does this one
        kind = str if isinstance(v, str) else float
        value = v if kind is str else float(v)
        start.message(1, _proto.Writer().string(1, k).message(2, _proto.struct_value(value)))
        info = _proto.Writer().string(1, k).varint(4, _HPARAMS_TYPE[kind])
        if k in hparam_domain_discrete:
            domain = _proto.Writer()
            for d in hparam_domain_discrete[k]:
                domain.message(1, _proto.struct_value(d if kind is str else float(d)))
            info.message(5, domain)
        infos.append(info)
    experiment = _proto.Writer()
    for info in infos:
        experiment.message(4, info)
    for k in metric_dict:
        experiment.message(5, _proto.Writer().message(1, _proto.Writer().string(2, k)))
    return (_hparams_summary("_hparams_/experiment", 2, experiment),
            _hparams_summary("_hparams_/session_start_info", 3, start),
            _hparams_summary("_hparams_/session_end_info", 4, _proto.Writer().varint(1, 1)))
