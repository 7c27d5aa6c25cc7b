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

  // embedding_bag: bag b reduces the rows ix[off[b]:off[b+1]] (off has bags + 1 entries)
  // of weight (rows of dim) into out[b], skipping rows equal to padding_idx: mode 0 sums
  // (each row times psw[i] when psw is not null), 1 averages, 2 takes the largest, writing
  // the row each column came from into max_ix (bags x dim). bag_size[b] receives the
  // number of rows not skipped; an empty bag gives zeros.
  static void embedding_bag(const T* weight, const int64_t* ix, const int64_t* off, int64_t bags, int64_t dim,
                            int64_t mode, const T* psw, int64_t padding_idx, T* out, int64_t* bag_size,
                            int64_t* max_ix);
  // Its weight gradient: out (rows x dim, written whole) gets g[bag[i]] (times psw[i], or
  // divided by the bag's size for the mean, or by counts[ix[i]] when counts is not null)
  // at row ix[i]; for the max, g[b, c] at row max_ix[b, c]. Threads own ranges of rows.
  static void embedding_bag_backward(const T* g, const int64_t* ix, const int64_t* bag, int64_t n, int64_t bags,
                                     int64_t dim, int64_t rows, int64_t mode, const T* psw, int64_t padding_idx,
                                     const int64_t* bag_size, const int64_t* max_ix, const int64_t* counts, T* out);
  // The gradient of the per-sample weights: out[i] = g[bag[i]] . weight[ix[i]] (0 for padding).
  static void embedding_bag_psw_backward(const T* g, const T* weight, const int64_t* ix, const int64_t* bag,
                                         int64_t n, int64_t dim, int64_t padding_idx, T* out);
};

}  // namespace ember::kernels::nn_embedding
