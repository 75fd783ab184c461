// Shared helpers of the SDK 1.3 collective tests (hier_test, auto_select_test): the test plugins
// of tests/comm/CMakeLists.txt, loaded by file, and scoped settings restored on exit.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace comm_test {

namespace ts = tessera;

// Loads libtessera-<plugin>.so from the comm test plugin directory unless loaded already.
inline void ensure_loaded(const std::string& plugin) {
  const std::vector<ts::PluginInfo> loaded = ts::loaded_plugins();
  if (std::any_of(loaded.begin(), loaded.end(), [&](const ts::PluginInfo& p) { return p.name == plugin; }))
    return;
  ts::load_plugin(
      (std::filesystem::path(TESSERA_COMM_TEST_PLUGIN_DIR) / ("libtessera-" + plugin + ".so")).string());
}

// Collective rules for a scope.
struct ScopedRules {
  explicit ScopedRules(const std::string& rules) : saved(ts::dist::algorithms()) {
    ts::dist::set_algorithms(rules);
  }
  ~ScopedRules() { ts::dist::set_algorithms(saved); }
  std::string saved;
};

// The default topology preset for a scope ("" = fully connected).
struct ScopedTopology {
  explicit ScopedTopology(const std::string& preset) : saved(ts::default_topology_preset()) {
    ts::set_default_topology(preset);
  }
  ~ScopedTopology() { ts::set_default_topology(saved); }
  std::string saved;
};

// Sets a parameter of a loaded plugin as configuration does ([plugins.<plugin>] key = value).
// configure() applies every key of the Config: call this before setting rules or a topology.
inline void set_plugin_parameter(const std::string& plugin, const std::string& key,
                                 const std::string& value) {
  ts::Config config;
  config.plugin_parameters[plugin][key] = value;
  ts::configure(config);
}

// A local tensor of `p` ranks whose shard r is f(r).
template <class F>
ts::Tensor per_rank(int p, F&& f) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  {
    const ts::DisabledLocalMode plain;  // shards are plain tensors, also inside a LocalMode
    for (int r = 0; r < p; ++r) shards.emplace_back(r, f(r));
  }
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
}

// The algorithm every all_reduce in the scope ran with, as CommCounter saw it ("" when none ran,
// "mixed" when several did).
inline std::string algorithm_seen(const ts::CommCounter& counter) {
  std::string seen;
  for (const ts::CommCounter::Entry& e : counter.entries()) {
    if (e.collective != "all_reduce") continue;
    seen = seen.empty() || seen == e.algorithm ? e.algorithm : "mixed";
  }
  return seen;
}

}  // namespace comm_test
