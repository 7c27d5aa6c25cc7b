// Embedding rows gathered and their gradients scattered (see kernels/nn_embedding.h).
#include "kernels/nn_embedding.h"
#include <algorithm>
#include <cstring>
#include "core/parallel.h"

namespace ember::kernels::nn_embedding {

void gather_rows(const char* weight, const int64_t* ix, int64_t n, int64_t row_bytes, char* out) {
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize * 4 / std::max<int64_t>(row_bytes, 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(out + i * row_bytes, weight + ix[i] * row_bytes, size_t(row_bytes));
  });
}

template <class T>
void Kernels<T>::embedding_backward(const T* g, const int64_t* ix, int64_t n, int64_t dim, int64_t padding_idx,
                                    const int64_t* counts, T* out) {
  // Threads take slices of the embedding dim, so rows that repeat never race.
  const int64_t slices = n * dim < kGrainSize ? 1 : std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, dim / 16));
  parallel_for(0, slices, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t c0 = dim * s / slices, c1 = dim * (s + 1) / slices;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = ix[i];
        if (r == padding_idx) continue;
        const T scale = counts ? T(1) / T(counts[r]) : T(1);
        const T* gr = g + i * dim;
        T* orow = out + r * dim;
        for (int64_t c = c0; c < c1; ++c) orow[c] += gr[c] * scale;
      }
    }
  });
}

}  // namespace ember::kernels::nn_embedding

#include "kernel_instances_nn_embedding.h"  // generated: Kernels<float>, Kernels<double>
