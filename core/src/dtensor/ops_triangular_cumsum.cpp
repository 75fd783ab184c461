// tril, triu and cumsum on DTensors: ops that read along some dims and keep shards of the others.
// All three are linear, so a Partial sum (or avg) stays pending through them.
#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

// `whole(d)`: dim d must be whole on every rank (those mesh dims are replicated first).
template <class Whole, class LocalOp>
DTensor keeping_other_shards(const char* op, const DTensor& a, const Whole& whole, const LocalOp& local_op) {
  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if ((p.is_shard() && !whole(p.dim())) || dtensor::linear_partial(p)) s.push_back({{p}, p});
    return s;
  });
  return plan.result(local_op(plan.inputs[0].to_local()), a.shape());
}

DTensor triangle_part(const char* op, const DTensor& x, Tensor (*local_op)(const Tensor&, int64_t),
                      int64_t diagonal) {
  if (x.dim() < 2)
    throw Error(fmt::format(
        "{}: the input has {} dims (shape {}), expected at least 2 (the last two form the matrix)", op,
        x.dim(), shape_text(x.shape())));
  const int64_t first_matrix_dim = x.dim() - 2;
  return keeping_other_shards(
      op, x, [&](int64_t d) { return d >= first_matrix_dim; },
      [&](const Tensor& t) { return local_op(t, diagonal); });
}

}  // namespace

DTensor tril(const DTensor& x, int64_t diagonal) {
  return triangle_part(
      "tril", x, [](const Tensor& t, int64_t d) { return tril(t, d); }, diagonal);
}
DTensor triu(const DTensor& x, int64_t diagonal) {
  return triangle_part(
      "triu", x, [](const Tensor& t, int64_t d) { return triu(t, d); }, diagonal);
}

DTensor cumsum(const DTensor& x, int64_t dim) {
  const int64_t d = normalize_dim(dim, x.dim(), "cumsum");
  return keeping_other_shards(
      "cumsum", x, [&](int64_t s) { return s == d; }, [&](const Tensor& t) { return cumsum(t, d); });
}

}  // namespace tessera
