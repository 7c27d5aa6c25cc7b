// SavedVariable: a tensor a node keeps for its backward formula, with the version of
// its storage at save time, so that an in-place write in between is caught.
#pragma once
#include "autograd/node.h"

namespace ember::autograd {

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
    released_ = true;
  }
  bool defined() const { return defined_; }

 private:
  Tensor data_;
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool defined_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

}  // namespace ember::autograd
