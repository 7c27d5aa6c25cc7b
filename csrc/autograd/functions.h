// The nodes the engine and recording make themselves; every other node is generated
// from declarations/derivatives.yaml.
#pragma once
#include "autograd/meta.h"
#include "autograd/saved.h"

namespace ember::autograd {

// The end of the graph at a leaf: adds the gradient into leaf.grad, after the leaf's
// tensor hooks. Holds the leaf; the leaf points back without owning it.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  ~AccumulateGrad() override;
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  const Tensor& variable() const { return leaf_; }

 private:
  Tensor leaf_;
};

// Adds `grad` into t.grad as torch does: the first gradient is stored (copied when it
// could be shared), later ones added in place, or out of place under create_graph.
void accumulate_into(const Tensor& t, const Tensor& grad, bool create_graph);

// Geometry of a tensor within its storage, for as_strided on a gradient buffer.
struct Geometry {
  Dims sizes, strides;
  int64_t offset;
  ScalarType dtype;
  explicit Geometry(const Tensor& t)
      : sizes(t.sizes()), strides(t.strides()), offset(t.offset()), dtype(t.dtype()) {}
};

// The new history of a base after an in-place op `fn` on one of its views: the
// base's gradient, with the view's region replaced by what fn's backward makes of it.
class CopySlices : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, Ref<Node> fn);
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  std::string name() const override { return "torch::autograd::CopySlices"; }
  void release_variables() override { fn_->release_variables(); }

 private:
  Geometry base_, view_;
  Ref<Node> fn_;
};

// A view's history after its base was rewritten: the view's region of the base's gradient
// (torch's AsStridedBackward).
class ViewOfBase : public Node {
 public:
  ViewOfBase(const Tensor& base, const Tensor& view);
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  std::string name() const override { return "AsStridedBackward0"; }

 private:
  Geometry base_, view_;
};

// The gradient buffer of a tensor of geometry `base`: zeros laid out like it, so that a
// view's geometry (relative to the base's offset) addresses the same elements.
Tensor zeros_like_geometry(const Geometry& base);
Tensor region(const Tensor& buffer, const Geometry& base, const Geometry& view);

}  // namespace ember::autograd
