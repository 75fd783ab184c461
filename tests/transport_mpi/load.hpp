// Loading a transport from a plugin file the way the host does (core/src/plugin/loaded_plugin.cpp):
// dlopen with RTLD_NOW | RTLD_LOCAL, call tessera_plugin_query, pick the transport component.
#pragma once

#include <string>

#include "tessera/sdk/transport.h"

namespace transport_test {

struct LoadedTransport {
  void* handle = nullptr;                    // dlopen's; kept open until the process exits
  const tessera_transport* table = nullptr;  // NULL when loading failed
  std::string error;                         // why, when it failed
};

LoadedTransport load_transport(const std::string& file, const std::string& name);

// A symbol of the plugin or of the libraries it brought in (libmpi), by dlsym on its handle.
void* plugin_symbol(const LoadedTransport& loaded, const char* symbol);

}  // namespace transport_test
