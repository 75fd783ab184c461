// SDK 1.3 typed extension chains (tessera_extension in plugin.h): checked once, at load, in every
// plugin-provided struct the host reads, so that nothing walks a malformed chain later.
#pragma once

#include <string>

#include "tessera/sdk/plugin.h"

namespace tessera::plugin {

// Walks the chains of the plugin info, of each component and of each component's table of a kind
// this host knows. Returns empty when every chain is well formed, else the reason naming the
// plugin, the struct and the entry's position (an entry smaller than the tessera_extension header,
// or a chain longer than TESSERA_EXTENSION_CHAIN_MAX, which a cycle makes). Entries of types the
// host does not know (all of them: SDK 1.3 defines none) are skipped with a debug log line.
// Only for plugins built for SDK 1.3 or later, whose components already passed check_component.
std::string check_extension_chains(const tessera_plugin_info& info);

// One chain: `where` names the struct holding it ("tessera_backend of component #0 ('cpu')").
std::string check_extension_chain(const void* extension, const std::string& plugin, const std::string& where);

}  // namespace tessera::plugin
