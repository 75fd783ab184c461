// tessera plugins [--verbose] [--load FILE] [--params [NAME]]: what plugins the search path holds,
// whether one file would be accepted, or the parameters plugins declare (plugin_parameters.cpp).
// None registers anything, except that --verbose loads each backend to list its kernels against
// the catalogue (sdk/KERNELS.md) and the calls it cannot serve.
// tessera plugins check FILE exercises one plugin in a worker process (plugins_check_command.cpp).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "tessera/backend_info.hpp"
#include "tessera/errors.hpp"
#include "tessera/plugins.hpp"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;

std::string components_text(const PluginInfo& info) {
  std::string text;
  for (const ComponentInfo& component : info.components)
    text += (text.empty() ? "" : ", ") + component.kind + " " + component.name;
  return text.empty() ? "none" : text;
}

std::string sdk_text(const PluginInfo& info) {
  return "SDK " + std::to_string(info.sdk_major) + "." + std::to_string(info.sdk_minor);
}

// A file here, else a plugin name ("backend-cpu") looked up on the search path.
fs::path resolve(const std::string& name_or_file) {
  std::error_code error;
  if (fs::exists(name_or_file, error)) return name_or_file;
  return find_plugin(name_or_file, plugin_search_path());
}

// A backend's kernels by op ("add: float32 float64 int32 int64 bool"), catalogue coverage and the
// user calls it cannot serve, indented under its plugin.
void print_capabilities(const std::string& backend) {
  BackendCapabilities caps;
  try {
    caps = backend_capabilities(backend);
  } catch (const Error& e) {
    std::cout << "    backend '" << backend << "': could not be loaded: " << e.what() << '\n';
    return;
  }
  std::cout << "    backend '" << caps.backend << "'" << (caps.shapes_only ? " (shapes only)" : "")
            << ": kernels for " << caps.ops.size() << " of the " << caps.catalogue_size
            << " catalogue ops (sdk/KERNELS.md)\n";
  for (const BackendCapabilities::Op& op : caps.ops) {
    std::string dtypes;
    for (DType dtype : op.dtypes) dtypes += ' ' + std::string(dtype_name(dtype));
    std::cout << "      " << op.name << ':' << dtypes << '\n';
  }
  if (!caps.missing_ops.empty())
    std::cout << "      missing: " << fmt::format("{}", fmt::join(caps.missing_ops, ", ")) << '\n';
  if (caps.unserved_calls.empty()) {
    std::cout << "      serves every call of sdk/KERNELS.md \"What each call needs\"\n";
    return;
  }
  std::cout << "      cannot serve:\n";
  for (const BackendCapabilities::Call& call : caps.unserved_calls)
    std::cout << "        " << call.call << (call.variant.empty() ? "" : " (" + call.variant + ")")
              << ": needs " << fmt::format("{}", fmt::join(call.missing, ", ")) << '\n';
}

int list_plugins(bool verbose) {
  // Everything is gathered before anything is printed, so a failure prints only the error.
  const std::vector<fs::path> search_path = plugin_search_path();
  const std::vector<PluginProbe> probes = discover_plugins();

  std::cout << "Plugin search path:\n";
  for (const fs::path& dir : search_path) {
    std::error_code error;
    std::cout << "  " << dir.lexically_normal().string()
              << (fs::is_directory(dir, error) ? "" : "  (not a directory)") << '\n';
  }

  size_t accepted = 0;
  for (const PluginProbe& probe : probes) accepted += probe.accepted ? 1 : 0;

  std::cout << "\nPlugins (" << accepted << "):\n";
  if (accepted == 0) std::cout << "  none\n";
  for (const PluginProbe& probe : probes) {
    if (!probe.accepted) continue;
    const PluginInfo& info = probe.info;
    std::cout << "  " << info.name << ' ' << info.version << "  (" << sdk_text(info) << ")\n"
              << "    components: " << components_text(info) << '\n';
    if (!info.description.empty()) std::cout << "    description: " << info.description << '\n';
    std::cout << "    file: " << info.file.string() << '\n';
    if (verbose)
      for (const ComponentInfo& component : info.components)
        if (component.kind == "backend") print_capabilities(component.name);
  }

  if (accepted != probes.size()) {
    std::cout << "\nRejected files (" << probes.size() - accepted << "):\n";
    for (const PluginProbe& probe : probes)
      if (!probe.accepted) std::cout << "  " << probe.file.string() << "\n    " << probe.reason << '\n';
  }
  return 0;
}

int probe_one(const std::string& name_or_file) {
  PluginProbe probe;
  try {
    probe = probe_plugin(resolve(name_or_file));
  } catch (const PluginError& e) {  // a name found nowhere on the search path
    probe.reason = e.what();
  }
  if (!probe.accepted) {
    std::cout << "rejected: " << probe.reason << '\n';
    return 1;
  }
  const PluginInfo& info = probe.info;
  std::cout << "accepted: " << info.name << ' ' << info.version << " (" << sdk_text(info)
            << ") components: " << components_text(info) << '\n'
            << "  file: " << info.file.string() << '\n';
  return 0;
}

}  // namespace

Command add_plugins_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto verbose = std::make_shared<bool>(false);
  auto params = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("plugins", "List the plugins on the search path, or check one file");
  sub->add_flag("--verbose,-v", *verbose,
                "Also list each backend's kernels by op and dtype, its coverage of the kernel catalogue "
                "(sdk/KERNELS.md) and the calls it cannot serve");
  CLI::Option* load = sub->add_option("--load", *file,
                                      "Check whether this plugin file (or name on the search path) would be "
                                      "accepted; exit status 0 if so, 1 if not")
                          ->type_name("FILE");
  CLI::Option* params_option =
      sub->add_option(
             "--params", *params,
             "List the parameters each plugin declares (or plugin NAME only): current value and where it "
             "was set, type, valid values and help")
          ->expected(0, 1)
          ->type_name("[NAME]");
  const Command check = add_plugins_check_command(*sub);
  return {sub, [file, load, verbose, params, params_option, check] {
            if (check.app->parsed()) return check.run();
            if (params_option->count() > 0) return list_parameters(*params);
            return load->count() > 0 ? probe_one(*file) : list_plugins(*verbose);
          }};
}

}  // namespace tessera::cli
