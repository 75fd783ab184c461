// A complete tuner plugin (SDK 1.5, tessera/sdk/tuner.h): libtessera-tuner-prefer.so, tuner
// "prefer". It is also the smallest useful example of the kind, so it is written to be read.
//
// A tuner sees the cost table the rule "auto" made for one call (every applicable algorithm with
// its cost in seconds) and may reprice entries or veto them; "auto" then runs the cheapest entry
// that is not vetoed. This one knows two things, both set by configuration:
//
//   [collectives]
//   algorithms = "auto"
//   tuner = "prefer"                 # or TESSERA_TUNER=prefer
//   [plugins.tuner-prefer]
//   prefer = "direct"                # price this algorithm at 0 s: nothing is cheaper
//   veto = "ring,bruck"              # never choose these (comma-separated)
//
// Both default to empty, which leaves the table as the host made it. A real site tuner would
// instead look at request->bytes, request->group_size and the topology summary (num_nodes,
// slowest_latency, ...) and price from measurements.
#include "tessera/sdk/tuner.h"

#include <sstream>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

// The parameters' current values. The host may set a parameter while another thread is in tune(),
// so they are sdk::Parameter (locked), read once per call.
const sdk::Parameter<std::string>* preferred = nullptr;
const sdk::Parameter<std::string>* vetoed = nullptr;

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  for (std::string name; std::getline(stream, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

// The tuner's one function. Every name in `costs` is an algorithm that applies to this call, and
// `seconds` is what the host thinks it costs. Write only `seconds` (finite, >= 0) and `vetoed`, and
// leave at least one entry not vetoed: otherwise the host ignores the whole answer (and says so).
// sdk::guarded turns an exception into an error status: none may cross the C boundary.
tessera_status tune(void* /*context*/, const tessera_tuner_request* /*request*/,
                    tessera_tuner_cost* const* costs, size_t num_costs, tessera_error* error) {
  return sdk::guarded(error, [&] {
    const std::string prefer = preferred->get();
    const std::vector<std::string> veto = split_names(vetoed->get());
    for (size_t i = 0; i < num_costs; ++i) {
      tessera_tuner_cost& cost = *costs[i];
      if (cost.algorithm == prefer) cost.seconds = 0.0;
      for (const std::string& name : veto)
        if (cost.algorithm == name) cost.vetoed = 1;
    }
  });
}

// The table the host reads: it must stay valid until the plugin is unloaded (a static).
tessera_tuner make_table() {
  tessera_tuner table{};
  table.struct_size = sizeof(table);
  table.name = "prefer";  // what [collectives] tuner names; the component's name must be the same
  table.tune = &tune;
  return table;
}
const tessera_tuner table = make_table();

void describe(sdk::PluginBuilder& plugin) {
  plugin.add_tuner(&table);
  preferred = &plugin.parameter<std::string>("prefer", "", sdk::any_text());
  vetoed = &plugin.parameter<std::string>("veto", "", sdk::any_text());
}

}  // namespace

// The plugin's name is "tuner-prefer": its file is libtessera-tuner-prefer.so, which discovery
// finds on the plugin search path when configuration asks for the tuner "prefer".
TESSERA_DEFINE_PLUGIN("tuner-prefer", "1.0", "prices one algorithm at 0 s and vetoes others, as configured",
                      describe)
