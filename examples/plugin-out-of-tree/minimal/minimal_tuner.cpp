// libtessera-tuner-minimal.so: a tuner "small_direct" ([collectives] tuner = "small_direct" or
// TESSERA_TUNER=small_direct). Site knowledge: up to `small_bytes` per rank, "direct" is fastest
// whatever the costs say. Set it with [plugins.tuner-minimal] small_bytes = 8192.
#include <cstdint>
#include <cstring>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

// Set in describe; the host may change the value (set_parameter) while tune runs on other threads,
// which Parameter::get() allows.
const sdk::Parameter<int64_t>* small_bytes = nullptr;

// Reprices (writes `seconds`) or vetoes (`vetoed` = 1) entries; the host checks every price is a
// finite number >= 0 and that something stays not vetoed, or ignores the whole answer.
tessera_status tune(void*, const tessera_tuner_request* request, tessera_tuner_cost* const* costs,
                    size_t num_costs, tessera_error* error) {
  return sdk::guarded(error, [&] {
    if (request->bytes > small_bytes->get()) return;  // leave the host's costs as they are
    for (size_t i = 0; i < num_costs; ++i)
      if (std::strcmp(costs[i]->algorithm, "direct") == 0) costs[i]->seconds = 0;  // the lowest price wins
  });
}

void describe(sdk::PluginBuilder& plugin) {
  // A declared parameter (SDK 1.5): the host checks every configured value against the range
  // before the plugin sees it, and `tessera plugins --params` lists it.
  small_bytes =
      &plugin.integer_parameter("small_bytes", 4096, 0, INT64_MAX,
                                "Calls of at most this many bytes per rank run the 'direct' algorithm.");
  static const tessera_tuner tuner{.struct_size = sizeof(tessera_tuner),
                                   .extension = nullptr,
                                   .name = "small_direct",
                                   .context = nullptr,
                                   .tune = &tune};
  plugin.add_tuner(&tuner);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("tuner-minimal", "0.1.0", "direct for small calls", describe)
