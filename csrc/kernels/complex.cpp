// The complex family (kernels/complex.h). Functors take and return std::complex<R>.
// Products and quotients are written out: std::complex's operators call libgcc's
// __mulsc3/__divdc3 per element (C99 Annex G's inf/nan recovery), which never vectorize;
// torch and numpy compute the plain product and a scaled quotient, as here.
#include "kernels/complex.h"

#include <cmath>
#include <complex>
#include <limits>
#include "kernels/map.h"

namespace ember::kernels::complex {
namespace {

template <class R> using Cx = std::complex<R>;

template <class R>
inline Cx<R> mul(Cx<R> a, Cx<R> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// a / b scaled by b's larger part (Smith's method), so |b|^2 neither overflows nor underflows.
template <class R>
inline Cx<R> div(Cx<R> a, Cx<R> b) {
  const R c = b.real(), d = b.imag();
  if (std::abs(c) >= std::abs(d)) {
    if (c == R(0) && d == R(0)) return {a.real() / std::abs(c), a.imag() / std::abs(d)};
    const R r = d / c, den = c + d * r;
    return {(a.real() + a.imag() * r) / den, (a.imag() - a.real() * r) / den};
  }
  const R r = c / d, den = c * r + d;
  return {(a.real() * r + a.imag()) / den, (a.imag() * r - a.real()) / den};
}

template <class R> struct neg_fn { Cx<R> operator()(Cx<R> x) const { return {-x.real(), -x.imag()}; } };
template <class R> struct reciprocal_fn { Cx<R> operator()(Cx<R> x) const { return div(Cx<R>(1), x); } };
template <class R> struct abs_fn { R operator()(Cx<R> x) const { return std::hypot(x.real(), x.imag()); } };
template <class R> struct sgn_fn {
  Cx<R> operator()(Cx<R> x) const {
    const R m = std::hypot(x.real(), x.imag());
    return m == R(0) ? Cx<R>(0) : Cx<R>(x.real() / m, x.imag() / m);
  }
};
template <class R> struct exp_fn { Cx<R> operator()(Cx<R> x) const { return std::exp(x); } };
template <class R> struct exp2_fn { Cx<R> operator()(Cx<R> x) const { return std::exp(x * R(M_LN2)); } };
// exp(z) - 1 = expm1(x) cos y - 2 sin^2(y/2) + i e^x sin y, exact near 0
template <class R> struct expm1_fn {
  Cx<R> operator()(Cx<R> x) const {
    const R s = std::sin(x.imag() / 2);
    return {std::expm1(x.real()) * std::cos(x.imag()) - 2 * s * s, std::exp(x.real()) * std::sin(x.imag())};
  }
};
template <class R> struct log_fn { Cx<R> operator()(Cx<R> x) const { return std::log(x); } };
template <class R> struct log2_fn { Cx<R> operator()(Cx<R> x) const { return std::log(x) / R(M_LN2); } };
template <class R> struct log10_fn { Cx<R> operator()(Cx<R> x) const { return std::log10(x); } };
// log(1 + z): |1 + z|^2 = 1 + (2x + x^2 + y^2), so its log is log1p of that, exact near 0
template <class R> struct log1p_fn {
  Cx<R> operator()(Cx<R> x) const {
    const R a = x.real(), b = x.imag();
    if (std::abs(a) < R(0.5) && std::abs(b) < R(0.5))
      return {std::log1p(a * (2 + a) + b * b) / 2, std::atan2(b, 1 + a)};
    return std::log(Cx<R>(1 + a, b));
  }
};
template <class R> struct sqrt_fn { Cx<R> operator()(Cx<R> x) const { return std::sqrt(x); } };
template <class R> struct rsqrt_fn { Cx<R> operator()(Cx<R> x) const { return div(Cx<R>(1), std::sqrt(x)); } };
template <class R> struct sin_fn { Cx<R> operator()(Cx<R> x) const { return std::sin(x); } };
template <class R> struct cos_fn { Cx<R> operator()(Cx<R> x) const { return std::cos(x); } };
template <class R> struct tan_fn { Cx<R> operator()(Cx<R> x) const { return std::tan(x); } };
template <class R> struct asin_fn { Cx<R> operator()(Cx<R> x) const { return std::asin(x); } };
template <class R> struct acos_fn { Cx<R> operator()(Cx<R> x) const { return std::acos(x); } };
template <class R> struct atan_fn { Cx<R> operator()(Cx<R> x) const { return std::atan(x); } };
template <class R> struct sinh_fn { Cx<R> operator()(Cx<R> x) const { return std::sinh(x); } };
template <class R> struct cosh_fn { Cx<R> operator()(Cx<R> x) const { return std::cosh(x); } };
template <class R> struct tanh_fn { Cx<R> operator()(Cx<R> x) const { return std::tanh(x); } };
template <class R> struct asinh_fn { Cx<R> operator()(Cx<R> x) const { return std::asinh(x); } };
template <class R> struct acosh_fn { Cx<R> operator()(Cx<R> x) const { return std::acosh(x); } };
template <class R> struct atanh_fn { Cx<R> operator()(Cx<R> x) const { return std::atanh(x); } };
template <class R> struct sigmoid_fn {
  Cx<R> operator()(Cx<R> x) const { return div(Cx<R>(1), Cx<R>(1) + std::exp(-x)); }
};

// each part on its own: NaN, +inf and -inf replaced by the arguments
template <class R> struct nan_to_num_fn {
  R nan, posinf, neginf;
  explicit nan_to_num_fn(const Scalar* a) : nan(a[0].to<R>()), posinf(a[1].to<R>()), neginf(a[2].to<R>()) {}
  R part(R v) const { return v != v ? nan : v == std::numeric_limits<R>::infinity() ? posinf : v == -std::numeric_limits<R>::infinity() ? neginf : v; }
  Cx<R> operator()(Cx<R> x) const { return {part(x.real()), part(x.imag())}; }
};

// a + w (b - a) from the nearer end (|w| < 1/2: a's), as torch does
template <class R>
inline Cx<R> lerp(Cx<R> a, Cx<R> b, Cx<R> w) {
  return std::abs(w) < R(0.5) ? a + mul(w, b - a) : b - mul(b - a, Cx<R>(1) - w);
}
template <class R> struct lerp_fn {
  Cx<R> w;
  explicit lerp_fn(const Scalar* a) : w(a[0].to<Cx<R>>()) {}
  Cx<R> operator()(Cx<R> x, Cx<R> y) const { return lerp(x, y, w); }
};
template <class R> struct lerp_tensor_fn { Cx<R> operator()(Cx<R> x, Cx<R> y, Cx<R> w) const { return lerp(x, y, w); } };
template <class R> struct logaddexp_fn { Cx<R> operator()(Cx<R> x, Cx<R> y) const { return log_add_exp(x, y); } };

template <class R> struct add_fn {
  Cx<R> alpha;
  explicit add_fn(const Scalar* a) : alpha(a[0].to<Cx<R>>()) {}
  Cx<R> operator()(Cx<R> x, Cx<R> y) const { return x + mul(alpha, y); }
};
template <class R> struct sub_fn {
  Cx<R> alpha;
  explicit sub_fn(const Scalar* a) : alpha(a[0].to<Cx<R>>()) {}
  Cx<R> operator()(Cx<R> x, Cx<R> y) const { return x - mul(alpha, y); }
};
template <class R> struct mul_fn { Cx<R> operator()(Cx<R> x, Cx<R> y) const { return mul(x, y); } };
template <class R> struct div_fn { Cx<R> operator()(Cx<R> x, Cx<R> y) const { return div(x, y); } };
// z^w = exp(w log z), 0^w = 0 for Re w > 0 and z^0 = 1 (as torch)
template <class R> struct pow_fn {
  Cx<R> operator()(Cx<R> x, Cx<R> y) const {
    if (y == Cx<R>(0)) return Cx<R>(1);
    if (x == Cx<R>(0) && y.imag() == R(0) && y.real() > R(0)) return Cx<R>(0);
    if (y == Cx<R>(2)) return mul(x, x);
    return std::pow(x, y);
  }
};
template <class R> struct masked_fill_fn {
  Cx<R> value;
  explicit masked_fill_fn(const Scalar* a) : value(a[0].to<Cx<R>>()) {}
  Cx<R> operator()(Cx<R> x, Cx<R> m) const { return m != Cx<R>(0) ? value : x; }
};

template <class R> struct eq_fn { bool operator()(Cx<R> x, Cx<R> y) const { return x == y; } };
template <class R> struct ne_fn { bool operator()(Cx<R> x, Cx<R> y) const { return x != y; } };

template <class R> struct logical_and_fn { bool operator()(Cx<R> x, Cx<R> y) const { return x != Cx<R>(0) && y != Cx<R>(0); } };
template <class R> struct logical_or_fn { bool operator()(Cx<R> x, Cx<R> y) const { return x != Cx<R>(0) || y != Cx<R>(0); } };
template <class R> struct logical_xor_fn { bool operator()(Cx<R> x, Cx<R> y) const { return (x != Cx<R>(0)) != (y != Cx<R>(0)); } };

template <class R> struct isnan_fn { bool operator()(Cx<R> x) const { return x.real() != x.real() || x.imag() != x.imag(); } };
template <class R> struct isinf_fn { bool operator()(Cx<R> x) const { return std::isinf(x.real()) || std::isinf(x.imag()); } };
template <class R> struct isfinite_fn {
  bool operator()(Cx<R> x) const { return std::isfinite(x.real()) && std::isfinite(x.imag()); }
};
template <class R> struct logical_not_fn { bool operator()(Cx<R> x) const { return x == Cx<R>(0); } };

template <class R> struct where_fn {
  static constexpr bool condition = true;
  Cx<R> operator()(bool c, Cx<R> x, Cx<R> y) const { return c ? x : y; }
};
template <class R> struct addcmul_fn {
  Cx<R> value;
  explicit addcmul_fn(const Scalar* a) : value(a[0].to<Cx<R>>()) {}
  Cx<R> operator()(Cx<R> x, Cx<R> y, Cx<R> z) const { return x + mul(value, mul(y, z)); }
};
template <class R> struct addcdiv_fn {
  Cx<R> value;
  explicit addcdiv_fn(const Scalar* a) : value(a[0].to<Cx<R>>()) {}
  Cx<R> operator()(Cx<R> x, Cx<R> y, Cx<R> z) const { return x + mul(value, div(y, z)); }
};

// The entries, each X(op, functor): the one list both supports() and the switches read.
#define EMBER_COMPLEX_UNARY(X)                                                                                 \
  X(neg, neg_fn) X(reciprocal, reciprocal_fn) X(sgn, sgn_fn) X(exp, exp_fn) X(exp2, exp2_fn)                  \
  X(expm1, expm1_fn) X(log, log_fn) X(log2, log2_fn) X(log10, log10_fn) X(log1p, log1p_fn) X(sqrt, sqrt_fn)     \
  X(rsqrt, rsqrt_fn) X(sin, sin_fn) X(cos, cos_fn) X(tan, tan_fn) X(asin, asin_fn) X(acos, acos_fn)           \
  X(atan, atan_fn) X(sinh, sinh_fn) X(cosh, cosh_fn) X(tanh, tanh_fn) X(asinh, asinh_fn) X(acosh, acosh_fn)   \
  X(atanh, atanh_fn) X(sigmoid, sigmoid_fn) X(nan_to_num, nan_to_num_fn)
#define EMBER_COMPLEX_BINARY(X)                                                                                \
  X(add, add_fn) X(sub, sub_fn) X(mul, mul_fn) X(div, div_fn) X(pow, pow_fn) X(masked_fill, masked_fill_fn)    \
  X(lerp, lerp_fn) X(logaddexp, logaddexp_fn)
#define EMBER_COMPLEX_COMPARE(X) \
  X(eq, eq_fn) X(ne, ne_fn) X(logical_and, logical_and_fn) X(logical_or, logical_or_fn) X(logical_xor, logical_xor_fn)
#define EMBER_COMPLEX_TERNARY(X) \
  X(where, where_fn) X(addcmul, addcmul_fn) X(addcdiv, addcdiv_fn) X(lerp, lerp_tensor_fn)
#define EMBER_COMPLEX_PREDICATE(X) X(isnan, isnan_fn) X(isinf, isinf_fn) X(isfinite, isfinite_fn) X(logical_not, logical_not_fn)

[[noreturn]] void unsupported() { fail(ErrorKind::Runtime, "complex entry not supported"); }  // supports() ran first

}  // namespace

#define EMBER_CASE_TRUE(name, functor) case Op::name: return true;
#define EMBER_SUPPORTS(OpType, LIST, also) \
  bool supports(OpType op) {               \
    using Op = OpType;                     \
    switch (op) {                          \
      LIST(EMBER_CASE_TRUE)                \
      default: return also;                \
    }                                      \
  }
EMBER_SUPPORTS(UnaryOp, EMBER_COMPLEX_UNARY, op == UnaryOp::abs)
EMBER_SUPPORTS(BinaryOp, EMBER_COMPLEX_BINARY, false)
EMBER_SUPPORTS(CompareOp, EMBER_COMPLEX_COMPARE, false)
EMBER_SUPPORTS(TernaryOp, EMBER_COMPLEX_TERNARY, false)
EMBER_SUPPORTS(PredicateOp, EMBER_COMPLEX_PREDICATE, false)
#undef EMBER_SUPPORTS
#undef EMBER_CASE_TRUE

bool real_result(UnaryOp op) { return op == UnaryOp::abs; }

template <class R>
void Kernels<R>::unary(UnaryOp op, const Loop& loop, const Scalar* args) {
  using Op = UnaryOp;
  if (op == Op::abs) return map1<R, Cx<R>>(loop, abs_fn<R>{});
  switch (op) {
#define EMBER_ENTRY(name, functor) case Op::name: return map1<Cx<R>, Cx<R>>(loop, make_fn<functor<R>>(args));
    EMBER_COMPLEX_UNARY(EMBER_ENTRY)
#undef EMBER_ENTRY
    default: unsupported();
  }
}

template <class R>
void Kernels<R>::binary(BinaryOp op, const Loop& loop, const Scalar* args) {
  using Op = BinaryOp;
  switch (op) {
#define EMBER_ENTRY(name, functor) case Op::name: return map2<Cx<R>, Cx<R>>(loop, make_fn<functor<R>>(args));
    EMBER_COMPLEX_BINARY(EMBER_ENTRY)
#undef EMBER_ENTRY
    default: unsupported();
  }
}

template <class R>
void Kernels<R>::compare(CompareOp op, const Loop& loop, const Scalar* args) {
  using Op = CompareOp;
  switch (op) {
#define EMBER_ENTRY(name, functor) case Op::name: return map2<bool, Cx<R>>(loop, make_fn<functor<R>>(args));
    EMBER_COMPLEX_COMPARE(EMBER_ENTRY)
#undef EMBER_ENTRY
    default: unsupported();
  }
}

template <class R>
void Kernels<R>::ternary(TernaryOp op, const Loop& loop, const Scalar* args) {
  using Op = TernaryOp;
  switch (op) {
#define EMBER_ENTRY(name, functor) case Op::name: return map3<Cx<R>, Cx<R>>(loop, make_fn<functor<R>>(args));
    EMBER_COMPLEX_TERNARY(EMBER_ENTRY)
#undef EMBER_ENTRY
    default: unsupported();
  }
}

template <class R>
void Kernels<R>::predicate(PredicateOp op, const Loop& loop, const Scalar* args) {
  using Op = PredicateOp;
  switch (op) {
#define EMBER_ENTRY(name, functor) case Op::name: return map1<bool, Cx<R>>(loop, make_fn<functor<R>>(args));
    EMBER_COMPLEX_PREDICATE(EMBER_ENTRY)
#undef EMBER_ENTRY
    default: unsupported();
  }
}

template <class R>
void Kernels<R>::angle(const Loop& loop) {
  map1<R, Cx<R>>(loop, [](Cx<R> x) { return std::atan2(x.imag(), x.real()); });
}

template <class R>
void Kernels<R>::conj(const Loop& loop) {
  map1<Cx<R>, Cx<R>>(loop, [](Cx<R> x) { return Cx<R>(x.real(), -x.imag()); });
}

template <class R>
void Kernels<R>::polar(const Loop& loop) {
  map2<Cx<R>, R>(loop, [](R r, R t) { return Cx<R>(r * std::cos(t), r * std::sin(t)); });
}

template <class R>
void Kernels<R>::make(const Loop& loop) {
  map2<Cx<R>, R>(loop, [](R re, R im) { return Cx<R>(re, im); });
}

template struct Kernels<float>;
template struct Kernels<double>;

}  // namespace ember::kernels::complex
