// DeviceMesh: construction and checks, coordinates and per-rank values, printing. Slicing into
// groups and sub-meshes is in mesh_slicing.cpp.
#include "tessera/device_mesh.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <ostream>
#include <set>

#include "dispatch/backends.hpp"
#include "mesh/mesh_support.hpp"
#include "plugin/registry.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"

namespace tessera {
namespace {

using mesh::names_text;

// DLPack's name of a device kind, as backends declare it.
std::string device_kind_name(int32_t kind) {
  switch (kind) {
    case kDLCPU:
      return "kDLCPU";
    case kDLCUDA:
      return "kDLCUDA";
    case kDLCUDAHost:
      return "kDLCUDAHost";
    case kDLROCM:
      return "kDLROCM";
    case kDLExtDev:
      return "kDLExtDev";
    default:
      return fmt::format("DLPack device kind {}", kind);
  }
}

// A mesh's device type names the backend its tensors live on: one must serve it, or the mesh
// would silently compute on another device.
void require_backend(const std::string& device_type) {
  try {
    dispatch::backend(device_type);
  } catch (const Error& e) {
    std::string loaded;
    for (const std::string& name : plugin::Registry::instance().backend_names())
      loaded += fmt::format("{}{} ({})", loaded.empty() ? "" : ", ", name,
                            device_kind_name(dispatch::backend(name)->device_type()));
    throw Error(
        fmt::format("init_device_mesh: no backend serves device type '{}'; loaded backends: {}. Load a "
                    "backend plugin for it (load_plugin, or [plugins] load in the config) or use one of "
                    "those device types ({})",
                    device_type, loaded.empty() ? "none" : loaded, e.what()));
  }
}

void check_shape(const std::vector<int64_t>& shape) {
  if (shape.empty()) throw Error("DeviceMesh: the shape has no dims; a mesh needs at least one dim");
  int64_t ranks = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0)
      throw Error(fmt::format("DeviceMesh: dim {} of shape {} has size {}; sizes must be positive", d,
                              shape_text(shape), shape[d]));
    // Ranks are ints; stop before the product overflows.
    if (shape[d] > std::numeric_limits<int>::max() / ranks)
      throw Error(fmt::format("DeviceMesh: shape {} has more ranks than fit in an int", shape_text(shape)));
    ranks *= shape[d];
  }
}

void check_names(const std::vector<std::string>& names, const std::vector<int64_t>& shape) {
  if (names.empty()) return;
  if (names.size() != shape.size())
    throw Error(
        fmt::format("DeviceMesh: {} dim names {} for {} dims (shape {}); give one name per dim or none",
                    names.size(), names_text(names), shape.size(), shape_text(shape)));
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty())
      throw Error(fmt::format("DeviceMesh: dim names {} include an empty name", names_text(names)));
    if (!seen.insert(name).second)
      throw Error(fmt::format("DeviceMesh: dim name '{}' appears twice in {}; names must be unique", name,
                              names_text(names)));
  }
}

void check_fibres(const std::vector<std::vector<int>>& fibres, const std::vector<int64_t>& shape,
                  int64_t size) {
  std::set<int> seen;
  for (size_t f = 0; f < fibres.size(); ++f) {
    if (static_cast<int64_t>(fibres[f].size()) != size)
      throw Error(fmt::format("DeviceMesh: fibre {} has {} ranks but shape {} needs {}", f, fibres[f].size(),
                              shape_text(shape), size));
    for (int r : fibres[f]) {
      if (r < 0)
        throw Error(fmt::format("DeviceMesh: fibre {} holds rank {}; ranks must be non-negative", f, r));
      if (!seen.insert(r).second)
        throw Error(fmt::format(
            "DeviceMesh: rank {} appears twice in the fibres; each rank belongs to one place", r));
    }
  }
}

// One fibre as a nested list, as PyTorch prints mesh.tolist(): [[0, 1], [2, 3]].
std::string nested_text(const std::vector<int>& fibre, const std::vector<int64_t>& shape, size_t dim,
                        int64_t& next) {
  if (dim == shape.size()) return std::to_string(fibre[static_cast<size_t>(next++)]);
  std::string text = "[";
  for (int64_t i = 0; i < shape[dim]; ++i) text += (i ? ", " : "") + nested_text(fibre, shape, dim + 1, next);
  return text + "]";
}

int max_rank(const std::vector<std::vector<int>>& fibres) {
  int top = 0;
  for (const auto& fibre : fibres) top = std::max(top, *std::max_element(fibre.begin(), fibre.end()));
  return top;
}

}  // namespace

DeviceMesh::DeviceMesh(std::string device_type, std::vector<int64_t> shape,
                       std::vector<std::string> dim_names, std::vector<std::vector<int>> fibres)
    : device_type_(std::move(device_type)),
      shape_(std::move(shape)),
      dim_names_(std::move(dim_names)),
      fibres_(std::make_shared<const std::vector<std::vector<int>>>(std::move(fibres))) {
  if (device_type_.empty()) throw Error("DeviceMesh: the device type is empty (expected e.g. 'cpu')");
  check_shape(shape_);
  check_names(dim_names_, shape_);
  if (fibres_->empty()) {
    std::vector<int> ranks(static_cast<size_t>(size()));
    for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int>(r);
    fibres_ = std::make_shared<const std::vector<std::vector<int>>>(
        std::vector<std::vector<int>>{std::move(ranks)});
  }
  check_fibres(*fibres_, shape_, size());
  index_positions();
  forget_groups();
  // The world the topology spans is known only to the caller; the ranks up to the largest one in
  // the mesh are the smallest world that holds it (init_device_mesh's world exactly).
  topology_ = std::make_shared<const Topology>(default_topology(max_rank(*fibres_) + 1));
}

int64_t DeviceMesh::size() const {
  int64_t ranks = 1;
  for (int64_t s : shape_) ranks *= s;
  return ranks;
}

int64_t DeviceMesh::size(int64_t dim) const {
  mesh::check_dim(dim, shape_);
  return shape_[static_cast<size_t>(dim)];
}

int64_t DeviceMesh::dim_index(const std::string& name) const {
  if (dim_names_.empty())
    throw Error(fmt::format("DeviceMesh: no dim named '{}': the mesh (shape {}) has no dim names", name,
                            shape_text(shape_)));
  const auto it = std::find(dim_names_.begin(), dim_names_.end(), name);
  if (it == dim_names_.end())
    throw Error(fmt::format("DeviceMesh: no dim named '{}'; the dims are {}", name, names_text(dim_names_)));
  return it - dim_names_.begin();
}

std::vector<int> DeviceMesh::ranks() const {
  std::vector<int> all;
  for (const auto& fibre : *fibres_) all.insert(all.end(), fibre.begin(), fibre.end());
  std::sort(all.begin(), all.end());
  return all;
}

void DeviceMesh::index_positions() {
  auto position = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(max_rank(*fibres_)) + 1, -1);
  for (const auto& fibre : *fibres_)
    for (size_t i = 0; i < fibre.size(); ++i)
      (*position)[static_cast<size_t>(fibre[i])] = static_cast<int64_t>(i);
  position_ = std::move(position);
}

std::vector<int64_t> DeviceMesh::coordinate_of(int rank) const {
  if (position_ && rank >= 0 && static_cast<size_t>(rank) < position_->size())
    if (const int64_t at = (*position_)[static_cast<size_t>(rank)]; at >= 0)
      return mesh::coordinate_of_index(at, shape_);
  throw Error(
      fmt::format("DeviceMesh: rank {} is not in the mesh (ranks {})", rank, fmt::join(ranks(), ", ")));
}

SymInt DeviceMesh::local_rank(int64_t dim) const {
  mesh::check_dim(dim, shape_);
  std::vector<std::pair<int, int64_t>> values;
  for (const auto& fibre : *fibres_)
    for (size_t i = 0; i < fibre.size(); ++i)
      values.emplace_back(
          fibre[i], mesh::coordinate_of_index(static_cast<int64_t>(i), shape_)[static_cast<size_t>(dim)]);
  // A SymInt collapses to a plain int when every rank agrees (a size-1 dim).
  return SymInt(LocalInt(RankMap<int64_t>(std::move(values))));
}

SymInt DeviceMesh::local_rank(const std::string& name) const { return local_rank(dim_index(name)); }

// PyTorch's get_local_rank() and get_group() without a dim: only a 1-d mesh has just one.
static void require_one_dim(const char* op, const std::vector<int64_t>& shape) {
  if (shape.size() != 1)
    throw Error(
        fmt::format("{}: the mesh has {} dims ({}); name the dim ({}(dim) or {}(\"name\")), as only a 1-d "
                    "mesh needs none",
                    op, shape.size(), shape_text(shape), op, op));
}

SymInt DeviceMesh::get_local_rank() const {
  require_one_dim("get_local_rank", shape_);
  return local_rank(0);
}

ProcessGroup DeviceMesh::get_group() const {
  require_one_dim("get_group", shape_);
  return group(int64_t{0});
}

std::vector<SymInt> DeviceMesh::coordinate() const {
  std::vector<SymInt> coord;
  for (int64_t d = 0; d < ndim(); ++d) coord.push_back(local_rank(d));
  return coord;
}

DeviceMesh DeviceMesh::with_topology(Topology topology) const {
  const int top = max_rank(*fibres_);
  if (top >= topology.world())
    throw Error(fmt::format("DeviceMesh: topology '{}' spans {} ranks but the mesh holds rank {}",
                            topology.name(), topology.world(), top));
  DeviceMesh mesh = *this;
  mesh.topology_ = std::make_shared<const Topology>(std::move(topology));
  mesh.own_topology_ = true;
  mesh.forget_groups();  // its groups carry the new topology
  return mesh;
}

std::string DeviceMesh::to_string() const {
  std::string ranks;
  for (const auto& fibre : *fibres_) {
    int64_t next = 0;
    ranks += (ranks.empty() ? "" : ", ") + nested_text(fibre, shape_, 0, next);
  }
  // Several fibres (a sliced mesh holds every rank's sub-mesh) are listed as such.
  if (fibres_->size() > 1) ranks = "fibres=[" + ranks + "]";
  std::string text = fmt::format("DeviceMesh('{}', {}", device_type_, ranks);
  if (!dim_names_.empty()) text += ", mesh_dim_names=" + names_text(dim_names_);
  return text + ")";
}

bool DeviceMesh::operator==(const DeviceMesh& other) const {
  return device_type_ == other.device_type_ && shape_ == other.shape_ && dim_names_ == other.dim_names_ &&
         *fibres_ == *other.fibres_;
}

DeviceMesh init_device_mesh(const std::string& device_type, const std::vector<int64_t>& shape,
                            const std::vector<std::string>& dim_names) {
  // The world check needs a valid shape; an invalid one is left to the constructor's message.
  const bool valid_shape =
      !shape.empty() && std::all_of(shape.begin(), shape.end(), [](int64_t s) { return s > 0; });
  if (LocalMode* mode = active_local_mode(); mode != nullptr && valid_shape) {
    int64_t ranks = 1;
    for (int64_t s : shape)
      ranks = std::min<int64_t>(ranks * s, std::numeric_limits<int>::max() + int64_t{1});
    // A mesh spans the whole world, also the ranks other processes host.
    const World in = mode->world();
    const auto world = static_cast<int64_t>(in.num_processes() > 1 ? in.size() : mode->ranks().size());
    if (ranks != world)
      throw Error(
          fmt::format("init_device_mesh: mesh shape {} has {} ranks but the world (local mode) has {} ranks",
                      shape_text(shape), ranks, world));
    if (in.num_processes() == 1 && mode->ranks() != RankSet::range(static_cast<int>(world)))
      throw Error(
          fmt::format("init_device_mesh: the local mode's ranks {} are not 0..{}; a mesh numbers its ranks "
                      "from 0 (build a DeviceMesh with explicit ranks instead)",
                      mode->ranks().to_string(), world - 1));
  }
  if (!device_type.empty()) require_backend(device_type);  // an empty one gets the constructor's message
  return DeviceMesh(device_type, shape, dim_names);
}

std::ostream& operator<<(std::ostream& os, const DeviceMesh& mesh) { return os << mesh.to_string(); }

}  // namespace tessera
