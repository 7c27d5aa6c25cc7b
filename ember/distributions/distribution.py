"""Distribution: the base class of every probability distribution.

Shapes: a sample of ``d.sample(sample_shape)`` has shape
``sample_shape + d.batch_shape + d.event_shape``. ``batch_shape`` counts independent,
differently parametrised distributions; ``event_shape`` is the shape of one draw (``()``
for scalar distributions, ``(n,)`` for a one-hot vector). ``log_prob`` reduces the event
dims away.
"""
from __future__ import annotations

import warnings

from .. import Size, Tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class. Subclasses set ``arg_constraints`` (parameter name -> Constraint),
    ``support``, ``has_rsample``, ``has_enumerate_support`` and implement what they can of
    sample/rsample, log_prob, cdf, icdf, entropy, mean, mode, variance, expand.

    Arguments are validated (``validate_args``) when the class default, which
    ``Distribution.set_default_validate_args`` sets (True unless Python runs with -O), or
    the constructor's ``validate_args`` says so.

    >>> Distribution.set_default_validate_args(True)
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turns validation of parameters and samples on (True) or off (False) by default."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None) -> None:
        self._batch_shape = batch_shape if isinstance(batch_shape, Size) else Size(batch_shape)
        self._event_shape = event_shape if isinstance(event_shape, Size) else Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set `arg_constraints = {{}}` or "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # checked by the subclass, if at all
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # the other parametrisation (logits for probs): valid by construction
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                                 f"but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose batch_shape is batch_shape, its parameters expanded
        (views, no copies) to it. Subclasses implementing it call _get_checked_instance."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> the Constraint its values must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint describing where the distribution has mass or density."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """A sample (or sample_shape samples) of shape sample_shape + batch_shape + event_shape,
        outside autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Like sample, but reparameterised: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        """n samples; use sample((n,))."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", UserWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the density (or mass) at value, over batch_shape (event dims reduced)."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at value."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at value."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        """Every value of a discrete distribution, along a new leading dim, broadcast over
        batch_shape (expand=True) or with size-1 batch dims (expand=False)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, over batch_shape."""
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value) -> None:
        """Raises ValueError unless value is a tensor broadcastable with batch_shape +
        event_shape whose elements are in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if value.shape[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `support` to enable sample validation. Please initialize "
                          "the distribution with `validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """The (blank) object expand fills in: _instance, or a new one of self's type. A
        subclass with its own __init__ must implement expand itself."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return f"{type(self).__name__}({args})"
