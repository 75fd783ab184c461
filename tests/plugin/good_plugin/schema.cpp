// A collective-algorithm plugin that declares its parameters (SDK 1.5 parameter schema), written
// with the C++ builder: libtessera-coll-schema.so, algorithm "schema-direct" (a direct all_reduce).
// One parameter of each type. The builder's own checks word their messages differently from the
// host's ("pieces must be an integer in 1..64"), so a test can tell who refused a value.
#include <string>

#include "direct_schedule.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

void describe(sdk::PluginBuilder& plugin) {
  static sdk::AlgorithmBuilder algorithm("schema-direct");
  algorithm.collective(TESSERA_COLL_ALL_REDUCE, &plugin_test::schedule_direct_all_reduce);
  plugin.add_algorithm(algorithm);
  plugin.integer_parameter("pieces", 4, 1, 64, "How many pieces a message is cut into.");
  plugin.real_parameter("ratio", 0.5, 0.0, 1.0, "The share of a message sent first.");
  plugin.boolean_parameter("verbose", false, "Whether the plugin logs each schedule it builds.");
  plugin.text_parameter("label", "none", "A name the plugin shows in its log lines.");
  plugin.choice_parameter("order", "forward", {"forward", "reverse"},
                          "The order in which ranks are visited.");
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-schema", "1.0", "declared parameters of every type", describe)
