// Note [The CUDA caching allocator]
// cudaMalloc is slow and cudaFree synchronizes the device, so a freed block is not given
// back to CUDA: it goes to its device's pool, keyed by its rounded size, and the next
// request of that size takes it. Sizes round up to 512 bytes below 1 MiB and to 2 MiB
// from there, so that nearby sizes share blocks. cudaFree runs only in empty_cache() and
// when cudaMalloc fails: the device's cached blocks are released and cudaMalloc is tried
// once more before the request fails with torch's "CUDA out of memory" message.
// Every kernel and copy runs on the legacy default stream, which orders a block's last use
// before its next owner's first, so a block is reusable as soon as it is freed. This is
// the skeleton: blocks are neither split nor merged, and streams are not tracked (the
// devices work, part 2, adds them with the kernels that need them).
#include "cuda/allocator.cuh"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/device.cuh"

namespace ember::cuda {
namespace {

constexpr size_t kSmallRound = 512;
constexpr size_t kSmallLimit = size_t(1) << 20;  // requests below 1 MiB round to 512 bytes
constexpr size_t kLargeRound = size_t(2) << 20;  // the others to 2 MiB

struct Pool {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> cached;  // rounded size -> freed blocks
  std::unordered_map<void*, size_t> live;                 // block handed out -> its size
  MemoryStats stats;

  void add_allocated(size_t size) {
    stats.allocated += size;
    if (stats.allocated > stats.peak_allocated) stats.peak_allocated = stats.allocated;
  }
  void add_reserved(size_t size) {
    stats.reserved += size;
    if (stats.reserved > stats.peak_reserved) stats.peak_reserved = stats.reserved;
  }
};

Pool& pool(int device) {
  // Never destroyed: storages may still be freed while the process exits.
  static Pool* pools = new Pool[kMaxDevices];
  return pools[device];
}

size_t round_size(size_t nbytes) {
  size_t quantum = nbytes < kSmallLimit ? kSmallRound : kLargeRound;
  return (nbytes + quantum - 1) / quantum * quantum;
}

// torch's format: bytes up to 1 KiB, then KiB, MiB, GiB with two decimals.
std::string format_size(size_t n) {
  char text[64];
  if (n <= 1024) {
    std::snprintf(text, sizeof text, "%zu bytes", n);
  } else if (n <= (size_t(1) << 20)) {
    std::snprintf(text, sizeof text, "%.2f KiB", n / 1024.0);
  } else if (n <= (size_t(1) << 30)) {
    std::snprintf(text, sizeof text, "%.2f MiB", n / 1048576.0);
  } else {
    std::snprintf(text, sizeof text, "%.2f GiB", n / 1073741824.0);
  }
  return text;
}

// The current device is `device`. Frees its pool's cached blocks.
void release_cached(int device) {
  Pool& p = pool(device);
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (auto& [size, list] : p.cached) {
      blocks.insert(blocks.end(), list.begin(), list.end());
      p.stats.reserved -= size * list.size();
    }
    p.cached.clear();
  }
  for (void* block : blocks) {
    if (cudaFree(block) != cudaSuccess) cudaGetLastError();
  }
}

int out_of_memory(int device, size_t size) {
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
  MemoryStats stats = memory_stats(device);
  return device_error(kDeviceOutOfMemory,
                      "CUDA out of memory. Tried to allocate " + format_size(size) + ". GPU " +
                          std::to_string(device) + " has a total capacity of " + format_size(total_bytes) +
                          " of which " + format_size(free_bytes) + " is free. Of the allocated memory " +
                          format_size(stats.allocated) + " is allocated by ember, and " +
                          format_size(stats.reserved - stats.allocated) +
                          " is reserved by ember but unallocated.");
}

// Takes ptr out of a pool's live blocks and caches it; false when the pool does not hold it.
bool release_to(Pool& p, void* ptr) {
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.live.find(ptr);
  if (it == p.live.end()) return false;
  size_t size = it->second;
  p.live.erase(it);
  p.stats.allocated -= size;
  p.cached[size].push_back(ptr);
  return true;
}

}  // namespace

int cached_alloc(int index, size_t nbytes, void** out) {
  *out = nullptr;
  if (nbytes == 0) return kDeviceOk;
  DeviceGuard guard;
  if (cudaError_t err = guard.set(index); err != cudaSuccess) return cuda_error(err);
  int device = guard.index();
  if (device < 0 || device >= kMaxDevices)
    return device_error(kDeviceError, "ember supports CUDA devices 0 to " + std::to_string(kMaxDevices - 1));
  if (nbytes > SIZE_MAX - kLargeRound) return out_of_memory(device, nbytes);
  size_t size = round_size(nbytes);
  Pool& p = pool(device);
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.cached.find(size);
    if (it != p.cached.end() && !it->second.empty()) {
      void* block = it->second.back();
      it->second.pop_back();
      p.live.emplace(block, size);
      p.add_allocated(size);
      *out = block;
      return kDeviceOk;
    }
  }
  void* block = nullptr;
  cudaError_t err = cudaMalloc(&block, size);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    release_cached(device);
    err = cudaMalloc(&block, size);
  }
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return out_of_memory(device, size);
  }
  if (err != cudaSuccess) return cuda_error(err);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.live.emplace(block, size);
  p.add_reserved(size);
  p.add_allocated(size);
  *out = block;
  return kDeviceOk;
}

void cached_free(int index, void* ptr, size_t) {
  if (!ptr) return;
  int current = index;
  if (current < 0 && cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    current = -1;
  }
  if (current >= 0 && current < kMaxDevices && release_to(pool(current), ptr)) return;
  for (int device = 0; device < kMaxDevices; ++device) {
    if (device != current && release_to(pool(device), ptr)) return;
  }
}

void empty_cache() {
  int count = device_count();
  for (int device = 0; device < count && device < kMaxDevices; ++device) {
    {
      Pool& p = pool(device);
      std::lock_guard<std::mutex> lock(p.mutex);
      if (p.cached.empty()) continue;  // a device never used gets no context here
    }
    DeviceGuard guard;
    if (guard.set(device) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    release_cached(device);
  }
}

MemoryStats memory_stats(int device) {
  Pool& p = pool(device);
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.stats;
}

void reset_peak_memory_stats(int device) {
  Pool& p = pool(device);
  std::lock_guard<std::mutex> lock(p.mutex);
  p.stats.peak_allocated = p.stats.allocated;
  p.stats.peak_reserved = p.stats.reserved;
}

}  // namespace ember::cuda
