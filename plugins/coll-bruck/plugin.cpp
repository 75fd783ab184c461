// Entry point of libtessera-coll-bruck.so: one collective algorithm, "bruck".
#include "bruck.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table until the plugin is unloaded.
  static tessera::sdk::AlgorithmBuilder bruck("bruck");
  bruck.collective(TESSERA_COLL_ALL_GATHER, &tessera::bruck::all_gather)
      .collective(TESSERA_COLL_ALL_TO_ALL, &tessera::bruck::all_to_all);
  plugin.add_algorithm(bruck);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-bruck", "0.1.0", "Bruck all-gather and all-to-all (ceil(log2 p) steps for any p)",
                      describe)
