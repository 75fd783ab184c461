// Process groups: the ranks a collective runs over.
//
// A group is one or more *fibres*, each an ordered list of global ranks; a rank's group rank is
// its index in its fibre. A collective runs on every fibre its argument covers, all at once — the
// fibres of a mesh dimension are its sibling groups (world 8, mesh (4, 2): the "dp" group has
// fibres {0,2,4,6} and {1,3,5,7}). A fibre the argument covers only partly is an error.
#pragma once

#include <string>
#include <vector>

#include "tessera/rank_map.hpp"

namespace tessera {

class ProcessGroup {
 public:
  ProcessGroup() = default;  // the default group: every rank of the argument, in rank order
  ProcessGroup(std::initializer_list<int> ranks);  // one fibre
  explicit ProcessGroup(std::vector<int> ranks);  // one fibre
  // Several sibling fibres of equal size; no rank may appear twice.
  static ProcessGroup from_fibres(std::vector<std::vector<int>> fibres);

  bool is_default() const { return fibres_.empty(); }
  const std::vector<std::vector<int>>& fibres() const { return fibres_; }
  // The size of each fibre (throws for the default group, whose size depends on the argument).
  int size() const;
  std::string to_string() const;
  bool operator==(const ProcessGroup&) const = default;

 private:
  std::vector<std::vector<int>> fibres_;
};

}  // namespace tessera
