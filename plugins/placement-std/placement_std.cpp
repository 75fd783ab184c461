// The standard placements: Shard with torch.chunk's layout ("S(d)"), Replicate ("R") and
// Partial ("P(op)").
#include <algorithm>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

// torch.chunk: every shard but the last few gets ceil(n / k); shard i starts at ceil * i, and
// shards starting at or past n are empty (10 over 4 -> 3, 3, 3, 1; 9 over 4 -> 3, 3, 3, 0).
std::vector<tessera_segment> chunk_layout(int64_t n, int64_t k, int64_t i) {
  const int64_t full = (n + k - 1) / k;
  const int64_t start = std::min(full * i, n);
  return {{start, std::min(full, n - start)}};
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  static tessera::sdk::PlacementBuilder shard("shard", "S", TESSERA_PLACEMENT_SHARD, &chunk_layout);
  static tessera::sdk::PlacementBuilder replicate("replicate", "R", TESSERA_PLACEMENT_REPLICATE);
  static tessera::sdk::PlacementBuilder partial("partial", "P", TESSERA_PLACEMENT_PARTIAL);
  plugin.add_placement(shard).add_placement(replicate).add_placement(partial);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("placement-std", "0.1.0", "Shard (torch.chunk layout), Replicate, Partial", describe)
