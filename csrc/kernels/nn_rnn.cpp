// The pointwise part of one LSTM / GRU step's backward (see kernels/nn_rnn.h): each row's
// loop runs over H contiguous elements.
#include "kernels/nn_rnn.h"
#include <algorithm>
#include "core/parallel.h"

namespace ember::kernels::nn_rnn {
namespace {

// Rows [0, n) in chunks of at least kGrainSize elements' work.
template <class F>
void for_rows(int64_t n, int64_t width, F&& f) {
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 8 * width)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) f(r);
  });
}

}  // namespace

template <class T>
void Kernels<T>::lstm_backward(const T* gates, const T* c_prev, const T* tanh_cell, const T* dh, T* dc, T* dgates,
                               int64_t n, int64_t H) {
  for_rows(n, H, [&](int64_t r) {
    const T* i = gates + r * 4 * H;
    const T* f = i + H;
    const T* g = f + H;
    const T* o = g + H;
    const T* cp = c_prev + r * H;
    const T* tc = tanh_cell + r * H;
    const T* d = dh + r * H;
    T* dcr = dc + r * H;
    T* di = dgates + r * 4 * H;
    T* df = di + H;
    T* dg = df + H;
    T* dout = dg + H;
    for (int64_t j = 0; j < H; ++j) {
      const T t = tc[j], ov = o[j], iv = i[j], fv = f[j], gv = g[j];
      const T dcv = dcr[j] + d[j] * ov * (T(1) - t * t);
      dout[j] = d[j] * t * ov * (T(1) - ov);
      di[j] = dcv * gv * iv * (T(1) - iv);
      df[j] = dcv * cp[j] * fv * (T(1) - fv);
      dg[j] = dcv * iv * (T(1) - gv * gv);
      dcr[j] = dcv * fv;
    }
  });
}

template <class T>
void Kernels<T>::gru_backward(const T* gates, const T* hidden_gates, const T* h_prev, const T* dh, T* dgates,
                              T* dgh, T* dh_prev, int64_t n, int64_t H) {
  for_rows(n, H, [&](int64_t r) {
    const T* rr = gates + r * 3 * H;
    const T* zz = rr + H;
    const T* nn_ = zz + H;
    const T* hn = hidden_gates + r * 3 * H + 2 * H;
    const T* hp = h_prev + r * H;
    const T* d = dh + r * H;
    T* dr = dgates + r * 3 * H;
    T* dz = dr + H;
    T* dn = dz + H;
    T* hdr = dgh + r * 3 * H;
    T* hdz = hdr + H;
    T* hdn = hdz + H;
    T* dp = dh_prev + r * H;
    for (int64_t j = 0; j < H; ++j) {
      const T rv = rr[j], zv = zz[j], nv = nn_[j], dv = d[j];
      const T dnv = dv * (T(1) - zv) * (T(1) - nv * nv);
      const T dzv = dv * (hp[j] - nv) * zv * (T(1) - zv);
      const T drv = dnv * hn[j] * rv * (T(1) - rv);
      dr[j] = drv;
      dz[j] = dzv;
      dn[j] = dnv;
      hdr[j] = drv;
      hdz[j] = dzv;
      hdn[j] = dnv * rv;
      dp[j] = dv * zv;
    }
  });
}

}  // namespace ember::kernels::nn_rnn

#include "kernel_instances_nn_rnn.h"  // generated: Kernels<float>, Kernels<double>
