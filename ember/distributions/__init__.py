"""ember.distributions: probability distributions with torch.distributions' interface
(sampling that honours ember.manual_seed, reparameterised rsample, log_prob, entropy,
validation of parameters and samples) and KL divergences between them.

>>> d = Normal(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 2.0]))
>>> d.batch_shape, d.log_prob(ember.tensor([0.0, 1.0])).shape
(ember.Size([2]), ember.Size([2]))
"""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent
from .kl import kl_divergence, register_kl
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform
# the gamma family, Poisson and Binomial (issue 15), with their KL pairs
from .beta import Beta
from .binomial import Binomial
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .negative_binomial import NegativeBinomial
from .poisson import Poisson
from .studentt import StudentT
from . import _kl_gamma  # noqa: F401  (registers the KL pairs; after the families it pairs with)

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Independent", "Normal", "OneHotCategorical",
    "Uniform", "constraints", "kl_divergence", "register_kl",
    "Beta", "Binomial", "Chi2", "Dirichlet", "FisherSnedecor", "Gamma", "NegativeBinomial", "Poisson", "StudentT",
]
