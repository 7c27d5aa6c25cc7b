// The transposing copy of elements by their size (kernels/transpose.cpp), for the copy
// family: a 2-D loop whose output runs along one dim and whose input runs along the other.
#pragma once
#include <cstddef>
#include <cstdint>
#include "kernels/loops.h"

namespace ember::kernels::transpose {

// Converts n contiguous elements at `in` into the output type at `out`.
using Convert = void (*)(char* out, const char* in, int64_t n);

// Copies loop's operand 1 (of `src_size`-byte elements) into operand 0 (`dst_size` bytes)
// when one of them is contiguous along dim 0 and the other along a later dim (the loop's
// other dims, if any, being a batch of such matrices), and returns true; returns false,
// having done nothing, for any other loop. Without `convert` the sizes are
// equal and the bytes move; with it, each tile's rows are converted into a buffer first.
bool copy(const Loop& loop, size_t dst_size, size_t src_size, Convert convert = nullptr);

}  // namespace ember::kernels::transpose
