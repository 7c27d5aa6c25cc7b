#include "kernels/loops.h"
#include "kernels/map.h"

#include <algorithm>
#include <vector>

namespace ember::kernels {

void entry_not_compiled(const char* family, const char* entry, ScalarType dtype) {
  fail(ErrorKind::Runtime, "internal error: the ", family, " kernel '", entry, "' is not compiled for ",
       info(dtype).name, " (Note [Floating-only entries], kernels/map.h)");
}

Loop make_loop(const Tensor* const* tensors, int n, bool check_storage) {
  EMBER_CHECK(n <= kMaxOperands, Runtime, "too many operands for one loop: ", n);
  Loop loop;
  loop.nops = n;
  // A device without data (meta) runs no kernel: an empty loop, so every kernel built
  // on Loop is skipped there (Note [Kernels run where the data is], ops/internal.h).
  if (!runs_kernels()) return loop;
  const Tensor& first = *tensors[0];
  loop.numel = first.numel();
  int64_t ndim = first.dim();
  int64_t big = 0;
  for (int64_t s : first.sizes()) big += s != 1;
  EMBER_CHECK(big <= kMaxLoopDims, Runtime, "tensors with more than ", kMaxLoopDims,
              " dims of size other than 1 are not supported");
  for (int k = 0; k < n; ++k) {
    if (check_storage) check_bounds(*tensors[k]);  // its storage may have shrunk since it was made
    loop.data[k] = tensors[k]->data();
    loop.storages[k] = tensors[k]->storage().get();
  }

  // Order dims innermost-first by the operands' strides (the first decides; later ones
  // break ties), dropping dims of size 1.
  std::vector<int64_t> order_storage(ndim);
  int64_t* order = order_storage.data();
  int m = 0;
  for (int64_t d = ndim - 1; d >= 0; --d)
    if (first.sizes()[d] != 1) order[m++] = d;
  std::stable_sort(order, order + m, [&](int64_t a, int64_t b) {
    for (int k = 0; k < n; ++k) {
      int64_t sa = tensors[k]->strides()[a], sb = tensors[k]->strides()[b];
      if (sa == 0 || sb == 0) continue;  // a broadcast dim says nothing about order
      if (sa != sb) return sa < sb;
    }
    return false;
  });

  // Merge dim j into the current run when every operand steps across it seamlessly.
  int out = -1;
  for (int i = 0; i < m; ++i) {
    int64_t d = order[i], size = first.sizes()[d];
    bool merge = out >= 0;
    for (int k = 0; merge && k < n; ++k) {
      int64_t s = tensors[k]->strides()[d] * tensors[k]->itemsize();
      merge = s == loop.strides[out][k] * loop.shape[out];
    }
    if (merge) {
      loop.shape[out] *= size;
    } else {
      ++out;
      loop.shape[out] = size;
      for (int k = 0; k < n; ++k) loop.strides[out][k] = tensors[k]->strides()[d] * tensors[k]->itemsize();
    }
  }
  loop.ndim = out + 1;
  if (loop.ndim == 0) {
    for (int k = 0; k < n; ++k) loop.strides[0][k] = tensors[k]->itemsize();
  }
  return loop;
}

}  // namespace ember::kernels
