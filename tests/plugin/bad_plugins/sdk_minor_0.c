/* A plugin as SDK 1.0 built it: a backend, sdk_minor 0, no transport, and a backend table of the
 * 1.0 size (it ends where 1.2 appended `flags`). No other 1.0 struct changed since, so this is
 * exactly what a 1.0 build hands a newer host. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("backend-sdk10", "backend built against SDK 1.0",
                 (plugin.info.sdk_minor = 0, plugin.backend.struct_size = offsetof(tessera_backend, flags)))
