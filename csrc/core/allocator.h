// Host memory for storages: 64-byte aligned (blocks of at most 64 bytes: malloc's 16);
// large blocks are 2 MiB aligned and advised to use huge pages; recently freed blocks
// from 64 KiB up are kept for reuse, because the page faults of a fresh block cost more
// than the work done in it (DESIGN.md, Memory).
#pragma once
#include <cstddef>

namespace ember {

void* alloc_bytes(size_t nbytes);      // throws RuntimeError when memory is exhausted
void free_bytes(void* p, size_t nbytes);
void release_cached_blocks();          // return the cached blocks to the system

}  // namespace ember
