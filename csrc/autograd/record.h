// Recording: what the generated autograd layer (api_<family>.cpp, from
// declarations/derivatives.yaml) calls to connect an op's node to its inputs and outputs.
#pragma once
#include <vector>
#include "autograd/meta.h"
#include "autograd/saved.h"

namespace ember::autograd {

// Edges to the gradient destinations of the node's differentiable inputs, in order.
inline void add_edges(std::vector<Edge>&) {}
template <class... Rest>
void add_edges(std::vector<Edge>& edges, const Tensor& t, const Rest&... rest);
template <class... Rest>
void add_edges(std::vector<Edge>& edges, const std::vector<Tensor>& ts, const Rest&... rest);
template <class... Rest>
void add_edges(std::vector<Edge>& edges, const Tensor& t, const Rest&... rest) {
  edges.push_back(t.defined() && requires_grad(t) ? gradient_edge(t) : Edge{});
  add_edges(edges, rest...);
}
template <class... Rest>
void add_edges(std::vector<Edge>& edges, const std::vector<Tensor>& ts, const Rest&... rest) {
  for (const Tensor& t : ts) edges.push_back(t.defined() && requires_grad(t) ? gradient_edge(t) : Edge{});
  add_edges(edges, rest...);
}

// Whether an op's differentiable inputs include a complex tensor: ops whose formulas are
// not marked complex in derivatives.yaml refuse to record one (Note [Complex dtypes]),
// rather than give a gradient without torch's conjugates.
inline bool any_complex() { return false; }
template <class... Rest>
bool any_complex(const Tensor& t, const Rest&... rest) {
  return (t.defined() && is_complex(t.dtype())) || any_complex(rest...);
}
template <class... Rest>
bool any_complex(const std::vector<Tensor>& ts, const Rest&... rest) {
  for (const Tensor& t : ts)
    if (t.defined() && is_complex(t.dtype())) return true;
  return any_complex(rest...);
}
[[noreturn]] void fail_complex_grad(const char* op);

// result becomes output `output_nr` of node (its grad_fn); integer results get no history.
void set_history(const Tensor& result, Node* node);
void set_history(const std::vector<Tensor>& results, Node* node);
// An in-place op on self: self's history continues at node. For a view of another
// tensor, the base's history is rewritten (CopySlices) and the view re-derived from it.
void rebase_history(const Tensor& self, const Ref<Node>& node);
// Before an in-place op: torch's errors for leaves that require grad and their views.
void check_inplace(const Tensor& self);
[[noreturn]] void fail_out_requires_grad(const char* op);
// An in-place write to an inference tensor outside inference mode: torch's error.
[[noreturn]] void fail_inference_write();
inline void check_inference_write(const Tensor& t) {
  if (t.defined() && t.storage() && t.storage()->inference && !t_inference_mode) [[unlikely]]
    fail_inference_write();
}
inline void check_inference_write(const Out& out, const Tensor& self) { check_inference_write(out.inplace ? self : out.tensor); }
[[noreturn]] void fail_not_implemented(const char* op);
// A view made by a recorded view op (or by indexing) remembers its base, so that an
// in-place op on it can rewrite the base's history.
void track_view(const Tensor& view, const Tensor& base);

// x.detach(): the same memory, no history.
Tensor detach(const Tensor& t);

}  // namespace ember::autograd
