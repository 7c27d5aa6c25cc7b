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
from .continuous_bernoulli import ContinuousBernoulli
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart
# the gamma family, Poisson and Binomial, on the native samplers
from .beta import Beta
from .binomial import Binomial
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .inverse_gamma import InverseGamma
from .negative_binomial import NegativeBinomial
from .poisson import Poisson
from .studentT import StudentT

# register KL pairs; after the families they pair
from . import _kl_more  # noqa: E402,F401
from . import _kl_gamma  # noqa: E402,F401

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
    "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky",
    "Laplace",
    "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution",
    "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "kl_divergence", "register_kl",
    "transform_to",
]
__all__.extend(transforms.__all__)
