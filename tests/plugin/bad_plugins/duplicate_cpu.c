/* A plugin that is valid on its own but offers a backend named "cpu", which backend-cpu already
 * provides: the host must reject it and keep the first. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("bad-duplicate-cpu", "a second backend named cpu",
                 (plugin.backend.name = "cpu", plugin.component.name = "cpu"))
