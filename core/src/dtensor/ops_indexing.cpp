// gather, scatter_add, index_select and one_hot on DTensors. The indexed dim must be whole on every
// rank (it is replicated first when sharded); the other dims keep their shards when every operand
// has them at one size (gather's and scatter_add's index may be shorter than the input there: such
// a dim is replicated). one_hot keeps the indices' shards and adds a whole class dim.
#include <fmt/format.h>

#include "dtensor/ops_common.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::Strategy;

// Per mesh dim: every operand sharded on tensor dim d (d != dim, all operands of one size there)
// gives an output sharded on d; everything Replicate gives Replicate.
Placements indexed_output(const char* op, std::vector<DTensor>& inputs, int64_t dim, const Shape& out_shape) {
  const dtensor::Prepared plan = dtensor::prepare(op, inputs, [&](size_t i) {
    const Placement& like = inputs[0].placements()[i];
    std::vector<Strategy> s;
    for (int64_t d = 0; d < static_cast<int64_t>(out_shape.size()); ++d) {
      if (d == dim) continue;
      bool same_size = true;
      for (const DTensor& t : inputs)
        same_size = same_size && t.shape()[static_cast<size_t>(d)] == out_shape[static_cast<size_t>(d)];
      if (same_size)
        s.push_back({Placements(inputs.size(), dtensor::shard_like(like, d)), dtensor::shard_like(like, d)});
    }
    s.push_back({Placements(inputs.size(), Replicate()), Replicate()});
    Placements current;
    for (const DTensor& t : inputs) current.push_back(t.placements()[i]);
    return dtensor::matching_first(std::move(s), current);
  });
  inputs = plan.inputs;
  return plan.output;
}

// A plain index is what every rank holds; a local one (made inside a LocalMode) each rank's copy.
DTensor replicated(const Tensor& index, const DeviceMesh& mesh) {
  const Placements replicate = dtensor::all_replicate(mesh);
  return index.is_local() ? from_local(index, mesh, replicate) : distribute_tensor(index, mesh, replicate);
}

void require_same_ndim(const char* op, const DTensor& x, const DTensor& other, const char* role) {
  if (x.dim() != other.dim())
    throw Error(fmt::format("{}: {} has shape {}, expected {} dims as the input (shape {})", op, role,
                            shape_text(other.shape()), x.dim(), shape_text(x.shape())));
}

}  // namespace

DTensor gather(const DTensor& x, int64_t dim, const DTensor& index) {
  require_same_ndim("gather", x, index, "index");
  const int64_t d = normalize_dim(dim, x.dim(), "gather");
  std::vector<DTensor> inputs = {x, index};
  const Placements out = indexed_output("gather", inputs, d, index.shape());
  return DTensor(gather(inputs[0].to_local(), d, inputs[1].to_local()), x.device_mesh(), out, index.shape());
}
DTensor gather(const DTensor& x, int64_t dim, const Tensor& index) {
  return gather(x, dim, replicated(index, x.device_mesh()));
}

DTensor scatter_add(const DTensor& x, int64_t dim, const DTensor& index, const DTensor& src) {
  require_same_ndim("scatter_add", x, index, "index");
  require_same_ndim("scatter_add", x, src, "src");
  const int64_t d = normalize_dim(dim, x.dim(), "scatter_add");
  std::vector<DTensor> inputs = {x, index, src};
  const Placements out = indexed_output("scatter_add", inputs, d, x.shape());
  return DTensor(scatter_add(inputs[0].to_local(), d, inputs[1].to_local(), inputs[2].to_local()),
                 x.device_mesh(), out, x.shape());
}
DTensor scatter_add(const DTensor& x, int64_t dim, const Tensor& index, const DTensor& src) {
  return scatter_add(x, dim, replicated(index, x.device_mesh()), src);
}

DTensor index_select(const DTensor& x, int64_t dim, const Tensor& index) {
  const int64_t d = normalize_dim(dim, x.dim(), "index_select");
  if (index.dim() > 1)
    throw Error(fmt::format("index_select: index has shape {}, expected a 1-d (or 0-d) index",
                            index.shape().to_string()));
  const dtensor::Prepared plan = dtensor::prepare("index_select", {x}, [&](size_t i) {
    const Placement& p = x.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_shard() && p.dim() != d) s.insert(s.begin(), {{p}, p});
    return s;
  });
  Shape out = x.shape();
  out[static_cast<size_t>(d)] = index.numel();
  return plan.result(index_select(plan.inputs[0].to_local(), d, index), out);
}

DTensor one_hot(const DTensor& indices, int64_t num_classes) {
  if (num_classes == -1) {
    // Every rank needs the same class count: the largest index over all shards.
    num_classes = max(indices).full_tensor().shard(indices.device_mesh().ranks()[0]).item<int64_t>() + 1;
  }
  const dtensor::Prepared plan = dtensor::prepare("one_hot", {indices}, [&](size_t i) {
    const Placement& p = indices.placements()[i];
    std::vector<Strategy> s = {{{Replicate()}, Replicate()}};
    if (p.is_shard()) s.insert(s.begin(), {{p}, p});
    return s;
  });
  Shape out = indices.shape();
  out.push_back(num_classes);
  return plan.result(one_hot(plan.inputs[0].to_local(), num_classes), out);
}

}  // namespace tessera
