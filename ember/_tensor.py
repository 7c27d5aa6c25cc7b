"""class Tensor: what is clearer in Python on top of ember._C.TensorBase (printing,
pickling, copying, numpy, legacy conversions)."""
from __future__ import annotations

import weakref

from . import _C, _functional, _tensor_str
from ._constants import preserve_format

_ACCUMULATORS = weakref.WeakKeyDictionary()  # leaf -> its AccumulateGrad node, kept alive for post-accumulate hooks


class _NumpyExport:
    """What numpy holds of a tensor: the array interface, and the storage it points into,
    kept alive here so that set_() or .data = ... on the tensor cannot free the memory."""

    __slots__ = ("__array_interface__", "_storage")

    def __init__(self, tensor):
        self.__array_interface__ = tensor._array_interface
        self._storage = tensor.untyped_storage()


def _rebuild_tensor(storage, storage_offset, size, stride, dtype, requires_grad=False):
    t = _C._legacy_new(dtype)
    t.set_(storage, storage_offset, size, stride)
    return t.requires_grad_() if requires_grad else t


class Tensor(_C.TensorBase):
    __array_priority__ = 1000  # numpy defers to ember in mixed expressions

    def __new__(cls, *args, **kwargs):
        from .storage import TypedStorage

        if args and isinstance(args[0], TypedStorage):
            args = (args[0].untyped(),) + args[1:]
        return super().__new__(cls, *args, **kwargs)

    def __repr__(self, *, tensor_contents=None):
        return _tensor_str._str(self)

    def __hash__(self):
        return id(self)  # as torch's: tensors are dict keys and set members by identity

    def __invert__(self):
        # torch's `~` raises TypeError where bitwise_not raises NotImplementedError
        if self.dtype.is_floating_point:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return self.bitwise_not()

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # ---- autograd (the graph and engine are native; see ember/autograd) ----

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulates the gradient of this tensor into the .grad of the leaves that made
        it (or of `inputs`). gradient may be omitted for a one-element tensor."""
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed and may return a
        replacement. Returns a handle whose remove() unregisters it."""
        return self._register_hook(hook)

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after backward has accumulated this leaf's gradient into
        .grad (DistributedDataParallel starts communicating from it). Returns a handle
        whose remove() unregisters it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        # The hook lives on the leaf's AccumulateGrad node, which the leaf holds only
        # weakly: _ACCUMULATORS keeps it alive as long as the leaf, and the hook holds
        # the leaf weakly so that nothing cycles through the native node.
        node = self.view_as(self).grad_fn.next_functions[0][0]
        _ACCUMULATORS[self] = node
        leaf = weakref.ref(self)

        def call(grad_inputs, grad_outputs):
            t = leaf()
            if t is not None:
                hook(t)

        return node.register_hook(call)

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def split(self, split_size, dim=0):
        """Splits into pieces of split_size along dim, or of the sizes in a list."""
        return super().split(split_size, dim)

    def nonzero(self, *, as_tuple=False):
        """Indices of the nonzero elements: an (n, dim) tensor, or with as_tuple a tuple
        of dim index tensors (one per dim, a single one for a 0-dim input)."""
        if as_tuple and self.dim() == 0:
            return self.unsqueeze(0).nonzero(as_tuple=True)
        found = super().nonzero()
        return found.unbind(1) if as_tuple else found

    # ---- sparse layouts (ember/_sparse.py) ----
    def to_sparse(self, *args, **kwargs):
        """This tensor's nonzeros as a coalesced sparse COO tensor; to_sparse(sparse_dim)
        keeps the trailing dims dense."""
        from ._sparse import to_sparse

        return to_sparse(self, *args, **kwargs)

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self if dtype is None else self.to(dtype)

    def to_sparse_csr(self, dense_dim=None):
        """This tensor's nonzeros as a sparse CSR tensor: dims before the last two (and
        dense_dim trailing ones) are batch dims, each batch with the same nnz."""
        from ._sparse import _sparse_csr

        return _sparse_csr.to_sparse_csr(self, dense_dim)

    @property
    def is_sparse_csr(self):
        return False

    def crow_indices(self):
        raise RuntimeError("crow_indices expected sparse row compressed tensor layout but got Strided")

    def col_indices(self):
        raise RuntimeError("col_indices expected sparse row compressed tensor layout but got Strided")

    # ---- numpy ----
    def numpy(self, *, force=False):
        """A numpy array sharing this tensor's memory (force=True: of its detached data
        even if it requires grad)."""
        import numpy

        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device.type} device type tensor to numpy. Use Tensor.cpu() to copy "
                            "the tensor to host memory first.")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return numpy.asarray(_NumpyExport(self))

    def __array__(self, dtype=None, copy=None):
        import numpy

        arr = self.numpy()
        if dtype is not None and arr.dtype != numpy.dtype(dtype):
            if copy is False:
                raise ValueError(f"converting to {dtype} needs a copy, but copy=False was given")
            return arr.astype(dtype)
        return arr.copy() if copy else arr  # numpy 2 leaves copy=True to __array__

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """numpy ran a ufunc on a tensor (ember.ones(2) + ndarray, numpy.sin(t)): its result
        comes back as a tensor over the result's memory, as in torch, which also turns a
        bool result into uint8."""
        if array.dtype.kind == "b":
            array = array.astype("uint8")
        return _C._from_array(array, True)

    # ---- DLPack (ember/utils/dlpack.py, csrc/python/dlpack.cpp) ----
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule lending this tensor's memory: versioned ("dltensor_versioned")
        when max_version >= (1, 0), else legacy ("dltensor"); copy=True lends a copy.
        Consumers call it for you: ``numpy.from_dlpack(t)``, ``torch.from_dlpack(t)``.

        >>> t = ember.arange(3)
        >>> numpy.from_dlpack(t)[0] = 7
        >>> t
        tensor([7, 1, 2])
        """
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        if stream is not None and type(stream) is not int:
            raise TypeError("stream must be ``int`` or ``none``")
        if stream is not None and stream != -1:
            raise AssertionError("stream should be None on cpu.")
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"__dlpack__(): cannot export to device {tuple(dl_device)}; ember tensors live on "
                              "the CPU (kDLCPU, 0)")
        versioned = max_version is not None and max_version[0] >= 1
        return _C._to_dlpack(self, versioned, bool(copy))

    def __dlpack_device__(self):
        """(DLDeviceType.kDLCPU, 0): where DLPack finds this tensor's memory.

        >>> ember.ones(2).__dlpack_device__()
        (<DLDeviceType.kDLCPU: 1>, 0)
        """
        from .utils.dlpack import DLDeviceType

        return (DLDeviceType.kDLCPU, 0)

    # ---- pickling and copying: storages are shared, as in torch ----
    def __reduce_ex__(self, protocol):
        return (_rebuild_tensor, (self.untyped_storage(), self.storage_offset(), tuple(self.size()),
                                  self.stride(), self.dtype, self.requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        import copy

        storage = copy.deepcopy(self.untyped_storage(), memo)
        new = _rebuild_tensor(storage, self.storage_offset(), tuple(self.size()), self.stride(), self.dtype,
                              self.requires_grad)
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        memo[id(self)] = new
        return new

    # ---- storages ----
    def share_memory_(self):
        """Moves the storage into shared memory (see ember.multiprocessing); returns self."""
        self.untyped_storage().share_memory_()
        return self

    def is_shared(self):
        return self.untyped_storage().is_shared()

    def storage(self):
        """The storage as a TypedStorage of this tensor's dtype."""
        from .storage import TypedStorage

        return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)

    def set_(self, source=None, storage_offset=0, size=None, stride=None):
        from .storage import TypedStorage

        if isinstance(source, TypedStorage):
            if source.dtype is not self.dtype:
                raise RuntimeError(f"set_(): expected a storage of {self.dtype!r}, got one of {source.dtype!r}")
            source = source.untyped()
        if source is None or isinstance(source, _C.TensorBase):
            return super().set_(source)
        if size is None:
            return super().set_(source, storage_offset)
        return super().set_(source, storage_offset, size, stride)

    # ---- type conversions ----
    def type(self, dtype=None, non_blocking=False, **kwargs):
        """With no argument, the legacy type name ('ember.FloatTensor'); otherwise a
        conversion to the given dtype, legacy class or its name."""
        from . import _legacy

        if dtype is None:
            return "ember." + _legacy.tensor_class_name(self.dtype)
        return self.to(_legacy.dtype_from_type(dtype))

    where = _functional.where
    fill_diagonal_ = _functional.fill_diagonal_
    diff = _functional.diff

    def new_tensor(self, data, dtype=None, device=None):
        """A new tensor from data (copied), with self's dtype and device unless given."""
        return _C.tensor(data, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device)

    def type_as(self, other):
        """self converted to other's dtype (self when it already has it)."""
        return self.to(other.dtype)

    def cpu(self, memory_format=preserve_format):
        """This tensor on the CPU (self when it is there and the format is kept)."""
        return self.to("cpu", memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, memory_format=preserve_format):
        """This tensor on a CUDA device (the current one when device is None)."""
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device, non_blocking=non_blocking, memory_format=memory_format)

    def get_device(self):
        """The CUDA device index of the tensor, -1 for the CPU and meta."""
        index = self.device.index
        return -1 if index is None else index

    # ---- Python-level ops (ember/__init__.py, ember/linalg.py) ----
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """See ember.unique."""
        from . import unique

        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """See ember.unique_consecutive."""
        from . import unique_consecutive

        return unique_consecutive(self, return_inverse, return_counts, dim)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """The p-norm over dim: a number p, or 'fro' / 'nuc' (see ember.norm)."""
        from .linalg import _norm

        return _norm(self, p, dim, keepdim, dtype=dtype)

    def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
             normalized=False, onesided=None, return_complex=None, align_to_window=None):
        """The short-time Fourier transform (see ember.stft)."""
        from ._stft import stft

        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                    return_complex, align_to_window)

    def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
              onesided=None, length=None, return_complex=False):
        """The inverse short-time Fourier transform (see ember.istft)."""
        from ._stft import istft

        return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                     return_complex)

    # polygamma(n, x) takes its int first, so its methods are written here (special.yaml)
    def polygamma(self, n):
        """polygamma(n, self): the n-th derivative of digamma."""
        return _C.polygamma(n, self)

    def polygamma_(self, n):
        """In-place polygamma(n, self)."""
        return self.copy_(_C.polygamma(n, self))



def _add_dtype_conversions():
    """float(), double(), half(), long(), ... one per dtype, named after its legacy name."""
    for name in _C._dtype_names:
        dtype = getattr(_C, name)
        method = _legacy_method_name(dtype)

        def convert(self, memory_format=preserve_format, _dtype=dtype):
            return self.to(_dtype, memory_format=memory_format)

        convert.__name__ = method
        convert.__doc__ = f"self.to({dtype!r})"
        setattr(Tensor, method, convert)


def _legacy_method_name(dtype):
    from . import _legacy

    name = _legacy.legacy_name(dtype)
    return {"ComplexFloat": "cfloat", "ComplexDouble": "cdouble"}.get(name, name.lower())


def _chalf(self, memory_format=preserve_format):
    """torch's self.to(complex32): ember has no complex32 (ComplexHalf) dtype."""
    raise NotImplementedError("chalf(): ember has no complex32 (ComplexHalf) dtype; use cfloat() for complex64")


Tensor.chalf = _chalf


_add_dtype_conversions()


def _add_linalg_methods():
    """det(), inverse(), slogdet(), logdet(), pinverse(), matrix_power(): ember.linalg's."""
    from .linalg import TOP_LEVEL

    for name, fn in TOP_LEVEL.items():
        def method(self, *args, _fn=fn, **kwargs):
            return _fn(self, *args, **kwargs)

        method.__name__ = name
        method.__doc__ = f"See ember.{name}."
        setattr(Tensor, name, method)


_add_linalg_methods()


def _add_math_methods():
    """quantile(), cov(), histogram(), gcd(), frexp(), put_(), index_reduce(), ...: ember/_ops_math.py's."""
    from ._ops_math import METHODS

    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)


_add_math_methods()


def _add_shape_methods():
    """ember/_ops_shape.py's methods (t_, hsplit, sum_to_size, ...) and properties (H, mH, mT)."""
    from ._ops_shape import METHODS, PROPERTIES

    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(Tensor, name, property(fn, doc=fn.__doc__))


_add_shape_methods()


def _add_more_methods():
    """ember/_torch_more.py's methods (svd, qr, new, apply_, ...) and properties (is_xpu, volatile, ...)."""
    from ._torch_more import METHODS, PROPERTIES

    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(Tensor, name, property(fn, doc=fn.__doc__))


_add_more_methods()
