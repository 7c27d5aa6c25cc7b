// The nll_loss walks (see kernels/nn_loss.h): one sequential pass over the targets, in
// order, so the sums of a reduced loss do not depend on the thread count.
#include "kernels/nn_loss.h"
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include "core/error.h"
#include "core/parallel.h"

namespace ember::kernels::nn_loss {
namespace {

int64_t target_at(const Targets& t, int64_t i) {
  return t.bytes ? int64_t(static_cast<const uint8_t*>(t.data)[i]) : static_cast<const int64_t*>(t.data)[i];
}

// Visits every (m, s) with its class c (ignored ones skipped) and that class's weight.
template <class T, class F>
void for_targets(const NllShape& s, const Targets& t, const T* w, F&& f) {
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t q = 0; q < s.S; ++q) {
      const int64_t i = m * s.S + q;
      const int64_t c = target_at(t, i);
      if (c == t.ignore_index) continue;
      EMBER_CHECK(c >= 0 && c < s.C, Index, "Target ", c, " is out of bounds.");
      f(m, q, i, c, w ? w[c] : T(1));
    }
}

}  // namespace

template <class T>
void Kernels<T>::nll_loss(const NllShape& s, const T* x, const Targets& t, const T* w, T* out) {
  for_targets<T>(s, t, w, [&](int64_t m, int64_t q, int64_t i, int64_t c, T wc) {
    out[i] = -wc * x[(m * s.C + c) * s.S + q];
  });
}

template <class T>
double Kernels<T>::nll_loss_sum(const NllShape& s, const T* x, const Targets& t, const T* w, double* weights) {
  double total = 0;
  *weights = 0;
  for_targets<T>(s, t, w, [&](int64_t m, int64_t q, int64_t, int64_t c, T wc) {
    total -= double(wc) * double(x[(m * s.C + c) * s.S + q]);
    *weights += double(wc);
  });
  return total;
}

template <class T>
double Kernels<T>::weight_sum(const NllShape& s, const Targets& t, const T* w) {
  double weights = 0;
  for_targets<T>(s, t, w, [&](int64_t, int64_t, int64_t, int64_t, T wc) { weights += wc; });
  return weights;
}

template <class T>
void Kernels<T>::nll_loss_backward(const NllShape& s, const Targets& t, const T* w, const T* g, bool elementwise,
                                   T scale, T* gin) {
  for_targets<T>(s, t, w, [&](int64_t m, int64_t q, int64_t i, int64_t c, T wc) {
    gin[(m * s.C + c) * s.S + q] = -wc * (elementwise ? g[i] : g[0] * scale);
  });
}

namespace {

// log(exp(a) + exp(b)), exact at -inf.
template <class T>
inline T log_add(T a, T b) {
  if (a < b) std::swap(a, b);
  if (b == -std::numeric_limits<T>::infinity()) return a;
  return a + std::log1p(std::exp(b - a));
}

// The extended label sequence of sample n: blank, l1, blank, l2, ..., blank.
inline void ctc_labels(const Ctc& c, int64_t n, std::vector<int64_t>& labels) {
  const int64_t L = c.target_length[n];
  labels.assign(size_t(2 * L + 1), c.blank);
  for (int64_t k = 0; k < L; ++k) labels[size_t(2 * k + 1)] = c.targets[c.offset[n] + k];
}

// Whether position s may be reached from s - 2 (a label differing from the one before it).
inline bool ctc_skip(const std::vector<int64_t>& l, int64_t s, int64_t blank) {
  return s >= 2 && l[size_t(s)] != blank && l[size_t(s)] != l[size_t(s - 2)];
}

}  // namespace

template <class T>
void Kernels<T>::ctc_loss(const Ctc& c, const T* lp, T* nll, T* log_alpha) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const int64_t W = 2 * c.max_target + 1;
  parallel_for(0, c.N, 1, [&](int64_t n0, int64_t n1) {
    std::vector<int64_t> l;
    for (int64_t n = n0; n < n1; ++n) {
      T* la = log_alpha + n * c.T * W;
      std::fill(la, la + c.T * W, ninf);
      const int64_t L = c.target_length[n], Tn = c.input_length[n], S = 2 * L + 1;
      if (Tn == 0) {
        nll[n] = L == 0 ? T(0) : std::numeric_limits<T>::infinity();
        continue;
      }
      ctc_labels(c, n, l);
      auto lpv = [&](int64_t t, int64_t k) { return lp[(t * c.N + n) * c.C + k]; };
      la[0] = lpv(0, c.blank);
      if (L > 0) la[1] = lpv(0, l[1]);
      for (int64_t t = 1; t < Tn; ++t) {
        const T* prev = la + (t - 1) * W;
        T* cur = la + t * W;
        for (int64_t s = 0; s < S; ++s) {
          T a = prev[s];
          if (s > 0) a = log_add(a, prev[s - 1]);
          if (ctc_skip(l, s, c.blank)) a = log_add(a, prev[s - 2]);
          cur[s] = a == ninf ? ninf : a + lpv(t, l[size_t(s)]);
        }
      }
      const T* last = la + (Tn - 1) * W;
      nll[n] = -(L > 0 ? log_add(last[S - 1], last[S - 2]) : last[S - 1]);
    }
  });
}

template <class T>
void Kernels<T>::ctc_loss_backward(const Ctc& c, const T* g, const T* lp, const T* nll, const T* log_alpha,
                                   bool zero_infinity, T* gin) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const int64_t W = 2 * c.max_target + 1;
  parallel_for(0, c.N, 1, [&](int64_t n0, int64_t n1) {
    std::vector<int64_t> l;
    std::vector<T> beta, lcab(size_t(c.C));
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t L = c.target_length[n], Tn = c.input_length[n], S = 2 * L + 1;
      const bool zero = Tn == 0 || (zero_infinity && nll[n] == std::numeric_limits<T>::infinity());
      for (int64_t t = zero ? 0 : Tn; t < c.T; ++t) std::fill_n(gin + (t * c.N + n) * c.C, c.C, T(0));
      if (zero) continue;
      ctc_labels(c, n, l);
      auto lpv = [&](int64_t t, int64_t k) { return lp[(t * c.N + n) * c.C + k]; };
      beta.assign(size_t(Tn * S), ninf);
      T* last = beta.data() + (Tn - 1) * S;
      last[S - 1] = lpv(Tn - 1, l[size_t(S - 1)]);
      if (L > 0) last[S - 2] = lpv(Tn - 1, l[size_t(S - 2)]);
      for (int64_t t = Tn - 2; t >= 0; --t) {
        const T* next = beta.data() + (t + 1) * S;
        T* cur = beta.data() + t * S;
        for (int64_t s = 0; s < S; ++s) {
          T b = next[s];
          if (s + 1 < S) b = log_add(b, next[s + 1]);
          if (s + 2 < S && ctc_skip(l, s + 2, c.blank)) b = log_add(b, next[s + 2]);
          cur[s] = b == ninf ? ninf : b + lpv(t, l[size_t(s)]);
        }
      }
      const T gn = g[n], ll = nll[n];
      for (int64_t t = 0; t < Tn; ++t) {
        std::fill(lcab.begin(), lcab.end(), ninf);
        const T* a = log_alpha + (n * c.T + t) * W;
        const T* b = beta.data() + t * S;
        for (int64_t s = 0; s < S; ++s) {
          T& v = lcab[size_t(l[size_t(s)])];
          v = log_add(v, a[s] + b[s]);
        }
        T* out = gin + (t * c.N + n) * c.C;
        for (int64_t k = 0; k < c.C; ++k) {
          const T x = lpv(t, k);
          out[k] = (std::exp(x) - std::exp(lcab[size_t(k)] + ll - x)) * gn;
        }
      }
    }
  });
}

}  // namespace ember::kernels::nn_loss

#include "kernel_instances_nn_loss.h"  // generated: Kernels<float>, Kernels<double>
