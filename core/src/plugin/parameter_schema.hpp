// A plugin's parameter schema (SDK 1.5, tessera_parameter): read and checked once at load, then
// used to check every configured value before it reaches the plugin.
#pragma once

#include <string>
#include <vector>

#include "tessera/plugins.hpp"
#include "tessera/sdk/plugin.h"

namespace tessera::plugin {

// Whether the plugin info's struct_size reaches the schema fields (a plugin built for SDK 1.5+).
bool has_parameter_schema(const tessera_plugin_info& info);

// Reads the declarations into `out`. Returns empty when all are valid, else the reason naming the
// parameter (by position and name) and what is wrong with it: see tessera_parameter in plugin.h.
std::string read_parameter_schema(const tessera_plugin_info& info, std::vector<ParameterInfo>& out);

// The declaration of `key`, or nullptr.
const ParameterInfo* find_parameter(const std::vector<ParameterInfo>& schema, const std::string& key);

// "group_size, label": the declared names, for messages.
std::string parameter_names(const std::vector<ParameterInfo>& schema);

}  // namespace tessera::plugin
