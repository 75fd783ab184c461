#include "plugin/registry.hpp"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <set>
#include <sstream>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>

#include "comm/run_collective.hpp"
#include "comm/selection.hpp"
#include "log/log.hpp"
#include "tessera/errors.hpp"
#include "tessera/sdk/version.h"

namespace tessera::plugin {
namespace fs = std::filesystem;

std::string plugin_file_name(const std::string& name) { return "libtessera-" + name + ".so"; }

std::vector<fs::path> plugin_files(const std::vector<fs::path>& dirs, const std::string& prefix) {
  std::vector<fs::path> found;
  std::set<std::string> seen;
  for (const fs::path& dir : dirs) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with(prefix) && name.ends_with(".so") && seen.insert(name).second) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    found.insert(found.end(), files.begin(), files.end());
  }
  return found;
}

namespace {

bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".so");
}

std::vector<fs::path> split_path_list(const char* text) {
  std::vector<fs::path> dirs;
  if (text == nullptr) return dirs;
  std::stringstream stream(text);
  for (std::string dir; std::getline(stream, dir, ':');)
    if (!dir.empty()) dirs.emplace_back(dir);
  return dirs;
}

// Plugins installed beside libtessera itself: <libdir>/tessera/plugins, in the build tree and after
// `cmake --install` alike, so no environment variable is needed.
fs::path bundled_plugin_dir() {
  return fs::path(boost::dll::this_line_location().parent_path().string()) / "tessera" / "plugins";
}

std::string join_paths(const std::vector<fs::path>& paths) {
  std::string text;
  for (const fs::path& p : paths) text += (text.empty() ? "" : ", ") + p.string();
  return text;
}

}  // namespace

Registry& Registry::instance() {
  static Registry* const registry = new Registry();  // never destroyed: tensors in static storage may outlive main
  // Outside the static's initialiser: configuring uses the registry, so it must exist first.
  configure_from_environment();
  return *registry;
}

std::vector<fs::path> Registry::search_path() const {
  std::lock_guard lock(mutex_);
  return search_path_locked();
}

std::vector<fs::path> Registry::search_path_locked() const {
  std::vector<fs::path> dirs = split_path_list(std::getenv("TESSERA_PLUGIN_PATH"));
  dirs.insert(dirs.end(), configured_search_path_.begin(), configured_search_path_.end());
  dirs.push_back(bundled_plugin_dir());
  return dirs;
}

fs::path Registry::resolve(const std::string& name_or_path) const {
  if (looks_like_path(name_or_path)) return name_or_path;
  const std::string file_name = plugin_file_name(name_or_path);
  const std::vector<fs::path> dirs = search_path_locked();
  for (const fs::path& dir : dirs) {
    std::error_code error;
    if (fs::is_regular_file(dir / file_name, error)) return dir / file_name;
  }
  throw PluginError(fmt::format("plugin '{}' not found: no {} in the search path ({})", name_or_path,
                                file_name, join_paths(dirs)));
}

PluginInfo Registry::load(const std::string& name_or_path) {
  std::lock_guard lock(mutex_);
  return load_locked(name_or_path);
}

PluginInfo Registry::load_locked(const std::string& name_or_path) {
  const fs::path file = resolve(name_or_path);
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(file, error);
  for (const auto& plugin : plugins_)
    if (plugin->info().file == canonical) return plugin->info();

  std::shared_ptr<LoadedPlugin> plugin = LoadedPlugin::open(file);
  const tessera_plugin_info& raw = plugin->raw();
  // Check every component before registering any, so a rejected plugin leaves no trace.
  for (size_t i = 0; i < raw.num_components; ++i) {
    const tessera_component* component = raw.components[i];
    if (component->kind == TESSERA_COMPONENT_BACKEND && backends_.count(component->name) != 0)
      throw PluginError(fmt::format("plugin '{}' rejected: backend '{}' is already provided by {}",
                                    file.string(), component->name,
                                    backends_.at(component->name)->plugin().info().file.string()));
    if (component->kind == TESSERA_COMPONENT_PLACEMENT) {
      const auto* table = static_cast<const tessera_placement_strategy*>(component->table);
      for (const auto& [name, strategy] : placements_)
        if (name == table->name || strategy->prefix() == table->prefix)
          throw PluginError(fmt::format("plugin '{}' rejected: placement '{}' (prefix '{}') clashes with '{}' (prefix "
                                        "'{}') from {}",
                                        file.string(), table->name, table->prefix, name, strategy->prefix(),
                                        strategy->plugin().info().file.string()));
    }
    if (component->kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM && algorithms_.count(component->name) != 0)
      throw PluginError(fmt::format("plugin '{}' rejected: collective algorithm '{}' is already provided by {}",
                                    file.string(), component->name,
                                    algorithms_.at(component->name)->plugin().info().file.string()));
    if (component->kind == TESSERA_COMPONENT_TRANSPORT && transports_.count(component->name) != 0)
      throw PluginError(fmt::format("plugin '{}' rejected: transport '{}' is already provided by {}", file.string(),
                                    component->name,
                                    transports_.at(component->name)->plugin().info().file.string()));
  }
  for (size_t i = 0; i < raw.num_components; ++i) {
    const tessera_component* component = raw.components[i];
    if (component->kind == TESSERA_COMPONENT_BACKEND)
      backends_.emplace(component->name,
                        dispatch::Backend::of(static_cast<const tessera_backend*>(component->table), plugin));
    else if (component->kind == TESSERA_COMPONENT_PLACEMENT)
      placements_.emplace(component->name,
                          std::make_shared<const dtensor::PlacementStrategy>(
                              static_cast<const tessera_placement_strategy*>(component->table), plugin));
    else if (component->kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM)
      algorithms_.emplace(component->name,
                          std::make_shared<const comm::CollectiveAlgorithm>(
                              static_cast<const tessera_collective_algorithm*>(component->table), plugin));
    else if (component->kind == TESSERA_COMPONENT_TRANSPORT)
      transports_.emplace(component->name, std::make_shared<const Transport>(
                                               static_cast<const tessera_transport*>(component->table), plugin));
    else
      // Only a plugin built for a newer SDK minor gets here (validation rejects the others).
      observe::logger().info("plugin '{}' (SDK {}.{}): skipping component '{}' of kind {}, which this host (SDK {}.{}) "
                             "does not know",
                             plugin->info().name, plugin->info().sdk_major, plugin->info().sdk_minor, component->name,
                             component->kind, TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR);
  }
  plugins_.push_back(plugin);
  observe::logger().info("loaded plugin '{}' {} from {}", plugin->info().name, plugin->info().version,
                         plugin->info().file.string());
  return plugin->info();
}

void Registry::unload(const std::string& name) {
  std::vector<std::string> algorithms;
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(plugins_.begin(), plugins_.end(),
                           [&](const auto& plugin) { return plugin->info().name == name; });
    if (it == plugins_.end()) throw PluginError(fmt::format("cannot unload plugin '{}': it is not loaded", name));
    for (const ComponentInfo& component : (*it)->info().components) {
      if (component.kind == "collective") {
        algorithms_.erase(component.name);
        algorithms.push_back(component.name);
      }
      if (component.kind == "placement") placements_.erase(component.name);
      if (component.kind == "transport") transports_.erase(component.name);
      if (component.kind != "backend") continue;
      // Tensors on the backend keep its library mapped and go on working; loading the plugin again
      // gives them back the same backend (dispatch::Backend::of).
      backends_.erase(component.name);
      if (default_backend_ && default_backend_->name() == component.name) default_backend_.reset();
    }
    plugins_.erase(it);
  }
  // Outside the registry's lock: the rules may look algorithms up.
  for (const std::string& algorithm : algorithms) comm::forget_schedules(algorithm);
  if (const std::string rules = comm::rules_naming(algorithms); !rules.empty())
    observe::logger().warn("unloaded plugin '{}', but the collective rules in force name its algorithms ({}): "
                           "collectives those rules select fail until it is loaded again or other rules are set",
                           name, rules);
}

std::vector<PluginInfo> Registry::loaded() const {
  std::lock_guard lock(mutex_);
  std::vector<PluginInfo> infos;
  for (const auto& plugin : plugins_) infos.push_back(plugin->info());
  return infos;
}

std::shared_ptr<const dispatch::Backend> Registry::backend(const std::string& name) {
  std::lock_guard lock(mutex_);
  return backend_locked(name);
}

std::shared_ptr<const dispatch::Backend> Registry::backend_locked(const std::string& name) {
  if (auto it = backends_.find(name); it != backends_.end()) return it->second;
  try {
    load_locked("backend-" + name);
  } catch (const PluginError& e) {
    // Backends are loaded when first asked for, so those available include the ones on the path.
    std::set<std::string> available;
    for (const auto& [known_name, unused] : backends_) available.insert(known_name);
    const std::string prefix = "libtessera-backend-";  // plugin_file_name("backend-<name>"), less ".so"
    for (const fs::path& file : plugin_files(search_path_locked(), prefix))
      available.insert(file.stem().string().substr(prefix.size()));
    throw Error(fmt::format("no backend named '{}' (available backends: {}); loading plugin 'backend-{}' failed: {}",
                            name, available.empty() ? "none" : fmt::format("{}", fmt::join(available, ", ")), name,
                            e.what()));
  }
  if (auto it = backends_.find(name); it != backends_.end()) return it->second;
  throw Error(fmt::format("no backend named '{}': plugin 'backend-{}' loaded but provides no such backend",
                          name, name));
}

std::shared_ptr<const dispatch::Backend> Registry::default_backend() {
  std::lock_guard lock(mutex_);
  if (!default_backend_) default_backend_ = backend_locked(default_backend_name_);
  return default_backend_;
}

void Registry::set_default_backend(const std::string& name) {
  std::lock_guard lock(mutex_);
  default_backend_ = backend_locked(name);
  default_backend_name_ = name;
}

std::string Registry::default_backend_name() const {
  std::lock_guard lock(mutex_);
  return default_backend_name_;
}

std::vector<std::string> Registry::backend_names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, unused] : backends_) names.push_back(name);
  return names;
}

void Registry::discover_locked(const std::string& family) {
  if (discovered_families_.count(family) == 0) scan_locked(family);
}

void Registry::scan_locked(const std::string& family) {
  std::vector<fs::path> path = search_path_locked();
  const std::vector<fs::path> files = plugin_files(path, "libtessera-" + family + "-");
  discovered_families_[family] = std::move(path);
  // A file loaded before (the same canonical path) is found loaded again, silently.
  for (const fs::path& file : files) {
    try {
      load_locked(file.string());
    } catch (const PluginError& e) {
      observe::logger().warn("skipping {} plugin: {}", family, e.what());
    }
  }
}

std::shared_ptr<const comm::CollectiveAlgorithm> Registry::algorithm(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto it = algorithms_.find(name); it != algorithms_.end()) return it->second;
  discover_locked("coll");
  if (auto it = algorithms_.find(name); it != algorithms_.end()) return it->second;
  return nullptr;
}

std::shared_ptr<const dtensor::PlacementStrategy> Registry::placement(const std::string& name) {
  std::lock_guard lock(mutex_);
  discover_locked("placement");
  auto it = placements_.find(name);
  return it == placements_.end() ? nullptr : it->second;
}

std::shared_ptr<const dtensor::PlacementStrategy> Registry::placement_by_prefix(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  discover_locked("placement");
  for (const auto& [name, strategy] : placements_)
    if (strategy->prefix() == prefix) return strategy;
  return nullptr;
}

std::vector<std::shared_ptr<const dtensor::PlacementStrategy>> Registry::placement_strategies() {
  std::lock_guard lock(mutex_);
  discover_locked("placement");
  std::vector<std::shared_ptr<const dtensor::PlacementStrategy>> strategies;
  for (const auto& [name, strategy] : placements_) strategies.push_back(strategy);
  return strategies;
}

std::vector<std::string> Registry::algorithm_names() {
  std::lock_guard lock(mutex_);
  discover_locked("coll");
  std::vector<std::string> names;
  for (const auto& [name, unused] : algorithms_) names.push_back(name);
  return names;
}

std::shared_ptr<const Transport> Registry::transport(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto it = transports_.find(name); it != transports_.end()) return it->second;
  discover_locked("transport");
  auto it = transports_.find(name);
  return it == transports_.end() ? nullptr : it->second;
}

std::vector<std::string> Registry::transport_names() {
  std::lock_guard lock(mutex_);
  discover_locked("transport");
  std::vector<std::string> names;
  for (const auto& [name, unused] : transports_) names.push_back(name);
  return names;
}

void Registry::set_backend_threads(int32_t num_threads) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, backend] : backends_) backend->set_num_threads(num_threads);
}

void Registry::apply(const Config& config) {
  std::lock_guard lock(mutex_);
  configured_search_path_ = config.plugin_search_path;
  // Families looked up before this configuration were discovered over the path of that moment:
  // discover them again over the new one (what they loaded stays loaded), so that an algorithm
  // looked up early does not hide the plugins of a path configured later.
  const std::vector<fs::path> path = search_path_locked();
  for (const auto& [family, discovered_over] : discovered_families_)
    if (discovered_over != path) scan_locked(family);
  for (const std::string& plugin : config.plugins_to_load) load_locked(plugin);
}

}  // namespace tessera::plugin
