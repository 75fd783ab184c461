/* Defect: the plugin refuses the host from its query (TESSERA_VERSION_MISMATCH) but leaves the
 * error message empty. */
#include "bad_plugin.h"

BAD_PLUGIN_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                      const tessera_plugin_info** out, tessera_error* error) {
  (void)host;
  (void)out;
  (void)error;
  return TESSERA_VERSION_MISMATCH;
}
