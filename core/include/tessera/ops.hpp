// Operations on tensors. Binary operations broadcast (NumPy rules) and promote dtypes as PyTorch
// does; a Scalar operand takes part in promotion as a Python number would.
#pragma once

#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "tessera/generator.hpp"
#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

// Element-wise binary.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integer inputs give float32
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

#define TESSERA_SCALAR_OVERLOADS(name)    \
  Tensor name(const Tensor& a, Scalar b); \
  Tensor name(Scalar a, const Tensor& b);
TESSERA_SCALAR_OVERLOADS(add)
TESSERA_SCALAR_OVERLOADS(sub)
TESSERA_SCALAR_OVERLOADS(mul)
TESSERA_SCALAR_OVERLOADS(div)
TESSERA_SCALAR_OVERLOADS(pow)
TESSERA_SCALAR_OVERLOADS(maximum)
TESSERA_SCALAR_OVERLOADS(minimum)
TESSERA_SCALAR_OVERLOADS(eq)
TESSERA_SCALAR_OVERLOADS(ne)
TESSERA_SCALAR_OVERLOADS(lt)
TESSERA_SCALAR_OVERLOADS(le)
TESSERA_SCALAR_OVERLOADS(gt)
TESSERA_SCALAR_OVERLOADS(ge)
#undef TESSERA_SCALAR_OVERLOADS

// Element-wise unary. exp, log, sqrt, tanh, sigmoid and gelu give float32 for integer inputs.
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor gelu(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);

// Reductions. An empty `dims` reduces every dim. sum and prod of integer/bool tensors give int64.
Tensor sum(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor max(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor min(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor all(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor any(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& a);  // index into the flattened tensor
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& a);
Tensor argmin(const Tensor& a, int64_t dim, bool keepdim = false);

// Linear algebra (torch.matmul rules: 1-d operands, batch broadcasting).
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // 2-d x 2-d
Tensor bmm(const Tensor& a, const Tensor& b);  // 3-d x 3-d, equal batch

Tensor softmax(const Tensor& a, int64_t dim);
Tensor log_softmax(const Tensor& a, int64_t dim);

// Indexing along one dim (PyTorch semantics; indices int64 or int32, values in [0, size)).
// gather: out[i] = x[i with dim replaced by index[i]], index as many dims as x.
// scatter_add: out of place; x plus src[i] added at those positions, in a fixed order.
// index_select: the slices of x along dim that a 1-d index names.
// embedding: rows of weight [vocabulary, dim] for indices of any shape -> indices.shape + [dim].
// one_hot: int64, indices.shape + [num_classes]; -1 infers one more than the largest index.
// Gradients flow to x / weight / src (a scatter_add into zeros for gather, index_select, embedding).
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor embedding(const Tensor& indices, const Tensor& weight);
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// Losses (PyTorch's formulas). Targets are class indices (int64 or int32): shape (N) for input
// (N, C), (N, d1, ...) for (N, C, d1, ...), 0-d for (C). Targets equal to ignore_index add nothing;
// "mean" divides by the number of the others. reduction: "mean", "sum" or "none".
struct CrossEntropyOptions {
  int64_t ignore_index = -100;
  std::string reduction = "mean";
  double label_smoothing = 0.0;
};
struct NllLossOptions {
  int64_t ignore_index = -100;
  std::string reduction = "mean";
};
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options = {});
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const NllLossOptions& options = {});
Tensor mse_loss(const Tensor& a, const Tensor& b, const std::string& reduction = "mean");

// PyTorch's math reference: softmax(q k^T * scale + mask) v with q (..., L, E), k (..., S, E),
// v (..., S, Ev). attn_mask: bool (true = attend) or a float bias added to the scores; `{}` for
// none. is_causal: query i attends keys j <= i (top-left aligned), not together with attn_mask.
// scale defaults to 1 / sqrt(E). enable_gqa: q may have a multiple of k/v's heads (dim -3), each
// k/v head serving that many query heads. dropout_p > 0 applies dropout() to the weights.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false);

// Zeroes each element with probability p and scales the rest by 1 / (1 - p) (p in [0, 1]);
// training = false or p = 0 returns x. Element i is kept when rand()'s number for it (the
// generator's counter at offset + i, row-major) is below 1 - p; the generator advances by numel.
// Without a generator: the default one (per rank inside a LocalMode), as rand().
Tensor dropout(const Tensor& x, double p, bool training = true);
Tensor dropout(const Tensor& x, double p, bool training, Generator& generator);

// Joining and splitting.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);

// Comparison of whole tensors.
bool equal(const Tensor& a, const Tensor& b);  // same shape and equal values
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);

// Transformer building blocks (PyTorch semantics).
// Element-wise: silu(x) = x sigmoid(x); gelu with approximate "none" (the exact erf form, as gelu(x))
// or "tanh"; sin, cos, rsqrt = 1 / sqrt. Integer inputs give float32.
Tensor silu(const Tensor& x);
Tensor gelu(const Tensor& x, std::string_view approximate);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor rsqrt(const Tensor& x);
// Elements below lo become lo, above hi become hi (NaN stays); at least one bound. The dtype is the
// promotion of x with the bounds, as torch.clamp's.
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi);
// cond (bool) ? a : b, the three broadcast together; a and b promote as a binary op's operands.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);
// x with `value` where mask (bool, broadcast to x's shape) is true; x's dtype is kept. A tensor
// value must be 0-d.
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
// The lower (tril) or upper (triu) triangle of the last two dims from the `diagonal`-th diagonal
// (0 the main one, > 0 above it); the rest zero. Batched over leading dims.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// Running sum along `dim`; integer and bool inputs give int64.
Tensor cumsum(const Tensor& x, int64_t dim);
// Normalisation over the trailing dims `normalized_shape` (biased variance). weight and bias may be
// undefined Tensors (none); each must have shape normalized_shape. rms_norm's eps defaults to the
// machine epsilon of x's dtype, as PyTorch's.
Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor rms_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                const Tensor& weight = Tensor(), std::optional<double> eps = std::nullopt);
// Free spellings of the view methods.
inline Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) { return t.transpose(dim0, dim1); }
inline Tensor permute(const Tensor& t, const std::vector<int64_t>& dims) { return t.permute(dims); }

// Operators.
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
inline Tensor operator+(Scalar a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(Scalar a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(Scalar a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(Scalar a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
// Comparison operators are element-wise and return bool tensors, as in libtorch.
inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }

}  // namespace tessera
