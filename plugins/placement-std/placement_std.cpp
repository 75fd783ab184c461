// The standard placements: Shard with torch.chunk's layout ("S(d)"), Replicate ("R"), Partial
// ("P(op)") and the strided shard ("SS(d, k)", PyTorch's _StridedShard) that FSDP uses on a dim
// tensor parallelism already shards.
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

// The dim is first cut into k blocks (torch.chunk: what k tensor-parallel ranks hold) and shard i
// gets chunk i of every block: sharding over this mesh dim happens inside the blocks, so a later
// mesh dim that shards the same tensor dim k ways picks whole blocks apart (8 over 2 shards with
// k = 2: shard 0 holds [0, 2) and [4, 6), shard 1 holds [2, 4) and [6, 8)).
std::vector<tessera_segment> strided_layout(const std::string& arguments, int64_t n, int64_t shards,
                                            int64_t i) {
  const int64_t blocks = tessera::sdk::parse_integer(arguments, "split factor", 1);
  std::vector<tessera_segment> out;
  for (int64_t b = 0; b < blocks; ++b) {
    const tessera_segment block = chunk_layout(n, blocks, b)[0];
    const tessera_segment piece = chunk_layout(block.length, shards, i)[0];
    if (piece.length > 0) out.push_back({block.offset + piece.offset, piece.length});
  }
  if (out.empty()) out.push_back({0, 0});
  return out;
}

void check_split_factor(const std::string& arguments) {
  tessera::sdk::parse_integer(arguments, "split factor", 1);
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  static tessera::sdk::PlacementBuilder shard("shard", "S", TESSERA_PLACEMENT_SHARD, &chunk_layout);
  static tessera::sdk::PlacementBuilder replicate("replicate", "R", TESSERA_PLACEMENT_REPLICATE);
  static tessera::sdk::PlacementBuilder partial("partial", "P", TESSERA_PLACEMENT_PARTIAL);
  static tessera::sdk::PlacementBuilder strided("strided_shard", "SS", &check_split_factor, &strided_layout);
  plugin.add_placement(shard).add_placement(replicate).add_placement(partial).add_placement(strided);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("placement-std", "0.1.0",
                      "Shard (torch.chunk layout), Replicate, Partial, strided Shard", describe)
