// The precompiled header (setup.py, "precompiled_header"): what nearly every translation
// unit parses, compiled once per build and loaded by each unit with -include. Parsing these
// took about 1.7 s of every unit's compile (160 units: a third of a clean build); loading
// them precompiled takes about 0.2 s. Only the standard library and core/ belong here: a
// change to any header listed rebuilds every unit, so the often-edited kernel headers
// (kernels/map.h, the _impl.h files) and the generated ones stay out. Sources still include
// what they use; the sanitizer build compiles without this header, which checks that.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>
#include "core/dims.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/generator.h"
#include "core/parallel.h"
#include "core/scalar.h"
#include "core/storage.h"
#include "core/tensor.h"
