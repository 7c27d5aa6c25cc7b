"""Math and statistics ops composed of ember's native ops (no kernels of their own, so
autograd differentiates them where torch does): set membership, quantiles, covariance,
histograms, integer gcd/lcm, float bit manipulation (frexp, nextafter), numerical
derivatives and integrals, renorm, index_reduce, put, dist and torch's window
functions. ember/__init__.py exports TOP_LEVEL, ember/_tensor.py installs METHODS."""
from __future__ import annotations

import math
import warnings

from . import _C
from ._functional import broadcast_tensors
from .autograd import Function, grad_mode
from .linalg import _named, _structseq, _type_name
from . import _autocast

_histogram = _structseq("histogram", "_histogram", ["hist", "bin_edges"])
_histogramdd = _structseq("histogramdd", "_histogramdd", ["hist", "bin_edges"])
_frexp = _structseq("frexp", "_frexp", ["mantissa", "exponent"])
RETURN_TYPES = (_histogram, _histogramdd, _frexp)  # ember.return_types names them too
for _type in RETURN_TYPES:
    _type.__module__ = __name__  # pickle finds them here

_INTEGRAL = frozenset({_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64})
_FLOATING = frozenset({_C.float16, _C.bfloat16, _C.float32, _C.float64})


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


def _need_tensor(fn, name, position, value):
    if not _is_tensor(value):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def _float_of(x):
    """x itself when floating, else x as the default float dtype (torch's int -> float rule)."""
    return x if x.dtype in _FLOATING else x.to(_C.get_default_dtype())


def _out(result, out):
    """torch's out= for a result computed apart: cast (same kind or wider), resized, copied."""
    if out is None:
        return result
    from .linalg import _into

    if not _C.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{_type_name(out.dtype)}")
    return _into(out, result.to(out.dtype), None)


def _inplace(self, result):
    """self overwritten with result, as torch's in-place ops: same shape, castable dtype."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if not _C.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{_type_name(self.dtype)}")
    return self.copy_(result)


class _NotDifferentiable(Function):
    """Passes a result through; backward raises torch's error for an op without a derivative."""

    @staticmethod
    def forward(ctx, name, result, *inputs):
        ctx.name = name
        return result.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.name} is not implemented")


class _GradientToSecond(Function):
    """Returns its first argument; the gradient goes to the second (nextafter's convention)."""

    @staticmethod
    def forward(ctx, result, source):
        return result.clone()

    @staticmethod
    def backward(ctx, grad):
        return None, grad


def _not_differentiable(name, result, *inputs):
    """result, recorded (as torch records it) as an op whose backward raises when any input requires grad."""
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in inputs if _is_tensor(t)):
        return _NotDifferentiable.apply(name, result, *[t for t in inputs if _is_tensor(t)])
    return result


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


# ---- set membership ----

def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of elements is in test_elements (either may be a number).

    >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 5])).tolist()
    [False, True, False]
    """
    if not _is_tensor(elements) and not _is_tensor(test_elements):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__}), but expected at least one Tensor")
    common = _C.result_type(elements, test_elements)
    for x in (elements, test_elements):
        if (x.dtype if _is_tensor(x) else common) == _C.bool or isinstance(x, bool):
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    e = elements.to(common) if _is_tensor(elements) else _C.tensor(elements, dtype=common)
    t = test_elements.to(common) if _is_tensor(test_elements) else _C.tensor(test_elements, dtype=common)
    t = t.detach().reshape(-1)
    if t.dtype in _FLOATING:
        t = t[t == t]  # NaN matches nothing, and would mislead the binary search
    t = t.sort().values
    e = e.detach()
    if t.numel() == 0:
        found = _C.zeros(e.shape, dtype=_C.bool)
    else:
        at = _C.searchsorted(t, e.reshape(-1)).clamp(max=t.numel() - 1)
        found = (t[at] == e.reshape(-1)).reshape(e.shape)
    return _out(found.logical_not() if invert else found, out)


# ---- quantiles ----

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, out, ignore_nan):
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if _is_tensor(q):
        if q.dtype != input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.dim() > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.numel() and bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        scalar_q, qs = q.dim() == 0, q.detach().reshape(-1)
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_fmt(q)}")
        scalar_q, qs = True, _C.tensor([float(q)], dtype=input.dtype)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if dim is None:
        values = input.reshape(-1)
        kept = [1] * input.dim() if keepdim else []
    else:
        d = _wrap_dim(dim, input.dim())
        values = input.reshape(1) if input.dim() == 0 else input.movedim(d, -1)
        kept = list(input.shape)
        if kept:
            if keepdim:
                kept[d] = 1
            else:
                del kept[d]
    values = values.sort(dim=-1).values  # NaN sorts last
    last = values.shape[-1] - 1
    nan_last = values[..., -1:].detach().isnan()
    if ignore_nan:
        count = values.detach().isnan().logical_not().sum(-1, keepdim=True)
        rank = qs * (count - 1).to(qs.dtype)
        rank = rank.masked_fill(rank < 0, last)  # an all-NaN row gives NaN
    else:
        rank = (qs * last).expand(*values.shape[:-1], qs.numel())
        rank = rank.masked_fill(nan_last, last)  # any NaN gives NaN
    if interpolation == "nearest":
        rank = rank.round()
    below = rank.floor().long()
    above = rank.ceil().long()
    if interpolation == "lower":
        result = values.gather(-1, below)
    elif interpolation == "higher" or interpolation == "nearest":
        result = values.gather(-1, above)
    else:
        weight = _C.full_like(rank, 0.5) if interpolation == "midpoint" else rank - below.to(rank.dtype)
        result = _C.lerp(values.gather(-1, below), values.gather(-1, above), weight)
    result = result.movedim(-1, 0)  # (Q, ...)
    result = result.reshape(kept) if scalar_q else result.reshape([qs.numel()] + kept)
    return _out(result, out)


@_autocast.fp32
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles of input (over dim, or all of it), interpolating between the
    two nearest values as interpolation says; a NaN makes its slice's result NaN.

    >>> ember.quantile(ember.tensor([1., 2., 3., 4.]), 0.5).item()
    2.5
    """
    return _quantile(input, q, dim, keepdim, interpolation, out, False)


@_autocast.fp32
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile ignoring NaNs (NaN only where a slice is all NaN).

    >>> ember.nanquantile(ember.tensor([1., float('nan'), 3.]), 0.5).item()
    2.0
    """
    return _quantile(input, q, dim, keepdim, interpolation, out, True)


# ---- covariance ----

def _check_weights(kind, w, observations, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with {w.dim()} "
                           "dimensions")
    if integral and w.dtype not in _INTEGRAL:
        raise RuntimeError(f"cov(): expected {kind} to have integral dtype but got {kind} with "
                           f"{_type_name(w.dtype)} dtype")
    if not integral and w.dtype not in _FLOATING:
        raise RuntimeError(f"cov(): expected {kind} to have floating point dtype but got {kind} with "
                           f"{_type_name(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {observations}")
    if w.numel() and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of input (observations in the
    columns); correction=1 is Bessel's; fweights count observations, aweights weigh them.

    >>> ember.cov(ember.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype == _C.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input  # (variables, observations)
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = _C.tensor(observations, dtype=_C.int64)
        mean = x.sum(1) / w_sum
    else:
        w_sum = w.sum()
        if float(w_sum) == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        mean = (x * w).sum(1) / w_sum
    if w is None or correction == 0:
        norm = w_sum - correction
    elif aweights is None:
        norm = w_sum - correction
    else:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    if float(norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm = norm.clamp(min=0)
    centered = x - mean.unsqueeze(1)
    c = centered.mm((centered if w is None else centered * w).t().conj())  # conj: a complex x's Hermitian product
    return c.div(norm).squeeze()


def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of input.

    >>> ember.corrcoef(ember.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.dtype.is_complex:  # each part clipped, as torch does
        return _C.complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


# ---- histograms ----

def _fmt(v):
    return f"{v:g}"


def _histogramdd_impl(fn, input, bins, range, weight, density):
    """input (N, D) -> (hist of D dims, list of D edge tensors)."""
    if input.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f'"histogramdd" not implemented for \'{_type_name(input.dtype)}\'')
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    dims = input.shape[-1]
    points = input.detach().reshape(-1, dims)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               "input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(input.shape)} and weight with shape {list(weight.shape)}")
        if weight.dtype != input.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({_type_name(input.dtype, True)}), and "
                               f"weight({_type_name(weight.dtype, True)})")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should have {2 * dims} "
                           f"elements, but got {len(range)}")
    edges = []
    for d, b in enumerate(bins):
        if _is_tensor(b):
            if b.dim() != 1:
                raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                                   f"{b.dim()} dimensions in the bins tensor for dimension {d}")
            if b.dtype != input.dtype:
                raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                                   f"got input with dtype {_type_name(input.dtype, True)} and bins for dimension {d} "
                                   f"with dtype {_type_name(b.dtype, True)}")
            if b.numel() == 0:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got "
                                   f"{b.numel()} elements in the bins tensor for dimension {d}")
            edges.append(b.detach().contiguous())
            continue
        if b <= 0:
            raise RuntimeError(f"{fn}: bins must be > 0, but got {b} for dimension {d}")
        if range is not None:
            low, high = float(range[2 * d]), float(range[2 * d + 1])
        elif points.shape[0] == 0:
            low, high = 0.0, 1.0
        else:
            low, high = float(points[:, d].min()), float(points[:, d].max())
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_fmt(low)} max "
                               f"{_fmt(high)} for dimension {d}")
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(low)}, {_fmt(high)}] is not finite")
        if low == high:
            low, high = low - 0.5, high + 0.5
        edges.append(_C.linspace(low, high, b + 1, dtype=input.dtype))
    flat = _C.zeros(points.shape[0], dtype=_C.int64)
    inside = _C.ones(points.shape[0], dtype=_C.bool)
    for d, e in enumerate(edges):
        x = points[:, d].contiguous()
        n = e.numel() - 1
        at = (_C.searchsorted(e, x, right=True) - 1).clamp(max=max(n - 1, 0))  # the last edge closes the last bin
        inside &= (x >= e[0]) & (x <= e[-1])
        flat = flat * max(n, 1) + at.clamp(min=0)
    counts = [max(e.numel() - 1, 0) for e in edges]
    w = _C.ones(points.shape[0], dtype=input.dtype) if weight is None else weight.detach().reshape(-1)
    total = 1
    for c in counts:
        total *= c
    hist = _C.zeros(total, dtype=input.dtype)
    if total:
        hist.index_add_(0, flat[inside], w[inside])
    hist = hist.reshape(counts)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[d] = -1
            hist = hist / e.diff().reshape(shape)
    return hist, edges


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """A histogram of input's values: bins equal bins over range (default: the values'
    min and max), or the edges in a 1-D tensor; returns (hist, bin_edges).

    >>> ember.histogram(ember.tensor([1., 2., 1.]), bins=2).hist.tolist()
    [2.0, 1.0]
    """
    if input.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f'"histogramdd" not implemented for \'{_type_name(input.dtype)}\'')
    hist, edges = _histogramdd_impl("torch.histogram()", input.reshape(-1, 1), [bins], range,
                                    None if weight is None else weight.reshape(-1), density)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogram(): weight should have the same shape as input")
    return _named(_histogram, (_not_differentiable("histogram", hist, input, weight), edges[0]), out)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """A D-dimensional histogram of the points in input (..., D): bins an int, D ints, or
    D edge tensors; returns (hist, bin_edges) with one edge tensor per dimension.

    >>> ember.histogramdd(ember.tensor([[0., 0.], [1., 1.]]), bins=[2, 2]).hist.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    dims = input.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    hist, edges = _histogramdd_impl("torch.histogram()", input, bins, range, weight, density)
    return _histogramdd((hist, tuple(edges)))


# ---- integers ----

def _check_integral(fn, *tensors):
    for t in tensors:
        if t.dtype not in _INTEGRAL:
            raise NotImplementedError(f'"{fn}_cpu" not implemented for \'{_type_name(t.dtype)}\'')


def _gcd(a, b):
    a, b = a.abs(), b.abs()
    a, b = broadcast_tensors(a, b)
    zero = _C.zeros((), dtype=b.dtype)
    one = _C.ones((), dtype=b.dtype)
    while True:  # Euclid; at most ~90 rounds for int64 (Fibonacci worst case)
        moving = b != 0
        if not bool(moving.any()):
            return a
        a, b = _C.where(moving, b, a), _C.where(moving, _C.fmod(a, _C.where(moving, b, one)), zero)


def gcd(input, other, *, out=None):
    """The greatest common divisor of integer tensors, elementwise (gcd(0, 0) is 0).

    >>> ember.gcd(ember.tensor([12, -9, 0]), ember.tensor([18, 6, 0])).tolist()
    [6, 3, 0]
    """
    _need_tensor("gcd", "other", 2, other)
    common = _C.promote_types(input.dtype, other.dtype)
    _check_integral("gcd", input, other)
    return _out(_gcd(input.to(common), other.to(common)), out)


def lcm(input, other, *, out=None):
    """The least common multiple of integer tensors, elementwise (0 where either is 0).

    >>> ember.lcm(ember.tensor([4, 6, 0]), ember.tensor([6, 4, 5])).tolist()
    [12, 12, 0]
    """
    _need_tensor("lcm", "other", 2, other)
    common = _C.promote_types(input.dtype, other.dtype)
    _check_integral("lcm", input, other)
    a, b = input.to(common), other.to(common)
    g = _gcd(a, b)
    one = _C.ones((), dtype=common)
    # in int64, as torch's (which wraps only when storing the result)
    multiple = (_C.div(a, _C.where(g == 0, one, g), rounding_mode="trunc").long() * b.long()).abs().to(common)
    return _out(_C.where(g == 0, _C.zeros((), dtype=common), multiple), out)


def gcd_(input, other):
    """In-place gcd."""
    _need_tensor("gcd_", "other", 2, other)
    return _inplace(input, gcd(input, other))


def lcm_(input, other):
    """In-place lcm."""
    _need_tensor("lcm_", "other", 2, other)
    return _inplace(input, lcm(input, other))


# ---- step and float bits ----

def heaviside(input, values, *, out=None):
    """The Heaviside step: 0 for input < 0, values where input == 0, 1 for input > 0.
    Not differentiable (as in torch).

    >>> ember.heaviside(ember.tensor([-1., 0., 2.]), ember.tensor([0.5])).tolist()
    [0.0, 0.5, 1.0]
    """
    _need_tensor("heaviside", "values", 2, values)
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    x, v = input.detach(), values.detach()
    return _out(_not_differentiable("heaviside", _C.where(x == 0, v, (x > 0).to(x.dtype)), input, values), out)


def heaviside_(input, values):
    """In-place heaviside."""
    _need_tensor("heaviside_", "values", 2, values)
    return _inplace(input, heaviside(input, values))


# float dtype -> (integer dtype of its width, mantissa bits, exponent mask)
_BITS = {_C.float32: (_C.int32, 23, 0xFF), _C.float64: (_C.int64, 52, 0x7FF)}


def frexp(input, *, out=None):
    """input as mantissa * 2**exponent, the mantissa's magnitude in [0.5, 1) (0, inf and
    NaN keep exponent 0); returns (mantissa, exponent) with an int32 exponent.

    >>> ember.frexp(ember.tensor([8., 0.75])).exponent.tolist()
    [4, 0]
    """
    if input.dtype not in _FLOATING:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    work = input if input.dtype in _BITS else input.float()
    int_type, shift, mask = _BITS[work.dtype]
    x = work.detach().contiguous()
    tiny = (x != 0) & (((x.view(int_type) >> shift) & mask) == 0)  # subnormal: scale it into the normal range
    x = _C.where(tiny, x * 2.0 ** 64, x)
    field = ((x.view(int_type) >> shift) & mask) - _C.where(tiny, 64, 0).to(int_type)
    special = (x == 0) | ~x.isfinite()
    exponent = _C.where(special, 0, field - (mask // 2 - 1)).to(_C.int32)
    # mantissa = input * 2**-exponent, in two exact power-of-two factors that cannot overflow
    half = exponent.div(2, rounding_mode="floor")
    mantissa = work * _C.pow(2.0, (-half).to(work.dtype)) * _C.pow(2.0, (half - exponent).to(work.dtype))
    return _named(_frexp, (mantissa.to(input.dtype), exponent), out)


def ldexp(input, other, *, out=None):
    """input * 2**other.

    >>> ember.ldexp(ember.tensor([1.]), ember.tensor([3])).item()
    8.0
    """
    _need_tensor("ldexp", "other", 2, other)
    common = _C.result_type(input, other)
    common = common if common in _FLOATING or common.is_complex else _C.get_default_dtype()
    return _out(input.to(common) * other.to(common).exp2(), out)


def ldexp_(input, other):
    """In-place ldexp."""
    _need_tensor("ldexp_", "other", 2, other)
    result = ldexp(input, other)
    if not _C.can_cast(result.dtype, input.dtype):
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_type_name(input.dtype)}")
    return _inplace(input, result)


_SAME_WIDTH_INT = {_C.float16: _C.int16, _C.bfloat16: _C.int16, _C.float32: _C.int32, _C.float64: _C.int64}


def nextafter(input, other, *, out=None):
    """The next representable float after input in the direction of other.

    >>> ember.nextafter(ember.tensor([1.]), ember.tensor([2.])).item() > 1
    True
    """
    _need_tensor("nextafter", "other", 2, other)
    common = _C.promote_types(input.dtype, other.dtype)
    if common not in _FLOATING:
        raise NotImplementedError(f'"nextafter_cpu" not implemented for \'{_type_name(common)}\'')
    moving = broadcast_tensors(input.to(common), other)[0]  # the gradient passes to input unchanged, as torch's
    x, y = broadcast_tensors(input.detach().to(common), other.detach().to(common))
    x = x.contiguous()
    int_type = _SAME_WIDTH_INT[common]
    # sign-magnitude: one step of the bits moves away from zero, minus one toward it
    away = (y > x) == (x > 0)
    stepped = (x.view(int_type) + _C.where(away, 1, -1).to(int_type)).view(common)
    smallest = _C.ones((), dtype=int_type).view(common)  # the smallest subnormal
    result = _C.where(x == 0, _C.copysign(smallest, y), stepped)
    result = _C.where(x == y, y, result)
    result = _C.where(x.isnan() | y.isnan(), x + y, result)
    if moving.requires_grad and grad_mode.is_grad_enabled():
        result = _GradientToSecond.apply(result, moving)
    return _out(result, out)


def nextafter_(input, other):
    """In-place nextafter."""
    _need_tensor("nextafter_", "other", 2, other)
    return _inplace(input, nextafter(input, other))


# ---- elementwise formulas ----

def deg2rad(input, *, out=None):
    """Degrees to radians (integers become the default float dtype).

    >>> round(ember.deg2rad(ember.tensor([180.])).item(), 5)
    3.14159
    """
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return _out(_float_of(input) * (math.pi / 180), out)


def rad2deg(input, *, out=None):
    """Radians to degrees (integers become the default float dtype).

    >>> round(ember.rad2deg(ember.tensor([math.pi])).item(), 3)
    180.0
    """
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return _out(_float_of(input) * (180 / math.pi), out)


def _inplace_of(fn):
    def method(input):
        return _inplace(input, fn(input))

    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place {fn.__name__}."
    return method


deg2rad_ = _inplace_of(deg2rad)
rad2deg_ = _inplace_of(rad2deg)


def xlogy_(input, other):
    """In-place xlogy."""
    return input.xlogy_(other)


def dist(input, other, p=2):
    """The p-norm of input - other.

    >>> ember.dist(ember.tensor([0., 0.]), ember.tensor([3., 4.])).item()
    5.0
    """
    _need_tensor("dist", "other", 2, other)
    diff = input - other
    if diff.dtype not in _FLOATING and not diff.dtype.is_complex:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_type_name(diff.dtype)} instead.")
    from .linalg import vector_norm

    return vector_norm(diff, p)


def renorm(input, p, dim, maxnorm):
    """input with each slice along dim whose p-norm exceeds maxnorm scaled down to it.

    >>> ember.renorm(ember.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.).tolist()[1]
    [0.30000001192092896, 0.4000000059604645]
    """
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_fmt(maxnorm)}")
    d = _wrap_dim(dim, input.dim())
    if input.dtype not in _FLOATING and not input.dtype.is_complex:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(input.dtype)}")
    from .linalg import vector_norm

    norm = vector_norm(input, p, [i for i in range(input.dim()) if i != d], keepdim=True)
    factor = _C.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor.to(input.dtype)


def renorm_(input, p, dim, maxnorm):
    """In-place renorm."""
    return _inplace(input, renorm(input, p, dim, maxnorm))


# ---- indexing ----

def put_(input, index, source, accumulate=False):
    """Writes source into input at the flat (row-major) indices index, negative ones from
    the end; with accumulate adds instead. Returns input.

    >>> ember.zeros(2, 2).put_(ember.tensor([3]), ember.tensor([1.])).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    if index.dtype != _C.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_type_name(index.dtype)}")
    if source.dtype != input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_type_name(input.dtype)} and source.dtype = {_type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = input.numel()
    flat = index.reshape(-1)
    if flat.numel() == 0:
        return input
    bad = (flat >= n) | (flat < -n)
    if bool(bad.any()):
        raise IndexError(f"out of range: tried to access index {int(flat[bad][0])} on a tensor of {n} elements.")
    flat = _C.where(flat < 0, flat + n, flat)
    target = input.view(1) if input.dim() == 0 else input  # a view: writing it writes input
    coords = []
    for size in reversed(target.shape):  # the flat index as one index per dimension
        coords.append(flat % size)
        flat = flat.div(size, rounding_mode="floor")
    target.index_put_(tuple(reversed(coords)), source.reshape(-1), accumulate)
    return input


def put(input, index, source, accumulate=False):
    """Out-of-place put_: a copy of input with source written at the flat indices."""
    return put_(input.clone(), index, source, accumulate)


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    """Reduces the slices of source into input's slices index[i] along dim with reduce
    ('prod', 'mean', 'amax' or 'amin'); include_self counts input's own values in.

    >>> ember.ones(3).index_reduce_(0, ember.tensor([0, 0]), ember.tensor([2., 3.]), 'prod').tolist()
    [6.0, 1.0, 1.0]
    """
    return _index_reduce(input, dim, index, source, reduce, include_self, True)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Out-of-place index_reduce_."""
    return _out(_index_reduce(input, dim, index, source, reduce, include_self, False), out)


def _index_reduce(input, dim, index, source, reduce, include_self, in_place):
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dtype not in (_C.int32, _C.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_type_name(index.dtype)}")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{_type_name(index.dtype)} and size: {list(index.shape)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_type_name(input.dtype)}) and source "
                           f"({_type_name(source.dtype)}) must have the same scalar type")
    d = _wrap_dim(dim, input.dim())
    if source.dim() != max(input.dim(), 1) and not (source.dim() == 0 and input.dim() <= 1):
        if d >= source.dim():
            raise RuntimeError(f"index_reduce_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                               f"{source.dim()}")
    src = source.reshape(1) if source.dim() == 0 else source
    dst = input.reshape(1) if input.dim() == 0 else input
    if d >= src.dim():
        raise RuntimeError(f"index_reduce_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{src.dim()}")
    if index.numel() != src.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({src.shape[d]}), for dim: {d}")
    other_src = [s for i, s in enumerate(src.shape) if i != d]
    other_dst = [s for i, s in enumerate(dst.shape) if i != d]
    if src.dim() != dst.dim() or other_src != other_dst:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    idx = index.reshape(-1).long()
    if idx.numel() and bool(((idx < 0) | (idx >= dst.shape[d])).any()):
        raise IndexError("index out of range in self")
    shape = [1] * src.dim()
    shape[d] = -1
    idx = idx.reshape(shape).expand(src.shape)
    if reduce == "prod" and grad_mode.is_grad_enabled() and (dst.requires_grad or src.requires_grad):
        result = _IndexReduceProd.apply(dst.clone() if in_place else dst, d, idx, src, include_self)
        return input.copy_(result.reshape(input.shape)) if in_place else result.reshape(input.shape)
    if in_place:
        if dst is input:
            return input.scatter_reduce_(d, idx, src, reduce, include_self=include_self)
        return input.copy_(dst.scatter_reduce(d, idx, src, reduce, include_self=include_self).reshape(()))
    return dst.scatter_reduce(d, idx, src, reduce, include_self=include_self).reshape(input.shape)


class _IndexReduceProd(Function):
    """scatter_reduce's prod with a gradient (the native op has none)."""

    @staticmethod
    def forward(ctx, dst, d, idx, src, include_self):
        ctx.save_for_backward(dst, idx, src)
        ctx.d, ctx.include_self = d, include_self
        return dst.scatter_reduce(d, idx, src, "prod", include_self=include_self)

    @staticmethod
    def backward(ctx, grad):
        """d(product)/d(factor) is the product of the slot's other factors: the nonzero
        factors' product over the factor when no factor is zero, that product for the
        one zero factor, and 0 when two or more are zero."""
        dst, idx, src = ctx.saved_tensors
        d, include_self = ctx.d, ctx.include_self
        own = _C.where(dst == 0, 1, dst) if include_self else _C.ones_like(dst)
        nonzero_product = own.scatter_reduce(d, idx, _C.where(src == 0, 1, src), "prod", include_self=True)
        own_zeros = (dst == 0).long() if include_self else _C.zeros(dst.shape, dtype=_C.int64)
        zeros = own_zeros.scatter_add(d, idx, (src == 0).long())

        def others(x, zeros_at, product_at):
            lone_zero = _C.where((zeros_at == 1) & (x == 0), product_at, 0)
            return _C.where(zeros_at == 0, product_at / _C.where(x == 0, 1, x), lone_zero)

        grad_src = grad.gather(d, idx) * others(src, zeros.gather(d, idx), nonzero_product.gather(d, idx))
        if include_self:
            grad_dst = grad * others(dst, zeros, nonzero_product)
        else:
            hit = _C.zeros(dst.shape, dtype=_C.int64).scatter_add(d, idx, _C.ones(idx.shape, dtype=_C.int64)) > 0
            grad_dst = _C.where(hit, 0, grad)
        return grad_dst, None, None, grad_src, None


# ---- numerical derivatives and integrals ----

def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the derivative of input along each of dim (default: all) by central
    differences inside and one-sided ones of edge_order (1 or 2) at the ends; spacing is
    a number, one per dim, or one coordinate tensor per dim. Returns a tuple.

    >>> ember.gradient(ember.tensor([1., 4., 9., 16.]))[0].tolist()
    [3.0, 4.0, 6.0, 7.0]
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [_wrap_dim(d, input.dim()) for d in ([dim] if isinstance(dim, int) else dim)]
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim is None:
                raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                                   f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got "
                                   f"a list of length {len(spacing)}")
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = _float_of(input)
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, spacings))


def _gradient_along(f, d, h, edge_order):
    n = f.shape[d]

    def part(start, stop):
        return f.narrow(d, start, stop - start)

    def at(i):
        return f.narrow(d, i % n, 1)

    if _is_tensor(h) and h.dim() == 1:  # coordinates
        x = _float_of(h).to(f.dtype)
        shape = [1] * f.dim()
        shape[d] = -1
        dx = x.diff()
        left, right = dx[:-1].reshape(shape), dx[1:].reshape(shape)
        inner = (left ** 2 * part(2, n) - right ** 2 * part(0, n - 2) + (right ** 2 - left ** 2) * part(1, n - 1)) \
            / (left * right * (left + right))
        if edge_order == 1:
            first = (at(1) - at(0)) / dx[0]
            last = (at(-1) - at(-2)) / dx[-1]
        else:
            a, b = dx[0], dx[1]
            first = (-(2 * a + b) / (a * (a + b)) * at(0) + (a + b) / (a * b) * at(1) - a / (b * (a + b)) * at(2))
            a, b = dx[-2], dx[-1]
            last = (b / (a * (a + b)) * at(-3) - (a + b) / (a * b) * at(-2) + (2 * b + a) / (b * (a + b)) * at(-1))
    else:
        h = float(h.item() if _is_tensor(h) else h)
        inner = (part(2, n) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (at(1) - at(0)) / h
            last = (at(-1) - at(-2)) / h
        else:
            first = (-1.5 * at(0) + 2 * at(1) - 0.5 * at(2)) / h
            last = (0.5 * at(-3) - 2 * at(-2) + 1.5 * at(-1)) / h
    return _C.cat([first, inner, last], d)


def _trapezoid_parts(fn, y, x, dx, dim):
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, y.dim())
    n = y.shape[d]
    if x is not None:
        if x.dim() == 1:
            if x.shape[0] != n:
                raise RuntimeError(f"{fn}: There must be one `x` value for each sample point")
            shape = [1] * y.dim()
            shape[d] = -1
            steps = x.diff().reshape(shape)
        else:
            steps = x.diff(dim=d)
        return d, steps
    return d, 1 if dx is None else dx


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule's integral of y along dim, at the sample points x or with the
    constant spacing dx (default 1).

    >>> ember.trapezoid(ember.tensor([1., 2., 3.])).item()
    4.0
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: x and dx cannot both be given")
    d, steps = _trapezoid_parts("trapezoid", y, x, dx, dim)
    n = y.shape[d]
    if n == 0:
        shape = [s for i, s in enumerate(y.shape) if i != d]
        return _C.zeros(shape, dtype=_float_of(y).dtype)
    if x is None:
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * steps
    return (steps * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d) / 2.0


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integrals of y along dim (one fewer than y's samples).

    >>> ember.cumulative_trapezoid(ember.tensor([1., 2., 3.])).tolist()
    [1.5, 4.0]
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: x and dx cannot both "
                        "be given")
    d, steps = _trapezoid_parts("cumulative_trapezoid", y, x, dx, dim)
    n = y.shape[d]
    if n == 0:
        return _C.zeros(y.shape, dtype=_float_of(y).dtype)
    return (steps * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2.0).cumsum(d)


# ---- window functions (torch.*_window; ember.signal.windows has the scipy-style ones) ----

def _i0(x):
    """The modified Bessel function I0 of a float64 tensor, by its power series."""
    term = _C.ones_like(x)
    total = _C.ones_like(x)
    quarter = (x * x) / 4
    k = 1
    limit = 40 + 2 * int(float(x.abs().max())) if x.numel() else 0
    while k < limit:
        term = term * quarter / (k * k)
        total = total + term
        k += 1
    return total


def _window(fn, window_length, periodic, dtype, layout, device, requires_grad, values):
    """The checks and length-0/1 cases of torch's *_window; values(n) makes a symmetric
    window of n points in float64."""
    dtype = _C.get_default_dtype() if dtype is None else dtype
    if dtype not in _FLOATING:
        raise RuntimeError(f"{fn} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{fn} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        w = _C.ones(window_length, dtype=dtype)
    else:
        n = window_length + 1 if periodic else window_length
        w = values(n)[:window_length].to(dtype)
    if device is not None:
        w = w.to(device)
    return w.requires_grad_() if requires_grad else w


def _cosine_terms(n, coefficients):
    phase = _C.arange(n, dtype=_C.float64) * (2 * math.pi / (n - 1))
    w = _C.zeros(n, dtype=_C.float64)
    for k, a in enumerate(coefficients):
        w = w + a * (phase * k).cos()
    return w


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """The Hann window, 0.5 - 0.5 cos(2 pi n / (N - 1)); periodic drops the last point of
    one longer window.

    >>> ember.hann_window(4, periodic=False).tolist()[0]
    0.0
    """
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda n: _cosine_terms(n, (0.5, -0.5)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """The generalized Hamming window, alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda n: _cosine_terms(n, (alpha, -beta)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The Blackman window, 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda n: _cosine_terms(n, (0.42, -0.5, 0.08)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The Bartlett (triangular) window, 1 - |2n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda n: 1 - (_C.arange(n, dtype=_C.float64) * (2 / (n - 1)) - 1).abs())


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """The Kaiser window, I0(beta sqrt(1 - (2n / (N - 1) - 1)**2)) / I0(beta)."""
    def values(n):
        r = _C.arange(n, dtype=_C.float64) * (2 / (n - 1)) - 1
        return _i0(beta * (1 - r * r).clamp(min=0).sqrt()) / _i0(_C.tensor(float(beta), dtype=_C.float64))

    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad, values)


TOP_LEVEL = {f.__name__: f for f in (
    isin, quantile, nanquantile, cov, corrcoef, histogram, histogramdd, gcd, gcd_, lcm, lcm_, heaviside, frexp,
    ldexp, ldexp_, nextafter, deg2rad, deg2rad_, rad2deg, rad2deg_, xlogy_, dist, renorm, put,
    index_reduce, gradient, trapezoid, trapz, cumulative_trapezoid, hann_window, hamming_window, blackman_window,
    bartlett_window, kaiser_window)}

METHODS = {f.__name__: f for f in (
    quantile, nanquantile, cov, corrcoef, histogram, gcd, gcd_, lcm, lcm_, heaviside, heaviside_, frexp, ldexp,
    ldexp_, nextafter, nextafter_, deg2rad, deg2rad_, rad2deg, rad2deg_, dist, renorm, renorm_, put,
    put_, index_reduce, index_reduce_)}
