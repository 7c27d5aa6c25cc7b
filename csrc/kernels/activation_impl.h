// The activations of nn (declarations/ops/nn_activation.yaml): their functors for the unary family
// (the activation) and the binary family (its backward: f(grad, x)). Included by
// unary_impl.h and binary_impl.h. The ops take floating dtypes only (hardtanh also
// integers), but every entry is instantiated for every dtype, so the others return x.
// exp_fast and kernels/vec_math.h keep the float loops vectorizable.
#pragma once
#include <cmath>
#include <type_traits>
#include "core/scalar.h"
#include "kernels/nn_math.h"

namespace ember::kernels::activation {

constexpr double kSqrtHalf = 0.70710678118654752440;  // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluKappa = 0.044715;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

template <class C>
constexpr bool floating = std::is_floating_point_v<C>;

// f(x) for floating C; integral types (which the ops refuse before dispatch, but every
// dtype instantiates the family) pass x through. f is generic, so its body is compiled
// for floating types only.
template <class C, class F>
[[gnu::always_inline]] inline C floating_only(C x, F f) {
  if constexpr (floating<C>) return f(x);
  else return x;
}
// The same for an activation's gradient f(grad, x); integral types pass grad through.
template <class C, class F>
[[gnu::always_inline]] inline C floating_only(C g, C x, F f) {
  if constexpr (floating<C>) return f(g, x);
  else return g;
}

template <class C>
[[gnu::always_inline]] inline C sigmoid(C x) {
  return C(1) / (C(1) + nn::exp_fast(-x));
}

// tanh(log(1 + e^x)) = q / (q + 2) with q = e^x (e^x + 2), which vectorizes (exactly 1
// in float above x = 20, where e^2x would overflow q).
template <class C>
[[gnu::always_inline]] inline C tanh_softplus(C x) {
  const C e = nn::exp_fast(x);
  const C q = e * (e + C(2));
  return nn::blend(x > C(20), C(1), q / (q + C(2)));
}

// elu's three constants, as torch's kernels name them.
template <class C>
struct EluCoefficients {
  C negcoef, poscoef, negiptcoef;
};

template <class C>
inline C elu(C x, const EluCoefficients<C>& k) {
  return x <= C(0) ? vmath::expm1(x * k.negiptcoef) * k.negcoef : x * k.poscoef;
}

}  // namespace ember::kernels::activation

namespace ember::kernels::unary {

template <class C>
struct gelu_fn {
  [[gnu::always_inline]] C operator()(C x) const {
    return activation::floating_only(x, [](auto x) __attribute__((always_inline)) {
      return x * vmath::normal_cdf(x);  // erfc below 0: no cancellation
    });
  }
};
template <class C>
struct gelu_tanh_fn {
  [[gnu::always_inline]] C operator()(C x) const {
    return activation::floating_only(x, [](auto x) __attribute__((always_inline)) {
      // (1 + tanh u) / 2 = 1 / (1 + e^-2u), which does not cancel for negative x
      const auto u = C(activation::kSqrt2OverPi) * (x + C(activation::kGeluKappa) * x * x * x);
      return x / (C(1) + nn::exp_fast(C(-2) * u));
    });
  }
};
template <class C>
struct silu_fn {
  [[gnu::always_inline]] C operator()(C x) const { return activation::floating_only(x, [](auto x) __attribute__((always_inline)) { return x * activation::sigmoid(x); }); }
};
template <class C>
struct mish_fn {
  [[gnu::always_inline]] C operator()(C x) const {
    return activation::floating_only(x, [](auto x) __attribute__((always_inline)) {
      return x * activation::tanh_softplus(x);
    });
  }
};
template <class C>
struct hardswish_fn {
  [[gnu::always_inline]] C operator()(C x) const {
    return activation::floating_only(x, [](auto x) __attribute__((always_inline)) {
      return x * (x + C(3) < C(0) ? C(0) : x + C(3) > C(6) ? C(6) : x + C(3)) / C(6);
    });
  }
};
template <class C>
struct hardsigmoid_fn {
  [[gnu::always_inline]] C operator()(C x) const {
    return activation::floating_only(x, [](auto x) __attribute__((always_inline)) {
      return (x + C(3) < C(0) ? C(0) : x + C(3) > C(6) ? C(6) : x + C(3)) / C(6);
    });
  }
};
template <class C>
struct log_sigmoid_fn {
  [[gnu::always_inline]] C operator()(C x) const {
    return activation::floating_only(x, [](auto x) __attribute__((always_inline)) {
      return (x < C(0) ? x : C(0)) - vmath::log1p(nn::exp_fast(-std::abs(x)));
    });
  }
};
template <class C>
struct selu_fn {
  [[gnu::always_inline]] C operator()(C x) const {
    return activation::floating_only(x, [](auto x) __attribute__((always_inline)) {
      return activation::elu(x, activation::EluCoefficients<C>{C(activation::kSeluAlpha * activation::kSeluScale), C(activation::kSeluScale), C(1)});
    });
  }
};

template <class C>
struct softplus_fn {
  C beta, threshold;
  explicit softplus_fn(const Scalar* a) : beta(a[0].to<C>()), threshold(a[1].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x) const {
    if constexpr (!activation::floating<C>) {
      return x;
    } else {
      const C bx = x * beta;
      if constexpr (std::is_same_v<C, float>) {
        // both sides computed and the threshold applied by a select: with `?:` gcc kept
        // the loop scalar (a branch around the division); vmath::log1p vectorizes
        return vmath::sel(bx > threshold, x, vmath::log1p(nn::exp_fast(bx)) / beta);
      } else {
        return bx > threshold ? x : C(std::log1p(nn::exp_fast(bx))) / beta;
      }
    }
  }
};

// elu(alpha, scale, input_scale)
template <class C>
struct elu_fn {
  activation::EluCoefficients<C> k;
  explicit elu_fn(const Scalar* a)
      : k{C(a[0].to_double() * a[1].to_double()), C(a[1].to_double()), C(a[2].to_double())} {}
  [[gnu::always_inline]] C operator()(C x) const {
    if constexpr (!activation::floating<C>) return x;
    else return activation::elu(x, k);
  }
};

// celu(alpha) = elu(alpha, 1, 1 / alpha)
template <class C>
struct celu_fn {
  activation::EluCoefficients<C> k;
  explicit celu_fn(const Scalar* a) : k{C(a[0].to_double()), C(1), C(1.0 / a[0].to_double())} {}
  [[gnu::always_inline]] C operator()(C x) const {
    if constexpr (!activation::floating<C>) return x;
    else return activation::elu(x, k);
  }
};

template <class C>
struct leaky_relu_fn {
  C slope;
  explicit leaky_relu_fn(const Scalar* a) : slope(a[0].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x) const {
    if constexpr (!activation::floating<C>) return x;
    else return x > C(0) ? x : x * slope;
  }
};

// hardtanh(min_val, max_val): a clamp (NaN passes), integers too.
template <class C>
struct hardtanh_fn {
  C lo, hi;
  explicit hardtanh_fn(const Scalar* a) : lo(a[0].to<C>()), hi(a[1].to<C>()) {}
  [[gnu::always_inline]] C operator()(C x) const { return x < lo ? lo : x > hi ? hi : x; }
};

}  // namespace ember::kernels::unary

namespace ember::kernels::binary {

// f(grad, x): the gradient of an activation at x.

template <class C>
struct silu_backward_fn {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    return activation::floating_only(g, x, [](auto g, auto x) __attribute__((always_inline)) {
      return g * activation::sigmoid(x) * (C(1) + x * (C(1) - activation::sigmoid(x)));
    });
  }
};
template <class C>
struct hardswish_backward_fn {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    return activation::floating_only(g, x, [](auto g, auto x) __attribute__((always_inline)) {
      return x <= C(-3) ? C(0) : x < C(3) ? g * (x / C(3) + C(0.5)) : g;
    });
  }
};
template <class C>
struct hardsigmoid_backward_fn {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    return activation::floating_only(g, x, [](auto g, auto x) __attribute__((always_inline)) {
      return (x > C(-3) && x < C(3)) ? g / C(6) : C(0);
    });
  }
};
template <class C>
struct log_sigmoid_backward_fn {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    return activation::floating_only(g, x, [](auto g, auto x) __attribute__((always_inline)) {
      return g * activation::sigmoid(-x);
    });
  }
};

// g (Phi(x) + x phi(x)); e^(-x^2 / 2) serves both.
template <class C>
struct gelu_backward_fn {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (!activation::floating<C>) {
      return g;
    } else {
      C gauss;  // e^(-x^2 / 2), from normal_cdf's own exp
      const C cdf = vmath::normal_cdf(x, &gauss);
      return g * (cdf + x * C(activation::kInvSqrt2Pi) * gauss);
    }
  }
};

template <class C>
struct gelu_tanh_backward_fn {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (!activation::floating<C>) {
      return g;
    } else {
      const C k = C(activation::kSqrt2OverPi), kappa = C(activation::kGeluKappa);
      const C x2 = x * x;
      const C t = nn::tanh_fast(k * (x + kappa * x2 * x));
      const C left = C(0.5) * x, right = C(1) + t;
      const C right_derivative = left * (C(1) - t * t) * k * (C(1) + C(3) * kappa * x2);
      return g * (C(0.5) * right + right_derivative);
    }
  }
};

template <class C>
struct mish_backward_fn {
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (!activation::floating<C>) {
      return g;
    } else {
      const C t = activation::tanh_softplus(x);
      return g * (t + x * activation::sigmoid(x) * (C(1) - t * t));
    }
  }
};

template <class C>
struct softplus_backward_fn {
  C beta, threshold;
  explicit softplus_backward_fn(const Scalar* a) : beta(a[0].to<C>()), threshold(a[1].to<C>()) {}
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (!activation::floating<C>) {
      return g;
    } else {
      const C bx = x * beta;
      const C z = nn::exp_fast(bx);
      return bx > threshold ? g : g * z / (z + C(1));
    }
  }
};

template <class C>
struct elu_backward_fn {
  C negcoef, poscoef, negiptcoef;
  explicit elu_backward_fn(const Scalar* a)
      : negcoef(C(a[0].to_double() * a[1].to_double())), poscoef(C(a[1].to_double())), negiptcoef(C(a[2].to_double())) {}
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (!activation::floating<C>) return g;
    else return x <= C(0) ? g * negiptcoef * negcoef * nn::exp_fast(x * negiptcoef) : g * poscoef;
  }
};

template <class C>
struct leaky_relu_backward_fn {
  C slope;
  explicit leaky_relu_backward_fn(const Scalar* a) : slope(a[0].to<C>()) {}
  [[gnu::always_inline]] C operator()(C g, C x) const {
    if constexpr (!activation::floating<C>) return g;
    else return x > C(0) ? g : g * slope;
  }
};

template <class C>
struct hardtanh_backward_fn {
  C lo, hi;
  explicit hardtanh_backward_fn(const Scalar* a) : lo(a[0].to<C>()), hi(a[1].to<C>()) {}
  [[gnu::always_inline]] C operator()(C g, C x) const { return (x <= lo || x >= hi) ? C(0) : g; }
};

}  // namespace ember::kernels::binary
