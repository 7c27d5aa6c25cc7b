// The FFT engine (see kernels/fft.h), written for ember.
//
// A plan for length n is either
//  - mixed-radix Cooley-Tukey, decimation in time, in Stockham's self-sorting order: n is
//    factored into radices 4, 2, 3, 5 and odd primes up to kMaxDirect; each stage reads one
//    buffer and writes the other, so no bit reversal is needed. Before a stage of radix p the
//    buffer holds, for each residue j mod s (s = n / l), the length-l DFT of the decimated
//    signal x[j + s t] at A[j + s k]; the stage combines p of them (residues j' + s' i,
//    s' = s / p) into the length-lp DFT of the residue j' mod s':
//      B[j' + s' (k + l q)] = sum_i W_lp^(ik) A[j' + s' i + s k] W_p^(iq);
//  - or Bluestein's chirp-z for lengths with a prime factor above kMaxDirect: with
//    w_k = exp(-pi i k^2 / n), X_k = w_k sum_j (x_j w_j) conj(w_(k-j)), a convolution done by
//    a power-of-two FFT of length M >= 2n - 1.
// Plans only compute the forward transform; the inverse is conj(forward(conj(x))). Twiddles
// are computed in double and rounded to R. Real transforms of even n run a complex FFT of
// half the length on z_j = x_2j + i x_2j+1 and split it (E_k, O_k: the DFTs of the even and
// odd samples): X_k = E_k + W_n^k O_k; odd n go through the complex transform.
#include <cmath>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>
#include "kernels/fft.h"

namespace ember::kernels::fft {
namespace {

constexpr int kMaxDirect = 61;  // larger prime factors go to Bluestein

// Complex products written out: std::complex's operator* checks for NaN/inf (a libcall).
template <class R>
inline std::complex<R> cmul(std::complex<R> a, std::complex<R> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
template <class R>
inline std::complex<R> mul_neg_i(std::complex<R> a) {  // -i a
  return {a.imag(), -a.real()};
}

// exp(-2 pi i m / N) in double, with the angle reduced to [-pi, pi].
std::complex<double> root(int64_t m, int64_t N) {
  m %= N;
  if (m < 0) m += N;
  if (2 * m > N) m -= N;
  const double a = -2.0 * M_PI * static_cast<double>(m) / static_cast<double>(N);
  return {std::cos(a), std::sin(a)};
}

template <class R>
struct Stage {
  int p;
  int64_t l, m;                // sub-transform length before the stage; s' (= n / (l p))
  std::vector<std::complex<R>> tw;  // tw[k (p - 1) + i - 1] = W_lp^(ik), k < l, 0 < i < p
  std::vector<std::complex<R>> roots;  // W_p^q (generic radix only)
};

template <class R>
struct Plan {
  using C = std::complex<R>;
  int64_t n = 0;
  std::vector<Stage<R>> stages;
  // Bluestein
  int64_t M = 0;
  std::shared_ptr<const Plan> sub;
  std::vector<C> chirp;  // w_k, k < n
  std::vector<C> bhat;   // DFT_M of the conjugate chirp, divided by M

  int64_t scratch_size() const { return M ? 2 * M : n; }
  // The forward DFT of buf[0, n), using scr[0, scratch_size()); returns buf or scr,
  // whichever holds the result.
  const C* forward(C* buf, C* scr) const;
};

template <class R>
std::shared_ptr<const Plan<R>> get_plan(int64_t n);

// ---- stages: A (read) -> B (written), see the top of the file for the indices -------------

template <class R>
void stage2(const std::complex<R>* A, std::complex<R>* B, int64_t l, int64_t m, const std::complex<R>* tw) {
  using C = std::complex<R>;
  for (int64_t k = 0; k < l; ++k) {
    const C w = tw[k];
    const C* a = A + 2 * m * k;
    C* b = B + m * k;
    for (int64_t j = 0; j < m; ++j) {
      const C v0 = a[j], v1 = cmul(a[j + m], w);
      b[j] = v0 + v1;
      b[j + m * l] = v0 - v1;
    }
  }
}

template <class R>
void stage4(const std::complex<R>* A, std::complex<R>* B, int64_t l, int64_t m, const std::complex<R>* tw) {
  using C = std::complex<R>;
  const int64_t ml = m * l;
  for (int64_t k = 0; k < l; ++k) {
    const C w1 = tw[3 * k], w2 = tw[3 * k + 1], w3 = tw[3 * k + 2];
    const C* a = A + 4 * m * k;
    C* b = B + m * k;
    for (int64_t j = 0; j < m; ++j) {
      const C v0 = a[j], v1 = cmul(a[j + m], w1), v2 = cmul(a[j + 2 * m], w2), v3 = cmul(a[j + 3 * m], w3);
      const C u0 = v0 + v2, u1 = v0 - v2, u2 = v1 + v3, u3 = mul_neg_i(v1 - v3);
      b[j] = u0 + u2;
      b[j + ml] = u1 + u3;
      b[j + 2 * ml] = u0 - u2;
      b[j + 3 * ml] = u1 - u3;
    }
  }
}

template <class R>
void stage3(const std::complex<R>* A, std::complex<R>* B, int64_t l, int64_t m, const std::complex<R>* tw) {
  using C = std::complex<R>;
  const R c = R(-0.5), s = R(0.86602540378443864676372317075294);  // W_3 = c - i s
  const int64_t ml = m * l;
  for (int64_t k = 0; k < l; ++k) {
    const C w1 = tw[2 * k], w2 = tw[2 * k + 1];
    const C* a = A + 3 * m * k;
    C* b = B + m * k;
    for (int64_t j = 0; j < m; ++j) {
      const C v0 = a[j], v1 = cmul(a[j + m], w1), v2 = cmul(a[j + 2 * m], w2);
      const C t = v1 + v2, u = v0 + c * t, d = mul_neg_i(s * (v1 - v2));
      b[j] = v0 + t;
      b[j + ml] = u + d;
      b[j + 2 * ml] = u - d;
    }
  }
}

template <class R>
void stage5(const std::complex<R>* A, std::complex<R>* B, int64_t l, int64_t m, const std::complex<R>* tw) {
  using C = std::complex<R>;
  // W_5^k = cos(2 pi k / 5) - i sin(2 pi k / 5)
  const R c1 = R(0.30901699437494742410229341718282), c2 = R(-0.80901699437494742410229341718282);
  const R s1 = R(0.95105651629515357211643933337938), s2 = R(0.58778525229247312916870595463907);
  const int64_t ml = m * l;
  for (int64_t k = 0; k < l; ++k) {
    const C* w = tw + 4 * k;
    const C* a = A + 5 * m * k;
    C* b = B + m * k;
    for (int64_t j = 0; j < m; ++j) {
      const C v0 = a[j], v1 = cmul(a[j + m], w[0]), v2 = cmul(a[j + 2 * m], w[1]), v3 = cmul(a[j + 3 * m], w[2]),
              v4 = cmul(a[j + 4 * m], w[3]);
      const C t1 = v1 + v4, t2 = v2 + v3, d1 = v1 - v4, d2 = v2 - v3;
      const C a1 = v0 + c1 * t1 + c2 * t2, a2 = v0 + c2 * t1 + c1 * t2;
      const C b1 = mul_neg_i(s1 * d1 + s2 * d2), b2 = mul_neg_i(s2 * d1 - s1 * d2);
      b[j] = v0 + t1 + t2;
      b[j + ml] = a1 + b1;
      b[j + 4 * ml] = a1 - b1;
      b[j + 2 * ml] = a2 + b2;
      b[j + 3 * ml] = a2 - b2;
    }
  }
}

// Any odd p <= kMaxDirect: the pairs i, p - i share cosines and sines,
// y_q = v0 + sum_i cos(2 pi iq / p) (v_i + v_p-i) - i sin(2 pi iq / p) (v_i - v_p-i).
template <class R>
void stage_odd(const std::complex<R>* A, std::complex<R>* B, int p, int64_t l, int64_t m,
               const std::complex<R>* tw, const std::complex<R>* roots) {
  using C = std::complex<R>;
  const int h = (p - 1) / 2;
  const int64_t ml = m * l;
  C v[kMaxDirect], t[kMaxDirect / 2 + 1], d[kMaxDirect / 2 + 1];
  for (int64_t k = 0; k < l; ++k) {
    const C* w = tw + (p - 1) * k;
    const C* a = A + p * m * k;
    C* b = B + m * k;
    for (int64_t j = 0; j < m; ++j) {
      const C v0 = a[j];
      for (int i = 1; i < p; ++i) v[i] = cmul(a[j + i * m], w[i - 1]);
      C y0 = v0;
      for (int i = 1; i <= h; ++i) {
        t[i] = v[i] + v[p - i];
        d[i] = v[i] - v[p - i];
        y0 += t[i];
      }
      b[j] = y0;
      for (int q = 1; q <= h; ++q) {
        C re = v0, im = C(0);
        int idx = 0;
        for (int i = 1; i <= h; ++i) {
          idx += q;
          if (idx >= p) idx -= p;
          re += roots[idx].real() * t[i];
          im += (-roots[idx].imag()) * d[i];
        }
        const C ni = mul_neg_i(im);
        b[j + ml * q] = re + ni;
        b[j + ml * (p - q)] = re - ni;
      }
    }
  }
}

template <class R>
const std::complex<R>* Plan<R>::forward(C* buf, C* scr) const {
  if (M == 0) {
    C* a = buf;
    C* b = scr;
    for (const Stage<R>& st : stages) {
      switch (st.p) {
        case 2: stage2(a, b, st.l, st.m, st.tw.data()); break;
        case 3: stage3(a, b, st.l, st.m, st.tw.data()); break;
        case 4: stage4(a, b, st.l, st.m, st.tw.data()); break;
        case 5: stage5(a, b, st.l, st.m, st.tw.data()); break;
        default: stage_odd(a, b, st.p, st.l, st.m, st.tw.data(), st.roots.data()); break;
      }
      std::swap(a, b);
    }
    return a;
  }
  // Bluestein: a = x w (zero-padded), conv = IDFT(DFT(a) bhat) = conj(DFT(conj(DFT(a) bhat))).
  C* a = scr;
  C* t = scr + M;
  for (int64_t j = 0; j < n; ++j) a[j] = cmul(buf[j], chirp[j]);
  for (int64_t j = n; j < M; ++j) a[j] = C(0);
  C* r = const_cast<C*>(sub->forward(a, t));
  for (int64_t k = 0; k < M; ++k) r[k] = std::conj(cmul(r[k], bhat[k]));
  const C* q = sub->forward(r, r == a ? t : a);
  for (int64_t k = 0; k < n; ++k) buf[k] = cmul(chirp[k], std::conj(q[k]));
  return buf;
}

template <class R>
std::shared_ptr<const Plan<R>> make_plan(int64_t n) {
  using C = std::complex<R>;
  auto plan = std::make_shared<Plan<R>>();
  plan->n = n;
  std::vector<int> radices;
  int64_t rest = n;
  while (rest % 4 == 0) radices.push_back(4), rest /= 4;
  while (rest % 2 == 0) radices.push_back(2), rest /= 2;
  for (int64_t p = 3; p * p <= rest; p += 2)
    while (rest % p == 0) radices.push_back(static_cast<int>(std::min<int64_t>(p, kMaxDirect + 1))), rest /= p;
  if (rest > 1) radices.push_back(static_cast<int>(std::min<int64_t>(rest, kMaxDirect + 1)));
  bool direct = true;
  for (int p : radices) direct = direct && p <= kMaxDirect;
  if (direct) {
    int64_t l = 1;
    for (int p : radices) {
      Stage<R> st;
      st.p = p;
      st.l = l;
      st.m = n / (l * p);
      st.tw.resize(static_cast<size_t>(l * (p - 1)));
      for (int64_t k = 0; k < l; ++k)
        for (int i = 1; i < p; ++i) st.tw[k * (p - 1) + i - 1] = C(root(i * k, l * p));
      if (p > 5)
        for (int q = 0; q < p; ++q) st.roots.push_back(C(root(q, p)));
      plan->stages.push_back(std::move(st));
      l *= p;
    }
    return plan;
  }
  int64_t M = 1;
  while (M < 2 * n - 1) M *= 2;
  plan->M = M;
  plan->sub = get_plan<R>(M);
  plan->chirp.resize(n);
  std::vector<C> b(M, C(0));
  for (int64_t k = 0; k < n; ++k) {
    const auto k2 = static_cast<int64_t>(static_cast<unsigned __int128>(k) * k % (2 * static_cast<uint64_t>(n)));
    const std::complex<double> w = root(k2, 2 * n);  // exp(-pi i k^2 / n)
    plan->chirp[k] = C(w);
    b[k] = C(std::conj(w));
    if (k) b[M - k] = b[k];
  }
  std::vector<C> scr(M);
  const C* bh = plan->sub->forward(b.data(), scr.data());
  plan->bhat.assign(bh, bh + M);
  for (C& z : plan->bhat) z *= R(1) / static_cast<R>(M);
  return plan;
}

// Real transforms: the complex plan (of n / 2 for even n, else n) and W_n^k, k <= n / 2.
template <class R>
struct RealPlan {
  std::shared_ptr<const Plan<R>> cplx;
  std::vector<std::complex<R>> w;
};

template <class R>
std::shared_ptr<const RealPlan<R>> make_real_plan(int64_t n) {
  auto plan = std::make_shared<RealPlan<R>>();
  if (n % 2 == 0) {
    plan->cplx = get_plan<R>(n / 2);
    for (int64_t k = 0; k <= n / 2; ++k) plan->w.push_back(std::complex<R>(root(k, n)));
  } else {
    plan->cplx = get_plan<R>(n);
  }
  return plan;
}

// Plans cached per (kind, n, R). Built outside the lock (a Bluestein plan asks for its
// power-of-two one); when two threads build the same plan, the first one stored wins.
template <class P>
struct Cache {
  std::mutex mu;
  std::unordered_map<int64_t, std::shared_ptr<const P>> plans;
};

template <class P, class Make>
std::shared_ptr<const P> cached(int64_t n, Make make) {
  static Cache<P> cache;
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.plans.find(n);
    if (it != cache.plans.end()) return it->second;
  }
  std::shared_ptr<const P> plan = make(n);
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.plans.size() >= 64) cache.plans.clear();  // plans in use stay alive in their users
  return cache.plans.emplace(n, std::move(plan)).first->second;
}

template <class R>
std::shared_ptr<const Plan<R>> get_plan(int64_t n) {
  return cached<Plan<R>>(n, make_plan<R>);
}

template <class R>
std::shared_ptr<const RealPlan<R>> get_real_plan(int64_t n) {
  return cached<RealPlan<R>>(n, make_real_plan<R>);
}

}  // namespace

template <class R>
void Kernels<R>::c2c(const C* in, C* out, int64_t n, int64_t howmany, int64_t istride, int64_t idist,
                     int64_t ostride, int64_t odist, bool forward, double scale) {
  if (n <= 0 || howmany <= 0) return;
  auto plan = get_plan<R>(n);
  std::vector<C> work(static_cast<size_t>(n + plan->scratch_size()));
  C* buf = work.data();
  C* scr = buf + n;
  const R sc = static_cast<R>(scale);
  for (int64_t b = 0; b < howmany; ++b) {
    const C* x = in + b * idist;
    C* y = out + b * odist;
    // the inverse is conj(forward(conj(x)))
    if (forward)
      for (int64_t k = 0; k < n; ++k) buf[k] = x[k * istride];
    else
      for (int64_t k = 0; k < n; ++k) buf[k] = std::conj(x[k * istride]);
    const C* r = plan->forward(buf, scr);
    if (forward)
      for (int64_t k = 0; k < n; ++k) y[k * ostride] = r[k] * sc;
    else
      for (int64_t k = 0; k < n; ++k) y[k * ostride] = std::conj(r[k]) * sc;
  }
}

template <class R>
void Kernels<R>::r2c(const R* in, C* out, int64_t n, int64_t howmany, int64_t istride, int64_t idist,
                     int64_t ostride, int64_t odist, bool forward, double scale) {
  if (n <= 0 || howmany <= 0) return;
  auto rp = get_real_plan<R>(n);
  const Plan<R>& plan = *rp->cplx;
  const int64_t len = plan.n;
  std::vector<C> work(static_cast<size_t>(len + plan.scratch_size()));
  C* buf = work.data();
  C* scr = buf + len;
  const R sc = static_cast<R>(scale);
  const R half = R(0.5);
  for (int64_t b = 0; b < howmany; ++b) {
    const R* x = in + b * idist;
    C* y = out + b * odist;
    if (n % 2 == 0) {
      const int64_t h = len;
      for (int64_t j = 0; j < h; ++j) buf[j] = C(x[2 * j * istride], x[(2 * j + 1) * istride]);
      const C* z = plan.forward(buf, scr);
      for (int64_t k = 0; k <= h; ++k) {
        const C zk = z[k == h ? 0 : k], zc = std::conj(z[k == 0 ? 0 : h - k]);
        const C e = (zk + zc) * half, o = mul_neg_i((zk - zc) * half);
        C X = e + cmul(rp->w[k], o);
        if (!forward) X = std::conj(X);
        y[k * ostride] = X * sc;
      }
    } else {
      for (int64_t j = 0; j < n; ++j) buf[j] = C(x[j * istride], R(0));
      const C* r = plan.forward(buf, scr);
      for (int64_t k = 0; k <= n / 2; ++k) y[k * ostride] = (forward ? r[k] : std::conj(r[k])) * sc;
    }
  }
}

template <class R>
void Kernels<R>::c2r(const C* in, R* out, int64_t n, int64_t howmany, int64_t istride, int64_t idist,
                     int64_t ostride, int64_t odist, bool forward, double scale) {
  if (n <= 0 || howmany <= 0) return;
  auto rp = get_real_plan<R>(n);
  const Plan<R>& plan = *rp->cplx;
  const int64_t len = plan.n;
  std::vector<C> work(static_cast<size_t>(len + plan.scratch_size()));
  C* buf = work.data();
  C* scr = buf + len;
  const R sc = static_cast<R>(scale);
  for (int64_t b = 0; b < howmany; ++b) {
    const C* x = in + b * idist;
    R* y = out + b * odist;
    // X_k of the exp(+i) transform; forward = true reads conj(X) (the signal is real)
    auto X = [&](int64_t k) {
      C v = x[k * istride];
      if (k == 0 || 2 * k == n) v = C(v.real(), R(0));
      return forward ? std::conj(v) : v;
    };
    if (n % 2 == 0) {
      // Z_k = E_k + i O_k (twice the spectra of the even / odd samples); z = IDFT_h(Z)
      // through conj(DFT(conj(Z))): x_2j = Re z_j, x_2j+1 = Im z_j.
      const int64_t h = len;
      for (int64_t k = 0; k < h; ++k) {
        const C xk = X(k), xc = std::conj(X(h - k));
        const C e = xk + xc, o = cmul(xk - xc, std::conj(rp->w[k]));
        buf[k] = std::conj(e + C(-o.imag(), o.real()));
      }
      const C* z = plan.forward(buf, scr);
      for (int64_t j = 0; j < h; ++j) {
        y[2 * j * ostride] = z[j].real() * sc;
        y[(2 * j + 1) * ostride] = -z[j].imag() * sc;
      }
    } else {
      for (int64_t k = 0; k <= n / 2; ++k) buf[k] = std::conj(X(k));
      for (int64_t k = n / 2 + 1; k < n; ++k) buf[k] = X(n - k);
      const C* r = plan.forward(buf, scr);
      for (int64_t j = 0; j < n; ++j) y[j * ostride] = r[j].real() * sc;
    }
  }
}

}  // namespace ember::kernels::fft

#include "kernel_instances_fft.h"  // generated: Kernels<float>, Kernels<double>
