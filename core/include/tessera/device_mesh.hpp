// DeviceMesh: an n-d array of global ranks (PyTorch: torch.distributed.device_mesh).
//
// init_device_mesh("cpu", {4, 2}, {"dp", "tp"}) arranges ranks 0..7 row-major; the coordinate of
// rank r is coord[i] = (r / prod(shape[i+1:])) % shape[i]. A mesh sliced by name ("tp") holds one
// sub-mesh per combination of the other dims — in simulation every rank's own sub-mesh at once —
// as *fibres* of equal shape; collectives and DTensors on it run on every fibre together.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "tessera/process_group.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/topology.hpp"

namespace tessera {

class DeviceMesh {
 public:
  // fibres: each a row-major array of prod(shape) global ranks; default one fibre 0..size-1.
  DeviceMesh(std::string device_type, std::vector<int64_t> shape, std::vector<std::string> dim_names = {},
             std::vector<std::vector<int>> fibres = {});
  // Copies share the fibres and groups (immutable). No move operations: a moved-from mesh keeps
  // them too, so that every mesh, moved from or not, stays usable.
  DeviceMesh(const DeviceMesh&) = default;
  DeviceMesh& operator=(const DeviceMesh&) = default;

  const std::string& device_type() const { return device_type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size() const;  // ranks per fibre (the product of the shape)
  int64_t size(int64_t dim) const;
  const std::vector<std::string>& dim_names() const { return dim_names_; }
  int64_t dim_index(const std::string& name) const;  // throws for an unknown name or unnamed mesh
  const std::vector<std::vector<int>>& fibres() const { return *fibres_; }
  std::vector<int> ranks() const;  // every rank of every fibre, ascending

  // The coordinate of a global rank within its fibre; throws when the rank is not in the mesh.
  std::vector<int64_t> coordinate_of(int rank) const;
  // The group along one dim: one fibre per line of ranks along that dim, over all fibres.
  ProcessGroup group(int64_t dim) const;
  ProcessGroup group(const std::string& name) const;
  // Per rank (local ints in simulation).
  SymInt local_rank(int64_t dim) const;
  SymInt local_rank(const std::string& name) const;
  std::vector<SymInt> coordinate() const;

  // PyTorch's spellings of the above. Without a dim, get_local_rank and get_group need a 1-d mesh.
  const std::vector<std::string>& mesh_dim_names() const { return dim_names_; }
  SymInt get_local_rank() const;
  SymInt get_local_rank(int64_t dim) const { return local_rank(dim); }
  SymInt get_local_rank(const std::string& name) const { return local_rank(name); }
  ProcessGroup get_group() const;
  ProcessGroup get_group(int64_t dim) const { return group(dim); }
  ProcessGroup get_group(const std::string& name) const { return group(name); }
  std::vector<SymInt> get_coordinate() const { return coordinate(); }

  // The sub-mesh of the named dims (in mesh order) containing each rank.
  DeviceMesh operator[](const std::string& name) const;
  DeviceMesh operator[](const std::vector<std::string>& names) const;
  // mesh[{"dp", "tp"}]: without it the braces would also match std::string's (first, last)
  // iterator constructor and the call would be ambiguous.
  DeviceMesh operator[](std::initializer_list<std::string> names) const {
    return (*this)[std::vector<std::string>(names)];
  }
  // One dim holding every rank in row-major order.
  DeviceMesh flatten(const std::string& name = "") const;

  // The links between the mesh's ranks: the one with_topology gave, else the [topology] preset
  // over the ranks up to the mesh's largest (as it was when the mesh was made).
  const Topology& topology() const { return *topology_; }
  // A copy whose collectives run on `topology`, which must span every rank of the mesh: every
  // group it hands out (group, get_group) carries it (ProcessGroup::topology), and so does every
  // sub-mesh, flattened mesh and DTensor redistribution over it. Collectives over it are ordered
  // (ring order), costed (cost model, "auto", algorithms' estimates) and described to algorithms
  // on this topology instead of the calling world's. Every process of a world spread over
  // processes must give the same topology (a collective compares it when the world checks calls).
  DeviceMesh with_topology(Topology topology) const;
  // Whether with_topology gave this mesh its topology (else its groups use the calling world's).
  bool has_own_topology() const { return own_topology_; }

  std::string to_string() const;  // DeviceMesh('cpu', [[0, 1], [2, 3]], mesh_dim_names=('dp', 'tp'))
  // The same device type, shape, dim names and ranks; the topology is not compared (it changes
  // how fast collectives are, not what they compute).
  bool operator==(const DeviceMesh& other) const;

 private:
  std::string device_type_;
  std::vector<int64_t> shape_;
  std::vector<std::string> dim_names_;
  // Shared by copies (a DTensor holds its mesh, and ops copy DTensors): made, never changed.
  std::shared_ptr<const std::vector<std::vector<int>>> fibres_;
  std::shared_ptr<const Topology> topology_;  // shared with the groups handed out: no copy per group
  bool own_topology_ = false;                 // given by with_topology
  // position_->at(r): rank r's index within its fibre, -1 for a rank not in the mesh (0..the largest
  // rank). coordinate_of is asked for every rank of every DTensor op: a lookup, not a search of the
  // fibres. Shared by copies; made again whenever fibres_ changes (index_positions).
  std::shared_ptr<const std::vector<int64_t>> position_;
  void index_positions();
  // group(dim) once made, per dim: every collective over a mesh dim asks for its group. Shared by
  // copies; a mesh whose fibres, shape or topology change gets a fresh one (forget_groups).
  struct GroupsMade;
  std::shared_ptr<GroupsMade> groups_;
  void forget_groups();
};

// PyTorch's repr, as to_string().
std::ostream& operator<<(std::ostream& os, const DeviceMesh& mesh);

// A mesh over ranks 0..prod(shape)-1. Inside a LocalMode the product must equal the mode's rank
// count (the world), else an error naming both. The device type must be served by a backend
// (loaded, or found on the plugin search path), else an error listing the loaded backends.
DeviceMesh init_device_mesh(const std::string& device_type, const std::vector<int64_t>& shape,
                            const std::vector<std::string>& dim_names = {});

}  // namespace tessera
