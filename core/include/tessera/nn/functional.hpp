// ts::nn::functional (PyTorch: torch.nn.functional): the transformer ops on module values. Each
// takes nn::Value (a Tensor or a DTensor; a Parameter converts to one) and runs the Tensor op or
// the DTensor op (with its sharding rule) on what it holds; a Tensor and a DTensor together follow
// the DTensor op's rule for a Tensor operand. The Tensor and DTensor overloads in tessera/ops.hpp
// and tessera/dtensor_ops.hpp stay usable directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/nn/value.hpp"
#include "tessera/dtensor_ops.hpp"
#include "tessera/ops.hpp"

namespace tessera::nn::functional {

// x @ weight^T + bias, weight [out, in] (PyTorch's layout). An undefined bias Value means none.
Value linear(const Value& x, const Value& weight, const Value& bias = Value());
Value embedding(const Value& indices, const Value& weight);
Value layer_norm(const Value& x, const std::vector<int64_t>& normalized_shape, const Value& weight = Value(),
                 const Value& bias = Value(), double eps = 1e-5);
Value rms_norm(const Value& x, const std::vector<int64_t>& normalized_shape, const Value& weight = Value(),
               std::optional<double> eps = std::nullopt);
Value dropout(const Value& x, double p = 0.5, bool training = true);
Value relu(const Value& x);
Value silu(const Value& x);
Value gelu(const Value& x, std::string_view approximate = "none");
Value softmax(const Value& x, int64_t dim);
Value scaled_dot_product_attention(const Value& q, const Value& k, const Value& v,
                                   const Value& attn_mask = Value(), double dropout_p = 0.0,
                                   bool is_causal = false, std::optional<double> scale = std::nullopt,
                                   bool enable_gqa = false);
Value cross_entropy(const Value& logits, const Value& target, const CrossEntropyOptions& options = {});

Value add(const Value& a, const Value& b);
Value sub(const Value& a, const Value& b);
Value mul(const Value& a, const Value& b);
Value matmul(const Value& a, const Value& b);
Value view(const Value& x, const Shape& shape);
Value reshape(const Value& x, const Shape& shape);
Value transpose(const Value& x, int64_t dim0, int64_t dim1);
Value to(const Value& x, DType dtype);

// The other ops of the transformer vocabulary, with their Tensor and DTensor overloads.
using tessera::clamp;
using tessera::cos;
using tessera::cumsum;
using tessera::gather;
using tessera::index_select;
using tessera::log_softmax;
using tessera::masked_fill;
using tessera::mse_loss;
using tessera::nll_loss;
using tessera::one_hot;
using tessera::rsqrt;
using tessera::scatter_add;
using tessera::sigmoid;
using tessera::sin;
using tessera::tanh;
using tessera::tril;
using tessera::triu;
using tessera::where;

}  // namespace tessera::nn::functional

namespace tessera::nn {

inline Value operator+(const Value& a, const Value& b) { return functional::add(a, b); }
inline Value operator-(const Value& a, const Value& b) { return functional::sub(a, b); }
inline Value operator*(const Value& a, const Value& b) { return functional::mul(a, b); }

}  // namespace tessera::nn
