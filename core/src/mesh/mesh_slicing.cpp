// DeviceMesh slicing: the process group along a dim, sub-meshes of named dims, flattening. All
// three cut each fibre the same way — into lines of ranks along some kept dims, one line per
// combination of the other dims' coordinates — which is how one simulated sub-mesh stands for
// every rank's own.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "mesh/mesh_support.hpp"
#include "tessera/device_mesh.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

// The lines of `fibre` along the dims marked in `kept`: one per combination of the other dims'
// coordinates (row-major), each holding the ranks along the kept dims (row-major).
std::vector<std::vector<int>> split_fibre(const std::vector<int>& fibre, const std::vector<int64_t>& shape,
                                          const std::vector<bool>& kept) {
  int64_t line_size = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (kept[d]) line_size *= shape[d];
  std::vector<std::vector<int>> lines(fibre.size() / static_cast<size_t>(line_size),
                                      std::vector<int>(static_cast<size_t>(line_size)));
  for (size_t i = 0; i < fibre.size(); ++i) {
    const std::vector<int64_t> coord = mesh::coordinate_of_index(static_cast<int64_t>(i), shape);
    int64_t line = 0;
    int64_t position = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (kept[d])
        position = position * shape[d] + coord[d];
      else
        line = line * shape[d] + coord[d];
    }
    lines[static_cast<size_t>(line)][static_cast<size_t>(position)] = fibre[i];
  }
  return lines;
}

std::vector<std::vector<int>> split_fibres(const std::vector<std::vector<int>>& fibres,
                                           const std::vector<int64_t>& shape, const std::vector<bool>& kept) {
  std::vector<std::vector<int>> lines;
  for (const auto& fibre : fibres)
    for (auto& line : split_fibre(fibre, shape, kept)) lines.push_back(std::move(line));
  return lines;
}

}  // namespace

struct DeviceMesh::GroupsMade {
  std::mutex mutex;  // copies of one mesh may live on several threads
  std::vector<std::optional<ProcessGroup>> by_dim;
};

void DeviceMesh::forget_groups() { groups_ = std::make_shared<GroupsMade>(); }

ProcessGroup DeviceMesh::group(int64_t dim) const {
  mesh::check_dim(dim, shape_);
  {
    std::lock_guard lock(groups_->mutex);
    const auto at = static_cast<size_t>(dim);
    if (at < groups_->by_dim.size() && groups_->by_dim[at]) return *groups_->by_dim[at];
  }
  std::vector<bool> kept(shape_.size(), false);
  kept[static_cast<size_t>(dim)] = true;
  std::vector<std::vector<int>> lines = split_fibres(*fibres_, shape_, kept);
  // By first rank, so that a group does not depend on how the mesh's fibres happen to be listed.
  std::sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  ProcessGroup group = ProcessGroup::from_fibres(std::move(lines));
  // Only a topology given to the mesh: without one, collectives follow the calling world's (its
  // preset, or a distributed world's links between processes), not the preset the mesh saw.
  if (own_topology_) group = group.with_topology(topology_);
  std::lock_guard lock(groups_->mutex);
  if (groups_->by_dim.size() < shape_.size()) groups_->by_dim.resize(shape_.size());
  groups_->by_dim[static_cast<size_t>(dim)] = group;
  return group;
}

ProcessGroup DeviceMesh::group(const std::string& name) const { return group(dim_index(name)); }

DeviceMesh DeviceMesh::operator[](const std::string& name) const {
  return (*this)[std::vector<std::string>{name}];
}

DeviceMesh DeviceMesh::operator[](const std::vector<std::string>& names) const {
  if (names.empty()) throw Error("DeviceMesh: slicing needs at least one dim name");
  std::vector<bool> kept(shape_.size(), false);
  int64_t previous = -1;
  for (const std::string& name : names) {
    const int64_t dim = dim_index(name);  // throws for an unnamed mesh or an unknown name
    if (dim <= previous)
      throw Error(
          fmt::format("DeviceMesh: slice {} is not in mesh order; name dims once each, in the order {}",
                      mesh::names_text(names), mesh::names_text(dim_names_)));
    kept[static_cast<size_t>(dim)] = true;
    previous = dim;
  }
  // Built from a copy: the parts are valid by construction, and the topology is kept as it is.
  DeviceMesh sub = *this;
  sub.shape_.clear();
  for (size_t d = 0; d < shape_.size(); ++d)
    if (kept[d]) sub.shape_.push_back(shape_[d]);
  sub.dim_names_ = names;
  sub.fibres_ = std::make_shared<const std::vector<std::vector<int>>>(split_fibres(*fibres_, shape_, kept));
  sub.index_positions();
  sub.forget_groups();
  return sub;
}

DeviceMesh DeviceMesh::flatten(const std::string& name) const {
  DeviceMesh flat = *this;
  flat.shape_ = {size()};
  flat.forget_groups();  // one dim now: its group holds every rank
  if (!name.empty())
    flat.dim_names_ = {name};
  else if (!dim_names_.empty())
    flat.dim_names_ = {fmt::format("{}", fmt::join(dim_names_, "_"))};
  return flat;
}

}  // namespace tessera
