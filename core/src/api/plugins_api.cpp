// The public plugin functions of tessera/plugins.hpp, over the Registry, and configure(), which
// applies a Config to every component: hence the top layer (core/src/README.md), which may include
// any other.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "api/world_config.hpp"
#include "comm/selection.hpp"
#include "dispatch/thread_pool.hpp"
#include "log/log.hpp"
#include "plugin/environment.hpp"
#include "plugin/registry.hpp"
#include "tessera/config.hpp"
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
std::vector<std::string> transport_names() { return Registry::instance().transport_names(); }

PluginProbe probe_plugin(const fs::path& file) {
  PluginProbe probe;
  probe.file = file;
  try {
    const std::shared_ptr<plugin::LoadedPlugin> opened = plugin::LoadedPlugin::open(file);
    // A clash (a plugin name or a component name taken) rejects a load before init: so here.
    if (std::string problem = Registry::instance().admission_problem(*opened); !problem.empty())
      throw PluginError(problem);
    // Whether loading would succeed includes the plugin's init, which refuses where the plugin
    // cannot work (a GPU backend on a machine without a device): the probe runs it, and finalize
    // when the probe is done, unless the plugin is loaded already (its init ran once, and must
    // not run again while it is in use).
    const std::vector<PluginInfo> loaded = loaded_plugins();
    const bool in_use = std::any_of(loaded.begin(), loaded.end(),
                                    [&](const PluginInfo& info) { return info.file == opened->info().file; });
    if (!in_use) opened->start();
    probe.info = opened->info();
    probe.accepted = true;
  } catch (const PluginError& e) {
    probe.reason = e.what();
  }
  return probe;
}

std::vector<PluginProbe> discover_plugins() {
  std::vector<PluginProbe> probes;
  for (const fs::path& file : plugin::plugin_files(plugin_search_path(), "libtessera-"))
    probes.push_back(probe_plugin(file));
  return probes;
}

namespace {

// Where a key's value came from, for messages: the variable (if any) when it is set, else the file.
std::string origin(const Config& config, const char* variable, const char* key) {
  if (const char* value = variable != nullptr ? plugin::env_value(variable) : nullptr)
    return fmt::format("{}='{}'", variable, value);
  return fmt::format("{}: {}", config.source.empty() ? "configuration" : config.source.string(), key);
}

// Runs `apply`; an error from it is rethrown, of the same type, prefixed with `where`.
template <typename Apply>
void applying(const std::string& where, Apply&& apply) {
  try {
    apply();
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", where, e.what()));
  } catch (const PluginError& e) {
    throw PluginError(fmt::format("{}: {}", where, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", where, e.what()));
  }
}

// A trace started by configuration is written when the process exits. Registered after the first
// start_trace, so the trace state (constructed by it) is still alive when the handler runs.
void write_trace_at_exit() {
  static const bool registered = (std::atexit([] {
                                    try {
                                      stop_trace();
                                    } catch (const std::exception& e) {
                                      std::fprintf(stderr, "tessera: %s\n", e.what());
                                    }
                                  }),
                                  true);
  (void)registered;
}

}  // namespace

// The one place a configuration is applied: the precedence is settled first (with_environment),
// then every key is applied in an order where each step may use the previous ones (plugins before
// the default backend and the rules that name what they provide).
namespace {

// What configure() last applied (current_config): the configuration is the process's, as the
// registry it configures is.
struct AppliedConfig {
  std::mutex mutex;
  std::optional<Config> config;
};
AppliedConfig& applied_config() {
  static AppliedConfig applied;
  return applied;
}

}  // namespace

Config current_config() {
  configure_from_environment();  // the first use of the library applies the environment's
  AppliedConfig& applied = applied_config();
  std::lock_guard lock(applied.mutex);
  return applied.config ? *applied.config : Config::from_environment();
}

void configure(const Config& requested) {
  const Config config = with_environment(requested);
  applying(origin(config, "TESSERA_LOG_LEVEL", "[log] level"),
           [&] { observe::set_log_level(config.log_level); });
  // Before loading: a plugin loaded now may override, and gets its parameters after its init.
  applying(origin(config, "TESSERA_PLUGIN_ALLOW_OVERRIDE", "[plugins] allow_override"),
           [&] { Registry::instance().set_allow_override(config.plugin_allow_override); });
  // Its errors name each parameter's own origin (file:line or the variable).
  Registry::instance().set_parameters(config.plugin_parameters, config.plugin_parameter_origins);
  applying(origin(config, nullptr, "[plugins] load"),
           [&] { Registry::instance().apply(config.plugin_search_path, config.plugins_to_load); });
  applying(origin(config, nullptr, "[backend] default"),
           [&] { Registry::instance().set_default_backend(config.default_backend); });
  applying(origin(config, "TESSERA_THREADS", "[execution] threads"),
           [&] { dispatch::set_rank_threads(config.threads); });
  if (!config.topology.empty())
    applying(origin(config, nullptr, "[topology] preset"), [&] { set_default_topology(config.topology); });
  if (!config.collective_algorithms.empty())
    applying(origin(config, "TESSERA_COLL", "[collectives] algorithms"),
             [&] { comm::set_rules(config.collective_algorithms); });
  // After the plugins: the tuner named may come from one just loaded (or found on the new path).
  applying(origin(config, "TESSERA_TUNER", "[collectives] tuner"),
           [&] { Registry::instance().set_tuner(config.collective_tuner); });
  applying(origin(config, "TESSERA_TRANSPORT", "[world]"), [&] { api::set_world_config(config); });
  if (!config.trace_file.empty()) {
    if (tracing()) {
      observe::logger().info("a trace is already being recorded; {} is not started",
                             origin(config, "TESSERA_TRACE", "[trace] file"));
    } else {
      applying(origin(config, "TESSERA_TRACE", "[trace] file"),
               [&] { start_trace(config.trace_file.string()); });
      write_trace_at_exit();
    }
  }
  AppliedConfig& applied = applied_config();  // only once every key took (a failure throws above)
  std::lock_guard lock(applied.mutex);
  applied.config = config;
}

namespace {

// The layers below apply the start-up configuration on first use through this hook
// (plugin/startup_configuration.hpp), installed when the library loads.
const bool startup_configuration_installed =
    (plugin::install_startup_configuration(&configure_from_environment), true);

}  // namespace

void configure_from_environment() {
  // configure() itself reaches Registry::instance(), which calls this: a nested call on the thread
  // doing the work returns at once, while other threads wait for it to finish.
  thread_local bool applying_here = false;
  if (applying_here) return;
  static std::once_flag once;
  applying_here = true;
  try {
    std::call_once(once, [] { configure(Config::from_environment()); });
  } catch (...) {
    applying_here = false;
    throw;  // the once_flag stays unset: the next use reports the same mistake
  }
  applying_here = false;
}

void set_threads(int threads) {
  configure_from_environment();  // first, so start-up configuration cannot later undo this call
  dispatch::set_rank_threads(threads);
}
int threads() {
  configure_from_environment();  // the configured count, even when nothing else was used yet
  return dispatch::rank_threads();
}

}  // namespace tessera
