// Reading Tessera's environment variables. Here, in the lowest layer that reads one
// (TESSERA_PLUGIN_PATH), so that every layer above reads them the same way.
#pragma once

#include <cstdlib>

namespace tessera::plugin {

// A variable's value, or nullptr when it is unset or empty: an empty value overrides nothing.
inline const char* env_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

}  // namespace tessera::plugin
