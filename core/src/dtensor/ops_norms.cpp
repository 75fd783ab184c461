// layer_norm and rms_norm on DTensors. Rows are normalised independently, so a Shard of any dim
// that is not normalised stays, with no communication (sequence parallel: a Shard(seq) activation
// gives a Shard(seq) output); normalised dims are replicated first, and the weight and bias are
// Replicate on every mesh dim the input is. A Partial input is reduced first (normalising is not
// linear).
#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

template <class LocalOp>
DTensor normalization(const char* op, const DTensor& x, const std::vector<int64_t>& normalized_shape,
                      const std::vector<DTensor>& params, const LocalOp& local_op) {
  const int64_t first_normalized = x.dim() - static_cast<int64_t>(normalized_shape.size());
  for (const DTensor& p : params)
    if (p.device_mesh() != x.device_mesh())
      throw Error(fmt::format(
          "{}: the weight or bias lives on another device mesh than the input, expected one mesh", op));
  std::vector<DTensor> inputs = {x};
  inputs.insert(inputs.end(), params.begin(), params.end());
  const dtensor::Prepared plan = dtensor::prepare(op, inputs, [&](size_t i) {
    const Placement& p = x.placements()[i];
    std::vector<Strategy> s = {{Placements(inputs.size(), Replicate()), Replicate()}};
    if (p.is_shard() && p.dim() < first_normalized) {
      Placements shard_in(inputs.size(), Replicate());
      shard_in[0] = p;
      s.push_back({shard_in, p});
    }
    return s;
  });
  std::vector<Tensor> locals;
  for (const DTensor& t : plan.inputs) locals.push_back(t.to_local());
  return plan.result(local_op(locals), x.shape());
}

}  // namespace

DTensor layer_norm(const DTensor& x, const std::vector<int64_t>& normalized_shape,
                   const std::optional<DTensor>& weight, const std::optional<DTensor>& bias, double eps) {
  std::vector<DTensor> params;
  if (weight) params.push_back(*weight);
  if (bias) params.push_back(*bias);
  return normalization("layer_norm", x, normalized_shape, params, [&](const std::vector<Tensor>& t) {
    const Tensor w = weight ? t[1] : Tensor();
    const Tensor b = bias ? t[weight ? 2 : 1] : Tensor();
    return layer_norm(t[0], normalized_shape, w, b, eps);
  });
}

DTensor rms_norm(const DTensor& x, const std::vector<int64_t>& normalized_shape,
                 const std::optional<DTensor>& weight, std::optional<double> eps) {
  std::vector<DTensor> params;
  if (weight) params.push_back(*weight);
  return normalization("rms_norm", x, normalized_shape, params, [&](const std::vector<Tensor>& t) {
    return rms_norm(t[0], normalized_shape, weight ? t[1] : Tensor(), eps);
  });
}

}  // namespace tessera
