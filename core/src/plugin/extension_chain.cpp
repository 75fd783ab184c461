#include "plugin/extension_chain.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "log/log.hpp"
#include "plugin/readable_memory.hpp"
#include "plugin/validation.hpp"
#include "tessera/sdk/version.h"

namespace tessera::plugin {
namespace {

// The `extension` field of a known kind's table, which every SDK table has right after struct_size.
const void* table_extension(const tessera_component& component) {
  switch (component.kind) {
    case TESSERA_COMPONENT_BACKEND:
      return static_cast<const tessera_backend*>(component.table)->extension;
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
      return static_cast<const tessera_collective_algorithm*>(component.table)->extension;
    case TESSERA_COMPONENT_PLACEMENT:
      return static_cast<const tessera_placement_strategy*>(component.table)->extension;
    case TESSERA_COMPONENT_TRANSPORT:
      return static_cast<const tessera_transport*>(component.table)->extension;
    case TESSERA_COMPONENT_TUNER:
      return static_cast<const tessera_tuner*>(component.table)->extension;
    default:
      return nullptr;  // a newer minor's kind: its table is never read
  }
}

const char* table_struct_name(int32_t kind) {
  switch (kind) {
    case TESSERA_COMPONENT_BACKEND:
      return "tessera_backend";
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
      return "tessera_collective_algorithm";
    case TESSERA_COMPONENT_PLACEMENT:
      return "tessera_placement_strategy";
    case TESSERA_COMPONENT_TUNER:
      return "tessera_tuner";
    default:
      return "tessera_transport";
  }
}

}  // namespace

std::string check_extension_chain(const void* extension, const std::string& plugin, const std::string& where,
                                  uint32_t plugin_minor) {
  const void* address = extension;
  for (size_t position = 0; address != nullptr; ++position) {
    // Position TESSERA_EXTENSION_CHAIN_MAX is the (MAX + 1)-th entry: one too many.
    if (position == TESSERA_EXTENSION_CHAIN_MAX)
      return fmt::format(
          "plugin '{}': {}: extension chain has more than {} entries (entry #{} is one too many; a "
          "cycle in the 'next' links makes an endless chain)",
          plugin, where, TESSERA_EXTENSION_CHAIN_MAX, position);
    const std::string entry_text =
        fmt::format("plugin '{}': {}: extension chain entry #{} at {}", plugin, where, position, address);
    // The pointer is the plugin's word alone: nothing is read through it but by read_if_readable,
    // and each field only once it is known to lie within the entry.
    if (reinterpret_cast<std::uintptr_t>(address) % alignof(tessera_extension) != 0)
      return fmt::format(
          "{} is not aligned to {} bytes, so it cannot be a tessera_extension (is the 'extension' "
          "field set to something else?)",
          entry_text, alignof(tessera_extension));
    size_t struct_size = 0;
    if (!read_if_readable(address, &struct_size, sizeof(struct_size)))
      return fmt::format("{} cannot be read: the pointer does not lead to readable memory", entry_text);
    if (struct_size < sizeof(tessera_extension))
      return fmt::format(
          "{} has struct_size {}, less than the {}-byte tessera_extension header every entry "
          "begins with",
          entry_text, struct_size, sizeof(tessera_extension));
    if (struct_size > TESSERA_EXTENSION_STRUCT_MAX)
      return fmt::format(
          "{} has struct_size {}, more than the {} bytes an extension struct may have (is the "
          "'extension' field set to something that is not an extension chain?)",
          entry_text, struct_size, TESSERA_EXTENSION_STRUCT_MAX);
    if (!readable(address, struct_size))
      return fmt::format("{} has struct_size {}, but not all of those bytes can be read", entry_text,
                         struct_size);
    tessera_extension header{};
    static_cast<void>(read_if_readable(address, &header, sizeof(header)));  // readable: checked just above
    // Types below TESSERA_EXTENSION_USER belong to the SDK, which defines none up to this host's
    // minor: a plugin built for one of those minors cannot mean one. A newer minor's may.
    if (header.type < 0 ||
        (header.type < TESSERA_EXTENSION_USER && plugin_minor <= TESSERA_SDK_VERSION_MINOR))
      return fmt::format(
          "{} has type {:#x}, which is no extension type: SDK {}.{} defines none, and types of a "
          "host's and its plugins' own agreements start at TESSERA_EXTENSION_USER ({:#x})",
          entry_text, header.type, TESSERA_SDK_VERSION_MAJOR, plugin_minor, TESSERA_EXTENSION_USER);
    observe::logger().debug("{}: skipping an extension of type {:#x}, which this host does not know",
                            entry_text, header.type);
    address = header.next;
  }
  return {};
}

std::string check_extension_chains(const tessera_plugin_info& info) {
  if (std::string reason =
          check_extension_chain(info.extension, info.name, "tessera_plugin_info", info.sdk_minor);
      !reason.empty())
    return reason;
  for (size_t i = 0; i < info.num_components; ++i) {
    const tessera_component& component = *info.components[i];
    const std::string where = fmt::format("component #{} ('{}')", i, component.name);
    if (std::string reason = check_extension_chain(component.extension, info.name, where, info.sdk_minor);
        !reason.empty())
      return reason;
    if (!is_known_kind(component.kind)) continue;
    if (std::string reason = check_extension_chain(
            table_extension(component), info.name,
            fmt::format("{} of {}", table_struct_name(component.kind), where), info.sdk_minor);
        !reason.empty())
      return reason;
  }
  return {};
}

}  // namespace tessera::plugin
