// Intrusive reference counting for the core's shared objects (StorageImpl, TensorImpl).
#pragma once
#include <atomic>
#include <utility>

namespace ember {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;
  void retain() const { count_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Retains unless the count already reached zero (the object is being destroyed): for
  // registries that hold objects without owning them.
  bool try_retain() const {
    int n = count_.load(std::memory_order_relaxed);
    while (n > 0)
      if (count_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
    return false;
  }
  int use_count() const { return count_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int> count_{0};
};

// Owning pointer to a RefCounted object.
template <class T>
class Ref {
 public:
  Ref() = default;
  Ref(T* p) : p_(p) { if (p_) p_->retain(); }
  Ref(const Ref& o) : p_(o.p_) { if (p_) p_->retain(); }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  Ref(const Ref<U>& o) : Ref(o.get()) {}
  ~Ref() { if (p_) p_->release(); }
  Ref& operator=(Ref o) noexcept { std::swap(p_, o.p_); return *this; }
  // Adopts a reference the caller already holds (from try_retain).
  static Ref adopt(T* p) { Ref r; r.p_ = p; return r; }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& o) const { return p_ == o.p_; }
  bool operator!=(const Ref& o) const { return p_ != o.p_; }

 private:
  T* p_ = nullptr;
};

template <class T, class... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

}  // namespace ember
