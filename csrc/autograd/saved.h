// SavedVariable: a tensor a node keeps for its backward formula, with the version of
// its storage at save time, so that an in-place write in between is caught.
#pragma once
#include <optional>
#include <string>
#include "autograd/node.h"
#include "core/scalar.h"

namespace ember::autograd {

// saved_tensors_hooks: while a pair of hooks is installed (this thread), a node saves
// what pack returns instead of the tensor, and unpack turns it back into a tensor.
struct PackedTensor : RefCounted {
  virtual Tensor unpack() = 0;
};
struct SavedHooks : RefCounted {
  virtual Ref<PackedTensor> pack(const Tensor& t) = 0;
};
// The innermost installed hooks (null: none); pushed and popped by the Python face.
std::vector<Ref<SavedHooks>>& saved_hooks_stack();

class SavedVariable {
 public:
  SavedVariable() = default;
  // is_output: the tensor is an output of the saving node; it is kept without its
  // autograd record (which points back at the node) and rebuilt on unpack.
  SavedVariable(const Tensor& t, bool is_output);

  // The saved tensor; RuntimeError if the graph was freed or the tensor modified.
  Tensor unpack(Node* owner) const;
  void release() {
    data_ = Tensor();
    packed_ = Ref<PackedTensor>();
    tangent_ = Tensor();
    released_ = true;
  }
  bool defined() const { return defined_; }
  // Forward AD: the tangent an output got after it was saved, handed to what unpack
  // returns (forward over reverse reads outputs' tangents in backward formulas).
  void set_tangent(const Tensor& tangent, uint64_t level) {
    tangent_ = tangent;
    tangent_level_ = level;
  }

 private:
  Tensor tangent_;
  uint64_t tangent_level_ = 0;
  Tensor data_;
  Ref<PackedTensor> packed_;  // what a pack hook returned, instead of data_
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool defined_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

}  // namespace ember::autograd

namespace ember::autograd {

// What a node saved, read back by name for Python's grad_fn._saved_<name>: the node
// hands each value to the visitor, which builds the Python object.
struct SavedVisitor {
  virtual ~SavedVisitor() = default;
  virtual void tensor(const Tensor& t) = 0;  // undefined: None
  virtual void tensors(const std::vector<Tensor>& ts) = 0;
  virtual void scalar(const Scalar& s) = 0;
  virtual void ints(IntList v) = 0;
  virtual void integer(int64_t v) = 0;
  virtual void real(double v) = 0;
  virtual void boolean(bool v) = 0;
  virtual void string(const std::string& s) = 0;
  virtual void none() = 0;
};

inline void put_saved(SavedVisitor& v, const Tensor& t) { v.tensor(t); }
inline void put_saved(SavedVisitor& v, const std::vector<Tensor>& t) { v.tensors(t); }
inline void put_saved(SavedVisitor& v, const Scalar& s) { v.scalar(s); }
inline void put_saved(SavedVisitor& v, const Dims& d) { v.ints(IntList(d)); }
inline void put_saved(SavedVisitor& v, int64_t x) { v.integer(x); }
inline void put_saved(SavedVisitor& v, double x) { v.real(x); }
inline void put_saved(SavedVisitor& v, bool x) { v.boolean(x); }
inline void put_saved(SavedVisitor& v, const std::string& x) { v.string(x); }
template <class T>
void put_saved(SavedVisitor& v, const std::optional<T>& x) {
  if (x) put_saved(v, *x);
  else v.none();
}
// Values with no Python form here (enums, generators): None.
template <class T>
void put_saved(SavedVisitor& v, const T&) {
  v.none();
}

}  // namespace ember::autograd
