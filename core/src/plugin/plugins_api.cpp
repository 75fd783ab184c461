// The public plugin functions of tessera/plugins.hpp, over the Registry.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "comm/selection.hpp"
#include "dispatch/thread_pool.hpp"
#include "plugin/registry.hpp"
#include "tessera/errors.hpp"
#include "tessera/observe.hpp"
#include "tessera/topology.hpp"

namespace tessera {
namespace fs = std::filesystem;
using plugin::Registry;

PluginInfo load_plugin(const std::string& name_or_path) { return Registry::instance().load(name_or_path); }
void unload_plugin(const std::string& name) { Registry::instance().unload(name); }
std::vector<PluginInfo> loaded_plugins() { return Registry::instance().loaded(); }
std::vector<fs::path> plugin_search_path() { return Registry::instance().search_path(); }
std::vector<std::string> backend_names() { return Registry::instance().backend_names(); }
std::string default_backend() { return Registry::instance().default_backend_name(); }
void set_default_backend(const std::string& name) { Registry::instance().set_default_backend(name); }

PluginProbe probe_plugin(const fs::path& file) {
  PluginProbe probe;
  probe.file = file;
  try {
    probe.info = plugin::LoadedPlugin::open(file)->info();
    probe.accepted = true;
  } catch (const PluginError& e) {
    probe.reason = e.what();
  }
  return probe;
}

std::vector<PluginProbe> discover_plugins() {
  std::vector<PluginProbe> probes;
  for (const fs::path& file : plugin::plugin_files(plugin_search_path(), "libtessera-")) probes.push_back(probe_plugin(file));
  return probes;
}

void configure(const Config& config) {
  Registry::instance().apply(config);
  dispatch::set_rank_threads(config.threads);
  if (!config.trace_file.empty() && !tracing()) {
    start_trace(config.trace_file.string());
    static const bool written_at_exit = (std::atexit([] {
      try {
        stop_trace();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tessera: %s\n", e.what());
      }
    }), true);
    (void)written_at_exit;
  }
  if (!config.topology.empty()) {
    try {
      set_default_topology(config.topology);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: [topology] preset: {}", config.source.string(), e.what()));
    }
  }
  if (!config.collective_algorithms.empty()) {
    try {
      comm::set_rules(config.collective_algorithms, /*from_config=*/true);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: [collectives] algorithms: {}", config.source.string(), e.what()));
    }
  }
}

void set_threads(int threads) { dispatch::set_rank_threads(threads); }
int threads() { return dispatch::rank_threads(); }

}  // namespace tessera
