"""ember.special: torch.special's functions. The native ones are the ops of
declarations/ops/special.yaml (kernels in csrc/kernels/special.cpp); the rest are
torch's aliases of ops declared elsewhere (erf, expit, gammaln, logsumexp, ...).
"""
from __future__ import annotations

from . import _C

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
    "polygamma", "psi", "round", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]

# the natives of declarations/ops/special.yaml, by their torch.special names
airy_ai = _C.special_airy_ai
bessel_j0 = _C.special_bessel_j0
bessel_j1 = _C.special_bessel_j1
bessel_y0 = _C.special_bessel_y0
bessel_y1 = _C.special_bessel_y1
modified_bessel_i0 = _C.special_modified_bessel_i0
modified_bessel_i1 = _C.special_modified_bessel_i1
modified_bessel_k0 = _C.special_modified_bessel_k0
modified_bessel_k1 = _C.special_modified_bessel_k1
scaled_modified_bessel_k0 = _C.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _C.special_scaled_modified_bessel_k1
spherical_bessel_j0 = _C.special_spherical_bessel_j0
chebyshev_polynomial_t = _C.special_chebyshev_polynomial_t
chebyshev_polynomial_u = _C.special_chebyshev_polynomial_u
chebyshev_polynomial_v = _C.special_chebyshev_polynomial_v
chebyshev_polynomial_w = _C.special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _C.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _C.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _C.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _C.special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = _C.special_hermite_polynomial_h
hermite_polynomial_he = _C.special_hermite_polynomial_he
laguerre_polynomial_l = _C.special_laguerre_polynomial_l
legendre_polynomial_p = _C.special_legendre_polynomial_p
entr = _C.special_entr
erfcx = _C.special_erfcx
i0e = _C.special_i0e
i1 = _C.special_i1
i1e = _C.special_i1e
log_ndtr = _C.special_log_ndtr
ndtr = _C.special_ndtr
ndtri = _C.special_ndtri
xlog1py = _C.special_xlog1py
zeta = _C.special_zeta

# torch's aliases of ops declared with their top-level names
digamma = psi = _C.digamma
gammaln = _C.lgamma
polygamma = _C.polygamma
multigammaln = _C.mvlgamma
gammainc = _C.igamma
gammaincc = _C.igammac
i0 = _C.i0
sinc = _C.sinc
erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
exp2 = _C.exp2
expit = _C.sigmoid
expm1 = _C.expm1
log1p = _C.log1p
logit = _C.logit
round = _C.round
xlogy = _C.xlogy
logsumexp = _C.logsumexp


def softmax(input, dim, *, dtype=None):
    """softmax(input, dim, *, dtype=None), as torch.special.softmax."""
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax(input, dim, *, dtype=None), as torch.special.log_softmax."""
    return _C.log_softmax(input, dim, dtype)
