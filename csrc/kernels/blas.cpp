// The lazy OpenBLAS loader. See blas.h.
#include "kernels/blas.h"

#include <dlfcn.h>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include "core/error.h"

namespace ember::blas {
namespace {

std::atomic<std::string (*)()> g_locator{nullptr};
std::atomic<const Library*> g_library{nullptr};
std::mutex g_load_mutex;

class Loader {
 public:
  Loader(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}

  template <class F>
  void get(F& fn, const char* name, bool required = true) {
    void* p = dlsym(handle_, (std::string("scipy_") + name).c_str());
    if (!p) p = dlsym(handle_, name);
    EMBER_CHECK(p || !required, Runtime, "ember could not find the BLAS/LAPACK function ", name, " in ", path_);
    fn = reinterpret_cast<F>(p);
  }

  template <class T>
  void routines(Routines<T>& r, char t) {
    const std::string s(1, t);
    const bool cx = kIsComplex<T>;
    get(r.gemm, ("cblas_" + s + "gemm").c_str());
    get(r.trsm, ("cblas_" + s + "trsm").c_str());
    Lapack<T>& l = r.lapack;
    get(l.getrf, ("LAPACKE_" + s + "getrf").c_str());
    get(l.getri, ("LAPACKE_" + s + "getri").c_str());
    get(l.getrs, ("LAPACKE_" + s + "getrs").c_str());
    get(l.potrf, ("LAPACKE_" + s + "potrf").c_str());
    get(l.geqrf, ("LAPACKE_" + s + "geqrf").c_str());
    get(l.orgqr, ("LAPACKE_" + s + (cx ? "ungqr" : "orgqr")).c_str());
    get(l.gesdd, ("LAPACKE_" + s + "gesdd").c_str());
    get(l.syevd, ("LAPACKE_" + s + (cx ? "heevd" : "syevd")).c_str());
    get(l.gelsd, ("LAPACKE_" + s + "gelsd").c_str());
    get(l.geev, ("LAPACKE_" + s + "geev").c_str());
    get(l.ormqr, ("LAPACKE_" + s + (cx ? "unmqr" : "ormqr")).c_str());
    get(l.sytrf, ("LAPACKE_" + s + "sytrf").c_str());
    get(l.sytrs, ("LAPACKE_" + s + "sytrs").c_str());
  }

 private:
  void* handle_;
  std::string path_;
};

// The locator may run Python, so it is called before taking g_load_mutex: a thread
// holding the mutex must never wait for the GIL.
std::string library_path() {
  if (const char* env = std::getenv("EMBER_BLAS_LIBRARY"); env && *env) return env;
  if (auto locate = g_locator.load()) return locate();
  return "";
}

// Note [OpenBLAS starts no threads]
// OpenBLAS starts its worker threads in its load-time constructor, as many as
// OPENBLAS_NUM_THREADS (else GOTO_NUM_THREADS, OMP_NUM_THREADS, the cores) asks, and each
// spins ~110 ms before sleeping although ember never hands it work (Note [ember threads
// BLAS], kernels/linalg.cpp): measured, 111 ms of CPU burnt after the first product of a
// process, a whole core taken from a busy neighbour. OPENBLAS_NUM_THREADS=1, which
// takes precedence over the others, holds for the dlopen alone and the caller's value
// (or its absence) comes back after it, so neither ember's child processes nor another
// library's OpenBLAS see it. The swap runs under g_load_mutex, once per process; what it
// cannot exclude is another thread reading the C environment during that dlopen (setenv
// is not thread-safe against getenv), a window of milliseconds at the first product.
class OneThreadAtLoad {
 public:
  OneThreadAtLoad() {
    if (const char* old = std::getenv(kName)) {
      had_ = true;
      old_ = old;
    }
    setenv(kName, "1", 1);
  }
  ~OneThreadAtLoad() {
    if (had_) setenv(kName, old_.c_str(), 1);
    else unsetenv(kName);
  }
  OneThreadAtLoad(const OneThreadAtLoad&) = delete;
  OneThreadAtLoad& operator=(const OneThreadAtLoad&) = delete;

 private:
  static constexpr const char* kName = "OPENBLAS_NUM_THREADS";
  bool had_ = false;
  std::string old_;
};

const Library* load(const std::string& path) {
  EMBER_CHECK(!path.empty(), Runtime,
              "ember needs OpenBLAS for this op and could not find it: install the scipy-openblas32 package "
              "(pip install scipy-openblas32) or set EMBER_BLAS_LIBRARY to the path of an OpenBLAS library");
  void* handle = nullptr;
  {
    OneThreadAtLoad one_thread;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  EMBER_CHECK(handle, Runtime, "ember could not load OpenBLAS from ", path, ": ", dlerror());
  auto* lib = new Library();  // lives as long as the process, like the dlopen'ed library
  try {
    Loader loader(handle, path);
    loader.routines(lib->f32, 's');
    loader.routines(lib->f64, 'd');
    loader.routines(lib->c64, 'c');
    loader.routines(lib->c128, 'z');
    loader.get(lib->set_num_threads, "openblas_set_num_threads");
  } catch (...) {
    delete lib;
    dlclose(handle);
    throw;
  }
  return lib;
}

}  // namespace

void set_locator(std::string (*locate)()) { g_locator.store(locate); }

const Library& library() {
  const Library* lib = g_library.load(std::memory_order_acquire);
  if (!lib) {
    const std::string path = library_path();
    std::lock_guard<std::mutex> lock(g_load_mutex);
    lib = g_library.load(std::memory_order_acquire);
    if (!lib) {
      lib = load(path);
      lib->set_num_threads(1);  // See Note [ember threads BLAS] in kernels/linalg.cpp
      g_library.store(lib, std::memory_order_release);
    }
  }
  return *lib;
}

}  // namespace ember::blas
