#include "ops/geometry.h"

#include <algorithm>
#include <numeric>

namespace ember::ops {

Dims infer_size(IntList shape, int64_t numel) {
  Dims out(shape);
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(infer_at < 0, Runtime, "only one dimension can be inferred");
      infer_at = static_cast<int64_t>(i);
    } else {
      EMBER_CHECK(shape[i] >= 0, Runtime, "invalid shape dimension ", shape[i]);
      EMBER_CHECK(!__builtin_mul_overflow(known, shape[i], &known), Runtime, "shape '",
                  sizes_str(shape), "' is invalid for input of size ", numel);
    }
  }
  if (infer_at >= 0) {
    EMBER_CHECK(known != 0, Runtime, "cannot reshape tensor of ", numel,
                " elements into shape ", sizes_str(shape),
                " because the unspecified dimension size -1 can be any value and is ambiguous");
    EMBER_CHECK(numel % known == 0, Runtime, "shape '", sizes_str(shape), "' is invalid for input of size ", numel);
    out[infer_at] = numel / known;
  } else {
    EMBER_CHECK(known == numel, Runtime, "shape '", sizes_str(shape), "' is invalid for input of size ", numel);
  }
  return out;
}

Dims broadcast_shapes(IntList a, IntList b) {
  const size_t n = std::max(a.size(), b.size());
  Dims out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(x == y || x == 1 || y == 1, Runtime, "The size of tensor a (", x,
                ") must match the size of tensor b (", y, ") at non-singleton dimension ", i);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

std::optional<Dims> view_strides(IntList sizes, IntList strides, IntList new_sizes) {
  Dims out(new_sizes.size());
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0 && sizes == new_sizes) return Dims(strides);  // torch keeps an empty tensor's strides
  if (numel == 0 || sizes.empty()) {
    // nothing to keep consistent: empty tensors and scalars take contiguous strides
    return contiguous_strides(new_sizes);
  }
  // Walk the old dims from the innermost; a run of old dims that are contiguous with each
  // other ("a chunk") can be re-split into any new dims whose product equals the chunk's.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_stride = strides.back();
  int64_t chunk_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    chunk_numel *= sizes[d];
    bool chunk_ends = d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != chunk_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || new_sizes[view_d] == 1)) {
      out[view_d] = view_numel * chunk_stride;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[d - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

bool non_overlapping_and_dense(const Tensor& t) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes()[d] != 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.strides()[a] < t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

Dims preserved_strides(const Tensor& self) {
  const int64_t nd = self.dim();
  if (nd == 0) return Dims();
  if (non_overlapping_and_dense(self)) return Dims(self.strides());
  // Order the dims from outermost to innermost by stride, as torch's preserve_format
  // does: an insertion sort that moves a dim inward only past a dim with a strictly
  // larger stride, leaving broadcast (stride 0) and size-1 dims where they are.
  std::vector<int64_t> order(nd);  // outermost first
  std::iota(order.begin(), order.end(), 0);
  auto ambiguous = [&](int64_t d) { return self.strides()[d] == 0 || self.sizes()[d] == 1; };
  for (int64_t i = 1; i < nd; ++i) {
    for (int64_t j = i; j > 0; --j) {
      int64_t inner = order[j], outer = order[j - 1];
      if (ambiguous(inner) || ambiguous(outer) || self.strides()[outer] >= self.strides()[inner]) break;
      std::swap(order[j], order[j - 1]);
    }
  }
  Dims out(nd);
  int64_t expected = 1;
  for (int64_t i = nd - 1; i >= 0; --i) {
    out[order[i]] = expected;
    expected *= std::max<int64_t>(self.sizes()[order[i]], 1);
  }
  return out;
}

}  // namespace ember::ops
