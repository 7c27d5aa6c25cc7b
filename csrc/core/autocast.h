// Autocast's state (torch's autocast): per device type an enabled flag and a dtype, the
// cache flag, the count of active blocks. Thread-local as torch's: a block in one thread
// casts nothing in another. The casts themselves are the binding layer's
// (python/autocast.h): the generated wrappers of ops declared with `autocast:` read
// t_autocast.enabled[kAutocastCpu] once per call and cast nothing while it is false.
#pragma once
#include "core/dtype.h"

namespace ember {

// Device types in ember/amp/autocast_mode.py's _DEVICE_TYPES order; cpu is first.
inline constexpr int kAutocastDeviceTypes = 20;
inline constexpr int kAutocastCpu = 0;

struct AutocastState {
  bool enabled[kAutocastDeviceTypes] = {};
  // torch's defaults: bfloat16 for cpu, hpu, xla, maia (indices 0, 17, 12, 11); float16 elsewhere.
  ScalarType dtype[kAutocastDeviceTypes] = {
      ScalarType::BFloat16, ScalarType::Float16, ScalarType::Float16, ScalarType::Float16, ScalarType::Float16,
      ScalarType::Float16, ScalarType::Float16, ScalarType::Float16, ScalarType::Float16, ScalarType::Float16,
      ScalarType::Float16, ScalarType::BFloat16, ScalarType::BFloat16, ScalarType::Float16, ScalarType::Float16,
      ScalarType::Float16, ScalarType::Float16, ScalarType::BFloat16, ScalarType::Float16, ScalarType::Float16};
  bool cache_enabled = true;
  int nesting = 0;
};

inline thread_local AutocastState t_autocast [[gnu::tls_model("initial-exec")]];

}  // namespace ember
