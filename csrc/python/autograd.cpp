// Autograd's Python face: the tensor's autograd properties and methods, grad_fn
// objects (ember._C._Node), hooks written in Python, custom Functions
// (ember._C._FunctionBase, the base of every FBackward class), grad mode and the
// entry to the engine. The graph and the engine are in csrc/autograd/.
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>
#include "api_decl.h"
#include "autograd/engine.h"
#include "autograd/forward.h"
#include "autograd/functions.h"
#include "autograd/record.h"
#include "autograd/saved.h"
#include "autograd/trace.h"
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"

namespace ember::python {

using autograd::AutogradMeta;
using autograd::Node;

namespace {

// ---- hooks written in Python ----

// Calls fn(*args); returns the result (a new reference) or throws PythonError.
PyObject* call(PyObject* fn, PyObject* args) { return check(PyObject_CallObject(fn, args)); }

PyObject* grads_tuple(const std::vector<Tensor>& grads) {
  Owned t(check(PyTuple_New(static_cast<Py_ssize_t>(grads.size()))));
  for (size_t i = 0; i < grads.size(); ++i) PyTuple_SET_ITEM(t.get(), i, check(wrap(grads[i])));
  return t.release();
}

// A hook's replacement gradients: None keeps them; else a tuple of tensors or None.
std::vector<Tensor> grads_from(PyObject* r, size_t n, const char* what) {
  std::vector<Tensor> out;
  if (r == Py_None) return out;
  EMBER_CHECK(PyTuple_Check(r) || PyList_Check(r), Type, what, " must return None or a tuple of gradients");
  Owned seq(check(PySequence_Tuple(r)));
  EMBER_CHECK(static_cast<size_t>(PyTuple_GET_SIZE(seq.get())) == n, Runtime, what, " returned ",
              PyTuple_GET_SIZE(seq.get()), " gradients, but ", n, " were expected");
  for (size_t i = 0; i < n; ++i) {
    PyObject* g = PyTuple_GET_ITEM(seq.get(), i);
    EMBER_CHECK(g == Py_None || is_tensor(g), Type, what, " must return tensors or None");
    out.push_back(g == Py_None ? Tensor() : unwrap(g));
  }
  return out;
}

struct PyGradHook final : autograd::GradHook {
  explicit PyGradHook(PyObject* f) : fn(f) { Py_INCREF(fn); }
  ~PyGradHook() override { Py_DECREF(fn); }
  Tensor call(const Tensor& grad) override {
    Owned args(check(Py_BuildValue("(N)", check(wrap(grad)))));
    Owned r(python::call(fn, args.get()));
    if (r.get() == Py_None) return Tensor();
    EMBER_CHECK(is_tensor(r.get()), Type, "a tensor hook must return a Tensor or None");
    const Tensor& t = unwrap(r.get());
    EMBER_CHECK(t.sizes() == grad.sizes(), Runtime, "hook returned a gradient of size ", sizes_str(t.sizes()),
                " for a tensor of size ", sizes_str(grad.sizes()));
    return t;
  }
  PyObject* fn;
};

struct PyPreHook final : autograd::PreHook {
  explicit PyPreHook(PyObject* f) : fn(f) { Py_INCREF(fn); }
  ~PyPreHook() override { Py_DECREF(fn); }
  std::vector<Tensor> call(const std::vector<Tensor>& grads) override {
    Owned args(check(Py_BuildValue("(N)", grads_tuple(grads))));
    Owned r(python::call(fn, args.get()));
    return grads_from(r.get(), grads.size(), "a grad_fn pre-hook");
  }
  PyObject* fn;
};

struct PyPostHook final : autograd::PostHook {
  explicit PyPostHook(PyObject* f) : fn(f) { Py_INCREF(fn); }
  ~PyPostHook() override { Py_DECREF(fn); }
  std::vector<Tensor> call(const std::vector<Tensor>& grad_inputs, const std::vector<Tensor>& grad_outputs) override {
    Owned args(check(Py_BuildValue("(NN)", grads_tuple(grad_inputs), grads_tuple(grad_outputs))));
    Owned r(python::call(fn, args.get()));
    return grads_from(r.get(), grad_inputs.size(), "a grad_fn hook");
  }
  PyObject* fn;
};

// retain_grad(): keeps a non-leaf's gradient in its .grad. Points at the tensor without
// owning it; the tensor's record removes the hook when the tensor dies.
struct RetainGrad final : autograd::GradHook {
  explicit RetainGrad(TensorImpl* t) : target(t) {}
  Tensor call(const Tensor& grad) override {
    if (!target) return Tensor();
    Tensor t{Ref<TensorImpl>(target)};
    AutogradMeta& m = autograd::ensure_meta(t);
    if (!m.grad.defined()) {
      autograd::GradModeGuard off(false);
      m.grad = api::clone(grad, std::nullopt);
    } else {
      const Tensor current = m.grad;  // kernels release the GIL: keep our own handle
      m.grad = api::add_Tensor(current, grad, Scalar(int64_t(1)));
    }
    return Tensor();
  }
  TensorImpl* target;
};

template <class H>
void erase_id(std::vector<Ref<H>>& v, int64_t id) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i]->id == id) {
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}
template <class H>
void erase_id(std::vector<std::pair<uint32_t, Ref<H>>>& v, int64_t id) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].second->id == id) {
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

// ---- ember._C._RemovableHandle ----

struct PyHandle {
  PyObject_HEAD
  Ref<Node> node;
  Tensor tensor;
  int64_t id;
};
PyTypeObject HandleType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* make_handle(Ref<Node> node, Tensor tensor, int64_t id) {
  auto* h = PyObject_New(PyHandle, &HandleType);
  if (!h) throw PythonError{};
  new (&h->node) Ref<Node>(std::move(node));
  new (&h->tensor) Tensor(std::move(tensor));
  h->id = id;
  return reinterpret_cast<PyObject*>(h);
}

void handle_dealloc(PyObject* self) {
  auto* h = reinterpret_cast<PyHandle*>(self);
  h->node.~Ref<Node>();
  h->tensor.~Tensor();
  PyObject_Free(self);
}

PyObject* handle_remove(PyObject* self, PyObject*) {
  auto* h = reinterpret_cast<PyHandle*>(self);
  if (Node* n = h->node.get()) {
    erase_id(n->tensor_hooks, h->id);
    erase_id(n->pre_hooks, h->id);
    erase_id(n->post_hooks, h->id);
  }
  if (h->tensor.defined())
    if (AutogradMeta* m = autograd::meta(h->tensor)) erase_id(m->hooks, h->id);
  Py_RETURN_NONE;
}
PyObject* handle_enter(PyObject* self, PyObject*) {
  Py_INCREF(self);
  return self;
}
PyObject* handle_exit(PyObject* self, PyObject*) { return handle_remove(self, nullptr); }
PyObject* handle_id(PyObject* self, void*) { return PyLong_FromLongLong(reinterpret_cast<PyHandle*>(self)->id); }

PyMethodDef handle_methods[] = {
    {"remove", handle_remove, METH_NOARGS, "Removes the hook."},
    {"__enter__", handle_enter, METH_NOARGS, nullptr},
    {"__exit__", handle_exit, METH_VARARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};
PyGetSetDef handle_getset[] = {{"id", handle_id, nullptr, nullptr, nullptr}, {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- custom Functions: the node that calls FBackward.apply ----

struct PyFunction;  // the ctx object

class PyFunctionNode final : public Node {
 public:
  PyFunctionNode(PyObject* ctx, std::string name) : ctx_(ctx), name_(std::move(name)) { Py_INCREF(ctx_); }
  ~PyFunctionNode() override;
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_variables() override {
    for (auto& s : saved) s.release();
  }
  bool materialize_grads() const override { return materialize; }

  std::vector<autograd::SavedVariable> saved;
  std::vector<int> input_edge;  // forward input position -> edge index, -1 for non-tensors
  bool materialize = true;

 private:
  PyObject* ctx_;
  std::string name_;
};

struct PyFunction {
  PyObject_HEAD
  PyObject* dict;
  PyObject* to_save;         // tuple given to save_for_backward, until recorded
  PyObject* dirty;           // mark_dirty
  PyObject* non_diff;        // mark_non_differentiable
  PyObject* needs_input_grad;
  PyFunctionNode* cdata;     // the node, while it lives (not owned)
  bool materialize;
};
PyTypeObject FunctionBaseType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyFunctionNode::~PyFunctionNode() {
  auto* f = reinterpret_cast<PyFunction*>(ctx_);
  if (f->cdata == this) f->cdata = nullptr;
  Py_DECREF(ctx_);
}

std::vector<Tensor> PyFunctionNode::apply(std::vector<Tensor>&& grads) {
  Owned args(grads_tuple(grads));
  Owned method(check(PyObject_GetAttrString(ctx_, "apply")));
  Owned r(call(method.get(), args.get()));
  Owned seq;
  if (PyTuple_Check(r.get())) {
    seq = Owned(r.release());
  } else {
    seq = Owned(check(PyTuple_Pack(1, r.get())));
  }
  const Py_ssize_t expected = static_cast<Py_ssize_t>(input_edge.size());
  Py_ssize_t got = PyTuple_GET_SIZE(seq.get());
  if (got > expected) {  // extra trailing Nones are allowed, as in torch
    for (Py_ssize_t i = expected; i < got; ++i)
      if (PyTuple_GET_ITEM(seq.get(), i) != Py_None) {
        got = -1;
        break;
      }
    if (got != -1) got = expected;
    else got = PyTuple_GET_SIZE(seq.get());
  }
  EMBER_CHECK(got == expected, Runtime, "function ", name_, " returned an incorrect number of gradients (expected ",
              expected, ", got ", PyTuple_GET_SIZE(seq.get()), ")");
  std::vector<Tensor> out(next_edges.size());
  for (Py_ssize_t i = 0; i < expected; ++i) {
    PyObject* g = PyTuple_GET_ITEM(seq.get(), i);
    if (input_edge[i] < 0) {
      EMBER_CHECK(g == Py_None, Runtime, "function ", name_, " returned a gradient different than None at position ",
                  i + 1, ", but the corresponding forward input was not a Variable");
      continue;
    }
    if (g == Py_None) continue;
    EMBER_CHECK(is_tensor(g), Type, "function ", name_, " returned a non-Tensor gradient at position ", i + 1);
    out[input_edge[i]] = unwrap(g);
  }
  return out;
}

// ---- ember._C._Node: the grad_fn of a recorded op ----

struct PyNode {
  PyObject_HEAD
  Ref<Node> node;
};
PyTypeObject NodeType = {PyVarObject_HEAD_INIT(nullptr, 0)};

Node* node_of(PyObject* self) {
  if (PyObject_TypeCheck(self, &FunctionBaseType)) {
    Node* n = reinterpret_cast<PyFunction*>(self)->cdata;
    EMBER_CHECK(n, Runtime, "this custom Function's backward node no longer exists (its graph was freed)");
    return n;
  }
  return reinterpret_cast<PyNode*>(self)->node.get();
}

void node_dealloc(PyObject* self) {
  auto* p = reinterpret_cast<PyNode*>(self);
  if (p->node && p->node->pyobj == self) p->node->pyobj = nullptr;
  p->node.~Ref<Node>();
  Py_TYPE(self)->tp_free(self);  // a node class's subtype_dealloc then releases the class
}

PyObject* node_repr(PyObject* self) {
  std::string name = Py_TYPE(self)->tp_name;
  if (PyObject_TypeCheck(self, &FunctionBaseType)) {
    if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  } else {
    name = reinterpret_cast<PyNode*>(self)->node->name();
  }
  return PyUnicode_FromFormat("<%s object at %p>", name.c_str(), self);
}

// Builds the Python value of what a node saved (grad_fn._saved_<name>).
struct PySavedVisitor final : autograd::SavedVisitor {
  Owned value;
  void tensor(const Tensor& t) override { value = Owned(t.defined() ? check(wrap(t)) : Py_NewRef(Py_None)); }
  void tensors(const std::vector<Tensor>& ts) override {
    Owned l(check(PyTuple_New(static_cast<Py_ssize_t>(ts.size()))));
    for (size_t i = 0; i < ts.size(); ++i)
      PyTuple_SET_ITEM(l.get(), i, ts[i].defined() ? check(wrap(ts[i])) : Py_NewRef(Py_None));
    value = std::move(l);
  }
  void scalar(const Scalar& s) override { value = Owned(check(wrap(s))); }
  void ints(IntList v) override {
    Owned t(check(PyTuple_New(static_cast<Py_ssize_t>(v.size()))));
    for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(t.get(), i, check(PyLong_FromLongLong(v[i])));
    value = std::move(t);
  }
  void integer(int64_t v) override { value = Owned(check(PyLong_FromLongLong(v))); }
  void real(double v) override { value = Owned(check(PyFloat_FromDouble(v))); }
  void boolean(bool v) override { value = Owned(Py_NewRef(v ? Py_True : Py_False)); }
  void string(const std::string& v) override { value = Owned(check(PyUnicode_FromString(v.c_str()))); }
  void none() override { value = Owned(Py_NewRef(Py_None)); }
};

// grad_fn._saved_<name>: the attributes the generated node exposes; others as usual.
PyObject* node_getattro(PyObject* self, PyObject* attr) {
  PyObject* r = PyObject_GenericGetAttr(self, attr);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  const char* a = PyUnicode_AsUTF8(attr);
  if (!a || std::strncmp(a, "_saved_", 7) != 0) return nullptr;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject* out = guarded([&]() -> PyObject* {
    PySavedVisitor v;
    if (!reinterpret_cast<PyNode*>(self)->node->saved_value(std::string(a + 7), v)) return nullptr;
    return v.value.release();
  });
  if (out || PyErr_Occurred()) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return out;
  }
  PyErr_Restore(type, value, tb);
  return nullptr;
}

// grad_fn.metadata: a dict that lives as long as the node (the Python object may not).
struct PyMetadata final : RefCounted {
  explicit PyMetadata(PyObject* d) : dict(d) {}
  ~PyMetadata() override { Py_DECREF(dict); }
  PyObject* dict;
};

PyObject* node_metadata(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    Node* n = node_of(self);
    if (!n->metadata) n->metadata = make_ref<PyMetadata>(check(PyDict_New()));
    return Py_NewRef(static_cast<PyMetadata*>(n->metadata.get())->dict);
  });
}

PyObject* node_sequence_nr(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* { return PyLong_FromUnsignedLongLong(node_of(self)->sequence_nr); });
}

PyObject* node_name(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    return PyUnicode_FromString(node_of(self)->name().c_str());
  });
}

PyObject* node_next_functions(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    Node* n = node_of(self);
    Owned t(check(PyTuple_New(static_cast<Py_ssize_t>(n->next_edges.size()))));
    for (size_t i = 0; i < n->next_edges.size(); ++i) {
      const auto& e = n->next_edges[i];
      PyTuple_SET_ITEM(t.get(), i, check(Py_BuildValue("(NI)", wrap_node(e.node.get()), e.input_nr)));
    }
    return t.release();
  });
}

PyObject* node_variable(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    auto* acc = dynamic_cast<autograd::AccumulateGrad*>(node_of(self));
    if (!acc) {
      PyErr_SetString(PyExc_AttributeError, "only AccumulateGrad nodes have a variable");
      return nullptr;
    }
    return wrap(acc->variable());
  });
}

PyObject* node_register_hook(PyObject* self, PyObject* fn) {
  return guarded([&]() -> PyObject* {
    Node* n = node_of(self);
    EMBER_CHECK(PyCallable_Check(fn), Type, "the hook must be callable");
    auto hook = make_ref<PyPostHook>(fn);
    hook->id = autograd::next_hook_id();
    n->post_hooks.push_back(hook);
    return make_handle(Ref<Node>(n), Tensor(), hook->id);
  });
}

PyObject* node_register_prehook(PyObject* self, PyObject* fn) {
  return guarded([&]() -> PyObject* {
    Node* n = node_of(self);
    EMBER_CHECK(PyCallable_Check(fn), Type, "the hook must be callable");
    auto hook = make_ref<PyPreHook>(fn);
    hook->id = autograd::next_hook_id();
    n->pre_hooks.push_back(hook);
    return make_handle(Ref<Node>(n), Tensor(), hook->id);
  });
}

PyObject* node_call(PyObject* self, PyObject* args, PyObject*) {
  return guarded([&]() -> PyObject* {
    Node* n = node_of(self);
    std::vector<Tensor> grads;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
      PyObject* g = PyTuple_GET_ITEM(args, i);
      grads.push_back(g == Py_None ? Tensor() : unwrap(g));
    }
    std::vector<Tensor> r = n->apply(std::move(grads));
    return r.size() == 1 ? wrap(r[0]) : wrap(r);
  });
}

PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, "The node's name, as torch names it (MulBackward0)."},
    {"register_hook", node_register_hook, METH_O,
     "register_hook(fn): fn(grad_inputs, grad_outputs) runs after the node; it may return new grad_inputs."},
    {"register_prehook", node_register_prehook, METH_O,
     "register_prehook(fn): fn(grad_outputs) runs before the node; it may return new grad_outputs."},
    {"_sequence_nr", node_sequence_nr, METH_NOARGS, "The order in which the node was recorded."},
    {nullptr, nullptr, 0, nullptr}};
PyGetSetDef node_getset[] = {
    {"metadata", node_metadata, nullptr, "A dict kept with the node, for the user's annotations.", nullptr},
    {"next_functions", node_next_functions, nullptr, "(node, input_nr) for each input of the recorded op.", nullptr},
    {"variable", node_variable, nullptr, "An AccumulateGrad's leaf tensor.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- _FunctionBase: the ctx of a custom Function ----

PyObject* function_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  auto* f = reinterpret_cast<PyFunction*>(obj);
  f->materialize = true;
  return obj;
}

int function_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* f = reinterpret_cast<PyFunction*>(self);
  Py_VISIT(f->dict);
  Py_VISIT(f->to_save);
  Py_VISIT(f->dirty);
  Py_VISIT(f->non_diff);
  Py_VISIT(f->needs_input_grad);
  return 0;
}

int function_clear(PyObject* self) {
  auto* f = reinterpret_cast<PyFunction*>(self);
  Py_CLEAR(f->dict);
  Py_CLEAR(f->to_save);
  Py_CLEAR(f->dirty);
  Py_CLEAR(f->non_diff);
  Py_CLEAR(f->needs_input_grad);
  return 0;
}

void function_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  function_clear(self);
  auto* f = reinterpret_cast<PyFunction*>(self);
  if (f->cdata) f->cdata->pyobj = nullptr;
  Py_TYPE(self)->tp_free(self);  // a heap subclass's dealloc releases the type
}

bool contains(PyObject* tuple, PyObject* o) {
  if (!tuple) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); ++i)
    if (PyTuple_GET_ITEM(tuple, i) == o) return true;
  return false;
}

// ctx._record(inputs, outputs): gives the outputs of forward their history; returns them
// (an output that is an unmodified input comes back as a new view of it).
PyObject* function_record(PyObject* self, PyObject* args) {
  return guarded([&]() -> PyObject* {
    PyObject *inputs, *outputs;
    if (!PyArg_ParseTuple(args, "O!O", &PyTuple_Type, &inputs, &outputs)) return nullptr;
    auto* f = reinterpret_cast<PyFunction*>(self);
    std::string name = Py_TYPE(self)->tp_name;
    if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
    auto node = make_ref<PyFunctionNode>(self, name);
    node->materialize = f->materialize;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); ++i) {
      PyObject* in = PyTuple_GET_ITEM(inputs, i);
      if (is_tensor(in)) {
        node->input_edge.push_back(static_cast<int>(node->next_edges.size()));
        autograd::add_edges(node->next_edges, unwrap(in));
      } else {
        node->input_edge.push_back(-1);
      }
    }
    const bool single = !PyTuple_Check(outputs);
    Owned outs(single ? check(PyTuple_Pack(1, outputs)) : (Py_INCREF(outputs), outputs));
    const Py_ssize_t n = PyTuple_GET_SIZE(outs.get());
    Owned result(check(PyTuple_New(n)));
    for (Py_ssize_t k = 0; k < n; ++k) {
      PyObject* o = PyTuple_GET_ITEM(outs.get(), k);
      if (!is_tensor(o)) {
        Py_INCREF(o);
        PyTuple_SET_ITEM(result.get(), k, o);
        continue;
      }
      Tensor t = unwrap(o);
      const bool is_input = contains(inputs, o);
      const bool dirty = contains(f->dirty, o);
      if (contains(f->non_diff, o)) {
        node->add_input_meta(t, true);  // no history, but backward still receives zeros for it (torch's rule)
      } else if (dirty) {
        autograd::check_inplace(t);
        autograd::rebase_history(t, node);  // note: resets input_meta to this output only
      } else {
        if (is_input) t = autograd::detach(t);
        autograd::set_history(t, node.get());
      }
      PyObject* w = is_input && !dirty ? check(wrap(t)) : (Py_INCREF(o), o);
      PyTuple_SET_ITEM(result.get(), k, w);
    }
    if (f->to_save) {
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(f->to_save); ++i) {
        PyObject* s = PyTuple_GET_ITEM(f->to_save, i);
        if (s == Py_None) {
          node->saved.emplace_back();
          continue;
        }
        EMBER_CHECK(is_tensor(s), Type, "save_for_backward can only save tensors or None, but got ",
                    Py_TYPE(s)->tp_name);
        node->saved.emplace_back(unwrap(s), contains(result.get(), s) && !contains(inputs, s));
      }
      Py_CLEAR(f->to_save);
    }
    f->cdata = node.get();
    node->pyobj = self;
    // The outputs hold the node; the node holds this ctx.
    if (single) return Py_NewRef(PyTuple_GET_ITEM(result.get(), 0));
    return result.release();
  });
}

PyObject* function_saved_tensors(PyObject* self, void*) {
  return guarded([&]() -> PyObject* {
    auto* f = reinterpret_cast<PyFunction*>(self);
    if (f->to_save) return Py_NewRef(f->to_save);
    EMBER_CHECK(f->cdata, Runtime,
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed).");
    Owned t(check(PyTuple_New(static_cast<Py_ssize_t>(f->cdata->saved.size()))));
    for (size_t i = 0; i < f->cdata->saved.size(); ++i)
      PyTuple_SET_ITEM(t.get(), i, check(wrap(f->cdata->saved[i].unpack(f->cdata))));
    return t.release();
  });
}

// The tuple attributes of a custom Function's ctx (None when unset); the getset entry's
// closure is the field's name, for the error message.
template <PyObject* PyFunction::*field>
PyObject* get_tuple_field(PyObject* self, void*) {
  PyObject* v = reinterpret_cast<PyFunction*>(self)->*field;
  return Py_NewRef(v ? v : Py_None);
}
template <PyObject* PyFunction::*field>
int set_tuple_field(PyObject* self, PyObject* value, void* name) {
  if (value && value != Py_None && !PyTuple_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s must be a tuple", static_cast<const char*>(name));
    return -1;
  }
  Py_XSETREF(reinterpret_cast<PyFunction*>(self)->*field, value && value != Py_None ? Py_NewRef(value) : nullptr);
  return 0;
}

PyObject* get_materialize(PyObject* self, void*) { return PyBool_FromLong(reinterpret_cast<PyFunction*>(self)->materialize); }
int set_materialize(PyObject* self, PyObject* value, void*) {
  int v = value ? PyObject_IsTrue(value) : 1;
  if (v < 0) return -1;
  reinterpret_cast<PyFunction*>(self)->materialize = v;
  if (auto* n = reinterpret_cast<PyFunction*>(self)->cdata) n->materialize = v;
  return 0;
}

PyMethodDef function_methods[] = {
    {"_record", function_record, METH_VARARGS, nullptr},
    {"name", node_name, METH_NOARGS, "The backward node's name (the Function's name + 'Backward')."},
    {"register_hook", node_register_hook, METH_O, nullptr},
    {"register_prehook", node_register_prehook, METH_O, nullptr},
    {"_sequence_nr", node_sequence_nr, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};
PyGetSetDef function_getset[] = {
    {"metadata", node_metadata, nullptr, nullptr, nullptr},
    {"saved_tensors", function_saved_tensors, nullptr, "The tensors given to save_for_backward.", nullptr},
    {"_to_save", get_tuple_field<&PyFunction::to_save>, set_tuple_field<&PyFunction::to_save>, nullptr,
     const_cast<char*>("to_save")},
    {"_dirty", get_tuple_field<&PyFunction::dirty>, set_tuple_field<&PyFunction::dirty>, nullptr,
     const_cast<char*>("dirty")},
    {"_non_differentiable", get_tuple_field<&PyFunction::non_diff>, set_tuple_field<&PyFunction::non_diff>, nullptr,
     const_cast<char*>("non_diff")},
    {"needs_input_grad", get_tuple_field<&PyFunction::needs_input_grad>, set_tuple_field<&PyFunction::needs_input_grad>, nullptr,
     const_cast<char*>("needs_input_grad")},
    {"_materialize_grads", get_materialize, set_materialize, nullptr, nullptr},
    {"next_functions", node_next_functions, nullptr, nullptr, nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- the tensor's autograd properties ----

const Tensor& self_tensor(PyObject* self) { return unwrap(self); }

PyObject* get_requires_grad(PyObject* self, void*) { return PyBool_FromLong(autograd::requires_grad(self_tensor(self))); }
int set_requires_grad_prop(PyObject* self, PyObject* value, void*) {
  return guarded_int([&]() -> int {
    EMBER_CHECK(value && PyBool_Check(value), Type, "requires_grad must be a bool");
    autograd::set_requires_grad(self_tensor(self), value == Py_True);
    return 0;
  });
}

PyObject* get_grad(PyObject* self, void*) {
  const AutogradMeta* m = autograd::meta(self_tensor(self));
  if (!m || !m->grad.defined()) Py_RETURN_NONE;
  return wrap(m->grad);
}
int set_grad(PyObject* self, PyObject* value, void*) {
  return guarded_int([&]() -> int {
    const Tensor& t = self_tensor(self);
    if (!value || value == Py_None) {
      if (AutogradMeta* m = autograd::meta(t)) m->grad = Tensor();
      return 0;
    }
    EMBER_CHECK(is_tensor(value), Type, "assigned grad expected to be a Tensor or None but got grad of type ",
                Py_TYPE(value)->tp_name);
    const Tensor& g = unwrap(value);
    EMBER_CHECK(g.dtype() == t.dtype(), Runtime, "assigned grad has data of a different type");
    EMBER_CHECK(g.sizes() == t.sizes(), Runtime, "assigned grad has data of a different size");
    autograd::ensure_meta(t).grad = g;
    return 0;
  });
}

PyObject* get_grad_fn(PyObject* self, void*) {
  const AutogradMeta* m = autograd::meta(self_tensor(self));
  if (!m || !m->grad_fn) Py_RETURN_NONE;
  return wrap_node(m->grad_fn.get());
}
PyObject* get_is_leaf(PyObject* self, void*) { return PyBool_FromLong(autograd::is_leaf(self_tensor(self))); }
PyObject* get_retains_grad(PyObject* self, void*) {
  const AutogradMeta* m = autograd::meta(self_tensor(self));
  return PyBool_FromLong(m && m->retains_grad);
}
PyObject* get_version(PyObject* self, void*) { return PyLong_FromUnsignedLong(self_tensor(self).storage()->version()); }
PyObject* get_output_nr(PyObject* self, void*) {
  const AutogradMeta* m = autograd::meta(self_tensor(self));
  return PyLong_FromLong(m ? m->output_nr : 0);
}
PyObject* get_base(PyObject* self, void*) {
  const AutogradMeta* m = autograd::meta(self_tensor(self));
  if (!m || !m->base.defined()) Py_RETURN_NONE;
  return wrap(m->base);
}

PyObject* t_requires_grad_(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const Param params[] = {{"requires_grad", PType::Bool, false, true, false, false}};
  static const Signature sig{"requires_grad_", "requires_grad_(bool requires_grad=True)", params, 1};
  return guarded([&]() -> PyObject* {
    Args a;
    if (parse_args(&sig, 1, args, nargs, kwnames, a) < 0) return nullptr;
    autograd::set_requires_grad(self_tensor(self), a.to_bool(0, true));
    return Py_NewRef(self);
  });
}

PyObject* t_retain_grad(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_tensor(self);
    EMBER_CHECK(autograd::requires_grad(t), Runtime, "can't retain_grad on Tensor that has requires_grad=False");
    AutogradMeta& m = autograd::ensure_meta(t);
    if (!m.grad_fn || m.retains_grad) Py_RETURN_NONE;
    auto hook = make_ref<RetainGrad>(t.impl());
    hook->id = autograd::next_hook_id();
    m.grad_fn->retain_hooks.push_back({m.output_nr, hook});
    m.retain_hook = hook;
    m.retains_grad = true;
    Py_RETURN_NONE;
  });
}

PyObject* t_detach(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_tensor(self);
    Tensor result = autograd::detach(t);
    // Not an api:: op, so reported here: a trace that missed it would take the result
    // for a constant (see Note [The trace hook]).
    if (trace::active()) [[unlikely]] {
      trace::Scope scope;
      if (scope.outermost()) trace::report("detach", "self", {trace::arg(t)}, {result}, false);
    }
    return wrap(result);
  });
}

PyObject* t_detach_(PyObject* self, PyObject*) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_tensor(self);
    if (AutogradMeta* m = autograd::meta(t)) {
      EMBER_CHECK(!m->base.defined() || !autograd::requires_grad(t), Runtime,
                  "Can't detach views in-place. Use detach() instead.");
      m->grad_fn = Ref<Node>();
      m->requires_grad = false;
      m->output_nr = 0;
    }
    return Py_NewRef(self);
  });
}

PyObject* t_register_hook(PyObject* self, PyObject* fn) {
  return guarded([&]() -> PyObject* {
    const Tensor& t = self_tensor(self);
    EMBER_CHECK(autograd::requires_grad(t), Runtime,
                "cannot register a hook on a tensor that doesn't require gradient");
    EMBER_CHECK(PyCallable_Check(fn), Type, "the hook must be callable");
    auto hook = make_ref<PyGradHook>(fn);
    hook->id = autograd::next_hook_id();
    AutogradMeta& m = autograd::ensure_meta(t);
    if (m.grad_fn) {
      m.grad_fn->tensor_hooks.push_back({m.output_nr, hook});
      return make_handle(m.grad_fn, Tensor(), hook->id);
    }
    m.hooks.push_back(hook);
    return make_handle(Ref<Node>(), t, hook->id);
  });
}

// ---- module functions ----

PyObject* f_is_grad_enabled(PyObject*, PyObject*) { return PyBool_FromLong(autograd::t_grad_enabled); }
PyObject* f_set_grad_enabled(PyObject*, PyObject* value) {
  int v = PyObject_IsTrue(value);
  if (v < 0) return nullptr;
  autograd::t_grad_enabled = v;
  Py_RETURN_NONE;
}
PyObject* f_is_inference_mode_enabled(PyObject*, PyObject*) { return PyBool_FromLong(autograd::t_inference_mode); }
PyObject* f_set_inference_mode(PyObject*, PyObject* value) {
  int v = PyObject_IsTrue(value);
  if (v < 0) return nullptr;
  autograd::t_inference_mode = v;
  Py_RETURN_NONE;
}

std::vector<Tensor> tensors_from(PyObject* seq, const char* what, bool allow_none) {
  std::vector<Tensor> out;
  Owned t(check(PySequence_Tuple(seq)));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t.get()); ++i) {
    PyObject* o = PyTuple_GET_ITEM(t.get(), i);
    if (o == Py_None && allow_none) {
      out.emplace_back();
      continue;
    }
    EMBER_CHECK(is_tensor(o), Type, what, " must be tensors, not ", Py_TYPE(o)->tp_name);
    out.push_back(unwrap(o));
  }
  return out;
}

// _run_backward(outputs, grad_outputs, keep_graph, create_graph, inputs, allow_unused, accumulate_grad)
PyObject* f_run_backward(PyObject*, PyObject* args) {
  return guarded([&]() -> PyObject* {
    PyObject *outputs, *grad_outputs, *inputs;
    int keep_graph, create_graph, allow_unused, accumulate;
    if (!PyArg_ParseTuple(args, "OOppOpp", &outputs, &grad_outputs, &keep_graph, &create_graph, &inputs,
                          &allow_unused, &accumulate))
      return nullptr;
    autograd::BackwardArgs b;
    b.outputs = tensors_from(outputs, "outputs", false);
    b.grad_outputs = tensors_from(grad_outputs, "grad_outputs", true);
    b.inputs = tensors_from(inputs, "inputs", false);
    b.keep_graph = keep_graph;
    b.create_graph = create_graph;
    b.allow_unused = allow_unused;
    b.accumulate_grad = accumulate;
    std::vector<Tensor> grads = autograd::run_backward(b);
    if (accumulate) Py_RETURN_NONE;
    return wrap(grads);
  });
}

// saved_tensors_hooks: the pair of Python hooks, and what pack returned.
struct PyPacked final : autograd::PackedTensor {
  PyPacked(PyObject* v, PyObject* u) : value(v), unpack_fn(Py_NewRef(u)) {}
  ~PyPacked() override {
    Py_DECREF(value);
    Py_DECREF(unpack_fn);
  }
  Tensor unpack() override {
    Owned args(check(PyTuple_Pack(1, value)));
    Owned r(call(unpack_fn, args.get()));
    EMBER_CHECK(is_tensor(r.get()), Type, "Output of saved tensor unpack_hook expected to be a Tensor but got result of type ",
                Py_TYPE(r.get())->tp_name);
    return unwrap(r.get());
  }
  PyObject* value;
  PyObject* unpack_fn;
};

struct PySavedHooks final : autograd::SavedHooks {
  PySavedHooks(PyObject* p, PyObject* u) : pack_fn(Py_NewRef(p)), unpack_fn(Py_NewRef(u)) {}
  ~PySavedHooks() override {
    Py_DECREF(pack_fn);
    Py_DECREF(unpack_fn);
  }
  Ref<autograd::PackedTensor> pack(const Tensor& t) override {
    Owned args(check(Py_BuildValue("(N)", check(wrap(t)))));
    PyObject* r = call(pack_fn, args.get());
    return make_ref<PyPacked>(r, unpack_fn);
  }
  PyObject* pack_fn;
  PyObject* unpack_fn;
};

PyObject* f_push_saved_tensors_hooks(PyObject*, PyObject* args) {
  return guarded([&]() -> PyObject* {
    PyObject *pack, *unpack;
    if (!PyArg_ParseTuple(args, "OO", &pack, &unpack)) return nullptr;
    EMBER_CHECK(PyCallable_Check(pack) && PyCallable_Check(unpack), Type, "pack_hook and unpack_hook must be callable");
    autograd::saved_hooks_stack().push_back(make_ref<PySavedHooks>(pack, unpack));
    Py_RETURN_NONE;
  });
}

PyObject* f_pop_saved_tensors_hooks(PyObject*, PyObject*) {
  auto& stack = autograd::saved_hooks_stack();
  if (!stack.empty()) stack.pop_back();
  Py_RETURN_NONE;
}

PyObject* f_current_graph_task_id(PyObject*, PyObject*) {
  return PyLong_FromUnsignedLongLong(autograd::current_task_id());
}

PyObject* f_will_engine_execute(PyObject*, PyObject* t) {
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(is_tensor(t), Type, "expected a Tensor");
    return PyBool_FromLong(autograd::will_execute(unwrap(t)));
  });
}

PyObject* f_increment_version(PyObject*, PyObject* t) {
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(is_tensor(t), Type, "increment_version expects a Tensor");
    const Tensor& x = unwrap(t);
    if (x.defined() && x.storage()) x.storage()->bump_version();
    Py_RETURN_NONE;
  });
}

// Forward-mode AD (Note [Forward-mode AD]); ember/autograd/forward_ad.py is the face.
PyObject* f_enter_dual_level(PyObject*, PyObject*) {
  return guarded([&]() -> PyObject* { return PyLong_FromLongLong(autograd::forward::enter_level()); });
}

PyObject* f_exit_dual_level(PyObject*, PyObject* level) {
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(PyLong_Check(level), Type, "exit_dual_level(): level must be an int");
    autograd::forward::exit_level(PyLong_AsLongLong(level));
    Py_RETURN_NONE;
  });
}

// make_dual: a view of primal carrying tangent (stored as given when its strides match
// the primal's, else copied into the primal's layout, as torch does).
PyObject* f_make_dual(PyObject*, PyObject* args) {
  return guarded([&]() -> PyObject* {
    PyObject *p, *t;
    if (!PyArg_ParseTuple(args, "OO", &p, &t)) return nullptr;
    EMBER_CHECK(is_tensor(p) && is_tensor(t), Type, "make_dual(): expected Tensors");
    const Tensor& primal = unwrap(p);
    Tensor tangent = unwrap(t);
    namespace fw = autograd::forward;
    EMBER_CHECK(fw::level_active(), Runtime,
                "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() "
                "first.");
    EMBER_CHECK(!fw::has_tangent(primal), Runtime,
                "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level 0 is not "
                "supported.");
    if (tangent.sizes() == primal.sizes() && tangent.strides() != primal.strides() && primal.numel() > 1) {
      fw::Suspend suspend;
      Tensor like = api::empty_strided(primal.sizes(), primal.strides(), tangent.dtype());
      tangent = api::copy_(like, tangent, false);
    }
    Tensor dual;
    {
      fw::Suspend suspend;
      dual = api::view(primal, primal.sizes());
    }
    fw::set_tangent(dual, tangent);
    return wrap(dual);
  });
}

// unpack_dual: (a view of t without its tangent, the tangent or None).
PyObject* f_unpack_dual(PyObject*, PyObject* t) {
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(is_tensor(t), Type, "unpack_dual(): expected a Tensor");
    const Tensor& x = unwrap(t);
    namespace fw = autograd::forward;
    Tensor tangent = fw::tangent(x);
    if (!tangent.defined()) return Py_BuildValue("(ON)", t, Py_NewRef(Py_None));
    Tensor primal;
    {
      fw::Suspend suspend;
      primal = api::view(x, x.sizes());
    }
    return Py_BuildValue("(NN)", wrap(primal), wrap(tangent));
  });
}

// Gives t (which has none) the tangent (custom Functions' jvp results).
PyObject* f_fw_set_tangent(PyObject*, PyObject* args) {
  return guarded([&]() -> PyObject* {
    PyObject *t, *tangent;
    if (!PyArg_ParseTuple(args, "OO", &t, &tangent)) return nullptr;
    EMBER_CHECK(is_tensor(t) && is_tensor(tangent), Type, "_fw_set_tangent(): expected Tensors");
    autograd::forward::set_tangent(unwrap(t), unwrap(tangent));
    Py_RETURN_NONE;
  });
}

// The tangent of t, or None (printing, func.jvp).
PyObject* f_fw_tangent(PyObject*, PyObject* t) {
  return guarded([&]() -> PyObject* {
    EMBER_CHECK(is_tensor(t), Type, "_fw_tangent(): expected a Tensor");
    const Tensor& tangent = autograd::forward::tangent(unwrap(t));
    if (!tangent.defined()) Py_RETURN_NONE;
    return wrap(tangent);
  });
}

PyMethodDef autograd_functions[] = {
    {"_enter_dual_level", f_enter_dual_level, METH_NOARGS, nullptr},
    {"_exit_dual_level", f_exit_dual_level, METH_O, nullptr},
    {"_make_dual", f_make_dual, METH_VARARGS, nullptr},
    {"_unpack_dual", f_unpack_dual, METH_O, nullptr},
    {"_fw_tangent", f_fw_tangent, METH_O, nullptr},
    {"_fw_set_tangent", f_fw_set_tangent, METH_VARARGS, nullptr},
    {"_current_graph_task_id", f_current_graph_task_id, METH_NOARGS, nullptr},
    {"_will_engine_execute", f_will_engine_execute, METH_O, nullptr},
    {"_increment_version", f_increment_version, METH_O, nullptr},
    {"_push_saved_tensors_hooks", f_push_saved_tensors_hooks, METH_VARARGS, nullptr},
    {"_pop_saved_tensors_hooks", f_pop_saved_tensors_hooks, METH_NOARGS, nullptr},
    {"is_grad_enabled", f_is_grad_enabled, METH_NOARGS, "Whether ops record autograd history (this thread)."},
    {"_set_grad_enabled", f_set_grad_enabled, METH_O, nullptr},
    {"is_inference_mode_enabled", f_is_inference_mode_enabled, METH_NOARGS, "Whether inference mode is on."},
    {"_set_inference_mode", f_set_inference_mode, METH_O, nullptr},
    {"_run_backward", f_run_backward, METH_VARARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

Tensor with_requires_grad(Tensor t, bool flag) {
  if (flag) autograd::set_requires_grad(t, true);
  return t;
}

namespace {
// One Python class per node name (AddBackward0, AccumulateGrad, ...), a subclass of
// _Node made the first time a node of that name reaches Python, then kept.
PyTypeObject* node_type(const std::string& name) {
  static std::unordered_map<std::string, PyObject*> types;
  auto it = types.find(name);
  if (it != types.end()) return reinterpret_cast<PyTypeObject*>(it->second);
  it = types.emplace(name, nullptr).first;
  static std::unordered_map<std::string, std::string> spec_names;  // tp_name points into these
  static constexpr const char* kModule = "builtins.";
  const std::string& spec_name = spec_names.emplace(name, kModule + name).first->second;
  PyType_Slot slots[] = {{0, nullptr}};
  PyType_Spec spec = {spec_name.c_str(), 0, 0, Py_TPFLAGS_DEFAULT, slots};
  Owned bases(PyTuple_Pack(1, reinterpret_cast<PyObject*>(&NodeType)));
  PyObject* type = bases ? PyType_FromSpecWithBases(&spec, bases.get()) : nullptr;
  if (!type) {
    types.erase(it);
    return nullptr;
  }
  // __module__ 'builtins' (from the spec's name, which a dotless name would lack, with a
  // DeprecationWarning); the repr of a builtins class prints tp_name, which must then be
  // the bare name, as torch's <class 'AddBackward0'>. spec_names outlives the type.
  reinterpret_cast<PyTypeObject*>(type)->tp_name = spec_name.c_str() + std::strlen(kModule);
  it->second = type;
  return reinterpret_cast<PyTypeObject*>(type);
}
}  // namespace

PyObject* wrap_node(Node* node) {
  if (!node) Py_RETURN_NONE;
  if (auto* existing = static_cast<PyObject*>(node->pyobj); existing && Py_REFCNT(existing) > 0)
    return Py_NewRef(existing);
  // torch's C++-only nodes answer name() with their namespace; the class has the bare name
  std::string name = node->name();
  if (name.rfind("torch::autograd::", 0) == 0) name = name.substr(17);
  PyTypeObject* type = node_type(name);
  if (!type) return nullptr;
  auto* p = reinterpret_cast<PyNode*>(type->tp_alloc(type, 0));
  if (!p) return nullptr;
  new (&p->node) Ref<Node>(node);
  node->pyobj = p;
  return reinterpret_cast<PyObject*>(p);
}

PyObject* t_is_inference(PyObject* self, PyObject*) {
  const Tensor& t = self_tensor(self);
  return PyBool_FromLong(t.storage() && t.storage()->inference);
}

PyGetSetDef tensor_autograd_getset[] = {
    {"requires_grad", get_requires_grad, set_requires_grad_prop, "Whether autograd records ops on this tensor.", nullptr},
    {"grad", get_grad, set_grad, "The gradient accumulated by backward() (None until then).", nullptr},
    {"grad_fn", get_grad_fn, nullptr, "The node that made this tensor (None for leaves).", nullptr},
    {"is_leaf", get_is_leaf, nullptr, "True unless a recorded op made this tensor.", nullptr},
    {"retains_grad", get_retains_grad, nullptr, "Whether retain_grad() was called on this non-leaf.", nullptr},
    {"_version", get_version, nullptr, "Counts the in-place writes to this tensor's memory.", nullptr},
    {"output_nr", get_output_nr, nullptr, "Which output of grad_fn this tensor is.", nullptr},
    {"_base", get_base, nullptr, "For a view recorded by autograd: the tensor it views.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef tensor_autograd_methods[] = {
    {"requires_grad_", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(t_requires_grad_)),
     METH_FASTCALL | METH_KEYWORDS, "requires_grad_(requires_grad=True): sets requires_grad in place; returns self."},
    {"retain_grad", t_retain_grad, METH_NOARGS, "Keeps this non-leaf's gradient in .grad during backward()."},
    {"detach", t_detach, METH_NOARGS, "A tensor sharing this one's memory, without autograd history."},
    {"detach_", t_detach_, METH_NOARGS, "Detaches this tensor from its history in place."},
    {"_register_hook", t_register_hook, METH_O, nullptr},
    {"is_inference", t_is_inference, METH_NOARGS, "Whether this is an inference tensor (made in inference mode)."},
    {nullptr, nullptr, 0, nullptr}};

void init_autograd(PyObject* module) {
  NodeType.tp_name = "ember._C._Node";
  NodeType.tp_basicsize = sizeof(PyNode);
  NodeType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  NodeType.tp_dealloc = node_dealloc;
  NodeType.tp_getattro = node_getattro;
  NodeType.tp_repr = node_repr;
  NodeType.tp_call = node_call;
  NodeType.tp_methods = node_methods;
  NodeType.tp_getset = node_getset;
  NodeType.tp_doc = "A node of the autograd graph: the backward of one recorded op (a tensor's grad_fn).";
  add_type(module, NodeType, "_Node");

  HandleType.tp_name = "ember._C._RemovableHandle";
  HandleType.tp_basicsize = sizeof(PyHandle);
  HandleType.tp_flags = Py_TPFLAGS_DEFAULT;
  HandleType.tp_dealloc = handle_dealloc;
  HandleType.tp_methods = handle_methods;
  HandleType.tp_getset = handle_getset;
  HandleType.tp_doc = "A handle that removes a hook (handle.remove(), or use it as a context manager).";
  add_type(module, HandleType, "_RemovableHandle");

  FunctionBaseType.tp_name = "ember._C._FunctionBase";
  FunctionBaseType.tp_basicsize = sizeof(PyFunction);
  FunctionBaseType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  FunctionBaseType.tp_new = function_new;
  FunctionBaseType.tp_dealloc = function_dealloc;
  FunctionBaseType.tp_traverse = function_traverse;
  FunctionBaseType.tp_clear = function_clear;
  FunctionBaseType.tp_dictoffset = offsetof(PyFunction, dict);
  FunctionBaseType.tp_repr = node_repr;
  FunctionBaseType.tp_methods = function_methods;
  FunctionBaseType.tp_getset = function_getset;
  FunctionBaseType.tp_doc = "The base of a custom Function's backward class: its ctx and its grad_fn.";
  add_type(module, FunctionBaseType, "_FunctionBase");

  if (PyModule_AddFunctions(module, autograd_functions) < 0) throw PythonError{};
}

}  // namespace ember::python
