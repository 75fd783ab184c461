// scaled_dot_product_attention as PyTorch's math reference computes it:
//   softmax(q k^T * scale + bias) v, dropout on the weights when dropout_p > 0,
// built from existing ops (matmul, mul, add, softmax, log), so every backend, local tensors and
// autograd get it from the parts. A mask enters as an additive bias: a bool mask (true = attend)
// and the causal mask become log(mask) = 0 or -inf, so a fully masked row gives NaN, as in PyTorch.
#include "tensor/attention.hpp"

#include <fmt/format.h>

#include <cmath>

#include "tensor/internal.hpp"
#include "tensor/float32_compute.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

void check_operand(const Tensor& t, const char* name) {
  if (!t.defined()) detail::impl_of(t, kOp);
  if (t.dim() < 2)
    throw Error(fmt::format("{}: {} has shape {}, expected at least 2 dims (..., sequence, features)", kOp,
                            name, t.shape().to_string()));
  if (!is_floating(t.dtype()))
    throw Error(
        fmt::format("{}: {} has dtype {}, expected float32 or float64", kOp, name, dtype_name(t.dtype())));
}

// k or v with its heads (dim -3) each repeated `times` times in place (PyTorch's
// repeat_interleave(times, dim=-3)): head h of the result is head h / times of `t`.
Tensor repeat_heads(const Tensor& t, int64_t times) {
  const SymShape shape = t.shape();
  std::vector<SymInt> expanded(shape.begin(), shape.end());
  expanded.insert(expanded.end() - 2, SymInt(times));
  std::vector<SymInt> merged(shape.begin(), shape.end());
  merged[merged.size() - 3] = SymInt(t.size(-3) * times);
  return t.unsqueeze(-3).expand(SymShape(expanded)).reshape(SymShape(merged));
}

// 1 where query i may attend key j (j <= i: the lower triangle with its diagonal, aligned at the
// top left as in PyTorch), as a bool [L, S].
Tensor causal_allowed(int64_t queries, int64_t keys, const std::string& backend) {
  const TensorOptions options = TensorOptions(kInt64).backend(backend);
  return le(arange(0, keys, 1, options).reshape({1, keys}),
            arange(0, queries, 1, options).reshape({queries, 1}));
}

}  // namespace

namespace detail {

Tensor attention_with_dropout_mask(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                   double dropout_p, bool is_causal, std::optional<double> scale,
                                   bool enable_gqa, const Tensor& dropout_mask) {
  check_operand(q, "query");
  check_operand(k, "key");
  check_operand(v, "value");
  if (q.size(-1) != k.size(-1))
    throw Error(fmt::format("{}: query has shape {} and key {}, expected the same last dim (features E)", kOp,
                            q.shape().to_string(), k.shape().to_string()));
  if (k.size(-2) != v.size(-2))
    throw Error(fmt::format("{}: key has shape {} and value {}, expected the same sequence length (dim -2)",
                            kOp, k.shape().to_string(), v.shape().to_string()));
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0))
    throw Error(fmt::format("{}: dropout_p is {}, expected a value in [0, 1]", kOp, dropout_p));
  if (is_causal && attn_mask.defined())
    throw Error(
        fmt::format("{}: attn_mask is given and is_causal is true, expected one of them (as PyTorch)", kOp));
  Tensor key = k, value = v;
  if (q.dim() >= 3 && k.dim() >= 3 && q.sym_size(-3) != k.sym_size(-3)) {
    const int64_t hq = q.size(-3), hk = k.size(-3);
    if (!enable_gqa)
      throw Error(
          fmt::format("{}: query has {} heads (shape {}) and key {} (shape {}), expected equal head counts, "
                      "or enable_gqa = true to share key/value heads",
                      kOp, hq, q.shape().to_string(), hk, k.shape().to_string()));
    if (hk == 0 || hq % hk != 0 || v.size(-3) != hk)
      throw Error(fmt::format(
          "{}: enable_gqa needs the query's heads ({}) to be a multiple of the key's ({}) and the "
          "value's ({}) equal to the key's",
          kOp, hq, hk, v.size(-3)));
    key = repeat_heads(k, hq / hk);
    value = repeat_heads(v, hq / hk);
  }
  const double factor = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const Tensor query = widened(q);
  key = widened(key);
  value = widened(value);
  Tensor scores = matmul(query, key.transpose(-2, -1)) * factor;
  if (is_causal)
    scores = scores + log(causal_allowed(q.size(-2), k.size(-2), q.backend()).to(scores.dtype()));
  if (attn_mask.defined()) {
    if (attn_mask.dtype() == kBool)
      scores = scores + log(attn_mask.to(scores.dtype()));
    else if (is_floating(attn_mask.dtype()))
      scores = scores + widened(attn_mask);
    else
      throw Error(fmt::format("{}: attn_mask has dtype {}, expected bool (true = attend) or a float bias",
                              kOp, dtype_name(attn_mask.dtype())));
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_mask.defined())
    weights = weights * dropout_mask;
  else if (dropout_p > 0.0)
    weights = dropout(weights, dropout_p, true);
  return narrowed(matmul(weights, value), q.dtype());
}

}  // namespace detail

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa) {
  return detail::attention_with_dropout_mask(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa,
                                             Tensor());
}

}  // namespace tessera
