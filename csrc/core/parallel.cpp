#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <pthread.h>
#include <vector>
#include "core/error.h"

namespace ember {
namespace {

thread_local bool t_in_parallel = false;

// OMP_NUM_THREADS, when set to a positive number, as torch reads it: launchers (torchrun,
// ember.distributed.run) set it to 1 for several workers on one machine, which would
// otherwise each start a worker per core.
int default_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return static_cast<int>(v < 1024 ? v : 1024);
  }
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::atomic<int> g_num_threads{default_threads()};
GilHooks g_gil_hooks;

// One job at a time; a caller that finds the pool busy runs its range alone.
//
// Note [Claiming chunks]
// A job is a generation number plus its range, cut into a few chunks per thread. `next_`
// packs the generation (high 32 bits) with the next chunk to hand out (low 32 bits), and
// a thread claims a chunk only with a compare-and-swap that still sees its own
// generation. A worker that wakes late, after its job ended and the next began, therefore
// claims nothing of the new job from the old job's copy of the fields. Several chunks per
// thread let the caller take over the share of a worker that starts late.
//
// Note [Spinning briefly]
// Waking a sleeping thread costs tens of microseconds on a virtual machine (the idle vCPU
// has halted and needs an interrupt through the hypervisor): an add of 1M floats took
// 147 us on two threads against 88 us on one. So a worker that finishes a job polls for
// the next one for kSpin before it sleeps on the condition variable, and the caller polls
// for the workers' last chunks the same way. The bound is what keeps a busy neighbour
// process safe (DESIGN.md, Threads): between bursts of ops the workers sleep, unlike
// OpenMP's pools, which spin for milliseconds and slow 10-100x when a core is taken.
//
// Note [The pool after fork]
// A child process created by fork() has only the thread that forked: the pool's workers
// are gone, and its mutexes may be held forever by threads that no longer exist (a
// DataLoader worker forked while another thread ran a parallel op). The child therefore
// starts from a fresh pool; the old one is leaked, since destroying a mutex another
// thread held is undefined.
constexpr int kChunksPerThread = 4;
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls done() for at most kSpin; whether it became true.
template <class Done>
bool spin_until(Done&& done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

class Pool {
 public:
  static Pool& get() {
    static const bool once = [] {
      current_ = new Pool();  // never destroyed: workers may outlive static teardown
      pthread_atfork(nullptr, nullptr, [] { current_ = new Pool(); });
      return true;
    }();
    (void)once;
    return *current_;
  }

  bool try_run(int64_t begin, int64_t end, int64_t grain, int threads,
               const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    ensure_workers(threads - 1);
    const int64_t pieces = (end - begin + grain - 1) / grain;
    Job job{&fn, begin, end, std::min<int64_t>(int64_t(threads) * kChunksPerThread, pieces), 0};
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job.generation = ++generation_;
      job_ = job;
      pending_.store(job.chunks);
      error_ = nullptr;
      next_.store(job.generation << 32);
      posted_.store(job.generation, std::memory_order_release);
      wake = sleepers_ > 0;
    }
    if (wake) wake_.notify_all();
    work(job);  // the caller works too
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return pending_.load() == 0; });
    }
    std::lock_guard<std::mutex> lock(mutex_);
    job_.fn = nullptr;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn;
    int64_t begin, end, chunks;
    uint64_t generation;
  };

  void ensure_workers(int wanted) {
    while (static_cast<int>(workers_.size()) < wanted)
      workers_.emplace_back([this] { loop(); }).detach();
  }

  // Claims chunk indices of `job` until none are left (see Note [Claiming chunks]).
  bool claim(const Job& job, int64_t* chunk) {
    uint64_t v = next_.load();
    for (;;) {
      if ((v >> 32) != (job.generation & 0xffffffffu) || static_cast<int64_t>(v & 0xffffffffu) >= job.chunks)
        return false;
      if (next_.compare_exchange_weak(v, v + 1)) {
        *chunk = static_cast<int64_t>(v & 0xffffffffu);
        return true;
      }
    }
  }

  void work(const Job& job) {
    t_in_parallel = true;
    int64_t c;
    while (claim(job, &c)) {
      const int64_t n = job.end - job.begin;
      const int64_t lo = job.begin + n * c / job.chunks, hi = job.begin + n * (c + 1) / job.chunks;
      try {
        (*job.fn)(lo, hi);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // the last chunk: the caller may have stopped polling and gone to sleep
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
    t_in_parallel = false;
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return posted_.load(std::memory_order_acquire) != seen; });
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, [&] { return generation_ != seen && job_.fn != nullptr; });
        --sleepers_;
        seen = generation_;
        job = job_;  // a copy: the fields may change once this job is over
      }
      work(job);
    }
  }

  std::mutex run_mutex_, mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;   // detached; kept for the count
  Job job_{nullptr, 0, 0, 0, 0};       // guarded by mutex_
  uint64_t generation_ = 0;            // guarded by mutex_
  int sleepers_ = 0;                   // workers waiting on wake_; guarded by mutex_
  std::atomic<uint64_t> posted_{0};    // generation_, readable without the mutex
  std::atomic<int64_t> pending_{0};    // chunks of the current job not yet finished
  std::atomic<uint64_t> next_{0};      // generation << 32 | next chunk
  std::exception_ptr error_;           // guarded by mutex_
  static Pool* current_;  // replaced in a forked child: see Note [The pool after fork]
};

Pool* Pool::current_ = nullptr;

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
