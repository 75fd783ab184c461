#include "dtensor/layout.hpp"

#include <fmt/format.h>

#include "dtensor/placement_strategies.hpp"
#include "dtensor/placement_strategy.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera::dtensor {

int64_t total_length(const Segments& segments) {
  int64_t n = 0;
  for (const tessera_segment& s : segments) n += s.length;
  return n;
}

Segments compose(const Segments& parent, const Segments& relative) {
  Segments result;
  for (const tessera_segment& want : relative) {
    int64_t skip = want.offset;
    int64_t left = want.length;
    for (const tessera_segment& p : parent) {
      if (left == 0) break;
      if (skip >= p.length) {
        skip -= p.length;
        continue;
      }
      const int64_t take = std::min(left, p.length - skip);
      if (take > 0) result.push_back({p.offset + skip, take});
      left -= take;
      skip = 0;
    }
  }
  return result;
}

namespace {
std::shared_ptr<const PlacementStrategy> strategy_of(const Placement& placement) {
  auto strategy = dtensor::placement(placement.strategy());
  if (strategy == nullptr)
    throw Error(fmt::format("no placement strategy named '{}' is loaded", placement.strategy()));
  return strategy;
}
}  // namespace

Segments split(const Placement& placement, int64_t length, int64_t shards, int64_t index) {
  return strategy_of(placement)->layout(length, shards, index, placement.arguments());
}

std::shared_ptr<const std::vector<Segments>> split_all(const Placement& placement, int64_t length,
                                                       int64_t shards) {
  return strategy_of(placement)->layouts(length, shards, placement.arguments());
}

Segments held(int64_t size, int64_t dim, const Placements& placements, const std::vector<int64_t>& mesh_shape,
              const std::vector<int64_t>& coord, size_t upto) {
  Segments current = {{0, size}};
  for (size_t i = 0; i < upto; ++i)
    if (placements[i].is_shard(dim))
      current = compose(current, split(placements[i], total_length(current), mesh_shape[i], coord[i]));
  return current;
}

Shape local_shape(const Shape& global, const Placements& placements, const std::vector<int64_t>& mesh_shape,
                  const std::vector<int64_t>& coord) {
  Shape shape = global;
  for (size_t d = 0; d < global.size(); ++d)
    shape[d] = total_length(
        held(global[d], static_cast<int64_t>(d), placements, mesh_shape, coord, placements.size()));
  return shape;
}

Tensor take(const Tensor& t, int64_t dim, const Segments& relative) {
  if (relative.size() == 1) return t.narrow(dim, relative[0].offset, relative[0].length);
  std::vector<Tensor> parts;
  for (const tessera_segment& s : relative) parts.push_back(t.narrow(dim, s.offset, s.length));
  if (parts.empty()) return t.narrow(dim, 0, 0);
  return cat(parts, dim);
}

Placements bind(const Placements& placements, int64_t mesh_ndim, int64_t tensor_ndim, const char* op) {
  if (static_cast<int64_t>(placements.size()) != mesh_ndim)
    throw Error(fmt::format("{}: {} placements ({}) for a mesh of {} dims; expected one per mesh dim", op,
                            placements.size(), placements_text(placements), mesh_ndim));
  Placements bound;
  for (const Placement& p : placements) {
    if (!p.is_shard()) {
      bound.push_back(p);
      continue;
    }
    const int64_t d = p.dim() < 0 ? p.dim() + tensor_ndim : p.dim();
    if (d < 0 || d >= tensor_ndim)
      throw Error(
          fmt::format("{}: shard dim {} is out of range for a tensor of {} dims", op, p.dim(), tensor_ndim));
    bound.push_back(p.with_dim(d));
  }
  return bound;
}

}  // namespace tessera::dtensor
