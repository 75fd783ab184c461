// silu, gelu(tanh), sin, cos, rsqrt, clamp, where and masked_fill on DTensors.
//
// The one-operand ops keep shards and replicas and reduce a Partial first (none of them is linear).
// where and masked_fill shard as the binary ops do: an output dim is sharded when every operand that
// holds it at full size is sharded on it the same way (operands that broadcast it, or lack it, stay
// Replicate); a Partial operand is reduced first.
#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "tensor/internal.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

template <class LocalOp>
DTensor one_operand_op(const char* op, const DTensor& a, const LocalOp& local_op) {
  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_shard()) s.push_back({{p}, p});
    return s;
  });
  return plan.result(local_op(plan.inputs[0].to_local()), a.shape());
}

// The operand dim that output dim `o` comes from, when the operand has it at full size.
std::optional<int64_t> broadcast_source_dim(const Shape& operand, const Shape& out, int64_t o) {
  const int64_t d = o - static_cast<int64_t>(out.size() - operand.size());
  if (d < 0 || operand[static_cast<size_t>(d)] != out[static_cast<size_t>(o)]) return std::nullopt;
  return d;
}

// Operands broadcast to `out`; per mesh dim: all Replicate, or one output dim sharded through
// every operand that holds it.
template <class LocalOp>
DTensor broadcasting_op(const char* op, const std::vector<DTensor>& operands, const Shape& out,
                        const LocalOp& local_op) {
  const DeviceMesh& mesh = operands.front().device_mesh();
  for (const DTensor& t : operands)
    if (t.device_mesh() != mesh)
      throw Error(fmt::format("{}: the operands live on different device meshes, expected one mesh", op));
  const dtensor::Prepared plan = dtensor::prepare(op, operands, [&](size_t i) {
    Placement like = Replicate();
    for (const DTensor& t : operands)
      if (t.placements()[i].is_shard()) like = t.placements()[i];
    std::vector<Strategy> s = {{Placements(operands.size(), Replicate()), Replicate()}};
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
      Placements inputs;
      for (const DTensor& t : operands) {
        const auto d = broadcast_source_dim(t.shape(), out, o);
        inputs.push_back(d ? dtensor::shard_like(like, *d) : Replicate());
      }
      s.push_back({inputs, dtensor::shard_like(like, o)});
    }
    return s;
  });
  std::vector<Tensor> locals;
  for (const DTensor& t : plan.inputs) locals.push_back(t.to_local());
  return plan.result(local_op(locals), out);
}

Shape broadcast_all(const char* op, const std::vector<DTensor>& operands) {
  Shape out = operands.front().shape();
  for (const DTensor& t : operands) out = detail::broadcast_shapes(out, t.shape(), op);
  return out;
}

}  // namespace

DTensor silu(const DTensor& x) {
  return one_operand_op("silu", x, [](const Tensor& t) { return silu(t); });
}
DTensor gelu(const DTensor& x, std::string_view approximate) {
  // Checked before any redistribution a bad call would waste.
  if (approximate != "none" && approximate != "tanh")
    throw Error(fmt::format("gelu: approximate is '{}', expected 'none' or 'tanh'", approximate));
  return one_operand_op("gelu", x, [&](const Tensor& t) { return gelu(t, approximate); });
}
DTensor sin(const DTensor& x) {
  return one_operand_op("sin", x, [](const Tensor& t) { return sin(t); });
}
DTensor cos(const DTensor& x) {
  return one_operand_op("cos", x, [](const Tensor& t) { return cos(t); });
}
DTensor rsqrt(const DTensor& x) {
  return one_operand_op("rsqrt", x, [](const Tensor& t) { return rsqrt(t); });
}
DTensor clamp(const DTensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  if (!lo && !hi) throw Error("clamp: both bounds are none, expected at least one of lo and hi");
  return one_operand_op("clamp", x, [&](const Tensor& t) { return clamp(t, lo, hi); });
}

DTensor where(const DTensor& cond, const DTensor& a, const DTensor& b) {
  const std::vector<DTensor> operands = {cond, a, b};
  return broadcasting_op("where", operands, broadcast_all("where", operands),
                         [](const std::vector<Tensor>& t) { return where(t[0], t[1], t[2]); });
}
DTensor where(const DTensor& cond, const DTensor& a, Scalar b) {
  const std::vector<DTensor> operands = {cond, a};
  return broadcasting_op("where", operands, broadcast_all("where", operands),
                         [&](const std::vector<Tensor>& t) { return where(t[0], t[1], b); });
}
DTensor where(const DTensor& cond, Scalar a, const DTensor& b) {
  const std::vector<DTensor> operands = {cond, b};
  return broadcasting_op("where", operands, broadcast_all("where", operands),
                         [&](const std::vector<Tensor>& t) { return where(t[0], a, t[1]); });
}

DTensor masked_fill(const DTensor& x, const DTensor& mask, Scalar value) {
  const std::vector<DTensor> operands = {x, mask};
  if (broadcast_all("masked_fill", operands) != x.shape())
    throw Error(fmt::format("masked_fill: the mask's shape {} does not broadcast to the tensor's shape {}",
                            shape_text(mask.shape()), shape_text(x.shape())));
  return broadcasting_op("masked_fill", operands, x.shape(),
                         [&](const std::vector<Tensor>& t) { return masked_fill(t[0], t[1], value); });
}

}  // namespace tessera
