// Running long work without the GIL (ops/linalg.cpp, ops/nn_*.cpp).
#pragma once
#include <initializer_list>
#include <optional>
#include <vector>
#include "core/parallel.h"
#include "core/tensor.h"

namespace ember::ops {

// Long BLAS/LAPACK calls and kernels release the GIL; the storages they touch are pinned
// meanwhile (as LongLoop does for elementwise kernels, see kernels/loops.h).
class PinnedWork {
 public:
  PinnedWork(std::initializer_list<const Tensor*> tensors, int64_t work) {
    if (work >= kGilWork) {
      for (const Tensor* t : tensors) {
        if (!t->defined()) continue;
        storages_.push_back(t->storage());
        t->storage()->pin();
      }
    }
    work_.emplace(work);
  }
  ~PinnedWork() {
    work_.reset();  // the GIL first, then the pins
    for (const Storage& s : storages_) s->unpin();
  }
  PinnedWork(const PinnedWork&) = delete;
  PinnedWork& operator=(const PinnedWork&) = delete;

 private:
  std::vector<Storage> storages_;
  std::optional<LongWork> work_;
};

}  // namespace ember::ops
