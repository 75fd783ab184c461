// Process groups: the ranks a collective runs over.
//
// A group is one or more *fibres*, each an ordered list of global ranks; a rank's group rank is
// its index in its fibre. A collective runs on every fibre its argument covers, all at once — the
// fibres of a mesh dimension are its sibling groups (world 8, mesh (4, 2): the "dp" group has
// fibres {0,2,4,6} and {1,3,5,7}). A fibre the argument covers only partly is an error.
//
// A group may carry a topology of its own (DeviceMesh::with_topology gives its groups the mesh's):
// collectives over it are then ordered (ring order), costed (cost model, "auto", algorithms'
// estimates) and described to algorithms (request locality and transfer times) on that topology
// instead of the calling world's ([topology] preset).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/rank_map.hpp"

namespace tessera {

class Topology;

class ProcessGroup {
 public:
  ProcessGroup() = default;  // the default group: every rank of the argument, in rank order
  ProcessGroup(std::initializer_list<int> ranks);  // one fibre
  explicit ProcessGroup(std::vector<int> ranks);   // one fibre
  // Several sibling fibres of equal size; no rank may appear twice.
  static ProcessGroup from_fibres(std::vector<std::vector<int>> fibres);

  bool is_default() const { return fibres_.empty(); }
  const std::vector<std::vector<int>>& fibres() const { return fibres_; }
  // The size of each fibre (throws for the default group, whose size depends on the argument).
  int size() const;
  std::string to_string() const;

  // The group's own topology, or null: collectives use the calling world's.
  const std::shared_ptr<const Topology>& topology() const { return topology_; }
  // A copy whose collectives use `topology` (null: the world's again). The topology must span every
  // rank of the fibres (an Error naming the rank and the topology's size otherwise); for the default
  // group, whose ranks are known only at a call, the call checks it.
  ProcessGroup with_topology(std::shared_ptr<const Topology> topology) const;

  // The same fibres and the same topology (by content: Topology::fingerprint), or neither has one.
  bool operator==(const ProcessGroup& other) const;

 private:
  std::vector<std::vector<int>> fibres_;
  std::shared_ptr<const Topology> topology_;  // shared: copying a group copies no links
};

}  // namespace tessera
