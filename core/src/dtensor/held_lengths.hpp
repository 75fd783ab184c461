// How many elements of one tensor dim each mesh coordinate holds (held()'s total length), worked
// out once per distinct value of the coordinate entries that matter. Only the mesh dims that shard
// the dim matter: on a 128 x 8 mesh whose first dim shards it there are 128 lengths, not 1024.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dtensor/layout.hpp"
#include "tessera/dtensor.hpp"

namespace tessera::dtensor {

class HeldLengths {
 public:
  // The lengths of tensor dim `dim` (global size `size`) after mesh dims [0, upto) of `placements`.
  HeldLengths(int64_t size, int64_t dim, const Placements& placements, const std::vector<int64_t>& mesh_shape,
              size_t upto);

  // The length held at `coord` (a full mesh coordinate).
  int64_t at(const std::vector<int64_t>& coord);
  // The longest and the shortest length any coordinate holds.
  int64_t widest();
  int64_t narrowest();
  // Every length some coordinate holds, ascending, each once.
  std::vector<int64_t> distinct();

 private:
  int64_t length_at(size_t index);

  struct Sharding {
    size_t mesh_dim;
    Placement placement;
    int64_t shards;
    int64_t stride;  // of the mesh dim's coordinate in the index of lengths_
  };
  int64_t size_;
  // The first sharding mesh dim's split of the whole dim: every combination starts from it.
  std::shared_ptr<const std::vector<Segments>> first_split_;
  std::vector<Sharding> shardings_;  // the mesh dims that shard the dim, in mesh order
  std::vector<int64_t> lengths_;     // per combination of their coordinates; -1: not worked out yet
};

}  // namespace tessera::dtensor
