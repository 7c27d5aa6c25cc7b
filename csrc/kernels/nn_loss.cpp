// The nll_loss walks (see kernels/nn_loss.h): one sequential pass over the targets, in
// order, so the sums of a reduced loss do not depend on the thread count.
#include "kernels/nn_loss.h"
#include "core/error.h"

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

}  // namespace ember::kernels::nn_loss

#include "kernel_instances_nn_loss.h"  // generated: Kernels<float>, Kernels<double>
