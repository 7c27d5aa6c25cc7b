// AccumulateGrad, CopySlices and the view node that follows a rewritten base.
#include "autograd/functions.h"
#include "autograd/formulas.h"
#include "ops/geometry.h"

namespace ember::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) {
  sequence_nr = UINT64_MAX;  // run as soon as ready, as torch does
  add_input_meta(leaf_);
}

AccumulateGrad::~AccumulateGrad() {
  if (AutogradMeta* m = meta(leaf_); m && m->grad_accumulator == this) m->grad_accumulator = nullptr;
}

namespace {

// torch's layout contract for .grad: the leaf's own strides when the leaf is dense (size-1
// dims aside), row-major otherwise. A weight used as W.t() in a product gets a row-major
// W.grad, so the optimizer's updates and .grad.view() see what they do in torch.
bool obeys_layout(const Tensor& grad, const Tensor& leaf) {
  if (!ops::non_overlapping_and_dense(leaf)) return grad.is_contiguous();
  for (int64_t d = 0; d < grad.dim(); ++d)
    if (grad.sizes()[d] != 1 && grad.strides()[d] != leaf.strides()[d]) return false;
  return true;
}

// A copy of grad laid out as leaf. Under create_graph the copy is recorded, so the
// gradient's history (double backward) runs through it.
Tensor copy_in_layout(const Tensor& grad, const Tensor& leaf, bool create_graph) {
  GradModeGuard mode(create_graph);
  if (!ops::non_overlapping_and_dense(leaf)) return api::clone(grad, MemoryFormat::Contiguous);
  Tensor out = api::empty_like(leaf, grad.dtype(), std::nullopt);  // preserves a dense leaf's strides
  return api::copy_(out, grad, false);
}

}  // namespace

void accumulate_into(const Tensor& t, const Tensor& grad, bool create_graph) {
  AutogradMeta& m = ensure_meta(t);
  if (!grad.defined()) return;
  if (!m.grad.defined()) {
    // A gradient nobody else holds is kept as is when laid out as t; otherwise copied
    // (always under create_graph, as torch: the gradient may be another leaf's too).
    if (!create_graph && grad.impl()->use_count() <= 1 && !meta(grad) && obeys_layout(grad, t)) {
      m.grad = grad;
    } else {
      m.grad = copy_in_layout(grad, t, create_graph);
    }
    return;
  }
  // A local handle: kernels release the GIL, and another thread may replace m.grad meanwhile.
  const Tensor current = m.grad;
  if (create_graph || requires_grad(current)) {
    m.grad = api::add_Tensor(current, grad, Scalar(int64_t(1)));
  } else {
    GradModeGuard off(false);
    if (current.sizes() == grad.sizes())
      api::add_Tensor(current, grad, Scalar(int64_t(1)), Out{current, true});
    else
      m.grad = api::add_Tensor(current, grad, Scalar(int64_t(1)));
  }
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor g = std::move(grads[0]);
  if (AutogradMeta* m = meta(leaf_)) {
    for (const auto& hook : std::vector<Ref<GradHook>>(m->hooks)) {
      Tensor r = hook->call(g);
      if (r.defined()) g = r;
    }
  }
  accumulate_into(leaf_, g, t_grad_enabled);
  return {};
}

Tensor zeros_like_geometry(const Geometry& base) {
  int64_t extent = 1;  // elements from the base's first element to one past its last
  for (size_t d = 0; d < base.sizes.size(); ++d) {
    if (base.sizes[d] == 0) extent = 0;
  }
  if (extent) {
    for (size_t d = 0; d < base.sizes.size(); ++d) extent += (base.sizes[d] - 1) * base.strides[d];
  }
  Tensor flat = api::zeros(IntList{extent}, base.dtype);
  return api::as_strided(flat, base.sizes, base.strides, int64_t(0));
}

Tensor region(const Tensor& buffer, const Geometry& base, const Geometry& view) {
  return api::as_strided(buffer, view.sizes, view.strides, buffer.offset() + view.offset - base.offset);
}

CopySlices::CopySlices(const Tensor& base, const Tensor& view, Ref<Node> fn)
    : base_(base), view_(view), fn_(std::move(fn)) {
  add_input_meta(base);
  next_edges.push_back(requires_grad(base) ? gradient_edge(base) : Edge{});
  for (size_t i = 1; i < fn_->next_edges.size(); ++i) next_edges.push_back(fn_->next_edges[i]);
}

std::vector<Tensor> CopySlices::apply(std::vector<Tensor>&& grads) {
  const Tensor& grad = grads[0];
  Tensor result = zeros_like_geometry(base_);
  api::copy_(result, grad, false);
  Tensor slice = region(result, base_, view_);
  std::vector<Tensor> fn_grads = fn_->apply({api::clone(slice, std::nullopt)});
  std::vector<Tensor> out(next_edges.size());
  if (!fn_grads.empty() && fn_grads[0].defined()) {
    api::copy_(slice, fn_grads[0], false);
  } else {
    api::zero_(slice);
  }
  out[0] = result;
  for (size_t i = 1; i < out.size() && i < fn_grads.size(); ++i) out[i] = fn_grads[i];
  return out;
}

ViewOfBase::ViewOfBase(const Tensor& base, const Tensor& view) : base_(base), view_(view) {}

std::vector<Tensor> ViewOfBase::apply(std::vector<Tensor>&& grads) {
  Tensor result = zeros_like_geometry(base_);
  api::copy_(region(result, base_, view_), grads[0], false);
  return {result};
}

}  // namespace ember::autograd
