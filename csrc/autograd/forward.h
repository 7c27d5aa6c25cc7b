// Forward-mode AD: tangents carried beside tensors through the api:: layer. See
// Note [Forward-mode AD].
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>
#include "autograd/hooks.h"
#include "autograd/meta.h"

namespace ember::autograd {
class Node;
}

namespace ember::autograd::forward {

// Note [Forward-mode AD]
// A dual tensor is a tensor whose AutogradMeta holds a tangent (fw_grad) stamped with
// the dual level it belongs to. One level exists at a time (torch's rule: no nesting);
// each entered level gets a new id, so a tangent from a level that ended reads as
// absent, and exit_level frees the tangents it knows of.
//
// While a level is entered the kForwardAD hook bit is set, and every generated api::
// call takes its hooked path (emit_autograd.py): if an input carries a tangent, fw_<op>
// runs the op as usual (recording reverse-mode history when asked) and then gives each
// differentiable output the tangent J·t, computed by one of three rules that
// declarations/derivatives.yaml picks per op with `forward:`:
//   linear        the op is linear in its differentiable inputs: the tangent is the op
//                 itself applied to the tangents (zeros where an input has none). A
//                 view's tangent is thus the same view of its base's tangent, and an
//                 in-place op on a view updates its base's tangent, as in torch.
//   element_wise  every input's Jacobian is diagonal (after broadcasting): the backward
//                 formula with `grad` replaced by the input's tangent is J·t.
//   (default)     transpose the backward: the op's node is built as for reverse mode,
//                 applied to zeros g that require grad (the formulas are linear in g),
//                 and J·t is the gradient of <node(g), t> with respect to g. Any op with
//                 a double-differentiable backward gets a correct tangent this way, at
//                 the cost of one backward and one engine run.
// Tangents are computed with forward AD suspended (Suspend), so a formula that reads a
// dual input sees its primal; grad mode is left as it is, so tangents record
// reverse-mode history (reverse over forward), and the engine's backward formulas,
// being api:: calls, carry tangents (forward over reverse: hessian = jacfwd(jacrev)).

inline std::atomic<uint64_t> g_level{0};        // the entered level's id; 0 while none is
inline thread_local bool t_suspended = false;   // computing tangents: no further tangents

// enter_level: torch's RuntimeError when a level is already entered. Returns torch's
// level index (0) and keeps the id.
int64_t enter_level();
void exit_level(int64_t level);
inline bool level_active() { return g_level.load(std::memory_order_relaxed) != 0; }

// The tangent of t at the current level; undefined when it has none.
inline const Tensor& tangent(const Tensor& t) {
  static const Tensor none;
  if (!t.defined()) return none;
  const AutogradMeta* m = meta(t);
  if (!m || !m->fw_grad.defined() || m->fw_level != g_level.load(std::memory_order_relaxed))
    return none;
  return m->fw_grad;
}
inline bool has_tangent(const Tensor& t) { return tangent(t).defined(); }
std::vector<Tensor> tangents(const std::vector<Tensor>& ts);
// make_dual's checks (same size, floating primal and tangent), then stores tangent as is.
void set_tangent(const Tensor& t, const Tensor& tangent);
// Makes value (broadcast to t's shape, cast to its dtype) t's tangent: written into an
// existing tangent when in_place (an in-place op: views of that tangent see it),
// otherwise stored. Integer and bool t get none.
void give_tangent(const Tensor& t, Tensor value, bool in_place);
void give_tangents(const std::vector<Tensor>& ts, const std::vector<Tensor>& values);

namespace detail {
inline bool any_tangent() { return false; }
template <class T, class... Rest>
bool any_tangent(const T&, const Rest&... rest) { return any_tangent(rest...); }
template <class... Rest>
bool any_tangent(const Tensor& t, const Rest&... rest) { return has_tangent(t) || any_tangent(rest...); }
template <class... Rest>
bool any_tangent(const std::vector<Tensor>& ts, const Rest&... rest) {
  for (const Tensor& t : ts)
    if (has_tangent(t)) return true;
  return any_tangent(rest...);
}
}  // namespace detail
// Whether an op on these inputs computes tangents: an input has one, and this thread is
// not computing tangents already.
template <class... Args>
bool any_tangent(const Args&... args) {
  return !t_suspended && detail::any_tangent(args...);
}

// Computing tangents: forward AD off on this thread for the scope.
class Suspend {
 public:
  Suspend() : prev_(t_suspended) { t_suspended = true; }
  ~Suspend() { t_suspended = prev_; }
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool prev_;
};

// The tangent, or zeros like primal where there is none (for the linear rule).
Tensor or_zeros(const Tensor& tangent, const Tensor& primal);
std::vector<Tensor> or_zeros(const std::vector<Tensor>& tangents, const std::vector<Tensor>& primals);
// A new tensor when tangent is one of the inputs' tangents (an op returning its input's
// tangent would otherwise share it, and an in-place op on one would change both).
void unalias(Tensor& tangent, std::initializer_list<Tensor> inputs);
// tangent += value (tangent starts undefined); the element_wise rule's sum.
void accumulate(Tensor& tangent, const Tensor& value);

// The default rule: edges for the node fw_<op> builds, valid where the input has a
// tangent (so that the formulas of exactly those inputs are computed).
inline void add_tangent_edges(std::vector<Edge>&) {}
template <class... Rest>
void add_tangent_edges(std::vector<Edge>& edges, const Tensor& t, const Rest&... rest);
template <class... Rest>
void add_tangent_edges(std::vector<Edge>& edges, const std::vector<Tensor>& ts, const Rest&... rest);
Edge tangent_edge(const Tensor& t);
template <class... Rest>
void add_tangent_edges(std::vector<Edge>& edges, const Tensor& t, const Rest&... rest) {
  edges.push_back(tangent_edge(t));
  add_tangent_edges(edges, rest...);
}
template <class... Rest>
void add_tangent_edges(std::vector<Edge>& edges, const std::vector<Tensor>& ts, const Rest&... rest) {
  for (const Tensor& t : ts) edges.push_back(tangent_edge(t));
  add_tangent_edges(edges, rest...);
}
// Gives outputs their tangents by transposing node (see the Note). input_tangents: one
// per edge of node, in order. in_place: outputs[0] is an input overwritten.
void transpose(Node& node, const std::vector<Tensor>& outputs, const std::vector<Tensor>& input_tangents,
               bool in_place);
inline void collect(std::vector<Tensor>&) {}
template <class... Rest>
void collect(std::vector<Tensor>& out, const Tensor& t, const Rest&... rest) {
  out.push_back(tangent(t));
  collect(out, rest...);
}
template <class... Rest>
void collect(std::vector<Tensor>& out, const std::vector<Tensor>& ts, const Rest&... rest) {
  for (const Tensor& t : ts) out.push_back(tangent(t));
  collect(out, rest...);
}

// A record dying with a tangent leaves the set exit_level frees.
void forget(AutogradMeta* m);

// An op with no forward rule (no derivative declared) on a dual input: torch's error.
[[noreturn]] void fail_unsupported(const char* op);
// An out= call on a dual input: torch's error.
[[noreturn]] void fail_out(const char* op);

}  // namespace ember::autograd::forward
