"""The Python side of complex tensors (Note [Complex dtypes], csrc/core/dtype.h): the
``real``/``imag`` properties, and the conjugate and negative bits' queries. ember
conjugates eagerly, so no tensor carries torch's lazy conjugate or negative bit:
``is_conj``/``is_neg`` are False and ``resolve_conj``/``resolve_neg`` return their input."""


def is_complex(input) -> bool:
    """Whether input's dtype is complex (complex64 or complex128)."""
    return input.dtype.is_complex


def is_conj(input) -> bool:
    """False: ember conjugates eagerly, so no tensor has torch's lazy conjugate bit."""
    return False


def is_neg(input) -> bool:
    """False: no ember tensor has torch's lazy negative bit."""
    return False


def resolve_conj(input):
    """input itself: its conjugation, if any, is already computed."""
    return input


def resolve_neg(input):
    """input itself: no ember tensor has a lazy negative bit."""
    return input


def isreal(input):
    """Whether each element is real: its imaginary part is 0 (true for every element of a
    real tensor)."""
    import ember

    if not input.dtype.is_complex:
        return ember.ones_like(input, dtype=ember.bool)
    return ember.imag(input) == 0


def _get_real(self):
    import ember

    return ember.real(self)


def _set_real(self, value):
    import ember

    ember.real(self).copy_(value)


def _get_imag(self):
    import ember

    return ember.imag(self)


def _set_imag(self, value):
    import ember

    ember.imag(self).copy_(value)


def install(tensor_class, namespace):
    """Adds the methods and properties to Tensor and the functions to the ember namespace."""
    tensor_class.real = property(_get_real, _set_real, doc="The real parts (a view; the tensor itself when real).")
    tensor_class.imag = property(_get_imag, _set_imag, doc="The imaginary parts, as a view (complex tensors only).")
    for f in (is_complex, is_conj, is_neg, resolve_conj, resolve_neg, isreal):
        setattr(tensor_class, f.__name__, f)
        namespace[f.__name__] = f
