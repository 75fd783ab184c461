// The process-wide registry of loaded plugins and the components they provide. Components are
// kept untyped, by kind and name (plugin/component.hpp): the layer that owns a kind gives typed
// lookups over these (dispatch/backends.hpp, comm/components.hpp, dtensor/placement_strategies.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugin/component.hpp"
#include "plugin/loaded_plugin.hpp"
#include "plugin/startup_configuration.hpp"
#include "plugin/transport.hpp"
#include "tessera/plugins.hpp"

namespace tessera::plugin {

// The folder of the plugins shipped with the core: <libdir>/tessera/plugins beside libtessera.
std::filesystem::path bundled_plugin_dir();
// Whether `file` lies in that folder: a plugin the core was built and tested with.
bool bundled(const std::filesystem::path& file);

class Registry {
 public:
  // The first call applies the start-up configuration (plugin/startup_configuration.hpp).
  static Registry& instance();

  PluginInfo load(const std::string& name_or_path);
  void unload(const std::string& name);
  // Why `plugin` (opened, not registered) would be rejected by load: its plugin name is taken by
  // another file, or one of its components clashes with a registered one (after the bundled
  // providers of its kinds are loaded, as load does); empty when it would be admitted or is loaded.
  std::string admission_problem(const LoadedPlugin& plugin);
  // Finalizes every loaded plugin, the last loaded first, keeping each mapped: the process is
  // exiting (registered with atexit when the registry is made). Failures are logged.
  void finalize_at_exit() noexcept;
  std::vector<PluginInfo> loaded() const;

  // Loads backend-<name> from the search path when no loaded plugin provides `name`; an Error naming
  // the backends available when none can. The object is a dispatch::Backend.
  std::shared_ptr<const void> backend(const std::string& name);
  std::shared_ptr<const void> default_backend();
  void set_default_backend(const std::string& name);
  std::string default_backend_name() const;
  std::vector<std::string> backend_names() const;

  // A component of `kind` (collective algorithm, placement, tuner) by name; nullptr when none
  // provides it. The first call for a kind loads every plugin of its family on the search path
  // (coll-*, placement-*, tuner-*); placements are matched by prefix too, so their family is always
  // discovered before an answer.
  std::shared_ptr<const void> component(int32_t kind, const std::string& name);
  // Every registered component of `kind`, sorted by name, after its family is discovered (backends:
  // those loaded so far).
  std::vector<std::pair<std::string, Component>> components(int32_t kind);
  // Transports by name ("mpi"); a name not yet loaded loads every transport-* plugin on the search
  // path first. nullptr when none provides it.
  std::shared_ptr<const Transport> transport(const std::string& name);
  std::vector<std::string> transport_names();

  // Tuners (SDK 1.5) for the rule "auto". set_tuner names the one in force ("" = none): a name not
  // yet loaded loads every tuner-* plugin on the search path first; a name that none provides is a
  // ConfigError naming it and the available tuners. Changing it makes "auto" choose again.
  void set_tuner(const std::string& name);
  std::string tuner_name() const;
  // The tuner in force (a comm::Tuner), or nullptr when none is set or its plugin has been unloaded
  // since.
  std::shared_ptr<const void> tuner() const;

  // Changes whenever what a lookup by name or the default backend or tuner would answer may have
  // changed (a component registered or unloaded, the default backend or the tuner set). The typed
  // lookups' per-thread memos (dispatch/backends.cpp) stay valid while it is unchanged, so that the
  // hot paths neither look names up nor take the registry's lock per call.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  std::vector<std::filesystem::path> search_path() const;
  // The plugin part of configure(): the configured search path (Config::plugin_search_path), then
  // the plugins to load (Config::plugins_to_load); the default backend is configure()'s next step,
  // through set_default_backend.
  void apply(const std::vector<std::filesystem::path>& search_path,
             const std::vector<std::string>& plugins_to_load);

  // Whether a component flagged TESSERA_COMPONENT_OVERRIDES may replace a loaded one of its name
  // ([plugins] allow_override); without both, a clash rejects the later plugin.
  void set_allow_override(bool allow);
  // Plugin parameters (SDK 1.3): plugin name -> key -> value, with where each came from
  // (origins: "<plugin>.<key>" -> "file:line" or a variable; "configuration" when absent), replacing
  // those in force. A value that differs from the one in force is passed at once to a loaded plugin
  // of that name, and kept for one loaded later (after its init). A refusal is a ConfigError naming the
  // plugin, key, value, origin and the plugin's message; the value in force is then unchanged.
  void set_parameters(const std::map<std::string, std::map<std::string, std::string>>& values,
                      const std::map<std::string, std::string>& origins);

 private:
  struct Parameter {
    std::string value;
    std::string origin;
  };
  void set_parameter_locked(LoadedPlugin& plugin, const std::string& key, const Parameter& parameter);
  // Loads the plugin families that discovery would load for the kinds `raw` provides (coll-*,
  // placement-*, transport-*, tuner-*) before it registers them, so that the clash check meets a built-in
  // first and rejects the latecomer, whatever order things are loaded in.
  void load_providers_locked(const tessera_plugin_info& raw);
  void load_backend_provider_locked(const std::string& name);
  // Throws PluginError when `component` of the plugin in `file` clashes with a registered one and
  // may not replace it.
  void check_clashes_locked(const std::filesystem::path& file, const tessera_component& component) const;
  // Throws PluginError when `plugin` may not be registered: its plugin name is another loaded
  // file's, or a component clashes (check_clashes_locked). Loads the providers of its kinds first.
  void admit_locked(const LoadedPlugin& plugin);
  // Throws PluginError when one of `others` has the plugin name of `plugin` (another file).
  void check_name_locked(const LoadedPlugin& plugin,
                         const std::vector<std::shared_ptr<LoadedPlugin>>& others) const;
  // Throws PluginError when a component of `plugin` clashes with one of `provider` (not registered).
  void check_provider_clashes_locked(const LoadedPlugin& plugin, const LoadedPlugin& provider) const;
  // The plugins a load of `plugin` would load first (load_providers_locked), opened but neither
  // started nor registered: those not loaded yet.
  std::vector<std::shared_ptr<LoadedPlugin>> unloaded_providers_locked(const LoadedPlugin& plugin) const;
  // Registers `component`, replacing what it clashes with (check_clashes_locked allowed it).
  void register_locked(const std::shared_ptr<LoadedPlugin>& plugin, const tessera_component& component);

  Registry() = default;
  static Registry& made();  // the one registry, made (and its exit handler registered) on first use
  std::vector<std::filesystem::path> search_path_locked() const;
  std::filesystem::path resolve(const std::string& name_or_path) const;
  PluginInfo load_locked(const std::string& name_or_path);
  std::shared_ptr<const void> backend_locked(const std::string& name);
  // The registered component of `kind` called `name`; nullptr when none is.
  const Component* find_locked(int32_t kind, std::string_view name) const;
  // Loads every libtessera-<family>-*.so on the search path ("coll", "placement", "transport", "tuner"): the
  // first time the family is asked for, and again by apply() when the search path has changed since.
  void discover_locked(const std::string& family);
  void scan_locked(const std::string& family);

  // Under mutex_, after every change that generation() announces.
  void changed_locked() { generation_.fetch_add(1, std::memory_order_release); }

  mutable std::mutex mutex_;
  std::atomic<uint64_t> generation_{0};
  std::vector<std::shared_ptr<LoadedPlugin>> plugins_;
  // kind (TESSERA_COMPONENT_*) -> name -> component, for every kind but transports, which this
  // layer owns and keeps typed.
  std::map<int32_t, std::map<std::string, Component, std::less<>>> components_;
  std::map<std::string, std::shared_ptr<const Transport>, std::less<>> transports_;
  std::string tuner_name_;  // the tuner in force; "" for none
  std::map<std::string, std::vector<std::filesystem::path>> discovered_families_;  // family -> path scanned
  std::vector<std::filesystem::path> configured_search_path_;
  std::set<std::filesystem::path> loading_;  // canonical files between open and registration
  std::set<std::string> unloaded_backends_;  // backend names the user unloaded: free to replace
  bool allow_override_ = false;
  std::map<std::string, std::map<std::string, Parameter>> parameters_;  // plugin -> key -> value
  std::string default_backend_name_ = "cpu";
  std::shared_ptr<const void> default_backend_;
};

// The file name a plugin called `name` has on disk: libtessera-<name>.so.
std::string plugin_file_name(const std::string& name);

// Every <prefix>*.so in `dirs`; a file name found twice is taken from the first directory, as in
// PATH. Sorted by name within a directory.
std::vector<std::filesystem::path> plugin_files(const std::vector<std::filesystem::path>& dirs,
                                                const std::string& prefix);

}  // namespace tessera::plugin
