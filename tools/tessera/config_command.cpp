// tessera config check FILE: whether a tessera.toml would be accepted, checked as far as possible
// without applying it: the file parses (unknown keys are errors), and everything it names exists
// (plugins, default backend, collective algorithms, topology preset, log level, trace directory,
// the plugin of every [plugins.<name>] section, and each parameter its schema declares).
// Every problem found is reported, not only the first.
// tessera config show: the configuration in force in this process (TESSERA_CONFIG, then the
// environment variables over it), read back from the library.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include <tessera/tessera.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;

// The directories a configured plugin name is looked up in: the file's own search_path first (it
// is not applied to this process), then the usual path.
std::vector<fs::path> search_dirs(const Config& config) {
  std::vector<fs::path> dirs = config.plugin_search_path;
  for (const fs::path& dir : plugin_search_path()) dirs.push_back(dir);
  return dirs;
}

// [plugins.<name>] parameters, with where each was set, for both commands:
// "coll-hier.group_size = 4 from tessera.toml:9: [plugins.coll-hier] group_size, ..." or "none".
std::string parameters_text(const Config& config) {
  std::vector<std::string> parameters;
  for (const auto& [plugin, keys] : config.plugin_parameters)
    for (const auto& [key, value] : keys) {
      const auto origin = config.plugin_parameter_origins.find(plugin + "." + key);
      parameters.push_back(
          fmt::format("{}.{} = {}{}", plugin, key, value,
                      origin == config.plugin_parameter_origins.end() ? "" : " from " + origin->second));
    }
  return parameters.empty() ? "none" : fmt::format("{}", fmt::join(parameters, ", "));
}

// "transport auto, 1 rank per process, timeout 60000 ms, check_collectives on".
std::string world_text(const Config& config) {
  const std::string checks = !config.check_collectives.has_value() ? "default (on in debug builds)"
                             : *config.check_collectives           ? "on"
                                                                   : "off";
  return fmt::format("transport {}, {} rank{} per process, timeout {} ms, check_collectives {}",
                     config.world_transport, config.ranks_per_process,
                     config.ranks_per_process == 1 ? "" : "s", config.world_timeout_ms, checks);
}

int check(const std::string& file) {
  const Config config = Config::from_file(file);  // syntax and unknown keys: throws naming file:line:key
  std::vector<std::string> problems;
  const auto attempt = [&](const std::string& what, const std::function<void()>& test) {
    try {
      test();
    } catch (const std::exception& e) {
      problems.push_back(fmt::format("{}: {}", what, e.what()));
    }
  };

  // spdlog's names (set_log_level would apply it; this only reads it).
  static const std::set<std::string> levels = {"trace", "debug", "info",     "warn", "warning",
                                               "error", "err",   "critical", "off"};
  if (levels.count(config.log_level) == 0)
    problems.push_back(
        fmt::format("[log] level '{}': unknown; expected one of trace, debug, info, warn, error, "
                    "critical, off",
                    config.log_level));

  // Plugins are loaded for real (the only way to know a backend or algorithm they provide); that
  // lasts only as long as this process.
  const std::vector<fs::path> dirs = search_dirs(config);
  std::vector<std::string> plugins;
  for (const std::string& plugin : config.plugins_to_load)
    attempt(fmt::format("[plugins] load '{}'", plugin), [&] {
      const PluginInfo info = load_plugin(find_plugin(plugin, dirs).string());
      plugins.push_back(fmt::format("{} {} ({})", info.name, info.version, info.file.string()));
    });

  attempt(fmt::format("[backend] default '{}'", config.default_backend), [&] {
    const auto known = [&] {
      const std::vector<std::string> names = backend_names();
      return std::find(names.begin(), names.end(), config.default_backend) != names.end();
    };
    // As set_default_backend does: a backend not loaded yet comes from plugin backend-<name>.
    if (!known()) {
      try {
        load_plugin(find_plugin("backend-" + config.default_backend, dirs).string());
      } catch (const PluginError&) {  // reported below as an unknown backend
      }
    }
    if (!known()) {
      // Backends are registered when first needed, so the available ones are also those offered
      // by the plugins on the search path.
      const std::vector<std::string> registered = backend_names();
      std::set<std::string> available(registered.begin(), registered.end());
      for (const PluginProbe& probe : discover_plugins())
        for (const ComponentInfo& component : probe.info.components)
          if (probe.accepted && component.kind == "backend") available.insert(component.name);
      throw Error(fmt::format("no such backend; available backends: {}",
                              available.empty() ? "none" : fmt::format("{}", fmt::join(available, ", "))));
    }
  });

  if (!config.collective_algorithms.empty())
    attempt("[collectives] algorithms", [&] {
      const std::string saved = dist::algorithms();
      dist::set_algorithms(config.collective_algorithms);
      dist::set_algorithms(saved);
    });

  if (!config.topology.empty())
    attempt("[topology] preset", [&] {
      // Checks the preset's form (its fit to a world is known only when a mesh asks). There is no
      // getter for the previous default; this process had none to keep, as it exits next.
      set_default_topology(config.topology);
      set_default_topology("");
    });

  // [plugins.<name>] sections: the plugin exists and its schema (if it declares one) takes each key and
  // value.
  for (std::string& problem : parameter_problems(config, dirs)) problems.push_back(std::move(problem));

  if (!config.trace_file.empty()) {
    const fs::path dir =
        config.trace_file.has_parent_path() ? config.trace_file.parent_path() : fs::path(".");
    std::error_code error;
    if (!fs::is_directory(dir, error))
      problems.push_back(fmt::format("[trace] file '{}': cannot write: directory '{}' does not exist",
                                     config.trace_file.string(), dir.string()));
  }

  if (!problems.empty()) {
    for (const std::string& problem : problems)
      std::cerr << "tessera: error: " << file << ": " << problem << '\n';
    return 1;
  }
  std::cout << file << ": ok\n"
            << "  plugins:   "
            << (plugins.empty() ? "none listed" : fmt::format("{}", fmt::join(plugins, ", "))) << '\n'
            << "  backend:   " << config.default_backend << '\n'
            << "  log level: " << config.log_level << '\n'
            << "  threads:   "
            << (config.threads == 0 ? "0 (one per hardware thread)" : std::to_string(config.threads)) << '\n'
            << "  rules:     "
            << (config.collective_algorithms.empty() ? "built-in defaults (" + dist::algorithms() + ")"
                                                     : config.collective_algorithms)
            << '\n'
            << "  topology:  " << (config.topology.empty() ? "fully_connected (default)" : config.topology)
            << '\n'
            << "  trace:     " << (config.trace_file.empty() ? "none" : config.trace_file.string()) << '\n'
            << "  override:  " << (config.plugin_allow_override ? "allowed" : "not allowed") << '\n'
            << "  params:    " << parameters_text(config) << '\n'
            << "  world:     " << world_text(config) << '\n';
  return 0;
}

// Each value is read back from what the library uses, not from the file, so what is shown is
// what a program started with this environment gets.
int show() {
  const char* file = std::getenv("TESSERA_CONFIG");
  std::vector<std::string> dirs;
  for (const fs::path& dir : plugin_search_path()) dirs.push_back(dir.lexically_normal().string());
  std::vector<std::string> plugins;
  for (const PluginInfo& info : loaded_plugins()) plugins.push_back(info.name + " " + info.version);
  const std::string topology = default_topology_preset();
  // What configure() applied at first use (the file with the variables over it), for the keys
  // with no getter of their own.
  const Config applied = current_config();
  std::cout << "file:        "
            << (file != nullptr && file[0] != '\0' ? file : "none (TESSERA_CONFIG is not set)") << '\n'
            << "plugin path: " << fmt::format("{}", fmt::join(dirs, ", ")) << '\n'
            << "plugins:     "
            << (plugins.empty() ? "none loaded" : fmt::format("{}", fmt::join(plugins, ", "))) << '\n'
            << "backend:     " << default_backend() << '\n'
            << "log level:   " << applied.log_level << '\n'
            << "threads:     " << threads() << '\n'
            << "rules:       " << dist::algorithms() << '\n'
            << "topology:    " << (topology.empty() ? "fully_connected (default)" : topology) << '\n'
            << "trace:       "
            << (tracing() ? "recording, written at exit to " + applied.trace_file.string()
                          : std::string("none"))
            << '\n'
            << "override:    " << (applied.plugin_allow_override ? "allowed" : "not allowed") << '\n'
            << "params:      " << parameters_text(applied) << '\n'
            << "world:       " << world_text(applied) << '\n';
  return 0;
}

}  // namespace

Command add_config_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* sub =
      app.add_subcommand("config", "Check configuration files, or show the configuration in force");
  sub->require_subcommand(0, 1);  // none is reported as main reports it for tessera itself
  CLI::App* check_sub = sub->add_subcommand(
      "check",
      "Check a configuration file and everything it names, without applying it; exit status 0 if it is good");
  check_sub->add_option("FILE", *file, "The tessera.toml to check")->required();
  CLI::App* show_sub = sub->add_subcommand(
      "show",
      "Show the configuration in force: TESSERA_CONFIG's file with the environment variables over it");
  return {sub, [sub, check_sub, show_sub, file] {
            if (check_sub->parsed()) return check(*file);
            if (show_sub->parsed()) return show();
            throw subcommand_required(*sub);
          }};
}

}  // namespace tessera::cli
