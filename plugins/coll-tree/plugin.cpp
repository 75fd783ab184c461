// Entry point of libtessera-coll-tree.so: one collective algorithm, "tree" (binomial trees).
#include "tessera/sdk/cpp/plugin_builder.hpp"
#include "tree.hpp"

namespace {

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table until the plugin is unloaded.
  static tessera::sdk::AlgorithmBuilder tree("tree");
  tree.collective(TESSERA_COLL_BROADCAST, &tessera::tree::broadcast)
      .collective(TESSERA_COLL_REDUCE, &tessera::tree::reduce)
      .collective(TESSERA_COLL_ALL_REDUCE, &tessera::tree::all_reduce);
  plugin.add_algorithm(tree);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-tree", "0.1.0", "Binomial-tree broadcast, reduce and all-reduce (MPICH style)",
                      describe)
