// The CUDA caching allocator: see Note [The CUDA caching allocator] in allocator.cu.
#pragma once
#include <cstddef>

namespace ember::cuda {

struct MemoryStats {
  size_t allocated = 0;  // bytes in blocks handed out (sizes rounded as the pool rounds them)
  size_t reserved = 0;   // bytes obtained from cudaMalloc: allocated plus cached
  size_t peak_allocated = 0;
  size_t peak_reserved = 0;
};

// DeviceInterface::alloc and ::free. index -1 is the current device; free finds a block
// given the wrong index (or -1) in the other devices' pools.
int cached_alloc(int index, size_t nbytes, void** out);
void cached_free(int index, void* ptr, size_t nbytes);

// Returns every device's cached (freed) blocks to CUDA.
void empty_cache();
// A device's counters (zero for a device never used); device must be in [0, kMaxDevices).
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);

}  // namespace ember::cuda
