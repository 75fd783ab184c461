/* A plugin as SDK 1.2 built it: sdk_minor 2, a plugin info that ends where 1.3 appended `context`
 * (init, finalize, set_parameter) and a component that ends where 1.3 appended `flags`. The memory
 * past each declared size holds what a host reading it would act on: an init that refuses (the
 * plugin would be rejected) and the override flag (a host allowing overrides would let it replace
 * a loaded backend "cpu" if the plugin's backend were named so; SDK12_CLAIMS_CPU names it so). */
#include "bad_plugin.h"

static tessera_status refusing_init(void* context, const tessera_host_info* host, tessera_error* error) {
  (void)context;
  (void)host;
  snprintf(error->message, sizeof(error->message), "a 1.3 field was read from a 1.2 plugin info");
  return TESSERA_INTERNAL;
}

#if defined(SDK12_CLAIMS_CPU)
#define SDK12_NAME "backend-sdk12-cpu"
#define SDK12_BACKEND "cpu"
#else
#define SDK12_NAME "backend-sdk12"
#define SDK12_BACKEND "backend-sdk12"
#endif

BAD_PLUGIN_QUERY(SDK12_NAME, "plugin built against SDK 1.2",
                 (plugin.info.sdk_minor = 2, plugin.info.struct_size = offsetof(tessera_plugin_info, context),
                  plugin.info.init = refusing_init,
                  plugin.component.struct_size = offsetof(tessera_component, flags),
                  plugin.component.flags = TESSERA_COMPONENT_OVERRIDES, plugin.component.name = SDK12_BACKEND,
                  plugin.backend.name = SDK12_BACKEND))
