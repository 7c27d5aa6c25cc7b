#include "core/error.h"

namespace ember {
namespace {
WarningHandler warning_handler = nullptr;
}  // namespace

void set_warning_handler(WarningHandler handler) { warning_handler = handler; }

void warn(const std::string& message) {
  if (warning_handler) warning_handler(message);
}

}  // namespace ember
