// Kernel family nn_embedding (ops/nn_embedding.cpp): rows of a weight gathered by index,
// and the gradient scattered back. The indices are contiguous int64 already checked
// against the row count by the op.
#pragma once
#include <cstdint>

namespace ember::kernels::nn_embedding {

// out[i] = weight[ix[i]]: n rows of row_bytes each (any dtype: rows are copied bytes).
void gather_rows(const char* weight, const int64_t* ix, int64_t n, int64_t row_bytes, char* out);

template <class T>
struct Kernels {
  // out[ix[i]] += g[i] * scale for the n rows of length dim (out zeroed by the caller);
  // rows equal to padding_idx are skipped; counts (null unless scale_grad_by_freq) divide
  // each row's gradient by how often its index occurs. T = float or double.
  static void embedding_backward(const T* g, const int64_t* ix, int64_t n, int64_t dim, int64_t padding_idx,
                                 const int64_t* counts, T* out);
};

}  // namespace ember::kernels::nn_embedding
