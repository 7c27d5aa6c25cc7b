// Dims: sizes and strides, stored inline up to kInline dimensions so that creating a
// tensor of ordinary rank allocates nothing but the TensorImpl itself.
#pragma once
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <vector>

namespace ember {

// EMBER_CHECKED_INDEXING (the sanitizer build sets it) makes every IntList/Dims index
// checked: reading sizes()[0] of a 0-dim tensor reads Dims' inline storage, which
// AddressSanitizer cannot see.
#ifdef EMBER_CHECKED_INDEXING
#define EMBER_INDEX_CHECK(i, n) ((i) < (n) ? void(0) : std::abort())
#else
#define EMBER_INDEX_CHECK(i, n) void(0)
#endif

// A read-only view of int64 values: what ops take for sizes, strides and dim lists.
class IntList {
 public:
  IntList() = default;
  IntList(const int64_t* data, size_t size) : data_(data), size_(size) {}
  IntList(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}
  // For arguments only ({2, 3} at a call site): the list lives until the call returns.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  IntList(std::initializer_list<int64_t> l) : data_(l.begin()), size_(l.size()) {}
#pragma GCC diagnostic pop
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](size_t i) const { return EMBER_INDEX_CHECK(i, size_), data_[i]; }
  int64_t back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool operator==(IntList o) const {
    return size_ == o.size_ && (size_ == 0 || std::memcmp(data_, o.data_, size_ * 8) == 0);
  }
  bool operator!=(IntList o) const { return !(*this == o); }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class Dims {
 public:
  static constexpr size_t kInline = 5;
  Dims() = default;
  explicit Dims(size_t n, int64_t value = 0) { resize(n, value); }
  Dims(IntList l) { assign(l); }
  Dims(std::initializer_list<int64_t> l) { assign(IntList(l.begin(), l.size())); }
  Dims(const Dims& o) { assign(o); }
  Dims(Dims&& o) noexcept { steal(o); }
  Dims& operator=(const Dims& o) { if (this != &o) assign(o); return *this; }
  Dims& operator=(Dims&& o) noexcept {
    if (this != &o) { free_heap(); steal(o); }
    return *this;
  }
  ~Dims() { free_heap(); }

  operator IntList() const { return IntList(data(), size_); }
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return EMBER_INDEX_CHECK(i, size()), data()[i]; }
  int64_t operator[](size_t i) const { return EMBER_INDEX_CHECK(i, size()), data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t back() const { return data()[size_ - 1]; }

  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - pos) * 8);
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * 8);
    --size_;
  }
  void assign(IntList l) {
    size_ = 0;
    reserve(l.size());
    if (l.size()) std::memcpy(data(), l.data(), l.size() * 8);
    size_ = l.size();
  }

 private:
  void reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = n < 2 * capacity_ ? 2 * capacity_ : n;
    auto* p = static_cast<int64_t*>(std::malloc(cap * 8));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data(), size_ * 8);
    free_heap();
    heap_ = p;
    capacity_ = cap;
  }
  void free_heap() {
    std::free(heap_);
    heap_ = nullptr;
    capacity_ = kInline;
  }
  void steal(Dims& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
      o.heap_ = nullptr;
      o.capacity_ = kInline;
    } else {
      heap_ = nullptr;
      capacity_ = kInline;
      std::memcpy(inline_, o.inline_, size_ * 8);
    }
    o.size_ = 0;
  }

  int64_t inline_[kInline];
  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

}  // namespace ember
