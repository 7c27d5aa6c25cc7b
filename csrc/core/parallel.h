// Intra-op parallelism: parallel_for splits [begin, end) across the pool only when the
// range is larger than the grain, so small tensors never pay for threads. Between jobs
// workers poll for 100 us, then sleep on a condition variable (DESIGN.md, Threads).
#pragma once
#include <cstdint>
#include <functional>

namespace ember {

int get_num_threads();
void set_num_threads(int n);  // RuntimeError for n < 1
bool in_parallel_region();

// Elementwise kernels split work in pieces of at least this many elements.
constexpr int64_t kGrainSize = 32768;

void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);

template <class F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& fn) {
  if (end - begin <= grain || in_parallel_region() || get_num_threads() == 1) {
    if (end > begin) fn(begin, end);
    return;
  }
  parallel_run(begin, end, grain, std::function<void(int64_t, int64_t)>(fn));
}

// Long work releases the Python GIL. The binding layer installs the hooks, so the core
// stays free of Python; work below kGilWork elements keeps the GIL (cheaper).
constexpr int64_t kGilWork = 65536;
struct GilHooks {
  void* (*release)() = nullptr;    // returns a token, or null when the GIL was not held
  void (*reacquire)(void*) = nullptr;
};
void set_gil_hooks(GilHooks hooks);

class LongWork {
 public:
  explicit LongWork(int64_t elements);
  ~LongWork();
  LongWork(const LongWork&) = delete;
  LongWork& operator=(const LongWork&) = delete;

 private:
  void* token_ = nullptr;
};

}  // namespace ember
