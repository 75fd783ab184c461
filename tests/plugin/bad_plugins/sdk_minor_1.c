/* A backend as SDK 1.1 built it: sdk_minor 1 and a backend table that ends where 1.2 appended
 * `flags`, so the host must read it as an ordinary backend. The memory past the declared size holds
 * what would mark it shapes-only: a host that read past struct_size would treat it as one. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("backend-sdk11", "backend built against SDK 1.1",
                 (plugin.info.sdk_minor = 1, plugin.backend.struct_size = offsetof(tessera_backend, flags),
                  plugin.backend.flags = TESSERA_BACKEND_SHAPES_ONLY))
