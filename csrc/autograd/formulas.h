// Helpers the backward formulas of declarations/derivatives.yaml call. Written with the
// autograd-aware API (ember::api), so that backward under create_graph records too.
#pragma once
#include <array>
#include <optional>
#include <tuple>
#include <string>
#include <vector>
#include "api_decl.h"  // generated

namespace ember::api {

// Tensor arithmetic for formulas: grad * other, -grad, grad / 2.0 ...
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator*(const Tensor& a, double s);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(const Tensor& a, const Scalar& s);
Tensor operator/(const Tensor& a, const Scalar& s);

Tensor scalar(double v, const Tensor& like);  // a 0-dim tensor of like's dtype
Tensor zeros_of(IntList sizes, ScalarType dtype);
Tensor zero_grad_like(const Tensor& grad);
Tensor masked_grad(const Tensor& grad, const Tensor& mask);  // grad where mask, else 0
Tensor mT(const Tensor& t);
Tensor mH(const Tensor& t);  // the conjugate transpose (mT for real tensors)

// Broadcasting and reductions
Tensor sum_to(const Tensor& grad, IntList shape);  // the inverse of broadcasting
Tensor unsqueeze_reduced(const Tensor& t, IntList sizes, std::optional<IntList> dim, bool keepdim);
Tensor expand_reduced(const Tensor& grad, IntList sizes, std::optional<IntList> dim, bool keepdim);
int64_t reduced_numel(IntList sizes, std::optional<IntList> dim);
Tensor nanmean_backward(const Tensor& grad, const Tensor& self, std::optional<IntList> dim, bool keepdim);
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<IntList> dim, bool keepdim);
// amax/amin/max()/min()/median(): shared evenly among the elements equal to the result.
Tensor extremum_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<IntList> dim,
                         bool keepdim);
Tensor aminmax_backward(const Tensor& gmin, const Tensor& gmax, const Tensor& self, const Tensor& min,
                        const Tensor& max, std::optional<int64_t> dim, bool keepdim);
// Results that picked elements along dim by index (max.dim, sort, topk...).
Tensor index_backward_dim(const Tensor& grad, IntList sizes, int64_t dim, const Tensor& indices, bool keepdim);
Tensor var_backward(const Tensor& grad, const Tensor& self, std::optional<IntList> dim, double correction, bool keepdim);
Tensor std_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<IntList> dim,
                    double correction, bool keepdim);
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntList dim, bool keepdim);
Tensor norm_backward(const Tensor& grad, const Tensor& self, const Tensor& result, const Scalar& ord,
                     std::optional<IntList> dim, bool keepdim);
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);
Tensor cummaxmin_backward(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t dim);
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim);

// Views: the gradient of a view is zeros with the view's region set (added, where
// the view reads an element twice) to grad.
Tensor permute_backward(const Tensor& grad, IntList dims);
Tensor narrow_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t start, int64_t length);
Tensor select_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t index);
Tensor slice_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t start, int64_t stop, int64_t step);
Tensor unfold_backward(const Tensor& grad, IntList sizes, int64_t dim, int64_t size, int64_t step);
Tensor as_strided_backward(const Tensor& grad, IntList self_sizes, IntList self_strides, int64_t self_offset,
                           IntList size, IntList stride, std::optional<int64_t> storage_offset);
Tensor diagonal_backward(const Tensor& grad, IntList sizes, int64_t offset, int64_t dim1, int64_t dim2);
Tensor cat_pieces(const std::vector<Tensor>& grads, IntList sizes, int64_t dim);

// Joining and data movement
std::vector<Tensor> split_like(const Tensor& grad, const std::vector<Dims>& sizes, int64_t dim);
std::vector<Tensor> split_stacked(const Tensor& grad, const std::vector<Dims>& sizes, int64_t dim, size_t ndim);
Tensor roll_backward(const Tensor& grad, IntList shifts, IntList dims);
Tensor repeat_backward(const Tensor& grad, IntList sizes, IntList repeats);
Tensor tile_backward(const Tensor& grad, IntList sizes, IntList reps);
Tensor masked_select_backward(const Tensor& grad, IntList sizes, const Tensor& mask);
Tensor take_backward(const Tensor& grad, IntList sizes, const Tensor& index);
Tensor index_select_like(const Tensor& grad, int64_t dim, const Tensor& index, IntList source_sizes);
Tensor masked_scatter_source_grad(const Tensor& grad, const Tensor& mask, IntList source_sizes);
Tensor diag_backward(const Tensor& grad, IntList sizes, int64_t diagonal);
Tensor trace_backward(const Tensor& grad, IntList sizes);
Tensor repeat_interleave_backward(const Tensor& grad, IntList sizes, int64_t repeats, std::optional<int64_t> dim);
Tensor repeat_interleave_tensor_backward(const Tensor& grad, IntList sizes, const Tensor& repeats,
                                        std::optional<int64_t> dim);
Tensor take_along_dim_backward(const Tensor& grad, IntList sizes, const Tensor& indices, std::optional<int64_t> dim);
std::vector<Tensor> meshgrid_backward(const std::vector<Tensor>& grads, const std::vector<Dims>& sizes,
                                      const std::optional<std::string>& indexing);
std::vector<Tensor> cartesian_prod_backward(const Tensor& grad, const std::vector<Dims>& sizes);
Tensor scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                               const Tensor& src, const std::string& reduce, bool include_self, const Tensor& result,
                               bool for_self);
// Advanced indexing (not declared ops: the binding's x[idx] and x[a:b:c] use them).
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
Tensor slice(const Tensor& self, int64_t dim, int64_t start, int64_t stop, int64_t step);

// Pointwise
Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps);
Tensor div_other_grad(const Tensor& grad, const Tensor& self, const Tensor& other);
// complex numbers (Note [Complex dtypes])
Scalar conj_scalar(const Scalar& s);
Tensor angle_backward(const Tensor& grad, const Tensor& self);
Tensor angle_backward_polar(const Tensor& grad, const Tensor& result);
Tensor sgn_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
Tensor imag_of_grad(const Tensor& grad);
Tensor real_part(const Tensor& grad);  // real(grad), for formulas whose arguments are named real
Tensor pow_self_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent);
Tensor pow_exponent_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result);
Tensor copysign_grad(const Tensor& grad, const Tensor& self, const Tensor& result);
Tensor xlogy_self_grad(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor maximum_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max, bool for_self);
Tensor fmax_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max, bool for_self);
Tensor clamp_grad(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max);
Tensor clamp_tensor_grad(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max, int which);
Tensor where_grad(const Tensor& condition, const Tensor& grad, bool take_true);

// Linear algebra
Tensor mm_mat1_grad(const Tensor& grad, const Tensor& mat1, const Tensor& mat2);
Tensor mm_mat2_grad(const Tensor& grad, const Tensor& mat1, const Tensor& mat2);
Tensor matmul_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int which);
Tensor kron_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int which);
int64_t cross_dim(IntList sizes, std::optional<int64_t> dim);
Tensor solve_backward_A(const Tensor& grad, const Tensor& A, const Tensor& B, const Tensor& X, bool left);
Tensor solve_backward_B(const Tensor& grad, const Tensor& A, const Tensor& B, bool left);
Tensor det_backward(const Tensor& grad, const Tensor& A, const Tensor& det);
// gsign, glogabs: the outputs' gradients (either undefined).
Tensor slogdet_backward(const Tensor& gsign, const Tensor& glogabs, const Tensor& A);
Tensor cholesky_backward(const Tensor& grad, const Tensor& L, bool upper);
// linalg.eig's (gL, gV: gradients of the eigenvalues and eigenvectors, either undefined).
Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& A);
Tensor eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& A, const std::string& UPLO);
Tensor svdvals_backward(const Tensor& gS, const Tensor& A);
Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& A);
Tensor qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& A, const std::string& mode);
// factorizations (csrc/autograd/formulas_linalg.cpp)
Tensor lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots);
Tensor lu_solve_backward_LU(const Tensor& grad, const Tensor& LU, const Tensor& pivots, const Tensor& X, bool left,
                            bool adjoint);
Tensor lu_unpack_backward(const Tensor& gL, const Tensor& gU, IntList LU_sizes);
Tensor solve_triangular_backward_A(const Tensor& grad, const Tensor& A, const Tensor& X, bool upper, bool left,
                                   bool unitriangular);

// fft (csrc/autograd/formulas_fft.cpp): the gradients of _fft_r2c and _fft_c2r.
Tensor fft_r2c_grad(const Tensor& grad, IntList dim, int64_t normalization, bool onesided, IntList self_sizes);
Tensor fft_c2r_grad(const Tensor& grad, IntList dim, int64_t normalization);

// nn (csrc/autograd/formulas_nn.cpp): the gradients of the losses, and the double
// backward of softmax and of the activations' backward ops (grad: the incoming
// gradient, grad_output: the backward op's own gradient input).
Tensor softmax_backward_output_grad(const Tensor& grad, const Tensor& grad_output, const Tensor& output, int64_t dim);
Tensor log_softmax_backward_grad_grad(const Tensor& grad, const Tensor& output, int64_t dim);
Tensor log_softmax_backward_output_grad(const Tensor& grad, const Tensor& grad_output, const Tensor& output,
                                        int64_t dim);
Tensor cross_entropy_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                               int64_t reduction, int64_t ignore_index, double label_smoothing, const Tensor& lse);
Tensor mse_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction);
Tensor smooth_l1_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                           double beta);
Tensor huber_loss_grad(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, double delta);
Tensor binary_cross_entropy_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                                 int64_t reduction);
Tensor binary_cross_entropy_target_grad(const Tensor& grad, const Tensor& self, const Tensor& target,
                                        const Tensor& weight, int64_t reduction);
Tensor bce_with_logits_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                            const Tensor& pos_weight, int64_t reduction);
Tensor bce_with_logits_target_grad(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                                   const Tensor& pos_weight, int64_t reduction);
Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            const std::string& approximate);
Tensor silu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
Tensor mish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
Tensor softplus_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& beta,
                                const Scalar& threshold);
Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self, const Scalar& alpha,
                           const Scalar& scale, const Scalar& input_scale);
Tensor hardswish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
Tensor conv_bias_grad(const Tensor& grad);  // grad summed over every dim but 1
// Max pooling: grad added back at the flat positions the indices name in each plane of
// the last `spatial` dims.
Tensor pool_backward_by_indices(const Tensor& grad, IntList self_sizes, const Tensor& indices, int64_t spatial);
Dims last_dims(IntList sizes, int64_t n);
// The normalizations' gradients: the native backward op, or, when the gradients must
// record (create_graph with inputs that require grad), the same formulas composed of
// ember::api ops, so that double backward works. The statistics are recomputed from
// the input there (the saved ones carry no history to it).
std::tuple<Tensor, Tensor, Tensor> layer_norm_grads(const Tensor& grad, const Tensor& input, IntList normalized_shape,
                                                    const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                                    const Tensor& bias, double eps);
std::tuple<Tensor, Tensor> rms_norm_grads(const Tensor& grad, const Tensor& input, IntList normalized_shape,
                                          const Tensor& rstd, const Tensor& weight, std::optional<double> eps);
std::tuple<Tensor, Tensor, Tensor> batch_norm_grads(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                    const Tensor& save_mean, const Tensor& save_invstd, bool training,
                                                    double eps);
std::tuple<Tensor, Tensor, Tensor> group_norm_grads(const Tensor& grad, const Tensor& input, const Tensor& mean,
                                                    const Tensor& rstd, const Tensor& weight, int64_t N, int64_t C,
                                                    int64_t HxW, int64_t group, double eps);
Tensor embedding_backward_grad_grad(const Tensor& grad, const Tensor& indices, int64_t padding_idx,
                                    bool scale_grad_by_freq);

// The special functions (autograd/formulas_special.cpp)
Tensor special_i1_grad(const Tensor& grad, const Tensor& self, const Tensor& result, bool scaled);
Tensor sinc_grad(const Tensor& grad, const Tensor& self);
Tensor xlog1py_self_grad(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor igamma_other_grad(const Tensor& self, const Tensor& other);
Tensor mvlgamma_grad(const Tensor& grad, const Tensor& self, int64_t p);
// Raises torch's NotImplementedError "the derivative for '<what>' is not implemented."
[[noreturn]] Tensor not_implemented_grad(const char* what);

}  // namespace ember::api
