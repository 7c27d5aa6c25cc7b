// Forward-mode AD's runtime: dual levels, tangents, and the transposing rule. See
// Note [Forward-mode AD] in forward.h.
#include "autograd/forward.h"
#include <mutex>
#include <unordered_set>
#include "autograd/engine.h"
#include "autograd/formulas.h"
#include "autograd/record.h"

namespace ember::autograd::forward {
namespace {

// The records holding a tangent, so that exit_level can free them; a record leaving
// (its tensor died) takes itself out (forget).
std::mutex g_mutex;
std::unordered_set<AutogradMeta*> g_holders;
uint64_t g_next_id = 0;

void hold(AutogradMeta* m) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_holders.insert(m);
}

// The destination of the edges of a node fw_<op> builds: never run (the engine only
// runs nodes from which the gradients it was asked for are reachable).
struct TangentSink final : Node {
  std::string name() const override { return "TangentSink"; }
  std::vector<Tensor> apply(std::vector<Tensor>&&) override { return {}; }
};

}  // namespace

void forget(AutogradMeta* m) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_holders.erase(m);
}

int64_t enter_level() {
  std::lock_guard<std::mutex> lock(g_mutex);
  EMBER_CHECK(g_level.load() == 0, Runtime, "Nested forward mode AD is not supported at the moment");
  g_level.store(++g_next_id);
  hooks::set(hooks::kForwardAD, true);
  return 0;
}

void exit_level(int64_t level) {
  std::unordered_set<AutogradMeta*> holders;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    EMBER_CHECK(g_level.load() != 0 && level == 0, Runtime,
                "Trying to exit a forward AD level that was not the last one that was created. This is not "
                "supported.");
    g_level.store(0);
    hooks::set(hooks::kForwardAD, false);
    holders.swap(g_holders);
  }
  // Outside the lock: a tangent freed here may be the last owner of a tensor whose
  // own record holds a tangent (forget takes the lock).
  std::vector<Tensor> dying;
  dying.reserve(holders.size());
  for (AutogradMeta* m : holders) {
    dying.push_back(std::move(m->fw_grad));
    m->fw_grad = Tensor();
    m->fw_level = 0;
  }
}

std::vector<Tensor> tangents(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(tangent(t));
  return out;
}

static void store(const Tensor& t, const Tensor& value) {
  AutogradMeta& m = ensure_meta(t);
  const bool held = m.fw_level != 0;
  m.fw_grad = value;
  m.fw_level = g_level.load();
  if (!held) hold(&m);
}

void set_tangent(const Tensor& t, const Tensor& value) {
  EMBER_CHECK(level_active(), Runtime,
              "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() "
              "first.");
  EMBER_CHECK(value.sizes() == t.sizes(), Runtime,
              "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
              "not supported. Tensor is of size ",
              sizes_str(t.sizes()), " while the given forward gradient is of size ", sizes_str(value.sizes()), ".");
  EMBER_CHECK(!has_tangent(t), Runtime,
              "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level 0 is not "
              "supported.");
  // element_wise rules reuse the backward formulas, whose conjugates are reverse mode's
  EMBER_CHECK(!is_complex(t.dtype()) && !is_complex(value.dtype()), NotImplemented,
              "ember's forward-mode AD does not support complex tensors yet (Note [Complex dtypes])");
  store(t, value);
}

void give_tangent(const Tensor& t, Tensor value, bool in_place) {
  if (!t.defined() || !value.defined() || !differentiable_dtype(t.dtype())) return;
  EMBER_CHECK(!is_complex(t.dtype()), NotImplemented,
              "ember's forward-mode AD does not support complex tensors yet (Note [Complex dtypes])");
  Suspend suspend;
  if (value.dtype() != t.dtype()) value = api::to_dtype(value, t.dtype(), false, false, std::nullopt);
  if (value.sizes() != t.sizes()) value = api::clone(api::expand(value, t.sizes(), false), std::nullopt);
  AutogradMeta* m = meta(t);
  if (in_place && m && m->fw_grad.defined() && m->fw_level == g_level.load()) {
    if (!value.is_same(m->fw_grad)) api::copy_(m->fw_grad, value, false);
  } else {
    store(t, value);
    m = meta(t);
  }
  // The node that made t may have saved t before it had this tangent. It keeps the values
  // only: the tangent's own history may read t, whose record points at the node (a cycle
  // nothing would break).
  if (m->grad_fn) m->grad_fn->save_output_tangent(m->output_nr, detach(m->fw_grad), m->fw_level);
}

void give_tangents(const std::vector<Tensor>& ts, const std::vector<Tensor>& values) {
  for (size_t i = 0; i < ts.size() && i < values.size(); ++i) give_tangent(ts[i], values[i], false);
}

Tensor or_zeros(const Tensor& tangent, const Tensor& primal) {
  if (tangent.defined() || !primal.defined()) return tangent;
  return api::zeros_of(primal.sizes(), primal.dtype());
}

std::vector<Tensor> or_zeros(const std::vector<Tensor>& tangents, const std::vector<Tensor>& primals) {
  std::vector<Tensor> out(primals.size());
  for (size_t i = 0; i < primals.size(); ++i) out[i] = or_zeros(i < tangents.size() ? tangents[i] : Tensor(), primals[i]);
  return out;
}

void unalias(Tensor& tangent, std::initializer_list<Tensor> inputs) {
  for (const Tensor& t : inputs)
    if (tangent.defined() && tangent.is_same(t)) {
      tangent = api::clone(tangent, std::nullopt);
      return;
    }
}

void accumulate(Tensor& tangent, const Tensor& value) {
  if (!value.defined()) return;
  tangent = tangent.defined() ? api::operator+(tangent, value) : value;
}

Edge tangent_edge(const Tensor& t) {
  static Ref<Node> sink = make_ref<TangentSink>();
  return has_tangent(t) ? Edge{sink, 0} : Edge{};
}

void transpose(Node& node, const std::vector<Tensor>& outputs, const std::vector<Tensor>& input_tangents,
               bool in_place) {
  Suspend suspend;
  // g: one zero cotangent per differentiable output, as leaves that require grad.
  std::vector<Tensor> gs(outputs.size());
  BackwardArgs args;
  bool differentiable = false;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tensor& o = outputs[j];
    if (!o.defined() || !differentiable_dtype(o.dtype())) continue;
    gs[j] = api::zeros_of(o.sizes(), o.dtype());
    set_requires_grad(gs[j], true);
    args.inputs.push_back(gs[j]);
    differentiable = differentiable || requires_grad(o);
  }
  if (args.inputs.empty()) return;
  std::vector<Tensor> gx;
  {
    GradModeGuard on(true);
    gx = node.apply(std::vector<Tensor>(gs));
  }
  // J·t = d<node(g), t>/dg; node(g) may still have the broadcast shape, whose transpose
  // of the reduction to t's shape is the expansion of t.
  for (size_t i = 0; i < gx.size() && i < input_tangents.size(); ++i) {
    const Tensor& t = input_tangents[i];
    if (!t.defined() || !gx[i].defined() || !requires_grad(gx[i])) continue;
    Tensor v = t.dtype() == gx[i].dtype() ? t : api::to_dtype(t, gx[i].dtype(), false, false, std::nullopt);
    if (v.sizes() != gx[i].sizes()) v = api::expand(v, gx[i].sizes(), false);
    differentiable = differentiable || requires_grad(t);
    args.outputs.push_back(gx[i]);
    args.grad_outputs.push_back(v);
  }
  std::vector<Tensor> ts(outputs.size());
  if (!args.outputs.empty()) {
    args.create_graph = t_grad_enabled && differentiable;
    args.keep_graph = args.create_graph;
    args.accumulate_grad = false;
    args.allow_unused = true;
    std::vector<Tensor> r = run_backward(args);
    for (size_t j = 0, k = 0; j < outputs.size(); ++j)
      if (gs[j].defined()) ts[j] = r[k++];
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!gs[j].defined()) continue;
    Tensor t = ts[j].defined() ? ts[j] : api::zeros_of(outputs[j].sizes(), outputs[j].dtype());
    give_tangent(outputs[j], t, in_place && j == 0);
  }
}

void fail_unsupported(const char* op) {
  fail(ErrorKind::NotImplemented, "Trying to use forward AD with ", op,
       " that does not support it because it has not been implemented yet.");
}

void fail_out(const char* op) {
  fail(ErrorKind::NotImplemented, "Trying to use forward AD with ", op,
       "_out that does not support it because it is an out= function");
}

}  // namespace ember::autograd::forward
