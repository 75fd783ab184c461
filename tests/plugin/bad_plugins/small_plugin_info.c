/* Defect: tessera_plugin_info.struct_size is smaller than SDK 1.0's struct (it stops before
 * num_components), as if built against a header that lacked those fields. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("bad-small-plugin-info", "truncated plugin info",
                 plugin.info.struct_size = offsetof(tessera_plugin_info, num_components))
