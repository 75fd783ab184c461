// matmul / mm / bmm on DTensors. Per mesh dim: S(m) x R -> S(m); R x S(n) -> S(n);
// S(k) x S(k) -> P(sum) with no communication; R x R -> R; a linear partial times R stays
// partial; a batch dim sharded on both (or on a with b 2-d) stays sharded.
#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

// The global output shape by torch.matmul's rules (a >= 2-d, b 2-d or of a's rank).
Shape matmul_shape(const char* op, const Shape& a, const Shape& b) {
  if (a.size() < 2 || b.size() < 2 || (b.size() != 2 && b.size() != a.size()))
    throw Error(
        fmt::format("{} on DTensors: shapes {} and {} are not supported; expected a of 2+ dims and b 2-d or "
                    "of a's rank",
                    op, shape_text(a), shape_text(b)));
  if (a.back() != b[b.size() - 2])
    throw Error(fmt::format("{}: inner dimensions do not match: a has shape {} and b has shape {} ({} != {})",
                            op, shape_text(a), shape_text(b), a.back(), b[b.size() - 2]));
  Shape out(a.begin(), a.end() - 1);
  if (b.size() == a.size())
    for (size_t d = 0; d + 2 < a.size(); ++d)
      if (a[d] != b[d])
        throw Error(fmt::format("{}: batch dims differ: a has shape {} and b has shape {}", op, shape_text(a),
                                shape_text(b)));
  out.push_back(b.back());
  return out;
}

DTensor run_matmul(const char* op, const DTensor& a, const DTensor& b) {
  const Shape out_shape = matmul_shape(op, a.shape(), b.shape());
  const int64_t ra = a.dim(), rb = b.dim(), ro = static_cast<int64_t>(out_shape.size());
  const dtensor::Prepared plan = dtensor::prepare(op, {a, b}, [&](size_t i) {
    const Placement& pa = a.placements()[i];
    const Placement& pb = b.placements()[i];
    std::vector<Strategy> s = {
        {{Replicate(), Replicate()}, Replicate()},
        {{dtensor::shard_like(pa, ra - 2), Replicate()}, dtensor::shard_like(pa, ro - 2)},
        {{Replicate(), dtensor::shard_like(pb, rb - 1)}, dtensor::shard_like(pb, ro - 1)},
        {{dtensor::shard_like(pa, ra - 1), dtensor::shard_like(pa, rb - 2)}, Partial("sum")},
    };
    if (dtensor::linear_partial(pa)) s.push_back({{pa, Replicate()}, pa});
    if (dtensor::linear_partial(pb)) s.push_back({{Replicate(), pb}, pb});
    for (int64_t d = 0; d + 2 < ra; ++d) {
      const Placement batch = dtensor::shard_like(pa, d);
      s.push_back({{batch, rb == 2 ? Replicate() : dtensor::shard_like(pa, d)}, batch});
    }
    return s;
  });
  Tensor local = matmul(plan.inputs[0].to_local(), plan.inputs[1].to_local());
  return plan.result(local, out_shape);
}

}  // namespace

DTensor matmul(const DTensor& a, const DTensor& b) { return run_matmul("matmul", a, b); }

DTensor mm(const DTensor& a, const DTensor& b) {
  if (a.dim() != 2 || b.dim() != 2)
    throw Error(fmt::format("mm: expected two 2-d DTensors, got shapes {} and {}", shape_text(a.shape()),
                            shape_text(b.shape())));
  return run_matmul("mm", a, b);
}

DTensor bmm(const DTensor& a, const DTensor& b) {
  if (a.dim() != 3 || b.dim() != 3)
    throw Error(fmt::format("bmm: expected two 3-d DTensors, got shapes {} and {}", shape_text(a.shape()),
                            shape_text(b.shape())));
  return run_matmul("bmm", a, b);
}

}  // namespace tessera
