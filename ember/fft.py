"""ember.fft: torch.fft's discrete Fourier transforms.

The transforms are three native ops with torch's internal names and meaning
(declarations/ops/fft.yaml, csrc/ops/fft.cpp over the engine of csrc/kernels/fft.cpp):
_fft_c2c, _fft_r2c (real input, one-sided or full result) and _fft_c2r (one-sided
Hermitian input, real result). This module does torch's argument handling around them:
n / s (the input trimmed or zero-padded to the signal size), dim, norm ("backward",
"ortho", "forward"), the dtype rules (real inputs promote to complex where the transform
is complex, integers to the default float dtype; float16/bfloat16 are refused as torch
refuses them on CPU) and out=.
"""
from __future__ import annotations

import ember
from . import _autocast

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "Tensor"]

Tensor = ember.Tensor

_LEGACY = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
           "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _legacy(dtype):
    name = str(dtype).rsplit(".", 1)[-1]
    return _LEGACY.get(name, name)


def _norm_mode(norm, forward):
    """torch's fft_norm_mode: 0 none, 1 by 1 / sqrt(n), 2 by 1 / n."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _is_complex(dtype):
    return dtype in (ember.complex64, ember.complex128) or getattr(dtype, "is_complex", False)


def _real_input(x, name):
    """x as a float32/float64 tensor (integers and bool to the default dtype)."""
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    dt = x.dtype
    if _is_complex(dt):
        raise RuntimeError(f"{name} expects a real input tensor, but got {_legacy(dt)}")
    if not dt.is_floating_point:
        return x.to(ember.get_default_dtype())
    if dt not in (ember.float32, ember.float64):
        raise RuntimeError(f"Unsupported dtype {_legacy(dt)}")
    return x


def _complex_dtype(dt):
    return ember.complex128 if dt == ember.float64 else ember.complex64


def _complex_input(x, name):
    """x as a complex64/complex128 tensor (real ones promoted)."""
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    dt = x.dtype
    if _is_complex(dt):
        if dt not in (ember.complex64, ember.complex128):
            raise RuntimeError(f"Unsupported dtype {_legacy(dt)}")
        return x
    x = _real_input(x, name)
    return x.to(_complex_dtype(x.dtype))


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """x trimmed or zero-padded at the end of each of dims to sizes (torch's resize_fft_input)."""
    for d, s in zip(dims, sizes):
        cur = x.shape[d]
        if s < cur:
            x = x.narrow(d, 0, s)
        elif s > cur:
            pad = list(x.shape)
            pad[d] = s - cur
            x = ember.cat([x, x.new_zeros(pad)], d)
    return x


def _one_dim(x, n, dim):
    d = _wrap(dim, x.dim())
    if n is None:
        n = x.shape[d]
    _check_points(n)
    return n, d


def _shape_and_dims(x, s, dim):
    """torch's canonicalize_fft_shape_and_dim_args: the signal sizes and the wrapped dims."""
    nd = x.dim()
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(s, int):
        s = [s]
    dims = None
    if dim is not None:
        dims = [_wrap(d, nd) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
        if dims is None:
            dims = list(range(nd - len(s), nd))
        shape = [x.shape[d] if v == -1 else v for v, d in zip(s, dims)]
    else:
        if dims is None:
            dims = list(range(nd))
        shape = [x.shape[d] for d in dims]
    for v in shape:
        _check_points(v)
    return shape, dims


def _finish(result, out, name):
    if out is None:
        return result
    if _is_complex(result.dtype) and not _is_complex(out.dtype):
        raise RuntimeError(f"{name} expects a complex output tensor, but got {_legacy(out.dtype)}")
    if not _is_complex(result.dtype) and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got {_legacy(out.dtype)}")
    out.resize_(result.shape)
    out.copy_(result)
    return out


# ---- complex transforms: fft, ifft and their n-dim forms ----

def _c2c_1d(name, input, n, dim, norm, forward, out):
    if isinstance(input, ember.Tensor) and not _is_complex(input.dtype):
        # a real input: r2c with the full spectrum (its inverse direction is the conjugate)
        x = _real_input(input, name)
        n, d = _one_dim(x, n, dim)
        x = _resize(x, [d], [n])
        y = ember._fft_r2c(x, [d], _norm_mode(norm, forward), False)
        return _finish(y if forward else y.conj(), out, name)
    x = _complex_input(input, name)
    n, d = _one_dim(x, n, dim)
    x = _resize(x, [d], [n])
    return _finish(ember._fft_c2c(x, [d], _norm_mode(norm, forward), forward), out, name)


def _c2c_nd(name, input, s, dim, norm, forward, out):
    x = _complex_input(input, name)
    shape, dims = _shape_and_dims(x, s, dim)
    x = _resize(x, dims, shape)
    return _finish(ember._fft_c2c(x, dims, _norm_mode(norm, forward), forward), out, name)


@_autocast.fp32
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform of input along dim (torch.fft.fft)."""
    return _c2c_1d("fft", input, n, dim, norm, True, out)


@_autocast.fp32
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse discrete Fourier transform of input along dim (torch.fft.ifft)."""
    return _c2c_1d("ifft", input, n, dim, norm, False, out)


@_autocast.fp32
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D discrete Fourier transform over dim (default: all, or the last len(s))."""
    return _c2c_nd("fftn", input, s, dim, norm, True, out)


@_autocast.fp32
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse discrete Fourier transform over dim."""
    return _c2c_nd("ifftn", input, s, dim, norm, False, out)


@_autocast.fp32
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D discrete Fourier transform over dim (default the last two)."""
    return _c2c_nd("fft2", input, s, dim, norm, True, out)


@_autocast.fp32
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D inverse discrete Fourier transform over dim (default the last two)."""
    return _c2c_nd("ifft2", input, s, dim, norm, False, out)


# ---- real input, one-sided complex output: rfft, ihfft ----

def _r2c(name, input, shape, dims, norm, forward, out):
    x = _resize(input, dims, shape)
    y = ember._fft_r2c(x, dims, _norm_mode(norm, forward), True)
    return _finish(y if forward else y.conj(), out, name)


@_autocast.fp32
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D DFT of a real input: the n // 2 + 1 non-negative frequencies."""
    x = _real_input(input, "rfft")
    n, d = _one_dim(x, n, dim)
    return _r2c("rfft", x, [n], [d], norm, True, out)


@_autocast.fp32
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the one-sided inverse DFT of a real input."""
    x = _real_input(input, "ihfft")
    n, d = _one_dim(x, n, dim)
    return _r2c("ihfft", x, [n], [d], norm, False, out)


def _r2c_nd(name, input, s, dim, norm, forward, out):
    x = _real_input(input, name)
    shape, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    return _r2c(name, x, shape, dims, norm, forward, out)


@_autocast.fp32
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D DFT of a real input, one-sided along the last of dim."""
    return _r2c_nd("rfftn", input, s, dim, norm, True, out)


@_autocast.fp32
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D DFT of a real input, one-sided along the last of dim."""
    return _r2c_nd("rfft2", input, s, dim, norm, True, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse of hfftn: one-sided along the last of dim."""
    return _r2c_nd("ihfftn", input, s, dim, norm, False, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D inverse of hfft2."""
    return _r2c_nd("ihfft2", input, s, dim, norm, False, out)


# ---- one-sided Hermitian input, real output: irfft, hfft ----

def _c2r(name, input, shape, dims, last_size, norm, forward, out):
    """shape: the signal sizes of dims (the last one is the output's, last_size)."""
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    _check_points(last_size)
    x = _resize(input, dims, shape[:-1] + [last_size // 2 + 1])
    if forward:
        x = x.conj()
    return _finish(ember._fft_c2r(x, dims, _norm_mode(norm, forward), last_size), out, name)


@_autocast.fp32
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: n real outputs (default 2 * (m - 1)) from m one-sided inputs."""
    x = _complex_input(input, "irfft")
    d = _wrap(dim, x.dim())
    n = 2 * (x.shape[d] - 1) if n is None else n
    return _c2r("irfft", x, [n], [d], n, norm, False, out)


@_autocast.fp32
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The DFT of a Hermitian-symmetric signal given by its one-sided half: n real outputs."""
    x = _complex_input(input, "hfft")
    d = _wrap(dim, x.dim())
    n = 2 * (x.shape[d] - 1) if n is None else n
    return _c2r("hfft", x, [n], [d], n, norm, True, out)


def _c2r_nd(name, input, s, dim, norm, forward, out):
    x = _complex_input(input, name)
    shape, dims = _c2r_shape_and_dims(x, s, dim, name)
    return _c2r(name, x, shape, dims, shape[-1] if dims else 0, norm, forward, out)


def _c2r_shape_and_dims(x, s, dim, name):
    """As _shape_and_dims, the last signal size (the output's) 2 * (m - 1) by default."""
    last_default = s is None or (not isinstance(s, int) and len(s) > 0 and list(s)[-1] == -1)
    shape, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if last_default:
        shape[-1] = 2 * (x.shape[dims[-1]] - 1)
    _check_points(shape[-1])
    return shape, dims


@_autocast.fp32
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn: real output, the last signal size 2 * (m - 1) by default."""
    return _c2r_nd("irfftn", input, s, dim, norm, False, out)


@_autocast.fp32
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of rfft2."""
    return _c2r_nd("irfft2", input, s, dim, norm, False, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D DFT of a Hermitian-symmetric signal given by its one-sided half."""
    return _c2r_nd("hfftn", input, s, dim, norm, True, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D DFT of a Hermitian-symmetric signal given by its one-sided half."""
    return _c2r_nd("hfft2", input, s, dim, norm, True, out)


# ---- helpers ----

def _freq_dtype(dtype):
    return ember.get_default_dtype() if dtype is None else dtype


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point DFT: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)."""
    r = ember.arange(n, dtype=_freq_dtype(dtype), device=device)
    if n > 0:
        r[(n + 1) // 2:] = ember.arange(-(n // 2), 0, dtype=r.dtype, device=device)
    r = r.mul_(1.0 / (n * d)) if n > 0 else r
    if out is not None:
        out.resize_(r.shape)
        out.copy_(r)
        r = out
    return r.requires_grad_(requires_grad) if requires_grad else r


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft of n points: [0, 1, ..., n // 2] / (d n)."""
    r = ember.arange(n // 2 + 1, dtype=_freq_dtype(dtype), device=device)
    r = r.mul_(1.0 / (n * d)) if n > 0 else r
    if out is not None:
        out.resize_(r.shape)
        out.copy_(r)
        r = out
    return r.requires_grad_(requires_grad) if requires_grad else r


def _shift(input, dim, up):
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    if not dims:
        return input.clone() if isinstance(input, ember.Tensor) else input
    shifts = [(input.shape[d] + up) // 2 for d in dims]
    return ember.roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Moves the zero frequency to the middle: roll by size // 2 over dim (default all)."""
    return _shift(input, dim, 0)


def ifftshift(input, dim=None):
    """The inverse of fftshift: roll by (size + 1) // 2 over dim (default all)."""
    return _shift(input, dim, 1)


def __getattr__(name):
    from ._ops_shape import missing_attribute

    raise missing_attribute(__name__, name, "torch.fft")  # says so when torch has the name
