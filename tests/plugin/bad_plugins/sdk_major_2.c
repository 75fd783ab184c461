/* Defect: the plugin says it was built for SDK major 2, which this host does not speak. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("bad-sdk-major-2", "claims SDK 2.0", (plugin.info.sdk_major = 2, plugin.info.sdk_minor = 0))
