// Searching sorted data, counting and selecting by frequency
// (declarations/ops/search.yaml). The walks over rows (grouping equal slices, binary
// search, counting) read contiguous copies widened to int64 or float64, so each is
// written once for two element types; sorting is movement.yaml's sort.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>
#include "ops/elementwise.h"
#include "ops/internal.h"
#include "ops/geometry.h"
#include "ops_decl.h"

namespace ember::ops {
namespace {

// The dtype the walks compare in: float64 for floating dtypes, int64 for the others.
ScalarType wide_dtype(ScalarType t) {
  if (is_complex(t)) fail_complex_dtype(t);
  return is_floating(t) ? ScalarType::Float64 : ScalarType::Int64;
}

// A contiguous copy of t in dtype (t itself when it already is one).
Tensor contiguous_as(const Tensor& t, ScalarType dtype) {
  return contiguous(to_dtype(t, dtype, false, false, std::nullopt), MemoryFormat::Contiguous);
}

// f(const T*) on a contiguous int64 or float64 tensor.
template <class F>
void visit_wide(const Tensor& w, F&& f) {
  if (w.dtype() == ScalarType::Float64) f(reinterpret_cast<const double*>(w.data()));
  else f(reinterpret_cast<const int64_t*>(w.data()));
}

Tensor long_tensor(const std::vector<int64_t>& v, IntList shape) {
  Tensor t = empty_tensor(shape, ScalarType::Int64);
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

Tensor long_vector(const std::vector<int64_t>& v) {
  int64_t n[] = {int64_t(v.size())};
  return long_tensor(v, IntList(n, 1));
}

// a sorts before b: ascending, NaN last (sort's order).
template <class T>
bool before(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a < b || (std::isnan(b) && !std::isnan(a));
  else return a < b;
}

// The distinct slices of self along dim d (or its distinct elements when flat): the
// rows of self moved to dim 0 and flattened are grouped, after a stable lexicographic
// sort when sort is set, else as runs of equal consecutive rows. NaN equals nothing,
// as in torch (each NaN is its own value).
std::vector<Tensor> groups(const Tensor& self, std::optional<int64_t> dim, bool sort, const char* op) {
  Tensor src = self;
  int64_t d = 0;
  if (dim) {
    EMBER_CHECK(self.dim() > 0, Index, "Dimension specified as ", *dim, " but tensor has no dimensions");
    d = wrap_dim(*dim, self.dim());
  } else {
    src = reshape(self, {-1});
  }
  const int64_t n = src.sizes()[d];
  const int64_t width = n == 0 ? 0 : src.numel() / n;
  if (dim && n > 0)
    EMBER_CHECK(width > 0 || src.dim() == 1, Runtime,
                "There are 0 sized dimensions, and they aren't selected, so ", op, " cannot be applied");
  std::vector<int64_t> order(size_t(n), 0), inverse(size_t(n), 0), counts, firsts;
  std::iota(order.begin(), order.end(), int64_t(0));
  if (n > 0) {
    Tensor rows = contiguous_as(reshape(movedim_int(src, d, 0), {n, std::max<int64_t>(width, 1)}),
                                wide_dtype(self.dtype()));
    visit_wide(rows, [&](const auto* data) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(data)>>;
      auto row = [&](int64_t i) { return data + i * width; };
      if (sort)
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          const T *ra = row(a), *rb = row(b);
          for (int64_t k = 0; k < width; ++k) {
            if (before(ra[k], rb[k])) return true;
            if (before(rb[k], ra[k])) return false;
          }
          return false;
        });
      for (int64_t i = 0; i < n; ++i) {
        const T* r = row(order[i]);
        const bool same = i > 0 && std::equal(r, r + width, row(order[i - 1]));
        if (!same) {
          counts.push_back(0);
          firsts.push_back(order[i]);
        }
        counts.back() += 1;
        inverse[order[i]] = int64_t(counts.size()) - 1;
      }
    });
  }
  Tensor values = index_select(src, d, long_vector(firsts), Out{});
  Tensor inv = long_vector(inverse);
  if (!dim) inv = view(inv, self.sizes());
  return {values, inv, long_vector(counts)};
}

}  // namespace

std::vector<Tensor> _unique(const Tensor& self, bool sorted, bool return_inverse, bool return_counts,
                            std::optional<int64_t> dim) {
  (void)sorted, (void)return_inverse, (void)return_counts;  // always sorted, as torch on CPU
  return groups(self, dim, true, "unique");
}

std::vector<Tensor> _unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts,
                                        std::optional<int64_t> dim) {
  (void)return_inverse, (void)return_counts;
  return groups(self, dim, false, "unique_consecutive");
}

// ---------------------------------------------------------------- searchsorted

namespace {

// The first index in the row (read through order when given) whose element is >= v
// (> v when right); a NaN v goes past every element.
template <class T>
int64_t bound(const T* row, const int64_t* order, int64_t n, T v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const T m = row[order ? order[mid] : mid];
    if (right ? !(m > v) : !(m >= v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32, bool right,
                    std::optional<std::string> side, const Tensor& sorter, const Out& out) {
  const char* op = "torch.searchsorted(): ";
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right", Runtime, op, "side can only be 'left' or 'right' but got ", *side);
    EMBER_CHECK(!(*side == "left" && right), Runtime, op,
                "side and right can't be set to opposites, got side of left while right was True");
    right = *side == "right";
  }
  const Tensor& seq = sorted_sequence;
  EMBER_CHECK(seq.dim() > 0, Runtime, op, "boundaries tensor should have positive dimension, but got 0 dimension");
  EMBER_CHECK(seq.dim() == 1 || input.dim() > 0, Runtime, op,
              "input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim(",
              seq.dim(), ") and input value's dim(", input.dim(), ") numel(", input.numel(), ")");
  if (seq.dim() > 1) {
    bool match = seq.dim() == input.dim();
    for (int64_t k = 0; match && k + 1 < seq.dim(); ++k) match = seq.sizes()[k] == input.sizes()[k];
    EMBER_CHECK(match, Runtime, op,
                "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input "
                "value tensor must match, but we got boundaries tensor ", sizes_str(seq.sizes()),
                " and input value tensor ", sizes_str(input.sizes()));
  }
  if (sorter.defined()) {
    EMBER_CHECK(sorter.dtype() == ScalarType::Int64, Runtime, op, "sorter must be a tensor of long dtype but got ",
                type_name(sorter.dtype()));
    EMBER_CHECK(sorter.sizes() == seq.sizes(), Runtime, op,
                "boundary and sorter must have the same size, but got boundary tensor ", sizes_str(seq.sizes()),
                "and got sorter tensor ", sizes_str(sorter.sizes()));
  }
  for (const Tensor* t : {&seq, &input})
    EMBER_CHECK(t->dtype() != ScalarType::Bool, NotImplemented, "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  const int64_t len = seq.sizes()[seq.dim() - 1];
  Tensor order;
  if (sorter.defined()) {
    order = contiguous_as(sorter, ScalarType::Int64);
    const int64_t* o = reinterpret_cast<const int64_t*>(order.data());
    for (int64_t i = 0; i < order.numel(); ++i)
      EMBER_CHECK(o[i] >= 0 && o[i] < len, Runtime, op, "sorter index out of range");
  }
  for (ScalarType t : {seq.dtype(), input.dtype()})
    if (is_complex(t)) fail_complex_dtype(t);
  const ScalarType wide = is_floating(seq.dtype()) || is_floating(input.dtype()) ? ScalarType::Float64 : ScalarType::Int64;
  Tensor rows = contiguous_as(seq, wide), values = contiguous_as(input, wide);
  const int64_t count = values.numel();
  // values per row of the sequence: all of them for a 1-D sequence
  const int64_t per_row = seq.dim() == 1 ? std::max<int64_t>(count, 1) : input.sizes()[input.dim() - 1];
  std::vector<int64_t> result(size_t(count), 0);
  visit_wide(rows, [&](const auto* seq_data) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(seq_data)>>;
    const T* v = reinterpret_cast<const T*>(values.data());
    const int64_t* o = order.defined() ? reinterpret_cast<const int64_t*>(order.data()) : nullptr;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t r = i / per_row;
      result[i] = bound(seq_data + r * len, o ? o + r * len : nullptr, len, v[i], right);
    }
  });
  Tensor r = long_tensor(result, input.sizes());
  if (out_int32) r = to_dtype(r, ScalarType::Int32, false, false, std::nullopt);
  if (!out.tensor.defined()) return r;
  return copy_(resolve_out(out, r.sizes(), r.dtype(), "searchsorted"), r, false);
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right, const Out& out) {
  EMBER_CHECK(boundaries.dim() == 1, Runtime, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right, std::nullopt, Tensor(), out);
}

// ---------------------------------------------------------------- counting

Tensor bincount(const Tensor& self, const Tensor& weights, int64_t minlength) {
  EMBER_CHECK(!is_floating(self.dtype()) && self.dtype() != ScalarType::Bool, NotImplemented,
              "\"bincount_cpu\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(minlength >= 0, Runtime, "minlength should be >= 0");
  Tensor idx = contiguous_as(self, ScalarType::Int64);
  const int64_t* x = reinterpret_cast<const int64_t*>(idx.data());
  const int64_t n = self.numel();
  bool valid = self.dim() == 1;
  int64_t bins = minlength;
  for (int64_t i = 0; valid && i < n; ++i) {
    valid = x[i] >= 0;
    bins = std::max(bins, x[i] + 1);
  }
  EMBER_CHECK(valid, Runtime, "bincount only supports 1-d non-negative integral inputs.");
  int64_t shape[] = {bins};
  if (!weights.defined()) {
    std::vector<int64_t> counts(size_t(bins), 0);
    for (int64_t i = 0; i < n; ++i) ++counts[x[i]];
    return long_tensor(counts, IntList(shape, 1));
  }
  EMBER_CHECK(weights.dim() == 1 && weights.numel() == n, Runtime,
              "weights should be 1-d and have the same length as input");
  if (is_complex(weights.dtype())) fail_complex_dtype(weights.dtype());
  Tensor w = contiguous_as(weights, ScalarType::Float64);
  const double* wd = reinterpret_cast<const double*>(w.data());
  Tensor sums = zeros(IntList(shape, 1), ScalarType::Float64);
  double* s = reinterpret_cast<double*>(sums.data());
  for (int64_t i = 0; i < n; ++i) s[x[i]] += wd[i];
  // torch: float32 weights sum in float32, every other dtype in float64
  return weights.dtype() == ScalarType::Float32 ? to_dtype(sums, ScalarType::Float32, false, false, std::nullopt) : sums;
}

Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, const Out& out) {
  EMBER_CHECK(is_floating(self.dtype()), NotImplemented, "\"histogram_cpu\" not implemented for '",
              type_name(self.dtype()), "'");
  EMBER_CHECK(bins > 0, Runtime, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  Tensor x = contiguous_as(self, ScalarType::Float64);
  const double* v = reinterpret_cast<const double*>(x.data());
  const int64_t n = x.numel();
  std::vector<int64_t> counts(size_t(bins), 0);
  // The edges and the bin arithmetic are in the input's dtype, each step rounded to it
  // as torch's are (float16/bfloat16 too): an element near an edge lands where torch's does.
  const ScalarType dt = self.dtype();
  auto fill = [&](auto zero) {
    using T = decltype(zero);
    auto round = [dt](T x) -> T {
      if constexpr (std::is_same_v<T, float>) {
        if (dt == ScalarType::Float16) return float(Half(x));
        if (dt == ScalarType::BFloat16) return float(BFloat16(x));
      }
      return x;
    };
    T lo = round(T(min.to_double())), hi = round(T(max.to_double()));
    EMBER_CHECK(!(lo > hi), Runtime, "torch.histc: max must be larger than min");
    if (lo == hi && n > 0) {  // the data's range (NaN propagates into it)
      lo = hi = T(v[0]);
      for (int64_t i = 0; i < n; ++i) {
        const T e = T(v[i]);
        if (std::isnan(e) || std::isnan(lo)) lo = hi = e + lo;
        else lo = std::min(lo, e), hi = std::max(hi, e);
      }
    }
    if (lo == hi) lo = round(lo - 1), hi = round(hi + 1);
    EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), Runtime, "torch.histc: range of [", lo, ", ", hi,
                "] is not finite");
    const T span = round(hi - lo);
    for (int64_t i = 0; i < n; ++i) {
      const T e = T(v[i]);
      if (!(e >= lo && e <= hi)) continue;
      const int64_t b = int64_t(round(round(round(e - lo) * T(bins)) / span));
      counts[std::min(b, bins - 1)] += 1;
    }
  };
  if (self.dtype() == ScalarType::Float64) fill(double{});
  else fill(float{});
  int64_t shape[] = {bins};
  Tensor r = to_dtype(long_tensor(counts, IntList(shape, 1)), self.dtype(), false, false, std::nullopt);
  if (!out.tensor.defined()) return r;
  return copy_(resolve_out(out, r.sizes(), r.dtype(), "histc"), r, false);
}

// ---------------------------------------------------------------- order statistics

namespace {

// values/indices at position pos (one per row, keepdim shape) along d of sort's output.
std::tuple<Tensor, Tensor> pick(const Tensor& values, const Tensor& idx, int64_t d, const Tensor& pos, bool keepdim) {
  Tensor v = gather(values, d, pos, false, Out{}), i = gather(idx, d, pos, false, Out{});
  if (!keepdim) v = squeeze_dim(v, d), i = squeeze_dim(i, d);
  return {v, i};
}

}  // namespace

std::tuple<Tensor, Tensor> nanmedian_dim(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"median_out\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(self.dtype() != ScalarType::Bool, NotImplemented, "\"nanmedian_cpu\" not implemented for 'Bool'");
  if (!is_floating(self.dtype())) return median_dim(self, dim, keepdim);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(n > 0, Index, "median(): Expected reduction dim ", d, " to have non-zero size.");
  auto [values, idx] = sort(self, d, false);  // NaN sorts last
  if (self.dim() == 0) return {values, idx};
  int64_t dims[] = {d};
  // the lower median of the k non-NaN values of each row; the first NaN when k == 0
  Tensor nans = contiguous_as(sum_dim_IntList(isnan(self), IntList(dims, 1), true, std::nullopt, Out{}),
                              ScalarType::Int64);
  std::vector<int64_t> pos(size_t(nans.numel()));
  const int64_t* c = reinterpret_cast<const int64_t*>(nans.data());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = std::max<int64_t>(n - c[i] - 1, 0) / 2;
  return pick(values, idx, d, long_tensor(pos, nans.sizes()), keepdim);
}

Tensor nanmedian(const Tensor& self) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"median_cpu\" not implemented for '", type_name(self.dtype()), "'");
  EMBER_CHECK(self.dtype() != ScalarType::Bool, NotImplemented, "\"nanmedian_cpu\" not implemented for 'Bool'");
  if (self.numel() == 0)  // torch: NaN, converted to the dtype
    return to_dtype(scalar_tensor(Scalar(NAN), ScalarType::Float64), self.dtype(), false, false, std::nullopt);
  return std::get<0>(nanmedian_dim(reshape(self, {-1}), 0, false));
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_CHECK(!is_complex(self.dtype()), NotImplemented, "\"mode_cpu\" not implemented for '", type_name(self.dtype()), "'");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(n > 0, Index, "mode(): Expected reduction dim ", d,
              " to have non-zero size.");
  if (self.dim() == 0) return {clone(self, std::nullopt), zeros({}, ScalarType::Int64)};
  // Note [mode's order]: per row, the (value, index) pairs are put in order by value
  // with std::sort and `<` (so with NaNs, whose comparisons are all false, wherever that
  // leaves them), and the mode is the last element of the first longest run of equal
  // values. This is the order torch's CPU kernel makes, NaN included, so the results
  // (and the index picked among equal values) are torch's.
  Tensor rows = contiguous_as(movedim_int(self, d, -1), wide_dtype(self.dtype()));
  const int64_t count = rows.numel() / n;
  std::vector<int64_t> pos(size_t(count), 0);
  visit_wide(rows, [&](const auto* data) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(data)>>;
    std::vector<std::pair<T, int64_t>> row(static_cast<size_t>(n));
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t i = 0; i < n; ++i) row[size_t(i)] = {data[r * n + i], i};
      std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      int64_t best_len = 0, len = 0;
      for (int64_t i = 0; i < n; ++i) {
        ++len;
        if (i + 1 < n && row[size_t(i)].first == row[size_t(i + 1)].first) continue;
        if (len > best_len) best_len = len, pos[r] = row[size_t(i)].second;
        len = 0;
      }
    }
  });
  std::vector<int64_t> moved(self.sizes().begin(), self.sizes().end());
  moved.erase(moved.begin() + d);
  moved.push_back(1);
  Tensor idx = contiguous(movedim_int(view(long_vector(pos), moved), -1, d), MemoryFormat::Contiguous);
  Tensor values = gather(self, d, idx, false, Out{});
  if (!keepdim) values = squeeze_dim(values, d), idx = squeeze_dim(idx, d);
  return {values, idx};
}

}  // namespace ember::ops
