// embedding and its gradient (declarations/ops/nn_embedding.yaml) over
// kernels/nn_embedding.h.
#include "kernels/nn_embedding.h"
#include "ops/nn_common.h"
#include "ops/pinned_work.h"

namespace ember::ops {
namespace {

using namespace nn_common;
namespace nk = kernels::nn_embedding;

// indices flattened to a contiguous int64 tensor, each checked against [0, rows).
Tensor embedding_indices(const Tensor& indices, int64_t rows) {
  Tensor idx = dense(reshape(indices, {-1}), ScalarType::Int64);
  const int64_t* ix = ptr<int64_t>(idx);
  for (int64_t i = 0; i < idx.numel(); ++i)
    EMBER_CHECK(ix[i] >= 0 && ix[i] < rows, Index, "index out of range in self");
  return idx;
}

bool is_index_dtype(ScalarType t) { return t == ScalarType::Int64 || t == ScalarType::Int32; }

void check_index_dtype(const Tensor& t, const char* arg) {
  EMBER_CHECK(is_index_dtype(t.dtype()), Runtime, "Expected tensor for argument #1 '", arg,
              "' to have one of the following scalar types: Long, Int; but got torch.", type_name(t.dtype()),
              "Tensor instead (while checking arguments for embedding_bag)");
}

// padding_idx in [0, rows), or -1 for none (negative values count from the end).
int64_t bag_padding_idx(std::optional<int64_t> padding_idx, int64_t rows) {
  if (!padding_idx) return -1;
  const int64_t p = *padding_idx;
  EMBER_CHECK(p >= -rows && p < rows, Runtime, "padding_idx must be within the number of embeddings, ", -rows,
              " through ", rows - 1, ", but got ", p);
  return p < 0 ? p + rows : p;
}

// The bag boundaries (bags + 1 entries, the last ending the last bag) from embedding_bag's
// offsets, checked as torch checks them.
std::vector<int64_t> bag_bounds(const Tensor& offsets, int64_t n, bool include_last_offset) {
  const Tensor off = dense(offsets, ScalarType::Int64);
  const int64_t* o = ptr<int64_t>(off);
  const int64_t count = off.numel();
  if (count > 0) {
    EMBER_CHECK(o[0] == 0, Runtime, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to ",
                "start from position 0. However, got ", o[0]);
    EMBER_CHECK(o[count - 1] <= n, Runtime, "offsets[-1] can not be greater than input's length ", n,
                " but got offsets[-1] of ", o[count - 1]);
    for (int64_t b = 1; b < count; ++b)
      EMBER_CHECK(o[b - 1] <= o[b], Runtime, "embedding_bag: offsets must be non-decreasing, but offsets[", b - 1,
                  "] = ", o[b - 1], " > offsets[", b, "] = ", o[b]);
  }
  const int64_t bags = include_last_offset ? std::max<int64_t>(count - 1, 0) : count;
  std::vector<int64_t> bounds(o, o + bags);
  bounds.push_back(include_last_offset && count > 0 ? o[bags] : n);
  return bounds;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;  // they shape the gradient only
  EMBER_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32, Runtime,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got ",
              "torch.", type_name(indices.dtype()), "Tensor instead (while checking arguments for embedding)");
  EMBER_CHECK(weight.dim() == 2, Runtime, "'weight' must be 2-D");
  Dims sizes(indices.sizes());
  sizes.push_back(weight.sizes()[1]);
  if (!runs_kernels()) return empty_tensor(sizes, weight.dtype());
  const Tensor idx = embedding_indices(indices, weight.sizes()[0]);
  const int64_t n = idx.numel(), row_bytes = weight.sizes()[1] * weight.itemsize();
  Tensor out = empty_tensor(sizes, weight.dtype());
  if (out.numel() == 0) return out;
  const Tensor w = dense(weight, weight.dtype());
  PinnedWork work({&w, &idx, &out}, out.numel());
  nk::gather_rows(w.data(), ptr<int64_t>(idx), n, row_bytes, out.data());
  return out;
}

Tensor embedding_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse) {
  (void)sparse;  // ember's gradients are dense
  EMBER_CHECK(num_weights >= 0, Runtime, "embedding_backward: num_weights must be non-negative, got ", num_weights);
  check_floating(grad_output, "embedding_backward");
  if (!runs_kernels())
    return empty_tensor({num_weights, grad_output.dim() ? grad_output.sizes()[grad_output.dim() - 1] : 1},
                        grad_output.dtype());
  const Tensor idx = embedding_indices(indices, num_weights);
  const int64_t n = idx.numel();
  const int64_t dim = grad_output.dim() ? grad_output.sizes()[grad_output.dim() - 1] : 1;
  EMBER_CHECK(grad_output.numel() == n * dim, Runtime, "embedding_backward: grad of size ",
              sizes_str(grad_output.sizes()), " does not match ", n, " indices");
  const ScalarType ct = compute_dtype(grad_output.dtype());
  const Tensor g = dense(grad_output, ct);
  Tensor out = zeros({num_weights, dim}, ct);
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(size_t(num_weights), 0);
    for (int64_t i = 0; i < n; ++i) ++counts[size_t(ptr<int64_t>(idx)[i])];
  }
  if (n > 0 && dim > 0) {
    PinnedWork work({&g, &idx, &out}, g.numel());
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::embedding_backward(ptr<T>(g), ptr<int64_t>(idx), n, dim, padding_idx,
                                         scale_grad_by_freq ? counts.data() : nullptr, ptr<T>(out));
    });
  }
  return as_dtype(out, grad_output.dtype());
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const Tensor& per_sample_weights,
                                                         bool include_last_offset, std::optional<int64_t> padding_idx) {
  (void)scale_grad_by_freq;  // it shapes the gradient only
  check_index_dtype(indices, "indices");
  check_index_dtype(offsets, "offsets");
  EMBER_CHECK(is_floating(weight.dtype()), Runtime,
              "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, BFloat16, ",
              "Float, Double; but got torch.", type_name(weight.dtype()),
              "Tensor instead (while checking arguments for embedding_bag)");
  EMBER_CHECK(weight.dim() == 2, Runtime, "embedding_bag: weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  EMBER_CHECK(indices.dim() == 1, Runtime, "embedding_bag: indices has to be a 1D Tensor, but got Tensor of dimension ",
              indices.dim());
  EMBER_CHECK(offsets.dim() == 1, Runtime, "embedding_bag: offsets has to be a 1D Tensor, but got Tensor of dimension ",
              offsets.dim());
  EMBER_CHECK(mode >= 0 && mode <= 2, Runtime, "embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 (max), but got ",
              mode);
  EMBER_CHECK(!sparse, NotImplemented,
              "embedding_bag: sparse=True (a sparse gradient of weight) is not supported by ember yet; use sparse=False");
  if (per_sample_weights.defined()) {
    EMBER_CHECK(mode == 0, NotImplemented,
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
                "(got mode='",
                mode == 1 ? "mean" : "max", "'). Please open a feature request on GitHub.");
    EMBER_CHECK(per_sample_weights.dtype() == weight.dtype(), Runtime,
                "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                "'per_sample_weights'; but type torch.",
                type_name(weight.dtype()), "Tensor does not equal torch.", type_name(per_sample_weights.dtype()),
                "Tensor (while checking arguments for embedding_bag)");
    EMBER_CHECK(per_sample_weights.sizes() == indices.sizes(), Runtime, "embedding_bag: per_sample_weights of size ",
                sizes_str(per_sample_weights.sizes()), " does not match the indices' size ", sizes_str(indices.sizes()));
  }
  const int64_t rows = weight.sizes()[0], dim = weight.sizes()[1];
  const int64_t pad = bag_padding_idx(padding_idx, rows);
  const Tensor idx = dense(indices, ScalarType::Int64);
  const int64_t* ix = ptr<int64_t>(idx);
  const int64_t n = idx.numel();
  for (int64_t i = 0; i < n; ++i)
    EMBER_CHECK(ix[i] >= 0 && ix[i] < rows, Runtime, "Index ", i, " of input takes value ", ix[i],
                " which is not in the valid range [0, ", rows, ")");
  const std::vector<int64_t> bounds = bag_bounds(offsets, n, include_last_offset);
  const int64_t bags = int64_t(bounds.size()) - 1;
  Tensor offset2bag = empty_tensor(Dims{n}, ScalarType::Int64);
  int64_t* bag = ptr<int64_t>(offset2bag);
  std::fill(bag, bag + n, int64_t(-1));
  for (int64_t b = 0; b < bags; ++b) std::fill(bag + bounds[size_t(b)], bag + bounds[size_t(b) + 1], b);
  const ScalarType ct = compute_dtype(weight.dtype());
  const Tensor w = dense(weight, ct);
  const Tensor psw = per_sample_weights.defined() ? dense(per_sample_weights, ct) : Tensor();
  Tensor out = empty_tensor(Dims{bags, dim}, ct);
  Tensor bag_size = empty_tensor(Dims{bags}, ScalarType::Int64);
  Tensor max_indices = empty_tensor(mode == 2 ? Dims{bags, dim} : Dims{bags}, ScalarType::Int64);
  {
    PinnedWork work({&w, &idx, &psw, &out, &bag_size, &max_indices}, n * dim);
    visit_float(ct, [&](auto tag) {
      using T = decltype(tag);
      nk::Kernels<T>::embedding_bag(ptr<T>(w), ix, bounds.data(), bags, dim, mode, ptr<T>(psw), pad, ptr<T>(out),
                                    ptr<int64_t>(bag_size), mode == 2 ? ptr<int64_t>(max_indices) : nullptr);
    });
  }
  if (mode != 2) std::copy_n(ptr<int64_t>(bag_size), bags, ptr<int64_t>(max_indices));
  return {as_dtype(out, weight.dtype()), offset2bag, bag_size, max_indices};
}

Tensor _embedding_bag_backward(const Tensor& grad, const Tensor& indices, const Tensor& offset2bag,
                               const Tensor& bag_size, const Tensor& max_indices, int64_t num_weights,
                               bool scale_grad_by_freq, int64_t mode, const Tensor& per_sample_weights,
                               std::optional<int64_t> padding_idx) {
  check_floating(grad, "embedding_bag_backward");
  EMBER_CHECK(grad.dim() == 2, Runtime, "_embedding_bag_backward: grad must be 2-D, got ", sizes_str(grad.sizes()));
  EMBER_CHECK(mode >= 0 && mode <= 2, Runtime, "_embedding_bag_backward: mode has to be 0, 1 or 2, but got ", mode);
  const int64_t bags = grad.sizes()[0], dim = grad.sizes()[1];
  const Tensor idx = embedding_indices(indices, num_weights);
  const Tensor bag = dense(offset2bag, ScalarType::Int64), sizes = dense(bag_size, ScalarType::Int64);
  const int64_t n = idx.numel();
  EMBER_CHECK(bag.numel() == n && sizes.numel() == bags, Runtime,
              "_embedding_bag_backward: offset2bag and bag_size do not match the indices and the gradient");
  for (int64_t i = 0; i < n; ++i)
    EMBER_CHECK(ptr<int64_t>(bag)[i] < bags, Runtime, "_embedding_bag_backward: offset2bag out of range");
  Tensor maxi;
  if (mode == 2) {
    maxi = embedding_indices(max_indices, num_weights);
    EMBER_CHECK(maxi.numel() == bags * dim, Runtime, "_embedding_bag_backward: max_indices do not match the gradient");
  }
  const int64_t pad = bag_padding_idx(padding_idx, num_weights);
  const ScalarType ct = compute_dtype(grad.dtype());
  const Tensor g = dense(grad, ct);
  const Tensor psw = per_sample_weights.defined() ? dense(per_sample_weights, ct) : Tensor();
  EMBER_CHECK(!psw.defined() || psw.numel() == n, Runtime,
              "_embedding_bag_backward: per_sample_weights do not match the indices");
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(size_t(num_weights), 0);
    for (int64_t i = 0; i < n; ++i) ++counts[size_t(ptr<int64_t>(idx)[i])];
  }
  Tensor out = empty_tensor(Dims{num_weights, dim}, ct);
  PinnedWork work({&g, &idx, &bag, &sizes, &maxi, &psw, &out}, num_weights * dim + n * dim);
  visit_float(ct, [&](auto tag) {
    using T = decltype(tag);
    nk::Kernels<T>::embedding_bag_backward(ptr<T>(g), ptr<int64_t>(idx), ptr<int64_t>(bag), n, bags, dim,
                                           num_weights, mode, ptr<T>(psw), pad, ptr<int64_t>(sizes),
                                           ptr<int64_t>(maxi), scale_grad_by_freq ? counts.data() : nullptr,
                                           ptr<T>(out));
  });
  return as_dtype(out, grad.dtype());
}

Tensor _embedding_bag_per_sample_weights_backward(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                                                  const Tensor& offset2bag, int64_t mode,
                                                  std::optional<int64_t> padding_idx) {
  EMBER_CHECK(mode == 0, Runtime, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  check_floating(grad, "embedding_bag_per_sample_weights_backward");
  EMBER_CHECK(grad.dim() == 2 && weight.dim() == 2 && grad.sizes()[1] == weight.sizes()[1], Runtime,
              "_embedding_bag_per_sample_weights_backward: grad ", sizes_str(grad.sizes()), " does not match weight ",
              sizes_str(weight.sizes()));
  const int64_t rows = weight.sizes()[0], dim = weight.sizes()[1], bags = grad.sizes()[0];
  const Tensor idx = embedding_indices(indices, rows);
  const Tensor bag = dense(offset2bag, ScalarType::Int64);
  const int64_t n = idx.numel();
  EMBER_CHECK(bag.numel() == n, Runtime, "_embedding_bag_per_sample_weights_backward: offset2bag does not match");
  for (int64_t i = 0; i < n; ++i)
    EMBER_CHECK(ptr<int64_t>(bag)[i] < bags, Runtime, "_embedding_bag_per_sample_weights_backward: offset2bag out of range");
  const int64_t pad = bag_padding_idx(padding_idx, rows);
  const ScalarType ct = compute_dtype(grad.dtype());
  const Tensor g = dense(grad, ct), w = dense(weight, ct);
  Tensor out = empty_tensor(Dims{n}, ct);
  PinnedWork work({&g, &w, &idx, &bag, &out}, n * dim);
  visit_float(ct, [&](auto tag) {
    using T = decltype(tag);
    nk::Kernels<T>::embedding_bag_psw_backward(ptr<T>(g), ptr<T>(w), ptr<int64_t>(idx), ptr<int64_t>(bag), n, dim,
                                               pad, ptr<T>(out));
  });
  return as_dtype(out, grad.dtype());
}

}  // namespace ember::ops
