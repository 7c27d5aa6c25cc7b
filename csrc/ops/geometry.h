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

// Dense strides for a fresh tensor of `shape` whose dims are ordered by the strides of the
// inputs (broadcast to shape); see Note [The layout of an elementwise result] in
// ops/elementwise.cpp. A size-0 dim zeroes the strides outside it unless skip_empty.
Dims ordered_strides(IntList shape, const Tensor* ins, int n, bool skip_empty);

// Note [Memory formats] (geometry.cpp).
// The strides of a fresh tensor of these sizes in `format` (Contiguous or a channels-last
// one; RuntimeError when the rank does not fit it, as torch says).
Dims format_strides(IntList sizes, MemoryFormat format);
// Whether t is laid out densely in `format` (size-1 dims are ignored, so a tensor can be
// both contiguous and channels_last contiguous); Preserve asks nothing.
bool is_contiguous_as(const Tensor& t, MemoryFormat format);
// The format t's strides look like: ChannelsLast(3d) when its channel dim is innermost,
// else Contiguous (torch's suggest_memory_format).
MemoryFormat suggest_memory_format(const Tensor& t);

}  // namespace ember::ops
