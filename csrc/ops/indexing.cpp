// Advanced indexing: self[indices] and self[indices] = values, with index tensors
// (int64, int32, or bool/uint8 masks) for some dims and full slices for the others.
#include <vector>
#include "kernels/index.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

// The indexing problem after masks became int64 index tensors, laid out for the kernel.
struct IndexPlan {
  Dims result_shape;
  Tensor src;                    // self restrided: indexed dims stride 0, shaped like the result
  std::vector<Tensor> indices;   // int64, expanded to the result shape
  std::vector<int64_t> sizes, strides_bytes;  // of self's indexed dims
};

// Masks become their nonzero coordinates; int32 becomes int64; padding to self.dim().
// A 0-dim boolean index adds a dim to `self` (a view), indexed by [0] or by nothing.
std::vector<Tensor> expand_masks(Tensor& self, const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  for (const Tensor& idx : indices) {
    if (!idx.defined()) {
      out.push_back(idx);
      continue;
    }
    ScalarType dt = idx.dtype();
    if (dt == ScalarType::Bool && idx.dim() == 0) {
      const bool keep = item(idx).to_bool();
      self = unsqueeze(self, static_cast<int64_t>(out.size()));
      out.push_back(zeros({keep ? 1 : 0}, ScalarType::Int64));
      continue;
    }
    if (dt == ScalarType::Bool || dt == ScalarType::UInt8) {
      const int64_t first = static_cast<int64_t>(out.size());
      for (int64_t j = 0; j < idx.dim(); ++j) {
        EMBER_CHECK(first + j < self.dim(), Index, "too many indices for tensor of dimension ", self.dim());
        EMBER_CHECK(idx.sizes()[j] == self.sizes()[first + j], Index, "The shape of the mask ",
                    sizes_str(idx.sizes()), " at index ", j, " does not match the shape of the indexed tensor ",
                    sizes_str(self.sizes()), " at index ", first + j);
      }
      Tensor nz = nonzero(idx);  // (n, k)
      for (int64_t j = 0; j < idx.dim(); ++j) out.push_back(select(nz, 1, j));
      continue;
    }
    EMBER_CHECK(dt == ScalarType::Int64 || dt == ScalarType::Int32, Index,
                "tensors used as indices must be long, int, byte or bool tensors");
    out.push_back(dt == ScalarType::Int64 ? idx : to_dtype(idx, ScalarType::Int64, false, false, std::nullopt));
  }
  EMBER_CHECK(static_cast<int64_t>(out.size()) <= self.dim(), Index, "too many indices for tensor of dimension ",
              self.dim(), " (got ", out.size(), ")");
  out.resize(self.dim());
  return out;
}

IndexPlan plan(const Tensor& input, const std::vector<Tensor>& raw) {
  check_bounds(input);
  Tensor self = input;
  std::vector<Tensor> idx = expand_masks(self, raw);
  const int64_t nd = self.dim();
  Dims bshape;
  bool first = true;
  int64_t first_dim = -1, last_dim = -1, count = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (!idx[d].defined()) continue;
    if (!first) {
      try {
        bshape = broadcast_shapes(bshape, idx[d].sizes());
      } catch (const Error&) {
        fail(ErrorKind::Index, "shape mismatch: indexing tensors could not be broadcast together with shapes ",
             sizes_str(bshape), ", ", sizes_str(idx[d].sizes()));
      }
    } else {
      bshape = Dims(idx[d].sizes());
    }
    first = false;
    if (first_dim < 0) first_dim = d;
    last_dim = d;
    ++count;
  }
  IndexPlan p;
  if (count == 0) {  // nothing indexed: the result is self itself
    p.result_shape = Dims(self.sizes());
    p.src = self;
    return p;
  }
  EMBER_CHECK(count + 2 <= kernels::kMaxOperands, Index, "too many index tensors: ", count);
  const bool adjacent = last_dim - first_dim + 1 == count;
  // Result dims: [before..., B..., after...] when the indexed dims are adjacent, else
  // [B..., the other dims...] (numpy's rule, which torch follows).
  const int64_t b_at = adjacent ? first_dim : 0;
  Dims src_sizes, src_strides;
  auto add_plain = [&](int64_t d) {
    src_sizes.push_back(self.sizes()[d]);
    src_strides.push_back(self.strides()[d]);
  };
  auto add_broadcast = [&] {
    for (int64_t s : bshape) {
      src_sizes.push_back(s);
      src_strides.push_back(0);
    }
  };
  if (!adjacent) add_broadcast();
  for (int64_t d = 0; d < nd; ++d) {
    if (idx[d].defined()) {
      if (adjacent && d == first_dim) add_broadcast();
      continue;
    }
    add_plain(d);
  }
  p.result_shape = src_sizes;
  // The indexed dims have stride 0 here: the kernel adds index * stride itself, after
  // checking each index, so this operand's own extent means nothing (Unchecked).
  p.src = Tensor(make_ref<TensorImpl>(self.storage(), self.offset(), src_sizes, src_strides, self.dtype(),
                                      TensorImpl::Unchecked{}));
  const int64_t nb = static_cast<int64_t>(bshape.size());
  for (int64_t d = 0; d < nd; ++d) {
    if (!idx[d].defined()) continue;
    Tensor e = expand(idx[d], bshape, false);
    Dims sizes(p.result_shape), strides(p.result_shape.size(), 0);
    for (int64_t j = 0; j < nb; ++j) strides[b_at + j] = e.strides()[j];
    p.indices.push_back(make_view(e, std::move(sizes), std::move(strides), e.offset()));
    p.sizes.push_back(self.sizes()[d]);
    p.strides_bytes.push_back(self.strides()[d] * self.itemsize());
  }
  return p;
}

kernels::index::IndexLoop make_index_loop(const Tensor& first, const IndexPlan& p) {
  std::vector<const Tensor*> ops{&first, &p.src};
  for (const Tensor& t : p.indices) ops.push_back(&t);
  kernels::index::IndexLoop il;
  check_bounds(first);
  il.loop = kernels::make_loop(ops.data(), static_cast<int>(ops.size()), false);
  il.nindex = static_cast<int>(p.indices.size());
  for (int k = 0; k < il.nindex; ++k) {
    il.sizes[k] = p.sizes[k];
    il.strides[k] = p.strides_bytes[k];
  }
  return il;
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  IndexPlan p = plan(self, indices);
  Tensor out = empty_tensor(p.result_shape, self.dtype(), "index");
  if (p.indices.empty()) return copy_(out, p.src, false);
  kernels::index::IndexLoop il = make_index_loop(out, p);
  launch_any(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::index::Kernels<T>::gather(il);
  });
  return out;
}

Tensor index_put_(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  EMBER_CHECK(!indices.empty(), Runtime, "index_put_(): expected at least one index (got an empty tuple)");
  EMBER_CHECK(values.dtype() == self.dtype(), Runtime, "Index put requires the source and destination dtypes match, got ",
              type_name(self.dtype()), " for the destination and ", type_name(values.dtype()), " for the source.");
  IndexPlan p = plan(self, indices);
  Dims shape = broadcast_shapes(p.result_shape, values.sizes());
  EMBER_CHECK(IntList(shape) == IntList(p.result_shape), Runtime, "shape mismatch: value tensor of shape ",
              sizes_str(values.sizes()), " cannot be broadcast to indexing result of shape ",
              sizes_str(p.result_shape));
  check_no_internal_overlap(self, "index_put_");
  Tensor v = expand(unaliased_source(self, values, "index_put_"), p.result_shape, false);
  self.storage()->bump_version();
  kernels::index::IndexLoop il = make_index_loop(v, p);
  launch_any(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::index::Kernels<T>::put(il, accumulate);
  });
  return self;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  return index_put_(clone(self, std::nullopt), indices, values, accumulate);
}

Tensor nonzero(const Tensor& self) {
  check_bounds(self);
  return visit_any_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::index::Kernels<T>::nonzero(self);
  });
}

}  // namespace ember::ops
