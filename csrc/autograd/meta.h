// The autograd state of one tensor, allocated only for tensors that take part in
// autograd (see TensorImpl::autograd): requires_grad leaves, results of recorded ops,
// views of those, and tensors with hooks or a grad.
#pragma once
#include <memory>
#include <vector>
#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace ember::autograd {

struct AutogradMeta {
  ~AutogradMeta();
  bool requires_grad = false;  // a leaf's flag; a non-leaf requires grad because it has a grad_fn
  bool retains_grad = false;
  uint32_t output_nr = 0;      // which output of grad_fn this tensor is
  Tensor grad;
  Ref<Node> grad_fn;
  Node* grad_accumulator = nullptr;   // a leaf's AccumulateGrad while one exists (not owned)
  Tensor base;                        // for a view recorded by autograd: the tensor it views
  std::vector<Ref<GradHook>> hooks;   // a leaf's tensor hooks (non-leaves keep theirs on grad_fn)
  Ref<GradHook> retain_hook;          // the retain_grad() hook, cleared when the tensor dies
  Tensor fw_grad;                     // forward AD's tangent (Note [Forward-mode AD])
  uint64_t fw_level = 0;              // the id of the dual level fw_grad belongs to
};

inline AutogradMeta* meta(const Tensor& t) { return t.impl()->autograd.get(); }
AutogradMeta& ensure_meta(const Tensor& t);

inline bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = t.defined() ? meta(t) : nullptr;
  return m && (m->requires_grad || m->grad_fn);
}
inline bool is_leaf(const Tensor& t) {
  const AutogradMeta* m = meta(t);
  return !m || !m->grad_fn;
}
// Whether an op on these inputs must record a node: grad mode on and an input requiring grad.
inline bool any_requires_grad() { return false; }
template <class... Rest>
bool any_requires_grad(const Tensor& t, const Rest&... rest);
template <class... Rest>
bool any_requires_grad(const std::vector<Tensor>& ts, const Rest&... rest);
template <class T, class... Rest>
bool any_requires_grad(const T&, const Rest&... rest) { return any_requires_grad(rest...); }
template <class... Rest>
bool any_requires_grad(const Tensor& t, const Rest&... rest) { return requires_grad(t) || any_requires_grad(rest...); }
template <class... Rest>
bool any_requires_grad(const std::vector<Tensor>& ts, const Rest&... rest) {
  for (const Tensor& t : ts)
    if (t.defined() && requires_grad(t)) return true;
  return any_requires_grad(rest...);
}
// Always inlined: it is the fast path of every api:: call, and the trace hook's second
// caller (trace_<op>) made the compiler call it out of line (+8 instructions on x[0]).
template <class... Args>
[[gnu::always_inline]] inline bool needs_record(const Args&... args) {
  return t_grad_enabled && any_requires_grad(args...);
}

bool differentiable_dtype(ScalarType dt);
// x.requires_grad_(flag): only leaves, only floating dtypes (torch's errors).
void set_requires_grad(const Tensor& t, bool flag);

// Where the gradient of t goes: its grad_fn, or its leaf accumulator (made on demand).
Edge gradient_edge(const Tensor& t);

}  // namespace ember::autograd
