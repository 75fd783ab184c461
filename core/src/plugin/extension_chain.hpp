// SDK 1.3 typed extension chains (tessera_extension in plugin.h): checked once, at load, in every
// plugin-provided struct the host reads, so that nothing walks a malformed chain later.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/sdk/plugin.h"

namespace tessera::plugin {

// Walks the chains of the plugin info, of each component and of each component's table of a kind
// this host knows. Returns empty when every chain is well formed, else the reason naming the
// plugin, the struct and the entry's position and address: an entry that is misaligned or cannot
// be read (a pointer to something that is not a chain), whose struct_size is smaller than the
// tessera_extension header or larger than TESSERA_EXTENSION_STRUCT_MAX, whose type is in the SDK's
// range but not defined by the plugin's minor, or a chain longer than TESSERA_EXTENSION_CHAIN_MAX
// (which a cycle makes). Every read goes through read_if_readable, so a wild pointer is reported,
// not followed into a crash. Entries of user types the host does not know (all of them: the SDK
// defines none) are skipped with a debug log line. Only for plugins built for SDK 1.3 or later,
// whose components already passed check_component.
std::string check_extension_chains(const tessera_plugin_info& info);

// One chain: `where` names the struct holding it ("tessera_backend of component #0 ('cpu')");
// `plugin_minor` is the SDK minor the plugin was built for.
std::string check_extension_chain(const void* extension, const std::string& plugin, const std::string& where,
                                  uint32_t plugin_minor);

}  // namespace tessera::plugin
