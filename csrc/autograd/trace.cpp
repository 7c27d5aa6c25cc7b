// The trace sink. See Note [The trace hook].
#include <mutex>
#include <thread>
#include "autograd/trace.h"

namespace ember::trace {

static std::atomic<Sink> g_sink{nullptr};
// The thread that started the trace: calls on other threads (a data loader's, say) are
// not part of the traced forward and are not reported.
static std::thread::id g_thread;
static std::mutex g_thread_mutex;

void set_sink(Sink sink) {
  {
    std::lock_guard<std::mutex> lock(g_thread_mutex);
    g_thread = std::this_thread::get_id();
  }
  g_sink.store(sink);
  hooks::set(hooks::kTrace, sink != nullptr);
}

void report(const char* op, const char* names, std::vector<Arg>&& args, std::vector<Tensor>&& outputs, bool inplace) {
  {
    std::lock_guard<std::mutex> lock(g_thread_mutex);
    if (std::this_thread::get_id() != g_thread) return;
  }
  if (Sink sink = g_sink.load()) sink(op, names, args, outputs, inplace);
}

}  // namespace ember::trace
