#include "plugin/extension_chain.hpp"

#include <fmt/format.h>

#include "log/log.hpp"
#include "plugin/validation.hpp"

namespace tessera::plugin {
namespace {

// The `extension` field of a known kind's table, which every SDK table has right after struct_size.
const void* table_extension(const tessera_component& component) {
  switch (component.kind) {
    case TESSERA_COMPONENT_BACKEND: return static_cast<const tessera_backend*>(component.table)->extension;
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
      return static_cast<const tessera_collective_algorithm*>(component.table)->extension;
    case TESSERA_COMPONENT_PLACEMENT: return static_cast<const tessera_placement_strategy*>(component.table)->extension;
    case TESSERA_COMPONENT_TRANSPORT: return static_cast<const tessera_transport*>(component.table)->extension;
    case TESSERA_COMPONENT_TUNER: return static_cast<const tessera_tuner*>(component.table)->extension;
    default: return nullptr;  // a newer minor's kind: its table is never read
  }
}

const char* table_struct_name(int32_t kind) {
  switch (kind) {
    case TESSERA_COMPONENT_BACKEND: return "tessera_backend";
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM: return "tessera_collective_algorithm";
    case TESSERA_COMPONENT_PLACEMENT: return "tessera_placement_strategy";
    case TESSERA_COMPONENT_TUNER: return "tessera_tuner";
    default: return "tessera_transport";
  }
}

}  // namespace

std::string check_extension_chain(const void* extension, const std::string& plugin, const std::string& where) {
  const auto* entry = static_cast<const tessera_extension*>(extension);
  for (size_t position = 0; entry != nullptr; ++position, entry = entry->next) {
    // Position TESSERA_EXTENSION_CHAIN_MAX is the (MAX + 1)-th entry: one too many.
    if (position == TESSERA_EXTENSION_CHAIN_MAX)
      return fmt::format("plugin '{}': {}: extension chain has more than {} entries (entry #{} is one too many; a "
                         "cycle in the 'next' links makes an endless chain)",
                         plugin, where, TESSERA_EXTENSION_CHAIN_MAX, position);
    // Only struct_size is read before this check: type and next lie beyond it.
    if (entry->struct_size < sizeof(tessera_extension))
      return fmt::format("plugin '{}': {}: extension chain entry #{} has struct_size {}, less than the {}-byte "
                         "tessera_extension header every entry begins with",
                         plugin, where, position, entry->struct_size, sizeof(tessera_extension));
    // SDK 1.3 defines no extension type, so every entry is one this host does not know.
    observe::logger().debug("plugin '{}': {}: skipping extension chain entry #{} of type {:#x}, which this host "
                            "does not know",
                            plugin, where, position, entry->type);
  }
  return {};
}

std::string check_extension_chains(const tessera_plugin_info& info) {
  if (std::string reason = check_extension_chain(info.extension, info.name, "tessera_plugin_info"); !reason.empty())
    return reason;
  for (size_t i = 0; i < info.num_components; ++i) {
    const tessera_component& component = *info.components[i];
    const std::string where = fmt::format("component #{} ('{}')", i, component.name);
    if (std::string reason = check_extension_chain(component.extension, info.name, where); !reason.empty())
      return reason;
    if (!is_known_kind(component.kind)) continue;
    if (std::string reason = check_extension_chain(table_extension(component), info.name,
                                                   fmt::format("{} of {}", table_struct_name(component.kind), where));
        !reason.empty())
      return reason;
  }
  return {};
}

}  // namespace tessera::plugin
