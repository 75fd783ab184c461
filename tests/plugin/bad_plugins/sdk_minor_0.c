/* A plugin as SDK 1.0 built it: a backend, sdk_minor 0, and no transport. No 1.0 struct changed in
 * 1.1, so declaring minor 0 over the same structs is exactly what a 1.0 build hands a 1.1 host. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("backend-sdk10", "backend built against SDK 1.0", plugin.info.sdk_minor = 0)
