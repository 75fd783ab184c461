// nn::functional: each op runs the Tensor or the DTensor overload on what its Values hold.
#include "tessera/nn/functional.hpp"

#include <fmt/format.h>

#include "tessera/dtensor_ops.hpp"
#include "tessera/errors.hpp"

namespace tessera::nn::functional {
namespace {

std::optional<DTensor> optional_dtensor(const Value& value, const char* op, const char* what) {
  if (!value.defined()) return std::nullopt;
  if (!value.is_dtensor())
    throw Error(
        fmt::format("nn::functional::{}: x is a DTensor but {} is a {}; pass a DTensor {} (e.g. a "
                    "Replicate one) or call the op on local tensors",
                    op, what, value.kind(), what));
  return value.dtensor();
}

Tensor optional_tensor(const Value& value, const char* op, const char* what) {
  if (!value.defined()) return Tensor();
  if (value.is_dtensor())
    throw Error(
        fmt::format("nn::functional::{}: x is a Tensor but {} is a {}; convert x with "
                    "DTensor::from_local, or {} with to_local()/full_tensor()",
                    op, what, value.kind(), what));
  return value.tensor();
}

// A binary op: Tensor with Tensor, or any pairing with a DTensor.
template <class Op>
Value binary(const Value& a, const Value& b, Op op) {
  if (a.is_dtensor() && b.is_dtensor()) return op(a.dtensor(), b.dtensor());
  if (a.is_dtensor()) return op(a.dtensor(), b.tensor());
  if (b.is_dtensor()) return op(a.tensor(), b.dtensor());
  return op(a.tensor(), b.tensor());
}

}  // namespace

Value linear(const Value& x, const Value& weight, const Value& bias) {
  if (x.is_dtensor() != weight.is_dtensor())
    throw Error(
        fmt::format("nn::functional::linear: x is a {} but the weight is a {}; both must be Tensors or "
                    "both DTensors (parallelize the module, or pass its local tensors)",
                    x.kind(), weight.kind()));
  if (x.is_dtensor()) {
    DTensor y = tessera::matmul(x.dtensor(), weight.dtensor().t());
    if (const auto b = optional_dtensor(bias, "linear", "the bias")) y = y + *b;
    return y;
  }
  Tensor y = tessera::matmul(x.tensor(), weight.tensor().t());
  if (const Tensor b = optional_tensor(bias, "linear", "the bias"); b.defined()) y = y + b;
  return y;
}

Value embedding(const Value& indices, const Value& weight) {
  if (weight.is_dtensor()) {
    return indices.is_dtensor() ? tessera::embedding(indices.dtensor(), weight.dtensor())
                                : tessera::embedding(indices.tensor(), weight.dtensor());
  }
  if (indices.is_dtensor())
    throw Error(
        fmt::format("nn::functional::embedding: the indices are a {} but the weight is a {}; make the "
                    "weight a DTensor too",
                    indices.kind(), weight.kind()));
  return tessera::embedding(indices.tensor(), weight.tensor());
}

Value layer_norm(const Value& x, const std::vector<int64_t>& normalized_shape, const Value& weight,
                 const Value& bias, double eps) {
  if (x.is_dtensor())
    return tessera::layer_norm(x.dtensor(), normalized_shape,
                               optional_dtensor(weight, "layer_norm", "the weight"),
                               optional_dtensor(bias, "layer_norm", "the bias"), eps);
  return tessera::layer_norm(x.tensor(), normalized_shape,
                             optional_tensor(weight, "layer_norm", "the weight"),
                             optional_tensor(bias, "layer_norm", "the bias"), eps);
}

Value rms_norm(const Value& x, const std::vector<int64_t>& normalized_shape, const Value& weight,
               std::optional<double> eps) {
  if (x.is_dtensor())
    return tessera::rms_norm(x.dtensor(), normalized_shape,
                             optional_dtensor(weight, "rms_norm", "the weight"), eps);
  return tessera::rms_norm(x.tensor(), normalized_shape, optional_tensor(weight, "rms_norm", "the weight"),
                           eps);
}

Value dropout(const Value& x, double p, bool training) {
  if (x.is_dtensor()) return tessera::dropout(x.dtensor(), p, training);
  return tessera::dropout(x.tensor(), p, training);
}

Value relu(const Value& x) {
  return x.is_dtensor() ? Value(tessera::relu(x.dtensor())) : Value(tessera::relu(x.tensor()));
}

Value silu(const Value& x) {
  return x.is_dtensor() ? Value(tessera::silu(x.dtensor())) : Value(tessera::silu(x.tensor()));
}

Value gelu(const Value& x, std::string_view approximate) {
  if (x.is_dtensor()) return tessera::gelu(x.dtensor(), approximate);
  return tessera::gelu(x.tensor(), approximate);
}

Value softmax(const Value& x, int64_t dim) {
  return x.is_dtensor() ? Value(tessera::softmax(x.dtensor(), dim))
                        : Value(tessera::softmax(x.tensor(), dim));
}

Value scaled_dot_product_attention(const Value& q, const Value& k, const Value& v, const Value& attn_mask,
                                   double dropout_p, bool is_causal, std::optional<double> scale,
                                   bool enable_gqa) {
  if (q.is_dtensor() || k.is_dtensor() || v.is_dtensor()) {
    if (!q.is_dtensor() || !k.is_dtensor() || !v.is_dtensor())
      throw Error(
          fmt::format("nn::functional::scaled_dot_product_attention: q, k and v are {}, {} and {}; they "
                      "must be all Tensors or all DTensors",
                      q.kind(), k.kind(), v.kind()));
    return tessera::scaled_dot_product_attention(
        q.dtensor(), k.dtensor(), v.dtensor(),
        optional_dtensor(attn_mask, "scaled_dot_product_attention", "the mask"), dropout_p, is_causal, scale,
        enable_gqa);
  }
  return tessera::scaled_dot_product_attention(
      q.tensor(), k.tensor(), v.tensor(),
      optional_tensor(attn_mask, "scaled_dot_product_attention", "the mask"), dropout_p, is_causal, scale,
      enable_gqa);
}

Value cross_entropy(const Value& logits, const Value& target, const CrossEntropyOptions& options) {
  if (logits.is_dtensor()) {
    if (!target.is_dtensor())
      throw Error(
          fmt::format("nn::functional::cross_entropy: the logits are a {} but the target is a {}; make "
                      "the target a DTensor on the logits' mesh (e.g. Replicate)",
                      logits.kind(), target.kind()));
    return tessera::cross_entropy(logits.dtensor(), target.dtensor(), options);
  }
  return tessera::cross_entropy(logits.tensor(), optional_tensor(target, "cross_entropy", "the target"),
                                options);
}

Value add(const Value& a, const Value& b) {
  return binary(a, b, [](const auto& x, const auto& y) { return tessera::add(x, y); });
}

Value sub(const Value& a, const Value& b) {
  return binary(a, b, [](const auto& x, const auto& y) { return tessera::sub(x, y); });
}

Value mul(const Value& a, const Value& b) {
  return binary(a, b, [](const auto& x, const auto& y) { return tessera::mul(x, y); });
}

Value matmul(const Value& a, const Value& b) {
  if (a.is_dtensor() != b.is_dtensor())
    throw Error(
        fmt::format("nn::functional::matmul: the operands are a {} and a {}; both must be Tensors or "
                    "both DTensors",
                    a.kind(), b.kind()));
  if (a.is_dtensor()) return tessera::matmul(a.dtensor(), b.dtensor());
  return tessera::matmul(a.tensor(), b.tensor());
}

Value view(const Value& x, const Shape& shape) {
  return x.is_dtensor() ? Value(x.dtensor().view(shape)) : Value(x.tensor().view(shape));
}

Value reshape(const Value& x, const Shape& shape) {
  return x.is_dtensor() ? Value(x.dtensor().reshape(shape)) : Value(x.tensor().reshape(shape));
}

Value transpose(const Value& x, int64_t dim0, int64_t dim1) {
  return x.is_dtensor() ? Value(x.dtensor().transpose(dim0, dim1))
                        : Value(tessera::transpose(x.tensor(), dim0, dim1));
}

Value to(const Value& x, DType dtype) {
  return x.is_dtensor() ? Value(x.dtensor().to(dtype)) : Value(x.tensor().to(dtype));
}

}  // namespace tessera::nn::functional
