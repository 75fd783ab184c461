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

  // The table's functions, each called under a guard: an exception escaping the plugin becomes
  // TESSERA_INTERNAL with "<function> threw: <what>" in `error`, as if the plugin had reported it
  // (the SDK forbids exceptions across the ABI; the host must not die of one). The optional ones
  // are called only when present (has_allgather, has_abort).
  tessera_status init(const tessera_transport_config& config, tessera_transport_info& info,
                      tessera_error& error) const;
  tessera_status finalize(tessera_error& error) const;
  tessera_status isend(const DLTensor& chunk, int32_t peer, int64_t tag, tessera_transport_request& request,
                       tessera_error& error) const;
  tessera_status irecv(const DLTensor& chunk, int32_t peer, int64_t tag, tessera_transport_request& request,
                       tessera_error& error) const;
  tessera_status test(tessera_transport_request request, int32_t& done, tessera_error& error) const;
  tessera_status free_request(tessera_transport_request request, tessera_error& error) const;
  tessera_status allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms,
                           tessera_error& error) const;
  tessera_status abort(int32_t exit_code, tessera_error& error) const;

 private:
  const tessera_transport* table_;
  std::shared_ptr<LoadedPlugin> plugin_;  // keeps the code of table_ mapped
};

}  // namespace tessera::plugin
