#include "load.hpp"

#include <dlfcn.h>

#include "tessera/sdk/plugin.h"

namespace transport_test {

LoadedTransport load_transport(const std::string& file, const std::string& name) {
  LoadedTransport loaded;
  loaded.handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (loaded.handle == nullptr) {
    const char* why = dlerror();
    loaded.error = "dlopen " + file + ": " + (why != nullptr ? why : "unknown error");
    return loaded;
  }
  auto query = reinterpret_cast<tessera_plugin_query_fn>(dlsym(loaded.handle, TESSERA_PLUGIN_QUERY_SYMBOL));
  if (query == nullptr) {
    loaded.error = file + " does not export " + TESSERA_PLUGIN_QUERY_SYMBOL;
    return loaded;
  }
  tessera_host_info host{};
  host.struct_size = sizeof(host);
  host.sdk_major = TESSERA_SDK_VERSION_MAJOR;
  host.sdk_minor = TESSERA_SDK_VERSION_MINOR;
  host.host_name = "transport_mpi test";
  tessera_error error{};
  error.struct_size = sizeof(error);
  const tessera_plugin_info* info = nullptr;
  if (query(&host, &info, &error) != TESSERA_OK || info == nullptr) {
    loaded.error = "tessera_plugin_query failed: " + std::string(error.message);
    return loaded;
  }
  for (size_t i = 0; i < info->num_components; ++i) {
    const tessera_component* component = info->components[i];
    if (component->kind == TESSERA_COMPONENT_TRANSPORT && name == component->name) {
      loaded.table = static_cast<const tessera_transport*>(component->table);
      return loaded;
    }
  }
  loaded.error = file + " has no transport named '" + name + "'";
  return loaded;
}

void* plugin_symbol(const LoadedTransport& loaded, const char* symbol) {
  return dlsym(loaded.handle, symbol);
}

}  // namespace transport_test
