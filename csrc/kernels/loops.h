// The one strided iterator. A Loop holds N operands of one shape (callers broadcast
// first, with expand): dims are ordered by the first operand's strides (smallest
// innermost) and merged where every operand is contiguous across them, so most loops
// become one long 1-D run. run_loop() splits the elements across threads above a grain
// size and hands the kernel 1-D strided pieces: inner(ptrs, byte_strides, n).
#pragma once
#include <cstdint>
#include <optional>
#include "core/parallel.h"
#include "core/tensor.h"

namespace ember::kernels {

constexpr int kMaxOperands = 8;
constexpr int kMaxLoopDims = 64;

struct Loop {
  StorageImpl* storages[kMaxOperands];         // pinned while the loop runs without the GIL
  int nops = 0;
  int ndim = 0;                                // after merging; dim 0 is innermost
  int64_t numel = 0;
  int64_t shape[kMaxLoopDims];
  int64_t strides[kMaxLoopDims][kMaxOperands];  // bytes
  char* data[kMaxOperands];
};

// tensors[0] is usually the output; all must have the same sizes. Each operand is
// checked against its storage first, unless the caller did (check_storage = false).
Loop make_loop(const Tensor* const* tensors, int n, bool check_storage = true);
inline Loop make_loop(std::initializer_list<const Tensor*> tensors) {
  return make_loop(tensors.begin(), static_cast<int>(tensors.size()));
}

// Note [Scalar pointer steps]
// gcc vectorized the steps of the operands' pointers between rows (two or three pointers
// in one xmm register), so a row's kernel read pointers that had been stored 16 bytes at a
// time, or the next step loaded 16 bytes that had been stored 8 at a time: a failed store
// forward per row. Over 32K rows of 64 floats ((B, H, T, D).transpose(1, 2).contiguous())
// the stepping took more time than the copying. The empty asm keeps each step scalar:
// 1 thread, min of 30, that copy 0.70-0.84 -> 0.44-0.48 ms (torch 0.58); x[:, :8] + y of
// 65536x16 floats 0.92 -> 0.38 ms (torch 0.24); z[:, :, ::2].exp() of 64x64x64x16 4.6 ->
// 2.4 ms (torch 6.4).
inline void scalar_step(char*& p, int64_t by) {
  char* q = p + by;
  asm("" : "+r"(q));
  p = q;
}

// Calls inner(char** ptrs, const int64_t* strides, int64_t n) over elements [begin, end).
template <class Inner>
void loop_range(const Loop& loop, int64_t begin, int64_t end, Inner& inner) {
  const int nops = loop.nops;
  char* ptrs[kMaxOperands];
  int64_t idx[kMaxLoopDims];
  int64_t rem = begin;
  for (int k = 0; k < nops; ++k) ptrs[k] = loop.data[k];
  for (int d = 0; d < loop.ndim; ++d) {
    idx[d] = rem % loop.shape[d];
    rem /= loop.shape[d];
    for (int k = 0; k < nops; ++k) ptrs[k] += idx[d] * loop.strides[d][k];
  }
  if (loop.ndim == 0) {  // a single element
    if (begin < end) inner(ptrs, loop.strides[0], int64_t(1));
    return;
  }
  int64_t left = end - begin;
  while (left > 0) {
    int64_t n = loop.shape[0] - idx[0];
    if (n > left) n = left;
    inner(ptrs, loop.strides[0], n);
    left -= n;
    if (left == 0) break;
    // step to the start of the next row, carrying into outer dims (Note [Scalar pointer steps])
    for (int k = 0; k < nops; ++k) scalar_step(ptrs[k], -idx[0] * loop.strides[0][k]);
    idx[0] = 0;
    for (int d = 1; d < loop.ndim; ++d) {
      for (int k = 0; k < nops; ++k) scalar_step(ptrs[k], loop.strides[d][k]);
      if (++idx[d] < loop.shape[d]) break;
      for (int k = 0; k < nops; ++k) scalar_step(ptrs[k], -idx[d] * loop.strides[d][k]);
      idx[d] = 0;
    }
  }
}

// Long loops release the GIL; their storages are pinned meanwhile (StorageImpl::pin).
class LongLoop {
 public:
  explicit LongLoop(const Loop& loop) : loop_(loop), pinned_(loop.numel >= kGilWork) {
    if (pinned_)
      for (int k = 0; k < loop_.nops; ++k) loop_.storages[k]->pin();
    long_work_.emplace(loop.numel);
  }
  ~LongLoop() {
    long_work_.reset();  // the GIL first, then the pins
    if (pinned_)
      for (int k = 0; k < loop_.nops; ++k) loop_.storages[k]->unpin();
  }
  LongLoop(const LongLoop&) = delete;
  LongLoop& operator=(const LongLoop&) = delete;

 private:
  const Loop& loop_;
  bool pinned_;
  std::optional<LongWork> long_work_;
};

template <class Inner>
void run_loop(const Loop& loop, Inner&& inner, int64_t grain = kGrainSize) {
  LongLoop long_loop(loop);
  parallel_for(0, loop.numel, grain, [&](int64_t b, int64_t e) { loop_range(loop, b, e, inner); });
}

// Element access through a byte pointer.
template <class T>
inline T& at(char* p, int64_t stride, int64_t i) {
  return *reinterpret_cast<T*>(p + i * stride);
}

}  // namespace ember::kernels
