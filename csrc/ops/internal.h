// Helpers shared by ops and the binding layer that are not Python-visible ops.
#pragma once
#include <tuple>
#include <vector>
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember::ops {

// self[start:stop:step] along dim (Python slice semantics, step > 0; dim already wrapped).
Tensor slice(const Tensor& self, int64_t dim, int64_t start, int64_t stop, int64_t step);
// Advanced indexing: self[indices], an undefined entry standing for a full slice.
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
// The value of a one-element tensor.
Scalar item(const Tensor& self);
// A 0-dim tensor holding value.
Tensor scalar_tensor(const Scalar& value, ScalarType dtype);
// A Python number as a 0-dim tensor (int64, float64 or bool) marked wrapped_number.
Tensor wrapped_number(const Scalar& value);
// fill_ without the overflow check (the value converts like a copy). Filling an
// expanded tensor is allowed, as in torch.
Tensor fill_unchecked(const Tensor& self, const Scalar& value);
// RuntimeError when value does not fit dtype (torch's fill_/full check).
void check_convertible(const Scalar& value, ScalarType dtype, const char* op);
// The same without the op's name (torch's message for numbers given to pow, clamp, where).
void check_number_fits(const Scalar& value, ScalarType dtype);
// RuntimeError when writing self would write one memory location twice (stride 0).
void check_no_internal_overlap(const Tensor& self, const char* op);
// src, or a copy of it when it shares memory with dst; RuntimeError where torch refuses
// (see Note [Overlapping source and destination] in ops/copy.cpp).
Tensor unaliased_source(const Tensor& dst, const Tensor& src, const char* op);
// t on device (t itself when it is there already): `to(device)` from C++.
Tensor to_device_of(const Tensor& t, Device device);
// copy_ between two devices (Note [Copies between devices], ops/devices.cpp).
Tensor copy_between_devices(const Tensor& self, const Tensor& src);
// out=(a, b) of an op returning several tensors: each result, checked to have the out's
// dtype, written into it (resized as out= tensors are); returns the out tensors.
std::tuple<Tensor, Tensor> write_outs(std::tuple<Tensor, Tensor> results, const std::vector<Tensor>& outs);
// A fresh tensor shaped like self, laid out per format, on `device` (clones and dtype
// conversions keep self's; the factories and `to` pass the running op's).
Tensor empty_like_format(const Tensor& self, ScalarType dtype, MemoryFormat format, Device device);
// t itself when it has the strides of a fresh tensor in `format`, else a copy that has
// them: how an nn op that computes row-major returns torch's layout (channels_last in,
// channels_last out).
Tensor restrided_as(const Tensor& t, MemoryFormat format);

// t converted to dt (t itself when it has dt already).
Tensor as_dtype(const Tensor& t, ScalarType dt);
// Calls f(T{}) with T = double for float64, float otherwise: the element types of the
// float-only kernels (nn_*, linalg), for a compute dtype already checked to be one.
// Their callers are kernel launches, so a device without data skips them (runs_kernels).
template <class F>
void visit_float(ScalarType t, F&& f) {
  if (is_complex(t)) [[unlikely]] fail_complex_dtype(t);
  if (!runs_kernels()) return;
  if (t == ScalarType::Float64) f(double());
  else f(float());
}

// Calls f(R()) with R the part type of complex dtype t (double for complex128, float for
// complex64): the complex family's and the FFT's kernel launches.
template <class F>
void visit_complex(ScalarType t, F&& f) {
  if (!runs_kernels()) return;
  if (t == ScalarType::ComplexDouble) f(double());
  else f(float());
}

// visit_dtype for a kernel launch: nothing on a device without data (see runs_kernels).
template <class F>
void launch(ScalarType t, F&& f) {
  if (runs_kernels()) visit_dtype(t, std::forward<F>(f));
}

// launch over every dtype, complex ones included (Note [Complex dtypes], core/dtype.h).
template <class F>
void launch_any(ScalarType t, F&& f) {
  if (runs_kernels()) visit_any_dtype(t, std::forward<F>(f));
}

// The C++ name of a dtype's element type, as torch's messages give it ("long int").
const char* cpp_name(ScalarType t);

ScalarType default_dtype();
void set_default_dtype(ScalarType dtype);  // TypeError unless floating

}  // namespace ember::ops
