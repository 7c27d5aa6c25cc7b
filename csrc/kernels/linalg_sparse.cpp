#include "kernels/linalg_sparse.h"

#include <algorithm>
#include "core/parallel.h"

namespace ember::kernels::linalg_sparse {

// Threads take whole rows (each writes its own output rows, so no two touch the same
// memory); the grain counts rows so that a piece holds about kGrainSize multiply-adds.
template <class T>
void Kernels<T>::csr_mm(const int64_t* crow, const int64_t* col, const T* values, int64_t rows, const T* dense,
                        int64_t k, T* out) {
  const int64_t nnz = crow[rows];
  const int64_t per_row = std::max<int64_t>(1, (nnz / std::max<int64_t>(rows, 1) + 1) * k);
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / per_row), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* __restrict o = out + r * k;
      std::fill(o, o + k, T(0));
      for (int64_t j = crow[r]; j < crow[r + 1]; ++j) {
        const T v = values[j];
        const T* __restrict d = dense + col[j] * k;
        for (int64_t t = 0; t < k; ++t) o[t] += v * d[t];
      }
    }
  });
}

template <class T>
void Kernels<T>::sampled_dot(const int64_t* row, const int64_t* col, int64_t nnz, const T* a, const T* b, int64_t k,
                             T* out) {
  parallel_for(0, nnz, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(k, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      const T* __restrict x = a + row[j] * k;
      const T* __restrict y = b + col[j] * k;
      T s = 0;
      for (int64_t t = 0; t < k; ++t) s += x[t] * y[t];
      out[j] = s;
    }
  });
}

}  // namespace ember::kernels::linalg_sparse

#include "kernel_instances_linalg_sparse.h"  // generated: Kernels<float>, Kernels<double>
