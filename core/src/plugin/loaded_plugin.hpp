// One shared object that passed negotiation, with the library handle that keeps it mapped.
//
// Everything made from a plugin (a Backend, and through it every Storage) holds a shared_ptr to its
// LoadedPlugin, so the library is unmapped only after the last such object is gone.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include <boost/dll/shared_library.hpp>

#include "tessera/plugins.hpp"
#include "plugin/validation.hpp"
#include "tessera/sdk/plugin.h"

namespace tessera::plugin {

class LoadedPlugin {
 public:
  // Loads, queries and validates `file`; throws PluginError naming the file and the reason. Calls
  // nothing but the query: start() runs init.
  static std::shared_ptr<LoadedPlugin> open(const std::filesystem::path& file);
  // Calls the plugin's finalize (SDK 1.3) when start() succeeded and finalize_now() did not: the
  // last object using the plugin is gone and the library is unmapped right after.
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  // Calls the plugin's init (SDK 1.3), once, before any component is used; throws PluginError with
  // the plugin's message when it refuses (finalize is then never called).
  void start();

  // Calls the plugin's finalize now, once (when start() succeeded), keeping the library mapped: at
  // process exit, when objects in static storage may still hold the plugin. A failure is logged.
  void finalize_now() noexcept;
  // Whether finalize ran: the host then calls nothing in the plugin any more (memory a backend
  // still holds at exit is left to the operating system).
  bool finalized() const { return finalized_.load(std::memory_order_acquire); }

  // Whether the plugin has set_parameter (SDK 1.3): one without takes no parameters.
  bool takes_parameters() const { return lifecycle_.set_parameter != nullptr; }
  // Passes one parameter; returns empty when the plugin accepted it, else the plugin's message.
  std::string set_parameter(const std::string& key, const std::string& value);

  const PluginInfo& info() const { return info_; }
  const tessera_plugin_info& raw() const { return *raw_; }

 private:
  LoadedPlugin() = default;
  boost::dll::shared_library library_;  // a member: unloaded after the destructor's body has finalized
  const tessera_plugin_info* raw_ = nullptr;
  PluginInfo info_;
  PluginLifecycle lifecycle_;
  bool started_ = false;
  std::atomic<bool> finalized_{false};
};

}  // namespace tessera::plugin
