// The backward engine. Single-threaded and run with the GIL held (custom Functions and
// hooks call Python): it counts each node's dependencies in the part of the graph the
// request reaches, then runs nodes as their gradients complete, latest-recorded first.
#include "autograd/engine.h"
#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include "autograd/formulas.h"
#include "autograd/functions.h"

namespace ember::autograd {
namespace {

struct Later {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
};

// A gradient made to fit the input it is for: broadcasting undone, dtype restored.
Tensor fit(const Tensor& grad, const InputMeta& m, const Node& producer, size_t index) {
  Tensor g = grad;
  if (g.sizes() != IntList(m.shape)) {
    bool ok = g.dim() >= static_cast<int64_t>(m.shape.size());
    for (size_t i = 0; ok && i < m.shape.size(); ++i) {
      const int64_t gs = g.sizes()[g.dim() - m.shape.size() + i];
      ok = gs == m.shape[i] || m.shape[i] == 1;
    }
    EMBER_CHECK(ok, Runtime, "Function ", producer.name(), " returned an invalid gradient at index ", index,
                " - got ", sizes_str(g.sizes()), " but expected shape compatible with ", sizes_str(m.shape));
    g = api::sum_to(g, m.shape);
  }
  // a complex gradient of a real input is its real part (torch's convention)
  if (is_complex(g.dtype()) && !is_complex(m.dtype)) g = api::real(g);
  if (g.dtype() != m.dtype) g = api::to_dtype(g, m.dtype, false, false, std::nullopt);
  return g;
}

void add_into(Tensor& slot, Tensor g) {
  if (!slot.defined()) {
    slot = std::move(g);
  } else {
    slot = api::add_Tensor(slot, g, Scalar(int64_t(1)));
  }
}

// What hooks may ask about the backward that runs them.
struct Task {
  uint64_t id;
  const std::vector<Edge>* roots;
  const std::unordered_map<Node*, int>* deps;
  const std::unordered_set<Node*>* needed;
  const std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>>* captures;
  bool all_needed;
};
thread_local Task* t_task = nullptr;
thread_local uint64_t t_task_count = 0;

struct TaskScope {
  explicit TaskScope(Task* t) : prev(t_task) { t_task = t; }
  ~TaskScope() { t_task = prev; }
  Task* prev;
};

}  // namespace

uint64_t current_task_id() { return t_task ? t_task->id : 0; }

bool will_execute(const Tensor& t) {
  if (!t_task) return false;
  const AutogradMeta* m = meta(t);
  if (!m) return false;
  Node* node = m->grad_fn ? m->grad_fn.get() : m->grad_accumulator;
  if (!node) return false;
  bool reached = t_task->deps->count(node) > 0;
  for (const Edge& e : *t_task->roots) reached = reached || e.node.get() == node;
  if (!reached) return false;
  if (m->grad_fn) return true;  // a non-leaf's hooks run when its node is reached
  return t_task->all_needed || t_task->captures->count(node) > 0;
}

std::vector<Tensor> run_backward(const BackwardArgs& args) {
  const size_t n = args.outputs.size();
  EMBER_CHECK(args.grad_outputs.size() == n, Runtime, "grad can be implicitly created only for scalar outputs");
  std::vector<Edge> roots;
  std::vector<Tensor> root_grads;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& out = args.outputs[i];
    EMBER_CHECK(requires_grad(out), Runtime, "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    Tensor g = args.grad_outputs[i];
    if (!g.defined()) {
      EMBER_CHECK(out.numel() == 1, Runtime, "grad can be implicitly created only for scalar outputs");
      GradModeGuard off(false);
      g = api::ones_like(out, std::nullopt, std::nullopt);
    } else {
      EMBER_CHECK(g.sizes() == out.sizes(), Runtime, "Mismatch in shape: grad_output[", i, "] has a shape of ",
                  sizes_str(g.sizes()), " and output[", i, "] has a shape of ", sizes_str(out.sizes()), ".");
    }
    roots.push_back(gradient_edge(out));
    root_grads.push_back(g);
  }

  // The inputs whose gradients are wanted, as edges (a leaf's is its accumulator).
  std::vector<Edge> targets;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const Tensor& in = args.inputs[i];
    EMBER_CHECK(requires_grad(in), Runtime, "One of the differentiated Tensors does not require grad");
    targets.push_back(gradient_edge(in));
  }

  // Reachable nodes, their dependency counts, and (with targets) which lead to one.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> order;  // DFS discovery order
  {
    std::vector<Node*> stack;
    std::unordered_set<Node*> seen;
    for (const Edge& e : roots)
      if (e.valid() && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    while (!stack.empty()) {
      Node* node = stack.back();
      stack.pop_back();
      order.push_back(node);
      for (const Edge& e : node->next_edges) {
        if (!e.valid()) continue;
        deps[e.node.get()] += 1;
        if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
      }
    }
  }
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;  // node -> (input_nr, target)
  for (size_t k = 0; k < targets.size(); ++k)
    if (targets[k].valid()) captures[targets[k].node.get()].push_back({targets[k].input_nr, k});
  // With targets, only the nodes from which a target is reachable run.
  std::unordered_set<Node*> needed;
  const bool all_needed = targets.empty();
  for (bool changed = !all_needed; changed;) {
    changed = false;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* node = *it;
      if (needed.count(node)) continue;
      for (const Edge& e : node->next_edges)
        if (e.valid() && (needed.count(e.node.get()) || captures.count(e.node.get()))) {
          needed.insert(node);
          changed = true;
          break;
        }
    }
  }

  Task task{++t_task_count, &roots, &deps, &needed, &captures, all_needed};
  TaskScope scope(&task);
  std::vector<Tensor> captured(targets.size());
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  std::priority_queue<Node*, std::vector<Node*>, Later> ready;
  GradModeGuard mode(args.create_graph);
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* node = roots[i].node.get();
    auto& buf = buffers[node];
    buf.resize(node->input_meta.size());
    add_into(buf[roots[i].input_nr], root_grads[i]);
  }
  {
    std::unordered_set<Node*> queued;
    for (const Edge& e : roots)
      if (deps[e.node.get()] == 0 && queued.insert(e.node.get()).second) ready.push(e.node.get());
  }

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    Ref<Node> keep(node);
    std::vector<Tensor> grads = std::move(buffers[node]);
    buffers.erase(node);
    grads.resize(node->input_meta.size());
    for (const auto& [nr, hook] : std::vector<std::pair<uint32_t, Ref<GradHook>>>(node->tensor_hooks)) {
      if (nr < grads.size() && grads[nr].defined()) {
        Tensor r = hook->call(grads[nr]);
        if (r.defined()) grads[nr] = r;
      }
    }
    for (const auto& [nr, hook] : std::vector<std::pair<uint32_t, Ref<GradHook>>>(node->retain_hooks))
      if (nr < grads.size() && grads[nr].defined()) hook->call(grads[nr]);
    for (const auto& hook : std::vector<Ref<PreHook>>(node->pre_hooks)) {
      std::vector<Tensor> r = hook->call(grads);
      if (!r.empty()) grads = std::move(r);
    }
    if (auto it = captures.find(node); it != captures.end()) {
      for (auto [nr, k] : it->second) captured[k] = nr < grads.size() ? grads[nr] : Tensor();
    }
    const bool run = all_needed || needed.count(node);
    std::vector<Tensor> outputs;
    if (run) {
      // The node's formulas allocate on its gradients' device (Note [The device of an op's
      // results], core/device.h): the first defined one's, the CPU when there is none.
      Device device;
      for (const Tensor& g : grads)
        if (g.defined()) {
          device = g.device();
          break;
        }
      DeviceScope device_scope("backward", device);
      if (node->materialize_grads()) {
        for (size_t i = 0; i < grads.size(); ++i) {
          const InputMeta& m = node->input_meta[i];
          if (!grads[i].defined() && m.differentiable) grads[i] = api::zeros_of(m.shape, m.dtype);
        }
      }
      std::vector<Tensor> inputs_for_hooks;
      if (!node->post_hooks.empty()) inputs_for_hooks = grads;
      outputs = node->apply(std::move(grads));
      EMBER_CHECK(outputs.size() == node->next_edges.size() || outputs.empty(), Runtime, "Function ",
                  node->name(), " returned an incorrect number of gradients (expected ", node->next_edges.size(),
                  ", got ", outputs.size(), ")");
      for (size_t i = 0; i < outputs.size(); ++i) {
        const Edge& e = node->next_edges[i];
        if (e.valid() && outputs[i].defined())
          outputs[i] = fit(outputs[i], e.node->input_meta[e.input_nr], *node, i);
      }
      for (const auto& hook : std::vector<Ref<PostHook>>(node->post_hooks)) {
        std::vector<Tensor> r = hook->call(outputs, inputs_for_hooks);
        if (!r.empty()) outputs = std::move(r);
      }
      if (!args.keep_graph) node->release_variables();
    }
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.node.get();
      if (i < outputs.size() && outputs[i].defined()) {
        auto& buf = buffers[next];
        buf.resize(next->input_meta.size());
        add_into(buf[e.input_nr], outputs[i]);
      }
      if (--deps[next] == 0) ready.push(next);
    }
  }

  for (size_t k = 0; k < targets.size(); ++k) {
    if (!captured[k].defined() && !args.allow_unused && !args.accumulate_grad)
      fail(ErrorKind::Runtime,
           "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if "
           "this is the desired behavior.");
  }
  if (args.accumulate_grad) {
    for (size_t k = 0; k < targets.size(); ++k) {
      if (!captured[k].defined()) continue;
      const Tensor& in = args.inputs[k];
      Tensor g = captured[k];
      if (is_leaf(in)) {
        if (AutogradMeta* m = meta(in)) {
          for (const auto& hook : std::vector<Ref<GradHook>>(m->hooks)) {
            Tensor r = hook->call(g);
            if (r.defined()) g = r;
          }
        }
      }
      accumulate_into(in, g, args.create_graph);
    }
    return {};
  }
  return captured;
}

}  // namespace ember::autograd
