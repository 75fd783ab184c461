// A collective-algorithm plugin with the SDK 1.3 lifecycle and parameters, written with the C++
// builder (tessera/sdk/cpp/plugin_builder.hpp): libtessera-coll-params.so, algorithm
// "params-direct" (a direct all_reduce). It records every lifecycle call as a line in the file
// named by TESSERA_TEST_PLUGIN_LOG (when set), so tests can count them from outside: "init",
// "finalize", "set <key>=<value>" after a parameter is accepted, "build group_size=<n>" when the
// host builds a schedule. Parameters: group_size (an integer >= 1) and label (any text).
// PARAMS_INIT_FAILS builds libtessera-bad-init-refuses.so instead, whose init refuses the host.
// PARAMS_VARIANT="<tag>" builds another plugin from the same source, whose algorithm is
// "params-<tag>-direct" and whose log lines begin with "<tag> "; its plugin name is
// PARAMS_PLUGIN_NAME (a second plugin, or one taking coll-params' name).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "direct_schedule.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

#ifdef PARAMS_VARIANT
const std::string log_prefix = PARAMS_VARIANT " ";
#else
const std::string log_prefix;
#endif

void record(const std::string& line) {
  const char* file = std::getenv("TESSERA_TEST_PLUGIN_LOG");
  if (file == nullptr) return;
  if (std::FILE* out = std::fopen(file, "a")) {
    std::fprintf(out, "%s%s\n", log_prefix.c_str(), line.c_str());
    std::fclose(out);
  }
}

const sdk::Parameter<int64_t>* group_size = nullptr;

void direct_all_reduce(const tessera_collective_request& q, const sdk::Schedule& s) {
  record("build group_size=" + std::to_string(group_size->get()));
  plugin_test::schedule_direct_all_reduce(q, s);
}

void describe(sdk::PluginBuilder& plugin) {
#if defined(PARAMS_INIT_FAILS)
  static sdk::AlgorithmBuilder algorithm("init-refuses-direct");
#elif defined(PARAMS_VARIANT)
  static sdk::AlgorithmBuilder algorithm("params-" PARAMS_VARIANT "-direct");
#else
  static sdk::AlgorithmBuilder algorithm("params-direct");
#endif
  algorithm.collective(TESSERA_COLL_ALL_REDUCE, &direct_all_reduce);
  plugin.add_algorithm(algorithm);
  plugin.on_init([](const tessera_host_info& host) {
#ifdef PARAMS_INIT_FAILS
    (void)host;
    throw sdk::Error(TESSERA_UNIMPLEMENTED, "bad-init-refuses: no accelerator in this machine");
#else
    record(std::string("init host=") + (host.host_name != nullptr ? host.host_name : "?"));
#endif
  });
  plugin.on_finalize([] { record("finalize"); });
  // Each accepted value is recorded; a refused one (the parser throws) is not.
  const auto recorded = [](auto parse) {
    return [parse](const std::string& name, const std::string& text) {
      auto value = parse(name, text);
      record("set " + name + "=" + text);
      return value;
    };
  };
  group_size = &plugin.parameter<int64_t>("group_size", 2, recorded(sdk::integer_at_least(1)));
  plugin.parameter<std::string>("label", "none", recorded(sdk::any_text()));
}

}  // namespace

#if defined(PARAMS_INIT_FAILS)
TESSERA_DEFINE_PLUGIN("bad-init-refuses", "1.0", "init refuses the host", describe)
#elif defined(PARAMS_VARIANT)
TESSERA_DEFINE_PLUGIN(PARAMS_PLUGIN_NAME, "1.0", "a variant of coll-params", describe)
#else
TESSERA_DEFINE_PLUGIN("coll-params", "1.0", "lifecycle and parameters, recorded in TESSERA_TEST_PLUGIN_LOG",
                      describe)
#endif
