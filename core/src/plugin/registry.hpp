// The process-wide registry of loaded plugins and the components they provide.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "comm/algorithm.hpp"
#include "comm/tuner.hpp"
#include "dispatch/backend.hpp"
#include "dtensor/placement_strategy.hpp"
#include "plugin/loaded_plugin.hpp"
#include "plugin/startup_configuration.hpp"
#include "plugin/transport.hpp"
#include "tessera/plugins.hpp"

namespace tessera::plugin {

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

  // Loads backend-<name> from the search path when no loaded plugin provides `name`.
  std::shared_ptr<const dispatch::Backend> backend(const std::string& name);
  std::shared_ptr<const dispatch::Backend> default_backend();
  void set_default_backend(const std::string& name);
  std::string default_backend_name() const;
  std::vector<std::string> backend_names() const;
  void set_backend_threads(int32_t num_threads) const;  // every registered backend

  // Collective algorithms by name; the first call loads every coll-* plugin on the search path.
  std::shared_ptr<const comm::CollectiveAlgorithm> algorithm(const std::string& name);
  std::vector<std::string> algorithm_names();
  // Placement strategies by name or text prefix; the first call loads every placement-* plugin.
  std::shared_ptr<const dtensor::PlacementStrategy> placement(const std::string& name);
  std::shared_ptr<const dtensor::PlacementStrategy> placement_by_prefix(const std::string& prefix);
  std::vector<std::shared_ptr<const dtensor::PlacementStrategy>> placement_strategies();
  // Transports by name ("mpi"); a name not yet loaded loads every transport-* plugin on the search
  // path first. nullptr when none provides it.
  std::shared_ptr<const Transport> transport(const std::string& name);
  std::vector<std::string> transport_names();

  // Tuners (SDK 1.5) for the rule "auto". set_tuner names the one in force ("" = none): a name not
  // yet loaded loads every tuner-* plugin on the search path first; a name that none provides is a
  // ConfigError naming it and the available tuners. Changing it makes "auto" choose again.
  void set_tuner(const std::string& name);
  std::string tuner_name() const;
  // The tuner in force, or nullptr when none is set or its plugin has been unloaded since.
  std::shared_ptr<const comm::Tuner> tuner() const;

  std::vector<std::filesystem::path> search_path() const;
  // The plugin part of configure(): the configured search path (Config::plugin_search_path), then
  // the plugins to load (Config::plugins_to_load); the default backend is configure()'s next step,
  // through set_default_backend.
  void apply(const std::vector<std::filesystem::path>& search_path, const std::vector<std::string>& plugins_to_load);

  // Whether a component flagged TESSERA_COMPONENT_OVERRIDES may replace a loaded one of its name
  // ([plugins] allow_override); without both, a clash rejects the later plugin.
  void set_allow_override(bool allow);
  // Plugin parameters (SDK 1.3): plugin name -> key -> value, with where each came from
  // (origins: "<plugin>.<key>" -> "file:line" or a variable; "configuration" when absent), replacing
  // those in force. A value that differs from the one in force is passed at once to a loaded plugin
  // of that name, and kept for one loaded later (after its init). A refusal is a ConfigError naming the plugin, key, value,
  // origin and the plugin's message; the value in force is then unchanged.
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
  void check_name_locked(const LoadedPlugin& plugin, const std::vector<std::shared_ptr<LoadedPlugin>>& others) const;
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
  std::shared_ptr<const dispatch::Backend> backend_locked(const std::string& name);
  // Loads every libtessera-<family>-*.so on the search path ("coll", "placement", "transport", "tuner"): the
  // first time the family is asked for, and again by apply() when the search path has changed since.
  void discover_locked(const std::string& family);
  void scan_locked(const std::string& family);

  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<LoadedPlugin>> plugins_;
  std::map<std::string, std::shared_ptr<const dispatch::Backend>, std::less<>> backends_;
  std::map<std::string, std::shared_ptr<const comm::CollectiveAlgorithm>, std::less<>> algorithms_;
  std::map<std::string, std::shared_ptr<const dtensor::PlacementStrategy>, std::less<>> placements_;
  std::map<std::string, std::shared_ptr<const Transport>, std::less<>> transports_;
  std::map<std::string, std::shared_ptr<const comm::Tuner>, std::less<>> tuners_;
  std::string tuner_name_;  // the tuner in force; "" for none
  std::map<std::string, std::vector<std::filesystem::path>> discovered_families_;  // family -> path scanned
  std::vector<std::filesystem::path> configured_search_path_;
  std::set<std::filesystem::path> loading_;  // canonical files between open and registration
  std::set<std::string> unloaded_backends_;  // backend names the user unloaded: free to replace
  bool allow_override_ = false;
  std::map<std::string, std::map<std::string, Parameter>> parameters_;  // plugin -> key -> value
  std::string default_backend_name_ = "cpu";
  std::shared_ptr<const dispatch::Backend> default_backend_;
};

// The file name a plugin called `name` has on disk: libtessera-<name>.so.
std::string plugin_file_name(const std::string& name);

// Every <prefix>*.so in `dirs`; a file name found twice is taken from the first directory, as in
// PATH. Sorted by name within a directory.
std::vector<std::filesystem::path> plugin_files(const std::vector<std::filesystem::path>& dirs,
                                                const std::string& prefix);

}  // namespace tessera::plugin
