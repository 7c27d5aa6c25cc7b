// Autocast's casts, applied where ops are called (Note [Autocast]): the generated wrapper
// of an op declared `autocast: lower_precision | fp32 | promote` makes one AutocastArgs
// and passes each Tensor argument through it. While CPU autocast is off that is one
// thread-local read and the arguments pass by reference.
#pragma once
#include <array>
#include <vector>

#include "core/autocast.h"
#include "core/tensor.h"

namespace ember::python {

// torch's CastPolicy names: lower_precision_fp (the autocast dtype), fp32, promote (the
// widest floating dtype among the arguments, at least the autocast dtype).
enum class AutocastPolicy : int { lower_precision = 0, fp32 = 1, promote = 2 };

// Casts t to dtype as torch's cached_cast does: only defined floating CPU tensors other
// than float64 (and not Python numbers); float32 leaves that require grad are cast once
// per outermost block when the cache is enabled. Records autograd (the cast is `to`).
Tensor autocast_cast(const Tensor& t, ScalarType dtype);
bool autocast_eligible(const Tensor& t);
void autocast_clear_cache();

class AutocastArgs {
 public:
  // applies: false for a call given out= (torch casts the functional form only).
  AutocastArgs(AutocastPolicy policy, bool applies) : on_(t_autocast.enabled[kAutocastCpu] && applies) {
    if (on_) dtype_ = policy == AutocastPolicy::fp32 ? ScalarType::Float32 : t_autocast.dtype[kAutocastCpu];
  }
  AutocastArgs(const AutocastArgs&) = delete;
  AutocastArgs& operator=(const AutocastArgs&) = delete;
  explicit operator bool() const { return on_; }

  // promote: widen the target dtype over every argument first.
  void widen(const Tensor& t) {
    if (autocast_eligible(t)) dtype_ = promote_types(dtype_, t.dtype());
  }
  void widen(const std::vector<Tensor>& ts) {
    for (const Tensor& t : ts) widen(t);
  }

  const Tensor& operator()(const Tensor& t) { return on_ ? keep(autocast_cast(t, dtype_)) : t; }
  std::vector<Tensor> operator()(std::vector<Tensor> ts) {
    if (on_)
      for (Tensor& t : ts) t = autocast_cast(t, dtype_);
    return ts;
  }

 private:
  const Tensor& keep(Tensor t);
  bool on_;
  ScalarType dtype_ = ScalarType::Float32;
  int kept_ = 0;
  std::array<Tensor, 8> casts_;
};

}  // namespace ember::python
