// A transport component (SDK 1.1) from a loaded plugin: the validated table, kept together with the
// library that holds its code. The executor drives the table's functions; this only owns the pairing.
#pragma once

#include <memory>
#include <string>

#include "plugin/loaded_plugin.hpp"
#include "tessera/sdk/transport.h"

namespace tessera::plugin {

class Transport {
 public:
  // `table` passed check_transport and lives as long as `plugin` stays loaded.
  Transport(const tessera_transport* table, std::shared_ptr<LoadedPlugin> plugin)
      : table_(table), plugin_(std::move(plugin)) {}

  std::string name() const { return table_->name; }
  const tessera_transport& table() const { return *table_; }
  const LoadedPlugin& plugin() const { return *plugin_; }
  // The optional all-gather: absent when NULL or when the plugin's table ends before it.
  bool has_allgather() const;
  // The optional abort (SDK 1.5): absent when NULL or when the plugin's table ends before it.
  bool has_abort() const;

 private:
  const tessera_transport* table_;
  std::shared_ptr<LoadedPlugin> plugin_;  // keeps the code of table_ mapped
};

}  // namespace tessera::plugin
