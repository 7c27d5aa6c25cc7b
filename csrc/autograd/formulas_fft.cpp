// The FFT helpers of the backward formulas (see formulas.h, section fft), written with
// ember::api so that they record under create_graph as well.
#include "autograd/formulas.h"
#include "ops/internal.h"

namespace ember::api {

// r2c is C-linear on real inputs: the gradient is real(A^H grad), A^H the unnormalized
// inverse transform with r2c's scale. The one-sided result left out the upper half of
// the last dim's spectrum, whose gradient is zero: pad it back before transforming.
Tensor fft_r2c_grad(const Tensor& grad, IntList dim, int64_t normalization, bool onesided, IntList self_sizes) {
  Tensor full = grad;
  const int64_t last = wrap_dim(dim.back(), grad.dim()), n = self_sizes[last], m = grad.sizes()[last];
  if (onesided && n > m) {
    Dims pad_sizes(grad.sizes());
    pad_sizes[last] = n - m;
    full = cat({grad, zeros_of(pad_sizes, grad.dtype())}, last);
  }
  return real(_fft_c2c(full, dim, normalization, false));
}

// c2r reads a one-sided spectrum and extends it by conjugate symmetry: its adjoint is the
// one-sided r2c of the gradient, with the entries whose mirror image the extension made
// counted twice (indices 1 .. n - (n / 2 + 1) of the last dim).
Tensor fft_c2r_grad(const Tensor& grad, IntList dim, int64_t normalization) {
  Tensor g = _fft_r2c(grad, dim, normalization, true);
  const int64_t last = wrap_dim(dim.back(), grad.dim());
  const int64_t twice = grad.sizes()[last] - g.sizes()[last];
  if (twice <= 0) return g;
  const int64_t m = g.sizes()[last];
  std::vector<Tensor> parts{narrow(g, last, 0, 1), narrow(g, last, 1, twice) * 2.0};
  if (1 + twice < m) parts.push_back(narrow(g, last, 1 + twice, m - 1 - twice));
  return cat(parts, last);
}

}  // namespace ember::api
