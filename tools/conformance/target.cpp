#include "target.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tessera/backend_info.hpp>
#include <tessera/errors.hpp>
#include <tessera/plugins.hpp>

#include "options.hpp"

namespace conformance {

namespace ts = tessera;
namespace fs = std::filesystem;

namespace {

// Backends Tessera builds only where their toolkit is found. Asked for by name on a machine where
// it was not built, such a backend is missing here (a skip), not a misspelt name (a usage error).
bool is_optional_backend(const std::string& name) { return name == "cuda"; }

// A plugin init refusing (no device, no driver) is how a backend says it cannot run here.
bool is_init_refusal(const std::string& message) {
  return message.find("its init refused") != std::string::npos;
}

bool is_file_argument(const std::string& argument) {
  return argument.find('/') != std::string::npos || (argument.size() > 3 && argument.ends_with(".so"));
}

std::vector<fs::path> plugin_files_named(const std::string& backend) {
  std::vector<fs::path> found;
  for (const fs::path& dir : ts::plugin_search_path()) {
    std::error_code error;
    const fs::path file = dir / ("libtessera-backend-" + backend + ".so");
    if (fs::exists(file, error)) found.push_back(file);
  }
  return found;
}

void require_values(const std::string& backend) {
  if (ts::backend_capabilities(backend).shapes_only)
    throw Unavailable(
        backend,
        "it is a shapes-only backend (TESSERA_BACKEND_SHAPES_ONLY): its tensors hold no values to compare");
}

std::vector<std::string> resolve_name(const std::string& name) {
  try {
    (void)ts::backend_capabilities(name);  // loads backend-<name> when it is not loaded yet
  } catch (const ts::Error& e) {
    const std::string message = e.what();
    if (is_init_refusal(message)) throw Unavailable(name, message);
    const std::vector<fs::path> files = plugin_files_named(name);
    if (!files.empty())
      throw LoadFailure(
          fmt::format("backend '{}' could not be loaded from {}: {}", name, files.front().string(), message));
    if (is_optional_backend(name)) {
      std::vector<std::string> dirs;
      for (const fs::path& dir : ts::plugin_search_path()) dirs.push_back(dir.string());
      throw Unavailable(
          name,
          fmt::format("no plugin libtessera-backend-{}.so on the plugin search path ({}): this Tessera was "
                      "built without it (its toolkit was not found) or it is not installed",
                      name, fmt::join(dirs, ", ")));
    }
    throw UsageError(message);  // names the backends that are available
  }
  require_values(name);
  return {name};
}

std::vector<std::string> resolve_file(const std::string& argument) {
  std::error_code error;
  if (!fs::is_regular_file(argument, error))
    throw UsageError(fmt::format("no plugin file '{}' (no such file)", argument));
  const ts::PluginProbe probe = ts::probe_plugin(argument);
  if (!probe.accepted) throw LoadFailure(fmt::format("plugin '{}' was rejected: {}", argument, probe.reason));
  std::vector<std::string> backends;
  std::vector<std::string> components;
  for (const ts::ComponentInfo& component : probe.info.components) {
    components.push_back(component.kind + " " + component.name);
    if (component.kind == "backend") backends.push_back(component.name);
  }
  if (backends.empty())
    throw UsageError(
        fmt::format("plugin '{}' provides no backend (its components: {})", argument,
                    components.empty() ? "none" : fmt::format("{}", fmt::join(components, ", "))));
  try {
    (void)ts::load_plugin(argument);
  } catch (const ts::PluginError& e) {
    if (is_init_refusal(e.what()))
      throw Unavailable(fmt::format("{}", fmt::join(backends, "', '")), e.what());
    throw LoadFailure(fmt::format("plugin '{}' could not be loaded: {}", argument, e.what()));
  }
  for (const std::string& backend : backends) require_values(backend);
  return backends;
}

}  // namespace

std::vector<std::string> resolve_backends(const std::string& argument) {
  return is_file_argument(argument) ? resolve_file(argument) : resolve_name(argument);
}

void check_oracle(const std::string& oracle) {
  try {
    if (ts::backend_capabilities(oracle).shapes_only)
      throw UsageError(
          fmt::format("the oracle '{}' is shapes-only: it computes no values to compare with", oracle));
  } catch (const ts::Error& e) {
    throw UsageError(fmt::format("--oracle: {}", e.what()));
  }
}

}  // namespace conformance
