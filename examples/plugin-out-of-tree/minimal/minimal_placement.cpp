// libtessera-placement-minimal.so: a placement strategy "cyclic", prefix "Cy": Cy(0) (or
// Cyclic(dim=0)) deals the elements of tensor dim 0 round-robin, so shard i of p holds elements
// i, i + p, i + 2p, ... in that order. The host does all redistribution from these segments.
#include <cstdint>
#include <vector>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

// The segments (offset, length) shard `index` of `num_shards` holds of a dim of `dim_size`.
// PlacementBuilder checks 0 <= index < num_shards and dim_size >= 0 before calling, and hands the
// host back as many segments as it has room for (asking again with more room when needed).
std::vector<tessera_segment> cyclic(int64_t dim_size, int64_t num_shards, int64_t index) {
  std::vector<tessera_segment> segments;
  for (int64_t k = index; k < dim_size;) {
    segments.push_back({k, 1});
    if (num_shards >= dim_size - k) break;  // k + num_shards would pass the end (or overflow)
    k += num_shards;
  }
  return segments;
}

void describe(sdk::PluginBuilder& plugin) {
  static sdk::PlacementBuilder strategy("cyclic", "Cy", TESSERA_PLACEMENT_SHARD, &cyclic);
  plugin.add_placement(strategy);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("placement-minimal", "0.1.0", "round-robin layout Cy(dim)", describe)
