// Entry point of libtessera-coll-ring.so: one collective algorithm, "ring".
#include "ring.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table until the plugin is unloaded.
  static tessera::sdk::AlgorithmBuilder ring("ring");
  ring.collective(TESSERA_COLL_ALL_REDUCE, &tessera::ring::all_reduce)
      .collective(TESSERA_COLL_ALL_GATHER, &tessera::ring::all_gather)
      .collective(TESSERA_COLL_REDUCE_SCATTER, &tessera::ring::reduce_scatter);
  plugin.add_algorithm(ring);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-ring", "0.1.0",
                      "Ring all-reduce, all-gather and reduce-scatter (NCCL/Gloo style)", describe)
