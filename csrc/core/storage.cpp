#include "core/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include "core/allocator.h"
#include "core/error.h"

namespace ember {
namespace {
std::atomic<int64_t> g_live_storages{0};  // for the leak tests (_C._live_objects)
}  // namespace

int64_t live_storage_impls() { return g_live_storages.load(std::memory_order_relaxed); }

StorageImpl::StorageImpl(size_t nbytes) : data_(alloc_bytes(nbytes)), nbytes_(nbytes) {
  g_live_storages.fetch_add(1, std::memory_order_relaxed);
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Deleter deleter, void* context)
    : data_(data), nbytes_(nbytes), deleter_(deleter), context_(context) {
  g_live_storages.fetch_add(1, std::memory_order_relaxed);
}

StorageImpl::~StorageImpl() {
  g_live_storages.fetch_sub(1, std::memory_order_relaxed);
  if (deleter_) deleter_(context_, data_, nbytes_);
  else free_bytes(data_, nbytes_);
}

void StorageImpl::resize(size_t nbytes) {
  EMBER_CHECK(resizable(), Runtime,
              "Trying to resize storage that is not resizable (its memory is shared with another "
              "object, such as a numpy array, a mapped file or a storage slice)");
  EMBER_CHECK(pins_.load(std::memory_order_acquire) == 0, Runtime,
              "resize_(): the storage is in use by an operation running in another thread");
  if (nbytes == nbytes_) return;
  void* fresh = alloc_bytes(nbytes);
  size_t common = nbytes < nbytes_ ? nbytes : nbytes_;
  if (common) std::memcpy(fresh, data_, common);
  free_bytes(data_, nbytes_);
  data_ = fresh;
  nbytes_ = nbytes;
}

namespace {
void unmap(void*, void* data, size_t nbytes) {
  if (nbytes) munmap(data, nbytes);
}
}  // namespace

namespace {
// The context of a shared storage's deleter: the memory file, and the storage's former
// memory when a raw pointer into it escaped (numpy, DLPack): freed with the storage rather
// than at the move, so that pointer stays valid (it no longer sees the storage's writes).
struct SharedMemory {
  int fd;
  void* kept = nullptr;
  size_t kept_nbytes = 0;
};

void unmap_shared(void* context, void* data, size_t nbytes) {
  auto* shm = static_cast<SharedMemory*>(context);
  if (nbytes) munmap(data, nbytes);
  if (shm->fd >= 0) close(shm->fd);
  if (shm->kept) free_bytes(shm->kept, shm->kept_nbytes);
  delete shm;
}

void* map_fd(int fd, size_t nbytes, const char* what) {
  void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    fail(ErrorKind::Runtime, what, ": cannot map ", nbytes, " bytes of shared memory: ", std::strerror(err));
  }
  return p;
}
}  // namespace

int StorageImpl::shared_fd() const {
  return shared_ && context_ ? static_cast<SharedMemory*>(context_)->fd : -1;
}

void StorageImpl::share_memory() {
  if (shared_) return;
  EMBER_CHECK(pins_.load(std::memory_order_acquire) == 0, Runtime,
              "share_memory_(): the storage is in use by an operation running in another thread");
  if (nbytes_ == 0) {  // nothing to map (mmap refuses 0 bytes): shared with no file, as in torch
    if (deleter_) deleter_(context_, data_, nbytes_);
    else free_bytes(data_, nbytes_);
    data_ = nullptr;
    deleter_ = &unmap_shared;
    context_ = new SharedMemory{-1};
    shared_ = true;
    return;
  }
  int fd = memfd_create("ember-shm", MFD_CLOEXEC);
  EMBER_CHECK(fd >= 0, Runtime, "share_memory_(): memfd_create failed: ", std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(nbytes_)) != 0) {
    int err = errno;
    close(fd);
    fail(ErrorKind::Runtime, "share_memory_(): cannot size shared memory to ", nbytes_, " bytes: ",
         std::strerror(err));
  }
  void* p = map_fd(fd, nbytes_, "share_memory_()");
  std::memcpy(p, data_, nbytes_);
  auto* shm = new SharedMemory{fd};
  if (deleter_) deleter_(context_, data_, nbytes_);  // external memory: its owner lets go
  else if (!resizable_) shm->kept = data_, shm->kept_nbytes = nbytes_;
  else free_bytes(data_, nbytes_);
  data_ = p;
  deleter_ = &unmap_shared;
  context_ = shm;
  shared_ = true;
}

Storage map_shared_fd(int fd, size_t nbytes) {
  if (nbytes == 0) {
    Storage s = make_ref<StorageImpl>(nullptr, 0, &unmap_shared, new SharedMemory{-1});
    s->shared_ = true;
    return s;
  }
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  EMBER_CHECK(own >= 0, Runtime, "_new_shared_fd_cpu(): cannot duplicate file descriptor ", fd, ": ",
              std::strerror(errno));
  struct stat st;
  if (fstat(own, &st) != 0 || static_cast<size_t>(st.st_size) < nbytes) {
    close(own);
    fail(ErrorKind::Runtime, "_new_shared_fd_cpu(): file descriptor ", fd, " does not hold ", nbytes,
         " bytes of shared memory");
  }
  void* p = map_fd(own, nbytes, "_new_shared_fd_cpu()");
  Storage s = make_ref<StorageImpl>(p, nbytes, &unmap_shared, new SharedMemory{own});
  s->shared_ = true;
  return s;
}

Storage map_file(const char* filename, bool shared, size_t nbytes) {
  int fd = open(filename, shared ? O_RDWR | O_CREAT : O_RDONLY, 0644);
  EMBER_CHECK(fd >= 0, Runtime, "from_file(): cannot open '", filename, "': ", std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    fail(ErrorKind::Runtime, "from_file(): cannot stat '", filename, "'");
  }
  size_t file_bytes = static_cast<size_t>(st.st_size);
  if (file_bytes < nbytes) {
    if (!shared) {
      close(fd);
      fail(ErrorKind::Runtime, "from_file(): file '", filename, "' has ", file_bytes,
           " bytes, fewer than the ", nbytes, " requested");
    }
    if (ftruncate(fd, static_cast<off_t>(nbytes)) != 0) {
      close(fd);
      fail(ErrorKind::Runtime, "from_file(): cannot extend '", filename, "' to ", nbytes, " bytes");
    }
  }
  void* p = nullptr;
  if (nbytes > 0) {
    p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      close(fd);
      fail(ErrorKind::Runtime, "from_file(): cannot map '", filename, "': ", std::strerror(errno));
    }
  }
  close(fd);  // the mapping keeps the file
  return make_ref<StorageImpl>(p, nbytes, &unmap, nullptr);
}

}  // namespace ember
