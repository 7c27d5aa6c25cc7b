// The hooks of the generated API layer: one process-wide word whose bits say which of
// the slow paths of an api:: call is on, so that a call with none of them pays one
// relaxed load and a branch (see Note [The trace hook] and Note [Forward-mode AD]).
#pragma once
#include <atomic>
#include <cstdint>

namespace ember::hooks {

enum : uint32_t {
  kTrace = 1,      // a trace runs (ember.onnx)
  kForwardAD = 2,  // a dual level is entered (ember.autograd.forward_ad)
};
inline std::atomic<uint32_t> g_hooks{0};
inline bool any() { return g_hooks.load(std::memory_order_relaxed) != 0; }
inline bool on(uint32_t bit) { return (g_hooks.load(std::memory_order_relaxed) & bit) != 0; }
inline void set(uint32_t bit, bool value) {
  if (value) g_hooks.fetch_or(bit);
  else g_hooks.fetch_and(~bit);
}

}  // namespace ember::hooks
