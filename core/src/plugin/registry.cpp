#include "plugin/registry.hpp"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <set>
#include <sstream>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>

#include "log/log.hpp"
#include "plugin/component_hooks.hpp"
#include "plugin/parameter_schema.hpp"
#include "plugin/validation.hpp"
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
      if (name.starts_with(prefix) && name.ends_with(".so") && seen.insert(name).second)
        files.push_back(entry.path());
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

std::string join_paths(const std::vector<fs::path>& paths) {
  std::string text;
  for (const fs::path& p : paths) text += (text.empty() ? "" : ", ") + p.string();
  return text;
}

}  // namespace

Registry& Registry::made() {
  // Never destroyed: tensors in static storage may outlive main. Its plugins are finalized at exit
  // all the same, by a handler registered before anything could load one (so it runs after the
  // exit-time teardown of whatever was made later, a world's transport link included).
  static Registry* const registry = [] {
    auto* registry = new Registry();
    std::atexit([] { made().finalize_at_exit(); });
    return registry;
  }();
  return *registry;
}

Registry& Registry::instance() {
  Registry& registry = made();
  // After the registry exists: configuring uses it.
  apply_startup_configuration();
  return registry;
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
  admit_locked(*plugin);
  plugin->start();
  // Before registration: a refused parameter leaves the plugin unregistered (and finalized).
  if (auto it = parameters_.find(plugin->info().name); it != parameters_.end())
    for (const auto& [key, parameter] : it->second) set_parameter_locked(*plugin, key, parameter);
  for (size_t i = 0; i < raw.num_components; ++i) register_locked(plugin, *raw.components[i]);
  plugins_.push_back(plugin);
  observe::logger().info("loaded plugin '{}' {} from {}", plugin->info().name, plugin->info().version,
                         plugin->info().file.string());
  return plugin->info();
}

namespace {

// How a clash can be resolved, for the rejection message.
std::string override_hint(bool flagged) {
  return flagged ? "the component sets TESSERA_COMPONENT_OVERRIDES, but overriding is not allowed by the "
                   "configuration ([plugins] allow_override = true or TESSERA_PLUGIN_ALLOW_OVERRIDE=1)"
                 : "names must be unique: a component replaces a loaded one only when it sets "
                   "TESSERA_COMPONENT_OVERRIDES and the configuration allows it ([plugins] allow_override = "
                   "true)";
}

// A kind as messages name it.
const char* kind_text(int32_t kind) {
  return kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM ? "collective algorithm" : component_kind_name(kind);
}

std::string provider_text(const LoadedPlugin& plugin) {
  return fmt::format("{} (plugin '{}')", plugin.info().file.string(), plugin.info().name);
}

}  // namespace

void Registry::admit_locked(const LoadedPlugin& plugin) {
  const fs::path& file = plugin.info().file;
  {
    // While the providers load, discovery must not load this very file a second time.
    loading_.insert(file);
    struct Done {
      std::set<fs::path>& loading;
      const fs::path& file;
      ~Done() { loading.erase(file); }
    } done{loading_, file};
    load_providers_locked(plugin.raw());
  }
  check_name_locked(plugin, plugins_);
  // Check every component before registering any, so a rejected plugin leaves no trace.
  const tessera_plugin_info& raw = plugin.raw();
  for (size_t i = 0; i < raw.num_components; ++i) check_clashes_locked(file, *raw.components[i]);
}

std::vector<std::shared_ptr<LoadedPlugin>> Registry::unloaded_providers_locked(
    const LoadedPlugin& plugin) const {
  std::vector<fs::path> files;
  const auto family = [&](const std::string& name) {
    const std::vector<fs::path> path = search_path_locked();
    const auto discovered = discovered_families_.find(name);
    if (discovered != discovered_families_.end() && discovered->second == path)
      return;  // loaded (or refused) already
    for (const fs::path& file : plugin_files(path, "libtessera-" + name + "-")) files.push_back(file);
  };
  const tessera_plugin_info& raw = plugin.raw();
  for (size_t i = 0; i < raw.num_components; ++i) {
    const tessera_component& component = *raw.components[i];
    switch (component.kind) {
      case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
        family("coll");
        break;
      case TESSERA_COMPONENT_PLACEMENT:
        family("placement");
        break;
      case TESSERA_COMPONENT_TRANSPORT:
        family("transport");
        break;
      case TESSERA_COMPONENT_TUNER:
        family("tuner");
        break;
      case TESSERA_COMPONENT_BACKEND:
        if (find_locked(TESSERA_COMPONENT_BACKEND, component.name) == nullptr &&
            unloaded_backends_.count(component.name) == 0)
          try {
            files.push_back(resolve(std::string("backend-") + component.name));
          } catch (const PluginError&) {  // no provider of that name on the path
          }
        break;
      default:
        break;
    }
  }
  std::vector<std::shared_ptr<LoadedPlugin>> providers;
  for (const fs::path& file : files) {
    std::error_code error;
    const fs::path canonical = fs::weakly_canonical(file, error);
    const bool loaded = std::any_of(plugins_.begin(), plugins_.end(),
                                    [&](const auto& other) { return other->info().file == canonical; });
    if (loaded || canonical == plugin.info().file) continue;
    try {
      providers.push_back(LoadedPlugin::open(file));  // validated, never started
    } catch (const PluginError&) {                    // a provider that would be refused claims nothing
    }
  }
  return providers;
}

std::string Registry::admission_problem(const LoadedPlugin& plugin) {
  std::lock_guard lock(mutex_);
  for (const auto& loaded : plugins_)
    if (loaded->info().file == plugin.info().file) return {};  // loaded already: it was admitted
  try {
    // What a load would meet: the registered plugins and the providers a load would load first,
    // which are only opened here (a probe registers nothing).
    check_name_locked(plugin, plugins_);
    const tessera_plugin_info& raw = plugin.raw();
    for (size_t i = 0; i < raw.num_components; ++i)
      check_clashes_locked(plugin.info().file, *raw.components[i]);
    const std::vector<std::shared_ptr<LoadedPlugin>> providers = unloaded_providers_locked(plugin);
    check_name_locked(plugin, providers);
    for (const auto& provider : providers) check_provider_clashes_locked(plugin, *provider);
  } catch (const PluginError& e) {
    return e.what();
  }
  return {};
}

void Registry::check_name_locked(const LoadedPlugin& plugin,
                                 const std::vector<std::shared_ptr<LoadedPlugin>>& others) const {
  // The plugin name keys its parameters ([plugins.<name>]) and unload_plugin: two files may not share it.
  for (const auto& other : others)
    if (other->info().name == plugin.info().name)
      throw PluginError(
          fmt::format("plugin '{}' rejected: its plugin name '{}' is already taken by {}; plugin names "
                      "must be unique, as configuration parameters and unload_plugin name plugins by it",
                      plugin.info().file.string(), plugin.info().name, other->info().file.string()));
}

void Registry::check_provider_clashes_locked(const LoadedPlugin& plugin, const LoadedPlugin& provider) const {
  const tessera_plugin_info& raw = plugin.raw();
  const tessera_plugin_info& theirs = provider.raw();
  for (size_t i = 0; i < raw.num_components; ++i) {
    const tessera_component& component = *raw.components[i];
    const bool flagged = (component_flags(component) & TESSERA_COMPONENT_OVERRIDES) != 0;
    if (flagged && allow_override_) continue;
    for (size_t j = 0; j < theirs.num_components; ++j) {
      const tessera_component& other = *theirs.components[j];
      if (other.kind != component.kind) continue;
      bool clash = std::string_view(other.name) == component.name;
      if (component.kind == TESSERA_COMPONENT_PLACEMENT)
        clash =
            clash || std::string_view(static_cast<const tessera_placement_strategy*>(other.table)->prefix) ==
                         static_cast<const tessera_placement_strategy*>(component.table)->prefix;
      if (clash)
        throw PluginError(
            fmt::format("plugin '{}' rejected: {} '{}' is also provided by {}, which a load loads "
                        "first; {}",
                        plugin.info().file.string(), component_kind_name(component.kind), component.name,
                        provider_text(provider), override_hint(flagged)));
    }
  }
}

void Registry::finalize_at_exit() noexcept {
  std::vector<std::shared_ptr<LoadedPlugin>> plugins;
  try {
    std::lock_guard lock(mutex_);
    plugins = plugins_;
  } catch (...) {
    return;  // the lock cannot be had: leave the plugins to the operating system
  }
  for (auto plugin = plugins.rbegin(); plugin != plugins.rend(); ++plugin) (*plugin)->finalize_now();
}

void Registry::load_providers_locked(const tessera_plugin_info& raw) {
  for (size_t i = 0; i < raw.num_components; ++i) {
    const tessera_component& component = *raw.components[i];
    switch (component.kind) {
      case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
        discover_locked("coll");
        break;
      case TESSERA_COMPONENT_PLACEMENT:
        discover_locked("placement");
        break;
      case TESSERA_COMPONENT_TRANSPORT:
        discover_locked("transport");
        break;
      case TESSERA_COMPONENT_TUNER:
        discover_locked("tuner");
        break;
      case TESSERA_COMPONENT_BACKEND:
        load_backend_provider_locked(component.name);
        break;
      default:
        break;
    }
  }
}

// Backends are loaded by name when first asked for, not discovered; so that a plugin cannot take
// a backend name merely by loading before its first use, the search path's own provider of the name
// (libtessera-backend-<name>.so) is loaded first, and the clash check then rejects the newcomer.
// Not after the user unloaded that name: a replacement is then what they asked for.
void Registry::load_backend_provider_locked(const std::string& name) {
  if (find_locked(TESSERA_COMPONENT_BACKEND, name) != nullptr || unloaded_backends_.count(name) != 0) return;
  fs::path provider;
  try {
    provider = resolve("backend-" + name);
  } catch (const PluginError&) {
    return;  // no file of that name on the search path: nothing to protect
  }
  std::error_code error;
  if (loading_.count(fs::weakly_canonical(provider, error)) != 0) return;  // it is the one loading
  try {
    load_locked(provider.string());
  } catch (const PluginError& e) {
    observe::logger().warn("could not load {} before a plugin claiming backend '{}': {}", provider.string(),
                           name, e.what());
  }
}

void Registry::check_clashes_locked(const fs::path& file, const tessera_component& component) const {
  const bool flagged = (component_flags(component) & TESSERA_COMPONENT_OVERRIDES) != 0;
  if (flagged && allow_override_) return;
  const auto reject = [&](const std::string& clash) {
    throw PluginError(
        fmt::format("plugin '{}' rejected: {}; {}", file.string(), clash, override_hint(flagged)));
  };
  const std::string name = component.name;
  if (component.kind == TESSERA_COMPONENT_PLACEMENT) {
    const auto* table = static_cast<const tessera_placement_strategy*>(component.table);
    if (auto kind = components_.find(component.kind); kind != components_.end())
      for (const auto& [other, strategy] : kind->second)
        if (other == table->name || strategy.prefix == table->prefix)
          reject(fmt::format("placement '{}' (prefix '{}') clashes with '{}' (prefix '{}') from {}",
                             table->name, table->prefix, other, strategy.prefix,
                             provider_text(*strategy.plugin)));
    return;
  }
  if (component.kind == TESSERA_COMPONENT_TRANSPORT && transports_.count(name) != 0)
    reject(fmt::format("transport '{}' is already provided by {}", name,
                       provider_text(transports_.at(name)->plugin())));
  if (component.kind == TESSERA_COMPONENT_TRANSPORT) return;
  if (const Component* registered = find_locked(component.kind, name))
    reject(fmt::format("{} '{}' is already provided by {}", kind_text(component.kind), name,
                       provider_text(*registered->plugin)));
}

const Component* Registry::find_locked(int32_t kind, std::string_view name) const {
  const auto table = components_.find(kind);
  if (table == components_.end()) return nullptr;
  const auto found = table->second.find(name);
  return found == table->second.end() ? nullptr : &found->second;
}

void Registry::register_locked(const std::shared_ptr<LoadedPlugin>& plugin,
                               const tessera_component& component) {
  const std::string name = component.name;
  const auto overriding = [&](const char* kind, const std::string& old_name, const LoadedPlugin& old) {
    observe::logger().info(
        "plugin '{}' overrides {} '{}' of plugin '{}' (TESSERA_COMPONENT_OVERRIDES, allowed by "
        "the configuration)",
        plugin->info().name, kind, old_name, old.info().name);
  };
  if (component.kind == TESSERA_COMPONENT_TRANSPORT) {
    changed_locked();
    if (auto it = transports_.find(name); it != transports_.end())
      overriding("transport", name, it->second->plugin());
    transports_[name] =
        std::make_shared<const Transport>(static_cast<const tessera_transport*>(component.table), plugin);
    return;
  }
  if (!is_known_kind(component.kind)) {
    // Only a plugin built for a newer SDK minor gets here (validation rejects the others).
    observe::logger().info(
        "plugin '{}' (SDK {}.{}): skipping component '{}' of kind {}, which this host (SDK {}.{}) "
        "does not know",
        plugin->info().name, plugin->info().sdk_major, plugin->info().sdk_minor, name, component.kind,
        TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR);
    return;
  }
  Component made = component_maker(component.kind)(component, plugin);
  changed_locked();
  auto& table = components_[component.kind];
  if (component.kind == TESSERA_COMPONENT_PLACEMENT) {
    // Replaces every strategy it clashes with: the one of its name and the one of its prefix.
    const char* strategy_name = static_cast<const tessera_placement_strategy*>(component.table)->name;
    std::erase_if(table, [&](const auto& entry) {
      const bool clashes = entry.first == strategy_name || entry.second.prefix == made.prefix;
      if (clashes) overriding("placement", entry.first, *entry.second.plugin);
      return clashes;
    });
  } else if (auto it = table.find(name); it != table.end()) {
    overriding(kind_text(component.kind), name, *it->second.plugin);
    if (component.kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM)
      algorithm_changed(name);  // built by the one replaced
  }
  if (component.kind == TESSERA_COMPONENT_BACKEND && name == default_backend_name_) default_backend_.reset();
  table[name] = std::move(made);
  if (component.kind == TESSERA_COMPONENT_TUNER && name == tuner_name_)
    choices_stale();  // the tuner in force is another now
}

void Registry::unload(const std::string& name) {
  std::vector<std::string> algorithms;
  bool tuner_leaving = false;                    // the tuner in force is among what goes
  std::shared_ptr<LoadedPlugin> leaving_plugin;  // finalized (if last) only after the lock is released
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(plugins_.begin(), plugins_.end(),
                           [&](const auto& plugin) { return plugin->info().name == name; });
    if (it == plugins_.end())
      throw PluginError(fmt::format("cannot unload plugin '{}': it is not loaded", name));
    const LoadedPlugin* leaving = it->get();
    // Only what is registered from this plugin goes: a name another plugin overrode stays theirs.
    // By file, not by object: a backend reloaded is the Backend of its first load (Backend::of).
    const auto owned = [&](int32_t kind, const std::string& key) {
      const Component* found = find_locked(kind, key);
      return found != nullptr && found->plugin->info().file == leaving->info().file;
    };
    std::vector<const tessera_component*> removed;
    const tessera_plugin_info& raw = leaving->raw();
    for (size_t i = 0; i < raw.num_components; ++i) {
      const tessera_component* component = raw.components[i];
      const std::string component_name = component->name;
      bool erased = false;
      const int32_t kind = component->kind;
      if (kind == TESSERA_COMPONENT_BACKEND) unloaded_backends_.insert(component_name);
      if (kind == TESSERA_COMPONENT_TRANSPORT) {
        const auto found = transports_.find(component_name);
        if (found != transports_.end() && found->second->plugin().info().file == leaving->info().file)
          erased = transports_.erase(component_name) != 0;
      } else if (owned(kind, component_name)) {
        // A backend's tensors keep its library mapped and go on working; loading the plugin again
        // gives them back the same backend (dispatch::Backend::of).
        erased = components_[kind].erase(component_name) != 0;
        if (kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM) algorithms.push_back(component_name);
        if (kind == TESSERA_COMPONENT_TUNER && component_name == tuner_name_) tuner_leaving = true;
        if (kind == TESSERA_COMPONENT_BACKEND && component_name == default_backend_name_)
          default_backend_.reset();
      }
      if (erased) removed.push_back(component);
    }
    leaving_plugin = *it;
    plugins_.erase(it);
    changed_locked();
    // A component this plugin had overridden comes back: the latest still-loaded plugin's component
    // of the same kind and name (for a placement, name or prefix) that is free to register again.
    const auto placement_of = [](const tessera_component& c) {
      return static_cast<const tessera_placement_strategy*>(c.table);
    };
    const auto registered = [&](const tessera_component& c) {
      if (c.kind == TESSERA_COMPONENT_TRANSPORT) return transports_.count(c.name) != 0;
      if (c.kind != TESSERA_COMPONENT_PLACEMENT) return find_locked(c.kind, c.name) != nullptr;
      const auto placements = components_.find(c.kind);
      return placements != components_.end() &&
             std::any_of(placements->second.begin(), placements->second.end(), [&](const auto& entry) {
               return entry.first == c.name || entry.second.prefix == placement_of(c)->prefix;
             });
    };
    const auto replaced = [&](const tessera_component& gone, const tessera_component& candidate) {
      if (candidate.kind != gone.kind) return false;
      if (std::string_view(candidate.name) == gone.name) return true;
      return gone.kind == TESSERA_COMPONENT_PLACEMENT &&
             std::string_view(placement_of(candidate)->prefix) == placement_of(gone)->prefix;
    };
    for (const tessera_component* component : removed)
      for (auto other = plugins_.rbegin(); other != plugins_.rend(); ++other) {
        const tessera_plugin_info& other_raw = (*other)->raw();
        const tessera_component* match = nullptr;
        for (size_t i = 0; i < other_raw.num_components && match == nullptr; ++i)
          if (replaced(*component, *other_raw.components[i]) && !registered(*other_raw.components[i]))
            match = other_raw.components[i];
        if (match == nullptr) continue;
        observe::logger().info("unloading plugin '{}' restores {} '{}' of plugin '{}'", name,
                               component_kind_name(match->kind), match->name, (*other)->info().name);
        register_locked(*other, *match);
        break;
      }
    if (tuner_leaving && find_locked(TESSERA_COMPONENT_TUNER, tuner_name_) != nullptr)
      tuner_leaving = false;  // an overridden one is back
  }
  // Outside the registry's lock: the rules may look algorithms up.
  for (const std::string& algorithm : algorithms) algorithm_changed(algorithm);
  if (tuner_leaving) {
    choices_stale();  // choices the tuner made are stale
    observe::logger().warn(
        "unloaded plugin '{}', which provides the tuner in force ('{}'): the rule \"auto\" uses "
        "the host's own costs until it is loaded again or another tuner is set",
        name, tuner_name());
  }
  if (const std::string rules = plugin::rules_naming(algorithms); !rules.empty())
    observe::logger().warn(
        "unloaded plugin '{}', but the collective rules in force name its algorithms ({}): "
        "collectives those rules select fail until it is loaded again or other rules are set",
        name, rules);
}

std::vector<PluginInfo> Registry::loaded() const {
  std::lock_guard lock(mutex_);
  std::vector<PluginInfo> infos;
  for (const auto& plugin : plugins_) infos.push_back(plugin->info());
  return infos;
}

std::shared_ptr<const void> Registry::backend(const std::string& name) {
  std::lock_guard lock(mutex_);
  return backend_locked(name);
}

std::shared_ptr<const void> Registry::backend_locked(const std::string& name) {
  if (const Component* found = find_locked(TESSERA_COMPONENT_BACKEND, name)) return found->object;
  try {
    load_locked("backend-" + name);
  } catch (const PluginError& e) {
    // Backends are loaded when first asked for, so those available include the ones on the path,
    // except the one whose plugin was just refused (its file may well be on the path).
    std::set<std::string> available;
    for (const auto& [known_name, unused] : components_[TESSERA_COMPONENT_BACKEND])
      available.insert(known_name);
    const std::string prefix = "libtessera-backend-";  // plugin_file_name("backend-<name>"), less ".so"
    for (const fs::path& file : plugin_files(search_path_locked(), prefix))
      available.insert(file.stem().string().substr(prefix.size()));
    available.erase(name);
    throw Error(fmt::format(
        "no backend named '{}' (available backends: {}); loading plugin 'backend-{}' failed: {}", name,
        available.empty() ? "none" : fmt::format("{}", fmt::join(available, ", ")), name, e.what()));
  }
  if (const Component* found = find_locked(TESSERA_COMPONENT_BACKEND, name)) return found->object;
  throw Error(fmt::format("no backend named '{}': plugin 'backend-{}' loaded but provides no such backend",
                          name, name));
}

std::shared_ptr<const void> Registry::default_backend() {
  std::lock_guard lock(mutex_);
  if (!default_backend_) default_backend_ = backend_locked(default_backend_name_);
  return default_backend_;
}

void Registry::set_default_backend(const std::string& name) {
  std::lock_guard lock(mutex_);
  default_backend_ = backend_locked(name);
  default_backend_name_ = name;
  changed_locked();
}

std::string Registry::default_backend_name() const {
  std::lock_guard lock(mutex_);
  return default_backend_name_;
}

std::vector<std::string> Registry::backend_names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  if (auto backends = components_.find(TESSERA_COMPONENT_BACKEND); backends != components_.end())
    for (const auto& [name, unused] : backends->second) names.push_back(name);
  return names;
}

// Plugins installed beside libtessera itself: <libdir>/tessera/plugins, in the build tree and after
// `cmake --install` alike, so no environment variable is needed.
fs::path bundled_plugin_dir() {
  return fs::path(boost::dll::this_line_location().parent_path().string()) / "tessera" / "plugins";
}

bool bundled(const fs::path& file) {
  std::error_code error;
  const fs::path folder = fs::weakly_canonical(file, error).parent_path();
  return !error && folder == fs::weakly_canonical(bundled_plugin_dir(), error) && !error;
}

void Registry::discover_locked(const std::string& family) {
  if (discovered_families_.count(family) == 0) scan_locked(family);
}

void Registry::scan_locked(const std::string& family) {
  std::vector<fs::path> path = search_path_locked();
  std::vector<fs::path> files = plugin_files(path, "libtessera-" + family + "-");
  discovered_families_[family] = std::move(path);
  // The bundled plugins first: a plugin found elsewhere that claims a built-in's name is then the
  // one rejected (or, flagged and allowed, the one that overrides), never the built-in.
  const fs::path bundled_dir = bundled_plugin_dir();
  std::stable_partition(files.begin(), files.end(),
                        [&](const fs::path& file) { return file.parent_path() == bundled_dir; });
  // A file loaded before (the same canonical path) is found loaded again, silently.
  for (const fs::path& file : files) {
    std::error_code error;
    if (loading_.count(fs::weakly_canonical(file, error)) != 0)
      continue;  // being loaded: it registers itself
    try {
      load_locked(file.string());
    } catch (const PluginError& e) {
      observe::logger().warn("skipping {} plugin: {}", family, e.what());
    }
  }
}

namespace {

// The family of plugin files (libtessera-<family>-*.so) that provides components of `kind`; empty
// for backends, which are loaded by name.
std::string family_of(int32_t kind) {
  switch (kind) {
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
      return "coll";
    case TESSERA_COMPONENT_PLACEMENT:
      return "placement";
    case TESSERA_COMPONENT_TRANSPORT:
      return "transport";
    case TESSERA_COMPONENT_TUNER:
      return "tuner";
    default:
      return {};
  }
}

}  // namespace

std::shared_ptr<const void> Registry::component(int32_t kind, const std::string& name) {
  std::lock_guard lock(mutex_);
  if (kind != TESSERA_COMPONENT_PLACEMENT)
    if (const Component* found = find_locked(kind, name)) return found->object;
  if (const std::string family = family_of(kind); !family.empty()) discover_locked(family);
  const Component* found = find_locked(kind, name);
  return found == nullptr ? nullptr : found->object;
}

std::vector<std::pair<std::string, Component>> Registry::components(int32_t kind) {
  std::lock_guard lock(mutex_);
  if (const std::string family = family_of(kind); !family.empty()) discover_locked(family);
  const auto table = components_.find(kind);
  if (table == components_.end()) return {};
  return {table->second.begin(), table->second.end()};
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

void Registry::set_tuner(const std::string& name) {
  {
    std::lock_guard lock(mutex_);
    if (!name.empty() && find_locked(TESSERA_COMPONENT_TUNER, name) == nullptr) {
      discover_locked("tuner");
      if (find_locked(TESSERA_COMPONENT_TUNER, name) == nullptr) {
        std::vector<std::string> available;
        for (const auto& [known, unused] : components_[TESSERA_COMPONENT_TUNER]) available.push_back(known);
        throw ConfigError(
            fmt::format("unknown tuner '{}'; available tuners: {} (tuner plugins are found as "
                        "libtessera-tuner-*.so on the plugin search path: {})",
                        name, available.empty() ? "none" : fmt::format("{}", fmt::join(available, ", ")),
                        join_paths(search_path_locked())));
      }
    }
    if (name == tuner_name_) return;
    tuner_name_ = name;
    changed_locked();
  }
  choices_stale();  // choices "auto" made under the old tuner are stale
  if (name.empty())
    observe::logger().info("no tuner: the rule \"auto\" uses the host's own costs");
  else
    observe::logger().info("tuner '{}' reprices the candidates of the rule \"auto\"", name);
}

std::string Registry::tuner_name() const {
  std::lock_guard lock(mutex_);
  return tuner_name_;
}

std::shared_ptr<const void> Registry::tuner() const {
  std::lock_guard lock(mutex_);
  if (tuner_name_.empty()) return nullptr;
  const Component* found = find_locked(TESSERA_COMPONENT_TUNER, tuner_name_);
  return found == nullptr ? nullptr : found->object;
}

void Registry::set_allow_override(bool allow) {
  std::lock_guard lock(mutex_);
  allow_override_ = allow;
}

void Registry::set_parameter_locked(LoadedPlugin& plugin, const std::string& key,
                                    const Parameter& parameter) {
  const std::string& name = plugin.info().name;
  if (!plugin.takes_parameters())
    throw ConfigError(
        fmt::format("{}: plugin '{}' takes no parameters (it has no set_parameter), but parameter '{}' "
                    "is set to '{}' for it",
                    parameter.origin, name, key, parameter.value));
  // A declared schema is the whole list: the host checks key and value before the plugin sees them.
  if (plugin.info().declares_parameters) {
    const ParameterInfo* declared = find_parameter(plugin.info().parameters, key);
    if (declared == nullptr)
      throw ConfigError(fmt::format("{}: plugin '{}' has no parameter '{}' (set to '{}'); its parameters: {}",
                                    parameter.origin, name, key, parameter.value,
                                    parameter_names(plugin.info().parameters)));
    if (std::string problem = declared->check(parameter.value); !problem.empty())
      throw ConfigError(fmt::format("{}: plugin '{}' parameter '{}' ({}): {}", parameter.origin, name, key,
                                    declared->type_name(), problem));
  }
  if (std::string message = plugin.set_parameter(key, parameter.value); !message.empty())
    throw ConfigError(fmt::format("{}: plugin '{}' refused parameter '{}' = '{}': {}", parameter.origin, name,
                                  key, parameter.value, message));
  observe::logger().debug("plugin '{}': parameter '{}' = '{}' ({})", name, key, parameter.value,
                          parameter.origin);
  // Schedules built before may depend on the old value.
  const tessera_plugin_info& raw = plugin.raw();
  for (size_t i = 0; i < raw.num_components; ++i)
    if (raw.components[i]->kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM)
      algorithm_changed(raw.components[i]->name);
  // A tuner's answers may depend on the old value too: "auto" chooses again.
  for (size_t i = 0; i < raw.num_components; ++i)
    if (raw.components[i]->kind == TESSERA_COMPONENT_TUNER) choices_stale();
}

void Registry::set_parameters(const std::map<std::string, std::map<std::string, std::string>>& values,
                              const std::map<std::string, std::string>& origins) {
  std::lock_guard lock(mutex_);
  // Keys the new configuration does not set are dropped (a loaded plugin keeps the value it has:
  // there is no "unset"), so that the configuration in force is the last one applied.
  for (auto& [plugin_name, in_force] : parameters_) {
    const auto wanted = values.find(plugin_name);
    std::erase_if(in_force, [&](const auto& entry) {
      return wanted == values.end() || wanted->second.count(entry.first) == 0;
    });
  }
  for (const auto& wanted_entry : values) {
    const std::string& plugin_name = wanted_entry.first;  // a plain name: clang cannot capture a binding
    for (const auto& [key, value] : wanted_entry.second) {
      auto& in_force = parameters_[plugin_name];
      if (auto it = in_force.find(key); it != in_force.end() && it->second.value == value) continue;
      const auto origin = origins.find(plugin_name + "." + key);
      const Parameter parameter{value, origin != origins.end() ? origin->second : "configuration"};
      const auto loaded = std::find_if(plugins_.begin(), plugins_.end(), [&](const auto& plugin) {
        return plugin->info().name == plugin_name;
      });
      if (loaded != plugins_.end()) set_parameter_locked(**loaded, key, parameter);
      in_force[key] = parameter;
    }
  }
}

void Registry::apply(const std::vector<fs::path>& search_path,
                     const std::vector<std::string>& plugins_to_load) {
  std::lock_guard lock(mutex_);
  configured_search_path_ = search_path;
  // Families looked up before this configuration were discovered over the path of that moment:
  // discover them again over the new one (what they loaded stays loaded), so that an algorithm
  // looked up early does not hide the plugins of a path configured later.
  const std::vector<fs::path> path = search_path_locked();
  for (const auto& [family, discovered_over] : discovered_families_)
    if (discovered_over != path) scan_locked(family);
  for (const std::string& plugin : plugins_to_load) load_locked(plugin);
}

}  // namespace tessera::plugin
