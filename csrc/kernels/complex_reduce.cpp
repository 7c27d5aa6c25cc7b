// Complex folds (kernels/complex_reduce.h). A sum folds the parts as reals: a contiguous
// run of n complex numbers is 2n reals whose even lanes are the real parts, so eight
// independent float64 partial sums (four per part) vectorize as the real sum does and
// a complex64 sum runs at memory speed. Products are written out (see kernels/complex.cpp
// for why not std::complex's operator*).
#include "kernels/complex_reduce.h"

#include <algorithm>
#include <complex>
#include "core/parallel.h"
#include "kernels/complex.h"

namespace ember::kernels::complex {
namespace {

using Acc = std::complex<double>;

inline Acc mul(Acc a, Acc b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

template <class R>
void sum_rows(char** p, const int64_t* s, int64_t n) {
  const R* a = reinterpret_cast<const R*>(p[0]);
  if (s[1] == 0) {
    double re = 0, im = 0;
    int64_t i = 0;
    if (s[0] == int64_t(2 * sizeof(R))) {
      constexpr int K = 8;  // even k: real parts, odd k: imaginary parts
      double r[K] = {};
      const int64_t m = 2 * n;
      int64_t j = 0;
      for (; j + K <= m; j += K)
        for (int k = 0; k < K; ++k) r[k] += double(a[j + k]);
      for (int k = 0; k < K; k += 2) re += r[k], im += r[k + 1];
      i = j / 2;
    }
    const int64_t step = s[0] / int64_t(sizeof(R));
    for (; i < n; ++i) re += double(a[i * step]), im += double(a[i * step + 1]);
    double* acc = reinterpret_cast<double*>(p[1]);
    acc[0] += re;
    acc[1] += im;
  } else if (s[0] == int64_t(2 * sizeof(R)) && s[1] == int64_t(sizeof(Acc))) {
    // vertical over contiguous rows: 2n independent real sums
    double* acc = reinterpret_cast<double*>(p[1]);
    for (int64_t j = 0; j < 2 * n; ++j) acc[j] += double(a[j]);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const R* x = reinterpret_cast<const R*>(p[0] + i * s[0]);
      double* acc = reinterpret_cast<double*>(p[1] + i * s[1]);
      acc[0] += double(x[0]);
      acc[1] += double(x[1]);
    }
  }
}

template <class R>
void prod_rows(char** p, const int64_t* s, int64_t n) {
  auto load = [&](int64_t i) {
    const R* x = reinterpret_cast<const R*>(p[0] + i * s[0]);
    return Acc(double(x[0]), double(x[1]));
  };
  if (s[1] == 0) {
    Acc r(1);
    for (int64_t i = 0; i < n; ++i) r = mul(r, load(i));
    Acc* acc = reinterpret_cast<Acc*>(p[1]);
    *acc = mul(*acc, r);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      Acc* acc = reinterpret_cast<Acc*>(p[1] + i * s[1]);
      *acc = mul(*acc, load(i));
    }
  }
}

}  // namespace

bool folds(ReduceOp op) { return op == ReduceOp::sum || op == ReduceOp::prod; }

template <class R>
void Reduce<R>::init(ReduceOp op, char* acc, int64_t n) {
  Acc* a = reinterpret_cast<Acc*>(acc);
  const Acc identity(op == ReduceOp::prod ? 1.0 : 0.0);
  for (int64_t i = 0; i < n; ++i) a[i] = identity;
}

template <class R>
void Reduce<R>::run(ReduceOp op, const Loop& loop, int64_t begin, int64_t end) {
  if (op == ReduceOp::prod) {
    loop_range(loop, begin, end, prod_rows<R>);
  } else {
    loop_range(loop, begin, end, sum_rows<R>);
  }
}

template <class R>
void Reduce<R>::combine(ReduceOp op, char* acc, const char* part, int64_t n) {
  Acc* a = reinterpret_cast<Acc*>(acc);
  const Acc* b = reinterpret_cast<const Acc*>(part);
  for (int64_t i = 0; i < n; ++i) a[i] = op == ReduceOp::prod ? mul(a[i], b[i]) : a[i] + b[i];
}

template <class R>
void Reduce<R>::scan(ReduceOp op, const rowwise::Rows& r) {
  const int64_t n = r.length, so = r.dim_strides[0], si = r.dim_strides[1];
  const bool is_prod = op == ReduceOp::prod;
  run_loop(r.loop, [&](char** p, const int64_t* s, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      char* out = p[0] + k * s[0];
      const char* in = p[1] + k * s[1];
      Acc acc(is_prod ? 1.0 : 0.0);
      for (int64_t i = 0; i < n; ++i) {
        const R* x = reinterpret_cast<const R*>(in + i * si);
        const Acc v{double(x[0]), double(x[1])};
        acc = is_prod ? mul(acc, v) : acc + v;
        R* y = reinterpret_cast<R*>(out + i * so);
        y[0] = R(acc.real());
        y[1] = R(acc.imag());
      }
    }
  }, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)));
}

template <class R>
void Reduce<R>::logcumsumexp(const rowwise::Rows& r) {
  const int64_t n = r.length, so = r.dim_strides[0], si = r.dim_strides[1];
  run_loop(r.loop, [&](char** p, const int64_t* s, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      char* out = p[0] + k * s[0];
      const char* in = p[1] + k * s[1];
      Acc acc;
      for (int64_t i = 0; i < n; ++i) {
        const R* x = reinterpret_cast<const R*>(in + i * si);
        const Acc v{double(x[0]), double(x[1])};
        acc = i == 0 ? v : log_add_exp(acc, v);
        R* y = reinterpret_cast<R*>(out + i * so);
        y[0] = R(acc.real());
        y[1] = R(acc.imag());
      }
    }
  }, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)));
}

template struct Reduce<float>;
template struct Reduce<double>;

}  // namespace ember::kernels::complex
