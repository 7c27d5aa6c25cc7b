#include "core/allocator.h"

#include <sys/mman.h>
#include <cstdlib>
#include <mutex>
#include "core/error.h"

namespace ember {
namespace {

constexpr size_t kSmallBlock = 64;                // up to here: plain malloc (16-byte aligned)
constexpr size_t kMidBlock = size_t(64) << 10;    // from here on: a cache of 16 KiB multiples
constexpr size_t kMidRound = size_t(16) << 10;
constexpr size_t kLargeBlock = size_t(1) << 20;   // from here on: huge pages and their cache
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kMidCacheBytes = size_t(64) << 20;  // at most this much of each kept for reuse
constexpr size_t kLargeCacheBytes = size_t(512) << 20;
constexpr int kCacheSlots = 128;  // a training step frees dozens of activations, then makes them again

struct Block {
  void* ptr = nullptr;
  size_t bytes = 0;  // rounded size actually allocated
};

// Freed blocks kept by their rounded size, up to `capacity` bytes, for an allocation of
// exactly that size (a linear scan: 128 slots cost less than one page fault).
struct BlockCache {
  explicit BlockCache(size_t capacity) : capacity(capacity) {}
  const size_t capacity;
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
    if (total + bytes > capacity) return false;
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

// Never destroyed: frees may come during exit.
BlockCache& mid_cache() {
  static auto* c = new BlockCache(kMidCacheBytes);
  return *c;
}
BlockCache& large_cache() {
  static auto* c = new BlockCache(kLargeCacheBytes);
  return *c;
}

size_t round_up(size_t nbytes, size_t unit) { return (nbytes + unit - 1) / unit * unit; }

[[noreturn]] void out_of_memory(size_t nbytes) {
  fail(ErrorKind::Runtime, "DefaultCPUAllocator: not enough memory: you tried to allocate ",
       nbytes, " bytes.");
}

}  // namespace

// Note [Mid-size blocks are cached]
// glibc serves a block between its mmap threshold (128 KiB, raised to the largest block
// freed so far) and 1 MiB either by mmap or from the heap's top, which it trims back to
// the system once 2 thresholds are free there: a loop of ops on activations of a few
// hundred KiB either way gets fresh pages, and each 4 KiB page faults in zeroed (a
// 512 KiB result: 128 faults, more time than the op's work). Freed blocks from 64 KiB up,
// rounded to 16 KiB, are kept (64 MiB at most) for the next allocation of their size:
// makemore's tanh GELU forward, eight ops on 32x16x256 floats, went from 1.45 ms to
// 0.35 ms, one thread, best of 300 (torch, which has the same problem, 1.6-1.8 ms).
//
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
  if (nbytes < kMidBlock || kExactBlocks) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, nbytes) != 0) out_of_memory(nbytes);
    return p;
  }
  if (nbytes < kLargeBlock) {
    // See Note [Mid-size blocks are cached]
    const size_t bytes = round_up(nbytes, kMidRound);
    if (void* p = mid_cache().take(bytes)) return p;
    void* p = nullptr;
    if (posix_memalign(&p, 64, bytes) != 0) out_of_memory(nbytes);
    return p;
  }
  size_t bytes = round_up(nbytes, kHugePage);
  if (bytes < nbytes) out_of_memory(nbytes);
  if (void* p = large_cache().take(bytes)) return p;
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) out_of_memory(nbytes);
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void free_bytes(void* p, size_t nbytes) {
  if (!p) return;
  if (!kExactBlocks) {
    if (nbytes >= kLargeBlock && large_cache().give(p, round_up(nbytes, kHugePage))) return;
    if (nbytes >= kMidBlock && nbytes < kLargeBlock && mid_cache().give(p, round_up(nbytes, kMidRound))) return;
  }
  std::free(p);
}

void release_cached_blocks() {
  mid_cache().clear();
  large_cache().clear();
}

}  // namespace ember
