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
