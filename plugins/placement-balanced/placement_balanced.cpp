// Balanced shard ("B(d)"): the first n % k shards get one extra element, so shard sizes differ by
// at most one (10 over 3 -> 4, 3, 3; 10 over 4 -> 3, 3, 2, 2), unlike torch.chunk's layout.
#include <algorithm>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

std::vector<tessera_segment> balanced_layout(int64_t n, int64_t k, int64_t i) {
  const int64_t base = n / k;
  const int64_t extra = n % k;
  return {{i * base + std::min(i, extra), base + (i < extra ? 1 : 0)}};
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  static tessera::sdk::PlacementBuilder balanced("balanced_shard", "B", TESSERA_PLACEMENT_SHARD,
                                                 &balanced_layout);
  plugin.add_placement(balanced);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("placement-balanced", "0.1.0", "balanced shard: sizes differ by at most one", describe)
