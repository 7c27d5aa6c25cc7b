// The trace sink. See Note [The trace hook].
#include "autograd/trace.h"

namespace ember::trace {

static std::atomic<Sink> g_sink{nullptr};

void set_sink(Sink sink) {
  g_sink.store(sink);
  g_active.store(sink != nullptr);
}

void report(const char* op, const char* names, std::vector<Arg>&& args, std::vector<Tensor>&& outputs, bool inplace) {
  if (Sink sink = g_sink.load()) sink(op, names, args, outputs, inplace);
}

}  // namespace ember::trace
