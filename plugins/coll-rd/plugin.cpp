// Entry point of libtessera-coll-rd.so: two collective algorithms, "rd" (recursive doubling and
// halving) and "rabenseifner" (all-reduce as reduce-scatter + all-gather).
#include "rd.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

void describe(tessera::sdk::PluginBuilder& plugin) {
  using tessera::rd::require_power_of_two;
  // Static: the host keeps pointers into the tables until the plugin is unloaded.
  static tessera::sdk::AlgorithmBuilder rd("rd");
  rd.collective(TESSERA_COLL_ALL_REDUCE, &tessera::rd::all_reduce)
      .collective(TESSERA_COLL_ALL_GATHER, &tessera::rd::all_gather, &require_power_of_two)
      .collective(TESSERA_COLL_REDUCE_SCATTER, &tessera::rd::reduce_scatter, &require_power_of_two);
  plugin.add_algorithm(rd);

  static tessera::sdk::AlgorithmBuilder rabenseifner("rabenseifner");
  rabenseifner.collective(TESSERA_COLL_ALL_REDUCE, &tessera::rd::all_reduce_rabenseifner);
  plugin.add_algorithm(rabenseifner);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-rd", "0.1.0",
                      "Recursive doubling/halving collectives and Rabenseifner's all-reduce (MPICH style)",
                      describe)
