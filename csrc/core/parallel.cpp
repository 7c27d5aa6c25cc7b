#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#include "core/error.h"

namespace ember {
namespace {

thread_local bool t_in_parallel = false;

int default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::atomic<int> g_num_threads{default_threads()};
GilHooks g_gil_hooks;

// One job at a time; a caller that finds the pool busy runs its range alone.
class Pool {
 public:
  static Pool& get() {
    static auto* pool = new Pool();  // never destroyed: workers may outlive static teardown
    return *pool;
  }

  bool try_run(int64_t begin, int64_t end, int64_t grain, int threads,
               const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    ensure_workers(threads - 1);
    int64_t n = end - begin;
    int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      begin_ = begin;
      end_ = end;
      chunks_ = chunks;
      next_.store(0);
      pending_ = chunks;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    work();  // the caller works too
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  void ensure_workers(int wanted) {
    while (static_cast<int>(workers_.size()) < wanted)
      workers_.emplace_back([this] { loop(); }).detach();
  }

  // Takes chunks until none are left; returns when this thread can take no more.
  void work() {
    t_in_parallel = true;
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= chunks_) break;
      int64_t n = end_ - begin_;
      int64_t lo = begin_ + n * c / chunks_, hi = begin_ + n * (c + 1) / chunks_;
      try {
        (*fn_)(lo, hi);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_all();
    }
    t_in_parallel = false;
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen && fn_ != nullptr; });
        seen = generation_;
      }
      work();
    }
  }

  std::mutex run_mutex_, mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;  // detached; kept for the count
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t begin_ = 0, end_ = 0, chunks_ = 0, pending_ = 0;
  std::atomic<int64_t> next_{0};
  uint64_t generation_ = 0;
  std::exception_ptr error_;
};

}  // namespace

int get_num_threads() { return g_num_threads.load(std::memory_order_relaxed); }

void set_num_threads(int n) {
  EMBER_CHECK(n >= 1, Runtime, "set_num_threads(): expected a positive number of threads, got ", n);
  g_num_threads.store(n);
}

bool in_parallel_region() { return t_in_parallel; }

void parallel_run(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  int threads = get_num_threads();
  if (threads > 1 && Pool::get().try_run(begin, end, std::max<int64_t>(grain, 1), threads, fn)) return;
  fn(begin, end);
}

void set_gil_hooks(GilHooks hooks) { g_gil_hooks = hooks; }

LongWork::LongWork(int64_t elements) {
  if (elements >= kGilWork && g_gil_hooks.release) token_ = g_gil_hooks.release();
}

LongWork::~LongWork() {
  if (token_) g_gil_hooks.reacquire(token_);
}

}  // namespace ember
