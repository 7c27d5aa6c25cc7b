// The elementwise engine (see elementwise.h) and resize_.
#include "ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include "kernel_ops.h"  // generated: the elementwise families
#include "kernels/complex.h"
#include "kernels/loops.h"
#include "kernels/special.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

// Note [Type promotion]
// torch ranks operands in three tiers: tensors with dims, 0-dim tensors, and wrapped
// numbers (Python scalars; a float one counts as the default dtype). Each tier promotes
// within itself. A lower tier changes the result only when it is of a higher kind
// (bool < integral < floating < complex) than the tiers above it: int32 tensor + 2.5 is
// float32, int32 tensor + 0-dim int64 tensor stays int32, uint8 tensor + 300 stays uint8,
// float32 tensor + 1j is complex64 and float64 tensor + 1j complex128.
using Tier = std::optional<ScalarType>;

Tier promote(Tier a, ScalarType b) { return a ? promote_types(*a, b) : b; }

int category(ScalarType t) {
  return t == ScalarType::Bool ? 0 : is_complex(t) ? 3 : is_floating(t) ? 2 : 1;
}

Tier combine(Tier higher, Tier lower) {
  if (!higher) return lower;
  if (!lower || category(*higher) >= category(*lower)) return higher;
  // a complex lower tier keeps a floating higher tier's width (float32 tensor * 0-dim
  // complex128 is complex64) and wins over integers as it is
  if (is_complex(*lower)) return is_floating(*higher) ? to_complex(*higher) : *lower;
  return promote_types(*higher, *lower);
}

bool supports(DTypes set, ScalarType t) {
  // complex: the complex family decides which entries (Note [Complex dtypes])
  if (is_complex(t)) return set == DTypes::All || set == DTypes::NoBool || set == DTypes::Floating || set == DTypes::Signed;
  switch (set) {
    case DTypes::All: return true;
    case DTypes::NoBool: return t != ScalarType::Bool;
    case DTypes::Integral: return is_integral(t, true);
    case DTypes::Ints: return is_integral(t, false);
    case DTypes::Floating: return is_floating(t);
    case DTypes::Signed: return t != ScalarType::Bool && t != ScalarType::UInt8;
    case DTypes::Float3264: return t == ScalarType::Float32 || t == ScalarType::Float64;
  }
  return false;
}

bool same_layout(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.sizes() == b.sizes() &&
         a.strides() == b.strides() && a.dtype() == b.dtype();
}

// Note [The layout of an elementwise result]
// As torch's TensorIterator: inputs of the result's shape that are all contiguous, all
// channels_last contiguous, or all dense with the same strides give those strides.
// Otherwise the dims are sorted innermost first by the inputs' strides (an insertion sort
// from the row-major order; the first input whose strides differ decides, broadcast dims
// say nothing, equal strides put the smaller size inside), so t() + t() stays transposed,
// channels_last + contiguous is channels_last and contiguous + channels_last contiguous.
Dims layout_strides(IntList shape, const Tensor* ins, int n) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (nd < 2) return contiguous_strides(shape);
  // Row-major inputs give a row-major result, broadcast or not, when their size-1 dims
  // have row-major strides too (else those strides count, as in torch).
  auto row_major = [](const Tensor& t) {
    if (!t.is_contiguous()) return false;
    int64_t step = 1;
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (t.strides()[d] != step) return false;
      step *= std::max<int64_t>(t.sizes()[d], 1);
    }
    return true;
  };
  bool all_contiguous = true, all_row_major = true, same_shape = true;
  for (int k = 0; k < n; ++k) {
    all_contiguous &= ins[k].is_contiguous();
    all_row_major &= all_contiguous && row_major(ins[k]);
    same_shape &= ins[k].sizes() == shape;
  }
  if (all_row_major || (all_contiguous && same_shape)) return contiguous_strides(shape);
  if (same_shape) {
    bool channels_last = nd == 4, same_dense = true;
    for (int k = 0; k < n; ++k) {
      channels_last &= is_contiguous_as(ins[k], MemoryFormat::ChannelsLast);
      same_dense &= non_overlapping_and_dense(ins[k]) && ins[k].strides() == ins[0].strides();
    }
    if (channels_last) return format_strides(shape, MemoryFormat::ChannelsLast);
    if (same_dense) return Dims(ins[0].strides());
  }
  return ordered_strides(shape, ins, n, false);
}

// What an entry does with complex inputs: whether the complex family has it, and whether
// its result is real (abs).
struct ComplexEntry {
  bool supported = false;
  bool real_result = false;
};

// Note [Transposed inputs]
// An input that runs along another dim of the loop than the output (a.t() + b, or a batch
// of such matrices) is read one element per cache line, its rows 2^k bytes apart falling
// into the same cache sets: 4096² float32 a.t() + b ran at 3.7 GB/s. Past
// kUntransposeWork elements such an input is first copied laid out like the output, by
// the transposing copy (kernels/transpose.cpp), and the op then runs on contiguous rows.
// Returns whether any was.
constexpr int64_t kUntransposeWork = 1 << 15;

bool untranspose_inputs(const kernels::Loop& loop, const Tensor& w, Tensor* in, int n) {
  if (loop.ndim < 2 || loop.numel < kUntransposeWork || loop.strides[0][0] != itemsize(w.dtype()) ||
      !non_overlapping_and_dense(w))
    return false;
  bool any = false;
  for (int k = 0; k < n; ++k) {
    const int64_t size = itemsize(in[k].dtype()), inner = loop.strides[0][k + 1];
    if (inner == 0 || (inner < 64 && inner > -64)) continue;
    bool along_later = false;  // contiguous along a later dim: a (batch of) transposed matrices
    for (int d = 1; d < loop.ndim; ++d) along_later |= loop.strides[d][k + 1] == size;
    if (!along_later) continue;
    in[k] = copy_(empty_like_format(w, in[k].dtype(), MemoryFormat::Preserve, w.device()), in[k], false);
    any = true;
  }
  return any;
}

// The shared body of every family: kernel(T tag, loop) runs the family's entry, T a
// complex type where the compute dtype is complex.
template <class Kernel>
Tensor run(const Spec& spec, bool bool_out, const Tensor* const* ins, int n, const Out& out, ComplexEntry cx,
           Kernel&& kernel) {
  const int first = spec.condition ? 1 : 0;
  if (spec.condition)
    EMBER_CHECK(ins[0]->dtype() == ScalarType::Bool, Runtime,
                spec.name, " expected condition to be a boolean tensor, but got a tensor with dtype ",
                type_name(ins[0]->dtype()));
  ScalarType compute = spec.promote == Promote::Same ? ins[first]->dtype() : result_type(ins + first, n - first);
  if (spec.promote == Promote::Float && !is_inexact(compute)) compute = default_dtype();
  if (is_complex(compute) && !cx.supported) {
    // the ordering pairs torch refuses with their own words
    for (const char* ordered : {"maximum", "minimum", "fmax", "fmin"})
      EMBER_CHECK(std::strcmp(spec.name, ordered) != 0, Runtime, spec.name, " not implemented for complex tensors.");
    for (const char* infinity : {"isposinf", "isneginf"})
      EMBER_CHECK(std::strcmp(spec.name, infinity) != 0, Runtime, spec.name, " does not support complex inputs.");
  }
  EMBER_CHECK(!(out.inplace && cx.real_result && is_complex(compute)), Runtime, "In-place ", spec.name,
              " is not supported for complex tensors.");
  EMBER_CHECK(supports(spec.dtypes, compute) && (cx.supported || !is_complex(compute)), NotImplemented, "\"",
              spec.name, "_cpu\" not implemented for '", type_name(compute), "'");
  const ScalarType result = bool_out                                 ? ScalarType::Bool
                            : cx.real_result && is_complex(compute) ? to_real(compute)
                                                                    : compute;
  if (out.tensor.defined() && !out.inplace) {
    const ScalarType o = out.tensor.dtype();
    EMBER_CHECK(spec.out_dtype != OutDType::Exact || o == result, Runtime, "Found dtype ", type_name(o),
                " but expected ", type_name(result));
    EMBER_CHECK(spec.out_dtype != OutDType::Bool || o == ScalarType::Bool, Runtime, spec.name,
                " does not support non-boolean outputs.");
  }
  if (spec.numbers_checked)
    for (int k = first; k < n; ++k)
      if (ins[k]->impl()->wrapped_number) check_number_fits(item(*ins[k]), compute);

  Dims shape(ins[0]->sizes());
  for (int k = 1; k < n; ++k)
    if (ins[k]->sizes() != IntList(shape)) shape = broadcast_shapes(shape, ins[k]->sizes());

  Tensor in[3];
  for (int k = 0; k < n; ++k) {
    in[k] = *ins[k];
    if (in[k].dtype() != compute && k >= first) {
      // a wrapped number (x * 2.0) converts as a value, without a copy kernel
      if (in[k].dim() == 0 && in[k].is_cpu()) {
        DeviceScope cpu("scalar_tensor", Device());  // stays a CPU scalar, which mixes with any device
        in[k] = scalar_tensor(item(in[k]), compute);
      } else {
        in[k] = to_dtype(in[k], compute, false, false, std::nullopt);
      }
    }
    if (in[k].sizes() != IntList(shape)) in[k] = expand(in[k], shape, false);
  }

  Tensor dst;
  if (out.tensor.defined()) {
    dst = resolve_out(out, shape, result, spec.name);
    check_no_internal_overlap(dst, spec.name);
    for (int k = 0; k < n; ++k)
      if (!same_layout(dst, in[k])) in[k] = unaliased_source(dst, in[k], spec.name);
  } else {
    dst = empty_tensor(shape, result);
    Tensor given[3];  // the inputs as passed: their strides, not their converted copies', decide
    for (int k = 0; k < n; ++k) given[k] = *ins[k];
    Dims strides = layout_strides(shape, given, n);
    if (IntList(strides) != dst.strides()) dst.impl()->set_sizes_strides(Dims(shape), std::move(strides));
  }
  if (dst.numel() == 0) return dst;

  // The kernel writes the result dtype; an out= of another dtype gets a converted copy.
  Tensor w = dst.dtype() == result ? dst : empty_tensor(shape, result);
  const Tensor* operands[4] = {&w, &in[0], &in[1], &in[2]};
  kernels::Loop loop = kernels::make_loop(operands, n + 1);
  if (untranspose_inputs(loop, w, in, n)) loop = kernels::make_loop(operands, n + 1);
  if (out.tensor.defined()) dst.storage()->bump_version();  // a fresh result starts at version 0
  launch_any(compute, [&](auto tag) { kernel(tag, loop); });
  if (!w.is_same(dst)) copy_(dst, w, false);
  return dst;
}

}  // namespace

ScalarType result_type(const Tensor* const* tensors, int n) {
  Tier dims, zero_dim, wrapped;
  for (int k = 0; k < n; ++k) {
    const Tensor& t = *tensors[k];
    if (t.impl()->wrapped_number) {
      wrapped = promote(wrapped, is_floating(t.dtype())  ? default_dtype()
                                 : is_complex(t.dtype()) ? to_complex(default_dtype())
                                                         : t.dtype());
    } else if (t.dim() == 0) {
      zero_dim = promote(zero_dim, t.dtype());
    } else {
      dims = promote(dims, t.dtype());
    }
  }
  return *combine(dims, combine(zero_dim, wrapped));
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, true)) return false;
  return !(from != ScalarType::Bool && to == ScalarType::Bool);
}

void warn_resized(IntList from, IntList to) {
  warn(str_cat("An output with one or more elements was resized since it had shape ", sizes_str(from),
               ", which does not match the required output shape ", sizes_str(to),
               ". This behavior is deprecated, and in a future PyTorch release outputs will not be resized unless "
               "they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
               "elements with t.resize_(0)."));
}

Tensor resolve_out(const Out& out, IntList shape, ScalarType dtype, const char* op, const Tensor* like) {
  if (!out.tensor.defined()) {
    Tensor t = empty_tensor(shape, dtype, op);
    if (like && like->sizes() == shape) {
      Dims strides = layout_strides(shape, like, 1);
      if (IntList(strides) != t.strides()) t.impl()->set_sizes_strides(Dims(shape), std::move(strides));
    }
    return t;
  }
  const Tensor& t = out.tensor;
  EMBER_CHECK(can_cast(dtype, t.dtype()), Runtime, "result type ", type_name(dtype),
              " can't be cast to the desired output type ", type_name(t.dtype()));
  if (t.sizes() == shape) return t;
  EMBER_CHECK(!out.inplace, Runtime, "output with shape ", sizes_str(t.sizes()),
              " doesn't match the broadcast shape ", sizes_str(shape));
  if (t.numel() != 0) warn_resized(t.sizes(), shape);
  resize_(t, shape);
  return t;
}

Tensor resize_(const Tensor& self, IntList size) {
  int64_t numel = checked_numel(size, "resize_");
  (void)numel;
  if (self.sizes() == size && self.is_contiguous()) return self;
  Dims strides = contiguous_strides(size);
  int64_t needed = storage_bytes_needed(size, strides, self.offset(), self.itemsize());
  if (static_cast<int64_t>(self.storage()->nbytes()) < needed) {
    EMBER_CHECK(self.storage()->resizable(), Runtime,
                "Trying to resize storage that is not resizable (it shares memory with another object)");
    self.storage()->resize(static_cast<size_t>(needed));
  }
  self.impl()->set_sizes_strides(Dims(size), std::move(strides));
  return self;
}

// Runs family F's entry for T, or the complex family's for a complex T.
#define EMBER_ELEMENTWISE_KERNEL(family, method)                                            \
  [&](auto tag, const kernels::Loop& loop) {                                                \
    using T = typename decltype(tag)::type;                                                 \
    if constexpr (is_complex_v<T>)                                                          \
      kernels::complex::Kernels<typename T::value_type>::method(op, loop, args.begin());    \
    else                                                                                    \
      kernels::family::Kernels<T>::run(op, loop, args.begin());                             \
  }

Tensor unary(kernels::UnaryOp op, const Spec& spec, const Tensor& a, std::initializer_list<Scalar> args,
             const Out& out) {
  const Tensor* ins[] = {&a};
  const ComplexEntry cx{kernels::complex::supports(op), kernels::complex::real_result(op)};
  return run(spec, false, ins, 1, out, cx, EMBER_ELEMENTWISE_KERNEL(unary, unary));
}

Tensor predicate(kernels::PredicateOp op, const Spec& spec, const Tensor& a, std::initializer_list<Scalar> args,
                 const Out& out) {
  const Tensor* ins[] = {&a};
  return run(spec, true, ins, 1, out, {kernels::complex::supports(op)}, EMBER_ELEMENTWISE_KERNEL(predicate, predicate));
}

Tensor binary(kernels::BinaryOp op, const Spec& spec, const Tensor& a, const Tensor& b,
              std::initializer_list<Scalar> args, const Out& out) {
  const Tensor* ins[] = {&a, &b};
  return run(spec, false, ins, 2, out, {kernels::complex::supports(op)}, EMBER_ELEMENTWISE_KERNEL(binary, binary));
}

Tensor compare(kernels::CompareOp op, const Spec& spec, const Tensor& a, const Tensor& b,
               std::initializer_list<Scalar> args, const Out& out) {
  const Tensor* ins[] = {&a, &b};
  return run(spec, true, ins, 2, out, {kernels::complex::supports(op)}, EMBER_ELEMENTWISE_KERNEL(compare, compare));
}

Tensor ternary(kernels::TernaryOp op, const Spec& spec, const Tensor& a, const Tensor& b, const Tensor& c,
               std::initializer_list<Scalar> args, const Out& out) {
  const Tensor* ins[] = {&a, &b, &c};
  return run(spec, false, ins, 3, out, {kernels::complex::supports(op)}, EMBER_ELEMENTWISE_KERNEL(ternary, ternary));
}
#undef EMBER_ELEMENTWISE_KERNEL

Tensor special_map(kernels::special::SpecialOp op, const Spec& spec, std::initializer_list<const Tensor*> ins,
                   std::initializer_list<Scalar> args, const Out& out) {
  if (op == kernels::special::SpecialOp::sinc && ins.size() == 1 && is_complex((*ins.begin())->dtype())) {
    // the special family is real; a complex sinc is sin(pi z) / (pi z), 1 at 0 (as torch's)
    const Tensor& z = **ins.begin();
    const Tensor pz = mul_Tensor(z, wrapped_number(Scalar(M_PI)), Out{});
    const Tensor r = where_self(eq_Tensor(z, wrapped_number(Scalar(int64_t(0))), Out{}),
                                ones_like(z, std::nullopt, std::nullopt), div_Tensor(sin(pz, Out{}), pz, Out{}));
    if (!out.tensor.defined()) return r;
    return copy_(out.inplace ? out.tensor : resolve_out(out, r.sizes(), r.dtype(), "sinc"), r, false);
  }
  return run(spec, false, ins.begin(), int(ins.size()), out, ComplexEntry{}, [&](auto tag, const kernels::Loop& loop) {
    kernels::special::run(op, DTypeOf<typename decltype(tag)::type>::value, loop, args.begin());
  });
}

Tensor wrapped_number(const Scalar& value) {
  Tensor t = scalar_tensor(value, value.is_bool()       ? ScalarType::Bool
                                  : value.is_floating() ? ScalarType::Float64
                                  : value.is_complex()  ? ScalarType::ComplexDouble
                                                        : ScalarType::Int64);
  t.impl()->wrapped_number = true;
  return t;
}

}  // namespace ember::ops
