// Nodes, per-tensor autograd records, saved variables.
#include <atomic>
#include "autograd/forward.h"
#include "autograd/functions.h"
#include "autograd/meta.h"
#include "autograd/saved.h"

namespace ember::autograd {

namespace {
thread_local uint64_t t_sequence_nr = 0;
std::atomic<int64_t> g_hook_id{0};
}  // namespace

uint64_t next_sequence_nr() { return t_sequence_nr++; }
int64_t next_hook_id() { return ++g_hook_id; }

Node::Node() : sequence_nr(next_sequence_nr()) {}
Node::~Node() = default;

uint32_t Node::add_input_meta(const Tensor& t, bool differentiable) {
  input_meta.push_back(InputMeta{Dims(t.sizes()), t.dtype(), differentiable});
  return static_cast<uint32_t>(input_meta.size() - 1);
}

AutogradMeta::~AutogradMeta() {
  if (fw_level) forward::forget(this);
  // The retain_grad hook points at this tensor without owning it.
  if (retain_hook && grad_fn) {
    auto& hooks = grad_fn->retain_hooks;
    for (size_t i = 0; i < hooks.size(); ++i)
      if (hooks[i].second == retain_hook) {
        hooks.erase(hooks.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
  }
}

AutogradMeta& ensure_meta(const Tensor& t) {
  auto& slot = t.impl()->autograd;
  if (!slot) slot = std::make_unique<AutogradMeta>();
  return *slot;
}

bool differentiable_dtype(ScalarType dt) { return is_inexact(dt); }

void set_requires_grad(const Tensor& t, bool flag) {
  AutogradMeta* m = meta(t);
  if (m && m->grad_fn) {
    EMBER_CHECK(flag, Runtime,
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return;
  }
  EMBER_CHECK(!flag || differentiable_dtype(t.dtype()), Runtime,
              "only Tensors of floating point dtype can require gradients");
  EMBER_CHECK(!flag || t_inference_mode || !(t.storage() && t.storage()->inference), Runtime,
              "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  if (!flag && !m) return;
  ensure_meta(t).requires_grad = flag;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta& m = ensure_meta(t);
  if (m.grad_fn) return Edge{m.grad_fn, m.output_nr};
  if (!m.requires_grad) return Edge{};
  if (m.grad_accumulator) return Edge{Ref<Node>(m.grad_accumulator), 0};
  auto acc = make_ref<AccumulateGrad>(t);
  m.grad_accumulator = acc.get();
  return Edge{acc, 0};
}

// ---- SavedVariable ----

std::vector<Ref<SavedHooks>>& saved_hooks_stack() {
  thread_local std::vector<Ref<SavedHooks>> stack;
  return stack;
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output) : defined_(t.defined()), is_output_(is_output) {
  if (!t.defined()) return;
  version_ = t.storage()->version();
  if (is_output) {
    // Without the record: it points at the node that saves it (a cycle).
    data_ = make_view(t, Dims(t.sizes()), Dims(t.strides()), t.offset());
    if (const AutogradMeta* m = meta(t); m && m->grad_fn) {
      requires_grad_ = true;
      output_nr_ = m->output_nr;
    }
  } else {
    EMBER_CHECK(!(t.storage() && t.storage()->inference), Runtime,
                "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                "in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor "
                "and use it in autograd, or use `ember.no_grad()` instead of `ember.inference_mode()`.");
    data_ = t;
  }
  if (auto& hooks = saved_hooks_stack(); !hooks.empty()) [[unlikely]] {
    // The hooks decide where the value lives; the version can no longer be checked.
    Ref<SavedHooks> h = hooks.back();
    packed_ = h->pack(is_output ? data_ : t);
    data_ = Tensor();
  }
}

Tensor SavedVariable::unpack(Node* owner) const {
  if (!defined_) return Tensor();
  EMBER_CHECK(!released_, Runtime,
              "Trying to backward through the graph a second time (or directly access saved tensors after they have "
              "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
              "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
              "if you need to access saved tensors after calling backward.");
  if (packed_) {
    Tensor t = packed_->unpack();
    if (!is_output_) return t;
    Tensor v = make_view(t, Dims(t.sizes()), Dims(t.strides()), t.offset());
    if (requires_grad_ && owner) {
      AutogradMeta& m = ensure_meta(v);
      m.grad_fn = Ref<Node>(owner);
      m.output_nr = output_nr_;
    }
    return v;
  }
  const uint32_t now = data_.storage()->version();
  if (now != version_) {
    std::string what;
    if (is_output_) {
      what = str_cat(", which is output ", output_nr_, " of ", owner ? owner->name() : std::string("?"), ",");
    } else if (const AutogradMeta* m = meta(data_); m && m->grad_fn) {
      what = str_cat(", which is output ", m->output_nr, " of ", m->grad_fn->name(), ",");
    }
    fail(ErrorKind::Runtime,
         "one of the variables needed for gradient computation has been modified by an inplace operation: [",
         "ember.", type_name(data_.dtype()), "Tensor ", sizes_str(data_.sizes()), "]", what, " is at version ", now,
         "; expected version ", version_,
         " instead. Hint: the backtrace further above shows the operation that failed to compute its gradient. "
         "The variable in question was changed in there or anywhere later. Good luck!");
  }
  if (!is_output_) return data_;
  Tensor t = make_view(data_, Dims(data_.sizes()), Dims(data_.strides()), data_.offset());
  if (requires_grad_ && owner) {
    AutogradMeta& m = ensure_meta(t);
    m.grad_fn = Ref<Node>(owner);
    m.output_nr = output_nr_;
  }
  if (tangent_.defined() && tangent_level_ == forward::g_level.load()) forward::give_tangent(t, tangent_, false);
  return t;
}

}  // namespace ember::autograd
