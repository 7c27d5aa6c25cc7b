"""Text form of tensors: the ``repr``/``str`` output, identical to torch's.

The module is duck-typed: it reads a tensor only through ``dim()``, ``shape``,
``numel()``, ``dtype``, integer and slice indexing and ``tolist()`` (plus
``requires_grad``/``grad_fn`` when present). All arithmetic on the values is done in
Python on the few elements that are shown, so it works on any tensor type, including
torch's (which is what the tests compare against).

    >>> import torch
    >>> format_tensor(torch.tensor([1.0, 2.5]), torch.float32)
    'tensor([1.0000, 2.5000])'
"""

import contextlib
import sys
import math

__all__ = [
    "PrintOptions",
    "format_tensor",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
]


class PrintOptions:
    """The options that control printing; see ``set_printoptions``. A plain class, not a
    dataclass: importing dataclasses would cost `import ember` a third of its time."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self, precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None):
        self.precision = precision
        self.threshold = threshold
        self.edgeitems = edgeitems
        self.linewidth = linewidth
        self.sci_mode = sci_mode

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}


PRINT_OPTS = PrintOptions()

# Values of (precision, threshold, edgeitems, linewidth) for each named profile.
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set the options used when printing tensors.

    ``profile`` ('default', 'short' or 'full') first resets precision, threshold,
    edgeitems and linewidth; the other arguments then override it. An unknown profile
    is ignored. ``sci_mode`` is always assigned, so omitting it returns to automatic
    choice of scientific notation.

        >>> set_printoptions(precision=2)
        >>> get_printoptions()["precision"]
        2
        >>> set_printoptions(profile="default")
    """
    if profile in _PROFILES:
        (
            PRINT_OPTS.precision,
            PRINT_OPTS.threshold,
            PRINT_OPTS.edgeitems,
            PRINT_OPTS.linewidth,
        ) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """Return the current print options as a dict.

        >>> get_printoptions()["threshold"]
        1000
    """
    return PRINT_OPTS.as_dict()


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager applying ``set_printoptions(**kwargs)`` and restoring after.

        >>> with printoptions(precision=1):
        ...     get_printoptions()["precision"]
        1
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# Stands for the elided middle of a summarized dimension in gathered data.
_ELIDED = object()


def _gather(t, summarize, edgeitems):
    """Nested lists of the elements to display, with ``_ELIDED`` marking cut runs."""
    if not summarize or t.dim() == 0:
        return t.tolist()
    n = t.shape[0]
    if n > 2 * edgeitems:
        if t.dim() == 1:
            return t[:edgeitems].tolist() + [_ELIDED] + t[n - edgeitems : n].tolist()
        rows = list(range(edgeitems)) + [None] + list(range(n - edgeitems, n))
    else:
        if t.dim() == 1:
            return t.tolist()
        rows = range(n)
    return [_ELIDED if i is None else _gather(t[i], summarize, edgeitems) for i in rows]


def _flatten(data, ndim, out):
    if ndim == 0:
        out.append(data)
        return out
    for item in data:
        if item is _ELIDED:
            continue
        if ndim == 1:
            out.append(item)
        else:
            _flatten(item, ndim - 1, out)
    return out


class _Formatter:
    """Chooses one format (fixed, integer-valued or scientific) and one width for all
    the displayed elements of a tensor, then formats single elements with them."""

    def __init__(self, values, floating):
        self.floating = floating
        self.sci_mode = False
        self.int_mode = True
        self.width = 1
        if not floating:
            self.width = max((len(str(v)) for v in values), default=1)
            return
        # Only nonzero finite values take part in the choice and in the width:
        # zeros, nan and inf neither align the others nor switch the notation.
        shown = [v for v in values if v != 0 and math.isfinite(v)]
        if not shown:
            return
        magnitudes = [abs(v) for v in shown]
        smallest, largest = min(magnitudes), max(magnitudes)
        self.int_mode = all(v.is_integer() for v in shown)
        wide_range = largest / smallest > 1000.0 or largest > 1.0e8
        self.sci_mode = wide_range or (not self.int_mode and smallest < 1.0e-4)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode
        self.width = max(len(self._text(v)) for v in shown)

    def _text(self, value):
        if not self.floating:
            return str(value)
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            return f"{value:.{precision}e}"
        if self.int_mode:
            text = f"{value:.0f}"
            return text + "." if math.isfinite(value) else text
        return f"{value:.{precision}f}"

    def format(self, value):
        return self._text(value).rjust(self.width)


class _ComplexFormatter:
    """Complex elements as torch prints them: the real parts aligned by one formatter,
    the imaginary parts, signed and unpadded, by another (``1.5000+2.j``)."""

    def __init__(self, values):
        self.real = _Formatter([v.real for v in values], True)
        self.imag = _Formatter([v.imag for v in values], True)
        self.width = self.real.width + self.imag.width + 1

    def format(self, value):
        imag = self.imag.format(value.imag).lstrip() + "j"
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _format_data(data, ndim, formatter, indent):
    """Text of gathered ``data`` (``ndim`` dimensions) whose first line starts at
    column ``indent``; later lines are indented to align under the first bracket."""
    if ndim == 0:
        return formatter.format(data)
    if ndim == 1:
        items = [" ..." if v is _ELIDED else formatter.format(v) for v in data]
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (formatter.width + 2)))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = [
        "..." if item is _ELIDED else _format_data(item, ndim - 1, formatter, indent + 1)
        for item in data
    ]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _body(t, indent):
    summarize = t.numel() > PRINT_OPTS.threshold
    if summarize and PRINT_OPTS.edgeitems == 0 and t.dim() > 0:
        return "[...]"
    data = _gather(t, summarize, PRINT_OPTS.edgeitems)
    values = _flatten(data, t.dim(), [])
    if getattr(t.dtype, "is_complex", False):  # stand-ins in the printing tests have none
        formatter = _ComplexFormatter(values)
    else:
        formatter = _Formatter(values, t.dtype.is_floating_point)
    return _format_data(data, t.dim(), formatter, indent)


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def _add_suffixes(text, suffixes, indent):
    """Append ``, suffix`` items, moving one to a new line when it would pass linewidth."""
    # The budget counts two columns more than the last line holds (torch's rule).
    used = len(text) - text.rfind("\n") + 1
    pieces = [text]
    for suffix in suffixes:
        if used + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            used = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            used += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def format_tensor(t, default_dtype, prefix="tensor(", suffix_of=None):
    """Return the repr of tensor ``t``, e.g. ``tensor([1, 2], dtype=torch.int32)``.

    ``default_dtype`` is the default floating dtype, whose name is never shown;
    int64 and bool are not shown either, except for empty tensors. ``suffix_of``: the
    tensor whose autograd suffixes (grad_fn, tangent) to show, when not ``t`` itself.

        >>> import torch
        >>> format_tensor(torch.tensor([[1, 2]], dtype=torch.int8), torch.float32)
        'tensor([[1, 2]], dtype=torch.int8)'
    """
    indent = len(prefix)
    original = t if suffix_of is None else suffix_of
    device = getattr(t, "device", None)  # the printing tests pass stand-ins without one
    device_type = getattr(device, "type", "cpu")
    if device_type == "meta":  # no data: torch prints the metadata only
        suffixes = ["device='meta'", f"size={tuple(t.shape)}"]
        if t.dtype != default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        return _add_suffixes(prefix + "...", suffixes + _grad_suffixes(t), indent)
    suffixes = [] if device_type == "cpu" else [f"device='{device}'"]
    if device_type != "cpu":
        t = t.detach().cpu()
    if t.numel() == 0:
        body = "[]"
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype != default_dtype:  # an empty complex64 is named too, as torch
            suffixes.append(f"dtype={t.dtype}")
    else:
        body = _body(t, indent)
        # With no edge items nothing of the shape is visible, so it is spelled out.
        if PRINT_OPTS.edgeitems == 0:
            suffixes.append(f"size={tuple(t.shape)}")
        if (t.dtype != default_dtype and _dtype_name(t.dtype) not in ("int64", "bool")
                and not _is_default_complex(t.dtype, default_dtype)):
            suffixes.append(f"dtype={t.dtype}")
    return _add_suffixes(prefix + body, suffixes + _grad_suffixes(original), indent)


def _is_default_complex(dtype, default_dtype):
    """complex64 under a float32 default (complex128 under float64) is not named, as torch."""
    return (getattr(dtype, "is_complex", False) and default_dtype.is_floating_point
            and dtype == default_dtype.to_complex())


def _grad_suffixes(t):
    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        out = [f"grad_fn=<{type(grad_fn).__name__}>"]
    else:
        out = ["requires_grad=True"] if getattr(t, "requires_grad", False) else []
    tangent = _fw_tangent(t)
    if tangent is not None:  # a dual tensor of forward AD
        out.append(f"tangent={tangent!r}")
    return out


def _fw_tangent(t):
    """A dual tensor's tangent (forward AD), else None; this module never imports ember."""
    C = sys.modules.get("ember._C")
    return C._fw_tangent(t) if C is not None and isinstance(t, C.TensorBase) else None


def _str(t):
    """The repr of an ember tensor, under ember's current default dtype."""
    import ember

    if _fw_tangent(t) is not None:  # format the primal alone: no tangents for printing's ops
        return format_tensor(ember._C._unpack_dual(t)[0], ember.get_default_dtype(), suffix_of=t)
    return format_tensor(t, ember.get_default_dtype())


def _inner(t, indent):
    """A sparse tensor's indices or values as torch prints them inside its repr: the data,
    with its size when empty, and no dtype."""
    if t.numel() == 0:
        return f"tensor([], size={tuple(t.shape)})"
    return "tensor(" + _body(t, indent + len("tensor(")) + ")"


def _sparse_suffixes(t, text, default_dtype):
    suffixes = []
    if t.dtype != default_dtype and _dtype_name(t.dtype) not in ("int64", "bool"):
        suffixes.append(f"dtype={t.dtype}")
    suffixes.append(f"layout={t.layout}")
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(text, suffixes, len("tensor("))


def format_sparse_csr(t, default_dtype):
    """The repr of a sparse CSR tensor, as torch's: crow_indices, col_indices and values on
    lines of their own, size and nnz after the values."""
    text = ""
    for i, (name, part) in enumerate((("crow_indices", t.crow_indices()), ("col_indices", t.col_indices()),
                                      ("values", t.values()))):
        head = ("tensor(" if i == 0 else "       ") + name + "="
        text += head + _inner(part.detach(), len(head)) + (",\n" if i < 2 else "")
    return _sparse_suffixes(t, text + f", size={tuple(t.shape)}, nnz={t._nnz()}", default_dtype)


def format_sparse(t, default_dtype):
    """The repr of a sparse COO tensor, as torch's:
    ``tensor(indices=tensor([[0], [1]]), values=tensor([2.]), size=(2, 2), nnz=1, layout=torch.sparse_coo)``
    with indices and values on lines of their own."""
    indices, values = t._indices().detach(), t._values().detach()
    text = "tensor(indices=" + _inner(indices, len("tensor(indices=")) + ",\n"
    text += "       values=" + _inner(values, len("       values=")) + ",\n"
    text += f"       size={tuple(t.shape)}, nnz={t._nnz()}"
    return _sparse_suffixes(t, text, default_dtype)
