/* Defect: the plugin calls a function that exists nowhere. It is linked WITHOUT --no-undefined
 * (plain add_library(MODULE)), so the link succeeds and the load must fail instead. */
#include "bad_plugin.h"

extern int tessera_test_symbol_that_does_not_exist(void);

BAD_PLUGIN_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                      const tessera_plugin_info** out, tessera_error* error) {
  (void)host;
  (void)out;
  (void)error;
  return tessera_test_symbol_that_does_not_exist() == 0 ? TESSERA_OK : TESSERA_INTERNAL;
}
