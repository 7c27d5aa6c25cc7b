// The FFT ops (declarations/ops/fft.yaml) over kernels/fft.h: torch's internal _fft_c2c,
// _fft_r2c and _fft_c2r, which ember.fft (ember/fft.py) calls after its n/s padding,
// norm names and dtype rules. Each transforms over `dim`, one dim after another (the first
// pass reads the input where it lies, the others work in place on the result), scaled per
// `normalization` (0: none, 1: 1 / sqrt(n), 2: 1 / n; n the product of the signal sizes).
// Batches of lines are split across threads.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>
#include "core/parallel.h"
#include "kernels/fft.h"
#include "ops/internal.h"
#include "ops/pinned_work.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

namespace fk = kernels::fft;

Dims fft_dims(IntList dim, int64_t ndim) {
  Dims dims;
  for (int64_t d : dim) {
    const int64_t w = wrap_dim(d, ndim);
    EMBER_CHECK(std::find(dims.begin(), dims.end(), w) == dims.end(), Runtime, "FFT dims must be unique");
    dims.push_back(w);
  }
  return dims;
}

double norm_scale(int64_t normalization, double n) {
  switch (normalization) {
    case 0: return 1.0;
    case 1: return 1.0 / std::sqrt(n);
    case 2: return 1.0 / n;
  }
  fail(ErrorKind::Runtime, "Unsupported normalization type: ", normalization);
}

// Runs run(in_offset, out_offset, count, idist, odist) over every line along dim d (the
// index of every other dim): runs of `count` lines along the batch dim with the smallest
// output stride, split across threads. sizes[d] is ignored (it may differ between the two).
template <class F>
void for_lines(IntList sizes, IntList is, IntList os, int64_t d, int64_t n, F&& run) {
  std::vector<int64_t> bs, bis, bos;
  for (int64_t i = 0; i < int64_t(sizes.size()); ++i)
    if (i != d && sizes[i] != 1) bs.push_back(sizes[i]), bis.push_back(is[i]), bos.push_back(os[i]);
  int64_t total = 1;
  for (int64_t s : bs) total *= s;
  if (total == 0) return;
  int64_t H = 1, idist = 0, odist = 0;
  if (!bs.empty()) {
    size_t inner = 0;
    for (size_t i = 1; i < bs.size(); ++i)
      if (std::abs(bos[i]) < std::abs(bos[inner])) inner = i;
    H = bs[inner], idist = bis[inner], odist = bos[inner];
    bs.erase(bs.begin() + inner), bis.erase(bis.begin() + inner), bos.erase(bos.begin() + inner);
  }
  const double cost = double(n) * (std::log2(double(n)) + 1.0);
  const int64_t grain = std::max<int64_t>(1, int64_t(double(kGrainSize) / cost));
  parallel_for(0, total, grain, [&](int64_t b, int64_t e) {
    for (int64_t idx = b; idx < e;) {
      const int64_t j = idx % H, cnt = std::min(H - j, e - idx);
      int64_t r = idx / H, io = 0, oo = 0;
      for (int64_t k = int64_t(bs.size()) - 1; k >= 0; --k) {
        const int64_t q = r % bs[k];
        r /= bs[k];
        io += q * bis[k], oo += q * bos[k];
      }
      run(io + j * idist, oo + j * odist, cnt, idist, odist);
      idx += cnt;
    }
  });
}

// Complex transforms over dims (in the given order) of a tensor of `sizes`: the first
// from in (strides is) to out (strides os), the others in place on out; scale applied once.
template <class R>
void c2c_dims(const std::complex<R>* in, IntList is, std::complex<R>* out, IntList os, IntList sizes,
              IntList dims, bool forward, double scale) {
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = dims[k], n = sizes[d];
    const std::complex<R>* src = k == 0 ? in : out;
    IntList src_strides = k == 0 ? is : os;
    for_lines(sizes, src_strides, os, d, n, [&](int64_t io, int64_t oo, int64_t cnt, int64_t id, int64_t od) {
      fk::Kernels<R>::c2c(src + io, out + oo, n, cnt, src_strides[d], id, os[d], od, forward, k == 0 ? scale : 1.0);
    });
  }
}

// out[..., k, ...] = conj(out[-i..., n - k, ...]) along the last signal dim for k >= start,
// the indices of the other signal dims reflected (mod their size): the half of a real
// signal's full spectrum that a one-sided transform leaves out.
template <class R>
void fill_conjugate_half(std::complex<R>* out, IntList sizes, IntList strides, IntList dims, int64_t start) {
  const int64_t nd = int64_t(sizes.size()), last = dims.back(), n = sizes[last];
  if (start >= n) return;
  std::vector<bool> signal(nd, false);
  for (int64_t d : dims) signal[d] = true;
  Dims lo(nd, 0), idx(nd, 0);
  lo[last] = idx[last] = start;
  for (int64_t i = 0; i < nd; ++i)
    if (sizes[i] == 0) return;
  while (true) {
    int64_t dst = 0, src = 0;
    for (int64_t i = 0; i < nd; ++i) {
      dst += idx[i] * strides[i];
      src += (signal[i] ? (sizes[i] - idx[i]) % sizes[i] : idx[i]) * strides[i];
    }
    out[dst] = std::conj(out[src]);
    int64_t i = nd - 1;
    for (; i >= 0; --i) {
      if (++idx[i] < sizes[i]) break;
      idx[i] = lo[i];
    }
    if (i < 0) return;
  }
}

double signal_numel(IntList sizes, IntList dims) {
  double n = 1;
  for (int64_t d : dims) n *= double(sizes[d]);
  return n;
}

void check_points(IntList sizes, IntList dims) {
  for (int64_t d : dims)
    EMBER_CHECK(sizes[d] >= 1, Runtime, "Invalid number of data points (", sizes[d], ") specified");
}

}  // namespace

Tensor _fft_c2c(const Tensor& self, IntList dim, int64_t normalization, bool forward) {
  EMBER_CHECK(is_complex(self.dtype()), Runtime, "Only supports complex dtypes, but found: ",
              type_name(self.dtype()));
  const Dims dims = fft_dims(dim, self.dim());
  norm_scale(normalization, 1);
  Tensor out = empty_tensor(self.sizes(), self.dtype());
  if (out.numel() == 0) return out;
  if (dims.empty()) return copy_(out, self, false);
  check_bounds(self);
  const double scale = norm_scale(normalization, signal_numel(self.sizes(), dims));
  PinnedWork work({&self, &out}, out.numel());
  visit_complex(self.dtype(), [&](auto tag) {
    using R = decltype(tag);
    using C = std::complex<R>;
    c2c_dims<R>(reinterpret_cast<const C*>(self.data()), self.strides(), reinterpret_cast<C*>(out.data()),
                out.strides(), self.sizes(), dims, forward, scale);
  });
  return out;
}

Tensor _fft_r2c(const Tensor& self, IntList dim, int64_t normalization, bool onesided) {
  const ScalarType dt = self.dtype();
  EMBER_CHECK(is_floating(dt), Runtime, "Only supports floating-point dtypes, but found: ", type_name(dt));
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64, Runtime, "Unsupported dtype ", type_name(dt));
  const Dims dims = fft_dims(dim, self.dim());
  EMBER_CHECK(!dims.empty(), Runtime, "_fft_r2c: expected at least one dim");
  norm_scale(normalization, 1);
  check_points(self.sizes(), dims);
  const int64_t last = dims.back(), n = self.sizes()[last], half = n / 2 + 1;
  Dims out_sizes(self.sizes());
  if (onesided) out_sizes[last] = half;
  Tensor out = empty_tensor(out_sizes, to_complex(dt));
  if (out.numel() == 0) return out;
  check_bounds(self);
  const double scale = norm_scale(normalization, signal_numel(self.sizes(), dims));
  PinnedWork work({&self, &out}, out.numel());
  visit_complex(out.dtype(), [&](auto tag) {
    using R = decltype(tag);
    using C = std::complex<R>;
    const R* in = reinterpret_cast<const R*>(self.data());
    C* o = reinterpret_cast<C*>(out.data());
    IntList is = self.strides(), os = out.strides();
    for_lines(self.sizes(), is, os, last, n, [&](int64_t io, int64_t oo, int64_t cnt, int64_t id, int64_t od) {
      fk::Kernels<R>::r2c(in + io, o + oo, n, cnt, is[last], id, os[last], od, true, scale);
    });
    // the other dims over the one-sided half, in place
    Dims half_sizes(self.sizes());
    half_sizes[last] = half;
    const std::vector<int64_t> rest(dims.data(), dims.data() + dims.size() - 1);
    c2c_dims<R>(o, os, o, os, half_sizes, rest, true, 1.0);
    if (!onesided) fill_conjugate_half<R>(o, out.sizes(), os, dims, half);
  });
  return out;
}

Tensor _fft_c2r(const Tensor& self, IntList dim, int64_t normalization, int64_t last_dim_size) {
  EMBER_CHECK(is_complex(self.dtype()), Runtime, "Only supports complex dtypes, but found: ",
              type_name(self.dtype()));
  const Dims dims = fft_dims(dim, self.dim());
  EMBER_CHECK(!dims.empty(), Runtime, "_fft_c2r: expected at least one dim");
  norm_scale(normalization, 1);
  const int64_t last = dims.back(), n = last_dim_size, half = n / 2 + 1;
  EMBER_CHECK(n >= 1, Runtime, "Invalid number of data points (", n, ") specified");
  EMBER_CHECK(self.sizes()[last] >= half, Runtime, "_fft_c2r: expected at least ", half,
              " points along dim ", last, " for an output of ", n, " points, but got ", self.sizes()[last]);
  Dims out_sizes(self.sizes());
  out_sizes[last] = n;
  Tensor out = empty_tensor(out_sizes, to_real(self.dtype()));
  if (out.numel() == 0) return out;
  check_points(out_sizes, dims);
  check_bounds(self);
  const double scale = norm_scale(normalization, signal_numel(out_sizes, dims));
  Dims half_sizes(self.sizes());
  half_sizes[last] = half;
  // the other dims first (inverse, unscaled), into a fresh tensor of the one-sided half
  const std::vector<int64_t> rest(dims.data(), dims.data() + dims.size() - 1);
  Tensor tmp = rest.empty() ? self : empty_tensor(half_sizes, self.dtype());
  PinnedWork work({&self, &tmp, &out}, out.numel());
  visit_complex(self.dtype(), [&](auto tag) {
    using R = decltype(tag);
    using C = std::complex<R>;
    if (!rest.empty())
      c2c_dims<R>(reinterpret_cast<const C*>(self.data()), self.strides(), reinterpret_cast<C*>(tmp.data()),
                  tmp.strides(), half_sizes, rest, false, 1.0);
    const C* in = reinterpret_cast<const C*>(tmp.data());
    R* o = reinterpret_cast<R*>(out.data());
    IntList is = tmp.strides(), os = out.strides();
    for_lines(out_sizes, is, os, last, n, [&](int64_t io, int64_t oo, int64_t cnt, int64_t id, int64_t od) {
      fk::Kernels<R>::c2r(in + io, o + oo, n, cnt, is[last], id, os[last], od, false, scale);
    });
  });
  return out;
}

}  // namespace ember::ops
