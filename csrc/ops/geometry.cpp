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
  if (t.numel() == 0) return true;  // as torch: an empty tensor is contiguous, hence dense
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

Dims ordered_strides(IntList shape, const Tensor* ins, int n, bool skip_empty) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  // A broadcast dim (missing, or size 1 against a larger size) has stride 0 here.
  auto stride = [&](int k, int64_t d) -> int64_t {
    const int64_t at = d - (nd - ins[k].dim());
    if (at < 0 || (ins[k].sizes()[at] == 1 && shape[d] != 1)) return 0;
    return ins[k].strides()[at];
  };
  // > 0: dim a goes outside dim b; < 0: inside; 0: the inputs do not say.
  auto compare = [&](int64_t a, int64_t b) -> int {
    for (int k = 0; k < n; ++k) {
      const int64_t sa = stride(k, a), sb = stride(k, b);
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa < sb ? -1 : 1;
      if (shape[a] > shape[b]) return 1;
    }
    return 0;
  };
  Dims order(nd);  // innermost first
  for (int64_t i = 0; i < nd; ++i) order[i] = nd - 1 - i;
  for (int64_t i = 1; i < nd; ++i) {  // insertion sort: an undecided pair keeps its order
    int64_t at = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      const int c = compare(order[j], order[at]);
      if (c > 0) {
        std::swap(order[j], order[at]);
        at = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool unmoved = true;
  for (int64_t i = 0; i < nd; ++i) unmoved &= order[i] == nd - 1 - i;
  if (unmoved) return contiguous_strides(shape);
  Dims strides(nd);
  int64_t step = 1;
  for (int64_t i = 0; i < nd; ++i) {
    strides[order[i]] = step;
    step *= skip_empty ? std::max<int64_t>(shape[order[i]], 1) : shape[order[i]];
  }
  return strides;
}

// As torch's preserve_format: a dense tensor's own strides, else its dims' order.
Dims preserved_strides(const Tensor& self) {
  if (self.dim() == 0) return Dims();
  if (non_overlapping_and_dense(self)) return Dims(self.strides());
  return ordered_strides(self.sizes(), &self, 1, true);
}

// Note [Memory formats]
// A memory format is an order of the dims, innermost first: Contiguous is the reversed dim
// order, ChannelsLast (4-d) is C, W, H, N and ChannelsLast3d (5-d) C, W, H, D, N. A tensor
// is "contiguous as" a format when its strides are those of that order, skipping size-1
// dims; which format its strides suggest follows torch's heuristic (channel innermost,
// the strides non-decreasing along the order, ambiguous N111-like cases Contiguous), since
// it decides the layout of every result made from it.
namespace {

const int64_t kChannelsLast2d[] = {1, 3, 2, 0};
const int64_t kChannelsLast3d[] = {1, 4, 3, 2, 0};

IntList format_order(MemoryFormat format) {
  if (format == MemoryFormat::ChannelsLast) return IntList(kChannelsLast2d, 4);
  return IntList(kChannelsLast3d, 5);
}

bool strides_like(const Tensor& t, IntList order) {
  if (t.dim() != static_cast<int64_t>(order.size()) || t.strides()[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : order) {
    const int64_t size = t.sizes()[d], stride = t.strides()[d];
    if (size == 0 || stride < min) return false;
    if (d == 0 && min == t.strides()[1]) return false;  // N111-like: ambiguous, row-major wins
    min = size > 1 ? stride * size : stride;
  }
  return true;
}

}  // namespace

Dims format_strides(IntList sizes, MemoryFormat format) {
  if (format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve) return contiguous_strides(sizes);
  IntList order = format_order(format);
  const bool is_2d = format == MemoryFormat::ChannelsLast;
  EMBER_CHECK(sizes.size() == order.size(), Runtime, "required rank ", order.size(), " tensor to use ",
              is_2d ? "channels_last" : "channels_last_3d", " format");
  Dims strides(sizes.size());
  int64_t step = 1;
  for (int64_t d : order) {  // torch's own rule: a size-0 dim zeroes the strides outside it
    strides[d] = step;
    step *= sizes[d];
  }
  return strides;
}

bool is_contiguous_as(const Tensor& t, MemoryFormat format) {
  if (format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve) return t.is_contiguous();
  IntList order = format_order(format);
  if (t.dim() != static_cast<int64_t>(order.size())) return false;
  int64_t expected = 1;
  for (int64_t d : order) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(const Tensor& t) {
  if (t.dim() == 4 && strides_like(t, format_order(MemoryFormat::ChannelsLast))) return MemoryFormat::ChannelsLast;
  if (t.dim() == 5 && strides_like(t, format_order(MemoryFormat::ChannelsLast3d))) return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

}  // namespace ember::ops
