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

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;  // they shape the gradient only
  EMBER_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32, Runtime,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got ",
              "torch.", type_name(indices.dtype()), "Tensor instead (while checking arguments for embedding)");
  EMBER_CHECK(weight.dim() == 2, Runtime, "'weight' must be 2-D");
  const Tensor idx = embedding_indices(indices, weight.sizes()[0]);
  const int64_t n = idx.numel(), row_bytes = weight.sizes()[1] * weight.itemsize();
  Dims sizes(indices.sizes());
  sizes.push_back(weight.sizes()[1]);
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

}  // namespace ember::ops
