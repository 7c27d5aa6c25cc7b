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

template <class T>
void Kernels<T>::embedding_bag(const T* weight, const int64_t* ix, const int64_t* off, int64_t bags, int64_t dim,
                               int64_t mode, const T* psw, int64_t padding_idx, T* out, int64_t* bag_size,
                               int64_t* max_ix) {
  const int64_t per_bag = bags > 0 ? std::max<int64_t>(1, (off[bags] - off[0]) / bags) * std::max<int64_t>(dim, 1) : 1;
  parallel_for(0, bags, std::max<int64_t>(1, kGrainSize / per_bag), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      T* __restrict o = out + b * dim;
      std::fill(o, o + dim, T(0));
      int64_t count = 0;
      if (mode == 2) {
        int64_t* __restrict m = max_ix + b * dim;
        std::fill(m, m + dim, int64_t(0));
        for (int64_t i = off[b]; i < off[b + 1]; ++i) {
          const int64_t r = ix[i];
          if (r == padding_idx) continue;
          const T* __restrict w = weight + r * dim;
          for (int64_t c = 0; c < dim; ++c) {
            const bool take = count == 0 || w[c] > o[c];
            o[c] = take ? w[c] : o[c];
            m[c] = take ? r : m[c];
          }
          ++count;
        }
      } else {
        for (int64_t i = off[b]; i < off[b + 1]; ++i) {
          const int64_t r = ix[i];
          if (r == padding_idx) continue;
          const T* __restrict w = weight + r * dim;
          if (psw) {
            const T s = psw[i];
            for (int64_t c = 0; c < dim; ++c) o[c] += w[c] * s;
          } else {
            for (int64_t c = 0; c < dim; ++c) o[c] += w[c];
          }
          ++count;
        }
        if (mode == 1 && count > 0) {
          const T k = T(count);
          for (int64_t c = 0; c < dim; ++c) o[c] /= k;
        }
      }
      bag_size[b] = count;
    }
  });
}

template <class T>
void Kernels<T>::embedding_bag_backward(const T* g, const int64_t* ix, const int64_t* bag, int64_t n, int64_t bags,
                                        int64_t dim, int64_t rows, int64_t mode, const T* psw, int64_t padding_idx,
                                        const int64_t* bag_size, const int64_t* max_ix, const int64_t* counts, T* out) {
  // Each thread zeroes and fills its own rows, scanning every index: repeated rows never
  // race, and the updates walk whole (vectorized) rows.
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(dim, 1)), [&](int64_t r0, int64_t r1) {
    std::fill(out + r0 * dim, out + r1 * dim, T(0));
    if (mode == 2) {
      for (int64_t b = 0; b < bags; ++b) {
        if (bag_size[b] == 0) continue;
        for (int64_t c = 0; c < dim; ++c) {
          const int64_t r = max_ix[b * dim + c];
          if (r >= r0 && r < r1) out[r * dim + c] += g[b * dim + c];
        }
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = ix[i], b = bag[i];
      if (r < r0 || r >= r1 || r == padding_idx || b < 0) continue;
      T s = psw ? psw[i] : mode == 1 ? T(1) / T(bag_size[b]) : T(1);
      if (counts) s /= T(counts[r]);
      const T* __restrict gr = g + b * dim;
      T* __restrict o = out + r * dim;
      for (int64_t c = 0; c < dim; ++c) o[c] += gr[c] * s;
    }
  });
}

template <class T>
void Kernels<T>::embedding_bag_psw_backward(const T* g, const T* weight, const int64_t* ix, const int64_t* bag,
                                            int64_t n, int64_t dim, int64_t padding_idx, T* out) {
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(dim, 1)), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t r = ix[i], b = bag[i];
      T acc = T(0);
      if (b >= 0 && r != padding_idx) {
        const T* __restrict gr = g + b * dim;
        const T* __restrict w = weight + r * dim;
        for (int64_t c = 0; c < dim; ++c) acc += gr[c] * w[c];
      }
      out[i] = acc;
    }
  });
}

}  // namespace ember::kernels::nn_embedding

#include "kernel_instances_nn_embedding.h"  // generated: Kernels<float>, Kernels<double>
