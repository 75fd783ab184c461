// Header-only helper that describes a plugin and defines its entry point.
//
//   static void describe(tessera::sdk::PluginBuilder& plugin) {
//     static tessera::sdk::BackendBuilder cpu("cpu", kDLCPU);
//     ... cpu.kernel<...>(...) ...
//     plugin.add_backend(cpu);
//   }
//   TESSERA_DEFINE_PLUGIN("backend-cpu", "0.1.0", "CPU kernels on OpenBLAS", describe)
//
// The macro exports tessera_plugin_query (the only symbol a plugin exports), builds the
// description once, and refuses a host whose SDK major version differs from the plugin's.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/algorithm_builder.hpp"
#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/placement_builder.hpp"
#include "tessera/sdk/cpp/transport_builder.hpp"
#include "tessera/sdk/plugin.h"

namespace tessera::sdk {

class PluginBuilder {
 public:
  PluginBuilder(const char* name, const char* version, const char* description) {
    info_.struct_size = sizeof(tessera_plugin_info);
    info_.sdk_major = TESSERA_SDK_VERSION_MAJOR;
    info_.sdk_minor = TESSERA_SDK_VERSION_MINOR;
    info_.name = name;
    info_.version = version;
    info_.description = description;
  }
  PluginBuilder(const PluginBuilder&) = delete;
  PluginBuilder& operator=(const PluginBuilder&) = delete;

  // `table` must outlive the plugin (a static).
  PluginBuilder& add_component(int32_t kind, const char* name, const void* table) {
    components_.push_back(tessera_component{sizeof(tessera_component), nullptr, kind, name, table});
    component_pointers_.push_back(&components_.back());
    info_.num_components = component_pointers_.size();
    info_.components = component_pointers_.data();
    return *this;
  }
  PluginBuilder& add_backend(const BackendBuilder& backend) {
    return add_component(TESSERA_COMPONENT_BACKEND, backend.table()->name, backend.table());
  }

  PluginBuilder& add_algorithm(const AlgorithmBuilder& algorithm) {
    return add_component(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM, algorithm.table()->name, algorithm.table());
  }

  PluginBuilder& add_placement(const PlacementBuilder& placement) {
    return add_component(TESSERA_COMPONENT_PLACEMENT, placement.table()->name, placement.table());
  }

  // A transport table (SDK 1.1), e.g. TransportBuilder<Impl>::table().
  PluginBuilder& add_transport(const tessera_transport* transport) {
    return add_component(TESSERA_COMPONENT_TRANSPORT, transport->name, transport);
  }

  const tessera_plugin_info* info() const { return &info_; }

 private:
  tessera_plugin_info info_{};
  std::deque<tessera_component> components_;
  std::vector<const tessera_component*> component_pointers_;
};

inline tessera_status answer_query(const tessera_host_info* host, const tessera_plugin_info* info,
                                   const tessera_plugin_info** out, tessera_error* error) {
  if (host == nullptr || out == nullptr)
    return report(error, TESSERA_INVALID_ARGUMENT, "tessera_plugin_query: host or out is NULL");
  if (host->sdk_major != TESSERA_SDK_VERSION_MAJOR) {
    const std::string message = "plugin '" + std::string(info->name) + "' needs SDK major " +
                                std::to_string(TESSERA_SDK_VERSION_MAJOR) + ", host offers " +
                                std::to_string(host->sdk_major);
    return report(error, TESSERA_VERSION_MISMATCH, message.c_str());
  }
  *out = info;
  return TESSERA_OK;
}

}  // namespace tessera::sdk

#define TESSERA_DEFINE_PLUGIN(NAME, VERSION, DESCRIPTION, DESCRIBE)                                 \
  extern "C" __attribute__((visibility("default"))) tessera_status tessera_plugin_query(           \
      const tessera_host_info* host, const tessera_plugin_info** info, tessera_error* error) {      \
    return ::tessera::sdk::guarded(error, [&] {                                                     \
      static ::tessera::sdk::PluginBuilder plugin(NAME, VERSION, DESCRIPTION);                      \
      static const bool described = (DESCRIBE(plugin), true);                                       \
      (void)described;                                                                              \
      tessera_status status = ::tessera::sdk::answer_query(host, plugin.info(), info, error);       \
      if (status != TESSERA_OK) throw ::tessera::sdk::Error(status, error->message);                \
    });                                                                                             \
  }
