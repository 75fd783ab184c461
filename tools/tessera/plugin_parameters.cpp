// Plugin parameters from the tool's side: `tessera plugins --params [NAME]` lists the parameters
// each plugin declares (SDK 1.5 parameter schemas), as ompi_info --param lists MCA parameters, and
// `tessera config check` checks a file's [plugins.<name>] keys and values against them.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "commands.hpp"

namespace tessera::cli {
namespace fs = std::filesystem;

namespace {

// The value configuration sets for `key` of `plugin` in this process, with where it came from.
std::string current_value_text(const Config& applied, const std::string& plugin,
                               const ParameterInfo& parameter) {
  const auto section = applied.plugin_parameters.find(plugin);
  if (section != applied.plugin_parameters.end())
    if (auto value = section->second.find(parameter.name); value != section->second.end()) {
      const auto origin = applied.plugin_parameter_origins.find(plugin + "." + parameter.name);
      const std::string problem = parameter.check(value->second);
      return fmt::format(
          "\"{}\", set by {}{}", value->second,
          origin != applied.plugin_parameter_origins.end() ? origin->second : "configuration",
          problem.empty() ? "" : fmt::format(" (refused when the plugin loads: it {})", problem));
    }
  return fmt::format("\"{}\", the default", parameter.default_value);
}

void print_parameters(const PluginInfo& info, const Config& applied) {
  if (!info.declares_parameters) {
    std::cout << "plugin " << info.name << ": declares no parameter schema"
              << " (it may still take parameters, which only it can check)\n";
    return;
  }
  for (const ParameterInfo& parameter : info.parameters)
    std::cout << fmt::format(
        "plugin {}: parameter \"{}\" (current value: {}; type: {}; valid values: {})\n    {}\n", info.name,
        parameter.name, current_value_text(applied, info.name, parameter), parameter.type_name(),
        parameter.allowed(), parameter.help);
}

}  // namespace

int list_parameters(const std::string& name) {
  const Config applied = current_config();
  if (!name.empty()) {
    // A plugin name ("coll-ring", found as libtessera-coll-ring.so) or a file.
    std::error_code error;
    const fs::path file = fs::exists(name, error) ? fs::path(name) : find_plugin(name, plugin_search_path());
    const PluginProbe probe = probe_plugin(file);
    if (!probe.accepted) throw PluginError(probe.reason);
    print_parameters(probe.info, applied);
    return 0;
  }
  for (const PluginProbe& probe : discover_plugins())
    if (probe.accepted) print_parameters(probe.info, applied);
  return 0;
}

std::vector<std::string> parameter_problems(const Config& config, const std::vector<fs::path>& dirs) {
  std::vector<std::string> problems;
  for (const auto& [plugin, values] : config.plugin_parameters) {
    const std::string section = fmt::format("[plugins.{}]", plugin);
    PluginProbe probe;
    try {
      probe = probe_plugin(find_plugin(plugin, dirs));
    } catch (const PluginError& e) {
      problems.push_back(fmt::format("{}: no plugin of that name: {}", section, e.what()));
      continue;
    }
    if (!probe.accepted) {
      problems.push_back(fmt::format("{}: the plugin would be rejected: {}", section, probe.reason));
      continue;
    }
    if (!probe.info.declares_parameters) continue;  // only the plugin can check its keys, when loaded
    for (const auto& [key, value] : values) {
      const auto origin = config.plugin_parameter_origins.find(plugin + "." + key);
      const std::string where =
          origin != config.plugin_parameter_origins.end() ? origin->second : section + " " + key;
      const ParameterInfo* declared = nullptr;
      for (const ParameterInfo& parameter : probe.info.parameters)
        if (parameter.name == key) declared = &parameter;
      std::string names;
      for (const ParameterInfo& parameter : probe.info.parameters)
        names += (names.empty() ? "" : ", ") + parameter.name;
      if (declared == nullptr)
        problems.push_back(fmt::format("{}: plugin '{}' has no parameter '{}'; its parameters: {}", where,
                                       plugin, key, names));
      else if (std::string problem = declared->check(value); !problem.empty())
        problems.push_back(fmt::format("{}: plugin '{}' parameter '{}' ({}): {}", where, plugin, key,
                                       declared->type_name(), problem));
    }
  }
  return problems;
}

}  // namespace tessera::cli
