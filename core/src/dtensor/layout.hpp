// Where a DTensor's elements live: per mesh coordinate, which global ranges of each tensor dim.
//
// Mesh dims apply left to right; a mesh dim that shards tensor dim d splits what the earlier
// mesh dims left of d (so two mesh dims sharding one dim nest). Segments are global ranges in the
// order a rank stores them.
#pragma once

#include <memory>
#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/sdk/placement.h"

namespace tessera::dtensor {

using Segments = std::vector<tessera_segment>;

int64_t total_length(const Segments& segments);
// `relative` ranges of the concatenation of `parent`, as global ranges.
Segments compose(const Segments& parent, const Segments& relative);
// The relative segments a mesh dim's shard strategy gives shard `index` of `shards` of `length`.
Segments split(const Placement& placement, int64_t length, int64_t shards, int64_t index);
// split for every shard at once (entry k: shard k's), kept by the strategy: what per-rank code
// asks for rank after rank costs one lookup. shards >= 1.
std::shared_ptr<const std::vector<Segments>> split_all(const Placement& placement, int64_t length,
                                                       int64_t shards);
// Global segments of tensor dim `dim` (global size `size`) held at `coord`, applying mesh dims
// [0, upto).
Segments held(int64_t size, int64_t dim, const Placements& placements, const std::vector<int64_t>& mesh_shape,
              const std::vector<int64_t>& coord, size_t upto);
// The local shape at `coord`.
Shape local_shape(const Shape& global, const Placements& placements, const std::vector<int64_t>& mesh_shape,
                  const std::vector<int64_t>& coord);
// The parts of `t` along `dim` named by relative segments, concatenated.
Tensor take(const Tensor& t, int64_t dim, const Segments& relative);

// Normalises negative shard dims and checks placements against a mesh and a tensor rank.
Placements bind(const Placements& placements, int64_t mesh_ndim, int64_t tensor_ndim, const char* op);

}  // namespace tessera::dtensor
