// Tracing: the generated API layer (api_<family>.cpp) reports each op call to a sink
// while a trace runs; ember.onnx's exporter is the one sink. See Note [The trace hook].
#pragma once
#include <atomic>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>
#include "autograd/hooks.h"
#include "core/generator.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace ember::trace {

// Note [The trace hook]
// Every generated api:: function that takes and returns tensors starts with
// `if (hooks::any()) return hooked_<op>(...)`: one relaxed load of a global (shared with
// forward-mode AD, autograd/hooks.h) and a branch predicted not taken, so an untraced
// call pays next to nothing (benchmarks in DESIGN.md). While a trace runs, hooked_<op> runs the op as usual (recording autograd when asked) inside a
// Scope and, for the outermost traced call only, reports the op's schema name, argument
// names, arguments and outputs to the sink: an op that calls api:: itself (a composite,
// a backward formula) reports once, as itself. The flag is process-wide; the depth is
// per thread, and only the thread that started the trace reports.

inline bool active() { return hooks::on(hooks::kTrace); }

// One argument as the sink sees it: none (an undefined tensor, an absent optional, a
// generator), a tensor, a tensor list, a number, an int list, a string, a dtype or a
// memory format.
using Arg = std::variant<std::monostate, Tensor, std::vector<Tensor>, Scalar, std::vector<int64_t>, int64_t, double,
                         bool, std::string, ScalarType, MemoryFormat>;

// op: the schema name ("add.Tensor"); names: the argument names, comma-separated;
// inplace: whether outputs[0] is an argument overwritten (in-place or out=).
using Sink = void (*)(const char* op, const char* names, std::vector<Arg>& args, std::vector<Tensor>& outputs,
                      bool inplace);
// Sets the sink and turns tracing on; nullptr turns it off.
void set_sink(Sink sink);

// The depth of traced calls on this thread: only a call at depth 0 reports.
class Scope {
 public:
  Scope() : outermost_(depth_++ == 0) {}
  ~Scope() { --depth_; }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  bool outermost() const { return outermost_; }

 private:
  static inline thread_local int depth_ = 0;
  bool outermost_;
};

inline Arg arg(const Tensor& t) { return t.defined() ? Arg(t) : Arg(); }
inline Arg arg(const std::vector<Tensor>& ts) { return Arg(ts); }
inline Arg arg(const Scalar& s) { return Arg(s); }
inline Arg arg(IntList l) { return Arg(std::vector<int64_t>(l.begin(), l.end())); }
inline Arg arg(int64_t v) { return Arg(v); }
inline Arg arg(double v) { return Arg(v); }
inline Arg arg(bool v) { return Arg(v); }
inline Arg arg(const std::string& s) { return Arg(s); }
inline Arg arg(ScalarType t) { return Arg(t); }
inline Arg arg(MemoryFormat f) { return Arg(f); }
inline Arg arg(GeneratorImpl*) { return Arg(); }
template <class T>
Arg arg(const std::optional<T>& o) {
  return o ? arg(*o) : Arg();
}

inline std::vector<Tensor> outputs(const Tensor& t) { return {t}; }
inline std::vector<Tensor> outputs(const std::vector<Tensor>& ts) { return ts; }
template <class... T>
std::vector<Tensor> outputs(const std::tuple<T...>& t) {
  return std::apply([](const auto&... x) { return std::vector<Tensor>{x...}; }, t);
}

// Hands one call to the sink (a no-op when tracing stopped meanwhile).
void report(const char* op, const char* names, std::vector<Arg>&& args, std::vector<Tensor>&& outputs, bool inplace);

}  // namespace ember::trace
