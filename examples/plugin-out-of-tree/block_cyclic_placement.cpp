// libtessera-placement-block-cyclic.so: a block-cyclic placement, "C(dim, block)", the model for a
// third-party placement strategy that takes an argument.
//
// ScaLAPACK's block-cyclic layout: the dim is cut into blocks of `block` elements (the last one may
// be shorter) and block k goes to shard k mod num_shards, so shard i holds blocks i, i + p, i + 2p,
// ... in that order. "C(0, 4)" in any placement text (or Placement::shard(0, "block_cyclic", "4"))
// lays tensor dim 0 out in blocks of 4; "BlockCyclic(dim=0, 4)" is the PyTorch-style spelling.
//
// The host does everything else generically from the segments returned here: distribute_tensor,
// full_tensor, redistribution to and from any other placement, printing. It also checks, once per
// (arguments, dim size, shard count), that the shards' segments cover the dim exactly once.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

// Called when a placement naming this strategy is parsed or made: the argument is the block size.
void check_block_size(const std::string& arguments) {
  if (arguments.empty())
    throw sdk::Error(TESSERA_INVALID_ARGUMENT,
                     "block size must be an integer >= 1, got nothing (e.g. C(0, 4))");
  sdk::parse_integer(arguments, "block size", 1);
}

std::vector<tessera_segment> block_cyclic(const std::string& arguments, int64_t dim_size, int64_t num_shards,
                                          int64_t index) {
  const int64_t block = sdk::parse_integer(arguments, "block size", 1);
  // Written so that nothing overflows for any sizes the host may pass: k * block <= dim_size
  // because k < blocks, and k only grows while k + num_shards stays below blocks.
  const int64_t blocks = dim_size / block + (dim_size % block != 0 ? 1 : 0);
  std::vector<tessera_segment> segments;
  for (int64_t k = index; k < blocks;) {
    const int64_t offset = k * block;
    segments.push_back({offset, std::min(block, dim_size - offset)});
    if (num_shards >= blocks - k) break;
    k += num_shards;
  }
  return segments;
}

void describe(sdk::PluginBuilder& plugin) {
  static sdk::PlacementBuilder strategy("block_cyclic", "C", &check_block_size, &block_cyclic);
  plugin.add_placement(strategy);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("placement-block-cyclic", "0.1.0", "block-cyclic layout C(dim, block) (ScaLAPACK)",
                      describe)
