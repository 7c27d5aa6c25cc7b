#include "core/allocator.h"

#include <sys/mman.h>
#include <cstdlib>
#include <mutex>
#include "core/error.h"

namespace ember {
namespace {

constexpr size_t kSmallBlock = 64;                // up to here: plain malloc (16-byte aligned)
constexpr size_t kLargeBlock = size_t(1) << 20;   // from here on: huge pages and the cache
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kCacheBytes = size_t(512) << 20;  // at most this much kept for reuse
constexpr int kCacheSlots = 64;  // a training step frees dozens of activations, then makes them again

struct Block {
  void* ptr = nullptr;
  size_t bytes = 0;  // rounded size actually allocated
};

struct LargeBlockCache {
  std::mutex mutex;
  Block slots[kCacheSlots];
  size_t total = 0;

  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    for (Block& b : slots) {
      if (b.ptr && b.bytes == bytes) {
        void* p = b.ptr;
        total -= b.bytes;
        b = Block{};
        return p;
      }
    }
    return nullptr;
  }
  bool give(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    if (total + bytes > kCacheBytes) return false;
    for (Block& b : slots) {
      if (!b.ptr) {
        b = Block{p, bytes};
        total += bytes;
        return true;
      }
    }
    return false;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    for (Block& b : slots) {
      std::free(b.ptr);
      b = Block{};
    }
    total = 0;
  }
};

LargeBlockCache& cache() {
  static auto* c = new LargeBlockCache();  // never destroyed: frees may come during exit
  return *c;
}

size_t round_large(size_t nbytes) { return (nbytes + kHugePage - 1) / kHugePage * kHugePage; }

[[noreturn]] void out_of_memory(size_t nbytes) {
  fail(ErrorKind::Runtime, "DefaultCPUAllocator: not enough memory: you tried to allocate ",
       nbytes, " bytes.");
}

}  // namespace

// Under AddressSanitizer every block is exactly its size and freed at once: the rounding
// slack of large blocks would hide overflows and the cache would hide uses after free.
#ifdef __SANITIZE_ADDRESS__
constexpr bool kExactBlocks = true;
#else
constexpr bool kExactBlocks = false;
#endif

void* alloc_bytes(size_t nbytes) {
  if (nbytes == 0) return nullptr;  // torch's empty storages have a null data_ptr()
  if (nbytes <= kSmallBlock && !kExactBlocks) {
    // malloc's 16-byte alignment serves every element type, and glibc's memalign pays
    // for splitting off (and later coalescing) the slack: tiny results (1-element ops,
    // scalars) allocate in about half the time this way
    void* p = std::malloc(nbytes);
    if (!p) out_of_memory(nbytes);
    return p;
  }
  if (nbytes < kLargeBlock || kExactBlocks) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, nbytes) != 0) out_of_memory(nbytes);
    return p;
  }
  size_t bytes = round_large(nbytes);
  if (bytes < nbytes) out_of_memory(nbytes);
  if (void* p = cache().take(bytes)) return p;
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) out_of_memory(nbytes);
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void free_bytes(void* p, size_t nbytes) {
  if (!p) return;
  if (nbytes >= kLargeBlock && !kExactBlocks && cache().give(p, round_large(nbytes))) return;
  std::free(p);
}

void release_cached_blocks() { cache().clear(); }

}  // namespace ember
