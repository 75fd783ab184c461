// Moving a DTensor's data from one set of placements to another.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/dist.hpp"
#include "tessera/dtensor.hpp"

namespace tessera::dtensor {

// The local tensor of `from` laid out as `to`. Plan: reduce the Partial dims that change
// (reduce_scatter straight into a shard where nothing else shards that dim, else all_reduce); move a shard
// between tensor dims with one all_to_all where nothing else shards them; unshard right to left every Shard
// dim that changes or nests inside one that does (padded all_gather, trimmed by the layouts); then shard or
// make partial left to right (local slices, no communication). Exact for uneven and empty shards and for
// nested shards.
Tensor redistribute_local(const DTensor& from, const Placements& to, bool allow_partial_targets);

// distribute_tensor's step for a Shard mesh dim: group rank 0 of mesh dim i splits what it holds
// along the shard dim by the layout and scatters the pieces (padded to the longest, trimmed on
// arrival). `current` holds the placements already applied on the mesh dims before i.
Tensor scatter_shard(const Tensor& local, const DeviceMesh& mesh, const Shape& global,
                     const Placements& current, size_t i, const Placement& target);

// The label counters and traces show for communication along mesh dim i.
std::string mesh_dim_label(const DeviceMesh& mesh, size_t i);

// All-reduces `local` in place over mesh dim i, labelled with the mesh dim for counters and traces.
void all_reduce_along(Tensor& local, const DeviceMesh& mesh, size_t i, ReduceOp op);

using RankFn = std::function<Tensor(int rank, const std::vector<int64_t>& coord, const Tensor& shard)>;

// Per-rank map over a DTensor's local tensor with each rank's mesh coordinate.
Tensor map_ranks(const Tensor& local, const DeviceMesh& mesh, const RankFn& f);

// Appends to `words` what a map_rank_classes f makes of a coordinate (null: nothing).
using ClassKey = std::function<void(const std::vector<int64_t>& coord, std::vector<int64_t>& words)>;
// What map_rank_classes does off a shapes-only backend (or while a MemoryCounter watches).
enum class OffShapesOnly {
  EachRank,        // every rank runs f (map_ranks)
  OncePerReplica,  // ranks whose shards are replicas of one source and whose words agree share
};

// map_ranks for an f whose result is fixed by the rank's shard and the words `key` appends for its
// coordinate: on a shapes-only backend while no MemoryCounter watches, f runs once per class of
// ranks with alike shards (one layout) and equal words, and the class shares the result. A 1024-rank
// mesh of even shards is then one class, or one per coordinate of the mesh dim the words name.
Tensor map_rank_classes(const Tensor& local, const DeviceMesh& mesh, const ClassKey& key, const RankFn& f,
                        OffShapesOnly off_shapes_only = OffShapesOnly::EachRank);

}  // namespace tessera::dtensor
