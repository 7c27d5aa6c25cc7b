// Views: every result shares self's storage. See declarations/ops/views.yaml.
#include <algorithm>
#include <vector>
#include "ops/geometry.h"
#include "ops/internal.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

Tensor with_sizes_strides(const Tensor& self, Dims sizes, Dims strides, int64_t offset) {
  return make_view(self, std::move(sizes), std::move(strides), offset);
}

Tensor view_impl(const Tensor& self, IntList size, const char* op) {
  Dims shape = infer_size(size, self.numel());
  auto strides = view_strides(self.sizes(), self.strides(), shape);
  EMBER_CHECK(strides, Runtime, op,
              " size is not compatible with input tensor's size and stride (at least one dimension "
              "spans across two contiguous subspaces). Use .reshape(...) instead.");
  return with_sizes_strides(self, std::move(shape), std::move(*strides), self.offset());
}

std::vector<bool> dim_mask(IntList dims, int64_t ndim, const char* op) {
  std::vector<bool> seen(std::max<int64_t>(ndim, 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim);
    EMBER_CHECK(!seen[w], Runtime, op, "(): dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
  }
  return seen;
}

}  // namespace

Tensor view(const Tensor& self, IntList size) { return view_impl(self, size, "view"); }

Tensor view_dtype(const Tensor& self, ScalarType dtype) {
  const int64_t old_size = self.itemsize(), new_size = itemsize(dtype);
  Dims sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.offset();
  if (old_size != new_size) {
    const char* from = type_name(self.dtype());
    const char* to = type_name(dtype);
    EMBER_CHECK(self.dim() > 0, Runtime, "self.dim() cannot be 0 to view ", from, " as ", to,
                " (different element sizes)");
    EMBER_CHECK(self.stride(-1) == 1, Runtime, "self.stride(-1) must be 1 to view ", from, " as ", to,
                " (different element sizes), but got ", self.stride(-1));
    const int64_t last = self.dim() - 1;
    if (new_size > old_size) {
      const int64_t ratio = new_size / old_size;
      EMBER_CHECK(sizes[last] % ratio == 0, Runtime, "self.size(-1) must be divisible by ", ratio, " to view ",
                  from, " as ", to, " (different element sizes), but got ", sizes[last]);
      EMBER_CHECK(offset % ratio == 0, Runtime, "self.storage_offset() must be divisible by ", ratio,
                  " to view ", from, " as ", to, " (different element sizes), but got ", offset);
      for (int64_t d = 0; d < last; ++d) {
        EMBER_CHECK(strides[d] % ratio == 0, Runtime, "self.stride(", d, ") must be divisible by ", ratio,
                    " to view ", from, " as ", to, " (different element sizes), but got ", strides[d]);
        strides[d] /= ratio;
      }
      sizes[last] /= ratio;
      offset /= ratio;
    } else {
      const int64_t ratio = old_size / new_size;
      for (int64_t d = 0; d < last; ++d) strides[d] *= ratio;
      sizes[last] *= ratio;
      offset *= ratio;
    }
  }
  return Tensor(make_ref<TensorImpl>(self.storage(), offset, std::move(sizes), std::move(strides), dtype));
}

Tensor view_as(const Tensor& self, const Tensor& other) { return view_impl(self, other.sizes(), "view"); }

Tensor reshape(const Tensor& self, IntList shape) {
  Dims sizes = infer_size(shape, self.numel());
  if (auto strides = view_strides(self.sizes(), self.strides(), sizes))
    return with_sizes_strides(self, std::move(sizes), std::move(*strides), self.offset());
  return view_impl(contiguous(self, MemoryFormat::Contiguous), sizes, "view");
}

Tensor reshape_as(const Tensor& self, const Tensor& other) { return reshape(self, other.sizes()); }

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  int64_t s = wrap_dim(start_dim, self.dim()), e = wrap_dim(end_dim, self.dim());
  if (self.dim() == 0) return reshape(self, {1});
  EMBER_CHECK(s <= e, Runtime, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (s == e) return self;
  Dims shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(self.sizes()[d]);
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= self.sizes()[d];
  shape.push_back(merged);
  for (int64_t d = e + 1; d < self.dim(); ++d) shape.push_back(self.sizes()[d]);
  return reshape(self, shape);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntList sizes) {
  EMBER_CHECK(self.dim() > 0, Runtime, "unflatten: Dimension specified as ", dim, " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, self.dim());
  EMBER_CHECK(!sizes.empty(), Runtime, "unflatten: sizes must be non-empty");
  Dims split = infer_size(sizes, self.sizes()[d]);
  Dims shape;
  for (int64_t i = 0; i < d; ++i) shape.push_back(self.sizes()[i]);
  for (int64_t s : split) shape.push_back(s);
  for (int64_t i = d + 1; i < self.dim(); ++i) shape.push_back(self.sizes()[i]);
  return view_impl(self, shape, "view");
}

Tensor squeeze_dims(const Tensor& self, IntList dim) {
  std::vector<bool> drop = dim_mask(dim, self.dim(), "squeeze");
  Dims sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (drop[d] && self.sizes()[d] == 1) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  return with_sizes_strides(self, std::move(sizes), std::move(strides), self.offset());
}

Tensor squeeze(const Tensor& self) {
  Dims all;
  for (int64_t d = 0; d < self.dim(); ++d) all.push_back(d);
  return squeeze_dims(self, all);
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) { return squeeze_dims(self, {dim}); }

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim() + 1);
  Dims sizes(self.sizes()), strides(self.strides());
  int64_t stride = d < self.dim() ? self.sizes()[d] * self.strides()[d] : 1;
  sizes.insert(d, 1);
  strides.insert(d, stride);
  return with_sizes_strides(self, std::move(sizes), std::move(strides), self.offset());
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  int64_t a = wrap_dim(dim0, self.dim()), b = wrap_dim(dim1, self.dim());
  Dims sizes(self.sizes()), strides(self.strides());
  if (self.dim() > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return with_sizes_strides(self, std::move(sizes), std::move(strides), self.offset());
}

Tensor t(const Tensor& self) {
  EMBER_CHECK(self.dim() <= 2, Runtime, "t() expects a tensor with <= 2 dimensions, but self is ",
              self.dim(), "D");
  return self.dim() < 2 ? with_sizes_strides(self, Dims(self.sizes()), Dims(self.strides()), self.offset())
                        : transpose(self, 0, 1);
}

Tensor permute(const Tensor& self, IntList dims) {
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == self.dim(), Runtime,
              "permute(): number of dimensions in the tensor input does not match the length of the "
              "desired ordering of dimensions i.e. input.dim() = ", self.dim(), " is not equal to len(dims) = ",
              dims.size());
  std::vector<bool> seen(self.dim(), false);
  Dims sizes(self.dim()), strides(self.dim());
  for (int64_t i = 0; i < self.dim(); ++i) {
    int64_t d = wrap_dim(dims[i], self.dim());
    EMBER_CHECK(!seen[d], Runtime, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return with_sizes_strides(self, std::move(sizes), std::move(strides), self.offset());
}

Tensor movedim(const Tensor& self, IntList source, IntList destination) {
  const int64_t nd = self.dim();
  EMBER_CHECK(source.size() == destination.size(), Runtime,
              "movedim: Invalid source or destination dims: source (", sizes_str(source),
              " dims) should contain the same number of dims as destination (", sizes_str(destination), " dims)");
  std::vector<bool> src_seen = dim_mask(source, nd, "movedim");
  dim_mask(destination, nd, "movedim");  // checks for repeats
  std::vector<int64_t> order(std::max<int64_t>(nd, 1), -1);
  for (size_t i = 0; i < source.size(); ++i) order[wrap_dim(destination[i], nd)] = wrap_dim(source[i], nd);
  int64_t next_src = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (order[d] >= 0) continue;
    while (src_seen[next_src]) ++next_src;
    order[d] = next_src++;
  }
  return permute(self, IntList(order.data(), static_cast<size_t>(nd)));
}

Tensor movedim_int(const Tensor& self, int64_t source, int64_t destination) {
  return movedim(self, {source}, {destination});
}

Tensor expand(const Tensor& self, IntList size, bool implicit) {
  (void)implicit;  // only autograd cares whether an expand was implicit (torch's flag)
  const int64_t nd = self.dim(), nn = static_cast<int64_t>(size.size());
  EMBER_CHECK(nn >= nd, Runtime, "expand(", type_name(self.dtype()), "Tensor{", sizes_str(self.sizes()),
              "}, size=", sizes_str(size), "): the number of sizes provided (", nn,
              ") must be greater or equal to the number of dimensions in the tensor (", nd, ")");
  Dims sizes(nn), strides(nn);
  for (int64_t i = nn - 1; i >= 0; --i) {
    int64_t od = i - (nn - nd);
    int64_t want = size[i];
    if (od < 0) {
      EMBER_CHECK(want >= 0, Runtime, "The expanded size of the tensor (", want,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      sizes[i] = want;
      strides[i] = want != 1 ? 0 : i + 1 < nn ? sizes[i + 1] * strides[i + 1] : 1;
      continue;
    }
    int64_t have = self.sizes()[od];
    if (want == -1) want = have;
    if (want == have) {
      sizes[i] = have;
      strides[i] = self.strides()[od];
    } else {
      EMBER_CHECK(have == 1, Runtime, "The expanded size of the tensor (", want,
                  ") must match the existing size (", have, ") at non-singleton dimension ", i,
                  ".  Target sizes: ", sizes_str(size), ".  Tensor sizes: ", sizes_str(self.sizes()));
      EMBER_CHECK(want >= 0, Runtime, "expand(): the expanded size ", want, " is negative");
      sizes[i] = want;
      strides[i] = 0;
    }
  }
  return with_sizes_strides(self, std::move(sizes), std::move(strides), self.offset());
}

Tensor expand_as(const Tensor& self, const Tensor& other) { return expand(self, other.sizes(), false); }
Tensor broadcast_to(const Tensor& self, IntList size) { return expand(self, size, false); }

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK(self.dim() > 0, Runtime, "narrow() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK(length >= 0, Runtime, "narrow(): length must be non-negative.");
  int64_t d = wrap_dim(dim, self.dim()), size = self.sizes()[d];
  EMBER_CHECK(start >= -size && start <= size, Index, "start out of range (expected to be in range of [",
              -size, ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  EMBER_CHECK(start <= size - length, Runtime, "start (", start, ") + length (", length,
              ") exceeds dimension size (", size, ").");
  return slice(self, d, start, start + length, 1);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  EMBER_CHECK(self.dim() > 0, Index, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, self.dim()), size = self.sizes()[d];
  EMBER_CHECK(index >= -size && index < size, Index, "select(): index ", index,
              " out of range for tensor of size ", sizes_str(self.sizes()), " at dimension ", d);
  if (index < 0) index += size;
  Dims sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.offset() + index * strides[d];
  sizes.erase(d);
  strides.erase(d);
  return with_sizes_strides(self, std::move(sizes), std::move(strides), offset);
}

Tensor slice(const Tensor& self, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  EMBER_CHECK(step > 0, Value, "step must be greater than zero");
  int64_t size = self.sizes()[dim];
  auto clamp = [size](int64_t v) {
    if (v < 0) v += size;
    return v < 0 ? 0 : v > size ? size : v;
  };
  start = clamp(start);
  stop = clamp(stop);
  int64_t len = 0;
  if (stop > start) {
    int64_t span;
    EMBER_CHECK(!__builtin_add_overflow(stop - start, step - 1, &span), Runtime,
                "Storage size calculation overflowed with a slice of step ", step);
    len = span / step;
  }
  Dims sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.offset() + start * strides[dim];  // kept even when empty, as torch does
  sizes[dim] = len;
  strides[dim] *= step;
  return with_sizes_strides(self, std::move(sizes), std::move(strides), offset);
}

Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  int64_t d = self.dim() == 0 ? 0 : wrap_dim(dimension, self.dim());
  int64_t dim_size = self.dim() == 0 ? 1 : self.sizes()[d];
  int64_t dim_stride = self.dim() == 0 ? 1 : self.strides()[d];
  EMBER_CHECK(size <= dim_size, Runtime, "maximum size for tensor at dimension ", d, " is ", dim_size,
              " but size is ", size);
  EMBER_CHECK(size >= 0, Runtime, "size is ", size, " but must be >= 0");
  EMBER_CHECK(step > 0, Runtime, "step is ", step, " but must be > 0");
  Dims sizes(self.sizes()), strides(self.strides());
  if (self.dim() > 0) {
    sizes[d] = (dim_size - size) / step + 1;
    strides[d] = step * dim_stride;
  }
  sizes.push_back(size);
  strides.push_back(dim_stride);
  return with_sizes_strides(self, std::move(sizes), std::move(strides), self.offset());
}

Tensor as_strided(const Tensor& self, IntList size, IntList stride, std::optional<int64_t> storage_offset) {
  EMBER_CHECK(size.size() == stride.size(), Runtime, "mismatch in length of strides and shape");
  int64_t offset = storage_offset.value_or(self.offset());
  EMBER_CHECK(offset >= 0, Runtime, "Tensor: invalid storage offset ", offset);
  for (int64_t s : size)
    EMBER_CHECK(s >= 0, Runtime, "Trying to create tensor with negative dimension ", s, ": ", sizes_str(size));
  for (int64_t s : stride)
    EMBER_CHECK(s >= 0, Runtime, "as_strided: Negative strides are not supported at the moment, got strides: ",
                sizes_str(stride));
  return with_sizes_strides(self, Dims(size), Dims(stride), offset);
}

std::vector<Tensor> split_sizes(const Tensor& self, IntList split_size_or_sections, int64_t dim) {
  IntList split_size = split_size_or_sections;
  EMBER_CHECK(self.dim() > 0, Runtime, "split expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, self.dim()), size = self.sizes()[d], total = 0;
  for (int64_t s : split_size) {
    EMBER_CHECK(s >= 0, Runtime, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
                sizes_str(split_size));
    total += s;
  }
  EMBER_CHECK(total == size, Runtime, "split_with_sizes expects split_sizes to sum exactly to ", size,
              " (input tensor's size at dimension ", d, "), but got split_sizes=", sizes_str(split_size));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_size) {
    out.push_back(slice(self, d, start, start + s, 1));
    start += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size_or_sections, int64_t dim) {
  const int64_t split_size = split_size_or_sections;
  EMBER_CHECK(self.dim() > 0, Runtime, "split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0, Runtime, "split expects split_size be non-negative, but got split_size=", split_size);
  int64_t d = wrap_dim(dim, self.dim()), size = self.sizes()[d];
  EMBER_CHECK(split_size > 0 || size == 0, Runtime,
              "split_size can only be 0 if dimension size is 0, but got dimension size of ", size);
  int64_t pieces = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < pieces; ++i) {
    int64_t start = i * split_size;
    out.push_back(slice(self, d, start, std::min(size, start + split_size), 1));
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, Runtime, "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, Runtime, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t d = wrap_dim(dim, self.dim()), size = self.sizes()[d];
  if (size == 0) return std::vector<Tensor>(chunks, slice(self, d, 0, 0, 1));
  return split(self, (size + chunks - 1) / chunks, d);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, Index, "Dimension specified as ", dim, " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, self.dim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.sizes()[d]; ++i) out.push_back(select(self, d, i));
  return out;
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t a = wrap_dim(dim1, self.dim()), b = wrap_dim(dim2, self.dim());
  EMBER_CHECK(a != b, Runtime, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t sa = self.sizes()[a], sb = self.sizes()[b];
  int64_t len = offset >= 0 ? std::min(sa, sb - offset) : std::min(sa + offset, sb);
  len = std::max<int64_t>(len, 0);
  int64_t start = self.offset();
  if (len > 0) start += offset >= 0 ? offset * self.strides()[b] : -offset * self.strides()[a];
  Dims sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == a || d == b) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  sizes.push_back(len);
  strides.push_back(self.strides()[a] + self.strides()[b]);
  return with_sizes_strides(self, std::move(sizes), std::move(strides), start);
}

}  // namespace ember::ops
