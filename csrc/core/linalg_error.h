// linalg's error for a matrix the algorithm cannot handle (singular, not positive
// definite, no convergence): Python sees ember.linalg.LinAlgError, a RuntimeError
// subclass, as torch.linalg.LinAlgError. Shape and dtype errors stay plain Errors.
#pragma once
#include "core/error.h"

namespace ember {

class LinAlgError : public Error {
 public:
  explicit LinAlgError(const std::string& msg) : Error(ErrorKind::Runtime, msg) {}
};

}  // namespace ember
