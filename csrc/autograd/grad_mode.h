// Grad mode: whether ops record autograd history. Thread-local, like torch's: a
// no_grad() block in one thread does not affect another.
#pragma once

namespace ember::autograd {

inline thread_local bool t_grad_enabled = true;
// inference_mode(): grad mode off, and reported by is_inference_mode_enabled().
inline thread_local bool t_inference_mode = false;

inline bool grad_enabled() { return t_grad_enabled; }

// Sets grad mode for a scope (the C++ form of `with ember.no_grad():`).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : prev_(t_grad_enabled) { t_grad_enabled = enabled; }
  ~GradModeGuard() { t_grad_enabled = prev_; }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember::autograd
