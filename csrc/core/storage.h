// StorageImpl: a flat block of bytes that tensors view. Owned memory comes from the
// allocator and can be resized; external memory (a numpy array, a mapped file) is
// released through its deleter and cannot be resized.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include "core/device.h"
#include "core/refcount.h"

namespace ember {

class StorageImpl;
Ref<StorageImpl> map_shared_fd(int fd, size_t nbytes);

class StorageImpl : public RefCounted {
 public:
  using Deleter = void (*)(void* context, void* data, size_t nbytes);

  explicit StorageImpl(size_t nbytes);  // owned, uninitialized, on the CPU
  StorageImpl(size_t nbytes, Device device);  // owned by that device's allocator
  StorageImpl(void* data, size_t nbytes, Deleter deleter, void* context);
  ~StorageImpl() override;

  // The bytes, for the CPU's kernels and the binding layer: a storage on another device
  // raises NotImplementedError instead of handing out memory the host cannot read (meta
  // has none), so no path that reads data can crash on a device tensor.
  char* data() const {
    if (device_.type != DeviceType::CPU) [[unlikely]] fail_no_host_data();
    return static_cast<char*>(data_);
  }
  // The device's own pointer (a GPU address; nullptr on meta): for device kernels.
  char* device_data() const { return static_cast<char*>(data_); }
  Device device() const { return device_; }
  size_t nbytes() const { return nbytes_; }
  bool resizable() const { return deleter_ == nullptr && resizable_; }
  // Once a raw pointer into the storage leaves ember (numpy, a storage slice), it must
  // not move: set_resizable(false).
  void set_resizable(bool r) { resizable_ = r; }
  // Reallocates (keeping the common prefix); throws for external memory.
  void resize(size_t nbytes);

  // Note [Shared storages]
  // share_memory() moves the bytes into an anonymous memory file (memfd) mapped
  // MAP_SHARED, in place: the same StorageImpl adopts the mapping, so every tensor viewing
  // it stays valid. The storage keeps the file's descriptor (closed with the mapping) so it
  // can hand it to another process (ember.multiprocessing sends a dup of it), which maps
  // the same pages with map_shared_fd. Nothing is left in /dev/shm: the memory goes when
  // the last mapping and descriptor go. A shared storage cannot be resized (its deleter is
  // the unmap). An empty storage is marked shared with no file (fd -1), as in torch.
  void share_memory();
  bool is_shared() const { return shared_; }
  int shared_fd() const;  // -1 for an empty shared storage

  // Note [The version counter lives on the storage]
  // Every in-place write bumps the version of the storage it writes; all views of a
  // storage share it, so autograd can tell when a saved tensor was overwritten, and
  // nothing is allocated per tensor for it.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }

  // Kernels that run without the GIL pin the storages they touch; resize() refuses a
  // pinned storage, so another Python thread cannot free memory a kernel is using.
  void pin() { pins_.fetch_add(1, std::memory_order_acq_rel); }
  void unpin() { pins_.fetch_sub(1, std::memory_order_acq_rel); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // For a storage no one else can see yet (a fresh result, filled in place by the op
  // that made it): torch's fresh tensors start at version 0. See Note [Fresh results
  // start at version 0] in csrc/python/tensor.cpp.
  void reset_version() { version_.store(0, std::memory_order_relaxed); }

  // The Python object wrapping this storage, if one exists (not owned): see
  // Note [One Python object per native object] in csrc/python/objects.h.
  void* pyobj = nullptr;
  // Made in inference mode: its tensors are inference tensors (is_inference()), which
  // autograd refuses outside that mode. Set by the Python face on fresh results.
  bool inference = false;

 private:
  friend Ref<StorageImpl> map_shared_fd(int fd, size_t nbytes);
  [[noreturn, gnu::cold]] void fail_no_host_data() const;
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Deleter deleter_ = nullptr;
  void* context_ = nullptr;
  Device device_;
  bool resizable_ = true;
  bool shared_ = false;
  std::atomic<uint32_t> version_{0};
  std::atomic<int> pins_{0};
};

using Storage = Ref<StorageImpl>;

// The number of StorageImpls alive in the process (a leak test's probe).
int64_t live_storage_impls();

// Maps a file: shared mappings write through to the file (growing it to nbytes when it
// is shorter); private ones are copy-on-write and need the file to be long enough.
Storage map_file(const char* filename, bool shared, size_t nbytes);

// Maps nbytes of a shared memory file received from another process. The storage owns a
// dup of fd (the caller keeps and closes its own), so it can be passed on again.
Storage map_shared_fd(int fd, size_t nbytes);

}  // namespace ember
