// scaled_dot_product_attention on DTensors. Per mesh dim: q, k and v sharded alike on a batch or
// heads dim (any dim before the last two) give an output sharded on it, with no communication:
// each rank attends within its own heads / samples. A mask follows the shard on the dim it
// broadcasts from (Replicate where it lacks the dim or has it as 1). Anything else replicates.
// The sequence dims stay whole, so the causal mask is the same on every rank. With grouped heads
// (enable_gqa, fewer k/v heads than q heads) the heads dim is not sharded. Dropout (dropout_p > 0)
// drops the weights the dense op would with the same generator state: the mask of the global
// weights is drawn once and each rank takes its part.
#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "dtensor/random_mask.hpp"
#include "tensor/attention.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {

DTensor scaled_dot_product_attention(const DTensor& q, const DTensor& k, const DTensor& v,
                                     const std::optional<DTensor>& attn_mask, double dropout_p,
                                     bool is_causal, std::optional<double> scale, bool enable_gqa) {
  constexpr const char* op = "scaled_dot_product_attention";
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim())
    throw Error(
        fmt::format("{} on DTensors: query, key and value have shapes {}, {} and {}; expected one rank of at "
                    "least 2 dims",
                    op, shape_text(q.shape()), shape_text(k.shape()), shape_text(v.shape())));
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0))
    throw Error(fmt::format("{}: dropout_p is {}, expected a value in [0, 1]", op, dropout_p));
  const int64_t ndim = q.dim();
  const bool grouped =
      ndim >= 3 && q.shape()[static_cast<size_t>(ndim - 3)] != k.shape()[static_cast<size_t>(ndim - 3)];
  std::vector<DTensor> inputs = {q, k, v};
  if (attn_mask) inputs.push_back(*attn_mask);
  const Shape out_shape = [&] {
    Shape s = q.shape();
    s.back() = v.shape().back();
    return s;
  }();
  const dtensor::Prepared plan = dtensor::prepare(op, inputs, [&](size_t i) {
    const Placement& pq = q.placements()[i];
    std::vector<dtensor::Strategy> s;
    for (int64_t d = 0; d + 2 < ndim; ++d) {
      if (grouped && d == ndim - 3) continue;
      const Placement shard = dtensor::shard_like(pq, d);
      Placements in = {shard, shard, shard};
      if (attn_mask) {
        const int64_t dm = d - (ndim - attn_mask->dim());
        const bool has_dim =
            dm >= 0 && attn_mask->shape()[static_cast<size_t>(dm)] == q.shape()[static_cast<size_t>(d)];
        in.push_back(has_dim ? dtensor::shard_like(pq, dm) : Placement(Replicate()));
      }
      s.push_back({in, shard});
    }
    s.push_back({Placements(inputs.size(), Replicate()), Replicate()});
    Placements current;
    for (const DTensor& t : inputs) current.push_back(t.placements()[i]);
    return dtensor::matching_first(std::move(s), current);
  });
  const Tensor mask = attn_mask ? plan.inputs[3].to_local() : Tensor();
  // Dropout on the weights [..., L, S]: the mask of the global weights (so every placement drops
  // the same ones), laid out as the output is (shards of a batch or heads dim only).
  Tensor weight_mask;
  if (dropout_p > 0.0) {
    Shape weights = q.shape();
    weights.back() = k.shape()[static_cast<size_t>(ndim - 2)];
    weight_mask = dtensor::dropout_mask(weights, q.device_mesh(), plan.output, q.dtype(),
                                        q.to_local().backend(), dropout_p, nullptr)
                      .to_local();
  }
  const Tensor local = detail::attention_with_dropout_mask(
      plan.inputs[0].to_local(), plan.inputs[1].to_local(), plan.inputs[2].to_local(), mask, dropout_p,
      is_causal, scale, enable_gqa, weight_mask);
  return plan.result(local, out_shape);
}

}  // namespace tessera
