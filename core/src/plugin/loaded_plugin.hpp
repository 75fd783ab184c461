// One shared object that passed negotiation, with the library handle that keeps it mapped.
//
// Everything made from a plugin (a Backend, and through it every Storage) holds a shared_ptr to its
// LoadedPlugin, so the library is unmapped only after the last such object is gone.
#pragma once

#include <filesystem>
#include <memory>

#include <boost/dll/shared_library.hpp>

#include "tessera/plugins.hpp"
#include "tessera/sdk/plugin.h"

namespace tessera::plugin {

class LoadedPlugin {
 public:
  // Loads, queries and validates `file`; throws PluginError naming the file and the reason.
  static std::shared_ptr<LoadedPlugin> open(const std::filesystem::path& file);

  const PluginInfo& info() const { return info_; }
  const tessera_plugin_info& raw() const { return *raw_; }

 private:
  LoadedPlugin() = default;
  boost::dll::shared_library library_;
  const tessera_plugin_info* raw_ = nullptr;
  PluginInfo info_;
};

}  // namespace tessera::plugin
