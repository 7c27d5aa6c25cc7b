// Shape and stride arithmetic shared by ops: -1 inference, broadcasting, view strides.
#pragma once
#include <optional>
#include "core/tensor.h"

namespace ember::ops {

// Replaces one -1 in `shape` by what makes its product equal numel.
Dims infer_size(IntList shape, int64_t numel);
// The broadcast of two shapes (RuntimeError names both when they do not broadcast).
Dims broadcast_shapes(IntList a, IntList b);
// Strides that let a tensor with these sizes/strides be viewed with new_sizes, if any.
std::optional<Dims> view_strides(IntList sizes, IntList strides, IntList new_sizes);
// No gaps and no overlap: the strides are those of a contiguous tensor in some order.
bool non_overlapping_and_dense(const Tensor& t);
// Strides for a fresh tensor laid out like self (preserve_format): self's own strides
// when self is dense, else dense strides in the order of self's strides.
Dims preserved_strides(const Tensor& self);

}  // namespace ember::ops
