"""ember.distributions: probability distributions with torch.distributions' interface
(sampling that honours ember.manual_seed, reparameterised rsample, log_prob, entropy,
validation of parameters and samples), transforms between constraint sets, and KL
divergences between them.

>>> d = Normal(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 2.0]))
>>> d.batch_shape, d.log_prob(ember.tensor([0.0, 1.0])).shape
(ember.Size([2]), ember.Size([2]))
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform
from .weibull import Weibull

__all__ = [
    "Bernoulli", "Categorical", "Cauchy", "Distribution", "Exponential", "ExponentialFamily", "Geometric", "Gumbel",
    "HalfCauchy", "HalfNormal", "Independent", "Laplace", "LogNormal", "Normal", "OneHotCategorical", "Pareto",
    "TransformedDistribution", "Uniform", "Weibull", "biject_to", "constraints", "kl_divergence", "register_kl",
    "transform_to",
]
__all__.extend(transforms.__all__)
