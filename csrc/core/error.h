// ember's C++ errors. Each class maps to one Python exception type; the binding layer
// (csrc/python/errors.cpp) translates them, so the core never includes Python.h.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

enum class ErrorKind { Runtime, Index, Type, Value, NotImplemented, Overflow };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
inline void append(std::ostringstream&) {}
template <class T, class... Rest>
void append(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append(os, rest...);
}
}  // namespace detail

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  detail::append(os, args...);
  return os.str();
}

template <class... Args>
[[noreturn]] void fail(ErrorKind kind, const Args&... args) {
  throw Error(kind, str_cat(args...));
}

// Warnings (torch's TORCH_WARN): the binding layer installs a handler that raises a
// Python UserWarning, and may throw when warnings are errors; without one they are dropped.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);

}  // namespace ember

// EMBER_CHECK(cond, Kind, message parts...): throw ember::Error of that kind unless cond.
#define EMBER_CHECK(cond, kind, ...)                       \
  do {                                                     \
    if (__builtin_expect(!(cond), 0)) ::ember::fail(::ember::ErrorKind::kind, __VA_ARGS__); \
  } while (0)
