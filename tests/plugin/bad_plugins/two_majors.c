/* One shared object serving hosts of two SDK majors through versioned entry points (plugin.h):
 *  TWO_MAJORS - exports tessera_plugin_query_v1 (a valid 1.x backend "two-majors") and
 *               tessera_plugin_query_v2 (what a major-2 host would get: a description claiming SDK
 *               2.0, which a 1.x host rejects), and no unversioned entry point. A 1.x host must call
 *               the _v1 one and load it.
 *  ONLY_V2    - exports tessera_plugin_query_v2 only: rejected, named as built for another major. */
#include "bad_plugin.h"

static struct bad_plugin plugin;

__attribute__((visibility("default"))) tessera_status tessera_plugin_query_v2(const tessera_host_info* host,
                                                                              const tessera_plugin_info** out,
                                                                              tessera_error* error) {
  (void)host;
  (void)error;
  tessera_plugin_info* info = bad_plugin_valid(&plugin, "two-majors", "the major-2 description");
  info->sdk_major = 2;
  info->sdk_minor = 0;
  *out = info;
  return TESSERA_OK;
}

#if defined(TWO_MAJORS)
__attribute__((visibility("default"))) tessera_status tessera_plugin_query_v1(const tessera_host_info* host,
                                                                              const tessera_plugin_info** out,
                                                                              tessera_error* error) {
  (void)error;
  if (host->sdk_major != 1) return TESSERA_VERSION_MISMATCH;
  *out = bad_plugin_valid(&plugin, "two-majors", "the major-1 description");
  return TESSERA_OK;
}
#elif !defined(ONLY_V2)
#error "define TWO_MAJORS or ONLY_V2"
#endif
