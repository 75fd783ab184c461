// Reductions on DTensors. A dim sharded on a mesh dim and reduced becomes a pending reduction on
// that mesh dim (sum -> P(sum), max -> P(max), min -> P(min), prod -> P(product)); mean becomes
// P(avg) only when every shard holds the same number of elements of that dim (else it replicates
// first: averaging uneven shards' means is wrong, PyTorch bug #162692). Dims kept keep their
// shards; sum of a sum-partial stays partial. max and min (no identity) replicate a dim first when
// some rank holds none of it.
#include <fmt/format.h>

#include "dtensor/layout.hpp"
#include "dtensor/ops_common.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

bool evenly_sharded(const DTensor& a, size_t mesh_dim) {
  const Placement& p = a.placements()[mesh_dim];
  const int64_t size = a.shape()[static_cast<size_t>(p.dim())];
  const int64_t shards = a.device_mesh().size(static_cast<int64_t>(mesh_dim));
  for (size_t j = 0; j < a.placements().size(); ++j)
    if (j != mesh_dim && a.placements()[j].is_shard(p.dim()))
      return false;  // nested: keep it simple and exact
  int64_t first = -1;
  for (int64_t k = 0; k < shards; ++k) {
    const int64_t length = dtensor::total_length(dtensor::split(p, size, shards, k));
    if (first >= 0 && length != first) return false;
    first = length;
  }
  return true;
}

// Whether some rank holds none of tensor dim d. max and min have no identity, so such a rank has
// no partial term to offer: those reductions gather the dim first instead.
bool some_shard_empty(const DTensor& a, int64_t d) {
  const DeviceMesh& mesh = a.device_mesh();
  for (int rank : mesh.ranks())
    if (dtensor::total_length(dtensor::held(a.shape()[static_cast<size_t>(d)], d, a.placements(),
                                            mesh.shape(), mesh.coordinate_of(rank), a.placements().size())) ==
        0)
      return true;
  return false;
}

DTensor reduce(const char* op, const DTensor& a, const std::vector<int64_t>& dims, bool keepdim,
               const char* partial_op, Tensor (*local_op)(const Tensor&, const std::vector<int64_t>&, bool)) {
  std::vector<bool> reduced(static_cast<size_t>(a.dim()), dims.empty());
  for (int64_t d : dims) reduced[static_cast<size_t>(normalize_dim(d, a.dim(), op))] = true;
  Shape out_shape;
  std::vector<int64_t> new_index(static_cast<size_t>(a.dim()), -1);
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (reduced[static_cast<size_t>(d)] && !keepdim) continue;
    new_index[static_cast<size_t>(d)] = static_cast<int64_t>(out_shape.size());
    out_shape.push_back(reduced[static_cast<size_t>(d)] ? 1 : a.shape()[static_cast<size_t>(d)]);
  }
  const bool is_mean = std::string(op) == "mean";
  const bool needs_elements = std::string(op) == "max" || std::string(op) == "min";
  const dtensor::Prepared plan = dtensor::prepare(op, {a}, [&](size_t i) {
    const Placement& p = a.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_shard()) {
      if (!reduced[static_cast<size_t>(p.dim())]) {
        s.push_back({{p}, dtensor::shard_like(p, new_index[static_cast<size_t>(p.dim())])});
      } else if ((!is_mean || evenly_sharded(a, i)) && (!needs_elements || !some_shard_empty(a, p.dim()))) {
        s.push_back({{p}, Partial(partial_op)});
      }
    }
    if (p.is_partial() && std::string(op) == "sum" && dtensor::linear_partial(p)) s.push_back({{p}, p});
    return s;
  });
  const std::vector<int64_t> normalized = [&] {
    std::vector<int64_t> v;
    for (int64_t d = 0; d < a.dim(); ++d)
      if (reduced[static_cast<size_t>(d)]) v.push_back(d);
    return v;
  }();
  return plan.result(local_op(plan.inputs[0].to_local(), normalized, keepdim), out_shape);
}

Tensor sum_t(const Tensor& a, const std::vector<int64_t>& d, bool k) { return sum(a, d, k); }
Tensor mean_t(const Tensor& a, const std::vector<int64_t>& d, bool k) { return mean(a, d, k); }
Tensor max_t(const Tensor& a, const std::vector<int64_t>& d, bool k) { return max(a, d, k); }
Tensor min_t(const Tensor& a, const std::vector<int64_t>& d, bool k) { return min(a, d, k); }
Tensor prod_t(const Tensor& a, const std::vector<int64_t>& d, bool k) { return prod(a, d, k); }

}  // namespace

DTensor sum(const DTensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce("sum", a, dims, keepdim, "sum", sum_t);
}
DTensor mean(const DTensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce("mean", a, dims, keepdim, "avg", mean_t);
}
DTensor max(const DTensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce("max", a, dims, keepdim, "max", max_t);
}
DTensor min(const DTensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce("min", a, dims, keepdim, "min", min_t);
}
DTensor prod(const DTensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce("prod", a, dims, keepdim, "product", prod_t);
}

}  // namespace tessera
