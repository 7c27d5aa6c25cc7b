"""ember.signal.windows: torch.signal.windows' window functions (scipy's conventions:
sym=True gives a symmetric window for filter design, sym=False a periodic one for
spectral analysis). Each is a closed formula over a linspace, computed in float64 and
returned in dtype."""
from __future__ import annotations

import math

from .. import _C
from .._ops_math import _i0

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _finish(fn, M, dtype, layout, device, requires_grad, values):
    """Checks M and dtype, handles M in (0, 1), else values() (a float64 tensor of M points)."""
    dtype = _C.get_default_dtype() if dtype is None else dtype
    if dtype not in (_C.float32, _C.float64):
        raise ValueError(f"{fn} expects float32 or float64 dtypes, got: {dtype}")
    if M < 0:
        raise ValueError(f"{fn} requires non-negative window length, got M={M}")
    w = _C.ones(M, dtype=dtype) if M <= 1 else values().to(dtype)
    if device is not None:
        w = w.to(device)
    return w.requires_grad_() if requires_grad else w


def _points(start, step, M):
    """start, start + step, ..., M points, in float64."""
    return _C.arange(M, dtype=_C.float64) * step + start


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """sum_k (-1)**k a[k] cos(2 pi k n / (M - 1)) (M instead of M - 1 when not sym).

    >>> ember.signal.windows.general_cosine(3, a=[0.5, 0.5]).tolist()
    [0.0, 1.0, 0.0]
    """
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def values():
        phase = _points(0.0, 2 * math.pi / (M - 1 if sym else M), M)
        w = _C.zeros(M, dtype=_C.float64)
        for k, coefficient in enumerate(a):
            w = w + (-1) ** k * coefficient * (phase * k).cos()
        return w

    return _finish("general_cosine", M, dtype, layout, device, requires_grad, values)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window: general_hamming with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window: general_hamming with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window: general_cosine with a = [0.42, 0.5, 0.08]."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window 1 - |2n / (M - 1) - 1|."""
    return _finish("bartlett", M, dtype, layout, device, requires_grad,
                   lambda: 1 - _points(-1.0, 2 / (M - 1 if sym else M), M).abs())


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The sine window sin(pi (n + 0.5) / M) (M + 1 when not sym)."""
    def values():
        step = math.pi / (M if sym else M + 1)
        return _points(0.5 * step, step, M).sin()

    return _finish("cosine", M, dtype, layout, device, requires_grad, values)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """exp(-|n - center| / tau), center by default the window's middle."""
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")

    def values():
        middle = (M if not sym and M > 1 else M - 1) / 2.0 if center is None else center
        return (-(_points(-middle, 1.0, M).abs() / tau)).exp()

    return _finish("exponential", M, dtype, layout, device, requires_grad, values)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """exp(-(n - middle)**2 / (2 std**2))."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def values():
        start = -(M if not sym and M > 1 else M - 1) / 2.0
        k = _points(start, 1.0, M) / (std * math.sqrt(2))
        return (-(k * k)).exp()

    return _finish("gaussian", M, dtype, layout, device, requires_grad, values)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Kaiser window I0(beta sqrt(1 - r**2)) / I0(beta), r running from -1 across."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def values():
        r = _points(-1.0, 2 / (M - 1 if sym else M), M).clamp(max=1.0)
        b = _C.tensor(float(beta), dtype=_C.float64)
        return _i0(beta * (1 - r * r).clamp(min=0).sqrt()) / _i0(b)

    return _finish("kaiser", M, dtype, layout, device, requires_grad, values)
