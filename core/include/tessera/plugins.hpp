// Plugins: finding, loading and listing the shared objects that provide backends (and, later,
// collective algorithms and placement strategies).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tessera {

struct ComponentInfo {
  std::string kind;  // "backend", "collective", "placement", "transport"; "unknown" for a newer SDK's kind
  std::string name;  // e.g. "cpu"
};

// One configuration parameter a plugin declares (its parameter schema, SDK 1.5).
struct ParameterInfo {
  enum class Type { integer, real, boolean, text, choice };
  std::string name;  // the key of [plugins.<plugin name>]
  Type type = Type::text;
  std::string default_value;
  std::string help;
  int64_t integer_min = 0, integer_max = 0;  // integer: the inclusive range
  double real_min = 0, real_max = 0;         // real: the inclusive range (infinite when unbounded)
  std::vector<std::string> choices;          // choice: the valid values

  std::string type_name() const;  // "integer", "real", "boolean", "text", "choice"
  // The valid values, as a reader wants them: ">= 1", "1 .. 64", "one of: ring, tree", "true or
  // false"; "any text" for text.
  std::string allowed() const;
  // Empty when `value` is valid, else why not: "must be an integer >= 1, got '0'".
  std::string check(const std::string& value) const;
};

struct PluginInfo {
  std::string name;  // e.g. "backend-cpu"
  std::string version;
  std::string description;
  unsigned sdk_major = 0;
  unsigned sdk_minor = 0;
  std::filesystem::path file;
  std::vector<ComponentInfo> components;
  // Whether the plugin declares its parameters (SDK 1.5); `parameters` is then the whole list, and
  // the host checks every configured key and value against it. Without a schema the plugin may
  // still take parameters, which only it can check.
  bool declares_parameters = false;
  std::vector<ParameterInfo> parameters;
};

// The outcome of trying one file: accepted with its description, or rejected with the reason.
struct PluginProbe {
  std::filesystem::path file;
  bool accepted = false;
  PluginInfo info;     // valid when accepted
  std::string reason;  // why it was rejected (names the file, what it offers, what the host needs)
};

// Loads a plugin by name ("backend-cpu", found as libtessera-backend-cpu.so on the search path) or
// by path (anything containing '/' or ending in ".so") and registers its components. Throws
// PluginError when the file is missing or rejected; the process keeps working either way. Loading
// an already-loaded file again is a no-op that returns its info.
// The bundled plugins of the kinds it provides are loaded first, so a component whose name (or
// placement prefix) a loaded one has is rejected, naming both plugins, unless it is flagged
// TESSERA_COMPONENT_OVERRIDES and configuration allows overriding ([plugins] allow_override); then
// it replaces the other. After validation the plugin's init (SDK 1.3) runs, then set_parameter for
// each configured parameter of it: a refused one is a ConfigError and the plugin is not loaded.
PluginInfo load_plugin(const std::string& name_or_path);

// Removes the plugin's components from the registry; a component it had overridden comes back. The
// shared object itself stays mapped until the last tensor (or other object) made from it is gone;
// the plugin's finalize (SDK 1.3) runs then, just before it is unmapped. Plugins still loaded when
// the process ends are neither finalized nor unmapped (objects in static storage may outlive main).
void unload_plugin(const std::string& name);

std::vector<PluginInfo> loaded_plugins();

// The directories searched, in order: TESSERA_PLUGIN_PATH (':'-separated), the configured
// [plugins].search_path, then the plugin directory beside the Tessera library itself.
std::vector<std::filesystem::path> plugin_search_path();

// Tries every libtessera-*.so on the search path (without registering anything).
std::vector<PluginProbe> discover_plugins();
// Tries one file (without registering it): loads and validates it, rejects it as load_plugin would
// for a plugin name or component name already taken (loading the bundled plugins of its kinds
// first, as load_plugin does) and, unless it is loaded already, runs its init (then its
// finalize), so a plugin that cannot work here (a GPU backend without a device) is rejected with
// the reason its init gives.
PluginProbe probe_plugin(const std::filesystem::path& file);

// Names of the registered backends, and the one factories use when no backend is named.
std::vector<std::string> backend_names();
std::string default_backend();
void set_default_backend(const std::string& name);  // loads backend-<name> if needed; throws if unknown

// Names of the registered transports (SDK 1.1 components that move chunks between processes), after
// loading every libtessera-transport-*.so on the search path.
std::vector<std::string> transport_names();

}  // namespace tessera
