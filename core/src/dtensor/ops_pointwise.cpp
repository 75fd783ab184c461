// Element-wise ops and softmax on DTensors.
//
// Shards follow broadcasting: an output dim is sharded when every operand holding that dim at full
// size is sharded on it the same way (operands that broadcast it, or lack it, stay Replicate).
// Partial terms survive only linear ops: P + P and P - P stay P (a Replicate operand is split into
// partial terms first, locally); P * R and P / R stay P; anything else reduces first. A scalar
// added to a partial reduces it first (PyTorch bug #163193 adds the scalar to every term).
#include <fmt/format.h>

#include <utility>

#include "dtensor/ops_common.hpp"
#include "dtensor/thread_modes.hpp"
#include "tensor/internal.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

thread_local bool implicit_replication_enabled = false;

enum class Linearity { None, Additive, Multiplicative, Divisive, Max, Min };

// The operand dim that output dim `o` comes from, when the operand has it at full size.
std::optional<int64_t> source_dim(const Shape& operand, const Shape& out, int64_t o) {
  const int64_t d = o - static_cast<int64_t>(out.size() - operand.size());
  if (d < 0 || operand[static_cast<size_t>(d)] != out[static_cast<size_t>(o)]) return std::nullopt;
  return d;
}

DTensor binary(const char* op, const DTensor& a, const DTensor& b, Linearity linearity,
               Tensor (*local_op)(const Tensor&, const Tensor&)) {
  const Shape out = detail::broadcast_shapes(a.shape(), b.shape(), op);
  const dtensor::Prepared plan = dtensor::prepare(op, {a, b}, [&](size_t i) {
    const Placement& pa = a.placements()[i];
    const Placement& pb = b.placements()[i];
    const Placement& like = pa.is_shard() ? pa : pb;
    std::vector<Strategy> s = {{{Replicate(), Replicate()}, Replicate()}};
    for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
      const auto da = source_dim(a.shape(), out, o);
      const auto db = source_dim(b.shape(), out, o);
      s.push_back({{da ? dtensor::shard_like(like, *da) : Replicate(),
                    db ? dtensor::shard_like(like, *db) : Replicate()},
                   dtensor::shard_like(like, o)});
    }
    const Placement partial = pa.is_partial() ? pa : pb;
    if (partial.is_partial()) {
      const std::string& r = partial.reduce_op();
      if (linearity == Linearity::Additive && dtensor::linear_partial(partial))
        s.push_back({{partial, partial}, partial});
      if ((linearity == Linearity::Multiplicative || linearity == Linearity::Divisive) &&
          dtensor::linear_partial(pa))
        s.push_back({{pa, Replicate()}, pa});
      if (linearity == Linearity::Multiplicative && dtensor::linear_partial(pb))
        s.push_back({{Replicate(), pb}, pb});
      if ((linearity == Linearity::Max && r == "max") || (linearity == Linearity::Min && r == "min"))
        s.push_back({{partial, partial}, partial});
    }
    return s;
  });
  return plan.result(local_op(plan.inputs[0].to_local(), plan.inputs[1].to_local()), out);
}

// A plain tensor next to a DTensor: one element acts as a scalar (PyTorch replicates a 0-d or
// one-element tensor too); more need implicit replication. `plain_first`: the plain tensor is the
// op's first operand.
DTensor with_plain(const char* op, const DTensor& a, const Tensor& b, Linearity linearity,
                   Tensor (*local_op)(const Tensor&, const Tensor&), bool plain_first = false) {
  if (b.is_local())
    throw Error(
        fmt::format("{}: a local tensor cannot be mixed with a DTensor; wrap it with from_local first", op));
  if (b.numel() != 1 && !implicit_replication_enabled)
    throw Error(
        fmt::format("{}: got a DTensor and a plain tensor of {} elements (shape {}); distribute the tensor "
                    "first (distribute_tensor(tensor, mesh, placements), as PyTorch requires), or enable "
                    "implicit replication (set_implicit_replication(true)); only a 0-d or one-element plain "
                    "tensor acts as a scalar",
                    op, b.numel(), shape_text(b.sizes())));
  const DTensor replicated = distribute_tensor(b, a.device_mesh(), dtensor::all_replicate(a.device_mesh()));
  return plain_first ? binary(op, replicated, a, linearity, local_op)
                     : binary(op, a, replicated, linearity, local_op);
}

// A scalar: shards and replicas keep their placement; a partial is kept only when the op is
// linear in it (multiplying its terms by a scalar, or dividing them by one), else reduced first.
template <class LocalOp>
DTensor with_scalar(const char* op, const DTensor& a, bool keeps_partial, const LocalOp& local_op) {
  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_shard()) s.push_back({{p}, p});
    if (keeps_partial && dtensor::linear_partial(p)) s.push_back({{p}, p});
    return s;
  });
  return plan.result(local_op(plan.inputs[0].to_local()), a.shape());
}

// Shards stay; a partial stays only through a linear op.
template <class LocalOp>
DTensor unary_with(const char* op, const DTensor& a, bool linear, const LocalOp& local_op) {
  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_shard() || (linear && dtensor::linear_partial(p))) s.push_back({{p}, p});
    return s;
  });
  return plan.result(local_op(plan.inputs[0].to_local()), a.shape());
}

// The named ops: a function pointer picks the Tensor overload of an op name.
DTensor unary(const char* op, const DTensor& a, bool linear, Tensor (*local_op)(const Tensor&)) {
  return unary_with(op, a, linear, local_op);
}

// softmax over `dim`: that dim must be whole on every rank; other shards stay.
DTensor row_op(const char* op, const DTensor& a, int64_t dim, Tensor (*local_op)(const Tensor&, int64_t)) {
  const int64_t d = normalize_dim(dim, a.dim(), op);
  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_shard() && p.dim() != d) s.push_back({{p}, p});
    return s;
  });
  return plan.result(local_op(plan.inputs[0].to_local(), d), a.shape());
}

Tensor add_t(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor sub_t(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor mul_t(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor div_t(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor maximum_t(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor minimum_t(const Tensor& a, const Tensor& b) { return minimum(a, b); }
}  // namespace

void set_implicit_replication(bool enabled) { implicit_replication_enabled = enabled; }
bool implicit_replication() { return implicit_replication_enabled; }

namespace dtensor {
bool& thread_implicit_replication() { return implicit_replication_enabled; }
}  // namespace dtensor

DTensor add(const DTensor& a, const DTensor& b) { return binary("add", a, b, Linearity::Additive, add_t); }
DTensor sub(const DTensor& a, const DTensor& b) { return binary("sub", a, b, Linearity::Additive, sub_t); }
DTensor mul(const DTensor& a, const DTensor& b) {
  return binary("mul", a, b, Linearity::Multiplicative, mul_t);
}
DTensor div(const DTensor& a, const DTensor& b) { return binary("div", a, b, Linearity::Divisive, div_t); }
DTensor maximum(const DTensor& a, const DTensor& b) {
  return binary("maximum", a, b, Linearity::Max, maximum_t);
}
DTensor minimum(const DTensor& a, const DTensor& b) {
  return binary("minimum", a, b, Linearity::Min, minimum_t);
}
DTensor add(const DTensor& a, const Tensor& b) { return with_plain("add", a, b, Linearity::Additive, add_t); }
DTensor sub(const DTensor& a, const Tensor& b) { return with_plain("sub", a, b, Linearity::Additive, sub_t); }
DTensor mul(const DTensor& a, const Tensor& b) {
  return with_plain("mul", a, b, Linearity::Multiplicative, mul_t);
}
DTensor div(const DTensor& a, const Tensor& b) { return with_plain("div", a, b, Linearity::Divisive, div_t); }
DTensor add(const Tensor& a, const DTensor& b) {
  return with_plain("add", b, a, Linearity::Additive, add_t, true);
}
DTensor sub(const Tensor& a, const DTensor& b) {
  return with_plain("sub", b, a, Linearity::Additive, sub_t, true);
}
DTensor mul(const Tensor& a, const DTensor& b) {
  return with_plain("mul", b, a, Linearity::Multiplicative, mul_t, true);
}
DTensor div(const Tensor& a, const DTensor& b) {
  return with_plain("div", b, a, Linearity::Divisive, div_t, true);
}

DTensor add(const DTensor& a, Scalar b) {
  return with_scalar("add", a, false, [&](const Tensor& t) { return add(t, b); });
}
DTensor sub(const DTensor& a, Scalar b) {
  return with_scalar("sub", a, false, [&](const Tensor& t) { return sub(t, b); });
}
DTensor mul(const DTensor& a, Scalar b) {
  return with_scalar("mul", a, true, [&](const Tensor& t) { return mul(t, b); });
}
DTensor div(const DTensor& a, Scalar b) {
  return with_scalar("div", a, true, [&](const Tensor& t) { return div(t, b); });
}
// Scalar first: only a * x is linear in x's partial terms (a - x and a / x are not).
DTensor add(Scalar a, const DTensor& b) {
  return with_scalar("add", b, false, [&](const Tensor& t) { return add(a, t); });
}
DTensor sub(Scalar a, const DTensor& b) {
  return with_scalar("sub", b, false, [&](const Tensor& t) { return sub(a, t); });
}
DTensor mul(Scalar a, const DTensor& b) {
  return with_scalar("mul", b, true, [&](const Tensor& t) { return mul(a, t); });
}
DTensor div(Scalar a, const DTensor& b) {
  return with_scalar("div", b, false, [&](const Tensor& t) { return div(a, t); });
}

// A cast keeps shards and replicas; a partial is reduced first (the cast of a sum is not the sum
// of the cast terms), unless nothing changes.
DTensor DTensor::to(DType dtype) const {
  if (dtype == this->dtype()) return *this;
  return unary_with("to", *this, false, [&](const Tensor& t) { return t.to(dtype); });
}

DTensor neg(const DTensor& a) { return unary("neg", a, true, neg); }
DTensor abs(const DTensor& a) { return unary("abs", a, false, abs); }
DTensor relu(const DTensor& a) { return unary("relu", a, false, relu); }
DTensor gelu(const DTensor& a) { return unary("gelu", a, false, gelu); }
DTensor exp(const DTensor& a) { return unary("exp", a, false, exp); }
DTensor log(const DTensor& a) { return unary("log", a, false, log); }
DTensor sqrt(const DTensor& a) { return unary("sqrt", a, false, sqrt); }
DTensor tanh(const DTensor& a) { return unary("tanh", a, false, tanh); }
DTensor sigmoid(const DTensor& a) { return unary("sigmoid", a, false, sigmoid); }

DTensor softmax(const DTensor& a, int64_t dim) { return row_op("softmax", a, dim, softmax); }
DTensor log_softmax(const DTensor& a, int64_t dim) { return row_op("log_softmax", a, dim, log_softmax); }

}  // namespace tessera
