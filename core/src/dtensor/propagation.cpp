#include "dtensor/propagation.hpp"

#include <limits>

#include <fmt/format.h>

#include "autograd/node.hpp"
#include "dtensor/grad_layout.hpp"
#include "dtensor/redistribute.hpp"
#include "comm/comm_observer.hpp"
#include "log/log.hpp"
#include "comm/labels.hpp"
#include "tessera/errors.hpp"

namespace tessera::dtensor {
namespace {

constexpr double kImpossible = std::numeric_limits<double>::infinity();

int64_t local_bytes(const DTensor& t) {
  int64_t elements = 1;
  for (int64_t s : t.shape()) elements *= s;
  for (size_t i = 0; i < t.placements().size(); ++i)
    if (t.placements()[i].is_shard())
      elements /= std::max<int64_t>(1, t.device_mesh().size(static_cast<int64_t>(i)));
  return elements * static_cast<int64_t>(itemsize(t.dtype()));
}

// Time for one member of the mesh dim's group to move `bytes` to a neighbour in the group: the
// first two ranks of the group's first line (the line with the lowest first rank, as
// mesh.group(mesh_dim) orders them), found without building the group (every op costs its options).
double link_time(const DeviceMesh& mesh, size_t mesh_dim, int64_t bytes) {
  const int64_t along = mesh.size(static_cast<int64_t>(mesh_dim));
  if (along < 2) return 0.0;
  int64_t stride = 1;  // of the mesh dim in a fibre's row-major ranks
  for (size_t d = mesh_dim + 1; d < mesh.shape().size(); ++d) stride *= mesh.shape()[d];
  int first = -1, second = -1;
  for (const std::vector<int>& fibre : mesh.fibres())
    for (size_t i = 0; i < fibre.size(); ++i)
      if ((static_cast<int64_t>(i) / stride) % along == 0 && (first < 0 || fibre[i] < first)) {
        first = fibre[i];
        second = fibre[i + static_cast<size_t>(stride)];
      }
  return mesh.topology().transfer_time(first, second, bytes);
}

}  // namespace

Placement shard_like(const Placement& like, int64_t dim) {
  return like.is_shard() ? like.with_dim(dim) : Placement::shard(dim);
}

double redistribution_cost(const DTensor& t, size_t mesh_dim, const Placement& from, const Placement& to) {
  if (from == to) return 0.0;
  if (to.is_partial() && !from.is_replicate()) return kImpossible;
  if (from.is_replicate()) return 0.0;  // a local slice, or a local split into partial terms
  const int64_t p = t.device_mesh().size(static_cast<int64_t>(mesh_dim));
  const int64_t bytes = local_bytes(t);
  // A ring all_reduce is 2(p - 1) steps of a p-th of the data; an all_gather p - 1 steps of it all.
  if (from.is_partial())
    return 2.0 * static_cast<double>(p - 1) * link_time(t.device_mesh(), mesh_dim, bytes / p);
  return static_cast<double>(p - 1) * link_time(t.device_mesh(), mesh_dim, bytes);
}

Prepared prepare(const char* op, const std::vector<DTensor>& inputs, const StrategiesForMeshDim& strategies) {
  const DeviceMesh& mesh = inputs.front().device_mesh();
  for (const DTensor& t : inputs)
    if (!(t.device_mesh() == mesh))
      throw Error(
          fmt::format("{}: inputs live on different meshes ({} and {}); redistribute onto one mesh first", op,
                      mesh.to_string(), t.device_mesh().to_string()));
  const size_t ndim = static_cast<size_t>(mesh.ndim());
  std::vector<Placements> wanted(inputs.size(), Placements(ndim));
  Placements output(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    const std::vector<Strategy> options = strategies(i);
    double best_cost = kImpossible;
    const Strategy* best = nullptr;
    for (const Strategy& s : options) {
      double cost = 0.0;
      for (size_t k = 0; k < inputs.size(); ++k)
        cost += redistribution_cost(inputs[k], i, inputs[k].placements()[i], s.inputs[k]);
      if (cost < best_cost) {
        best_cost = cost;
        best = &s;
      }
    }
    if (best == nullptr) {
      std::string given;
      for (const DTensor& t : inputs)
        given += (given.empty() ? "" : " and ") + placements_text(t.placements());
      throw Error(fmt::format("{}: no sharding rule handles inputs placed {} on mesh dim {}", op, given, i));
    }
    for (size_t k = 0; k < inputs.size(); ++k) wanted[k][i] = best->inputs[k];
    output[i] = best->output;
  }
  Prepared prepared{{}, output, autograd::next_node_number()};
  for (size_t k = 0; k < inputs.size(); ++k) {
    const DTensor& t = inputs[k];
    if (wanted[k] == t.placements()) {
      prepared.inputs.push_back(reduced_in_backward(t, output));
      continue;
    }
    observe::logger().info("implicit communication: {} redistributes input {} from {} to {}", op, k,
                           placements_text(t.placements()), placements_text(wanted[k]));
    comm::report_implicit(op, static_cast<int64_t>(k), placements_text(t.placements()),
                          placements_text(wanted[k]));
    const comm::LabelScope caused_by("", op);
    const DTensor moved(differentiable_redistribute(t, wanted[k], /*allow_partial_targets=*/true),
                        t.device_mesh(), wanted[k], t.shape());
    prepared.inputs.push_back(reduced_in_backward(moved, output));
  }
  return prepared;
}

DTensor Prepared::result(const Tensor& local, const Shape& shape) const {
  return op_output(local, inputs.front().device_mesh(), output, shape, first_node);
}

}  // namespace tessera::dtensor
