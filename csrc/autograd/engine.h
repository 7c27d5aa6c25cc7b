// The engine: runs a graph backward from some outputs.
#pragma once
#include <vector>
#include "autograd/node.h"

namespace ember::autograd {

struct BackwardArgs {
  std::vector<Tensor> outputs;       // the tensors to differentiate
  std::vector<Tensor> grad_outputs;  // their gradients (undefined: ones, for one-element outputs)
  std::vector<Tensor> inputs;        // empty: every leaf; else only these
  bool keep_graph = false;
  bool create_graph = false;
  bool accumulate_grad = true;       // backward(): into .grad; grad(): returned instead
  bool allow_unused = false;
};

// backward(): accumulates into .grad and returns nothing; grad(): returns the
// gradient of each input (undefined where unused and allow_unused).
std::vector<Tensor> run_backward(const BackwardArgs& args);

// The backward running on this thread (register_multi_grad_hook asks from its hooks):
// its id, 0 when none; and whether it will hand `t` a gradient (run t's hooks).
uint64_t current_task_id();
bool will_execute(const Tensor& t);

}  // namespace ember::autograd
