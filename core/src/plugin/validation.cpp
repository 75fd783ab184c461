#include "plugin/validation.hpp"

#include <cctype>
#include <utility>

#include <fmt/format.h>

#include "tessera/sdk/version.h"

namespace tessera::plugin {

const char* component_kind_name(int32_t kind) {
  switch (kind) {
    case TESSERA_COMPONENT_BACKEND: return "backend";
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM: return "collective";
    case TESSERA_COMPONENT_PLACEMENT: return "placement";
    case TESSERA_COMPONENT_TRANSPORT: return "transport";
    default: return "unknown";
  }
}

bool is_known_kind(int32_t kind) {
  return kind >= TESSERA_COMPONENT_BACKEND && kind <= TESSERA_COMPONENT_TRANSPORT;
}

std::string check_plugin_info(const tessera_plugin_info* info) {
  if (info == nullptr) return "tessera_plugin_query returned OK but no plugin info";
  if (info->struct_size < kPluginInfoSizeV1)
    return fmt::format("tessera_plugin_info is {} bytes, the host needs at least {} (SDK {}.0)",
                       info->struct_size, kPluginInfoSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (info->sdk_major != TESSERA_SDK_VERSION_MAJOR)
    return fmt::format("plugin was built for SDK {}.{}, the host supports SDK major {} (up to {}.{})",
                       info->sdk_major, info->sdk_minor, TESSERA_SDK_VERSION_MAJOR,
                       TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR);
  if (info->name == nullptr || info->name[0] == '\0') return "plugin info has no name";
  if (info->num_components > 0 && info->components == nullptr)
    return fmt::format("plugin declares {} components but the components pointer is NULL",
                       info->num_components);
  return {};
}

std::string check_component(const tessera_component* component, size_t index, uint32_t plugin_minor) {
  if (component == nullptr) return fmt::format("component #{} is NULL", index);
  if (component->struct_size < kComponentSizeV1)
    return fmt::format("component #{} struct is {} bytes, the host needs at least {}", index,
                       component->struct_size, kComponentSizeV1);
  if (component->name == nullptr || component->name[0] == '\0')
    return fmt::format("component #{} has no name", index);
  if (component->table == nullptr)
    return fmt::format("component #{} ('{}') has a NULL table", index, component->name);
  if (!is_known_kind(component->kind) && plugin_minor <= TESSERA_SDK_VERSION_MINOR)
    return fmt::format("component #{} ('{}') has unknown kind {} in field 'kind': the plugin claims SDK {}.{}, "
                       "whose kinds this host (SDK {}.{}) knows: 1 backend, 2 collective, 3 placement, 4 transport",
                       index, component->name, component->kind, TESSERA_SDK_VERSION_MAJOR, plugin_minor,
                       TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR);
  if (component->kind == TESSERA_COMPONENT_BACKEND)
    if (std::string reason = check_backend(static_cast<const tessera_backend*>(component->table));
        !reason.empty())
      return fmt::format("backend '{}': {}", component->name, reason);
  if (component->kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM)
    if (std::string reason =
            check_collective_algorithm(static_cast<const tessera_collective_algorithm*>(component->table));
        !reason.empty())
      return fmt::format("collective algorithm '{}': {}", component->name, reason);
  if (component->kind == TESSERA_COMPONENT_PLACEMENT)
    if (std::string reason = check_placement(static_cast<const tessera_placement_strategy*>(component->table));
        !reason.empty())
      return fmt::format("placement '{}': {}", component->name, reason);
  if (component->kind == TESSERA_COMPONENT_TRANSPORT)
    if (std::string reason = check_transport(static_cast<const tessera_transport*>(component->table));
        !reason.empty())
      return fmt::format("transport '{}': {}", component->name, reason);
  return {};
}

std::string check_backend(const tessera_backend* backend) {
  if (backend->struct_size < kBackendSizeV1)
    return fmt::format("tessera_backend struct is {} bytes, the host needs at least {} (SDK {}.0)",
                       backend->struct_size, kBackendSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (backend->name == nullptr || backend->name[0] == '\0') return "the backend table has no name";
  if (backend->alloc == nullptr) return "required function 'alloc' is NULL";
  if (backend->free == nullptr) return "required function 'free' is NULL";
  if (backend->copy == nullptr) return "required function 'copy' is NULL";
  if (backend->num_kernels > 0 && backend->kernels == nullptr)
    return fmt::format("declares {} kernels but the kernels pointer is NULL", backend->num_kernels);
  for (size_t i = 0; i < backend->num_kernels; ++i) {
    const tessera_kernel* kernel = backend->kernels[i];
    if (kernel == nullptr) return fmt::format("kernel #{} is NULL", i);
    if (kernel->struct_size < kKernelSizeV1)
      return fmt::format("kernel #{} struct is {} bytes, the host needs at least {}", i, kernel->struct_size,
                         kKernelSizeV1);
    if (kernel->op == nullptr) return fmt::format("kernel #{} has no op name", i);
    if (kernel->fn == nullptr) return fmt::format("kernel #{} ('{}') has a NULL function", i, kernel->op);
  }
  return {};
}

std::string check_collective_algorithm(const tessera_collective_algorithm* algorithm) {
  if (algorithm->struct_size < kAlgorithmSizeV1)
    return fmt::format("tessera_collective_algorithm struct is {} bytes, the host needs at least {} (SDK {}.0)",
                       algorithm->struct_size, kAlgorithmSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (algorithm->name == nullptr || algorithm->name[0] == '\0') return "the algorithm table has no name";
  if (algorithm->check == nullptr) return "required function 'check' is NULL";
  if (algorithm->build == nullptr) return "required function 'build' is NULL";
  if (algorithm->collectives >> TESSERA_COLL_COUNT != 0)
    return fmt::format("offers unknown collectives (mask {:#x}; this host knows {})", algorithm->collectives,
                       TESSERA_COLL_COUNT);
  return {};
}

std::string check_placement(const tessera_placement_strategy* placement) {
  if (placement->struct_size < kPlacementSizeV1)
    return fmt::format("tessera_placement_strategy struct is {} bytes, the host needs at least {} (SDK {}.0)",
                       placement->struct_size, kPlacementSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (placement->name == nullptr || placement->name[0] == '\0') return "the placement table has no name";
  if (placement->prefix == nullptr || placement->prefix[0] == '\0') return "the placement has no text prefix";
  for (const char* c = placement->prefix; *c != '\0'; ++c)
    if (!std::isalpha(static_cast<unsigned char>(*c)))
      return fmt::format("prefix '{}' must be letters only", placement->prefix);
  if (placement->kind < TESSERA_PLACEMENT_SHARD || placement->kind > TESSERA_PLACEMENT_PARTIAL)
    return fmt::format("unknown kind {}", placement->kind);
  if (placement->kind == TESSERA_PLACEMENT_SHARD && placement->layout == nullptr)
    return "a shard-like placement needs a layout function";
  return {};
}

std::string check_transport(const tessera_transport* transport) {
  if (transport->struct_size < kTransportSizeV1_1)
    return fmt::format("tessera_transport struct is {} bytes, the host needs at least {} (SDK {}.1, up to "
                       "field 'free_request')",
                       transport->struct_size, kTransportSizeV1_1, TESSERA_SDK_VERSION_MAJOR);
  if (transport->name == nullptr || transport->name[0] == '\0') return "the transport table has no name";
  const std::pair<const char*, bool> required[] = {
      {"init", transport->init != nullptr},   {"finalize", transport->finalize != nullptr},
      {"isend", transport->isend != nullptr}, {"irecv", transport->irecv != nullptr},
      {"test", transport->test != nullptr},   {"wait", transport->wait != nullptr},
      {"free_request", transport->free_request != nullptr}};
  for (const auto& [field, present] : required)
    if (!present) return fmt::format("required function '{}' is NULL", field);
  return {};
}

std::string error_text(tessera_error& error) {
  error.message[sizeof(error.message) - 1] = '\0';
  return error.message[0] != '\0' ? error.message : "no message";
}

}  // namespace tessera::plugin
