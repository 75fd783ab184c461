/* Defect: the plugin refuses the host from its query (it wants SDK major 2) and returns
 * TESSERA_VERSION_MISMATCH with a message. */
#include "bad_plugin.h"

BAD_PLUGIN_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                      const tessera_plugin_info** out, tessera_error* error) {
  (void)out;
  if (error != NULL && error->struct_size >= sizeof(tessera_error)) {
    error->code = TESSERA_VERSION_MISMATCH;
    snprintf(error->message, sizeof(error->message), "bad-refuses-host needs SDK major 2, host offers %u",
             (unsigned)host->sdk_major);
  }
  return TESSERA_VERSION_MISMATCH;
}
