// Negotiation: checks on what a plugin handed back, made before anything in it is called.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/collective.h"
#include "tessera/sdk/placement.h"
#include "tessera/sdk/plugin.h"
#include "tessera/sdk/transport.h"
#include "tessera/sdk/tuner.h"
#include "tessera/sdk/version.h"

namespace tessera::plugin {

// The size of each struct as SDK 1.0 defined it: the least a v1 reader needs.
inline constexpr size_t kPluginInfoSizeV1 = offsetof(tessera_plugin_info, components) + sizeof(void*);
inline constexpr size_t kComponentSizeV1 = offsetof(tessera_component, table) + sizeof(void*);
inline constexpr size_t kBackendSizeV1 = offsetof(tessera_backend, kernels) + sizeof(void*);
inline constexpr size_t kKernelSizeV1 = offsetof(tessera_kernel, fn) + sizeof(void*);
inline constexpr size_t kPlacementSizeV1 = offsetof(tessera_placement_strategy, layout) + sizeof(void*);
inline constexpr size_t kAlgorithmSizeV1 = offsetof(tessera_collective_algorithm, build) + sizeof(void*);
// The transport as SDK 1.1 defined it, up to its last required function (allgather is optional).
inline constexpr size_t kTransportSizeV1_1 = offsetof(tessera_transport, free_request) + sizeof(void*);
// The tuner as SDK 1.5 defined it, up to its one function.
inline constexpr size_t kTunerSizeV1_5 = offsetof(tessera_tuner, tune) + sizeof(void*);
inline constexpr uint32_t kFirstMinorWithTuners = 5;

// SDK 1.3 made `extension` fields typed chains (plugin/extension_chain.hpp); a plugin built for an
// older minor was told they must be NULL, and is still held to that.
inline constexpr uint32_t kFirstMinorWithExtensionChains = 3;

// SDK 1.3 fields appended to SDK 1.0 structs, read only when the struct's struct_size covers them
// (a 1.2 plugin's structs end before them): absent reads as 0 / NULL.
inline uint64_t component_flags(const tessera_component& component) {
  return component.struct_size >= offsetof(tessera_component, flags) + sizeof(component.flags)
             ? component.flags
             : 0;
}
struct PluginLifecycle {
  void* context = nullptr;
  decltype(tessera_plugin_info::init) init = nullptr;
  decltype(tessera_plugin_info::finalize) finalize = nullptr;
  decltype(tessera_plugin_info::set_parameter) set_parameter = nullptr;
};
PluginLifecycle plugin_lifecycle(const tessera_plugin_info& info);

// Each returns an empty string when valid, else the reason (without the file name).
std::string check_plugin_info(const tessera_plugin_info* info);
// `plugin_minor` is the SDK minor the plugin was built for: a kind this host does not know is a
// defect when the host knows that minor, and a later addition (skipped) when it does not.
std::string check_component(const tessera_component* component, size_t index, uint32_t plugin_minor);
// A kernel table is held to the kernel catalogue (sdk/KERNELS.md) of `plugin_minor`'s SDK when this
// host knows that minor; one (op, dtype) has one kernel, and dtypes are scalars (lanes 1).
std::string check_backend(const tessera_backend* backend, uint32_t plugin_minor);
std::string check_collective_algorithm(const tessera_collective_algorithm* algorithm,
                                       uint32_t plugin_minor = TESSERA_SDK_VERSION_MINOR);
std::string check_placement(const tessera_placement_strategy* placement,
                            uint32_t plugin_minor = TESSERA_SDK_VERSION_MINOR);
std::string check_transport(const tessera_transport* transport,
                            uint32_t plugin_minor = TESSERA_SDK_VERSION_MINOR);
std::string check_tuner(const tessera_tuner* tuner, uint32_t plugin_minor = TESSERA_SDK_VERSION_MINOR);

// Whether this host knows (and registers) components of `kind`.
bool is_known_kind(int32_t kind);

const char* component_kind_name(int32_t kind);

// The op names a backend may register: sdk/KERNELS.md's.
std::span<const std::string_view> kernel_catalogue();
// Whether `op` is in the catalogue of a plugin built for SDK 1.`plugin_minor` (the folds came in 1.4).
bool is_catalogue_op(std::string_view op, uint32_t plugin_minor = TESSERA_SDK_VERSION_MINOR);
// The catalogue name `op` most likely means ("Relu" -> "relu", "matmul" -> "mm"); empty when none
// is close.
std::string closest_catalogue_op(std::string_view op);

// The message a plugin put in `error` when a call failed, terminated inside its array (a plugin may
// fill all of it) and "no message" when the plugin left it empty. A message that fills the array
// was cut there: the text then says so.
std::string error_text(tessera_error& error);

// A status as messages show it: "7 (NOT_FOUND)", or "42 (a code no SDK 1.x up to 1.5 defines)".
std::string status_text(tessera_status status);

}  // namespace tessera::plugin
