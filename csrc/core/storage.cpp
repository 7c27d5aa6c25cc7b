#include "core/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
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

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  if (device.is_cpu()) {
    data_ = alloc_bytes(nbytes);
  } else {
    const DeviceInterface& dev = require_device(device.type);
    check_device_status(dev, dev.alloc(device.index, nbytes, &data_), "allocating memory");
  }
  g_live_storages.fetch_add(1, std::memory_order_relaxed);
}

void StorageImpl::fail_no_host_data() const {
  if (device_.type == DeviceType::Meta)
    fail(ErrorKind::NotImplemented, "Cannot copy out of meta tensor; no data! (this operation reads the "
         "data of a tensor on the meta device, which has none)");
  fail(ErrorKind::Runtime, "this operation reads the data of a tensor on device ", device_str(device_),
       " from the host; copy it to the CPU first (.cpu())");
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Deleter deleter, void* context)
    : data_(data), nbytes_(nbytes), deleter_(deleter), context_(context) {
  g_live_storages.fetch_add(1, std::memory_order_relaxed);
}

StorageImpl::~StorageImpl() {
  g_live_storages.fetch_sub(1, std::memory_order_relaxed);
  if (deleter_) deleter_(context_, data_, nbytes_);
  else if (device_.is_cpu()) free_bytes(data_, nbytes_);
  else device_interface(device_.type)->free(device_.index, data_, nbytes_);
}

void StorageImpl::resize(size_t nbytes) {
  EMBER_CHECK(resizable(), Runtime,
              "Trying to resize storage that is not resizable (its memory is shared with another "
              "object, such as a numpy array, a mapped file or a storage slice)");
  EMBER_CHECK(pins_.load(std::memory_order_acquire) == 0, Runtime,
              "resize_(): the storage is in use by an operation running in another thread");
  if (nbytes == nbytes_) return;
  if (!device_.is_cpu()) {
    const DeviceInterface& dev = require_device(device_.type);
    void* fresh = nullptr;
    check_device_status(dev, dev.alloc(device_.index, nbytes, &fresh), "allocating memory");
    size_t common = nbytes < nbytes_ ? nbytes : nbytes_;
    if (common && dev.has_data) {
      int status = dev.copy_bytes(device_.index, fresh, data_, common, kDeviceToDevice);
      if (status != kDeviceOk) dev.free(device_.index, fresh, nbytes);
      check_device_status(dev, status, "resize_");
    }
    dev.free(device_.index, data_, nbytes_);
    data_ = fresh;
    nbytes_ = nbytes;
    return;
  }
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
// Note [One storage per shared memory file]
// Each process keeps the shared storages it made or mapped, by the memory file's identity
// (st_dev, st_ino), without owning them: a storage received twice (or sent out and back)
// maps once, so its views alias in the receiver as they did in the sender. The deleter
// takes the entry out; try_retain skips a storage whose last reference is going.
using FileId = std::pair<dev_t, ino_t>;
std::mutex g_shared_mutex;
std::map<FileId, StorageImpl*>* g_shared = nullptr;  // leaked: deleters may run at exit

FileId file_id(int fd) {
  struct stat st;
  EMBER_CHECK(fstat(fd, &st) == 0, Runtime, "shared memory: cannot stat file descriptor ", fd, ": ",
              std::strerror(errno));
  return {st.st_dev, st.st_ino};
}

std::map<FileId, StorageImpl*>& shared_registry() {  // with g_shared_mutex held
  if (!g_shared) {
    g_shared = new std::map<FileId, StorageImpl*>();
    // A fork while another thread holds the mutex would leave it locked in the child.
    pthread_atfork([] { g_shared_mutex.lock(); }, [] { g_shared_mutex.unlock(); },
                   [] { g_shared_mutex.unlock(); });
  }
  return *g_shared;
}

// The context of a shared storage's deleter: the memory file, and the storage's former
// memory when a raw pointer into it escaped (numpy, DLPack): freed with the storage rather
// than at the move, so that pointer stays valid (it no longer sees the storage's writes).
struct SharedMemory {
  int fd;
  void* kept = nullptr;
  size_t kept_nbytes = 0;
  StorageImpl* owner = nullptr;  // registered under id
  FileId id{};
};

void register_shared(SharedMemory* shm, StorageImpl* storage) {
  shm->id = file_id(shm->fd);
  shm->owner = storage;
  std::lock_guard<std::mutex> lock(g_shared_mutex);
  shared_registry()[shm->id] = storage;
}

void unmap_shared(void* context, void* data, size_t nbytes) {
  auto* shm = static_cast<SharedMemory*>(context);
  if (shm->owner) {
    std::lock_guard<std::mutex> lock(g_shared_mutex);
    auto it = g_shared->find(shm->id);
    if (it != g_shared->end() && it->second == shm->owner) g_shared->erase(it);
  }
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
  register_shared(shm, this);
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
  FileId id = file_id(fd);
  {
    std::lock_guard<std::mutex> lock(g_shared_mutex);
    auto& registry = shared_registry();
    auto it = registry.find(id);
    if (it != registry.end() && it->second->nbytes() == nbytes && it->second->try_retain())
      return Storage::adopt(it->second);
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
  auto* shm = new SharedMemory{own};
  Storage s = make_ref<StorageImpl>(p, nbytes, &unmap_shared, shm);
  s->shared_ = true;
  register_shared(shm, s.get());
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
