// Negotiation: checks on what a plugin handed back, made before anything in it is called.
#pragma once

#include <string>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/collective.h"
#include "tessera/sdk/placement.h"
#include "tessera/sdk/plugin.h"

namespace tessera::plugin {

// The size of each struct as SDK 1.0 defined it: the least a v1 reader needs.
inline constexpr size_t kPluginInfoSizeV1 = offsetof(tessera_plugin_info, components) + sizeof(void*);
inline constexpr size_t kComponentSizeV1 = offsetof(tessera_component, table) + sizeof(void*);
inline constexpr size_t kBackendSizeV1 = offsetof(tessera_backend, kernels) + sizeof(void*);
inline constexpr size_t kKernelSizeV1 = offsetof(tessera_kernel, fn) + sizeof(void*);
inline constexpr size_t kPlacementSizeV1 = offsetof(tessera_placement_strategy, layout) + sizeof(void*);
inline constexpr size_t kAlgorithmSizeV1 = offsetof(tessera_collective_algorithm, build) + sizeof(void*);

// Each returns an empty string when valid, else the reason (without the file name).
std::string check_plugin_info(const tessera_plugin_info* info);
std::string check_component(const tessera_component* component, size_t index);
std::string check_backend(const tessera_backend* backend);
std::string check_collective_algorithm(const tessera_collective_algorithm* algorithm);
std::string check_placement(const tessera_placement_strategy* placement);

const char* component_kind_name(int32_t kind);

// The message a plugin put in `error` when a call failed, terminated inside its array (a plugin may
// fill all of it) and "no message" when the plugin left it empty.
std::string error_text(tessera_error& error);

}  // namespace tessera::plugin
