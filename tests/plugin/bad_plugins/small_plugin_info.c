/* Defect: tessera_plugin_info.struct_size is smaller than SDK 1.0's struct (it stops before
 * num_components), as if built against a header that lacked those fields. */
#include "bad_plugin.h"

static const tessera_plugin_info info = {
    .struct_size = offsetof(tessera_plugin_info, num_components), /* the defect */
    .sdk_major = TESSERA_SDK_VERSION_MAJOR,
    .sdk_minor = TESSERA_SDK_VERSION_MINOR,
    .name = "bad-small-plugin-info",
    .version = "1.0",
    .description = "truncated plugin info"};

BAD_PLUGIN_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                      const tessera_plugin_info** out, tessera_error* error) {
  (void)host;
  (void)error;
  *out = &info;
  return TESSERA_OK;
}
