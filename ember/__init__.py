"""ember: a small, fast, PyTorch-compatible tensor library with a native C++ core.

`import ember as torch` runs PyTorch code for everything ember supports."""
from __future__ import annotations

__version__ = "0.1.0"

import builtins as _builtins  # the names int, float and bool below are dtypes, as in torch


def _source_checkout_without_extension(error: ImportError) -> None:
    """Raises a clear ImportError when this package folder has no built extension: Python
    found ember's source checkout (the current folder) before the installed ember."""
    import importlib.machinery
    import os

    package = os.path.dirname(os.path.abspath(__file__))
    if any(os.path.exists(os.path.join(package, "_C" + suffix)) for suffix in importlib.machinery.EXTENSION_SUFFIXES):
        return  # a built extension that failed to load: its own error says why
    raise ImportError(
        f"ember was imported from its source checkout {os.path.dirname(package)}, where the extension "
        "ember._C is not built for this Python: run `pip install -e .` or `python setup.py build_ext "
        "--inplace` in that folder to build it, or run Python from another folder to use the installed "
        "ember") from error


try:
    from . import _C
except ImportError as _error:
    _source_checkout_without_extension(_error)
    raise
from ._C import Generator, Size, default_generator, dtype, get_default_dtype, get_num_threads
from ._C import set_default_dtype, set_flush_denormal, set_num_threads, tensor
from ._constants import channels_last, channels_last_3d, contiguous_format, device, layout, memory_format
from ._constants import preserve_format, sparse_coo, sparse_csr, strided
from ._finfo import finfo, iinfo
from ._tensor import Tensor
from ._functional import atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors, diff
from ._tensor_str import set_printoptions
from . import _complex
from .storage import TypedStorage, UntypedStorage
from . import _legacy, autograd, linalg, special, storage as _storage
from .autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad
from .autograd.grad_mode import set_grad_enabled
from .linalg import einsum, tensordot


def set_default_device(device):
    """Sets the device factories use when given none (None: the CPU), for this thread."""
    _C._set_default_device(device)


def get_default_device():
    """The device factories use when given none."""
    return _C._get_default_device()


_C._set_tensor_class(Tensor)
_C._set_constants(_constants_cpu := device("cpu"), device, strided, contiguous_format, preserve_format,
                  channels_last, channels_last_3d)

# dtypes (float32, float, ...), the generated functions, legacy classes: each listed once,
# in the table it comes from.
for _name in _C._dtype_names:
    globals()[_name] = getattr(_C, _name)
for _name in _C._function_names:
    globals()[_name] = getattr(_C, _name)
globals().update(_legacy.TENSOR_CLASSES)
globals().update(_storage.STORAGE_CLASSES)
del _name
globals().update(linalg.TOP_LEVEL)
_complex.install(Tensor, globals())
globals().update(linalg._linalg_factor.FUNCTIONS)
norm = linalg._norm
from . import _ops_math  # noqa: E402  (isin, quantile, cov, histogram, gcd, windows, ...: composed ops)
globals().update(_ops_math.TOP_LEVEL)
chain_matmul = linalg._chain_matmul


def _picked(parts, return_inverse, return_counts):
    """torch's unique returns: the values alone, or a tuple with the asked extras."""
    if not (return_inverse or return_counts):
        return parts[0]
    return (parts[0],) + ((parts[1],) if return_inverse else ()) + ((parts[2],) if return_counts else ())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of input (or slices along dim), sorted; with return_inverse
    each element's index among them, with return_counts how often each occurs.

    >>> ember.unique(ember.tensor([3, 1, 3]), return_counts=True)[1].tolist()
    [1, 2]
    """
    return _picked(_C._unique(input, sorted, return_inverse, return_counts, dim), return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first element of each run of equal consecutive elements (or slices along dim).

    >>> ember.unique_consecutive(ember.tensor([1, 1, 3, 1])).tolist()
    [1, 3, 1]
    """
    return _picked(_C._unique_consecutive(input, return_inverse, return_counts, dim), return_inverse, return_counts)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements of input; see Tensor.nonzero."""
    return input.nonzero(as_tuple=as_tuple)


def meshgrid(*tensors, indexing=None):
    """meshgrid(a, b) or meshgrid([a, b]); see _C.meshgrid."""
    return _C.meshgrid(tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors,
                       indexing=indexing)


def cartesian_prod(*tensors) -> Tensor:
    """The cartesian product of 1-D tensors; see _C.cartesian_prod."""
    return _C.cartesian_prod(tensors)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: int = 0,
             zero_infinity: bool = False) -> Tensor:
    """torch.ctc_loss: F.ctc_loss with reduction as torch's int enum (0 none, 1 mean, 2 sum).
    torch 2.13's binding declares Mean the default but computes 'none' without the
    argument (measured), so the default here is 0."""
    from .nn._functional.ctc import ctc_loss as _ctc_loss
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                     ("none", "mean", "sum")[reduction], zero_infinity)


def is_tensor(obj) -> bool:
    """Whether obj is an ember tensor."""
    return isinstance(obj, _C.TensorBase)


def is_storage(obj) -> bool:
    """Whether obj is an ember storage (untyped or typed)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


def is_floating_point(input) -> bool:
    """Whether input's dtype is a floating point type."""
    return input.is_floating_point()


def numel(input) -> int:
    """The number of elements of input."""
    return input.numel()


def from_numpy(ndarray) -> Tensor:
    """A tensor sharing memory with a numpy array (which it keeps alive)."""
    import numpy

    if not isinstance(ndarray, numpy.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _C._from_array(ndarray, True)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """data as a tensor, sharing memory when data is already a tensor (or a numpy array on
    the CPU) of the requested dtype and device. A tensor stays on its device unless device
    is given; other data goes to device, by default the default device."""
    if isinstance(data, _C.TensorBase):
        return data if dtype is None and device is None else data.to(device, dtype)
    if type(data).__module__ == "numpy" and hasattr(data, "__array_interface__") and type(data).__name__ == "ndarray":
        try:
            t = _C._from_array(data, True)
        except TypeError:
            if dtype is None:
                raise
            return tensor(data, dtype=dtype, device=device)  # an array dtype ember lacks (uint16, ...): numpy casts it
        return t.to(get_default_device() if device is None else device, dtype)
    return tensor(data, dtype=dtype, device=device)


def manual_seed(seed) -> Generator:
    """Seeds the default generator; returns it."""
    return default_generator.manual_seed(_builtins.int(seed) if isinstance(seed, _builtins.float) else seed)


def seed() -> int:
    """Seeds the default generator from the system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator started from."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state, as a ByteTensor."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restores the default generator's state from get_rng_state()."""
    default_generator.set_state(new_state)


from . import __config__  # noqa: E402


# ---- parts imported on first use, so that `import ember` stays fast ----
_LAZY_MODULES = frozenset({"accelerator", "amp", "backends", "cpu", "cuda", "distributed", "distributions", "fft", "func",
                           "multiprocessing", "nn", "onnx", "optim", "return_types", "serialization", "signal",
                           "sparse", "utils", "version"})
_LAZY_NAMES = {name: module for module, names in {  # name -> the module defining it
    "serialization": ("save", "load"),
    "_compile": ("compile",),
    "_sparse": ("sparse_coo_tensor", "spmm"),
    "_sparse_csr": ("sparse_csr_tensor",),
    "_stft": ("stft", "istft"),
    "amp": ("autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
            "GradScaler"),
    "_torch_alias": ("install_as_torch",),
    "amp.autocast_mode": ("is_autocast_cache_enabled", "set_autocast_cache_enabled", "autocast_increment_nesting",
                          "autocast_decrement_nesting"),
    "nn._functional.top_level": ("layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm", "dropout",
                                 "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
                                 "feature_alpha_dropout", "feature_alpha_dropout_", "relu_", "selu_", "celu_",
                                 "sigmoid_", "rrelu", "rrelu_", "prelu", "threshold", "threshold_", "hardshrink",
                                 "bilinear", "pdist", "cdist", "cosine_similarity", "pairwise_distance",
                                 "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
                                 "poisson_nll_loss", "triplet_margin_loss", "kl_div", "adaptive_avg_pool1d",
                                 "adaptive_max_pool1d", "avg_pool1d", "max_pool1d", "max_pool1d_with_indices",
                                 "max_pool2d", "max_pool3d"),
    "utils.dlpack": ("from_dlpack", "to_dlpack"),
    # torch's top-level convolutions and shuffles are the same functions as torch.nn.functional's
    "nn.functional": ("channel_shuffle", "native_channel_shuffle", "conv_tbc", "pixel_shuffle", "pixel_unshuffle", "conv1d", "conv2d", "conv3d",
                      "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
    "backends": ("set_float32_matmul_precision", "get_float32_matmul_precision", "use_deterministic_algorithms",
                 "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled"),
}.items() for name in names}


# torch's shape, view and alias names composed in Python, and its top-level in-place
# aliases (ember.abs_(x) is x.abs_()): ember/_ops_shape.py
from . import _ops_shape  # noqa: E402

globals().update(_ops_shape.FUNCTIONS)
# torch's remaining small names (pi, svd, qr, the RNN cells, the removed linalg calls, flags): ember/_torch_more.py
from . import _torch_more  # noqa: E402

globals().update(_torch_more.TOP_LEVEL)
globals().update(_ops_shape.inplace_aliases(Tensor, set(globals()) | set(_LAZY_NAMES)))  # after every Tensor method


def __getattr__(name):
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")  # the import binds it here too
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise _ops_shape.missing_attribute(__name__, name, "torch")  # says so when torch has the name


def __dir__():
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES))
