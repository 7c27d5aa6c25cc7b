// The autograd layer of the two ops that are not declared (they have no Python name of
// their own): x[indices] and x[start:stop:step], which the indexing binding uses.
#include "autograd/formulas.h"
#include "autograd/forward.h"
#include "autograd/record.h"
#include "autograd/trace.h"
#include "ops/internal.h"

namespace ember::api {
namespace {
using namespace ember::autograd;

struct IndexBackward0 final : Node {
  std::string name() const override { return "IndexBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return {index_put(zeros_of(self_sizes, grads[0].dtype()), indices, grads[0], true)};
  }
  void release_variables() override { indices.clear(); }
  Dims self_sizes;
  std::vector<Tensor> indices;
};

struct SliceBackward0 final : Node {
  std::string name() const override { return "SliceBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return {slice_backward(grads[0], self_sizes, dim, start, stop, step)};
  }
  Dims self_sizes;
  int64_t dim = 0, start = 0, stop = 0, step = 1;
};

}  // namespace

static Tensor untraced_index(const Tensor& self, const std::vector<Tensor>& indices) {
  if (!needs_record(self)) return ops::index(self, indices);
  auto node = make_ref<IndexBackward0>();
  add_edges(node->next_edges, self);
  node->self_sizes = Dims(self.sizes());
  node->indices = indices;
  Tensor result;
  {
    GradModeGuard off(false);
    result = ops::index(self, indices);
  }
  set_history(result, node.get());
  track_view(result, self);
  return result;
}

static Tensor untraced_slice(const Tensor& self, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  if (!needs_record(self)) return ops::slice(self, dim, start, stop, step);
  auto node = make_ref<SliceBackward0>();
  add_edges(node->next_edges, self);
  node->self_sizes = Dims(self.sizes());
  node->dim = dim;
  node->start = start;
  node->stop = stop;
  node->step = step;
  Tensor result;
  {
    GradModeGuard off(false);
    result = ops::slice(self, dim, start, stop, step);
  }
  set_history(result, node.get());
  track_view(result, self);
  return result;
}

// Under forward AD both are linear: the tangent is the same indexing of the tangent.
static Tensor dual_index(const Tensor& self, const std::vector<Tensor>& indices) {
  if (!forward::any_tangent(self)) return untraced_index(self, indices);
  const Tensor self_t = forward::tangent(self);
  forward::Suspend suspend;
  Tensor result = untraced_index(self, indices);
  forward::give_tangent(result, untraced_index(self_t, indices), false);
  return result;
}

static Tensor dual_slice(const Tensor& self, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  if (!forward::any_tangent(self)) return untraced_slice(self, dim, start, stop, step);
  const Tensor self_t = forward::tangent(self);
  forward::Suspend suspend;
  Tensor result = untraced_slice(self, dim, start, stop, step);
  forward::give_tangent(result, untraced_slice(self_t, dim, start, stop, step), false);
  return result;
}

// Both report as torch's schemas name them (index.Tensor, slice.Tensor).
// Each sets its op's device as the generated ones do (Note [The device of an op's results]).
Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  DeviceScope device_scope("index", op_device("index", self, indices));
  if (!hooks::any()) [[likely]] return untraced_index(self, indices);
  if (!trace::active()) return dual_index(self, indices);
  trace::Scope scope;
  Tensor result = dual_index(self, indices);
  if (scope.outermost()) trace::report("index.Tensor", "self,indices", {trace::arg(self), trace::arg(indices)}, {result}, false);
  return result;
}

Tensor slice(const Tensor& self, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  DeviceScope device_scope("slice", op_device("slice", self));
  if (!hooks::any()) [[likely]] return untraced_slice(self, dim, start, stop, step);
  if (!trace::active()) return dual_slice(self, dim, start, stop, step);
  trace::Scope scope;
  Tensor result = dual_slice(self, dim, start, stop, step);
  if (scope.outermost())
    trace::report("slice.Tensor", "self,dim,start,end,step",
                  {trace::arg(self), trace::arg(dim), trace::arg(start), trace::arg(stop), trace::arg(step)}, {result},
                  false);
  return result;
}

}  // namespace ember::api
