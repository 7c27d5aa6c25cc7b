// Connecting recorded ops to the graph: outputs' history, in-place ops, views.
#include "autograd/record.h"
#include "autograd/functions.h"

namespace ember::autograd {

void set_history(const Tensor& result, Node* node) {
  if (!result.defined()) return;
  const bool diff = differentiable_dtype(result.dtype());
  const uint32_t nr = node->add_input_meta(result, diff);
  if (!diff) return;
  AutogradMeta& m = ensure_meta(result);
  m.grad_fn = Ref<Node>(node);
  m.output_nr = nr;
  m.requires_grad = false;
}

void set_history(const std::vector<Tensor>& results, Node* node) {
  for (const Tensor& r : results) set_history(r, node);
}

void check_inplace(const Tensor& self) {
  const AutogradMeta* m = meta(self);
  if (!m) return;
  if (m->base.defined()) {
    const AutogradMeta* bm = meta(m->base);
    EMBER_CHECK(!(bm && bm->requires_grad && !bm->grad_fn) || !t_grad_enabled, Runtime,
                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  EMBER_CHECK(!(m->requires_grad && !m->grad_fn), Runtime,
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

void rebase_history(const Tensor& self, const Ref<Node>& node) {
  AutogradMeta& m = ensure_meta(self);
  const uint32_t nr = node->add_input_meta(self);
  if (m.base.defined()) {
    Tensor base = m.base;
    AutogradMeta& bm = ensure_meta(base);
    auto copy_slices = make_ref<CopySlices>(base, self, node);
    bm.grad_fn = copy_slices;
    bm.output_nr = 0;
    auto view_fn = make_ref<ViewOfBase>(base, self);
    view_fn->next_edges = {Edge{copy_slices, 0}};
    view_fn->add_input_meta(self);
    m.grad_fn = view_fn;
    m.output_nr = 0;
    return;
  }
  m.grad_fn = node;
  m.output_nr = nr;
  m.requires_grad = false;
}

void fail_complex_grad(const char* op) {
  fail(ErrorKind::NotImplemented, "the derivative of '", op,
       "' is not implemented for complex tensors in ember yet (Note [Complex dtypes])");
}

void fail_out_requires_grad(const char* op) {
  fail(ErrorKind::Runtime, op,
       "(): functions with out=... arguments don't support automatic differentiation, but one of the arguments "
       "requires grad.");
}

void fail_inference_write() {
  fail(ErrorKind::Runtime,
       "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
       "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
}

void fail_not_implemented(const char* op) {
  fail(ErrorKind::NotImplemented, "the derivative for '", op, "' is not implemented.");
}

void track_view(const Tensor& view, const Tensor& base) {
  if (!view.defined() || view.is_same(base) || view.storage().get() != base.storage().get()) return;
  const AutogradMeta* bm = meta(base);
  ensure_meta(view).base = bm && bm->base.defined() ? bm->base : base;
}

Tensor detach(const Tensor& t) { return make_view(t, Dims(t.sizes()), Dims(t.strides()), t.offset()); }

}  // namespace ember::autograd
