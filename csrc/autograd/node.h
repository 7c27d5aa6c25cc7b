// The autograd graph: a Node is the backward of one recorded op. It receives the
// gradients of the op's outputs (its "inputs", in backward order) and returns the
// gradients of the op's inputs, which flow along next_edges to the nodes that made them.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include "core/tensor.h"

namespace ember::autograd {

class Node;
struct SavedVisitor;

// Where a gradient goes: input `input_nr` of `node`. A null node means the forward
// input needed no gradient.
struct Edge {
  Ref<Node> node;
  uint32_t input_nr = 0;
  bool valid() const { return bool(node); }
};

// What the engine knows about each gradient a node receives (one per forward output):
// it sums broadcast gradients back to `shape` and casts them to `dtype`.
struct InputMeta {
  Dims shape;
  ScalarType dtype;
  bool differentiable = true;  // false for integer outputs (max's indices): never gets a gradient
};

// Hooks. Each has an id so that a Python handle can remove it.
struct Hook : RefCounted {
  int64_t id = 0;
};
// On one gradient (a tensor hook): may return a replacement (undefined: keep it).
struct GradHook : Hook {
  virtual Tensor call(const Tensor& grad) = 0;
};
// On all gradients a node receives, before it runs (grad_fn.register_prehook).
struct PreHook : Hook {
  virtual std::vector<Tensor> call(const std::vector<Tensor>& grad_outputs) = 0;  // empty: keep
};
// After a node ran: (grad_inputs, grad_outputs) -> replacement grad_inputs or empty.
struct PostHook : Hook {
  virtual std::vector<Tensor> call(const std::vector<Tensor>& grad_inputs, const std::vector<Tensor>& grad_outputs) = 0;
};
int64_t next_hook_id();

class Node : public RefCounted {
 public:
  Node();
  ~Node() override;

  // grads has one entry per input_meta; missing ones are undefined unless the node
  // materializes them (materialize_grads: zeros for every differentiable output).
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  virtual std::string name() const = 0;
  // Drops what the node saved, after a backward that does not retain the graph.
  virtual void release_variables() {}
  virtual bool materialize_grads() const { return true; }
  // Hands the value saved under `key` (torch's name, without "_saved_") to v; false
  // when the node saves nothing of that name. Throws once the graph was freed.
  virtual bool saved_value(const std::string& key, SavedVisitor& v) {
    (void)key;
    (void)v;
    return false;
  }

  // Forward AD: output `output_nr` of the op got this tangent after the node saved it.
  virtual void save_output_tangent(uint32_t output_nr, const Tensor& tangent, uint64_t level) {
    (void)output_nr;
    (void)tangent;
    (void)level;
  }

  // Whether the gradient of forward input i is wanted (its edge leads somewhere).
  bool should_compute(size_t i) const { return i < next_edges.size() && next_edges[i].valid(); }
  uint32_t add_input_meta(const Tensor& t, bool differentiable = true);

  std::vector<Edge> next_edges;
  std::vector<InputMeta> input_meta;
  uint64_t sequence_nr;

  std::vector<std::pair<uint32_t, Ref<GradHook>>> tensor_hooks;  // by output: register_hook on a non-leaf
  std::vector<std::pair<uint32_t, Ref<GradHook>>> retain_hooks;  // retain_grad(): run after tensor hooks
  std::vector<Ref<PreHook>> pre_hooks;
  std::vector<Ref<PostHook>> post_hooks;

  // grad_fn.metadata: a Python dict kept with the node, made on first use.
  Ref<RefCounted> metadata;
  // The Python object for this node (see Note [One Python object per native object]).
  void* pyobj = nullptr;
};

// Graph ordering: later nodes run first (torch's rule), leaves' accumulators last among equals.
uint64_t next_sequence_nr();

}  // namespace ember::autograd
