"""torch's remaining small public names, composed in Python over ember's ops: constants
(pi, e, inf, nan, newaxis), the function forms of Tensor queries (detach, is_inference,
get_device), the legacy linalg calls torch keeps (svd, qr) and the removed ones it keeps
as raising functions (solve, lstsq, eig, symeig, matrix_rank), the deprecated norms and
pads JIT-era code still calls, the functional RNN cells and whole-sequence RNNs,
grid_sampler, svd_lowrank/pca_lowrank, segment_reduce, get_device_module, process-wide
flags (warn_always, the deterministic debug mode, the old per-device autocast getters),
and Tensor methods and properties (new, apply_, map_, resize, as_subclass, is_xpu, ...).
ember/__init__.py exports TOP_LEVEL, ember/_tensor.py installs METHODS and PROPERTIES."""
from __future__ import annotations

import builtins as _builtins  # ember.range below shadows range
import math
import warnings

from . import _C
from ._constants import contiguous_format
from .linalg import _named, _structseq
from . import _autocast

_svd = _structseq("svd", "_svd", ["U", "S", "V"])
_qr = _structseq("qr", "_qr", ["Q", "R"])
RETURN_TYPES = (_svd, _qr)  # ember.return_types names them too
for _type in RETURN_TYPES:
    _type.__module__ = __name__  # pickle finds them here


_warn_always = [False]
_warned = set()


def _warn_once(message, stacklevel=3):
    """torch's TORCH_WARN_ONCE: the first time in the process, or every time while
    set_warn_always(True)."""
    if _warn_always[0] or message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


def _check_tensor(op, name, value, position=1):
    if not isinstance(value, _C.TensorBase):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


# ---- Tensor queries in function form ----

def detach(input):
    """A new tensor sharing input's memory, outside the autograd graph; see Tensor.detach."""
    _check_tensor("detach", "input", input)
    return input.detach()


def is_inference(input) -> bool:
    """Whether input was created in inference mode; see Tensor.is_inference."""
    _check_tensor("is_inference", "input", input)
    return input.is_inference()


def get_device(input) -> int:
    """The index of input's device, -1 for the CPU; see Tensor.get_device."""
    _check_tensor("get_device", "input", input)
    return input.get_device()


def is_distributed(input) -> bool:
    """False: a tensor is never distributed (torch's answer for every tensor)."""
    _check_tensor("is_distributed", "input", input)
    return False


def typename(obj, /) -> str:
    """The type of obj as a string: a tensor's legacy type ('ember.FloatTensor'), otherwise
    module and qualified name ('ember.nn.modules.linear.Linear', 'int').

    >>> ember.typename(ember.ones(1))
    'ember.FloatTensor'
    """
    if isinstance(obj, _C.TensorBase):
        return obj.type()
    module = getattr(obj, "__module__", None)
    prefix = f"{module}." if module not in (None, "builtins", "__builtin__") else ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__qualname__
    return prefix + name


# ---- deprecated and JIT-era functions torch still has ----

def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Deprecated: start, start + step, ... up to and including end, in the default dtype
    unless dtype is given. Use arange, whose end is excluded.

    >>> ember.range(1, 3).tolist()
    [1.0, 2.0, 3.0]
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        raise TypeError("range() missing 1 required positional argument: \"end\"")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = int(math.floor((end - start) / step)) + 1
    dtype = _C.get_default_dtype() if dtype is None else dtype
    result = (_C.arange(count, dtype=_C.float64, device=device) * step + start).to(dtype)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out.requires_grad_(requires_grad) if requires_grad else out
    return result.requires_grad_(requires_grad)


def constant_pad_nd(input, pad, value=0):
    """Pads the last len(pad) // 2 dimensions of input with value (negative pads crop);
    the op behind F.pad's constant mode.

    >>> ember.constant_pad_nd(ember.ones(1, 2), [1, 0], 7.0).tolist()
    [[7.0, 1.0, 1.0]]
    """
    _check_tensor("constant_pad_nd", "input", input)
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)}while the input has {input.dim()}dimensions.")
    from .nn import functional as F

    return F.pad(input, pad, "constant", value)


def native_dropout(input, p, train):
    """(output, mask): in training (train True or None) each element kept with
    probability 1 - p and scaled by 1 / (1 - p), mask the bool tensor of those kept;
    otherwise input unchanged (a copy) and an all-true mask."""
    _check_tensor("native_dropout", "input", input)
    if train is False:
        return input.clone(), _C.ones_like(input, dtype=_C.bool)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"result type Float can't be cast to the desired output type {input.dtype._legacy_name}")
    mask = _C.empty_like(input, dtype=_C.bool).bernoulli_(1 - p)
    return input * mask * (0.0 if p == 1 else 1.0 / (1 - p)), mask


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """Deprecated: the 2-norm of input over dim (at most 2 dimensions); use
    linalg.vector_norm(input, 2, dim, keepdim)."""
    _check_tensor("frobenius_norm", "input", input)
    dim = [dim] if isinstance(dim, int) else list(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    _warn_once("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed "
               "in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead")
    from . import linalg

    return linalg.vector_norm(input, 2.0, dim, keepdim, out=out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Deprecated: the sum of the singular values of the matrices over dim (default the
    last two); use linalg.matrix_norm(input, 'nuc', dim, keepdim)."""
    _check_tensor("nuclear_norm", "input", input)
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    _warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed "
               "in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    from . import linalg

    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim, out=out)


def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dimension but dim, shaped to broadcast against v
    (weight normalization's norm); dim=-1 gives the norm of the whole tensor."""
    _check_tensor("norm_except_dim", "v", v)
    if dim == -1:
        return v.norm(pow)
    dims = [d for d in _builtins.range(v.dim()) if d != dim]
    return v.abs().pow(pow).sum(dims, keepdim=True).pow(1.0 / pow) if pow != 2 else v.norm(2, dims, keepdim=True)


def nonzero_static(input, *, size, fill_value=-1, out=None):
    """The indices of input's nonzero elements as nonzero() gives them, cut or padded
    with fill_value to exactly size rows.

    >>> ember.nonzero_static(ember.tensor([0, 3]), size=2).tolist()
    [[1], [-1]]
    """
    _check_tensor("nonzero_static", "input", input)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = input.nonzero()[:size]
    if found.size(0) < size:
        pad = _C.full((size - found.size(0), found.size(1)), fill_value, dtype=_C.int64)
        found = _C.cat([found, pad])
    if out is not None:
        return out.resize_(found.shape).copy_(found)
    return found


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False):
    """A 1-D tensor of size elements read from the file by a memory map: shared=True maps
    it shared (writes reach the file, which is created and grown as needed); otherwise
    the mapping is private (writes stay in memory)."""
    from .storage import UntypedStorage

    dtype = _C.get_default_dtype() if dtype is None else dtype
    nbytes = (size or 0) * dtype.itemsize
    storage = UntypedStorage.from_file(filename, bool(shared), nbytes)
    result = _C.empty(0, dtype=dtype)
    result.set_(storage, 0, (size or 0,), (1,))
    return result if device is None else result.to(device)


# ---- legacy linalg ----

@_autocast.fp32
def svd(input, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with input = U diag(S) V^H (V, not linalg.svd's Vh): reduced when some,
    full otherwise; without compute_uv, U and V are zero-filled (full shapes).

    >>> U, S, V = ember.svd(ember.eye(2))
    >>> S.tolist()
    [1.0, 1.0]
    """
    _check_tensor("svd", "input", input)
    if input.dim() < 2:  # torch's message (ember.linalg.svd words it as linalg.qr does)
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.dim()} dimensions "
                           "instead")
    from . import linalg

    if compute_uv:
        U, S, Vh = linalg.svd(input, full_matrices=not some)
        results = (U, S, Vh.mH)
    else:
        S = linalg.svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        results = (_C.zeros(batch + (m, m), dtype=input.dtype), S, _C.zeros(batch + (n, n), dtype=input.dtype))
    return _named(_svd, results, out)


@_autocast.fp32
def qr(input, some=True, *, out=None):
    """(Q, R) with input = Q R, deprecated in favour of linalg.qr(input, 'reduced' if some
    else 'complete')."""
    _check_tensor("qr", "input", input)
    _warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
               "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
               "Q, R = torch.qr(A, some)\nshould be replaced with\n"
               "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    from . import linalg

    return _named(_qr, tuple(linalg.qr(input, "reduced" if some else "complete")), out)


# torch 2.13 keeps these names as functions that raise, with its messages
_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_SOLVE_MESSAGE = (
    f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
    "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, "
    "which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
    "replaced with:\nX = torch.linalg.solve(A, B)")
_LSTSQ_MESSAGE = (
    f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
    "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
    "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe "
    "returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
    "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
    "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
    "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_EIG_MESSAGE = (
    f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
    "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)"
    "\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
    "L_complex, V_complex = torch.linalg.eig(A)")
_SYMEIG_MESSAGE = (
    f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the matrix by default "
    "to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
    "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
    "should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_MATRIX_RANK_MESSAGE = (
    f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was "
    "renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def solve(input, A, *, out=None):
    """Removed in torch 1.9: raises, pointing to linalg.solve."""
    raise RuntimeError(_SOLVE_MESSAGE)


def lstsq(input, A, *, out=None):
    """Removed in torch 1.9: raises, pointing to linalg.lstsq."""
    raise RuntimeError(_LSTSQ_MESSAGE)


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed in torch 1.9: raises, pointing to linalg.eig."""
    raise RuntimeError(_EIG_MESSAGE)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed in torch 1.9: raises, pointing to linalg.eigh."""
    raise RuntimeError(_SYMEIG_MESSAGE)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed in torch 1.9: raises, pointing to linalg.matrix_rank."""
    raise RuntimeError(_MATRIX_RANK_MESSAGE)


# ---- functional RNN cells (what nn.RNNCell, LSTMCell and GRUCell compute) ----

def _cell_checks(input, hx, w_ih):
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden0 batch size {hx.size(0)}")
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}")


def _linear(x, w, b):
    from .nn import functional as F

    return F.linear(x, w, b)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step: tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh); input (B, I), hx (B, H)."""
    _check_tensor("rnn_tanh_cell", "input", input)
    _cell_checks(input, hx, w_ih)
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step with relu: relu(input W_ih^T + b_ih + hx W_hh^T + b_hh)."""
    _check_tensor("rnn_relu_cell", "input", input)
    _cell_checks(input, hx, w_ih)
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: hx = (h, c) -> (h', c'), gates i, f, g, o in that order along w_ih's rows."""
    _check_tensor("lstm_cell", "input", input)
    if not isinstance(hx, (tuple, list)):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not {type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _cell_checks(input, h, w_ih)
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)  # (B, 4H): i, f, g, o
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: r, z = sigmoid(x_rz + h_rz), n = tanh(x_n + r h_n), h' = (1 - z) n + z hx."""
    _check_tensor("gru_cell", "input", input)
    _cell_checks(input, hx, w_ih)
    xr, xz, xn = _linear(input, w_ih, b_ih).chunk(3, 1)  # (B, 3H) -> 3 x (B, H)
    hr, hz, hn = _linear(hx, w_hh, b_hh).chunk(3, 1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (hx - n)


# ---- process-wide flags ----

def set_warn_always(b, /) -> None:
    """With True, the warnings torch gives once per process (torch.qr's deprecation, ...)
    are given on every call."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always[0] = b


def is_warn_always_enabled() -> bool:
    """Whether set_warn_always(True) is in effect."""
    return _warn_always[0]


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode) -> None:
    """use_deterministic_algorithms by level: 0/'default' off, 1/'warn' warn only,
    2/'error' on."""
    from . import backends

    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    backends.use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 when deterministic algorithms are off, 1 when they only warn, 2 when they are on."""
    from . import backends

    if not backends.are_deterministic_algorithms_enabled():
        return 0
    return 1 if backends.is_deterministic_algorithms_warn_only_enabled() else 2


def set_default_tensor_type(t, /) -> None:
    """Deprecated: sets the default dtype from a floating legacy class or its name
    ('torch.DoubleTensor'); use set_default_dtype."""
    from . import _legacy

    _warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
               "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if isinstance(t, _C.dtype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    dtype = _legacy.dtype_from_type(t)
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(dtype)


def compiled_with_cxx11_abi() -> bool:
    """Whether ember's extension was built with _GLIBCXX_USE_CXX11_ABI=1 (g++'s default,
    which ember's build keeps)."""
    return "_GLIBCXX_USE_CXX11_ABI=0" not in _C._build_config()["compiler_flags"]


def init_num_threads() -> None:
    """Nothing to do: ember's thread pool starts on first use."""


def is_vulkan_available() -> bool:
    """False: ember has no Vulkan backend."""
    return False


def clear_autocast_cache() -> None:
    """Drops this thread's cached autocast casts (the outermost autocast block's exit does)."""
    from . import _C
    _C._autocast_clear_cache()


def _autocast_getter(device, dtype_of):
    name = {"cuda": "gpu"}.get(device, device)

    if dtype_of:
        def getter():
            warnings.warn(f"torch.get_autocast_{name}_dtype() is deprecated. Please use "
                          f"torch.get_autocast_dtype('{device}') instead.", DeprecationWarning, stacklevel=2)
            from .amp import autocast_mode
            return autocast_mode.get_autocast_dtype(device)

        getter.__name__ = f"get_autocast_{name}_dtype"
        getter.__doc__ = f"Deprecated: get_autocast_dtype('{device}')."
    else:
        def getter():
            warnings.warn(f"torch.is_autocast_{name}_enabled() is deprecated. Please use "
                          f"torch.is_autocast_enabled('{device}') instead.", DeprecationWarning, stacklevel=2)
            from .amp import autocast_mode
            return autocast_mode.is_autocast_enabled(device)

        getter.__name__ = f"is_autocast_{name}_enabled"
        getter.__doc__ = f"Deprecated: is_autocast_enabled('{device}')."
    return getter


def _autocast_setter(device, dtype_of):
    name = {"cuda": "gpu"}.get(device, device)

    if dtype_of:
        def setter(dtype):
            if not isinstance(dtype, _C.dtype):
                raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
            warnings.warn(f"torch.set_autocast_{name}_dtype(dtype) is deprecated. Please use "
                          f"torch.set_autocast_dtype('{device}', dtype) instead.", DeprecationWarning, stacklevel=2)
            from .amp import autocast_mode
            autocast_mode.set_autocast_dtype(device, dtype)

        setter.__name__ = f"set_autocast_{name}_dtype"
        setter.__doc__ = f"Deprecated: set_autocast_dtype('{device}', dtype)."
    else:
        def setter(enabled):
            if not isinstance(enabled, bool):
                raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
            warnings.warn(f"torch.set_autocast_{name}_enabled(enabled) is deprecated. Please use "
                          f"torch.set_autocast_enabled('{device}', enabled) instead.", DeprecationWarning,
                          stacklevel=2)
            from .amp import autocast_mode
            autocast_mode.set_autocast_enabled(device, enabled)

        setter.__name__ = f"set_autocast_{name}_enabled"
        setter.__doc__ = f"Deprecated: set_autocast_enabled('{device}', enabled)."
    return setter


def _autocast_functions():
    """torch's per-device forms: dtype getters and setters for cpu, gpu (cuda), ipu and
    xla; enabled getters and setters for cpu, ipu and xla."""
    functions = {}
    for device in ("cpu", "cuda", "ipu", "xla"):
        for make in (_autocast_getter, _autocast_setter):
            for dtype_of in (True, False) if device != "cuda" else (True,):
                fn = make(device, dtype_of)
                functions[fn.__name__] = fn
    return functions


TOP_LEVEL = {
    "pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan, "newaxis": None,
    "legacy_contiguous_format": contiguous_format,  # torch's is the same object
    "detach": detach, "is_inference": is_inference, "get_device": get_device, "is_distributed": is_distributed,
    "typename": typename, "range": range, "constant_pad_nd": constant_pad_nd, "native_dropout": native_dropout,
    "frobenius_norm": frobenius_norm, "nuclear_norm": nuclear_norm, "norm_except_dim": norm_except_dim,
    "nonzero_static": nonzero_static, "from_file": from_file, "svd": svd, "qr": qr, "solve": solve,
    "lstsq": lstsq, "eig": eig, "symeig": symeig, "matrix_rank": matrix_rank, "rnn_tanh_cell": rnn_tanh_cell,
    "rnn_relu_cell": rnn_relu_cell, "lstm_cell": lstm_cell, "gru_cell": gru_cell,
    "set_warn_always": set_warn_always, "is_warn_always_enabled": is_warn_always_enabled,
    "set_deterministic_debug_mode": set_deterministic_debug_mode,
    "get_deterministic_debug_mode": get_deterministic_debug_mode,
    "set_default_tensor_type": set_default_tensor_type, "compiled_with_cxx11_abi": compiled_with_cxx11_abi,
    "init_num_threads": init_num_threads, "is_vulkan_available": is_vulkan_available,
    "clear_autocast_cache": clear_autocast_cache,
    # what ember's build has: LAPACK through OpenBLAS, its own FFT; no MKL, no OpenMP (its own pool)
    "has_lapack": True, "has_spectral": True, "has_mkl": False, "has_openmp": False,
    **_autocast_functions(),
}


# ---- Tensor methods and properties ----

def _hardshrink(self, lambd=0.5):
    """See ember.nn.functional.hardshrink."""
    from .nn import functional as F

    return F.hardshrink(self, lambd)


def _prelu(self, weight):
    """See ember.nn.functional.prelu."""
    from .nn import functional as F

    return F.prelu(self, weight)


def _new(self, *args, **kwargs):
    """Legacy constructor of self's dtype: new(*sizes) uninitialized, new(data), new()
    empty; prefer new_empty / new_tensor."""
    return _C._legacy_new(self.dtype, *args, **kwargs)


def _const_data_ptr(self) -> int:
    """The address of self's first element (as data_ptr)."""
    return self.data_ptr()


def _storage_type(self):
    """The legacy typed storage class of self's dtype (ember.FloatStorage, ...)."""
    from .storage import STORAGE_CLASSES

    return STORAGE_CLASSES[self.dtype._legacy_name + "Storage"]


def _python_elementwise(self, name, others, fn):
    """self's elements replaced by fn(self's element, others' elements...), in place: a
    Python call per element (CPU only, as torch's)."""
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    columns = [self.reshape(-1).tolist()] + [o.expand_as(self).reshape(-1).tolist() for o in others]
    values = [fn(*args) for args in zip(*columns)]
    for v in values:
        if not isinstance(v, (int, float, bool, complex)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
    self.copy_(_C.tensor(values, dtype=_C.float64 if self.is_floating_point() else None).reshape(self.shape))
    return self


def _apply_(self, callable):
    """Applies callable to each element in place (slow: a Python call per element)."""
    return _python_elementwise(self, "apply_", (), callable)


def _map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]) in place, tensor broadcast to self's shape."""
    return _python_elementwise(self, "map_", (tensor,), callable)


def _map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]) in place, x and y broadcast to self's shape."""
    return _python_elementwise(self, "map2_", (x, y), callable)


def _resized(self, sizes, message):
    warnings.warn(message, UserWarning, stacklevel=3)
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    if math.prod(sizes) != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({math.prod(sizes)} elements in total), "
                           f"but the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
                           "elements). autograd's resize can only change the shape of a given tensor, while "
                           "preserving the number of elements. ")
    return self.contiguous().view(sizes).clone()  # differentiable, as torch's


def _resize(self, *sizes):
    """Deprecated: a copy of self in another shape of as many elements."""
    return _resized(self, sizes, "non-inplace resize is deprecated")


def _resize_as(self, tensor):
    """Deprecated: a copy of self resized to tensor's shape."""
    return _resized(self, (tuple(tensor.shape),), "non-inplace resize_as is deprecated")


def _is_pinned(self, device=None) -> bool:
    """False: ember's CPU tensors are never in page-locked memory."""
    return False


def _is_distributed(self) -> bool:
    """False, for every tensor (as torch)."""
    return False


def _nonzero_static(self, *, size, fill_value=-1):
    """See ember.nonzero_static."""
    return nonzero_static(self, size=size, fill_value=fill_value)


def _svd_method(self, some=True, compute_uv=True):
    """See ember.svd."""
    return svd(self, some, compute_uv)


def _qr_method(self, some=True):
    """See ember.qr."""
    return qr(self, some)


def _solve_method(self, other):
    """Removed in torch 1.9: raises, pointing to linalg.solve."""
    raise RuntimeError(_SOLVE_MESSAGE)


def _lstsq_method(self, other):
    """Removed in torch 1.9: raises, pointing to linalg.lstsq."""
    raise RuntimeError(_LSTSQ_MESSAGE)


def _eig_method(self, eigenvectors=False):
    """Removed in torch 1.9: raises, pointing to linalg.eig."""
    raise RuntimeError(_EIG_MESSAGE)


def _symeig_method(self, eigenvectors=False):
    """Removed in torch 1.9: raises, pointing to linalg.eigh."""
    raise RuntimeError(_SYMEIG_MESSAGE)


_REINFORCE_MESSAGE = (
    "reinforce() was removed.\nUse torch.distributions instead.\nSee https://pytorch.org/docs/main/distributions.html"
    "\n\nInstead of:\n\nprobs = policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
    "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = policy_network(state)\n"
    "# NOTE: categorical is equivalent to what used to be called multinomial\nm = "
    "torch.distributions.Categorical(probs)\naction = m.sample()\nnext_state, reward = env.step(action)\nloss = "
    "-m.log_prob(action) * reward\nloss.backward()\n")


def _reinforce(self, reward):
    """Removed: raises, pointing to ember.distributions."""
    raise RuntimeError(_REINFORCE_MESSAGE)


def _as_subclass(self, cls):
    """self's data as an instance of cls (a subclass of Tensor), sharing memory and
    staying in the autograd graph (an alias of self)."""
    from ._tensor import Tensor

    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    alias = self.view_as(self)
    alias.__class__ = cls
    return alias


def _module_load(self, other, assign=False):
    """What load_state_dict swaps in for self: self.copy_(other).detach(), or
    other.detach() with assign."""
    return other.detach() if assign else self.copy_(other).detach()


METHODS = {
    "as_subclass": _as_subclass, "module_load": _module_load, "reinforce": _reinforce,
    "hardshrink": _hardshrink, "prelu": _prelu, "new": _new, "const_data_ptr": _const_data_ptr,
    "storage_type": _storage_type, "apply_": _apply_, "map_": _map_, "map2_": _map2_, "resize": _resize,
    "resize_as": _resize_as, "is_pinned": _is_pinned, "is_distributed": _is_distributed,
    "nonzero_static": _nonzero_static, "svd": _svd_method, "qr": _qr_method, "solve": _solve_method,
    "lstsq": _lstsq_method, "eig": _eig_method, "symeig": _symeig_method,
}


def _false(self) -> bool:
    """False: ember has no such device or layout."""
    return False


def _volatile(self) -> bool:
    """Removed: always False, with torch's warning."""
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _name(self):
    """None: the name torch's tensors carry for graph tracing, which ember's do not have."""
    return None


PROPERTIES = {
    **{name: _false for name in ("is_xpu", "is_mps", "is_ipu", "is_mtia", "is_maia", "is_vulkan", "is_mkldnn",
                                 "is_nested", "is_xla")},
    "volatile": _volatile, "name": _name,
}


# ---- the functional RNNs over a whole sequence (what nn.LSTM, GRU and RNN run) ----

def _run_rnn(kind, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, final states): layer by layer, each direction a loop of kind's cell over
    time; params per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    cell = {"lstm": lstm_cell, "gru": gru_cell, "rnn_tanh": rnn_tanh_cell, "rnn_relu": rnn_relu_cell}[kind]
    directions = 2 if bidirectional else 1
    per = len(params) // (num_layers * directions)
    if per * num_layers * directions != len(params) or per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(f"{kind}: expected {num_layers * directions} groups of "
                           f"{'4' if has_biases else '2'} (or with projections one more) parameters, "
                           f"got {len(params)}")
    states = list(hx) if kind == "lstm" else [hx]  # each (layers * directions, B, H)
    x = input.transpose(0, 1) if batch_first else input  # (T, B, I)
    finals = [[] for _ in states]
    for layer in _builtins.range(num_layers):
        outputs = []
        for direction in _builtins.range(directions):
            index = layer * directions + direction
            group = params[index * per:(index + 1) * per]
            w_ih, w_hh = group[0], group[1]
            b_ih, b_hh = (group[2], group[3]) if has_biases else (None, None)
            w_hr = group[-1] if per in (3, 5) else None
            state = [s[index] for s in states]
            steps = []
            times = _builtins.range(x.size(0) - 1, -1, -1) if direction else _builtins.range(x.size(0))
            for t in times:
                if kind == "lstm":
                    h, c = cell(x[t], state, w_ih, w_hh, b_ih, b_hh)
                    state = [h if w_hr is None else h.matmul(w_hr.t()), c]
                else:
                    state = [cell(x[t], state[0], w_ih, w_hh, b_ih, b_hh)]
                steps.append(state[0])
            if direction:
                steps.reverse()
            outputs.append(_C.stack(steps) if steps else x.new_empty((0, x.size(1), state[0].size(-1))))
            for final, s in zip(finals, state):
                final.append(s)
        x = outputs[0] if directions == 1 else _C.cat(outputs, 2)  # (T, B, directions * H)
        if dropout and train and layer < num_layers - 1:
            from .nn import functional as F

            x = F.dropout(x, dropout, True)
    output = x.transpose(0, 1) if batch_first else x
    return (output,) + tuple(_C.stack(f) for f in finals)


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n, c_n) of a multi-layer LSTM over input (T, B, I), or (B, T, I) with
    batch_first, from hx = (h_0, c_0) and the flat list of its parameters (nn.LSTM's
    _flat_weights order)."""
    _check_tensor("lstm", "input", input)
    return _run_rnn("lstm", input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n) of a multi-layer GRU; see lstm."""
    _check_tensor("gru", "input", input)
    return _run_rnn("gru", input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n) of a multi-layer Elman RNN with tanh; see lstm."""
    _check_tensor("rnn_tanh", "input", input)
    return _run_rnn("rnn_tanh", input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                    batch_first)


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n) of a multi-layer Elman RNN with relu; see lstm."""
    _check_tensor("rnn_relu", "input", input)
    return _run_rnn("rnn_relu", input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                    batch_first)


# ---- the ops behind F.grid_sample and F.affine_grid, with torch's integer modes ----

_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners, dims=None):
    if dims is not None and not (input.dim() == grid.dim() == dims + 2):
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    from .nn import functional as F

    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode], _PADDING[padding_mode], align_corners)


@_autocast.fp32
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with modes as integers: interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection."""
    _check_tensor("grid_sampler", "input", input)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler on 4-D input and grid."""
    _check_tensor("grid_sampler_2d", "input", input)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners, 2)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler on 5-D input and grid."""
    _check_tensor("grid_sampler_3d", "input", input)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners, 3)


def affine_grid_generator(theta, size, align_corners):
    """F.affine_grid(theta, size, align_corners)."""
    _check_tensor("affine_grid_generator", "theta", theta)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    from .nn import functional as F

    return F.affine_grid(theta, list(size), align_corners)


TOP_LEVEL.update({
    "lstm": lstm, "gru": gru, "rnn_tanh": rnn_tanh, "rnn_relu": rnn_relu, "grid_sampler": grid_sampler,
    "grid_sampler_2d": grid_sampler_2d, "grid_sampler_3d": grid_sampler_3d,
    "affine_grid_generator": affine_grid_generator,
})


# ---- randomized low-rank SVD and PCA (Halko, Martinsson, Tropp 2009: range finder
# with power iterations, then the SVD of the small projected matrix) ----

def _approximate_basis(A, q, niter, M):
    """An orthonormal (.., m, q) basis approximating the range of A - M."""
    R = _C.randn(A.shape[-1], q, dtype=A.dtype)
    X = A.matmul(R) if M is None else A.matmul(R) - M.matmul(R)
    Q = _C.linalg_qr(X)[0]
    for _ in _builtins.range(niter):
        Y = A.mH.matmul(Q) if M is None else A.mH.matmul(Q) - M.mH.matmul(Q)
        Q = _C.linalg_qr(Y)[0]
        X = A.matmul(Q) if M is None else A.matmul(Q) - M.matmul(Q)
        Q = _C.linalg_qr(X)[0]
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V), approximately the q largest singular triplets of A (or of A - M), with
    A ~ U diag(S) V^H; randomized, so results vary from run to run unless A has rank q or
    less. q is capped at min(m, n).

    >>> U, S, V = ember.svd_lowrank(ember.ones(4, 3), q=1)
    >>> round(S.item(), 4)
    3.4641
    """
    _check_tensor("svd_lowrank", "A", A)
    from . import linalg

    m, n = A.shape[-2:]
    q = min(6 if q is None else q, m, n)
    niter = 2 if niter is None else niter
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # work on the taller A^H, whose range is the smaller
        V, S, U = svd_lowrank(A.mH, q, niter, None if M is None else M.mH)
        return U, S, V
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH.matmul(A) if M is None else Q.mH.matmul(A) - Q.mH.matmul(M)  # (.., q, n)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    return Q.matmul(U), S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of a randomized SVD of A with its column means removed (center=True):
    the principal directions are V's columns, A's projections onto them A @ V[:, :k].
    q defaults to min(6, m, n)."""
    _check_tensor("pca_lowrank", "A", A)
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter)


TOP_LEVEL.update({"svd_lowrank": svd_lowrank, "pca_lowrank": pca_lowrank})


# ---- segment_reduce ----

_SEGMENT_OPS = {"sum": "sum", "prod": "prod", "mean": "sum", "max": "amax", "min": "amin"}
_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": math.nan, "max": -math.inf, "min": math.inf}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reduces consecutive segments of data along axis ('sum', 'prod', 'mean', 'max',
    'min'), the segments given by lengths (shape data.shape[:axis] + (segments,)) or by
    offsets (one more than segments); an empty segment gives initial, or the reduction's
    identity (nan for mean). With initial, every segment starts from it.

    >>> ember.segment_reduce(ember.tensor([1., 2., 3.]), "sum", lengths=ember.tensor([2, 0, 1])).tolist()
    [3.0, 0.0, 3.0]
    """
    _check_tensor("segment_reduce", "data", data, 1)
    if reduce not in _SEGMENT_OPS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if lengths is None:
        lengths = offsets.narrow(-1, 1, offsets.size(-1) - 1) - offsets.narrow(-1, 0, offsets.size(-1) - 1)
    if not data.is_floating_point():
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{data.dtype._legacy_name}'")
    if lengths.is_floating_point() or lengths.dtype == _C.bool:
        raise NotImplementedError(f"\"_segment_reduce_lengths_cpu_kernel1\" not implemented for "
                                  f"'{lengths.dtype._legacy_name}'")
    if data.dim() < lengths.dim():
        raise RuntimeError("Expected data.dim() >= lengths_value.dim() to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement request to PyTorch.)")
    axis = axis + data.dim() if axis < 0 else axis
    if axis != lengths.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    if bool((lengths < 0).any()):
        raise RuntimeError("lengths contains negative value!")
    if not unsafe and bool((lengths.sum(-1) != data.size(axis)).any()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    lead, n, segments = tuple(data.shape[:axis]), data.size(axis), lengths.size(-1)
    rows = math.prod(lead)
    flat = data.reshape(rows * n, -1)  # (rows * N, R)
    ends = lengths.reshape(rows, segments).cumsum(-1)
    ids = _C.searchsorted(ends, _C.arange(n).expand(rows, n).contiguous(), right=True)  # (rows, N), segment of each
    ids = (ids + _C.arange(rows).unsqueeze(1) * segments).reshape(-1, 1).expand(flat.shape)
    base = _C.zeros((rows * segments, flat.size(1)), dtype=data.dtype)
    result = base.scatter_reduce(0, ids, flat, _SEGMENT_OPS[reduce], include_self=False)
    counts = lengths.reshape(-1, 1).to(data.dtype)
    if initial is not None:
        if reduce in ("sum", "mean"):
            result = result + initial
        elif reduce == "prod":
            result = result * initial
        else:
            result = (result.clamp(min=initial) if reduce == "max" else result.clamp(max=initial))
    if reduce == "mean":
        result = result / counts.clamp(min=1)
    empty = _SEGMENT_EMPTY[reduce] if initial is None else initial
    result = _C.where(counts == 0, _C.full((), empty, dtype=data.dtype), result)
    return result.reshape(lead + (segments,) + tuple(data.shape[axis + 1:]))


TOP_LEVEL["segment_reduce"] = segment_reduce


def get_device_module(device=None):
    """The module of a device type: ember.cpu, ember.cuda; with no device, the current
    accelerator's (ember.cuda where a GPU is usable), otherwise ember.cpu.

    >>> ember.get_device_module("cpu").device_count()
    1
    """
    import importlib

    from . import accelerator
    from ._constants import device as device_class

    if device is None:
        current = accelerator.current_accelerator(check_available=True)
        kind = "cpu" if current is None else current.type
    elif isinstance(device, (str, device_class)):
        kind = (device if isinstance(device, device_class) else device_class(device)).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    if kind not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'torch.{kind}'.")
    return importlib.import_module(f"ember.{kind}")


TOP_LEVEL["get_device_module"] = get_device_module
